"""The engine's editor features: hover, completion, hints, diagnostics, links, symbols."""

"""`python -m bench.container`: the container image's figures, reported as every benchmark is.

.ci/container.sh builds the image and runs it, so it measures these and hands them here: the
image's size beside its base image's, and the median time from `podman run -i` to the stdio
engine's answer to `initialize` beside the same for `cat` echoing a line in the same image
(what starting any container costs). It prints the table and writes
bench/results/container.json in the format of latest.json. No target is set: `info`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from bench.report import Measurement, render_table, write_json

DEFAULT_JSON = Path(__file__).with_name("results") / "container.json"


def measurements(
    image_bytes: int, base_bytes: int, initialize_ms: float, echo_ms: float, samples: int
) -> list[Measurement]:
    """The two rows: the image's size and its time to `initialize` answered."""
    return [
        Measurement(
            "container image size",
            "podman",
            0,
            image_bytes / 1e6,
            "MB",
            floor=base_bytes / 1e6,
            floor_what="the base image alone",
        ),
        Measurement(
            "podman run -i to initialize answered",
            "sqlite",
            1,
            initialize_ms,
            "ms",
            floor=echo_ms,
            floor_what="podman run -i of cat in the same image, to a line echoed back",
            samples=samples,
        ),
    ]


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the figures, print the table and write the JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.container", description=__doc__)
    parser.add_argument("--image", required=True, help="the image measured")
    parser.add_argument("--base", required=True, help="the base image it was built on")
    parser.add_argument("--image-bytes", type=int, required=True)
    parser.add_argument("--base-bytes", type=int, required=True)
    parser.add_argument("--initialize-ms", type=float, required=True, help="median")
    parser.add_argument("--echo-ms", type=float, required=True, help="median (the floor)")
    parser.add_argument("--samples", type=int, required=True, help="runs behind each median")
    parser.add_argument("--seconds", type=float, default=0.0, help="the container step's time")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="PATH")
    arguments = parser.parse_args(argv)
    rows = measurements(
        arguments.image_bytes,
        arguments.base_bytes,
        arguments.initialize_ms,
        arguments.echo_ms,
        arguments.samples,
    )
    print(render_table(rows))
    settings = {"image": arguments.image, "base": arguments.base, "samples": arguments.samples}
    write_json(arguments.json, rows, settings, arguments.seconds)
    print(f"\nwritten to {arguments.json}")


if __name__ == "__main__":
    main()

"""Daemon addresses: `unix:PATH`, `tcp:HOST:PORT`, and `tls:HOST:PORT` (TCP with TLS)."""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass
from pathlib import Path

from lazy_memory.engine.errors import InvalidConfig

FORMS = "unix:PATH, tcp:HOST:PORT or tls:HOST:PORT"


@dataclass(frozen=True)
class Address:
    """Where a daemon listens: a unix socket path, or a host and port (maybe with TLS)."""

    scheme: str
    path: Path | None = None
    host: str = ""
    port: int = 0

    @property
    def tls(self) -> bool:
        """True for a TCP address whose connections use TLS."""
        return self.scheme == "tls"

    def __str__(self) -> str:
        if self.path is not None:
            return f"unix:{self.path}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}:{host}:{self.port}"

    async def connect(
        self, ssl_context: ssl.SSLContext | None = None
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Open a stream to the daemon at this address."""
        if self.path is not None:
            return await asyncio.open_unix_connection(self.path)
        return await asyncio.open_connection(
            self.host, self.port, ssl=ssl_context, server_hostname=self.host if self.tls else None
        )


def parse_address(text: str) -> Address:
    """The address text names, or InvalidConfig naming the forms there are."""
    scheme, _, rest = text.partition(":")
    if scheme == "unix" and rest:
        return Address(scheme, path=Path(rest))
    if scheme in ("tcp", "tls"):
        host, _, port = rest.rpartition(":")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        if host and port.isdigit() and int(port) < 65536:
            return Address(scheme, host=host, port=int(port))
    raise InvalidConfig(f"bad daemon address {text!r}: use {FORMS} (port 0 picks a free port)")

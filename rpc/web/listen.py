"""Where `lazy web` may listen: loopback freely; any other address with TLS, or said plainly.

Checked before anything is opened, each refusal one line (a usage error, exit status 2).
Kept apart from auth.py so the rules need no web framework to be read or tested.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from lazy_memory.rpc.usage import UsageError


@dataclass(frozen=True)
class Listen:
    """Where `lazy web` listens, and what that requires of requests."""

    host: str
    port: int
    tls: bool

    @property
    def loopback(self) -> bool:
        """Whether only this machine can connect."""
        return is_loopback(self.host)

    @property
    def url(self) -> str:
        """The address to open, as a browser takes it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}/"


def is_loopback(host: str) -> bool:
    """Whether host names this machine only: localhost or a loopback address."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_listen(text: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:PORT` for IPv6; port 0: any free one), else a usage error."""
    host, _, port_text = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not host or not port_text.isdigit() or not 0 <= int(port_text) <= 65_535:
        raise UsageError(f"--listen takes HOST:PORT, like 127.0.0.1:7412, not {text!r}")
    return host, int(port_text)


def check_listen(
    text: str, tls_cert: Path | None, tls_key: Path | None, insecure_http: bool
) -> Listen:
    """Where to listen, once the rules for the address hold; else a one-line usage error."""
    host, port = parse_listen(text)
    if (tls_cert is None) != (tls_key is None):
        raise UsageError("TLS needs both --tls-cert and --tls-key")
    listen = Listen(host, port, tls=tls_cert is not None)
    if not listen.loopback and not listen.tls and not insecure_http:
        raise UsageError(
            f"refusing to serve {host} (not a loopback address) without TLS: give --tls-cert "
            "and --tls-key, or --insecure-http to send tokens and records in clear text"
        )
    return listen

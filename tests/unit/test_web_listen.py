"""Where `lazy web` may listen: loopback freely, elsewhere with TLS or an explicit opt-out."""

from __future__ import annotations

from pathlib import Path

import pytest

from lazy_memory.rpc.usage import UsageError
from lazy_memory.rpc.web.listen import check_listen, is_loopback, parse_listen

CERT, KEY = Path("cert.pem"), Path("key.pem")


@pytest.mark.parametrize("host", ["127.0.0.1", "127.3.4.5", "::1", "localhost", "LOCALHOST"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.2", "example.net", "localhost.evil"])
def test_other_hosts(host: str) -> None:
    assert not is_loopback(host)


def test_loopback_needs_nothing_more() -> None:
    listen = check_listen("127.0.0.1:0", None, None, insecure_http=False)
    assert listen.loopback
    assert not listen.tls
    assert check_listen("[::1]:7412", None, None, False).url == "http://[::1]:7412/"


def test_another_address_without_tls_is_refused_in_one_line() -> None:
    with pytest.raises(UsageError, match="without TLS") as refused:
        check_listen("0.0.0.0:7412", None, None, insecure_http=False)
    assert "\n" not in str(refused.value)
    assert "--insecure-http" in str(refused.value)


def test_another_address_with_tls_or_insecure_http_is_allowed() -> None:
    assert check_listen("0.0.0.0:7412", CERT, KEY, False).url == "https://0.0.0.0:7412/"
    assert not check_listen("192.168.1.2:7412", None, None, insecure_http=True).loopback


def test_tls_needs_both_halves() -> None:
    with pytest.raises(UsageError, match="both --tls-cert and --tls-key"):
        check_listen("127.0.0.1:0", CERT, None, False)


@pytest.mark.parametrize("text", ["7412", "127.0.0.1", "127.0.0.1:http", ":7412", "h:70000"])
def test_a_malformed_address_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="HOST:PORT"):
        parse_listen(text)

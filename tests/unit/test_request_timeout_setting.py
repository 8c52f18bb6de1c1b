"""`[remote] request_timeout_seconds`: how long a remote daemon may take to answer a request."""

from __future__ import annotations

from pathlib import Path

import pytest

from lazy_memory.adapters.config import load_settings
from lazy_memory.engine.errors import InvalidConfig


def test_the_request_timeout_defaults_to_30_s_and_is_read_from_lazy_toml(tmp_path: Path) -> None:
    assert load_settings(tmp_path, environ={}).request_timeout_seconds == 30.0

    (tmp_path / "lazy.toml").write_text("[remote]\nrequest_timeout_seconds = 1.5\n")
    settings = load_settings(tmp_path, environ={})

    assert settings.request_timeout_seconds == 1.5
    assert settings.warnings == ()


@pytest.mark.parametrize("value", ["0", "-1", '"soon"', "true"])
def test_a_request_timeout_that_is_not_a_positive_number_is_refused(
    tmp_path: Path, value: str
) -> None:
    (tmp_path / "lazy.toml").write_text(f"[remote]\nrequest_timeout_seconds = {value}\n")

    refused = r"remote\.request_timeout_seconds must be a positive number of seconds"
    with pytest.raises(InvalidConfig, match=refused):
        load_settings(tmp_path, environ={})

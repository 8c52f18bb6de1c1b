"""A project's key in a shared store: from the git remote, else the root's absolute path."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from lazy_memory.adapters.config import load_settings
from lazy_memory.adapters.project_key import guess_project_key, normalised_remote

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def checkout(path: Path, *remotes: tuple[str, str]) -> Path:
    """A git repository at path with the given (name, url) remotes."""
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=60)
    for name, url in remotes:
        subprocess.run(["git", "-C", str(path), "remote", "add", name, url], check=True, timeout=60)
    return path


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/web-shop.git",
        "https://github.com/acme/web-shop",
        "https://user:s3cret@GitHub.com/acme/web-shop.git/",
        "ssh://git@github.com:22/acme/web-shop.git",
        "git+ssh://github.com/acme/web-shop",
    ],
)
def test_every_spelling_of_one_remote_is_one_key_with_no_credentials(url: str) -> None:
    assert normalised_remote(url) == "github.com/acme/web-shop"


def test_a_local_remote_stays_a_path() -> None:
    assert normalised_remote("/srv/git/web-shop.git") == "/srv/git/web-shop"


@needs_git
def test_two_checkouts_that_share_a_folder_name_get_different_keys(tmp_path: Path) -> None:
    ours = checkout(tmp_path / "a" / "app", ("origin", "git@github.com:acme/app.git"))
    theirs = checkout(tmp_path / "b" / "app", ("origin", "git@github.com:other/app.git"))
    no_remote = checkout(tmp_path / "c" / "app")

    keys = {load_settings(root, environ={}).project_key for root in (ours, theirs, no_remote)}

    assert keys == {"github.com/acme/app", "github.com/other/app", str(no_remote.resolve())}


@needs_git
def test_two_checkouts_of_one_repository_share_a_key_whatever_their_folders(
    tmp_path: Path,
) -> None:
    first = checkout(tmp_path / "first", ("origin", "git@github.com:acme/app.git"))
    second = checkout(
        tmp_path / "elsewhere" / "app-2",
        ("upstream", "x"),
        ("origin", "https://github.com/acme/app"),
    )

    assert guess_project_key(first) == guess_project_key(second)
    assert guess_project_key(first).source == "the git remote origin"


@needs_git
def test_a_project_inside_a_repository_adds_its_folder_to_the_remote(tmp_path: Path) -> None:
    repository = checkout(tmp_path / "mono", ("origin", "git@github.com:acme/mono.git"))
    service = repository / "services" / "api"
    service.mkdir(parents=True)
    (service / "lazy.toml").write_text("")

    assert load_settings(service, environ={}).project_key == "github.com/acme/mono/services/api"


def test_a_key_in_lazy_toml_or_the_environment_is_never_guessed(tmp_path: Path) -> None:
    (tmp_path / "lazy.toml").write_text('[storage]\nproject = "team"\n')

    assert load_settings(tmp_path, environ={}).project_key == "team"
    assert load_settings(tmp_path, environ={"LAZY_PROJECT": "mine"}).project_key == "mine"

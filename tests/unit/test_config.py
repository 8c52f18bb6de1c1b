"""Configuration: the project root, lazy.toml and LAZY_* overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from lazy_memory.adapters.config import is_agent, load_settings, settings_or_defaults
from lazy_memory.engine.errors import InvalidConfig


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "deep").mkdir(parents=True)
    (root / ".git").mkdir()
    return root


def test_root_is_the_nearest_ancestor_with_git_and_data_defaults_under_it(project: Path) -> None:
    settings = load_settings(project / "src" / "deep", environ={})

    assert settings.root == project
    assert settings.data_dir == project / ".lazy"
    assert (settings.backend, settings.warn_bytes) == ("sqlite", 4096)


def test_lazy_toml_marks_the_root_and_sets_keys(project: Path) -> None:
    inner = project / "src"
    (inner / "lazy.toml").write_text(
        '[storage]\nbackend = "files"\ndata_dir = "state"\n[memory]\nwarn_bytes = 9000\n'
    )

    settings = load_settings(inner / "deep", environ={})

    assert settings.root == inner
    assert (settings.backend, settings.data_dir, settings.warn_bytes) == (
        "files",
        inner / "state",
        9000,
    )
    assert settings.warnings == ()


def test_environment_overrides_the_file(project: Path) -> None:
    (project / "lazy.toml").write_text('[storage]\nbackend = "files"\n')
    environ = {
        "LAZY_STORAGE": "sqlite",
        "LAZY_DATA": "elsewhere",
        "LAZY_ACTOR": "builder-1",
        "LAZY_TASK_ID": "t-1",
    }

    settings = load_settings(project / "src", environ=environ)

    assert settings.backend == "sqlite"
    assert settings.data_dir == project / "src" / "elsewhere"
    assert (settings.actor, settings.task_id) == ("builder-1", "t-1")


def test_unknown_keys_are_warned_about(project: Path) -> None:
    (project / "lazy.toml").write_text('[storage]\nbakend = "files"\n[colours]\nx = 1\n')

    warnings = load_settings(project, environ={}).warnings

    assert any("unknown key storage.bakend" in warning for warning in warnings)
    assert any("unknown section [colours]" in warning for warning in warnings)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[storage\n", "not valid TOML"),
        ("[memory]\nwarn_bytes = -1\n", "warn_bytes must be a positive integer"),
        ('[memory]\nwarn_bytes = "big"\n', "warn_bytes must be a positive integer"),
        ("[storage]\nbackend = 3\n", "storage.backend must be a non-empty string"),
    ],
)
def test_malformed_config_is_a_typed_error(project: Path, text: str, message: str) -> None:
    (project / "lazy.toml").write_text(text)
    with pytest.raises(InvalidConfig, match=message):
        load_settings(project, environ={})


def test_postgres_dsn_and_project_key_from_the_file_then_the_environment(project: Path) -> None:
    (project / "lazy.toml").write_text(
        '[storage]\nbackend = "postgres"\npg_dsn = "postgresql://db/memory"\nproject = "team"\n'
    )

    from_file = load_settings(project, environ={})
    from_environment = load_settings(
        project, environ={"LAZY_PG_DSN": "postgresql://other/m", "LAZY_PROJECT": "mine"}
    )

    assert (from_file.pg_dsn, from_file.project_key, from_file.warnings) == (
        "postgresql://db/memory",
        "team",
        (),
    )
    assert (from_environment.pg_dsn, from_environment.project_key) == (
        "postgresql://other/m",
        "mine",
    )


def test_without_a_key_or_a_git_remote_the_project_key_is_the_roots_absolute_path(
    project: Path,
) -> None:
    settings = load_settings(project / "src", environ={})

    # Not the folder's name: two checkouts called "repo" must not share a project by accident.
    assert (settings.pg_dsn, settings.project, settings.project_key) == (
        None,
        None,
        str(project.resolve()),
    )


@pytest.mark.parametrize("task_id", ["", "t-1"])
def test_any_task_id_that_is_set_makes_an_agent_even_with_a_bad_lazy_toml(
    project: Path, task_id: str
) -> None:
    environ = {"LAZY_TASK_ID": task_id}

    assert is_agent(environ)
    assert load_settings(project, environ).task_id == task_id
    (project / "lazy.toml").write_text("[memory]\nwarn_bytes = -1\n")
    fallback, error = settings_or_defaults(project, environ)
    assert error is not None
    assert fallback.task_id == task_id


def test_no_task_id_is_a_builder(project: Path) -> None:
    assert not is_agent({"LAZY_ROLE": "agent"})  # a launcher's role, not agent-ness
    assert load_settings(project, environ={}).task_id is None
    assert settings_or_defaults(project, environ={})[0].task_id is None

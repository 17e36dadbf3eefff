"""Reading the user's config file: good files work, bad ones are explained, and none is ever overwritten."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path

import pytest

from sessions import paths
from sessions.config import Config, default_config_text, load_config, write_default_config


def load(tmp_path: Path, text: str | bytes) -> tuple[Config, list[str]]:
    path = tmp_path / "config.toml"
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    loaded = load_config(path)
    return loaded.config, loaded.problems


def test_a_missing_file_gives_the_defaults_quietly(tmp_path: Path) -> None:
    loaded = load_config(tmp_path / "nope.toml")
    assert loaded.config == Config()
    assert not loaded.exists
    assert loaded.problems == []


def test_a_full_file_is_read(tmp_path: Path) -> None:
    config, problems = load(
        tmp_path,
        """
model = "local/qwen"
system_prompt = "Be brief."
max_retries = 0
[timeouts]
read = 5.5
[providers.local]
base_url = "http://127.0.0.1:8080/v1"
models = { qwen = 32768 }
""",
    )
    assert problems == []
    assert config.model == "local/qwen"
    assert config.system_prompt == "Be brief."
    assert config.max_retries == 0
    assert config.timeouts.read == 5.5
    assert config.timeouts.connect == 10.0
    assert config.providers["local"].models == {"qwen": 32768}
    assert config.providers["local"].api_key_env is None


def test_a_syntax_error_names_file_line_and_column_and_falls_back(tmp_path: Path) -> None:
    config, problems = load(tmp_path, 'model = "a"\nsystem_prompt = oops\n')
    assert config == Config()
    (problem,) = problems
    assert str(tmp_path / "config.toml") in problem
    assert "line 2, column 17" in problem
    assert "using the default settings" in problem


def test_an_invalid_value_names_the_key_and_the_value(tmp_path: Path) -> None:
    config, problems = load(tmp_path, '[timeouts]\nread = -1\n[providers.x]\nbase_url = "ftp://x"\n')
    assert config == Config()
    assert any("timeouts.read" in p and "-1" in p for p in problems)
    assert any("providers.x.base_url" in p and "http://" in p for p in problems)


def test_a_string_where_a_number_belongs_is_reported_not_coerced(tmp_path: Path) -> None:
    _, problems = load(tmp_path, 'max_retries = "3"\n')
    assert any("max_retries" in p and '"3"' in p for p in problems)


def test_an_unknown_key_is_a_warning_with_a_suggestion_and_the_rest_is_used(tmp_path: Path) -> None:
    config, problems = load(tmp_path, 'system_promt = "x"\nmax_retries = 1\n')
    assert config.max_retries == 1
    (problem,) = problems
    assert "system_promt" in problem
    assert "did you mean 'system_prompt'" in problem


def test_binary_garbage_is_reported_not_raised(tmp_path: Path) -> None:
    config, problems = load(tmp_path, b"\xff\xfe\x00garbage")
    assert config == Config()
    assert "not UTF-8" in problems[0]


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    config, problems = load(tmp_path, "\ufeffmax_retries = 4\n".encode())
    assert problems == []
    assert config.max_retries == 4


def test_the_starter_file_is_valid_and_selects_nothing(tmp_path: Path) -> None:
    document = tomllib.loads(default_config_text())
    config = Config.model_validate(document)
    assert config.model is None
    assert set(config.providers) == {"openai", "ollama"}


def test_the_starter_file_is_written_once_privately_and_never_over_the_users(tmp_path: Path) -> None:
    path = tmp_path / "new" / "config.toml"
    assert write_default_config(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("max_retries = 9\n")
    assert not write_default_config(path)
    assert path.read_text() == "max_retries = 9\n"


def test_paths_follow_the_overrides_and_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HEEDFUL_DATA_DIR", "~/chats")
    assert paths.database_path() == Path.home() / "chats" / "heedful.db"
    monkeypatch.setenv("HEEDFUL_DATA_DIR", "")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert paths.data_dir() == tmp_path / "xdg" / "heedful"
    monkeypatch.delenv("HEEDFUL_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert paths.config_path() == tmp_path / "cfg" / "heedful" / "config.toml"


def test_curation_settings_are_read_and_a_bad_price_is_explained(tmp_path: Path) -> None:
    config, problems = load(
        tmp_path,
        '[curation]\ncurator = false\ncurator_model = "gpt-4o-mini"\ncurator_timeout = 3.5\n'
        'prices = { "local-model" = [0.0, 0.0] }\n',
    )
    assert problems == []
    assert not config.curation.curator and config.curation.model_summaries
    assert config.curation.curator_model == "gpt-4o-mini" and config.curation.curator_timeout == 3.5
    assert config.curation.prices == {"local-model": [0.0, 0.0]}

    _, problems = load(tmp_path, '[curation]\nprices = { "m" = [0.15] }\ncurator_timeout = 0\n')
    assert any("curation.prices" in p and "two non-negative numbers" in p for p in problems), problems
    assert any("curation.curator_timeout" in p for p in problems), problems

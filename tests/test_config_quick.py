"""The first screen reads the config without pydantic only when validation would find nothing to
report, and then sees what validation gives: the same model, providers, keys and profile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sessions.config import validate_config
from sessions.config_file import ConfigRead, default_config_text, quick_settings, read_config

NUMBERS = st.one_of(
    st.integers(-3, 3),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 1.0, 1.5, 2.0, 1e-300, 2**53, 2**60]),
)
TEXTS = st.one_of(
    st.text(max_size=6),
    st.sampled_from(
        [
            "http://localhost:11434/v1",
            "https://api.example.com/v1",
            "ftp://nowhere",
            "OPENAI_API_KEY",
            "sk-" + "a1B2" * 12,
            "quality",
            "balanced",
            "cost",
            "ollama/llama3.2",
            "ctrl+t",
        ]
    ),
)
SCALARS = st.one_of(st.booleans(), NUMBERS, TEXTS)
ANY = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXTS, inner, max_size=3),
    max_leaves=6,
)


def table(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """A TOML table with some of ``fields`` (each most often a likely value, else anything),
    sometimes a stray key."""
    keys = st.sampled_from([*fields, "stray"])
    return st.dictionaries(keys, st.just(None), max_size=len(fields)).flatmap(
        lambda chosen: st.fixed_dictionaries(
            {key: st.one_of(*[fields[key]] * 4, ANY) if key in fields else ANY for key in chosen}
        )
    )


PROVIDER = table(
    {
        "base_url": TEXTS,
        "api_key_env": TEXTS,
        "models": st.dictionaries(TEXTS, NUMBERS, max_size=2),
    }
)
DOCUMENT = table(
    {
        "model": TEXTS,
        "system_prompt": TEXTS,
        "providers": st.dictionaries(TEXTS, PROVIDER, max_size=2),
        "timeouts": table({"connect": NUMBERS, "read": NUMBERS}),
        "max_retries": NUMBERS,
        "profile": TEXTS,
        "embeddings": st.sampled_from(["off", "local", "provider", "dense"]),
        "embedding_model": TEXTS,
        "memory": table({"enabled": st.booleans(), "inactivity_minutes": NUMBERS}),
        "curation": table(
            {
                "curator": st.booleans(),
                "curator_model": TEXTS,
                "curator_timeout": NUMBERS,
                "model_summaries": st.booleans(),
                "pin_limit": NUMBERS,
                "prices": st.dictionaries(TEXTS, st.lists(NUMBERS, min_size=1, max_size=3), max_size=2),
            }
        ),
        "keys": st.dictionaries(TEXTS, TEXTS, max_size=2),
    }
)


@settings(max_examples=1000, deadline=None)
@given(DOCUMENT)
def test_a_config_read_quickly_validates_with_nothing_to_report_and_the_same_settings(
    document: dict[str, Any],
) -> None:
    read = ConfigRead(Path("config.toml"), True, document)
    quick = quick_settings(read)
    if quick is None:
        return  # validated before the first frame, as always
    loaded = validate_config(read)
    assert loaded.problems == []
    config = loaded.config
    assert (quick.model, quick.profile, dict(quick.keys)) == (config.model, config.profile, config.keys)
    assert {name: (p.base_url, p.api_key_env, dict(p.models)) for name, p in quick.providers.items()} == {
        name: (p.base_url, p.api_key_env, p.models) for name, p in config.providers.items()
    }


def test_the_starter_config_and_a_usual_one_are_read_without_validating_them_first(tmp_path: Path) -> None:
    starter = tmp_path / "starter.toml"
    starter.write_text(default_config_text(), encoding="utf-8")
    usual = tmp_path / "usual.toml"
    usual.write_text(
        'model = "ollama/llama3.2"\nprofile = "quality"\n[timeouts]\nread = 30\n[keys]\nretry = "ctrl+t"\n'
        '[providers.ollama]\nbase_url = "http://localhost:11434/v1"\nmodels = { "llama3.2" = 131072 }\n',
        encoding="utf-8",
    )
    assert quick_settings(read_config(starter)) is not None
    quick = quick_settings(read_config(usual))
    assert quick is not None
    assert (quick.model, quick.profile, dict(quick.keys)) == (
        "ollama/llama3.2",
        "quality",
        {"retry": "ctrl+t"},
    )


def test_a_config_with_something_to_report_is_validated_before_the_first_frame(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    for text in (
        'modle = "gpt-4o"\n',
        "[timeouts]\nread = -1\n",
        'profile = "fast"\n',
        "max_retries = 1.5\n",
    ):
        path.write_text(text, encoding="utf-8")
        assert quick_settings(read_config(path)) is None, text
        assert validate_config(read_config(path)).problems, text

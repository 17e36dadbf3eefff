"""Hypothesis strategies for config documents: each setting left out, good, or of a wrong type or
value, and unknown keys, with a record of what the loader must name (:class:`Doc`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from sessions.config import Config

TOML_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=10)
TOML_VALUES = st.recursive(
    st.booleans() | st.integers() | st.floats() | TOML_TEXT | st.dates() | st.datetimes() | st.times(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TOML_TEXT, inner, max_size=3),
    max_leaves=5,
)
HTTP = ("http://", "https://")


def not_a(*types: type) -> st.SearchStrategy[Any]:
    return TOML_VALUES.filter(lambda value: type(value) not in types)


POSITIVE_FLOATS = st.floats(min_value=0, exclude_min=True, allow_nan=False, allow_infinity=False)


class Doc:
    """A config document being drawn, with the paths of the values it got wrong and its unknown keys."""

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        self.draw = draw
        self.data: dict[str, Any] = {}
        self.bad: set[tuple[str, ...]] = set()
        self.soft: set[tuple[str, ...]] = set()  # reported only when no type error hides it
        self.unknown: list[str] = []

    def value(
        self,
        table: dict[str, Any],
        path: tuple[str, ...],
        good: st.SearchStrategy[Any],
        bad: st.SearchStrategy[Any],
    ) -> None:
        if not self.draw(st.booleans()):
            return
        if self.draw(st.integers(0, 7)) == 0:
            table[path[-1]] = self.draw(bad)
            self.bad.add(path)
        else:
            table[path[-1]] = self.draw(good)

    def unknowns(self, table: dict[str, Any], known: set[str], typos: list[str]) -> None:
        for key in self.draw(st.lists(st.sampled_from(typos) | TOML_TEXT, max_size=2, unique=True)):
            if key not in known and key not in table:
                table[key] = self.draw(TOML_VALUES)
                self.unknown.append(key)


@st.composite
def config_documents(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Doc:
    doc = Doc(draw)
    top = doc.data
    doc.value(top, ("model",), TOML_TEXT, not_a(str))
    doc.value(top, ("system_prompt",), TOML_TEXT, not_a(str))
    doc.value(top, ("max_retries",), st.integers(min_value=0), st.integers(max_value=-1) | not_a(int))
    profiles = ("quality", "balanced", "cost")
    doc.value(top, ("profile",), st.sampled_from(profiles), TOML_TEXT.filter(lambda p: p not in profiles))
    doc.value(top, ("keys",), st.dictionaries(TOML_TEXT, TOML_TEXT, max_size=3), not_a(dict))
    if isinstance(top.get("keys"), dict) and draw(st.integers(0, 7)) == 0:
        action = draw(TOML_TEXT)
        top["keys"][action] = draw(not_a(str))
        doc.bad.add(("keys", action))
    if draw(st.booleans()):
        timeouts: dict[str, Any] = {}
        number = POSITIVE_FLOATS | st.integers(1, 10**9)
        wrong = st.floats(max_value=0) | st.sampled_from([math.inf, -math.inf, math.nan]) | not_a(int, float)
        doc.value(timeouts, ("timeouts", "connect"), number, wrong)
        doc.value(timeouts, ("timeouts", "read"), number, wrong)
        doc.unknowns(timeouts, {"connect", "read"}, ["reed", "conect", "total"])
        top["timeouts"] = timeouts
    if draw(st.booleans()):
        providers: dict[str, Any] = {}
        for name in draw(st.lists(TOML_TEXT, max_size=2, unique=True)):
            provider: dict[str, Any] = {}
            choice = draw(st.integers(0, 7))  # base_url is required: 0 leaves it out, 1 gets it wrong
            if choice == 1:
                provider["base_url"] = draw(TOML_TEXT.filter(lambda u: not u.startswith(HTTP)) | not_a(str))
            elif choice > 1:
                provider["base_url"] = draw(st.sampled_from(HTTP)) + draw(TOML_TEXT)
            if choice < 2:
                doc.bad.add(("providers", name, "base_url"))
            doc.value(provider, ("providers", name, "api_key_env"), TOML_TEXT, not_a(str))
            models = draw(st.dictionaries(TOML_TEXT, st.integers(min_value=1), max_size=3))
            if models and draw(st.integers(0, 5)) == 0:
                model = draw(st.sampled_from(sorted(models)))
                window = draw(st.integers(max_value=0) | not_a(int))
                models[model] = window
                if type(window) is int:  # found by a validator of the whole table, which a type error skips
                    doc.soft.add(("providers", name, "models"))
                else:
                    doc.bad.add(("providers", name, "models", model))
            provider["models"] = models
            doc.unknowns(provider, {"base_url", "api_key_env", "models"}, ["api_key", "base-url", "model"])
            providers[name] = provider
        top["providers"] = providers
    doc.unknowns(top, set(Config.model_fields), ["modle", "max_retry", "timeout", "provider", "theme"])
    return doc

"""Entities worth reading (issue 37): what the panel showed as entities but named nothing, from
sentence openers, headings and units to stack-trace noise, log time stamps and config-like words."""

from __future__ import annotations

import pytest

from engine.entities.extractor import EntityKind, extract_entities
from tests.test_entities import found

K = EntityKind


def names(text: str) -> set[str]:
    return {m.label for m in extract_entities(text) if m.kind is K.NAME}


@pytest.mark.parametrize(
    "text",
    [
        "Echo back the exact command you'd use.",  # a verb opening a request (and the app's own words)
        "Startup is via systemd, unit billing-import.service.",
        "Separate question: should the batch be smaller?",
        "Continue from there. The dry run fails now.",
        "Compare the two files, then decide.",
        "Two fixes: skip the day, or compute it.",  # a number word
        "Attached is my patch for it.",  # shaped like a participle
        "Absolutely! Happy to help with that.",  # an adverb
        "Consistency is key when you write daily.",  # an abstract noun
    ],
)
def test_words_that_open_a_sentence_are_not_names(text: str) -> None:
    assert names(text) == set()


def test_headings_and_bold_labels_are_not_names_unless_the_prose_names_them() -> None:
    text = (
        "### Set Clear Goals\n"
        "1. **Read Widely**: read every day.\n"
        "- **Option 1**: Greek Yogurt with Mixed Berries\n"
        "### Paris\n"
        "We flew to Paris in May.\n"
    )
    assert names(text) == {"Paris"}


def test_the_first_word_of_a_list_item_is_not_a_name_by_itself() -> None:
    text = "- Carrot sticks with hummus\n- **Lunch**: Oatmeal made with milk\n- Ask Caroline about it"
    assert names(text) == {"Caroline"}


def test_units_are_not_names() -> None:
    assert names("they are measured in GB, and speeds in Mbps or Kilometers") == set()


def test_the_attachment_header_gives_the_file_not_its_size() -> None:
    from engine.turn.attachments import attachment_text

    text = attachment_text("import.log", b"x" * 669)
    assert found(text) == {(K.PATH, "import.log")}


TRACE = """Startup fails:

```
Traceback (most recent call last):
  File "/srv/app/jobs/nightly.py", line 71, in main
    rows = load_invoices(cfg)
  File "/srv/app/.venv/lib/python3.11/site-packages/pyarrow/parquet/core.py", line 1563, in iter_batches
    return meth(*args, **kwargs)
  File "/srv/app/importers/s3.py", line 39, in open_object
    raise FileNotFoundError(errno.ENOENT, "missing", key)
FileNotFoundError: [Errno 2] missing object
```"""


def test_a_stack_trace_gives_its_files_functions_and_error_only() -> None:
    assert found(TRACE) == {
        (K.PATH, "/srv/app/jobs/nightly.py"),
        (K.SYMBOL, "main"),
        (K.PATH, "/srv/app/importers/s3.py"),
        (K.SYMBOL, "open_object"),
        (K.ERROR, "FileNotFoundError"),
        (K.ERROR, "[Errno 2] missing object"),
    }


def test_javascript_library_frames_add_nothing() -> None:
    text = (
        "TypeError: x is undefined\n    at render (src/app.js:10:5)\n"
        "    at run (node_modules/react/index.js:9:1)"
    )
    assert not any("node_modules" in m.label or m.label == "run" for m in extract_entities(text))


@pytest.mark.parametrize(
    "text",
    [
        "2024-03-05 02:00:01 INFO starting import since=2024-03-02",  # a log's word, not a key
        "```\nx = read(path, since=cfg.since)\n```",  # an argument
        "```\nrows = load_invoices(cfg)\n```",  # a variable
    ],
)
def test_arguments_variables_and_log_words_are_not_config_keys(text: str) -> None:
    assert not any(m.kind is K.CONFIG_KEY for m in extract_entities(text))


def test_one_thing_is_one_mention_whatever_its_kinds() -> None:
    text = "`load_invoices` fails: load_invoices() raises KeyError: 'amount_cents'\n\nRename `amount_cents`."
    labels = [m.label for m in extract_entities(text)]
    assert sum("load_invoices" in label for label in labels) == 1
    assert sum("amount_cents" in label for label in labels) == 1
    assert extract_entities("`load_invoices` then load_invoices()")[0].ref == "symbol:load_invoices"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("solve f(x, y) = 3x^2 + 2y^2 first", set()),  # algebra
        ("f_x = 6x and f_y = 4y", set()),
        ("the new build is 3x faster", {"3x"}),  # a multiplier stays
    ],
)
def test_a_number_times_a_variable_is_not_a_quantity(text: str, kept: set[str]) -> None:
    assert {m.label for m in extract_entities(text) if m.kind is K.QUANTITY} == kept


def test_a_log_lines_time_stamps_are_not_dates() -> None:
    text = "2024-03-05 02:00:01 INFO start\n2024-03-05 02:00:03 ERROR stop\nWe met at 2024-03-05 10:00."
    assert {m.label for m in extract_entities(text) if m.kind is K.DATE} == {"2024-03-05 10:00"}


@pytest.mark.parametrize(
    ("text", "kind", "label"),
    [
        ("I'm Jamie, a 38-year-old psychologist", K.QUANTITY, "38-year-old"),
        ("it keeps retrying on S3 throttling", K.NAME, "S3"),
        ("the Q1 report is off", K.NAME, "Q1"),
        ("unit billing-import.service failed", K.PATH, "billing-import.service"),
        ("where `since` comes from", K.IDENTIFIER, "since"),  # code, though an English word
        ("Wanna see my moves next Fri?", K.DATE, "next Fri"),
        (
            "```bash\nAPP_ENV=prod .venv/bin/python -m app --dry-run\n```",
            K.COMMAND,
            "APP_ENV=prod .venv/bin/python -m app --dry-run",
        ),
    ],
)
def test_finds_what_it_used_to_miss(text: str, kind: EntityKind, label: str) -> None:
    assert (kind, label) in found(text)


@pytest.mark.parametrize("text", ["print(x) and len(y)", "a TV/film producer"])
def test_builtins_and_common_abbreviations_are_not_entities(text: str) -> None:
    assert extract_entities(text) == []

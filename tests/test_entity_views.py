"""The panel's entities (issue 37): one row per thing, the most relevant first, few enough that the
messages stay in sight."""

from __future__ import annotations

from textual.app import App, ComposeResult

from engine.curation.context_building import build_view
from engine.curation.context_view import ContextView, Section
from engine.curation.session_curation import SessionCuration
from engine.text.tokens import CharEstimateCounter
from tui.widgets.context_panel import ContextPanel

TRACE = """It crashes:

```
Traceback (most recent call last):
  File "/srv/app/jobs/nightly.py", line 71, in main
  File "/srv/app/importers/invoices.py", line 142, in load_invoices
  File "/srv/app/importers/s3.py", line 39, in open_object
  File "/srv/app/importers/reader.py", line 12, in read_partition
  File "/srv/app/models.py", line 54, in from_row
FileNotFoundError: [Errno 2] missing object
```
It started on 2024-03-01 with 5000 rows, see config/import.yaml and BILLING_ENV."""


def _view(*texts: str) -> ContextView:
    curation = SessionCuration(window=8_000, counter=CharEstimateCounter())
    for n, text in enumerate(texts):
        curation.add_message(n + 1, "user" if n % 2 == 0 else "assistant", text, len(text) // 4)
    new = curation.last_user()
    assert new is not None
    return build_view(curation, curation.plan(new), new_id=new.id)


def _all(view: ContextView) -> list[str]:
    return [e.label.removesuffix("()") for e in (*view.active, *view.retained, *view.pruned)]


def test_a_thing_named_as_two_kinds_is_one_row() -> None:
    view = _view(
        "Why does `load_invoices` fail?",
        "Because load_invoices() reads a missing day.",
        "Then fix load_invoices() please.",
    )
    assert _all(view).count("load_invoices") == 1


def test_a_stack_trace_leaves_room_for_the_messages_and_the_most_relevant_thing_comes_first() -> None:
    view = _view(
        "Where is `load_invoices` defined? It reads config/import.yaml.",
        "In app/importers/invoices.py; load_invoices() calls open_object.",
        TRACE,
        "So load_invoices() fails on a missing day?",
        "Yes: load_invoices asks for every day since 2024-03-01.",
        "How do I make load_invoices skip missing days?",
    )
    total = len(view.active) + view.entities_not_shown.get(Section.ACTIVE, 0)
    assert total > 12  # the trace and the talk name many things...
    assert len(view.active) <= 6  # ...of which the panel lists a few
    assert view.active[0].label.removesuffix("()") == "load_invoices"  # the one the talk is about


class _PanelApp(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return {"heedful-user": "blue", "heedful-assistant": "green", "heedful-muted": "grey"}

    def compose(self) -> ComposeResult:
        yield ContextPanel(id="context")


async def test_the_panel_lists_what_the_view_lists_and_counts_the_rest() -> None:
    view = _view("Here is what I get:", "Paste the whole trace.", TRACE)
    app = _PanelApp()
    async with app.run_test(size=(100, 40)) as pilot:
        panel = app.query_one(ContextPanel)
        panel.show(view, model="model", exact=True, counter="cl100k_base")
        await pilot.pause()
        rows = [str(panel.rows.get_option_at_index(i).prompt) for i in range(panel.rows.option_count)]
    entity_rows = [r for r in rows if any(r.strip().startswith(e.label) for e in view.active)]
    assert len(entity_rows) == len(view.active) <= 6
    unlisted = view.entities_not_shown[Section.ACTIVE]
    assert unlisted > 0 and f"… {unlisted:,} less relevant" in "\n".join(rows)
    assert any("Paste the whole trace" in r for r in rows)  # the messages are listed too

"""Keep rules (``/keep anything about the database schema``): an old message that matches is sent
verbatim with the rule as its reason, ahead of ordinary scored items, never past the budget and
never against the user's own forget; removing the rule lets it be curated as usual."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.curation.context_building import build_view
from engine.curation.items import Item, ItemState
from engine.curation.keep_rules import KeepRule, matches, needed, rule
from tests.curationhelpers import Chat, garden, sent

RULE = "anything about the database schema"
SCHEMA = "The database schema has a users table with an email column and an orders table keyed by user id."
REASON = f'kept by your rule "{RULE}"'


def schema_chat() -> tuple[Chat, Item]:
    """A schema answer early on, then fourteen turns about the garden that push it out."""
    chat = Chat()
    chat.say("user", "How should we lay out the tables?")
    old = chat.say("assistant", SCHEMA)
    for turn in range(14):
        chat.say("user", f"Tell me about the garden {turn}?")
        chat.say("assistant", garden(turn))
    return chat, old


def test_a_matching_old_message_is_sent_with_the_rule_as_its_reason() -> None:
    chat, old = schema_chat()
    _, without = chat.ask()
    assert old.id not in sent(without)  # ordinary curation leaves it out
    assert old.state is ItemState.PRUNED

    chat.curation.set_keep_rules([rule(1, RULE)])
    new = chat.curation.by_id[chat.next_id - 1]
    result = chat.curation.plan(new)
    assert old.id in sent(result)
    assert result.kept_by_rule == {old.id: REASON}
    assert result.tokens <= result.budget_tokens
    recall = [o for o in result.operations if o.target == old.id]
    assert [o.reason for o in recall] == [REASON]  # the ledger's line for it (the why dialog)
    view = build_view(chat.curation, result, new_id=new.id).item(old.id)
    assert view is not None and view.reason == f"recalled: {REASON}"


def test_a_rule_from_the_start_keeps_the_message_active_with_its_reason_in_the_panel() -> None:
    chat = Chat()
    chat.curation.set_keep_rules([rule(1, RULE)])
    chat.say("user", "How should we lay out the tables?")
    old = chat.say("assistant", SCHEMA)
    for turn in range(14):
        chat.say("user", f"Tell me about the garden {turn}?")
        chat.say("assistant", garden(turn))
    new, result = chat.ask()
    assert old.state is ItemState.ACTIVE and old.id in sent(result)
    view = build_view(chat.curation, result, new_id=new.id).item(old.id)
    assert view is not None and view.reason == REASON


def test_the_users_forget_wins_over_a_rule() -> None:
    chat, old = schema_chat()
    chat.curation.forget(old.id)
    chat.curation.set_keep_rules([rule(1, RULE)])
    _, result = chat.ask()
    assert old.id not in sent(result)
    assert old.id not in result.kept_by_rule


def test_removing_the_rule_lets_the_message_follow_ordinary_curation() -> None:
    chat, old = schema_chat()
    chat.curation.set_keep_rules([rule(1, RULE)])
    roses = chat.say("user", "What about roses?", apply=False)
    kept = chat.curation.plan(roses)
    assert old.id in sent(kept)
    chat.curation.apply(kept)
    chat.curation.set_keep_rules([])
    _, result = chat.ask()
    assert old.id not in sent(result)
    assert old.id not in result.kept_by_rule


def test_matched_messages_that_do_not_all_fit_go_best_scored_first_within_the_budget() -> None:
    chat, _ = schema_chat()
    schemas = [chat.say("assistant", f"{SCHEMA} Variant {k}: {garden(k)}") for k in range(6)]
    for turn in range(4):
        chat.say("user", f"More on the pond {turn}?")
        chat.say("assistant", garden(100 + turn))
    chat.curation.set_keep_rules([rule(1, RULE)])
    _, result = chat.ask("Which variant of the schema had the users table?")
    kept = [i.id for i in schemas if i.id in result.kept_by_rule]
    assert 0 < len(kept) < len(schemas)  # some fit, not all
    assert result.tokens <= result.budget_tokens
    scores = result.scores
    left = [i.id for i in schemas if i.id not in result.kept_by_rule and i.id not in sent(result)]
    assert min(scores[i].total for i in kept) >= max(scores[i].total for i in left)


def test_how_many_of_a_rules_words_an_item_needs() -> None:
    assert [needed(KeepRule(0, "", frozenset("abcde"[:n]))) for n in (1, 2, 3, 4, 5)] == [1, 2, 2, 3, 3]
    # "anything about" says how, not what: the content words are database and schema.
    assert rule(1, RULE).terms == rule(2, "database schema").terms
    chat = Chat()
    both = chat.say("assistant", "We changed the database schema yesterday.")
    one = chat.say("assistant", "The database was slow yesterday.")
    found = matches([rule(1, RULE)], chat.curation.items, chat.curation.term_index)
    assert set(found) == {both.id}
    assert one.id not in found


TOPICS = ("database schema", "garden roses", "invoice totals", "train to Boston")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    script=st.lists(st.tuples(st.sampled_from(TOPICS), st.integers(1, 12)), min_size=2, max_size=24),
    rules=st.lists(st.sampled_from(TOPICS), max_size=3),
    forget=st.lists(st.integers(0, 40), max_size=4),
    window=st.sampled_from([600, 1500, 4000]),
)
def test_rules_never_push_past_the_budget_nor_send_what_the_user_forgot(
    script: list[tuple[str, int]], rules: list[str], forget: list[int], window: int
) -> None:
    chat = Chat(window)
    for n, (topic, size) in enumerate(script):
        chat.say("user" if n % 2 == 0 else "assistant", " ".join([f"Notes on the {topic}."] * size))
    for index in forget:
        items = chat.curation.items
        if index < len(items) and not items[index].pinned and items[index].role != "user":
            chat.curation.forget(items[index].id)
    chat.curation.set_keep_rules([rule(n, text) for n, text in enumerate(rules)])
    _, result = chat.ask("What about the database schema?")
    if not result.over_budget:
        assert result.tokens <= result.budget_tokens
    forgotten = {i.id for i in chat.curation.items if i.forgotten}
    assert not forgotten & set(result.kept_by_rule)
    assert set(result.kept_by_rule) <= sent(result)


def test_with_embeddings_on_a_rule_also_matches_by_meaning() -> None:
    from engine.curation.dense import DenseIndex
    from tests.test_dense import ConceptEmbedder

    chat = Chat()
    cat = chat.say("assistant", "My feline sleeps all day.")
    other = chat.say("assistant", "The invoice totals are due on Friday.")
    keep = rule(1, "anything about the kitten")
    assert matches([keep], chat.curation.items, chat.curation.term_index) == {}  # no shared word
    chat.curation.state.dense = DenseIndex(ConceptEmbedder())
    found = matches([keep], chat.curation.items, chat.curation.term_index, chat.curation.state.dense)
    assert set(found) == {cat.id}
    assert other.id not in found

"""The recency weights a plan scores by are kept between plans: whatever turns were planned
before, in whatever order, each age's weight is the one computed afresh (scores, and so what a
request sends, never depend on the planning history)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.curation import scoring


@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.5, 1.0, 0.35]), st.sampled_from([5.0, 12.5, 40.0]), st.integers(0, 3000)
        ),
        min_size=1,
        max_size=12,
    )
)
def test_kept_weights_equal_fresh_ones(plans: list[tuple[float, float, int]]) -> None:
    scoring._DECAYS.clear()
    for weight, half_life, turn in plans:
        kept = scoring._decay(weight, half_life, turn)
        assert len(kept) > turn
        assert kept[: turn + 1] == [weight * 0.5 ** (age / half_life) for age in range(turn + 1)]

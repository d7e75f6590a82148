"""The row space: slicing a data source composes pieces of the flat row space, as slicing a
list would."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from catalog.read.rows import compose

pieces_strategy = st.lists(
    st.builds(
        lambda a, n, s: range(a, a + n * s, s),
        st.integers(0, 50),
        st.integers(0, 12),
        st.sampled_from([1, 2, 3, -1, -2]),
    ),
    min_size=1,
    max_size=4,
)


@given(pieces_strategy, st.integers(-60, 60) | st.none(), st.integers(-60, 60) | st.none(),
       st.sampled_from([None, 1, 2, 3, -1, -2, -5]))  # fmt: skip
def test_compose_matches_slicing_a_list(
    pieces: list[range], a: int | None, b: int | None, step: int | None
) -> None:
    flat = [i for p in pieces for i in p]
    rows = range(len(flat))[slice(a, b, step)]
    composed = [i for p in compose(pieces, rows) for i in p]
    assert composed == flat[a:b:step]

"""Streaming operators on small bags, from RSP-QL Def. 20-22."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from rsep.algebra.r2s import R2S, Solution

A = {"shopper": "<http://ex.org/carl>", "shop": "<http://ex.org/a>"}
B = {"shopper": "<http://ex.org/eve>", "shop": "<http://ex.org/a>"}
C = {"shopper": "<http://ex.org/diana>", "shop": "<http://ex.org/b>"}


def test_rstream_streams_the_whole_answer() -> None:
    """Def. 20, and RSP-QL Example 10: both mappings of the evaluation at 8, stamped 8."""
    assert R2S.RSTREAM.apply([A], [A, B], 8) == [(A, 8), (B, 8)]
    assert R2S.RSTREAM.apply(None, [], 8) == []


def test_istream_streams_what_is_new() -> None:
    """Def. 21: μ ∈ Ψ(t_j) ∧ μ ∉ Ψ(t_{j-1})."""
    assert R2S.ISTREAM.apply([A], [A, B], 16) == [(B, 16)]
    assert R2S.ISTREAM.apply(None, [A, B], 8) == [(A, 8), (B, 8)]
    assert R2S.ISTREAM.apply([A, B], [B, A], 9) == []


def test_dstream_streams_what_has_gone() -> None:
    """Def. 22: μ ∉ Ψ(t_j) ∧ μ ∈ Ψ(t_{j-1})."""
    assert R2S.DSTREAM.apply([A, B], [B, C], 16) == [(A, 16)]
    assert R2S.DSTREAM.apply(None, [A], 8) == []


def test_multiplicities_follow_the_membership_test() -> None:
    """The set-builder of Def. 21-22 filters the bag it draws from: copies are kept, and a
    mapping seen before is never new, however many copies it now has."""
    assert R2S.ISTREAM.apply([], [A, A], 1) == [(A, 1), (A, 1)]
    assert R2S.ISTREAM.apply([A], [A, A], 2) == []
    assert R2S.DSTREAM.apply([A, A, B], [B], 3) == [(A, 3), (A, 3)]


def test_mapping_equality_is_by_content() -> None:
    assert R2S.ISTREAM.apply([{"x": "1", "y": "2"}], [{"y": "2", "x": "1"}], 1) == []
    assert R2S.ISTREAM.apply([{"x": "1"}], [{"x": "1", "y": "2"}], 1) == [({"x": "1", "y": "2"}, 1)]


bags = st.lists(st.sampled_from([A, B, C]), max_size=6)


def key(mu: Solution) -> frozenset[tuple[str, str]]:
    return frozenset(mu.items())


@given(bags, bags)
def test_istream_and_dstream_partition_the_change(
    previous: list[Solution], current: list[Solution]
) -> None:
    """As sets: new ∪ (kept) = current, gone ∪ (kept) = previous, new ∩ previous = ∅."""
    new = {key(mu) for mu, _ in R2S.ISTREAM.apply(previous, current, 5)}
    gone = {key(mu) for mu, _ in R2S.DSTREAM.apply(previous, current, 5)}
    before, now = {key(mu) for mu in previous}, {key(mu) for mu in current}
    assert new | (now & before) == now and gone | (now & before) == before
    assert not new & before and not gone & now
    rstream = R2S.RSTREAM.apply(previous, current, 5)
    assert Counter(key(mu) for mu, _ in rstream) == Counter(key(mu) for mu in current)
    assert {t for _, t in rstream} <= {5}


def test_text() -> None:
    assert [str(op) for op in R2S] == ["rstream", "istream", "dstream"]

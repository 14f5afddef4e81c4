"""Streaming operators (R2S): from the answers at two evaluation instants to a stream.

RSP-QL (seed 003, "Streaming operators", Def. 20-22) redefines CQL's operators on the
sequence ``Ψ(t)`` of solution mappings of an evaluation at ``t``; each returns mappings
annotated with ``t``. For two consecutive evaluation instants ``t_{j-1}`` and ``t_j`` of ET:

- ``RStream(Ψ(t), t) = {(μ, t) | μ ∈ Ψ(t)}``: the whole answer, every time (Def. 20);
- ``IStream(Ψ(t_{j-1}), Ψ(t_j), t_j) = {(μ, t_j) | μ ∈ Ψ(t_j) ∧ μ ∉ Ψ(t_{j-1})}``: what is new
  (Def. 21);
- ``DStream(Ψ(t_{j-1}), Ψ(t_j), t_j) = {(μ, t_j) | μ ∉ Ψ(t_j) ∧ μ ∈ Ψ(t_{j-1})}``: what has
  gone (Def. 22).

The answers are multisets, and the set-builder notation is read as SPARQL reads it for
multisets: a filter that keeps the multiplicity a mapping has in the collection it is drawn
from. So ``IStream`` keeps both copies of a mapping that occurs twice now and never before,
and none of a mapping that occurred before, even if it now occurs more often (a bag
difference, as in CQL, would keep the extra copy: a documented difference). At the first
evaluation instant there is no previous answer; it is taken as empty.

A solution mapping is a mapping from variable names (without ``?``) to RDF terms written in
N-Triples syntax, as in rsep's results format (``rsep.rdf.results``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum

__all__ = ["R2S", "Solution", "TimestampedSolution"]

Solution = Mapping[str, str]
TimestampedSolution = tuple[Solution, int]


def _key(solution: Solution) -> frozenset[tuple[str, str]]:
    return frozenset(solution.items())


class R2S(Enum):
    """The streaming operator of a query (``r2s``; RSP-QL Def. 20-22)."""

    RSTREAM = "rstream"
    ISTREAM = "istream"
    DSTREAM = "dstream"

    def __str__(self) -> str:
        return self.value

    def apply(
        self,
        previous: Sequence[Solution] | None,
        current: Sequence[Solution],
        t: int,
    ) -> list[TimestampedSolution]:
        """Stream out the answer ``current`` of the evaluation at ``t``, given the answer
        ``previous`` of the evaluation before it (``None`` at the first one).

        The order of the input is kept: ``current``'s for RStream and IStream,
        ``previous``'s for DStream.
        """
        before = previous if previous is not None else ()
        if self is R2S.RSTREAM:
            return [(mu, t) for mu in current]
        if self is R2S.ISTREAM:
            seen = {_key(mu) for mu in before}
            return [(mu, t) for mu in current if _key(mu) not in seen]
        now = {_key(mu) for mu in current}
        return [(mu, t) for mu in before if _key(mu) not in now]

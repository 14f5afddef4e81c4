"""Rewrites of a plan: pure functions from plan to plan (the sqlglot optimizer model).

- :func:`binarise_sequences`: n-ary CQELS-CEP sequences into the nested binary SEQ,
  SEQ_WO, NO_HEAD and NO_TAIL of CQELS-CEP's evaluation (Eq. (3)-(8), (10)-(15)), to the
  right as CQELS-CEP nests them or to the left as EP-SPARQL binarises (Sect. 5, rule (9)).
- :func:`apply_profile`: the report policy, streaming operator, present window, window
  bounds and empty-answer reporting of an engine (RSP-QL's comparison of C-SPARQL, CQELS and
  SPARQLstream; ``shared/data/csrbench/config/*.properties``), recorded as ``PROFILE``.
- :func:`override`: values given on the command line (``--set name=value``), recorded as
  ``COMMAND_LINE``.

Each pass returns a new plan and leaves its input unchanged; running a pass twice gives
the same plan as running it once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from enum import Enum

from rsep.algebra.events import CepItem, CepSeq, EventPattern, GraphPatternRef, Node, transform
from rsep.algebra.params import Parameters, Profile, Source
from rsep.algebra.plan import R2R, EventJoin, Plan
from rsep.algebra.r2s import R2S
from rsep.algebra.report import ReportPolicy
from rsep.algebra.window import PresentRule, WindowBounds

__all__ = [
    "PROFILES",
    "Associativity",
    "apply_profile",
    "binarise",
    "binarise_sequences",
    "override",
]


class Associativity(Enum):
    """How an n-ary sequence nests into binary ones."""

    LEFT = "left"
    """``SEQ(SEQ(A, B), C)``: EP-SPARQL's binarization (Sect. 5, rule (9))."""
    RIGHT = "right"
    """``SEQ(A, SEQ(B, C))``: CQELS-CEP's evaluation (Eq. (3), (10))."""


def _group(items: tuple[CepItem, ...], associativity: Associativity) -> CepItem:
    if len(items) == 1:
        return items[0]
    return CepItem(_chain(items, associativity))


def _chain(items: tuple[CepItem, ...], associativity: Associativity) -> CepSeq:
    if len(items) <= 2:
        return CepSeq(items)
    if associativity is Associativity.RIGHT:
        return CepSeq((items[0], CepItem(_chain(items[1:], associativity))))
    return CepSeq((CepItem(_chain(items[:-1], associativity)), items[-1]))


def _binarise_one(seq: CepSeq, associativity: Associativity) -> CepSeq:
    index = seq.negated_index
    if index is None:
        return _chain(seq.items, associativity)
    prefix, negated, suffix = seq.items[:index], seq.items[index], seq.items[index + 1 :]
    parts: list[CepItem] = []
    if prefix:
        parts.append(_group(prefix, associativity))
    parts.append(negated)
    if suffix:
        parts.append(_group(suffix, associativity))
    return CepSeq(tuple(parts))


def binarise(node: Node, associativity: Associativity = Associativity.RIGHT) -> Node:
    """``node`` with every CQELS-CEP SEQ binary: ``SEQ(W1, …, Wn)`` nests pairwise; one
    with a negated element ``!Wi`` becomes ``SEQ_WO(SEQ(W1 … Wi-1), Wi, SEQ(Wi+1 … Wn))``
    (a three-element SEQ, negated in the middle), ``NO_HEAD(W1, SEQ(W2 … Wn))`` or
    ``NO_TAIL(SEQ(W1 … Wn-1), Wn)`` (CQELS-CEP Eq. (5)-(7), (12)-(14))."""

    def rewrite(n: Node) -> Node:
        if isinstance(n, CepSeq) and n != _binarise_one(n, associativity):
            return _binarise_one(n, associativity)
        return n

    return transform(node, rewrite)


def binarise_sequences(plan: Plan, associativity: Associativity = Associativity.RIGHT) -> Plan:
    """The plan with every n-ary CQELS-CEP sequence nested into binary ones
    (:func:`binarise`). RSEP-QL's SEQ and EP-SPARQL's SeqJoin are binary already; SPAseq
    sequences stay n-ary, since their automaton runs the flat list (SPAseq Sect. 6.2)."""
    r2r = binarise(plan.r2r, associativity)
    if r2r == plan.r2r:
        return plan
    return replace(plan, r2r=_as_r2r(r2r))


def _as_r2r(node: Node) -> R2R:
    if isinstance(node, EventPattern | GraphPatternRef | EventJoin):
        return node
    raise TypeError(f"not an R2R expression: {type(node).__name__}")  # pragma: no cover


# Each engine's settings and the note recorded with them. C-SPARQL: window close + non-empty
# content, Rstream, empty relations reported, windows [o, c) (docs/semantics.md, item 22: the
# oracle reproduces CSR-Bench's recorded C-SPARQL answers only so); CQELS: new content +
# non-empty content (cqels.properties' contentchange + nonemptycontent, read as arrivals, the
# reading of CSR-Bench's oracle, YABench and RSP-QL's comparison: docs/semantics.md, item 17),
# Istream, the window (now - α, now]; SPARQLstream: window close + non-empty content, Rstream.
# All three read the closing window: at a window-close instant it is the window that closes
# (RSEP-QL's W^τ, ``last_ended``, gives the same window there).
PROFILES: Mapping[Profile, tuple[Mapping[str, object], str]] = {
    Profile.CSPARQL: (
        {
            "window.report": ReportPolicy.parse("window_close+non_empty"),
            "r2s": R2S.RSTREAM,
            "window.present": PresentRule.CLOSING,
            "window.bounds": WindowBounds.CLOSED_OPEN,
            "output.empty": True,
        },
        "profile csparql: RSP-QL comparison table; csrbench/config/csparql.properties; "
        "windows [o, c) (docs/semantics.md, 22)",
    ),
    Profile.CQELS: (
        {
            "window.report": ReportPolicy.parse("new_content+non_empty"),
            "r2s": R2S.ISTREAM,
            "window.present": PresentRule.CLOSING,
            "output.empty": False,
        },
        "profile cqels: RSP-QL comparison table, Example 13; csrbench/config/cqels.properties "
        "(content change read as arrivals, docs/semantics.md, 17)",
    ),
    Profile.SPARQLSTREAM: (
        {
            "window.report": ReportPolicy.parse("window_close+non_empty"),
            "r2s": R2S.RSTREAM,
            "window.present": PresentRule.CLOSING,
            "output.empty": False,
        },
        "profile sparqlstream: RSP-QL comparison table; csrbench/config/sparqlstream.properties",
    ),
    Profile.NONE: ({}, "no engine profile"),
}

_OVERRIDABLE = {Source.BUILT_IN, Source.DIALECT_DEFAULT, Source.PROFILE}


def apply_profile(plan: Plan) -> Plan:
    """The plan with the settings of the engine named by the ``profile`` parameter.

    A profile sits between the dialect's defaults and the query text (docs/languages.md,
    "How parameters are layered"): it replaces built-in values, dialect defaults and an
    earlier profile's values, and never a value from the query text or the command line,
    wherever the ``profile`` parameter itself came from.
    """
    params = plan.parameters
    settings, note = PROFILES[params.profile]
    out: Parameters = params
    for name, value in settings.items():
        if out.source(name) in _OVERRIDABLE:
            out = out.with_value(name, value, Source.PROFILE, note)
    if out == params:
        return plan
    return replace(plan, parameters=out)


def override(plan: Plan, values: Mapping[str, object], note: str = "--set") -> Plan:
    """The plan with ``values`` (``name: value``, typed or as text) from the command line.

    Raises :class:`~rsep.algebra.params.ParameterError` for an unknown name or a value the
    parameter does not take.
    """
    if not values:
        return plan
    return replace(plan, parameters=plan.parameters.with_values(values, Source.COMMAND_LINE, note))

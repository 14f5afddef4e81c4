"""From event mappings to results, instant by instant: the query form and the streaming
operator of an event pattern's answer (RSP-QL Def. 20-24, "Query Form").

An event pattern's answer at an evaluation instant ``t`` is a set of event mappings
``(μ, t1, t2)`` that only grows (SPAseq's matches, once known, stay: Sect. 5.6), so the
engine hands :class:`Output` only what is new at ``t``. Each answer goes through what the
oracle applies (``ContinuousQuery`` in ``rsep.semantics.evaluate``, which the engine does not
import: DESIGN.md keeps the two apart so that comparing them means something):

1. the SELECT's ``(e AS ?v)`` expressions, each under ``μ`` and the ones before it, bound
   when ``?v`` is not (SPARQL 1.1 sec. 18.2.4.1's Extend), then the projection and, under
   DISTINCT or when the language's answer is a set (SPAseq Def. 16, CQELS-CEP Eq. (1)),
   one copy per instant (sec. 18.2.5);
2. the streaming operator (``r2s``): IStream reports a projected mapping, with its
   interval, at the first instant it is in the answer, with the number of copies the
   answer holds then (RSP-QL Def. 21 on multisets, ``rsep.algebra.r2s``); RStream the whole
   answer at every instant (Def. 20); DStream what left the answer, which never happens
   here (Def. 22);
3. the query form: one SELECT result per streamed mapping, with its interval; one
   CONSTRUCT graph per instant (the template instantiated with each mapping, SPARQL 1.1
   sec. 16.2, by pyoxigraph); one ASK boolean per instant.

From a ``start`` (the oracle's start of the range), the instants before it are evaluated
but not reported, and the first instant at or after it compares with ∅ (Def. 21-22): IStream
streams the whole answer then, the mappings known before ``start`` among it (kept until then,
at most ``max_window_events``).

State is bounded: IStream remembers what it reported only while an answer with that
interval can still come (:meth:`Output.forget`); RStream keeps the whole answer, at most
``max_window_events`` mappings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

import numpy as np
from pyoxigraph import Triple

from rsep.algebra.modifiers import Row
from rsep.algebra.modifiers import apply as apply_modifiers
from rsep.algebra.plan import Ask, Construct, Plan, Select
from rsep.algebra.r2s import R2S
from rsep.errors import UserError
from rsep.rdf.results import AskResult, ConstructResult, Result, SelectResult
from rsep.rdf.sparql import GraphMatcher, Mu, instantiate

__all__ = ["Answer", "Output"]

Answer = tuple[Mu, int, int]
"""An event mapping ``(μ, t1, t2)``: a match's mapping and its first and last event times."""

_Key = tuple[frozenset[tuple[str, str]], int, int]


def _key(mu: Mu, t1: int, t2: int) -> _Key:
    """What IStream compares: the mapping as N-Triples text, and the interval."""
    return (frozenset((name, str(term)) for name, term in mu.items()), t1, t2)


class Output:
    """The query form and streaming operator of a plan applied to an event pattern's
    answers (module docstring); :meth:`instant` is called at every evaluation instant.
    ``answer_set``: the language's answer is a set, so projected duplicates are one;
    ``start``: no instant before it is reported (module docstring)."""

    def __init__(self, plan: Plan, *, answer_set: bool = False, start: int | None = None) -> None:
        self.form = plan.form
        self.modifiers = plan.modifiers
        self.start = start
        self._whole: list[Answer] = []  # the answer so far, for the solution modifiers
        self._psi: list[_Text] | None = None  # the modified answer at the instant before
        self._before: list[Answer] = []  # projected answers of the instants before start
        self.answer_set = answer_set
        self.r2s = plan.r2s
        self.report_empty = plan.parameters.output_empty
        self.limit = plan.parameters.max_window_events
        self._known: dict[Answer, int] = {}
        self._reported: dict[_Key, int] = {}
        self._answer: list[Answer] = []
        self._answer_keys: set[_Key] = set()

    # what is new at t ----------------------------------------------------------------

    def instant(self, t: int, found: Iterable[Answer], matcher: GraphMatcher) -> list[Result]:
        """The results at evaluation instant ``t``, given the event mappings known at ``t``
        (those known before are ignored: the answer is a set, Def. 16's union)."""
        fresh: list[Answer] = []
        for answer in found:
            if answer not in self._known:
                self._known[answer] = answer[2]
                fresh.append(answer)
        if self.modifiers is not None:
            self._whole += fresh
            self._check_size(len(self._whole))
            return self._modified(t, self._whole, matcher)
        projected = [self._project(answer, matcher) for answer in fresh]
        if self.start is not None and self.r2s is not R2S.RSTREAM:
            if t < self.start:
                self._before += projected
                self._check_size(len(self._before))
                return []
            projected, self._before = self._before + projected, []
        streamed = self._stream(projected)
        if self.start is not None and t < self.start:
            return []
        return self._format(t, streamed, matcher)

    def in_columns(self) -> bool:
        """Whether :meth:`fresh_rows` (a SELECT without expressions) or
        :meth:`fresh_graphs` (a CONSTRUCT) gives the results: no solution modifiers,
        streamed by IStream, from the first instant."""
        form = self.form
        if self.modifiers is not None or self.start is not None or self.r2s is not R2S.ISTREAM:
            return False
        return isinstance(form, Construct) or (isinstance(form, Select) and not form.expressions)

    def fresh_graphs(
        self,
        times: Sequence[int],
        at: np.ndarray,
        spo: np.ndarray,
        terms: Callable[[np.ndarray], Sequence[Any]],
    ) -> list[Result]:
        """The CONSTRUCT results at ``times`` given the triples their new answers
        instantiate (rows ``spo`` of term ids, ``at`` each one's instant): one graph per
        instant that has triples, or every instant when empty graphs are reported
        (requires :meth:`in_columns`)."""
        table = np.unique(np.concatenate([at.reshape(-1, 1), spo], axis=1), axis=0)
        known = np.unique(table[:, 1:])
        term = dict(zip(known.tolist(), terms(known), strict=True))
        bounds = [*np.searchsorted(table[:, 0], times, "left").tolist(), len(table)]
        rows = table[:, 1:].tolist()
        out: list[Result] = []
        for k, t in enumerate(times):
            triples = frozenset(
                Triple(term[s], term[p], term[o]) for s, p, o in rows[bounds[k] : bounds[k + 1]]
            )
            if triples or self.report_empty:
                out.append(ConstructResult(t, triples))
        return out

    def fresh_rows(
        self,
        t1: np.ndarray,
        t2: np.ndarray,
        columns: dict[str, np.ndarray],
        terms: Callable[[np.ndarray], Sequence[Any]],
        unbound: int,
    ) -> list[Result]:
        """The SELECT results of answers ``(μ, t1, t2)`` in columns of term ids (``unbound``:
        none), each new at its instant ``t2`` (an event pattern's answer that ends when it
        is found): IStream reports each projected copy at ``t2`` (one under DISTINCT or a
        set answer), in time order; ``terms`` decodes ids (requires :meth:`in_columns`)."""
        form = self.form
        assert isinstance(form, Select)
        names = [n for n in (form.variables or sorted(columns)) if n in columns]
        table = np.stack([t2, t1, *(columns[n].astype(np.int64) for n in names)], axis=1)
        if self.answer_set or form.distinct:
            table = np.unique(table, axis=0)
        else:
            table = table[np.lexsort((table[:, 1], table[:, 0]))]
        ids = table[:, 2:]
        known = np.unique(ids[ids != unbound])
        term = dict(zip(known.tolist(), terms(known), strict=True))
        values = [[term.get(i) for i in column] for column in ids.T.tolist()]
        return [
            SelectResult(
                end,
                {n: v for n, v in zip(names, row, strict=True) if v is not None},
                (start, end),
            )
            for end, start, *row in zip(
                table[:, 0].tolist(), table[:, 1].tolist(), *values, strict=True
            )
        ]

    def forget(self, before: int) -> None:
        """Drop what IStream and the answer set remember of intervals ending before
        ``before``: no answer with such an interval can come any more."""
        self._known = {a: t2 for a, t2 in self._known.items() if t2 >= before}
        self._reported = {k: t2 for k, t2 in self._reported.items() if t2 >= before}

    def _project(self, answer: Answer, matcher: GraphMatcher) -> Answer:
        """The SELECT's expressions and projection applied to one event mapping."""
        mu, t1, t2 = answer
        form = self.form
        if not isinstance(form, Select):
            return answer
        for name, expression in form.expressions:
            value = matcher.value(expression, mu)
            if value is not None and name not in mu:
                mu = mu.join({name: value})
        if form.variables:
            mu = mu.project(form.variables)
        return (mu, t1, t2)

    def _stream(self, projected: Sequence[Answer]) -> list[Answer]:
        """The streaming operator on what joined the answer (module docstring, 2)."""
        distinct = self.answer_set or (isinstance(self.form, Select) and self.form.distinct)
        if self.r2s is R2S.DSTREAM:
            return []
        if self.r2s is R2S.RSTREAM:
            for answer in projected:
                key = _key(*answer)
                if distinct and key in self._answer_keys:
                    continue
                self._answer_keys.add(key)
                self._answer.append(answer)
            self._check_size(len(self._answer))
            return list(self._answer)
        out: list[Answer] = []
        now: set[_Key] = set()
        for answer in projected:
            key = _key(*answer)
            if key in self._reported or (distinct and key in now):
                continue
            now.add(key)
            out.append(answer)
        for key in now:
            self._reported[key] = key[2]
        return out

    def _check_size(self, size: int) -> None:
        """``max_window_events`` bounds the answer kept whole (RStream's, or the one before
        ``start``)."""
        if size > self.limit:
            raise UserError(
                f"the whole answer is kept (RStream, or up to --start) and it holds {size} "
                f"mappings, more than max_window_events = {self.limit}: use IStream "
                "(--set r2s=istream) or raise it (--set max_window_events=N)"
            )

    def whole(self, t: int, whole: Sequence[Answer], matcher: GraphMatcher) -> list[Result]:
        """The results at ``t`` given the whole answer at ``t`` rather than what is new: an
        answer that can lose mappings (one joined with a pattern over a graph that changed,
        RSP-QL Def. 10) is compared whole with the answer at the evaluation before (Def.
        20-22), as the solution modifiers' is; at most ``max_window_events`` mappings."""
        self._check_size(len(whole))
        return self._modified(t, whole, matcher)

    def _modified(self, t: int, whole: Sequence[Answer], matcher: GraphMatcher) -> list[Result]:
        """The results at ``t`` from the whole answer ``whole``: the solution modifiers
        apply to it (:func:`rsep.algebra.modifiers.apply`), or else the SELECT's expressions,
        projection and DISTINCT, and the streaming operator compares the result with the one
        at the evaluation before (RSP-QL Def. 20-22, :meth:`rsep.algebra.r2s.R2S.apply`, as
        the oracle applies it)."""
        if self.start is not None and t < self.start:
            self._psi = None  # the first instant from start compares with ∅
            return []
        rows: list[Row]
        if self.modifiers is not None:
            rows = apply_modifiers(
                self.modifiers, [(mu, (t1, t2)) for mu, t1, t2 in whole], matcher.forms
            )
        else:
            distinct = self.answer_set or (isinstance(self.form, Select) and self.form.distinct)
            seen: set[_Key] = set()
            rows = []
            for answer in whole:
                mu, t1, t2 = self._project(answer, matcher)
                key = _key(mu, t1, t2)
                if distinct and key in seen:
                    continue
                seen.add(key)
                rows.append((mu, (t1, t2)))
        texts = [_Text.of(row) for row in rows]
        streamed = [cast(_Text, mu).row for mu, _ in self.r2s.apply(self._psi, texts, t)]
        self._psi = texts
        return self._format(t, streamed, matcher)

    # the query form ------------------------------------------------------------------

    def _format(
        self, t: int, streamed: Sequence[Answer | Row], matcher: GraphMatcher
    ) -> list[Result]:
        """The query form over the streamed mappings, each with its interval (none for a
        grouped row of the solution modifiers)."""
        form = self.form
        rows = [_row(item) for item in streamed]
        if isinstance(form, Select):
            return [SelectResult(t, dict(mu.items()), span) for mu, span in rows]
        if isinstance(form, Construct):
            triples: set[Triple] = set()
            for mu, _ in rows:
                triples.update(self._instantiate(form, mu, matcher))
            if triples or self.report_empty:
                return [ConstructResult(t, frozenset(triples))]
            return []
        if isinstance(form, Ask):
            return [AskResult(t, bool(streamed))]
        raise TypeError(f"unknown query form {type(form).__name__}")  # pragma: no cover

    def _instantiate(self, form: Construct, mu: Mu, matcher: GraphMatcher) -> list[Triple]:
        """The CONSTRUCT template instantiated with one mapping (SPARQL 1.1 sec. 16.2;
        :func:`rsep.rdf.sparql.instantiate`)."""
        return instantiate(form.template, mu, matcher.forms.stored_form)


def _row(item: Answer | Row) -> Row:
    """A streamed mapping with its interval, or ``None``."""
    if len(item) == 3:
        mu, t1, t2 = item
        return (mu, (t1, t2))
    return item


class _Text(dict[str, str]):
    """A row of the modified answer as R2S compares it (RSP-QL Def. 21-22): its terms in
    N-Triples and its interval, the row itself kept beside."""

    row: Row

    @classmethod
    def of(cls, row: Row) -> _Text:
        mu, span = row
        text = cls((name, str(term)) for name, term in mu.items())
        if span is not None:
            text["@interval"] = f"{span[0]} {span[1]}"
        text.row = row
        return text

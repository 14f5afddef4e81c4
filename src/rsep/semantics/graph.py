"""Graphs of the dataset: static graphs and time-varying graphs (RSP-QL Def. 10, RSEP-QL Def. 2).

A *time-varying graph* ``G`` is a function from time instants to RDF graphs; ``G(t)`` is the
*instantaneous graph* at ``t`` (RSP-QL Def. 10). rsep gives one as a list of
:class:`Snapshot`\\ s, each an RDF graph with a closed validity interval ``[valid_from,
valid_until]`` (either side may be open); at an instant no snapshot covers, ``G(t)`` is the
empty graph, as in RSP-QL Example 4 ("at time t1 < 2, G_shops(t1) is the empty graph").
Being a function, ``G`` gives one graph per instant, so snapshots may not overlap. A static
graph is the constant case: one snapshot valid at every instant.

File format (docs/semantics.md, "Time-varying graphs"): TriG in which every named graph is
a snapshot and the default graph states its validity::

    @prefix rsep: <http://w3id.org/rsep/vocab#> .
    :shops1 { :a a :Shop . :b a :Shop . :alice :owns :a . :bob :owns :b . }
    :shops1 rsep:validFrom 2 ; rsep:validUntil 13 .
    :shops2 { :b a :Shop . :bob :owns :b . }
    :shops2 rsep:validFrom 14 .

Times are read as the stream formats read them (``xsd:dateTime``, or an integer count of
the time unit). A named graph without validity statements is valid at every instant.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, tzinfo
from pathlib import Path
from typing import TypeAlias

from pyoxigraph import BlankNode, DefaultGraph, NamedNode, RdfFormat, Triple, parse

from rsep.errors import UserError
from rsep.rdf.formats._common import read_bytes, term_ms
from rsep.rdf.terms import RSEP
from rsep.rdf.time import TimeUnit

__all__ = [
    "RSEP_VALID_FROM",
    "RSEP_VALID_UNTIL",
    "Graph",
    "Snapshot",
    "TimeVaryingGraph",
    "read_graph",
    "read_time_varying_graph",
    "version_instants",
    "versions",
]

Graph: TypeAlias = AbstractSet[Triple]
"""A static RDF graph: a set of triples (RSP-QL Def. 1)."""

RSEP_VALID_FROM = NamedNode(RSEP + "validFrom")
"""``<snapshot> rsep:validFrom T``: the first instant at which a snapshot holds."""
RSEP_VALID_UNTIL = NamedNode(RSEP + "validUntil")
"""``<snapshot> rsep:validUntil T``: the last instant at which a snapshot holds."""


@dataclass(frozen=True)
class Snapshot:
    """One graph of a time-varying graph and the closed interval ``[valid_from, valid_until]``
    of instants at which it is the instantaneous graph (RSP-QL Def. 10, Example 4);
    ``None`` leaves that side open."""

    graph: frozenset[Triple]
    valid_from: int | None = None
    valid_until: int | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if (
            self.valid_from is not None
            and self.valid_until is not None
            and self.valid_until < self.valid_from
        ):
            raise ValueError(
                f"snapshot {self.label} is valid until {self.valid_until}, "
                f"before it is valid from {self.valid_from}"
            )

    @property
    def label(self) -> str:
        """The snapshot's name for messages."""
        return f"<{self.name}>" if self.name is not None else "(unnamed)"

    def valid_at(self, t: int) -> bool:
        """Whether ``t`` lies in ``[valid_from, valid_until]``."""
        after = self.valid_from is None or t >= self.valid_from
        before = self.valid_until is None or t <= self.valid_until
        return after and before

    def overlaps(self, other: Snapshot) -> bool:
        """Whether some instant lies in both validity intervals."""
        low = max((v for v in (self.valid_from, other.valid_from) if v is not None), default=None)
        high = min(
            (v for v in (self.valid_until, other.valid_until) if v is not None), default=None
        )
        return low is None or high is None or low <= high


@dataclass(frozen=True)
class TimeVaryingGraph:
    """A time-varying graph ``G : T → {g | g is an RDF graph}`` (RSP-QL Def. 10; RSEP-QL
    Def. 2), given by non-overlapping :class:`Snapshot`\\ s."""

    snapshots: tuple[Snapshot, ...]

    def __post_init__(self) -> None:
        for i, one in enumerate(self.snapshots):
            for other in self.snapshots[i + 1 :]:
                if one.overlaps(other):
                    raise ValueError(
                        f"snapshots {one.label} and {other.label} are valid at a common "
                        "instant; a time-varying graph gives one graph per instant "
                        "(RSP-QL Def. 10)"
                    )

    @classmethod
    def constant(cls, graph: Iterable[Triple]) -> TimeVaryingGraph:
        """The static graph ``graph`` as the constant time-varying graph."""
        return cls((Snapshot(frozenset(graph)),))

    def at(self, t: int) -> frozenset[Triple]:
        """The instantaneous graph ``G(t)`` (RSP-QL Def. 10): the snapshot valid at ``t``,
        or the empty graph."""
        for snapshot in self.snapshots:
            if snapshot.valid_at(t):
                return snapshot.graph
        return frozenset()

    def changes(self) -> frozenset[int]:
        """The instants ``t`` at which ``G(t)`` may differ from ``G(t - 1)``: where a
        snapshot starts to hold, and the instant after one stops."""
        found: set[int] = set()
        for snapshot in self.snapshots:
            if snapshot.valid_from is not None:
                found.add(snapshot.valid_from)
            if snapshot.valid_until is not None:
                found.add(snapshot.valid_until + 1)
        return frozenset(found)


def versions(graph: object) -> tuple[tuple[int, ...], tuple[frozenset[Triple], ...]]:
    """A background graph's versions: the instants at which it may change (``changes``,
    sorted) and the instantaneous graph over each span between them (RSP-QL Def. 10): one
    for a static graph, ``len(changes) + 1`` for a time-varying one (``at``, ``changes``),
    version ``i`` holding from ``changes[i - 1]``."""
    if isinstance(graph, AbstractSet):
        return (), (frozenset(graph),)
    changes = tuple(sorted(graph.changes()))  # type: ignore[attr-defined]
    return changes, tuple(graph.at(t) for t in version_instants(changes))  # type: ignore[attr-defined]


def version_instants(changes: Sequence[int]) -> list[int]:
    """One instant inside each span between sorted ``changes``: before the first, then each
    change (``[0]`` when there is none)."""
    return [changes[0] - 1, *changes] if changes else [0]


def as_time_varying(graph: Graph | TimeVaryingGraph) -> TimeVaryingGraph:
    """``graph`` as a time-varying graph: a static graph becomes the constant one."""
    if isinstance(graph, TimeVaryingGraph):
        return graph
    return TimeVaryingGraph.constant(graph)


def _format(path: Path, default: RdfFormat) -> RdfFormat:
    name = path.name.lower().removesuffix(".gz")
    extension = name.rsplit(".", 1)[-1] if "." in name else ""
    found = RdfFormat.from_extension(extension)
    return found if found is not None else default


def read_graph(path: Path) -> frozenset[Triple]:
    """A static RDF graph from a file: Turtle, N-Triples, RDF/XML… by its extension
    (Turtle if unknown), gzip-compressed or not. Only the default graph is read; a file
    with named graphs is an error."""
    path = Path(path)
    data = read_bytes(path)
    fmt = _format(path, RdfFormat.TURTLE)
    try:
        quads = list(parse(input=data, format=fmt, base_iri=path.resolve().as_uri()))
    except SyntaxError as exc:
        raise UserError(f"{path}: not {fmt.name}: {exc}") from None
    triples: set[Triple] = set()
    for quad in quads:
        if not isinstance(quad.graph_name, DefaultGraph):
            raise UserError(
                f"{path}: a static graph has no named graphs (found {quad.graph_name}); "
                "a time-varying graph is read with read_time_varying_graph"
            )
        triples.add(quad.triple)
    return frozenset(triples)


def read_time_varying_graph(
    path: Path, *, time_unit: TimeUnit = TimeUnit.MILLISECONDS, tz: tzinfo = UTC
) -> TimeVaryingGraph:
    """A time-varying graph from a TriG file: each named graph a :class:`Snapshot`, its
    validity given in the default graph by ``rsep:validFrom`` and ``rsep:validUntil``
    (module docstring). Integer times count ``time_unit``; a dateTime without a zone is
    read in ``tz``. Any other default-graph statement is an error."""
    path = Path(path)
    data = read_bytes(path)
    try:
        quads = list(parse(input=data, format=RdfFormat.TRIG, base_iri=path.resolve().as_uri()))
    except SyntaxError as exc:
        raise UserError(f"{path}: not TriG: {exc}") from None
    graphs: dict[NamedNode | BlankNode, set[Triple]] = {}
    bounds: dict[NamedNode | BlankNode, dict[str, int]] = {}
    for quad in quads:
        graph = quad.graph_name
        if isinstance(graph, NamedNode | BlankNode):
            graphs.setdefault(graph, set()).add(quad.triple)
            continue
        predicate = quad.predicate
        if predicate not in (RSEP_VALID_FROM, RSEP_VALID_UNTIL):
            raise UserError(
                f"{path}: the default graph of a time-varying graph holds only "
                f"rsep:validFrom and rsep:validUntil statements, not {quad.triple}"
            )
        subject = quad.subject
        if not isinstance(subject, NamedNode | BlankNode):
            raise UserError(f"{path}: a validity statement needs a graph name: {quad.triple}")
        key = "from" if predicate == RSEP_VALID_FROM else "until"
        try:
            t = term_ms(quad.object, time_unit, tz)
        except ValueError as exc:
            raise UserError(f"{path}: bad time in {quad.triple}: {exc}") from None
        if bounds.setdefault(subject, {}).setdefault(key, t) != t:
            raise UserError(f"{path}: graph {subject} has two values of rsep:valid{key.title()}")
    names = list(dict.fromkeys([*graphs, *bounds]))
    try:
        return TimeVaryingGraph(
            tuple(
                Snapshot(
                    frozenset(graphs.get(name, set())),
                    bounds.get(name, {}).get("from"),
                    bounds.get(name, {}).get("until"),
                    name.value,
                )
                for name in names
            )
        )
    except ValueError as exc:
        raise UserError(f"{path}: {exc}") from None

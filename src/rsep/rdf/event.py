"""Events, streams and streamsets: the data every query consumes and produces.

An event is a timestamped RDF graph on a named stream, ``(stream, t_start, t_end, graph)``
(DESIGN.md, Data model). A point event has ``t_start == t_end`` (RSP-QL Def. 9, RSEP-QL
Def. 1, SPAseq Def. 1); an interval event carries the occurrence interval of EP-SPARQL
Sec. 4 and CQELS-CEP Sec. 3. A triple stream is the case of one-triple graphs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from pyoxigraph import BlankNode, NamedNode, Triple

EventId = NamedNode | BlankNode


@dataclass(frozen=True, slots=True)
class Event:
    """One event: a graph on ``stream`` that holds from ``t_start`` to ``t_end`` (ms).

    ``id`` names the event's graph where the source gives it a name (the named graph of
    TriG/N-Quads, the ``@id`` of JSON-LD); it does not take part in equality.
    """

    stream: str
    t_start: int
    t_end: int
    graph: frozenset[Triple]
    id: EventId | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.t_start > self.t_end:
            raise ValueError(f"event ends before it starts: [{self.t_start}, {self.t_end}]")

    @classmethod
    def point(
        cls, stream: str, t: int, triples: Iterable[Triple], id: EventId | None = None
    ) -> Event:
        """A point event at time ``t``."""
        return cls(stream, t, t, frozenset(triples), id)

    @property
    def is_point(self) -> bool:
        """Whether the event happens at one instant (``t_start == t_end``)."""
        return self.t_start == self.t_end


def event_order(event: Event) -> tuple[int, str, tuple[str, ...]]:
    """A total order of events: time, stream, then the graph's triples as N-Triples text
    (two equal events, and only they, compare equal), so that a set of events has one
    sorted form (SPAseq Def. 8's conjunction uses a set of events)."""
    return (event.t_start, event.stream, tuple(sorted(str(t) for t in event.graph)))


@dataclass(frozen=True, slots=True)
class Stream:
    """A named stream: its events in non-decreasing order of ``t_start`` (RSP-QL Def. 9)."""

    iri: str
    events: tuple[Event, ...]

    def __post_init__(self) -> None:
        for before, after in zip(self.events, self.events[1:], strict=False):
            if after.t_start < before.t_start:
                raise ValueError(
                    f"stream <{self.iri}> goes back in time: {after.t_start} after {before.t_start}"
                )
        for event in self.events:
            if event.stream != self.iri:
                raise ValueError(f"event of <{event.stream}> in stream <{self.iri}>")

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)


class StreamSet(Mapping[str, Stream]):
    """Named streams by IRI: the streamset of SPAseq Def. 2, the streams of an RSP-QL dataset."""

    def __init__(self, streams: Iterable[Stream] = ()) -> None:
        self._streams: dict[str, Stream] = {}
        for stream in streams:
            if stream.iri in self._streams:
                raise ValueError(f"stream <{stream.iri}> given twice")
            self._streams[stream.iri] = stream

    @classmethod
    def from_events(cls, events: Iterable[Event]) -> StreamSet:
        """Group events by stream, keeping each stream's order (stable sort on t_start)."""
        grouped: dict[str, list[Event]] = {}
        for event in events:
            grouped.setdefault(event.stream, []).append(event)
        return cls(
            Stream(iri, tuple(sorted(evs, key=lambda e: e.t_start))) for iri, evs in grouped.items()
        )

    def __getitem__(self, iri: str) -> Stream:
        return self._streams[iri]

    def __iter__(self) -> Iterator[str]:
        return iter(self._streams)

    def __len__(self) -> int:
        return len(self._streams)

    def events(self) -> list[Event]:
        """All events of all streams, merged in order of ``t_start`` (stable by stream)."""
        merged = [event for stream in self._streams.values() for event in stream]
        return sorted(merged, key=lambda e: e.t_start)

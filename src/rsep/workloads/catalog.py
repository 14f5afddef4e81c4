"""The workloads of ``rsep bench`` (issue 15): each one a SPAseq query, its events made from
the real data of ``../shared/data`` (replicated past the data set's size, the file names
saying so), and the systems it runs on. The harness (:mod:`rsep.workloads.bench`) measures
them all alike; only what differs between workloads is here.

- ``stock-vshape``: SPAseq UC4's V shape, 3 to 7 steps, strict ``,`` or skip-till-next
  ``;`` (``--steps``, ``--strategy``), NASDAQ bars; also the naive baseline, Flink and the
  V shape written by hand over the event store's columns (``vectorised``).
- ``stock-vshape-any``: the V shape under skip-till-any ``:`` (Def. 10) within 10
  minutes; also the naive baseline (which branches as skip-till-any does).
- ``stock-head-shoulders``: UC4's Query 3 (``examples/uc4-stock``), NASDAQ bars.
- ``card-big-after-small``: UC3, Query 2 (``examples/uc3-credit-card``), card10k.
- ``card-kleene``: a Kleene+ pattern on card10k: a big withdrawal, one or more further
  transactions of the card, another big one (iterations join on the card, Def. 13).
- ``smart-grid``: UC1, Query 1, three streams (``examples/uc1-smart-grid``), HomeC.
- ``traffic-congestion``: UC5, Query 5, a conjunction ``(B & C)`` over three streams
  (``examples/uc5-traffic``), Aarhus traffic of three road segments, two months.
- ``citybench-q1``: CityBench's Q1 in RSP-QL (``examples/citybench/Q1.rspql``): the
  congestion levels of two road segments in 3-second windows sliding by 1 second, over the
  two segments' Aarhus traffic and CityBench's sensor repository as background graph.
"""

from __future__ import annotations

import csv as csvlib
import lzma
import math
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from rsep.errors import UserError
from rsep.rdf.mapping import MappedEvent
from rsep.workloads.baselines import VShape, vshape_query
from rsep.workloads.bench import SHARED, Data, mapped_csv, prepare, write_events
from rsep.workloads.output import SYNTHETIC, write_lines

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
"""The use cases' queries and fixtures (SPAseq UC1, UC3, UC4, UC5)."""
DATA = SHARED / "data"
POINTS = (150_850, 1_508_500, 10_000_000)
"""The sizes issue 15 measures every workload at (50 days of the 7 tickers' bars, 500,
and 10 M events), after its smallest point."""
ENGINE_SYSTEMS = ("rsep", "rsep-live", "read", "spark", "oracle")
"""Systems that run any SPAseq query: rsep's engines, reading alone, and the oracle."""

CARDS = DATA / "creditcard" / "card10k.n3.xz"
CARD_STREAM = "http://example.org/main"
"""The stream IRI of SPAseq's credit-card description (queryCardFB.q)."""
HOMEC = DATA / "smarthome" / "smarthome_homec_sample" / "HomeC_first2838rows.csv"
TRAFFIC = DATA / "aarhus" / "traffic" / "AarhusTrafficData_449segments_2014-08-01_2014-09-30.tar.xz"
SENSORS = DATA / "aarhus" / "kb" / "SensorRepository.n3.xz"
SEGMENTS = ("181223", "185104", "192653")
"""UC5's junction: segment 181223 and the two segments that leave its end point."""
Q1_SEGMENTS = ("182955", "158505")
"""The two road segments CityBench's Q1 watches."""
Q1_SPEEDUP = 300
"""CityBench Q1's replay speed-up: each 5-minute report one second later than the one
before, so a 3-second window holds the last three reports of each segment (at real time
almost every window is empty and the engines evaluate 300 empty instants per report)."""
REPOSITORY = "http://localhost:12345/WebGlCity/RDF/SensorRepository.rdf"
"""The graph IRI CityBench's queries read the sensor repository under (``FROM``)."""

KLEENE_QUERY = """\
# Kleene+ on SPAseq's credit-card stream (rsep.workloads.catalog, issue 15): on one card,
# (A) a withdrawal of at least 400, (B+) one or more further transactions of the card,
# (C) again one of at least 400, each the card's next transaction (strict contiguity in
# the card's partition). B binds the card and its id only, the same in every
# transaction, so its iterations join (SPAseq Def. 13) and B+ takes the whole stretch.
PREFIX pred: <http://example/>
SELECT ?card ?id ?amount1 ?amount3
WITHIN 100 SECONDS
PARTITION BY ?card
FROM STREAM S1 <http://example.org/main>
WHERE {
  SEQ (A, B+, C)
  DEFINE GPM A ON S1 {
    ?card pred:amount ?amount1 .
    FILTER (?amount1 >= 400)
  }
  DEFINE GPM B ON S1 {
    ?card pred:id ?id .
  }
  DEFINE GPM C ON S1 {
    ?card pred:amount ?amount3 .
    FILTER (?amount3 >= 400)
  }
}
"""


@dataclass(frozen=True)
class Workload:
    """One named workload: its query (of the point's V shape where ``shape`` is given),
    how ``events`` events and a KB of ``kb_triples`` triples are made in a folder, and the
    systems it runs on."""

    name: str
    summary: str
    query: Callable[[VShape], str]
    prepare: Callable[[Path, int, int], Data]
    smallest: int
    """The smallest real point: about 15,000 events, or the whole data set if smaller."""
    systems: tuple[str, ...] = ENGINE_SYSTEMS
    shape: VShape | None = None
    """The default pattern of a workload that takes ``--window``, ``--steps``,
    ``--strategy``; None for a fixed query."""
    baseline: bool = False
    """Answers in the V shape's form (:class:`rsep.workloads.baselines.Answer`), so that
    the naive baseline and Flink compare with rsep."""
    dialect: str = "spaseq"
    """The query's language."""

    @property
    def shaped(self) -> bool:
        """Whether the query is made from the point's V shape."""
        return self.shape is not None

    @property
    def points(self) -> tuple[int, ...]:
        """The sizes it is measured at."""
        return (self.smallest, *POINTS)


def example(path: str) -> Callable[[VShape], str]:
    """The query of a file under ``examples/`` (the point's shape is not used)."""

    def query(_: VShape) -> str:
        return (EXAMPLES / path).read_text(encoding="utf-8")

    return query


def _fixed(text: str) -> Callable[[VShape], str]:
    return lambda _: text


def _need(path: Path) -> Path:
    if not path.exists():
        raise UserError(
            f"{path} not found: this workload reads the real data of ../shared/data "
            "(set RSEP_SHARED to the folder that holds data/)"
        )
    return path


def _data(
    source: Path,
    folder: Path,
    stem: str,
    mapped: Callable[[], Iterator[MappedEvent]],
    kb: Path | None = None,
    kb_graph: str = "http://example.org/kb/none",
) -> Data:
    """The :class:`Data` of events written by :func:`rsep.workloads.bench.write_events`,
    with the KB ``kb`` (Turtle, written as N-Triples beside them) or an empty one."""
    nquads, store, events, triples = write_events(mapped, folder, stem)
    kb_nt = folder / f"{stem}.kb.nt"
    if not kb_nt.exists():
        from pyoxigraph import RdfFormat, parse, serialize

        quads = list(parse(path=str(kb), format=RdfFormat.TURTLE)) if kb is not None else []
        serialize([q.triple for q in quads], output=str(kb_nt), format=RdfFormat.N_TRIPLES)
    return Data(source, nquads, store, kb_nt, kb_nt, events, triples or 0, kb_graph)


# Credit cards (SPAseq UC3) -------------------------------------------------------------------


def prepare_cards(folder: Path, events: int, kb_triples: int = 0) -> Data:
    """``events`` transactions of SPAseq's card10k (20,001 real ones, two triples each, the
    stream repeated past them), read as ``rsep run`` reads its stream description (event k
    at k seconds) and written as N-Quads and the event store."""
    from rsep.rdf.formats import read_events

    lines = _card_lines(_need(CARDS))
    stem = f"card10k_replicated_{SYNTHETIC}_{events}"
    nt = folder / f"{stem}.nt"
    description = folder / f"{stem}.txt"
    if not description.exists():
        write_lines(nt, (lines[i % len(lines)] for i in range(2 * events)))
        write_lines(description, [f"<{CARD_STREAM}> <./{nt.name}> 2\n"])

    def mapped() -> Iterator[MappedEvent]:
        for k, event in enumerate(read_events(description)):
            triples = [(str(t.subject), str(t.predicate), str(t.object)) for t in event.graph]
            ident = f"<{CARD_STREAM}/event/{k}>"
            yield MappedEvent(event.stream, ident, event.t_start, event.t_end, sorted(triples))

    return _data(nt, folder, stem, mapped)


def _card_lines(path: Path) -> list[str]:
    with lzma.open(path, "rt", encoding="utf-8") as handle:
        lines = [line if line.endswith("\n") else line + "\n" for line in handle if line.strip()]
    if len(lines) % 2:
        raise UserError(f"{path}: an odd number of triples, not two per transaction")
    return lines


# Smart grid (SPAseq UC1) ---------------------------------------------------------------------


def prepare_homec(folder: Path, events: int, kb_triples: int = 0) -> Data:
    """``events`` events of the three smart-home streams (power, weather, generation: the
    ``homec-power``, ``homec-weather`` and ``homec-generation`` mappings, three events per
    row) of the Smart* HomeC sample (2,838 real rows), the sample repeated past it, each
    copy 2,838 s later (the sample's ``time`` advances 1 s a row)."""
    from rsep.rdf.mapping import load_mapping

    header, *rows = _need(HOMEC).read_text(encoding="utf-8").splitlines()
    wanted = math.ceil(events / 3)
    stem = f"HomeC_replicated_{SYNTHETIC}_{events}"
    csv = folder / f"{stem}.csv"
    if not csv.exists():

        def lines() -> Iterator[str]:
            yield header + "\n"
            for i in range(wanted):
                copy, row = divmod(i, len(rows))
                time, rest = rows[row].split(",", 1)
                yield f"{int(time) + copy * len(rows)},{rest}\n"

        write_lines(csv, lines())
    names = ("homec-power", "homec-weather", "homec-generation")
    mappers = [load_mapping(name).bind() for name in names]
    return _data(csv, folder, stem, lambda: _first(mapped_csv(csv, mappers), events))


def _first(events: Iterator[MappedEvent], count: int) -> Iterator[MappedEvent]:
    for i, event in enumerate(events):
        if i == count:
            return
        yield event


# Traffic (SPAseq UC5) ------------------------------------------------------------------------


def prepare_traffic(folder: Path, events: int, kb_triples: int = 0) -> Data:
    """``events`` observations of UC5's three road segments (the ``aarhus-traffic``
    mapping, properties looked up in CityBench's sensor repository), the three segments'
    two months merged in time order (48,915 real rows), repeated past them, copy k
    on the same days k years later (August and September: no change of summer time to
    disorder the local times), ids suffixed by the copy; KB: ``examples/uc5-traffic``'s
    segment metadata."""
    kb = EXAMPLES / "uc5-traffic" / "data" / "aarhus-segments.ttl"
    graph = "http://example.org/kb/aarhus-segments"
    return _traffic(folder, events, SEGMENTS, "aarhus-uc5-by-time", kb, graph)


def prepare_citybench_q1(folder: Path, events: int, kb_triples: int = 0) -> Data:
    """``events`` observations of CityBench Q1's two road segments (the two segments' two
    months merged in time order, 32,579 real rows, repeated past them), replayed
    :data:`Q1_SPEEDUP` times faster than real time (CityBench replays its streams faster
    than real time too); KB: the part of CityBench's sensor
    repository about the two segments' sensors (what each observes and each property's
    type: all Q1 reads of it), under the graph IRI Q1 names."""
    kb = folder / "citybench-q1-repository.ttl"
    if not kb.exists():
        _write_repository_part(kb, Q1_SEGMENTS)
    name = f"aarhus-citybench-q1-by-time-x{Q1_SPEEDUP}"
    return _traffic(folder, events, Q1_SEGMENTS, name, kb, REPOSITORY, Q1_SPEEDUP)


def _traffic(
    folder: Path,
    events: int,
    segments: tuple[str, ...],
    name: str,
    kb: Path,
    graph: str,
    speedup: int = 1,
) -> Data:
    """``events`` rows of ``segments`` in time order, replicated and replayed ``speedup``
    times faster than real time (:func:`_traffic_lines`), mapped by ``aarhus-traffic``:
    the :class:`Data` of ``name``."""
    from rsep.rdf.mapping import load_mapping

    rows = _segment_rows(folder, segments)
    stem = f"{name}_replicated_{SYNTHETIC}_{events}"
    csv = folder / f"{stem}.stream"
    if not csv.exists():
        write_lines(csv, _traffic_lines(rows, events, speedup))
    mapper = load_mapping("aarhus-traffic").bind({"property": _need(SENSORS)})
    return _data(csv, folder, stem, lambda: mapped_csv(csv, [mapper]), kb, graph)


def _write_repository_part(target: Path, segments: tuple[str, ...]) -> None:
    """What the sensor repository says the sensors of ``segments`` observe, and each
    property's type, as N-Triples (Turtle) in ``target``."""
    from pyoxigraph import RdfFormat, Store

    sensors = " ".join(
        f"<http://www.insight-centre.org/dataset/SampleEventService#AarhusTrafficData{s}>"
        for s in segments
    )
    store = Store()
    with lzma.open(_need(SENSORS), "rb") as handle:
        store.bulk_load(handle.read(), format=RdfFormat.N3)
    found = store.query(
        "PREFIX ssn: <http://purl.oclc.org/NET/ssnx/ssn#> "
        "CONSTRUCT { ?sensor ssn:observes ?p . ?p a ?type } "
        f"WHERE {{ VALUES ?sensor {{ {sensors} }} ?sensor ssn:observes ?p . ?p a ?type }}"
    )
    lines = sorted(f"{triple} .\n" for triple in found)  # type: ignore[union-attr]
    tmp = target.with_suffix(".tmp")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text("".join(lines), encoding="utf-8")
    tmp.rename(target)


def _segment_rows(
    folder: Path, segments: tuple[str, ...] = SEGMENTS
) -> tuple[str, list[list[str]]]:
    """The header and the rows of ``segments``, in time order (extracted from the
    449-segment archive once, into ``folder``; a segment's file is not in time order
    throughout, so the rows are sorted, stably, not merged)."""
    extracted = folder / f"aarhus-segments-{'-'.join(segments)}-by-time.csv"
    if not extracted.exists():
        wanted = {f"AarhusTrafficData{s}.stream" for s in segments}
        parts: list[list[str]] = []
        header = ""
        with tarfile.open(_need(TRAFFIC), "r:xz") as archive:
            for member in archive:
                if Path(member.name).name not in wanted:
                    continue
                handle = archive.extractfile(member)
                if handle is None:
                    continue
                header, *body = handle.read().decode("utf-8").splitlines()
                parts.append([line for line in body if line.strip()])
        if len(parts) != len(segments):
            raise UserError(f"{TRAFFIC}: segments {', '.join(segments)} are not all there")
        column = header.split(",").index("TIMESTAMP")
        merged = sorted(
            (line for part in parts for line in part), key=lambda line: line.split(",")[column]
        )
        tmp = extracted.with_suffix(".tmp")
        tmp.write_text("\n".join([header, *merged]) + "\n", encoding="utf-8")
        tmp.rename(extracted)
    header, *lines = extracted.read_text(encoding="utf-8").splitlines()
    return header, list(csvlib.reader(lines))


def _traffic_lines(
    segments: tuple[str, list[list[str]]], events: int, speedup: int = 1
) -> Iterator[str]:
    """The first ``events`` rows, replicated: at ``speedup`` 1, copy k on the same days k
    years later; else each row at the first row's time plus its offset divided by
    ``speedup`` (as a replay ``speedup`` times faster than real time stamps it), copy k
    right after copy k - 1 (ids suffixed by the copy)."""
    header, rows = segments
    columns = header.split(",")
    when, ident = columns.index("TIMESTAMP"), columns.index("_id")
    first = datetime.fromisoformat(rows[0][when])
    span = (datetime.fromisoformat(rows[-1][when]) - first) / speedup + timedelta(seconds=1)
    yield header + "\n"
    for i in range(events):
        copy, k = divmod(i, len(rows))
        row = list(rows[k])
        moved = datetime.fromisoformat(row[when])
        if speedup != 1:
            row[when] = (first + (moved - first) / speedup + copy * span).isoformat()
        elif copy:
            row[when] = moved.replace(year=moved.year + copy).isoformat()
        if copy:
            row[ident] = f"{row[ident]}r{copy}"
        yield ",".join(row) + "\n"


# The catalog ---------------------------------------------------------------------------------

_CATALOG = (
    Workload(
        "stock-vshape",
        "SPAseq UC4 V shape, 3-7 steps, strict (,) or skip-till-next (;), NASDAQ bars",
        vshape_query,
        prepare,
        15_085,
        ("rsep", "rsep-live", "read", "spark", "oracle", "naive", "flink", "vectorised"),
        VShape(),
        baseline=True,
    ),
    Workload(
        "stock-vshape-any",
        "the V shape under skip-till-any (:) within 10 minutes, NASDAQ bars",
        vshape_query,
        prepare,
        15_085,
        (*ENGINE_SYSTEMS, "naive"),
        VShape(600_000, 3, "any"),
        baseline=True,
    ),
    Workload(
        "stock-head-shoulders",
        "SPAseq UC4 head and shoulders, 7 steps (;), NASDAQ bars",
        example("uc4-stock/head-and-shoulders.spaseq"),
        prepare,
        15_085,
    ),
    Workload(
        "card-big-after-small",
        "SPAseq UC3 credit card, big after small (,), card10k",
        example("uc3-credit-card/big-after-small.spaseq"),
        prepare_cards,
        15_000,
    ),
    Workload(
        "card-kleene",
        "a Kleene+ pattern, big, one or more, big (A, B+, C), card10k",
        _fixed(KLEENE_QUERY),
        prepare_cards,
        15_000,
    ),
    Workload(
        "smart-grid",
        "SPAseq UC1 smart grid, three streams (A; B+, C), Smart* HomeC",
        example("uc1-smart-grid/smart-grid.spaseq"),
        prepare_homec,
        8_514,
    ),
    Workload(
        "traffic-congestion",
        "SPAseq UC5 traffic, conjunction (A; (B & C)), Aarhus, three segments",
        example("uc5-traffic/congestion-propagation.spaseq"),
        prepare_traffic,
        15_000,
    ),
    Workload(
        "citybench-q1",
        "CityBench Q1 (RSP-QL), two segments' congestion in 3 s windows, Aarhus",
        example("citybench/Q1.rspql"),
        prepare_citybench_q1,
        15_000,
        ("rsep", "rsep-live", "read", "spark", "oracle"),
        dialect="rspql",
    ),
)
WORKLOADS: dict[str, Workload] = {w.name: w for w in _CATALOG}
"""The workloads by name."""


def workload(name: str) -> Workload:
    """The workload named ``name``; an unknown name is a user error listing them."""
    try:
        return WORKLOADS[name]
    except KeyError:
        raise UserError(f"unknown workload {name!r}: {', '.join(WORKLOADS)}") from None

"""CityBench Q1-Q12 (Ali et al., ISWC 2015) in RSP-QL over one hour of the Aarhus data
(``examples/citybench``): each query whose streams exist runs through ``rsep run`` with
the oracle and with the incremental window engine, the two agree, the answer count is the
README's, and one answer per query is the one read off the raw data (README, "Answers").
Q10 needs the pollution streams, absent from ``../shared/data``: it is only compiled."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from test_spaseq_use_cases import convert, run_both, value

from rsep.cli import main as cli

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "citybench"
QUERIES = [f"Q{n}" for n in range(1, 13)]
SES = "http://www.insight-centre.org/dataset/SampleEventService#"
REPOSITORY = "http://localhost:12345/WebGlCity/RDF/SensorRepository.rdf"
CULTURAL = "http://localhost:12346/WebGlCity/RDF/AarhusCulturalEvents.rdf"
LIBRARY = "http://localhost:12346/WebGlCity/RDF/AarhusLibraryEvents.rdf"
T0800 = 1406872800000  # 2014-08-01T08:00:00 in Aarhus (UTC+2), in ms
Answer = dict[str, object]


@pytest.mark.parametrize("name", QUERIES)
def test_query_compiles(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Every query of the example, Q10 among them, is read as RSP-QL and compiled to a
    plan whose windows are on the CityBench streams the README names."""
    assert cli.main(["explain", str(EXAMPLE / f"{name}.rspql")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dialect rspql (RSP-QL)")
    assert f"window        <http://www.insight-centre.org/citybench/w1> on <{SES}" in out


def test_q10_names_the_missing_pollution_streams(capsys: pytest.CaptureFixture[str]) -> None:
    """Q10 reads two pollution streams, the data ``../shared/data`` lacks (README)."""
    assert cli.main(["explain", str(EXAMPLE / "Q10.rspql")]) == 0
    out = capsys.readouterr().out
    for sensor in ("AarhusPollutionData201399", "AarhusPollutionData184892"):
        assert f"stream        <{SES}{sensor}>" in out


@pytest.fixture(scope="module")
def citybench(
    shared_data: Path, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """The slice (``examples/citybench/slice.py``) converted to the four event streams,
    and the background graphs: name to path."""
    spec = importlib.util.spec_from_file_location("citybench_slice", EXAMPLE / "slice.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path_factory.mktemp("citybench")
    module.write_slice(shared_data, out)
    repository = out / "kb" / "SensorRepository-slice.nt"
    lookup = f"property={repository}"
    return {
        "traffic": str(
            convert("aarhus-traffic", EXAMPLE / "data" / "traffic", out / "t.nq", lookup)
        ),
        "weather": str(convert("aarhus-weather", out / "weather", out / "w.nq", lookup)),
        "parking": str(convert("aarhus-parking", out / "parking", out / "p.nq", lookup)),
        "user": str(convert("aarhus-userlocation", out / "userlocation", out / "u.nq")),
        REPOSITORY: str(repository),
        CULTURAL: str(out / "kb" / "AarhusCulturalEvents.n3"),
        LIBRARY: str(out / "kb" / "AarhusLibraryEvents.n3"),
    }


def has(time: int, **bindings: str) -> Callable[[list[Answer]], bool]:
    """Whether an answer at ``time`` has these bindings (literals by lexical form)."""

    def found(answers: list[Answer]) -> bool:
        return any(
            a["time"] == time and all(value(a, k) == v for k, v in bindings.items())
            for a in answers
        )

    return found


def observation(sensor: str, row: str, kind: str) -> str:
    """The IRI the aarhus-traffic mapping gives an observation of a report row."""
    return f"<{SES}Observation-{sensor}-{row}-{kind}>"


PARKING_K = f"<{SES}Observation-Parking-KALKVAERKSVEJ-21750-L8>"
PARKING_S = f"<{SES}Observation-Parking-SKOLEBAKKEN-21745-L3>"
CULTURAL_EVENT = (
    "<http://iot.ee.surrey.ac.uk/citypulse/datasets/aarhusculturalevents/"
    "culturalEvents_aarhus#observations_point_h8e6e512ld6nd9ni3lj40rq05c>"
)
# query: (streams, graphs, answer count, one answer checked by reading the raw data)
CASES: dict[str, tuple[tuple[str, ...], tuple[str, ...], int, Callable[[list[Answer]], bool]]] = {
    # 08:00 reports: 182955 counts 11 vehicles, 158505 one; seen at 08:00:01..03.
    "Q1": (
        ("traffic",),
        (REPOSITORY,),
        36,
        has(
            T0800 + 1000,
            obId1=observation("182955", "20746942", "CongestionLevel"),
            v1="11",
            v2="1",
        ),
    ),
    # weather at 08:20 (hum 73, tempm 20.0, wspdm 7.4) and 158505's avgSpeed 75 at 08:20.
    "Q2": (
        ("weather", "traffic"),
        (REPOSITORY,),
        1215,
        has(T0800 + 1_201_000, v1="73", v2="20.0", v3="7.4", v4="75"),
    ),
    # (11 + 1) / 2 at 08:00.
    "Q3": (("traffic",), (REPOSITORY,), 36, has(T0800 + 2000, v1="11", v2="1", avgCongest="6")),
    # the 7th location (56.0056, 10.0392), 08:01:06, is within 0.1 of Musikhuset's events.
    "Q4": (
        ("user",),
        (CULTURAL,),
        2970,
        has(
            T0800 + 67_000,
            obId2=f"<{SES}Observation-UserLocation-UserLocationService.csv-L8>",
            lat2="56.00563517572119",
            lat1="56.1519158",
            evtId=CULTURAL_EVENT,
        ),
    ),
    # 158505 starts at (56.2151, 10.1398), 0.0075 from the events' node.
    "Q5": (
        ("traffic",),
        (REPOSITORY, CULTURAL),
        3564,
        has(
            T0800 + 1000,
            obId2=observation("158505", "20746671", "CongestionLevel"),
            lat2="56.21508593264829",
            evtId=CULTURAL_EVENT,
        ),
    ),
    # KALKVAERKSVEJ's update of 08:01:49.47 with the locations of 08:01:47..49.
    "Q6": (
        ("parking", "user"),
        (REPOSITORY,),
        9,
        has(
            T0800 + 110_000,
            obId1=PARKING_K,
            obId2=f"<{SES}Observation-UserLocation-UserLocationService.csv-L50>",
            lat1="56.14952",
            lon1="10.21149",
        ),
    ),
    # 210 - 13 = 197 free at KALKVAERKSVEJ, 512 - 512 = 0 at SKOLEBAKKEN (full).
    "Q7": (
        ("parking",),
        (REPOSITORY,),
        6,
        has(T0800 + 110_000, obId1=PARKING_K, obId2=PARKING_S, v1="197", v2="0"),
    ),
    # 1,548 library events, each with the two garages' 08:01:49 update.
    "Q8": (
        ("parking",),
        (REPOSITORY, LIBRARY),
        9288,
        has(T0800 + 111_000, obId1=PARKING_K, v1="197", v2="0"),
    ),
    # 99 cultural events, each with the two garages' updates; 08:31:49: 194 and 0 free.
    "Q9": (
        ("parking",),
        (REPOSITORY, CULTURAL),
        594,
        has(T0800 + 1_910_000, v1="194", v2="0"),
    ),
    # 08:50 weather: wspdm 11.1.
    "Q11": (
        ("weather",),
        (),
        27,
        has(
            T0800 + 3_003_000,
            obId1=f"<{SES}Observation-Weather-AarhusWeatherData0.stream-L4-WindSpeed>",
            v1="11.1",
        ),
    ),
    # one report of 186979 per 5 minutes: a 3 s window never holds more than 3.
    "Q12": (("traffic",), (REPOSITORY,), 0, lambda answers: answers == []),
}


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES, key=lambda q: int(q[1:])))
def test_query_on_aarhus_slice(
    name: str, citybench: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The query's answers on the slice: the oracle's equal the engine's (``run_both``),
    as many as the README says, and the hand-checked one among them."""
    streams, graphs, count, check = CASES[name]
    args = [str(EXAMPLE / f"{name}.rspql"), "--quiet"]
    for stream in streams:
        args += ["--stream", citybench[stream]]
    for graph in graphs:
        args += ["--graph", f"{graph}={citybench[graph]}"]
    answers = run_both(args, capsys)
    assert len(answers) == count, json.dumps(answers[:3])
    assert check(answers)


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("name", ["Q1", "Q3", "Q5", "Q11", "Q12"])
def test_query_over_time_ranges_on_spark(
    name: str, citybench: dict[str, str], spark: SparkSession
) -> None:
    """The query on Spark replay over three time ranges of the slice (each task reading
    its range and the windows' extent before it): the window engine's answers, in order."""
    import rsep
    from rsep.api.inputs import engine_graphs, read_graphs
    from rsep.spark.job import StreamInput
    from rsep.spark.replay import replay

    streams, graphs, count, _ = CASES[name]
    query = rsep.Query.read(EXAMPLE / f"{name}.rspql")
    files = [citybench[stream] for stream in streams]
    kb = {iri: citybench[iri] for iri in graphs}
    expected = [r.to_json() for r in query.run(files, kb, engine="local")]
    job = replay(
        spark,
        query.plan,
        [StreamInput(Path(f)) for f in files],
        engine_graphs(read_graphs(kb)),
        partitions=3,
    )
    assert job.scheme.ranges is not None and job.scheme.ranges.count == 3
    found = [r.to_json() for r in job.results]
    assert len(expected) == count
    assert sorted(map(json.dumps, found)) == sorted(map(json.dumps, expected))
    assert [r["time"] for r in found] == sorted(r["time"] for r in found)

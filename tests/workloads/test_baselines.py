"""rsep.workloads.baselines, rsep.workloads.flink and rsep.workloads.vectorised: on a small
hand-made input, the naive baseline, the oracle, the rsep engine, the V shape written by
hand over the event store's columns and (when its interpreter is there) Flink's
MATCH_RECOGNIZE find the same V shapes, and the ones worked out by hand."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from rsep.errors import UserError
from rsep.lang import get_dialect, parse_query
from rsep.workloads.baselines import VShape, vshape_query
from rsep.workloads.bench import Data, Point, measure, prepare_bars
from rsep.workloads.flink import flink_python, match_recognize

AAA = [  # (minute on 2008-02-01, US Eastern, close)
    ("0930", 100.0),
    ("0931", 99.0),
    ("0932", 100.5),  # V 100 -> 99 -> 100.5
    ("0933", 100.4),
    ("0934", 100.0),
    ("0935", 100.3),  # not above 100.4: strict run dies, skip-till-next waits
    ("0936", 101.0),
    ("0958", 100.0),
    ("0959", 99.0),
    ("1000", 100.2),  # V ending on the window's closing instant 10:00 (Def. 16, closed)
    ("1001", 99.5),
    ("1002", 100.5),  # V 100.2 -> 99.5 -> 100.5 in [10:00, 11:00]
    ("1059", 101.0),
    ("1100", 100.0),
    ("1101", 102.0),  # 10:59 to 11:01 crosses 11:00: no window holds it
]
BBB = [("0930", 50.0), ("0931", 49.0), ("0932", 50.5)]


def write_bars(folder: Path) -> Path:
    """The two tickers' bars, interleaved by minute, in the NASDAQ format."""
    rows = [(m, "AAA", c) for m, c in AAA] + [(m, "BBB", c) for m, c in BBB]
    rows.sort()
    path = folder / "NASDAQ_handmade_synthetic.txt"
    path.write_text(
        "".join(f"{t},20080201{m},{c},{c},{c},{c},1000\n" for m, t, c in rows), encoding="utf-8"
    )
    return path


def ms(minute: str) -> int:
    stamp = datetime.strptime("20080201" + minute, "%Y%m%d%H%M")
    return int(stamp.replace(tzinfo=ZoneInfo("America/New_York")).timestamp() * 1000)


@pytest.fixture(scope="module")
def bars(tmp_path_factory: pytest.TempPathFactory) -> Data:
    folder = tmp_path_factory.mktemp("bars")
    return prepare_bars(write_bars(folder), folder)


def found(system: str, data: Data, shape: VShape) -> set[tuple[str, tuple[float, ...], int]]:
    m = measure(Point("stock-vshape", system, data.events, shape), data)
    assert m.results == len(m.answers)
    return {(a.company.rsplit("#", 1)[1], a.prices, a.time) for a in m.answers}


def test_the_v_shapes_worked_out_by_hand(bars: Data) -> None:
    """Strict contiguity, 3 steps, 60-minute windows: the four V shapes of the comments."""
    expected = {
        ("AAA", (100.0, 99.0, 100.5), ms("0932")),
        ("AAA", (100.0, 99.0, 100.2), ms("1000")),
        ("AAA", (100.2, 99.5, 100.5), ms("1002")),
        ("BBB", (50.0, 49.0, 50.5), ms("0932")),
    }
    assert found("naive", bars, VShape()) == expected
    assert found("rsep", bars, VShape()) == expected
    assert found("vectorised", bars, VShape()) == expected


def test_skip_till_next_waits_for_the_next_fitting_bar(bars: Data) -> None:
    """With ';' the run from 09:33 (100.4) takes 100.0 at 09:34 and waits past 100.3 for
    101.0 at 09:36; the run from 09:32 (100.5) takes the same bars."""
    answers = found("naive", bars, VShape(strategy="next"))
    assert ("AAA", (100.4, 100.0, 101.0), ms("0936")) in answers
    assert ("AAA", (100.5, 100.0, 101.0), ms("0936")) in answers
    assert not any(t == ms("1101") for _, _, t in answers)


@pytest.mark.parametrize("steps", [3, 4])
@pytest.mark.parametrize("strategy", ["strict", "next"])
def test_naive_oracle_and_engine_agree(bars: Data, steps: int, strategy: str) -> None:
    """Same answers from the four Python systems, for both selection strategies."""
    shape = VShape(3_600_000, steps, strategy)
    naive = found("naive", bars, shape)
    assert naive == found("oracle", bars, shape)
    assert naive == found("rsep", bars, shape)
    assert naive == found("vectorised", bars, shape)


def test_a_shorter_window_cuts_matches(bars: Data) -> None:
    """With 2-minute windows [k·2 min, (k+1)·2 min] a 3-bar V must start on an even minute
    and end on the next even one: 09:30-09:32 stays, 10:00-10:02 stays, 09:58-10:00 stays."""
    answers = found("naive", bars, VShape(window_ms=120_000))
    assert {t for _, _, t in answers} == {ms("0932"), ms("1000"), ms("1002")}
    assert answers == found("rsep", bars, VShape(window_ms=120_000))
    assert answers == found("vectorised", bars, VShape(window_ms=120_000))


def test_skip_till_any_branches_where_skip_till_next_takes_the_first(bars: Data) -> None:
    """AAA 100 at 09:30, 99 at 09:31: skip-till-next ends the V at the first later bar above
    100 (100.5 at 09:32), skip-till-any at each of them (100.5, 100.4, 100.3, 101); the
    naive baseline, the oracle and the engine agree."""
    fall = [a for a in found("naive", bars, VShape(strategy="any")) if a[1][:2] == (100.0, 99.0)]
    ends = {(a[1][2], a[2]) for a in fall if a[0] == "AAA" and a[2] < ms("0958")}
    assert ends == {
        (100.5, ms("0932")),
        (100.4, ms("0933")),
        (100.3, ms("0935")),
        (101.0, ms("0936")),
    }
    following = found("naive", bars, VShape(strategy="next"))
    assert ("AAA", (100.0, 99.0, 101.0), ms("0936")) not in following
    for system in ("rsep", "oracle"):
        assert found(system, bars, VShape(strategy="any")) == found(
            "naive", bars, VShape(strategy="any")
        )


def test_the_query_is_the_example_pattern() -> None:
    """The generated query parses as SPAseq and has the example's sequence and filters."""
    text = vshape_query(VShape())
    assert "SEQ (A, B, C)" in text and "FILTER (?p2 < ?p1 * 0.998)" in text
    parse_query(text, get_dialect("spaseq"))
    assert "SEQ (A; B; C; D)" in vshape_query(VShape(steps=4, strategy="next"))
    assert "SEQ (A: B: C)" in vshape_query(VShape(strategy="any"))


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(UserError, match="at least 3 steps"):
        VShape(steps=2)
    with pytest.raises(UserError, match="unknown selection strategy"):
        VShape(strategy="sometimes")
    with pytest.raises(UserError, match="whole number of minutes"):
        VShape(window_ms=90_000)


def test_match_recognize_expresses_the_strategies() -> None:
    """Strict: consecutive rows; skip-till-next: a filler before each step that is not it."""
    strict = match_recognize(3, "strict", 3_600_000)
    assert "PATTERN (V1 V2 V3)" in strict
    assert "V3.ms <= V1.ms - MOD(V1.ms, 3600000) + 3600000" in strict
    following = match_recognize(3, "next", 3_600_000)
    assert "PATTERN (V1 Z2* V2 Z3* V3)" in following
    assert "Z2 AS NOT (Z2.c < V1.c * 0.998)" in following


@pytest.mark.slow
@pytest.mark.skipif(
    flink_python() is None,
    reason="PyFlink lives in its own venv: set RSEP_FLINK_PYTHON to its interpreter",
)
@pytest.mark.parametrize("strategy", ["strict", "next"])
def test_flink_finds_the_same_v_shapes(bars: Data, strategy: str) -> None:
    """Flink's MATCH_RECOGNIZE (its own interpreter, a local mini cluster) finds the naive
    baseline's answers, names and sectors included."""
    shape = VShape(strategy=strategy)
    flink = measure(Point("stock-vshape", "flink", bars.events, shape), bars)
    assert flink.note.startswith("job only"), flink.note
    naive = measure(Point("stock-vshape", "naive", bars.events, shape), bars)
    assert flink.answers == naive.answers

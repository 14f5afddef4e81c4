"""rsep.workloads.vectorised: the V shape written by hand over the event store's columns gives
rsep's answers on synthetic bars with planted V shapes (3 to 7 steps, strict and
skip-till-next, short and long windows), counts the store's events, and refuses what it was
not written for (skip-till-any, events that are not one price and one volume, prices that
are not doubles) instead of answering wrongly."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsep.errors import UserError
from rsep.rdf.mapping import MappedEvent
from rsep.workloads.baselines import PRED, VShape
from rsep.workloads.bench import Data, Point, measure, prepare_bars, read_kb, write_events
from rsep.workloads.stock import planted_vshapes, write_vshape_bars
from rsep.workloads.vectorised import STREAM, vectorised_vshape

EVENTS = 3_000


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Data:
    folder = tmp_path_factory.mktemp("planted")
    return prepare_bars(write_vshape_bars(folder, EVENTS), folder)


@pytest.mark.parametrize("steps", [3, 4, 5, 7])
@pytest.mark.parametrize("strategy", ["strict", "next"])
@pytest.mark.parametrize("minutes", [60, 7])
def test_the_answers_are_rseps(planted: Data, steps: int, strategy: str, minutes: int) -> None:
    shape = VShape(minutes * 60_000, steps, strategy)
    engine = measure(Point("stock-vshape", "rsep", EVENTS, shape, source="parquet"), planted)
    by_hand = measure(Point("stock-vshape", "vectorised", EVENTS, shape), planted)
    assert by_hand.answers == engine.answers
    assert by_hand.events == engine.events == EVENTS
    if steps == 3 or (strategy == "next" and minutes == 60):
        assert engine.results > 0


def test_the_planted_v_shapes_are_found(planted: Data) -> None:
    """Strict, 3 steps, 60 minutes: at least the V shapes the generator planted."""
    answers, events = vectorised_vshape(planted.store, read_kb(planted.kb), VShape())
    assert events == EVENTS
    assert len(set(answers)) >= planted_vshapes(EVENTS) > 0


def test_skip_till_any_is_refused(planted: Data) -> None:
    with pytest.raises(UserError, match="strict"):
        vectorised_vshape(planted.store, read_kb(planted.kb), VShape(strategy="any"))


def _store(folder: Path, triples: list[list[tuple[str, str, str]]]) -> Path:
    company = "<http://example/company#AAA>"
    events = [
        MappedEvent(
            STREAM,
            f"<{STREAM}/{k}>",
            60_000 * k,
            60_000 * k,
            [(company, f"<{PRED}{p}>", o) for _, p, o in event],
        )
        for k, event in enumerate(triples)
    ]
    _, store, _, _ = write_events(lambda: iter(events), folder, "bad")
    return store


DOUBLE = "^^<http://www.w3.org/2001/XMLSchema#double>"


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ([("", "price", f'"1"{DOUBLE}')], "one price and one volume"),
        ([("", "price", f'"1"{DOUBLE}'), ("", "price", f'"2"{DOUBLE}')], "one price"),
        ([("", "price", '"1"'), ("", "volume", f'"1"{DOUBLE}')], "xsd:double"),
    ],
)
def test_events_it_was_not_written_for_are_refused(
    tmp_path: Path, event: list[tuple[str, str, str]], reason: str
) -> None:
    good = [("", "price", f'"1"{DOUBLE}'), ("", "volume", f'"5"{DOUBLE}')]
    store = _store(tmp_path, [good, event, good])
    with pytest.raises(UserError, match=reason):
        vectorised_vshape(store, [], VShape())

"""rsep.workloads.creditcard: synthetic transactions in card10k's form (two N-Triples per
event, a SPAseq stream description), with its amounts and burst lengths; deterministic,
streamed, and marked synthetic."""

from __future__ import annotations

import itertools
import re
import statistics
from pathlib import Path

from pyoxigraph import Literal

from rsep.rdf.formats import read_events
from rsep.workloads import SYNTHETIC, card_transactions, write_card_stream
from rsep.workloads.creditcard import BURST_COUNTS, CARD_IDS, CARD_NAMESPACE

LINE = re.compile(
    r'^<http://example/synthetic/card#(\d+)> <http://example/(id|amount)> "([^"]*)"\^\^'
    r"<http://www.w3.org/2001/XMLSchema#(string|double)> \.$"
)


def events(n: int, seed: int) -> list[tuple[int, float]]:
    lines = list(card_transactions(n, seed))
    assert lines[0].startswith("#") and SYNTHETIC in lines[0]
    out = []
    for id_line, amount_line in zip(lines[1::2], lines[2::2], strict=True):
        card, kind, text, datatype = LINE.match(id_line.rstrip("\n")).groups()  # type: ignore[union-attr]
        assert (kind, datatype, text) == ("id", "string", card)
        card2, kind2, amount, datatype2 = LINE.match(amount_line.rstrip("\n")).groups()  # type: ignore[union-attr]
        assert (card2, kind2, datatype2) == (card, "amount", "double")
        out.append((int(card), float(amount)))
    return out


def test_transactions_copy_the_sample() -> None:
    """Cards 2-213, amounts 0-499.99 in cents with a uniform law's mean and deviation,
    bursts of one card of 1 to 9 transactions with the sample's mean length (2.84)."""
    found = events(30_000, seed=2)
    assert len(found) == 30_000
    assert {card for card, _ in found} <= set(CARD_IDS)
    amounts = [amount for _, amount in found]
    assert all(0 <= a <= 499.99 and abs(round(a * 100) - a * 100) < 1e-6 for a in amounts)
    assert abs(statistics.mean(amounts) - 250) < 5 and abs(statistics.stdev(amounts) - 144.3) < 3
    bursts = [len(list(group)) for _, group in itertools.groupby(card for card, _ in found)]
    assert max(bursts) <= len(BURST_COUNTS)
    sample_mean = sum(k * n for k, n in enumerate(BURST_COUNTS, 1)) / sum(BURST_COUNTS)
    assert abs(statistics.mean(bursts[:-1]) - sample_mean) < 0.1


def test_transactions_are_deterministic_and_lazy() -> None:
    assert list(card_transactions(300, 4)) == list(card_transactions(300, 4))
    assert list(card_transactions(300, 4)) != list(card_transactions(300, 5))
    head = list(itertools.islice(card_transactions(10_000_000, 4), 601))
    assert head == list(card_transactions(300, 4))


def test_card_stream_is_read_as_spaseq_events(tmp_path: Path) -> None:
    """The description and data files read back as SPAseq events (rsep.rdf.formats): one
    event of two triples per transaction, one per second, on <http://example.org/main>,
    every subject in the synthetic namespace."""
    description = write_card_stream(tmp_path, 50, seed=1)
    assert SYNTHETIC in description.name and description.suffix == ".txt"
    read = list(read_events(description))
    assert len(read) == 50
    assert [e.t_start for e in read] == [k * 1000 for k in range(50)]
    assert {e.stream for e in read} == {"http://example.org/main"}
    assert all(len(e.graph) == 2 for e in read)
    subjects = {str(t.subject) for e in read for t in e.graph}
    assert all(s.startswith(f"<{CARD_NAMESPACE}") for s in subjects)
    amounts = [
        float(t.object.value)
        for e in read
        for t in e.graph
        if "amount" in str(t.predicate) and isinstance(t.object, Literal)
    ]
    assert amounts == [amount for _, amount in events(50, 1)]

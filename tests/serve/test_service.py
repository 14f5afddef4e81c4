"""The service without HTTP (rsep.serve.service): what the routes call, checked directly."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "semantics"))

from test_driver import EX, SPASEQ

from rsep.serve.service import Service
from rsep.serve.settings import Settings

DATA = Path(__file__).resolve().parents[1] / "semantics" / "data"
NEARBY = SPASEQ.replace(f" GRAPH <{EX}G_shops> {{ ?owner :owns ?shop }}", "")
"""Two people near one shop, one after the other: over RSP-QL Example 3's S_nearby, Diana at
5, Carl at 7 and Eve at 12 (tests/api/test_driver.py's SPAseq query without its graph)."""


def test_recent_answers_by_sequence_number() -> None:
    """The recent answers (``--recent-answers`` of them, as JSON lines) are read back by
    sequence number: the latest two of three kept, numbered 2 and 3, after any ``since``
    and at most ``limit``; a ``since`` at or past the last gives none."""
    service = Service(Settings(recent_answers=2, checkpoint_every=0))
    service.add_stream({"name": "near", "iri": EX + "S_nearby"})
    service.add_query({"name": "q", "query": NEARBY})
    service.push("near", (DATA / "s_nearby.tnt").read_bytes(), "tnt")
    service.advance(20)
    kept = service.answers_since("q", 0)
    assert [(a["seq"], a["time"], a["bindings"]["who"]) for a in kept] == [
        (2, 7, f"<{EX}carl>"),
        (3, 12, f"<{EX}eve>"),
    ]
    assert service.answers_since("q", 2) == kept[1:]
    assert service.answers_since("q", 0, limit=1) == kept[:1]
    assert service.answers_since("q", 3) == [] and service.answers_since("q", 9) == []
    assert service.query("q").counters.answers == 3
    service.close()

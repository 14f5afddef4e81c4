"""The service without HTTP (rsep.serve.service): what the routes call, checked directly."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "semantics"))

import pytest
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


def test_a_checkpoint_keeps_the_shared_dictionary_once(tmp_path: Path) -> None:
    """Two queries of the one term dictionary checkpointed: the dictionary is written once
    (``terms.pickle``), neither query's file holds a copy of it, and a service started
    again on the state gives both the one dictionary it read, each query answering on as
    one never stopped (Diana at 5, Carl at 7 before; Eve at 12 after)."""
    import pickletools

    from rsep.engine.terms import TermDictionary

    state = tmp_path / "state"
    lines = (DATA / "s_nearby.tnt").read_bytes().splitlines(keepends=True)
    before = [line for line in lines if b" 12" not in line]
    assert len(before) < len(lines)
    first = _two_nearby_queries(state, before)
    assert len(pickle.loads((state / "terms.pickle").read_bytes())) == len(first.terms)
    for name in ("q", "r"):
        data = (state / "queries" / f"{name}.pickle").read_bytes()
        names = {str(arg) for op, arg, _ in pickletools.genops(data) if isinstance(arg, str)}
        assert TermDictionary.__name__ not in names
    second = Service(Settings(state=state, checkpoint_every=0))
    assert all(second.query(n).running.dictionary is second.terms for n in ("q", "r"))
    second.push("near", b"".join(line for line in lines if line not in before), "tnt")
    second.advance(20)
    for name in ("q", "r"):
        kept = second.answers_since(name, 0)
        assert [(a["seq"], a["bindings"]["who"]) for a in kept] == [
            (1, f"<{EX}diana>"),
            (2, f"<{EX}carl>"),
            (3, f"<{EX}eve>"),
        ]
    second.close()


def _two_nearby_queries(state: Path, lines: list[bytes]) -> Service:
    """A service on ``state`` with the queries q and r of NEARBY, fed ``lines``, closed."""
    service = Service(Settings(state=state, checkpoint_every=0))
    service.add_stream({"name": "near", "iri": EX + "S_nearby"})
    for name in ("q", "r"):
        service.add_query({"name": name, "query": NEARBY})
    service.push("near", b"".join(lines), "tnt")
    service.close()
    return service


def test_a_state_of_one_dictionary_copy_per_query_is_read(tmp_path: Path) -> None:
    """Query files written when each held its own copy of the dictionary are read: all of
    a state's (no ``terms.pickle``), or one beside ``terms.pickle`` (a checkpoint cut
    short): the queries take the largest dictionary as the one they share and answer on; a
    query's file that refers to a ``terms.pickle`` gone is refused, named."""
    import shutil

    from rsep.errors import UserError

    state = tmp_path / "state"
    lines = (DATA / "s_nearby.tnt").read_bytes().splitlines(keepends=True)
    before = [line for line in lines if b" 12" not in line]
    first = _two_nearby_queries(state, before)
    terms = (state / "terms.pickle").read_bytes()
    (state / "terms.pickle").unlink()
    with pytest.raises(UserError, match=r"q\.pickle: it refers to the shared term dictionary"):
        Service(Settings(state=state, checkpoint_every=0))
    old = {}  # each query's file as the service wrote it then
    for name in ("q", "r"):
        query = first.query(name)
        kept = (query.running, query.seq, query.answers, query.backlog, query.counters)
        old[name] = pickle.dumps((*kept, query.state, query.error))
    for layout, names in (("old", ("q", "r")), ("mixed", ("q",))):
        folder = tmp_path / layout
        shutil.copytree(state, folder)
        if layout == "mixed":
            (folder / "terms.pickle").write_bytes(terms)
        for name in names:
            (folder / "queries" / f"{name}.pickle").write_bytes(old[name])
        second = Service(Settings(state=folder, checkpoint_every=0))
        assert all(second.query(n).running.dictionary is second.terms for n in ("q", "r"))
        second.push("near", b"".join(line for line in lines if line not in before), "tnt")
        second.advance(20)
        for name in ("q", "r"):
            assert [a["bindings"]["who"] for a in second.answers_since(name, 0)] == [
                f"<{EX}{who}>" for who in ("diana", "carl", "eve")
            ], (layout, name)
        second.close()

"""The file sink's write-ahead log (rsep.spark.sink.TextSink, module docstring) without
Spark: a micro-batch written again, a torn line left by a kill, a restart between the
write and the log, each leave every line once; standard output is at least once."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rsep.spark.sink import AT_LEAST_ONCE, EXACTLY_ONCE, TextSink


def opened(tmp_path: Path) -> TextSink:
    sink = TextSink(tmp_path / "out.jsonl")
    sink.open(tmp_path / "ck", "answers")
    return sink


def test_a_batch_written_again_is_written_once(tmp_path: Path) -> None:
    sink = opened(tmp_path)
    sink.write(["a", "b"], 0)
    sink.write(["c"], 1)
    sink.write(["c"], 1)  # Spark runs batch 1 again (killed before its commit)
    sink.write(["d"], 2)
    assert sink.lines() == ["a", "b", "c", "d"]
    assert sink.guarantee == EXACTLY_ONCE


def test_a_torn_line_is_cut_back_on_restart(tmp_path: Path) -> None:
    """Killed half-way through batch 1: the log says where it began; a new process cuts
    the file back there when it opens the sink, and batch 1 written again is whole."""
    sink = opened(tmp_path)
    sink.write(["a", "b"], 0)
    log = tmp_path / "ck" / "rsep-answers.json"
    begun = {"batch": 1, "before": (tmp_path / "out.jsonl").stat().st_size, "after": None}
    log.write_text(json.dumps(begun))  # the write-ahead entry of batch 1, then the kill
    with (tmp_path / "out.jsonl").open("a") as out:
        out.write('{"time": 5, "bind')  # a torn line
    again = opened(tmp_path)
    assert again.lines() == ["a", "b"]
    again.write(["c", "d"], 1)
    assert again.lines() == ["a", "b", "c", "d"]


def test_killed_after_the_write_before_the_commit(tmp_path: Path) -> None:
    """Batch 1 written and logged whole, then killed before Spark committed it: Spark runs
    it again after the restart, and the file holds it once."""
    sink = opened(tmp_path)
    sink.write(["a"], 0)
    sink.write(["b", "c"], 1)
    again = opened(tmp_path)
    again.write(["b", "c"], 1)
    again.write(["d"], 2)
    assert again.lines() == ["a", "b", "c", "d"]


def test_standard_output_is_at_least_once() -> None:
    printed = io.StringIO()
    sink = TextSink(stdout=printed)
    sink.write(["a"], 0)
    sink.write(["a"], 0)  # a replay cannot take printed lines back
    assert printed.getvalue() == "a\na\n"
    assert sink.guarantee == AT_LEAST_ONCE

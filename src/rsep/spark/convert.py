"""``rsep convert``: CSV files to RDF event streams, as a Spark job.

The driver lists the input files (extracting archives once into a work folder), Spark
spreads them over tasks, and each task maps its files row by row with the data set's
declarative mapping (:mod:`rsep.rdf.mapping`). The output is the columnar event store
(Parquet, one row per triple, partitioned by stream and day) or N-Quads/TriG text.

Bad records never crash a task with a stack trace: under ``--on-error=stop`` the task
fails with a marked message that the driver turns into an :class:`InputError` naming file,
line and reason; under ``skip`` the task emits them as rows of a reserved partition that
the driver moves into the dead-letter file, with the per-task counts, in one pass.
"""

from __future__ import annotations

import fnmatch
import json
import shutil
import sys
import tarfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsep.errors import BadRecords, InputError, OnError, UserError
from rsep.rdf.mapping import MappedEvent, RowError, RowMapper, open_text

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

ERROR_MARK = "RSEP_INPUT_ERROR:"
REJECTED = "_rejected"
STATS = "_stats"
STORE_COLUMNS = ("stream", "day", "event_id", "t_start", "t_end", "s", "p", "o")
_STORE_SCHEMA = (
    "stream string, day string, event_id string, t_start long, t_end long, "
    "s string, p string, o string"
)
_TEXT_SCHEMA = "kind string, value string"
_BATCH = 20_000
_ARCHIVES = (".tar.xz", ".tar.gz", ".tgz", ".tar", ".zip")


class OutputFormat:
    """Names of the output forms of ``rsep convert``."""

    PARQUET = "parquet"
    NQUADS = "nquads"
    TRIG = "trig"
    ALL = (PARQUET, NQUADS, TRIG)


@dataclass
class ConvertResult:
    """What a conversion did: counts, time span, rate and where the output went."""

    files: int = 0
    rows: int = 0
    events: int = 0
    triples: int = 0
    rejected: int = 0
    streams: set[str] = field(default_factory=set)
    t_min: int | None = None
    t_max: int | None = None
    seconds: float = 0.0
    output: Path | None = None
    dead_letter: Path | None = None

    @property
    def rows_per_second(self) -> float:
        """Input rows converted per second of wall-clock time."""
        return self.rows / self.seconds if self.seconds else 0.0

    @property
    def triples_per_second(self) -> float:
        """Triples written per second of wall-clock time."""
        return self.triples / self.seconds if self.seconds else 0.0

    def summary(self) -> str:
        """A few human-readable lines for the end of a run."""
        span = "-"
        if self.t_min is not None and self.t_max is not None:
            span = f"{_iso(self.t_min)} .. {_iso(self.t_max)}"
        lines = [
            f"files      {self.files:,}",
            f"rows       {self.rows:,}",
            f"events     {self.events:,} on {len(self.streams):,} stream(s)",
            f"triples    {self.triples:,}",
            f"rejected   {self.rejected:,}"
            + (
                f" (dead letters in {self.dead_letter})"
                if self.rejected and self.dead_letter
                else ""
            ),
            f"time span  {span}",
            f"elapsed    {self.seconds:.1f} s",
            f"rate       {self.rows_per_second:,.0f} rows/s, "
            f"{self.triples_per_second:,.0f} triples/s",
            f"output     {self.output}",
        ]
        return "\n".join(lines)


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------- inputs


def resolve_inputs(paths: list[Path], pattern: str, work_dir: Path) -> list[Path]:
    """The CSV files to convert: files as given, folders by ``pattern``, archives extracted.

    An archive (.tar.xz, .tar.gz, .zip) is extracted once into ``work_dir``; a later run
    reuses members whose size matches, so repeated benchmarks skip the decompression.
    """
    files: list[Path] = []
    for path in paths:
        if not path.exists():
            raise UserError(f"no such input: {path}")
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and matches(p.name, pattern))
            if not found:
                raise UserError(f"no file matching {pattern!r} in {path}")
            files.extend(found)
        elif path.name.endswith(_ARCHIVES):
            files.extend(_extract(path, pattern, work_dir))
        else:
            files.append(path)
    return files


def matches(name: str, pattern: str) -> bool:
    """Whether a file name matches a glob, also once a .gz or .xz suffix is removed."""
    bare = name.removesuffix(".gz").removesuffix(".xz")
    return fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(bare, pattern)


def _extract(archive: Path, pattern: str, work_dir: Path) -> list[Path]:
    target = work_dir / archive.name.split(".")[0]
    target.mkdir(parents=True, exist_ok=True)
    out: list[Path] = []
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                name = Path(info.filename).name
                if info.is_dir() or not matches(name, pattern):
                    continue
                dest = target / name
                if not (dest.exists() and dest.stat().st_size == info.file_size):
                    dest.write_bytes(zf.read(info))
                out.append(dest)
        return sorted(out)
    with tarfile.open(archive) as tf:
        members = [m for m in tf if m.isfile() and matches(Path(m.name).name, pattern)]
        todo = [m for m in members if not _same_size(target / Path(m.name).name, m.size)]
        tty = sys.stderr.isatty()
        for i, member in enumerate(todo, 1):
            if tty:
                print(f"\rextracting {archive.name}: {i}/{len(todo)}", end="", file=sys.stderr)
            handle = tf.extractfile(member)
            if handle is not None:
                (target / Path(member.name).name).write_bytes(handle.read())
        if todo:
            print(
                ("\n" if tty else "") + f"extracted {len(todo)} file(s) from {archive.name}",
                file=sys.stderr,
            )
        out = [target / Path(m.name).name for m in members]
    return sorted(out)


def _same_size(path: Path, size: int) -> bool:
    return path.exists() and path.stat().st_size == size


# --------------------------------------------------------------------------- the task


def map_file(mapper: RowMapper, path: str, display: str) -> Iterator[tuple[Any, ...]]:
    """Map one CSV file: yield ``("bad", line, reason, record)`` for each bad row, then
    ``("event", line, MappedEvent)`` for every good row in order of time (stable by line).

    Real CSV exports are not always in time order (the Aarhus files are not), while a
    stream must be; sorting one file's events is cheap and keeps conversion one pass.
    """
    events: list[tuple[int, int, MappedEvent]] = []
    seen: dict[str, int] = {}
    encoding = mapper.mapping.source.encoding
    with open_text(Path(path), encoding) as handle:
        for line, row in mapper.rows(handle, display):
            if isinstance(row, str):
                yield ("bad", line, row, "")
                continue
            try:
                event = mapper.map_row(row)
            except RowError as exc:
                yield ("bad", line, str(exc), _record(row))
                continue
            first = seen.setdefault(event.event_id, line)
            if first != line:
                reason = f"event {event.event_id} already defined at line {first}"
                yield ("bad", line, reason, _record(row))
                continue
            events.append((event.t_start, line, event))
    events.sort(key=lambda item: (item[0], item[1]))
    for _, line, event in events:
        yield ("event", line, event)


def _record(row: dict[str, str]) -> str:
    return json.dumps({k: v for k, v in row.items() if not k.startswith("__")}, ensure_ascii=False)


@dataclass
class TaskStats:
    """What one Spark task converted; the driver adds them up into a :class:`ConvertResult`."""

    files: int = 0
    rows: int = 0
    events: int = 0
    triples: int = 0
    rejected: int = 0
    t_min: int | None = None
    t_max: int | None = None
    streams: set[str] = field(default_factory=set)

    def count(self, event: MappedEvent) -> None:
        """Count one converted event."""
        self.events += 1
        self.triples += len(event.triples)
        self.streams.add(event.stream)
        t = event.t_start
        self.t_min = t if self.t_min is None else min(self.t_min, t)
        self.t_max = t if self.t_max is None else max(self.t_max, t)

    def to_json(self) -> str:
        """The stats as one JSON line (the streams sorted)."""
        return json.dumps({**self.__dict__, "streams": sorted(self.streams)})

    @classmethod
    def from_json(cls, text: str) -> TaskStats:
        """Read stats written by :meth:`to_json`."""
        data = json.loads(text)
        return cls(**{**data, "streams": set(data["streams"])})


def _task(
    mapper: RowMapper, fmt: str, on_error: OnError
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each Spark task runs over its batch of (path, display) rows."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        text = fmt != OutputFormat.PARQUET
        names = ("kind", "value") if text else STORE_COLUMNS
        cols: dict[str, list[Any]] = {name: [] for name in names}
        if text:
            from rsep.rdf.formats.quads import nquads_event_lines, trig_event_text

            writer = nquads_event_lines if fmt == OutputFormat.NQUADS else trig_event_text

        def flush() -> pa.RecordBatch:
            batch = pa.RecordBatch.from_pydict(cols)
            for column in cols.values():
                column.clear()
            return batch

        def special(
            kind: str, payload: str, line: int = 0, reason: str = "", record: str = ""
        ) -> None:
            """A row of a reserved partition: a rejected record or the task's stats."""
            if text:
                cols["kind"].append(kind)
                cols["value"].append(payload)
            else:
                _append_store(cols, kind, "-", "", line, line, payload, reason, record)

        stats = TaskStats()
        for batch in batches:
            paths = batch.column("path").to_pylist()
            displays = batch.column("display").to_pylist()
            for path, display in zip(paths, displays, strict=True):
                stats.files += 1
                for item in map_file(mapper, path, display):
                    stats.rows += 1
                    if item[0] == "bad":
                        _, line, reason, record = item
                        stats.rejected += 1
                        entry = {"file": display, "line": line, "reason": reason, "record": record}
                        if on_error is OnError.STOP:
                            raise RuntimeError(ERROR_MARK + json.dumps(entry) + ":END")
                        special(
                            REJECTED, json.dumps(entry) if text else display, line, reason, record
                        )
                        continue
                    event: MappedEvent = item[2]
                    stats.count(event)
                    if text:
                        body = writer(
                            event.event_id,
                            event.t_start,
                            event.t_end,
                            event.triples,
                            stream=event.stream,
                        )
                        cols["kind"].append("data")
                        cols["value"].append(body.rstrip("\n"))
                    else:
                        day = datetime.fromtimestamp(event.t_start / 1000, UTC).strftime("%Y-%m-%d")
                        for s, p, o in event.triples:
                            _append_store(
                                cols,
                                event.stream,
                                day,
                                event.event_id,
                                event.t_start,
                                event.t_end,
                                s,
                                p,
                                o,
                            )
                    if len(cols[names[-1]]) >= _BATCH:
                        yield flush()
        special(STATS, stats.to_json())
        yield flush()

    return run


def _append_store(cols: dict[str, list[Any]], *values: Any) -> None:
    for name, value in zip(STORE_COLUMNS, values, strict=True):
        cols[name].append(value)


# --------------------------------------------------------------------------- the job


def convert(
    spark: SparkSession,
    mapper: RowMapper,
    files: list[Path],
    output: Path,
    fmt: str = OutputFormat.PARQUET,
    *,
    bad: BadRecords | None = None,
    compression: str | None = None,
    progress: bool = True,
) -> ConvertResult:
    """Convert ``files`` with ``mapper`` into ``output`` (a folder; a single file for text
    output whose name ends in .nq/.trig), returning counts and rate."""
    bad = bad or BadRecords()
    if fmt not in OutputFormat.ALL:
        raise UserError(
            f"unknown output format {fmt!r} (expected one of {', '.join(OutputFormat.ALL)})"
        )
    if not files:
        raise UserError("no input files")
    started = time.perf_counter()
    single = fmt != OutputFormat.PARQUET and output.suffix in {".nq", ".nquads", ".trig", ".gz"}
    target = output.with_name(output.name + ".parts") if single else output
    if target.exists():
        shutil.rmtree(target)
    rows = [(str(f.resolve()), str(f)) for f in files]
    tasks = max(1, min(len(rows), 16 * spark.sparkContext.defaultParallelism))
    listing = spark.createDataFrame(
        [(i, p, d) for i, (p, d) in enumerate(rows)], "idx int, path string, display string"
    ).repartitionByRange(tasks, "idx")
    schema = _TEXT_SCHEMA if fmt != OutputFormat.PARQUET else _STORE_SCHEMA
    mapped: DataFrame = listing.select("path", "display").mapInArrow(
        _task(mapper, fmt, bad.policy), schema
    )
    watcher = _Progress(spark, len(rows)) if progress else None
    try:
        if fmt == OutputFormat.PARQUET:
            mapped.write.partitionBy("stream", "day").parquet(str(target))
        else:
            writer = mapped.write.partitionBy("kind")
            if compression:
                writer = writer.option("compression", compression)
            writer.text(str(target))
    except Exception as exc:  # a task failed: is it one of our input errors?
        marked = _input_error(exc)
        if marked is None:
            raise
        raise marked from None
    finally:
        if watcher is not None:
            watcher.stop()
    result = _collect(spark, target, fmt, bad)
    result.files = len(rows)
    if single:
        _concatenate(target / "kind=data", output)
        shutil.rmtree(target)
    result.output = output
    result.dead_letter = bad.dead_letter
    result.seconds = time.perf_counter() - started
    return result


def _input_error(exc: BaseException) -> InputError | None:
    text = str(exc)
    start = text.find(ERROR_MARK)
    if start < 0:
        return None
    end = text.find(":END", start)
    entry = json.loads(text[start + len(ERROR_MARK) : end])
    return InputError(entry["file"], entry["line"], entry["reason"])


def _collect(spark: SparkSession, target: Path, fmt: str, bad: BadRecords) -> ConvertResult:
    """Read back the reserved partitions (task stats, rejected rows) and remove them."""
    stats: list[TaskStats] = []
    rejected: list[dict[str, Any]] = []
    if fmt == OutputFormat.PARQUET:
        folder = target / f"stream={STATS}"
        if folder.exists():
            stats = [TaskStats.from_json(r["s"]) for r in spark.read.parquet(str(folder)).collect()]
            shutil.rmtree(folder)
        folder = target / f"stream={REJECTED}"
        if folder.exists():
            rejected = [
                {"file": r["s"], "line": r["t_start"], "reason": r["p"], "record": r["o"]}
                for r in spark.read.parquet(str(folder)).collect()
            ]
            shutil.rmtree(folder)
    else:
        for name in (STATS, REJECTED):
            folder = target / f"kind={name}"
            if not folder.exists():
                continue
            for part in sorted(folder.glob("part-*")):
                with open_text(part) as handle:
                    for line in filter(str.strip, handle):
                        if name == STATS:
                            stats.append(TaskStats.from_json(line))
                        else:
                            rejected.append(json.loads(line))
            shutil.rmtree(folder)
    for entry in sorted(rejected, key=lambda e: (e["file"], e["line"])):
        bad.report(entry["file"], entry["line"], entry["reason"], entry["record"])
    result = ConvertResult()
    for task in stats:
        result.rows += task.rows
        result.events += task.events
        result.triples += task.triples
        result.rejected += task.rejected
        result.streams |= task.streams
        if task.t_min is not None and task.t_max is not None:
            result.t_min = task.t_min if result.t_min is None else min(result.t_min, task.t_min)
            result.t_max = task.t_max if result.t_max is None else max(result.t_max, task.t_max)
    return result


def _concatenate(folder: Path, output: Path) -> None:
    """Join Spark's part files, in order, into one file."""
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("wb") as out:
        for part in sorted(folder.glob("part-*")):
            with part.open("rb") as handle:
                shutil.copyfileobj(handle, out)


class _Progress:
    """Prints finished/total tasks of the running job to stderr, once a second."""

    def __init__(self, spark: SparkSession, files: int) -> None:
        self._spark = spark
        self._files = files
        self._started = time.perf_counter()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._tty = sys.stderr.isatty()
        self._thread.start()

    def _run(self) -> None:
        try:
            tracker = self._spark.sparkContext.statusTracker()
        except Exception:  # Spark Connect has no status tracker
            return
        last = ""
        while not self._done.wait(1.0 if self._tty else 15.0):
            done = total = 0
            for stage_id in tracker.getActiveStageIds():
                info = tracker.getStageInfo(stage_id)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
            if total:
                elapsed = time.perf_counter() - self._started
                line = f"converting {self._files:,} file(s): tasks {done}/{total}, {elapsed:.0f} s"
                if line != last:
                    print(
                        ("\r" if self._tty else "") + line,
                        end="" if self._tty else "\n",
                        file=sys.stderr,
                        flush=True,
                    )
                    last = line

    def stop(self) -> None:
        self._done.set()
        self._thread.join(timeout=2)
        if self._tty:
            print(file=sys.stderr)

"""``rsep convert``: CSV files to RDF event streams, as a Spark job.

The driver lists the input files (extracting archives once into a work folder); Spark
runs one task per file, which maps the file row by row with the data set's compiled
mapping (:mod:`rsep.rdf.mapping`), sorts its events by time and writes them: the columnar
event store (Parquet, one row per triple, partitioned by stream and day) or N-Quads/TriG
text. Only counts and rejected records travel back through Spark (docs/architecture.md).

Bad records never crash a task with a stack trace: under ``--on-error=stop`` the task
fails with a marked message that the driver turns into an :class:`InputError` naming file,
line and reason; under ``skip`` the task returns them, and the driver writes them to the
dead-letter file and counts them.
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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rsep.errors import BadRecords, InputError, OnError, UserError
from rsep.rdf.mapping import MappedEvent, RowError, RowMapper, open_text
from rsep.spark.eventstore import COLUMNS, arrow_schema

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

ERROR_MARK = "RSEP_INPUT_ERROR:"
REJECTED = "_rejected"
STATS = "_stats"
_RESULT_SCHEMA = "kind string, value string"
_MAX_TASKS = 4096
_ARCHIVES = (".tar.xz", ".tar.gz", ".tgz", ".tar", ".zip")


class OutputFormat:
    """Names of the output forms of ``rsep convert``."""

    PARQUET = "parquet"
    NQUADS = "nquads"
    TRIG = "trig"
    ALL = (PARQUET, NQUADS, TRIG)


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

    def add(self, other: TaskStats) -> None:
        """Add another task's counts to these."""
        self.files += other.files
        self.rows += other.rows
        self.events += other.events
        self.triples += other.triples
        self.rejected += other.rejected
        self.streams |= other.streams
        for t in (other.t_min, other.t_max):
            if t is not None:
                self.t_min = t if self.t_min is None else min(self.t_min, t)
                self.t_max = t if self.t_max is None else max(self.t_max, t)

    @classmethod
    def from_json(cls, text: str) -> TaskStats:
        """Read stats written by :meth:`to_json`."""
        data = json.loads(text)
        return cls(**{**data, "streams": set(data["streams"])})


@dataclass
class ConvertResult(TaskStats):
    """What a conversion did: counts, time span, rate and where the output went."""

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
                if not _same_size(dest, info.file_size):
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


def write_store_part(events: list[MappedEvent], output: Path, index: int) -> None:
    """Write one input file's events into the event store, Hive-partitioned by stream and day.

    File names derive from the input file's index, so a retried task overwrites its own
    output and nothing else.
    """
    import pyarrow as pa
    import pyarrow.dataset as ds

    # event-level columns, repeated once per triple by an Arrow take (in C++)
    owner = [i for i, event in enumerate(events) for _ in event.triples]
    days = [datetime.fromtimestamp(e.t_start / 1000, UTC).strftime("%Y-%m-%d") for e in events]
    per_event = {
        "stream": [e.stream for e in events],
        "day": days,
        "event_id": [e.event_id for e in events],
        "t_start": [e.t_start for e in events],
        "t_end": [e.t_end for e in events],
    }
    schema = arrow_schema()
    take = pa.array(owner, pa.int64())
    cols: dict[str, Any] = {
        name: pa.array(values, schema.field(name).type).take(take)
        for name, values in per_event.items()
    }
    for position, name in enumerate(("s", "p", "o")):
        cols[name] = pa.array([t[position] for e in events for t in e.triples], pa.string())
    table = pa.table({name: cols[name] for name in COLUMNS}, schema=schema)
    partitioning = ds.partitioning(
        pa.schema([("stream", pa.string()), ("day", pa.string())]), flavor="hive"
    )
    ds.write_dataset(
        table,
        str(output),
        format="parquet",
        partitioning=partitioning,
        basename_template=f"part-{index:05d}-{{i}}.parquet",
        existing_data_behavior="overwrite_or_ignore",
        max_partitions=1_000_000,
        max_open_files=1024,
        # rows keep the part's time order (the default lets threads reorder them, which
        # split events and put a day's file out of time order)
        preserve_order=True,
    )


def write_text_part(
    events: list[MappedEvent], folder: Path, index: int, fmt: str, compression: str | None
) -> None:
    """Write one input file's events as N-Quads or TriG text, one part file per input file."""
    suffix = ".nq" if fmt == OutputFormat.NQUADS else ".trig"
    path = folder / f"part-{index:05d}{suffix}{'.gz' if compression else ''}"
    folder.mkdir(parents=True, exist_ok=True)
    with _open_out(path, compression is not None) as out:
        write_text(events, out, fmt)


def write_text(events: Iterable[MappedEvent], out: IO[str], fmt: str) -> None:
    """Write events as N-Quads or TriG text to an open file."""
    from rsep.rdf.formats.quads import nquads_event_lines, trig_event_text

    writer = nquads_event_lines if fmt == OutputFormat.NQUADS else trig_event_text
    for event in events:
        out.write(
            writer(event.event_id, event.t_start, event.t_end, event.triples, stream=event.stream)
        )


def _open_out(path: Path, compress: bool) -> IO[str]:
    """A text file to write, gzip-compressed at level 1 (about 4x faster than the default 9,
    output about 1.3x larger) when asked."""
    import gzip

    if compress:
        return gzip.open(path, "wt", compresslevel=1, encoding="utf-8", newline="\n")
    return path.open("w", encoding="utf-8", newline="\n")


def _task(
    mapper: RowMapper, fmt: str, on_error: OnError, output: Path, compression: str | None
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each Spark task runs over its (index, path, display) rows: map each
    file, write its events, and return the task's stats and rejected records."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        stats = TaskStats()
        kinds: list[str] = []
        values: list[str] = []
        for batch in batches:
            for index, path, display in zip(
                batch.column("idx").to_pylist(),
                batch.column("path").to_pylist(),
                batch.column("display").to_pylist(),
                strict=True,
            ):
                stats.files += 1
                events: list[MappedEvent] = []
                for item in map_file(mapper, path, display):
                    stats.rows += 1
                    if item[0] == "bad":
                        _, line, reason, record = item
                        stats.rejected += 1
                        entry = {"file": display, "line": line, "reason": reason, "record": record}
                        if on_error is OnError.STOP:
                            raise RuntimeError(ERROR_MARK + json.dumps(entry) + ":END")
                        kinds.append(REJECTED)
                        values.append(json.dumps(entry, ensure_ascii=False))
                        continue
                    stats.count(item[2])
                    events.append(item[2])
                if fmt == OutputFormat.PARQUET:
                    write_store_part(events, output, index)
                else:
                    write_text_part(events, output, index, fmt, compression)
        kinds.append(STATS)
        values.append(stats.to_json())
        yield pa.RecordBatch.from_pydict({"kind": kinds, "value": values})

    return run


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
    output whose name ends in .nq, .trig or .gz), returning counts and rate.

    Spark lists, schedules and retries the work, one task per input file; each task maps
    its file and writes its events itself (pyarrow for Parquet), because sending every
    triple through the JVM to Spark's partitioned writer cost three times the mapping.
    """
    bad = bad or BadRecords()
    if fmt not in OutputFormat.ALL:
        known = ", ".join(OutputFormat.ALL)
        raise UserError(f"unknown output format {fmt!r} (expected one of {known})")
    if not files:
        raise UserError("no input files")
    started = time.perf_counter()
    single = fmt != OutputFormat.PARQUET and output.suffix in {".nq", ".nquads", ".trig", ".gz"}
    target = (output.with_name(output.name + ".parts") if single else output).resolve()
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    rows = [(i, str(f.resolve()), str(f)) for i, f in enumerate(files)]
    tasks = max(1, min(len(rows), _MAX_TASKS))
    listing = spark.createDataFrame(rows, "idx int, path string, display string")
    listing = listing.repartitionByRange(tasks, "idx")
    task = _task(mapper, fmt, bad.policy, target, compression)
    watcher = _Progress(spark, len(rows)) if progress else None
    try:
        returned = listing.mapInArrow(task, _RESULT_SCHEMA).collect()
    except Exception as exc:  # a task failed: is it one of our input errors?
        marked = _input_error(exc)
        if marked is None:
            raise
        raise marked from None
    finally:
        if watcher is not None:
            watcher.stop()
    result = _collect([(r["kind"], r["value"]) for r in returned], bad)
    if single:
        _concatenate(target, output)
        shutil.rmtree(target)
    else:
        (target / "_SUCCESS").touch()
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


def _collect(returned: list[tuple[str, str]], bad: BadRecords) -> ConvertResult:
    """Add up the tasks' stats and hand their rejected records to ``bad`` in file order."""
    stats = [TaskStats.from_json(value) for kind, value in returned if kind == STATS]
    rejected = [json.loads(value) for kind, value in returned if kind == REJECTED]
    for entry in sorted(rejected, key=lambda e: (e["file"], e["line"])):
        bad.report(entry["file"], entry["line"], entry["reason"], entry["record"])
    result = ConvertResult()
    for task in stats:
        result.add(task)
    return result


def _concatenate(folder: Path, output: Path) -> None:
    """Join the part files, in input order, into one file (gzip members concatenate too)."""
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

"""CSV data sets to RDF event streams with a declarative mapping (docs/mappings.md), as a
Spark job (:func:`rsep.spark.convert.convert`): what ``rsep convert`` runs."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rsep.errors import BadRecords, OnError
from rsep.rdf.mapping import Mapping as EventMapping

if TYPE_CHECKING:
    from rsep.spark.convert import ConvertResult


def convert(
    mapping: EventMapping,
    inputs: Sequence[Path],
    output: Path,
    fmt: str = "parquet",
    *,
    lookups: Mapping[str, Path] | None = None,
    on_error: str = "stop",
    dead_letter: Path | None = None,
    master: str | None = None,
    work_dir: Path | None = None,
    compression: str | None = None,
    progress: bool = False,
    starting: Callable[[int], None] | None = None,
) -> ConvertResult:
    """Convert the CSV files, folders or archives ``inputs`` with ``mapping``
    (:func:`rsep.rdf.mapping.load_mapping`) into ``output``: the Parquet event store
    (``fmt`` ``parquet``) or N-Quads/TriG text. Lookup tables read ``lookups`` (by name) or
    files next to the inputs; a bad record stops the job (``on_error`` ``stop``: an
    :class:`~rsep.errors.InputError` naming file, line and reason) or is skipped into
    ``dead_letter`` (default ``OUTPUT.rejected.jsonl``). Archives are extracted into
    ``work_dir`` once; ``starting`` hears the count of input files before Spark starts."""
    from rsep.spark.convert import convert as job
    from rsep.spark.convert import resolve_inputs
    from rsep.spark.session import get_session

    base = inputs[0] if inputs[0].is_dir() else inputs[0].parent
    mapper = mapping.bind(dict(lookups or {}), base=base)
    policy = OnError(on_error)
    if policy is OnError.SKIP and dead_letter is None:
        dead_letter = output.with_name(output.name + ".rejected.jsonl")
    if dead_letter is not None and dead_letter.exists():
        dead_letter.unlink()
    bad = BadRecords(policy, dead_letter)
    work = work_dir or Path(tempfile.gettempdir()) / "rsep-work"
    try:
        files = resolve_inputs(list(inputs), mapping.source.files, work)
        if starting is not None:
            starting(len(files))
        spark = get_session(master, app_name="rsep convert")
        return job(
            spark, mapper, files, output, fmt, bad=bad, compression=compression, progress=progress
        )
    finally:
        bad.close()

"""A query live on Spark Structured Streaming (:meth:`rsep.api.Query.live` starts it): its
sources, which keep bringing events (Kafka topics, sockets, folders of arriving files), and
the started query (:class:`Live`), whose answers come out as the watermark passes them.

A source is ``kafka://host:port/topic`` (one event per message), ``socket://host:port``
(one event per text line) or a folder of arriving files, each ``IRI=SOURCE`` to put its
events on stream IRI; options follow ``?`` (:mod:`rsep.spark.source`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rsep.errors import UserError
from rsep.rdf.results import Result

if TYPE_CHECKING:
    from rsep.spark.live import LiveQuery
    from rsep.spark.sink import Tally
    from rsep.spark.source import Source

LIVE_SCHEMES = ("kafka:", "socket:")
"""The address schemes of sources that are live whatever the options."""


def address(item: str) -> tuple[str | None, str] | None:
    """``(IRI or None, address)`` of a source naming a Kafka topic or a socket, else
    ``None``."""
    if item.startswith(LIVE_SCHEMES):
        return None, item
    iri, sep, value = item.partition("=")
    iri = iri.strip().removeprefix("<").removesuffix(">")
    if sep and iri and value.strip().startswith(LIVE_SCHEMES):
        return iri, value.strip()
    return None


def sources_of(items: Sequence[str], folders: bool, on_error: str = "stop") -> list[Source]:
    """The live sources of ``items`` (module docstring); with ``folders`` a folder is read
    as files arrive in it, and a plain file is refused. A bad record stops the query or,
    with ``on_error`` ``skip``, becomes a dead letter (a source's ``?errors=`` wins)."""
    from rsep.errors import BadRecords
    from rsep.spark.source import source_of

    policy = BadRecords.of(on_error).policy

    if not items:
        raise UserError("a live query needs a --stream source")
    sources = []
    for item in items:
        found = address(item)
        if found is not None:
            sources.append(source_of(found[1], found[0], policy))
            continue
        iri, sep, value = item.partition("=")
        if not sep or Path(item).exists():
            iri, value = "", item
        iri = iri.strip().removeprefix("<").removesuffix(">")
        if not folders or not Path(value.strip()).is_dir():
            raise UserError(
                f"--stream {item}: a live query reads kafka://, socket:// or, with --live, a "
                "folder of arriving files"
            )
        sources.append(source_of(value.strip(), iri or None, policy))
    return sources


class Live:
    """A started live query: :meth:`wait` for it, read its :meth:`progress` and
    :attr:`tally`, :meth:`stop` it (a temporary checkpoint is removed then; a given one
    stays, and a query started again with it continues where this one stopped: with a
    folder, file or Kafka sink no answer lost or repeated; standard output may repeat the
    answers of the micro-batch a crash interrupted)."""

    def __init__(self, query: LiveQuery, checkpoint: Path, temporary: bool) -> None:
        self.query = query
        self.checkpoint = checkpoint
        self._temporary = temporary
        self._counts: dict[int, int] = {}

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the query ends or ``timeout`` seconds pass; whether it ended."""
        return self.query.wait(timeout)

    def progress(self) -> tuple[int, int]:
        """Records read and answers written so far."""
        _tally(self.query.query.recentProgress, self._counts)
        records = sum(self._counts.values())
        return records, self.query.tally.answers

    @property
    def tally(self) -> Tally:
        """Answers, late events and dead letters of this process's micro-batches, and the
        last final instant."""
        return self.query.tally

    @property
    def watermark(self) -> int | None:
        """Every answer at or before this time has been written."""
        return self.query.watermark

    def results(self) -> list[Result]:
        """Every answer written so far (a file or folder sink)."""
        return self.query.results()

    def stop(self) -> None:
        """Stop the query; remove its checkpoint if it was temporary."""
        try:
            self.query.stop()
            _tally(self.query.query.recentProgress, self._counts)
        finally:
            if self._temporary:
                shutil.rmtree(self.checkpoint, ignore_errors=True)


def _tally(reports: Iterable[Any], counts: dict[int, int]) -> None:
    """Records read per micro-batch, from Spark's progress reports."""
    for report in reports:
        counts[int(report["batchId"])] = int(report.get("numInputRows") or 0)

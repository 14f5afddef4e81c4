"""A hand-written vectorised V shape: the yardstick the columnar engine is measured against
(``rsep bench stock-vshape --system vectorised``).

It is a baseline written for this one query on purpose, as a programmer who knows the data
would write it without rsep: the Parquet event store read with its dictionary columns, the
price and volume rows picked by the predicate's dictionary index, one row per bar (company,
time, price), sorted by company and time, and a numba loop that runs the V shape of
:func:`rsep.workloads.baselines.vshape_query` per company (strict contiguity ``,`` or
skip-till-next ``;``, SPAseq Defs. 10-11; the tumbling window of Def. 16, as
:func:`rsep.workloads.baselines.naive_vshape` keeps it). It knows nothing of RDF beyond
this data's shape and refuses data outside it (an event without exactly one price and one
volume of one company, a price that is not an ``xsd:double``) rather than answer wrongly.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from numba import njit
from pyoxigraph import Literal, NamedNode, Triple

from rsep.errors import UserError
from rsep.workloads.baselines import FALL, PRED, Answer, VShape

STREAM = "http://example.org/stream/nasdaq"
"""The stream the V shape's GPMs read (``FROM STREAM S1`` of :func:`vshape_query`)."""
_DOUBLE = '"^^<http://www.w3.org/2001/XMLSchema#double>'
_PRICE, _VOLUME = f"<{PRED}price>", f"<{PRED}volume>"
_STRATEGIES = ("strict", "next")

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


def vectorised_vshape(store: Path, kb: Iterable[Triple], shape: VShape) -> tuple[list[Answer], int]:
    """The V shapes of ``shape`` in the event store ``store`` with the names and sectors of
    ``kb`` (module docstring), and the number of events read."""
    if shape.strategy not in _STRATEGIES:
        raise UserError(
            f"the vectorised V shape runs strict (,) and skip-till-next (;), not {shape.strategy!r}"
        )
    companies: dict[str, int] = {}
    parts: list[tuple[I64, I64, F64]] = []
    events = 0
    for batch in _store_batches(store):
        company, time, price, count = _bars(batch, companies)
        parts.append((company, time, price))
        events += count
    if not parts:
        return [], events
    company = np.concatenate([p[0] for p in parts])
    time = np.concatenate([p[1] for p in parts])
    price = np.concatenate([p[2] for p in parts])
    # a company's bars in time order: the files come in time order, each file's rows too,
    # so a stable sort by company keeps it (checked; else sorted by time as well)
    order = (
        np.argsort(company, kind="stable")
        if np.all(time[1:] >= time[:-1])
        else np.lexsort((time, company))
    )
    company, time, price = company[order], time[order], price[order]
    matches = _vshapes(
        company, time, price, shape.steps, shape.strategy == "strict", shape.window_ms, FALL
    )
    return _answers(matches, company, time, price, companies, kb), events


def _store_batches(store: Path) -> Iterable[pa.RecordBatch]:
    """The store's files of :data:`STREAM` in path order (time order,
    :func:`rsep.engine.batch.store_files`), one record batch each (an event's rows stay
    together), terms as dictionary columns."""
    import pyarrow.parquet as pq

    from rsep.engine.batch import store_files

    for file, partition in store_files(store):
        if partition.get("stream", STREAM) != STREAM:
            continue
        table = pq.ParquetFile(file, read_dictionary=["event_id", "s", "p", "o"]).read(
            columns=["event_id", "t_end", "s", "p", "o"], use_threads=False
        )
        yield from table.combine_chunks().to_batches()


def _bars(batch: pa.RecordBatch, companies: dict[str, int]) -> tuple[I64, I64, F64, int]:
    """One file's bars as (company code, time, price) and its count of events (runs of one
    event id: a file's rows are sorted by time and event); company codes given in
    ``companies`` by text."""
    event = batch.column("event_id")
    eid = event.indices.to_numpy(zero_copy_only=False)
    events = int(np.count_nonzero(eid[1:] != eid[:-1])) + (len(eid) > 0)
    p = batch.column("p")
    names = p.dictionary.to_pylist()
    codes = p.indices.to_numpy(zero_copy_only=False)
    at_price = _rows(codes, names, _PRICE)
    at_volume = _rows(codes, names, _VOLUME)
    s = batch.column("s").indices.to_numpy(zero_copy_only=False)
    if (
        len(at_price) != len(at_volume)
        or np.any(eid[at_price] != eid[at_volume])
        or np.any(s[at_price] != s[at_volume])
        or np.any(eid[at_price][1:] == eid[at_price][:-1])
    ):
        raise UserError(
            "the vectorised V shape reads events of one price and one volume of one company"
        )
    o = batch.column("o")
    lexical = o.dictionary.take(pa.array(o.indices.to_numpy(zero_copy_only=False)[at_price]))
    if not (
        pc.all(pc.ends_with(lexical, _DOUBLE)).as_py()
        and pc.all(pc.starts_with(lexical, '"')).as_py()
    ):
        raise UserError("the vectorised V shape reads prices that are xsd:double literals")
    values = pc.cast(pc.utf8_slice_codeunits(lexical, 1, -len(_DOUBLE)), pa.float64())
    local = np.array(
        [
            companies.setdefault(text, len(companies))
            for text in batch.column("s").dictionary.to_pylist()
        ],
        dtype=np.int64,
    )
    time = batch.column("t_end").to_numpy(zero_copy_only=False).astype(np.int64)[at_price]
    return local[s[at_price]], time, values.to_numpy(zero_copy_only=False), events


def _rows(codes: npt.NDArray[np.integer], names: list[str], predicate: str) -> I64:
    """The rows whose predicate is ``predicate``."""
    if predicate not in names:
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero(codes == names.index(predicate))


@njit(cache=True)
def _vshapes(
    company: I64, time: I64, price: F64, steps: int, strict: bool, window: int, fall: float
) -> I64:
    """The bars of every V shape (one row of ``steps`` bar indices each): each bar starts a
    run that takes, in its company's following bars, the next bar (strict) or the next bar
    that fits (skip-till-next) for each step, until the window that holds its first bar
    ends (SPAseq Def. 16: ``t <= (⌊t₀/d⌋ + 1)·d``)."""
    n = len(company)
    out = np.empty((max(16, n // 64), steps), dtype=np.int64)
    found = 0
    run = np.empty(steps, dtype=np.int64)
    for i in range(n):
        run[0] = i
        k = 1
        end = (time[i] // window + 1) * window
        j = i + 1
        while k < steps and j < n and company[j] == company[i] and time[j] <= end:
            p = price[j]
            if k == steps - 1:
                fits = p > price[i]
            elif k == 1:
                fits = p < price[i] * fall
            else:
                fits = p < price[run[k - 1]]
            if fits:
                run[k] = j
                k += 1
            elif strict:
                break
            j += 1
        if k == steps:
            if found == len(out):
                grown = np.empty((2 * len(out), steps), dtype=np.int64)
                grown[:found] = out
                out = grown
            out[found] = run
            found += 1
    return out[:found]


def _answers(
    matches: I64,
    company: I64,
    time: I64,
    price: F64,
    companies: dict[str, int],
    kb: Iterable[Triple],
) -> list[Answer]:
    """The V shapes joined with the KB's names and sectors of their company (the last
    step's ``GRAPH`` pattern), one :class:`Answer` per name and sector."""
    rows: dict[str, tuple[list[str], list[str]]] = {}
    for triple in kb:
        if isinstance(triple.object, Literal) and isinstance(triple.subject, NamedNode):
            names, sectors = rows.setdefault(f"<{triple.subject.value}>", ([], []))
            if triple.predicate.value == f"{PRED}name":
                names.append(triple.object.value)
            elif triple.predicate.value == f"{PRED}sector":
                sectors.append(triple.object.value)
    texts = {code: text for text, code in companies.items()}
    prices = price[matches].tolist()
    answers = []
    for bars, values in zip(matches.tolist(), prices, strict=True):
        text = texts[int(company[bars[0]])]
        names, sectors = rows.get(text, ([], []))
        for name in names:
            for sector in sectors:
                answers.append(Answer(text[1:-1], tuple(values), int(time[bars[-1]]), name, sector))
    return answers

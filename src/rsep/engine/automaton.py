"""The compiled automaton: SPAseq sequences run by a numba kernel over solution tables,
one partition after another, state carried from batch to batch.

A run of SPAseq's NFA (Def. 17) that waits at step ``j`` is a *group*: the set ``X`` of
mappings of its match so far (Defs. 7-12 are on sets of mappings: an event with two
solutions is one pair ``(τ, Ω)``), the time of its first event ``t1``, of its last ``τ'``
and the end of its tumbling window (Def. 16). At each instant ``t`` of its partition's
streamset a group waiting for step ``j`` meets the instant's events: the step's BOp
(Def. 4) gives *hits*, each a new group at step ``j + 1`` (or a match after the last step):

- a GPM: one hit per event of its stream whose solutions extend some mapping of the group
  (compatible on shared variables, stored forms compared, then the FILTERs that need the
  run's bindings, Def. 7 under the run);
- a disjunction: its operands' hits (Def. 9);
- a conjunction: one hit per set of events on which every operand matches, compatibly
  (Def. 8), the mappings of all the group's mappings united.

How long the group waits is the strategy in front of the step:

- strict contiguity (``,``, Def. 12): one instant, the next of its partition's streamset;
- skip-till-next (``;``, Def. 11): until the first instant with a hit, then it is gone;
- skip-till-any (``:``, Def. 10): it forks at every instant with a hit until its window
  ends.

A Kleene+ step (Defs. 13-14) also leaves, with each hit, a group that iterates the step
under the iteration strategy. A start run waits on every instant of its window
(``k = ⌊(t - t0)/ω⌋``; an instant on a window's boundary starts runs only in the later
window, since a run of the earlier one could take nothing after it). The solution tables
come from :mod:`rsep.engine.pattern`; FILTERs are :mod:`rsep.engine.expression` programs.
The kernel touches integers only: term ids, their stored forms and typed values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from rsep.engine.expression import compare_entries, entry_with, evaluate_with

__all__ = [
    "ANY",
    "NEXT",
    "STATUS_OK",
    "STATUS_TOO_MANY_RUNS",
    "STRICT",
    "Carried",
    "absent",
    "run_partitions",
]

STRICT, NEXT, ANY = 0, 1, 2
"""The event selection strategy in front of a step (SPAseq Defs. 10-12)."""

STATUS_OK, STATUS_TOO_MANY_RUNS = 0, 1

NO_END = np.iinfo(np.int64).max
"""A window without end (no WITHIN)."""

# the columns of a run (a group of mappings): partition, next step, first time (-1: a start
# run, which has taken nothing), last time, window end, its rows in the pool, alive, and
# whether it iterates a Kleene+ step (then it waits under the iteration strategy); then,
# when the sequence has negated steps, per positive step the times around the gap in front
# of it: the last time of the steps before it, and the time it was taken
PART, STEP, T1, LAST, END, ROW_START, ROW_COUNT, ALIVE, ITERATE = range(9)
_COLUMNS = 9

# the columns of a match's times: t1, t2, partition, window end, then the gaps' times
M_T1, M_T2, M_PART, M_END, M_GAPS = range(5)


@dataclass
class Carried:
    """The runs alive between two batches, sorted by partition: one row per run (columns
    ``PART`` … ``ALIVE``) and the pool of their mapping rows."""

    runs: np.ndarray
    rows: np.ndarray

    @classmethod
    def empty(cls, width: int, gaps: int = 0) -> Carried:
        """No run yet; runs of a sequence with ``gaps`` positive steps whose gaps are
        remembered (0: none)."""
        return cls(np.zeros((0, _COLUMNS + 2 * gaps), np.int64), np.zeros((0, width), np.int32))

    def __len__(self) -> int:
        return len(self.runs)

    @property
    def gaps(self) -> int:
        """How many positive steps' gaps the runs remember."""
        return int(self.runs.shape[1] - _COLUMNS) // 2


@njit(cache=True)
def _grow(values: np.ndarray, need: int) -> np.ndarray:
    """``values`` with room for ``need`` rows (doubling)."""
    if need <= values.shape[0]:
        return values
    size = max(need, 2 * values.shape[0], 64)
    out = np.empty((size, values.shape[1]), values.dtype)
    out[: values.shape[0]] = values
    return out


@njit(cache=True)
def _grow1(values: np.ndarray, need: int) -> np.ndarray:
    """``values`` (one axis) with room for ``need`` entries (doubling)."""
    if need <= values.shape[0]:
        return values
    out = np.empty(max(need, 2 * values.shape[0], 64), values.dtype)
    out[: values.shape[0]] = values
    return out


@njit(cache=True, inline="always")
def _copy(src: np.ndarray, a: int, dst: np.ndarray, b: int, count: int) -> None:
    """Rows ``a..a+count`` of ``src`` to rows ``b..`` of ``dst``, column by column (no
    array view, whose reference count would cost more than the copy); rows only move
    down when ``src`` is ``dst``."""
    for r in range(count):
        for k in range(src.shape[1]):
            dst[b + r, k] = src[a + r, k]


@njit(cache=True, inline="always")
def _add_run(
    runs: np.ndarray,
    n_g: int,
    parent: int,
    step: int,
    iterate: int,
    t1: int,
    t: int,
    first: int,
    count: int,
) -> int:
    """A new run like ``parent`` at ``step`` over rows ``first..first+count`` (``runs``
    has room for it)."""
    _copy(runs, parent, runs, n_g, 1)
    runs[n_g, STEP] = step
    runs[n_g, ITERATE] = iterate
    runs[n_g, T1] = t1
    runs[n_g, LAST] = t
    runs[n_g, ROW_START] = first
    runs[n_g, ROW_COUNT] = count
    runs[n_g, ALIVE] = 1
    return n_g + 1


@njit(cache=True)
def _same_rows_two(rows: np.ndarray, a: int, other: np.ndarray, b: int) -> bool:
    """Whether row ``a`` of ``rows`` equals row ``b`` of ``other``."""
    for k in range(rows.shape[1]):  # noqa: SIM110 - a loop numba compiles
        if rows[a, k] != other[b, k]:
            return False
    return True


@njit(cache=True)
def _compact(
    runs: np.ndarray,
    n_g: int,
    rows: np.ndarray,
    n_r: int,
    side_i: np.ndarray,
    side_f: np.ndarray,
    side_ok: np.ndarray,
) -> tuple[int, int]:
    """The live runs moved to the front, their rows too, in place (a run's rows are a
    range of the pool laid out in the order of the runs, shared by the two runs a Kleene+
    hit leaves, so rows only move down), with the rows' values of the FILTERs' run sides
    (``side_*``, as long as the pool; none past the new count); the new counts of runs and
    rows."""
    w = 0
    nr = 0
    source = -1  # the last range moved: where it was and where it went
    target = -1
    for g in range(n_g):
        if runs[g, ALIVE] == 0:
            continue
        start = runs[g, ROW_START]
        count = runs[g, ROW_COUNT]
        if start == source:
            runs[g, ROW_START] = target
        else:
            if start != nr:
                _copy(rows, start, rows, nr, count)
                _copy(side_i, start, side_i, nr, count)
                _copy(side_f, start, side_f, nr, count)
                _copy(side_ok, start, side_ok, nr, count)
            source = start
            target = nr
            runs[g, ROW_START] = nr
            nr += count
        if w != g:
            _copy(runs, g, runs, w, 1)
        w += 1
    _forget(side_ok, nr, n_r)
    return w, nr


@njit(cache=True, inline="always")
def _forget(side_ok: np.ndarray, lo: int, hi: int) -> None:
    """No FILTER run side known for pool rows ``lo..hi`` (rows written there later are new)."""
    for r in range(lo, min(hi, side_ok.shape[0])):
        for f in range(side_ok.shape[1]):
            side_ok[r, f] = 0


@njit(cache=True)
def _grow_zero(values: np.ndarray, need: int) -> np.ndarray:
    """``values`` with room for ``need`` rows (doubling), the new rows zero."""
    if need <= values.shape[0]:
        return values
    out = np.zeros((max(need, 2 * values.shape[0], 64), values.shape[1]), values.dtype)
    out[: values.shape[0]] = values
    return out


@njit(cache=True)
def _verdict(
    f: int,
    key: np.ndarray,
    known_f: np.ndarray,
    known_rows: np.ndarray,
    known_value: np.ndarray,
) -> int:
    """The verdict given for FILTER ``f`` on the values ``key`` (1 holds, 0 not), 2 when
    none was given (a scan: only rows no program decides come here)."""
    for k in range(known_f.shape[0]):
        if known_f[k] != f:
            continue
        same = True
        for z in range(key.shape[0]):
            if known_rows[k, z] != key[z]:
                same = False
                break
        if same:
            return int(known_value[k])
    return 2


@njit(cache=True, inline="always")
def _same_key(
    ex_key: np.ndarray,
    x: int,
    rows: np.ndarray,
    r: int,
    gpm_ment: np.ndarray,
    gpm_nment: np.ndarray,
    gi: int,
) -> bool:
    """Whether row ``r`` has the values of key ``x`` on the variables GPM ``gi`` names."""
    for b in range(gpm_nment[gi]):
        slot = gpm_ment[gi, b]
        if ex_key[x, slot] != rows[r, slot]:
            return False
    return True


@njit(cache=True, inline="always")
def _merge(
    rows: np.ndarray,
    r: int,
    sol: np.ndarray,
    s: int,
    gi: int,
    gpm_bind: np.ndarray,
    gpm_nbind: np.ndarray,
    stored: np.ndarray,
    merged: np.ndarray,
) -> bool:
    """Whether solution ``s`` of GPM ``gi`` is compatible with mapping row ``r`` on the
    variables it binds (SPARQL 1.1 sec. 18.3; terms compared by stored form, as
    ``⟦μ(P)⟧_G`` matches them, SPAseq Def. 7); their union in ``merged``. A solution row
    holds the GPM's variables only, in the order of ``gpm_bind``."""
    for z in range(rows.shape[1]):
        merged[z] = rows[r, z]
    for b in range(gpm_nbind[gi]):
        slot = gpm_bind[gi, b]
        value = sol[s, b]
        if value < 0:
            continue
        have = rows[r, slot]
        if have < 0:
            merged[slot] = value
        elif stored[have] != stored[value]:
            return False
    return True


@njit(cache=True, inline="always")
def _kept(keep_i: np.ndarray, keep_f: np.ndarray, at: int, f: int) -> tuple[Any, ...]:
    """The value kept at row ``at`` for FILTER ``f``'s side (an entry, as the evaluator's)."""
    return (
        keep_i[at, 4 * f],
        keep_i[at, 4 * f + 1],
        keep_i[at, 4 * f + 2],
        keep_i[at, 4 * f + 3],
        keep_f[at, 4 * f],
        keep_f[at, 4 * f + 1],
        keep_f[at, 4 * f + 2],
        keep_f[at, 4 * f + 3],
    )


@njit(cache=True, inline="always")
def _holds(
    f: int,
    rows: np.ndarray,
    r: int,
    merged: np.ndarray,
    scratch: np.ndarray,
    f_lo: np.ndarray,
    f_hi: np.ndarray,
    f_mask: np.ndarray,
    f_nmask: np.ndarray,
    f_used: np.ndarray,
    known_f: np.ndarray,
    known_rows: np.ndarray,
    known_value: np.ndarray,
    ops: np.ndarray,
    args: np.ndarray,
    kind: np.ndarray,
    numeric: np.ndarray,
    number: np.ndarray,
    exact: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
) -> int:
    """The verdict of deferred FILTER ``f`` on ``merged`` under mapping row ``r`` (the
    knowledge base's variables the row does not bind hidden, Def. 15): 1 holds, 0 not, 2
    when neither its program nor a verdict given decides it (``scratch`` then holds the
    values it reads, the others -2)."""
    width = merged.shape[0]
    ids = merged
    if f_nmask[f]:
        for z in range(width):
            scratch[z] = merged[z]
        for m in range(f_nmask[f]):
            if rows[r, f_mask[f, m]] < 0:
                scratch[f_mask[f, m]] = -1
        ids = scratch
    verdict = evaluate_with(
        ops, args, f_lo[f], f_hi[f], ids, kind, numeric, number, exact, ints, floats
    )
    if verdict == 2:
        for z in range(width):
            scratch[z] = ids[z] if f_used[f, z] else -2
        verdict = _verdict(f, scratch, known_f, known_rows, known_value)
    return int(verdict)


@njit(cache=True, nogil=True)
def run_partitions(
    ev_time: np.ndarray,
    ev_stream: np.ndarray,
    pe_event: np.ndarray,
    pe_part: np.ndarray,
    step_op_lo: np.ndarray,
    step_op_hi: np.ndarray,
    step_conj: np.ndarray,
    step_kleene: np.ndarray,
    step_strategy: np.ndarray,
    step_again: np.ndarray,
    op_gpm: np.ndarray,
    op_stream: np.ndarray,
    sol_ptr: np.ndarray,
    sol: np.ndarray,
    gpm_bind: np.ndarray,
    gpm_nbind: np.ndarray,
    gpm_f_lo: np.ndarray,
    gpm_f_hi: np.ndarray,
    gpm_exact: np.ndarray,
    gpm_ment: np.ndarray,
    gpm_nment: np.ndarray,
    ex_ptr: np.ndarray,
    ex_key: np.ndarray,
    ex_lo: np.ndarray,
    ex_hi: np.ndarray,
    f_lo: np.ndarray,
    f_hi: np.ndarray,
    f_mask: np.ndarray,
    f_nmask: np.ndarray,
    f_used: np.ndarray,
    known_f: np.ndarray,
    known_rows: np.ndarray,
    known_value: np.ndarray,
    ops: np.ndarray,
    args: np.ndarray,
    kind: np.ndarray,
    numeric: np.ndarray,
    number: np.ndarray,
    exact: np.ndarray,
    f_split: np.ndarray,
    stored: np.ndarray,
    t0: int,
    within: int,
    twice: bool,
    part_start: np.ndarray,
    carried: np.ndarray,
    carried_rows: np.ndarray,
    batch_last: int,
    max_runs: int,
) -> tuple[Any, ...]:
    """One batch of instants for every partition that has events in it (``pe_*``: the
    partition-event rows sorted by partition, time, event), from the runs carried in
    (sorted by partition). Steps are BOps over operands (``step_op_lo..hi``), each
    operand a GPM with its solutions (``sol_ptr[gpm, event]``) and deferred FILTERs.
    A GPM that is not a basic graph pattern (``gpm_exact``) has its solutions given per
    event and values of the variables it names (``ex_*``: keys by GPM and event, each a
    range of ``sol``); a key not given is asked for and taken as no solution for now.
    Returns the matches (mapping rows; ``t1, t2``, partition, window end and the gaps'
    times per row, ``M_*``), the runs carried
    out and their rows, a status (:data:`STATUS_OK`, or why it stopped), the partition
    it stopped in, the FILTER rows no program nor verdict decided, and the exact GPMs' keys
    asked for (GPM, event; the values, -2 for variables it does not name).

    A deferred FILTER that compares a side reading the run's variables only with one
    reading the solution's (``f_split``: where its program's left operand ends, -1 none,
    which side is the run's, then the count and slots the solution's side reads, -1 when
    it reads one its GPM does not bind) has the run side's value computed once per pool row
    and kept with it, and the solution's once per solution when the run binds none of its
    slots: a run that waits many instants compares two values kept.

    A deferred FILTER a program cannot decide is looked up among the verdicts given
    (``known_*``: the FILTER and the values of the variables it reads, ``f_used``, others
    -2); one not there is recorded and taken as not holding for now: the caller decides
    those exactly and runs the batch again from the same runs with their verdicts.

    Array views and calls that take arrays are kept out of the loops over runs and
    solutions (each costs atomic reference counts), and buffers grow before an instant's
    runs are visited, to a bound of what they can add: an array reassigned inside that
    loop is counted in and out at every run, grown or not."""
    n_steps = step_op_lo.shape[0]
    width = part_start.shape[1]  # a mapping row: a term id per variable
    columns = carried.shape[1]
    n_gaps = (columns - _COLUMNS) // 2
    matches = np.empty((64, width), np.int32)
    times = np.empty((64, M_GAPS + 2 * n_gaps), np.int64)
    n_m = 0
    out = np.empty((64, columns), np.int64)
    out_rows = np.empty((64, width), np.int32)
    n_o = 0
    n_or = 0
    runs = np.empty((64, columns), np.int64)  # the runs of one partition
    rows = np.empty((256, width), np.int32)
    merged = np.empty(width, np.int32)
    scratch = np.empty(width, np.int32)
    longest = 1
    for f in range(f_lo.shape[0]):
        longest = max(longest, f_hi[f] - f_lo[f])
    ints = np.empty((longest, 4), np.int64)  # the FILTER programs' stack
    floats = np.empty((longest, 4), np.float64)
    hit_bounds = np.empty(64, np.int64)  # the hits of one run: rows lo, hi in the pool
    # a step's candidates: the mapping, and its operand, event and run row
    cand = np.empty((64, width), np.int32)
    cand_of = np.empty((64, 3), np.int64)
    order = np.empty(64, np.int64)  # a conjunction's candidates by run row
    # a conjunction's combinations (mapping, set of events)
    combo = np.empty((64, width), np.int32)
    done = np.empty(64, np.bool_)
    most = 1
    for j in range(n_steps):
        most = max(most, step_op_hi[j] - step_op_lo[j])
    combo_key = np.empty((64, most), np.int64)
    choice = np.empty(most, np.int64)
    room = np.empty(n_steps, np.int64)  # an instant's solutions per step
    combos = np.empty(n_steps, np.int64)  # a bound of a conjunction's sets of events
    pairs = np.empty(n_steps, np.int64)  # the step's (operand, event) pairs at the instant
    status = STATUS_OK
    stopped = -1
    undecided_f = np.empty(16, np.int64)  # FILTER rows to decide: the FILTER, its values
    undecided = np.empty((16, width), np.int32)
    n_u = 0
    # GPMs evaluated exactly, under the run's values of the variables they name: the
    # (GPM, event, values) whose solutions are not given yet
    asked = np.empty((16, 2), np.int64)
    asked_key = np.empty((16, width), np.int32)
    n_a = 0

    n_f = max(f_lo.shape[0], 1)
    side_i = np.zeros((256, 4 * n_f), np.int64)  # per pool row, the FILTERs' run sides
    side_f = np.zeros((256, 4 * n_f), np.float64)
    side_ok = np.zeros((256, n_f), np.int8)  # grown with the pool, before the runs' loop
    sol_i = np.empty((sol.shape[0], 4 * n_f), np.int64)  # per solution, their sides
    sol_f = np.empty((sol.shape[0], 4 * n_f), np.float64)
    sol_ok = np.zeros((sol.shape[0], n_f), np.int8)
    own_i = np.empty((1, 4 * n_f), np.int64)  # a solution's side not kept
    own_f = np.empty((1, 4 * n_f), np.float64)

    n_pe = pe_event.shape[0]
    n_c = carried.shape[0]
    ci = 0
    i = 0
    n_r = 0
    while (i < n_pe or ci < n_c) and status == STATUS_OK:
        # the next partition: the smaller of the batch's and the carried runs'
        own = i < n_pe and (ci >= n_c or pe_part[i] <= carried[ci, PART])
        q = pe_part[i] if own else carried[ci, PART]
        n_g = 0
        _forget(side_ok, 0, n_r)
        n_r = 0
        n_dead = 0
        while ci < n_c and carried[ci, PART] == q:  # its carried runs
            count = carried[ci, ROW_COUNT]
            if n_g + 1 > runs.shape[0]:
                runs = _grow(runs, n_g + 1)
            if n_r + count > rows.shape[0]:
                rows = _grow(rows, n_r + count)
            start = carried[ci, ROW_START]
            _copy(carried_rows, start, rows, n_r, count)
            _copy(carried, ci, runs, n_g, 1)
            runs[n_g, ROW_START] = n_r
            n_r += count
            n_g += 1
            ci += 1
        while i < n_pe and pe_part[i] == q and status == STATUS_OK:  # its instants
            t = ev_time[pe_event[i]]
            j = i
            while j < n_pe and pe_part[j] == q and ev_time[pe_event[j]] == t:
                j += 1
            # a start run waits on this instant when a window holds it: the window that
            # goes on after it (a run of the one ending at t could take nothing later)
            # (and, with ``twice``, on a boundary also the one ending at t: a match of one
            # positive step there may pass its negations in one window and not the other)
            if within < 0 or t >= t0:
                starts = 1
                if twice and within > 0 and t - t0 >= within and (t - t0) % within == 0:
                    starts = 2
                for w in range(starts):
                    if n_g + 1 > runs.shape[0]:
                        runs = _grow(runs, n_g + 1)
                    if n_r + 1 > rows.shape[0]:
                        rows = _grow(rows, n_r + 1)
                    _copy(part_start, q, rows, n_r, 1)
                    runs[n_g, PART] = q
                    if within < 0:
                        runs[n_g, END] = NO_END
                    else:
                        runs[n_g, END] = t0 + ((t - t0) // within + 1 - w) * within
                    for c in range(_COLUMNS, columns):
                        runs[n_g, c] = -1
                    n_g = _add_run(runs, n_g, n_g, 0, 0, -1, t, n_r, 1)
                    n_r += 1
            # room for everything the instant's runs can add, made before they are visited:
            # an array grown in their loop would be counted in and out (two atomic reference
            # counts) at every run it visits, grown or not
            for step in range(n_steps):
                room[step] = 0
                combos[step] = 1
                pairs[step] = 0
                for o in range(step_op_lo[step], step_op_hi[step]):
                    count = 0
                    for k in range(i, j):
                        e = pe_event[k]
                        if ev_stream[e] == op_stream[o]:
                            count += sol_ptr[op_gpm[o], e + 1] - sol_ptr[op_gpm[o], e]
                            pairs[step] += 1
                    room[step] += count
                    combos[step] = min(combos[step] * count, 1 << 40)
            before = n_g
            most_cand = 0  # of one run: candidates, hits
            most_hits = 0
            total_hits = 0  # of all runs: hits (mapping rows), candidate pairs, keys asked
            total_pairs = 0
            total_asked = 0
            for g in range(before):
                if runs[g, ALIVE] == 0:
                    continue
                step = runs[g, STEP]
                count = runs[g, ROW_COUNT]
                cands = count * room[step]
                hits = count * combos[step] if step_conj[step] else cands
                most_cand = max(most_cand, cands)
                most_hits = max(most_hits, hits)
                total_hits += hits
                total_pairs += cands
                total_asked += count * pairs[step]
            if most_cand > cand.shape[0]:
                cand = _grow(cand, most_cand)
                cand_of = _grow(cand_of, most_cand)
                order = _grow1(order, most_cand)
            if most_hits > combo.shape[0]:
                combo = _grow(combo, most_hits)
                combo_key = _grow(combo_key, most_hits)
                done = _grow1(done, most_hits)
            if 2 * most_hits > hit_bounds.shape[0]:
                hit_bounds = _grow1(hit_bounds, 2 * most_hits)
            if n_r + total_hits > rows.shape[0]:
                rows = _grow(rows, n_r + total_hits)
            if rows.shape[0] > side_ok.shape[0]:
                side_ok = _grow_zero(side_ok, rows.shape[0])
                side_i = _grow_zero(side_i, rows.shape[0])
                side_f = _grow_zero(side_f, rows.shape[0])
            if n_g + 2 * total_hits > runs.shape[0]:
                runs = _grow(runs, n_g + 2 * total_hits)
            if n_m + total_hits > matches.shape[0]:
                matches = _grow(matches, n_m + total_hits)
                times = _grow(times, n_m + total_hits)
            if n_u + total_pairs > undecided.shape[0]:
                undecided = _grow(undecided, n_u + total_pairs)
                undecided_f = _grow1(undecided_f, n_u + total_pairs)
            if n_a + total_asked > asked.shape[0]:
                asked = _grow(asked, n_a + total_asked)
                asked_key = _grow(asked_key, n_a + total_asked)
            for g in range(before):
                if runs[g, ALIVE] == 0:
                    continue
                if runs[g, END] < t:
                    runs[g, ALIVE] = 0
                    n_dead += 1
                    continue
                step = runs[g, STEP]
                first_time = t if runs[g, T1] < 0 else runs[g, T1]
                r_lo = runs[g, ROW_START]
                r_hi = r_lo + runs[g, ROW_COUNT]
                o_lo = step_op_lo[step]
                o_hi = step_op_hi[step]
                # the candidates: each solution of an operand on an event of the instant
                # that extends a mapping of the run, compatible on the variables it binds
                # (SPARQL 1.1 sec. 18.3, stored forms), its deferred FILTERs holding under
                # the run (Def. 7; the knowledge base's variables the run does not bind
                # are hidden from them, Def. 15)
                n_cand = 0
                for o in range(o_lo, o_hi):
                    gi = op_gpm[o]
                    for k in range(i, j):
                        e = pe_event[k]
                        if ev_stream[e] != op_stream[o]:
                            continue
                        for r in range(r_lo, r_hi):
                            s_lo = sol_ptr[gi, e]
                            s_hi = sol_ptr[gi, e + 1]
                            if gpm_exact[gi]:  # the solutions given for the run's values
                                s_lo = -1
                                for x in range(ex_ptr[gi, e], ex_ptr[gi, e + 1]):
                                    if _same_key(ex_key, x, rows, r, gpm_ment, gpm_nment, gi):
                                        s_lo = ex_lo[x]
                                        s_hi = ex_hi[x]
                                        break
                                if s_lo < 0:
                                    asked[n_a, 0] = gi
                                    asked[n_a, 1] = e
                                    for z in range(width):
                                        asked_key[n_a, z] = -2
                                    for b in range(gpm_nment[gi]):
                                        slot = gpm_ment[gi, b]
                                        asked_key[n_a, slot] = rows[r, slot]
                                    n_a += 1
                                    s_hi = 0
                                    s_lo = 0
                            for s in range(s_lo, s_hi):
                                if not _merge(
                                    rows, r, sol, s, gi, gpm_bind, gpm_nbind, stored, merged
                                ):
                                    continue
                                verdict = 1
                                for f in range(gpm_f_lo[gi], gpm_f_hi[gi]):
                                    mid = f_split[f, 0]
                                    if mid >= 0:  # the run's side kept with its row
                                        run_left = f_split[f, 1] == 0
                                        # the solution's side once per solution when the
                                        # run binds none of the slots it reads
                                        alone = f_split[f, 2] >= 0
                                        for x in range(f_split[f, 2]):
                                            if rows[r, f_split[f, 3 + x]] >= 0:
                                                alone = False
                                                break
                                        for which in range(2):  # one copy of the evaluator
                                            if which == 0 and side_ok[r, f]:
                                                continue
                                            if which == 1 and alone and sol_ok[s, f]:
                                                continue
                                            left = (which == 0) == run_left
                                            side = entry_with(
                                                ops,
                                                args,
                                                f_lo[f] if left else mid,
                                                mid if left else f_hi[f] - 1,
                                                merged,
                                                kind,
                                                numeric,
                                                number,
                                                exact,
                                                ints,
                                                floats,
                                            )
                                            keep_i = side_i if which == 0 else sol_i
                                            keep_f = side_f if which == 0 else sol_f
                                            at = r if which == 0 else s
                                            if which == 1 and not alone:
                                                keep_i = own_i
                                                keep_f = own_f
                                                at = 0
                                            keep_i[at, 4 * f] = side[0]
                                            keep_i[at, 4 * f + 1] = side[1]
                                            keep_i[at, 4 * f + 2] = side[2]
                                            keep_i[at, 4 * f + 3] = side[3]
                                            keep_f[at, 4 * f] = side[4]
                                            keep_f[at, 4 * f + 1] = side[5]
                                            keep_f[at, 4 * f + 2] = side[6]
                                            keep_f[at, 4 * f + 3] = side[7]
                                            if which == 0:
                                                side_ok[r, f] = 1
                                            elif alone:
                                                sol_ok[s, f] = 1
                                        run_side = _kept(side_i, side_f, r, f)
                                        if alone:
                                            own_side = _kept(sol_i, sol_f, s, f)
                                        else:
                                            own_side = _kept(own_i, own_f, 0, f)
                                        if run_left:
                                            first_side, second_side = run_side, own_side
                                        else:
                                            first_side, second_side = own_side, run_side
                                        verdict = compare_entries(
                                            ops[f_hi[f] - 1], first_side, second_side, kind
                                        )
                                        if verdict == 1:
                                            continue
                                        if verdict == 0:
                                            break
                                    verdict = _holds(
                                        f,
                                        rows,
                                        r,
                                        merged,
                                        scratch,
                                        f_lo,
                                        f_hi,
                                        f_mask,
                                        f_nmask,
                                        f_used,
                                        known_f,
                                        known_rows,
                                        known_value,
                                        ops,
                                        args,
                                        kind,
                                        numeric,
                                        number,
                                        exact,
                                        ints,
                                        floats,
                                    )
                                    if verdict == 2:  # to be decided
                                        for z in range(width):
                                            undecided[n_u, z] = scratch[z]
                                        undecided_f[n_u] = f
                                        n_u += 1
                                        verdict = 0
                                    if verdict != 1:
                                        break
                                if verdict != 1:
                                    continue
                                for z in range(width):
                                    cand[n_cand, z] = merged[z]
                                cand_of[n_cand, 0] = o - o_lo
                                cand_of[n_cand, 1] = e
                                cand_of[n_cand, 2] = r
                                n_cand += 1
                n_hits = 0
                if not step_conj[step]:  # one hit per operand and event (Defs. 7, 9)
                    for c in range(n_cand):
                        if (
                            c == 0
                            or cand_of[c, 0] != cand_of[c - 1, 0]
                            or (cand_of[c, 1] != cand_of[c - 1, 1])
                        ):
                            hit_bounds[2 * n_hits] = n_r
                            n_hits += 1
                        _copy(cand, c, rows, n_r, 1)
                        n_r += 1
                        hit_bounds[2 * n_hits - 1] = n_r
                else:  # one hit per set of events (Def. 8)
                    n_ops = o_hi - o_lo
                    n_combo = 0
                    # the candidates by run row (stable: operand, event, solution)
                    n_at = 0
                    for r in range(r_lo, r_hi):
                        for c in range(n_cand):
                            if cand_of[c, 2] == r:
                                order[n_at] = c
                                n_at += 1
                    lo = 0
                    while lo < n_cand:
                        hi = lo
                        while hi < n_cand and cand_of[order[hi], 2] == cand_of[order[lo], 2]:
                            hi += 1
                        # every combination of one candidate per operand
                        for x in range(n_ops):
                            choice[x] = lo - 1
                        x = 0
                        while x >= 0:
                            c = choice[x] + 1
                            while c < hi and cand_of[order[c], 0] != x:
                                c += 1
                            if c >= hi:
                                choice[x] = lo - 1
                                x -= 1
                                continue
                            choice[x] = c
                            if x + 1 < n_ops:
                                x += 1
                                continue
                            for z in range(width):
                                scratch[z] = cand[order[choice[0]], z]
                            fits = True
                            for y in range(1, n_ops):
                                other = order[choice[y]]
                                for z in range(width):
                                    a_z = scratch[z]
                                    b_z = cand[other, z]
                                    if a_z < 0:
                                        scratch[z] = b_z
                                    elif b_z >= 0 and stored[a_z] != stored[b_z]:
                                        fits = False
                                        break
                                if not fits:
                                    break
                            if not fits:
                                continue
                            for z in range(width):
                                combo[n_combo, z] = scratch[z]
                            # the set of events, sorted, repeated ones as -1 at the end
                            for y in range(n_ops):
                                combo_key[n_combo, y] = cand_of[order[choice[y]], 1]
                            for y in range(1, n_ops):  # insertion sort (few operands)
                                z = y
                                while z > 0 and combo_key[n_combo, z - 1] > combo_key[n_combo, z]:
                                    swap = combo_key[n_combo, z]
                                    combo_key[n_combo, z] = combo_key[n_combo, z - 1]
                                    combo_key[n_combo, z - 1] = swap
                                    z -= 1
                            for y in range(n_ops - 1, 0, -1):
                                if combo_key[n_combo, y] == combo_key[n_combo, y - 1]:
                                    for z in range(y, n_ops - 1):
                                        combo_key[n_combo, z] = combo_key[n_combo, z + 1]
                                    combo_key[n_combo, n_ops - 1] = -1
                            n_combo += 1
                        lo = hi
                    # one hit per set of events, its mappings a set
                    for a in range(n_combo):
                        done[a] = False
                    for a in range(n_combo):
                        if done[a]:
                            continue
                        first = n_r
                        for b in range(a, n_combo):
                            if done[b]:
                                continue
                            same = True
                            for y in range(n_ops):
                                if combo_key[a, y] != combo_key[b, y]:
                                    same = False
                                    break
                            if not same:
                                continue
                            done[b] = True
                            known = False
                            for z in range(first, n_r):
                                if _same_rows_two(rows, z, combo, b):
                                    known = True
                                    break
                            if not known:
                                _copy(combo, b, rows, n_r, 1)
                                n_r += 1
                        hit_bounds[2 * n_hits] = first
                        hit_bounds[2 * n_hits + 1] = n_r
                        n_hits += 1
                # the gap in front of this step, crossed unless the run iterates it
                gap = _COLUMNS + 2 * step if n_gaps and runs[g, ITERATE] == 0 else -1
                for h in range(n_hits):
                    first = hit_bounds[2 * h]
                    last = hit_bounds[2 * h + 1]
                    if step_kleene[step]:  # it may take the step again
                        n_g = _add_run(runs, n_g, g, step, 1, first_time, t, first, last - first)
                        if gap >= 0:
                            runs[n_g - 1, gap] = runs[g, LAST]
                            runs[n_g - 1, gap + 1] = t
                    if step + 1 == n_steps:  # a match: its mappings and times
                        for r in range(first, last):
                            for z in range(width):
                                matches[n_m, z] = rows[r, z]
                            times[n_m, M_T1] = first_time
                            times[n_m, M_T2] = t
                            times[n_m, M_PART] = q
                            times[n_m, M_END] = runs[g, END]
                            for c in range(2 * n_gaps):
                                times[n_m, M_GAPS + c] = runs[g, _COLUMNS + c]
                            if gap >= 0:
                                times[n_m, M_GAPS + 2 * step] = runs[g, LAST]
                                times[n_m, M_GAPS + 2 * step + 1] = t
                            n_m += 1
                    else:  # a run that waits for the next step
                        n_g = _add_run(
                            runs, n_g, g, step + 1, 0, first_time, t, first, last - first
                        )
                        if gap >= 0:
                            runs[n_g - 1, gap] = runs[g, LAST]
                            runs[n_g - 1, gap + 1] = t
                if runs[g, T1] < 0:
                    strategy = STRICT
                elif runs[g, ITERATE]:
                    strategy = step_again[step]
                else:
                    strategy = step_strategy[step]
                if strategy == STRICT or (strategy == NEXT and n_hits > 0):
                    runs[g, ALIVE] = 0
                    n_dead += 1
            # the dead runs leave when they are half of them (each instant would move
            # every waiting run's rows, in time linear in the runs)
            if 2 * n_dead >= n_g:
                n_g, n_r = _compact(runs, n_g, rows, n_r, side_i, side_f, side_ok)
                n_dead = 0
            if n_g - n_dead > max_runs:
                status = STATUS_TOO_MANY_RUNS
                stopped = q
            i = j
        # carry the partition's runs out (those whose window can still take an instant)
        for g in range(n_g):
            if runs[g, ALIVE] == 0 or runs[g, END] <= batch_last:
                continue
            count = runs[g, ROW_COUNT]
            start = runs[g, ROW_START]
            if n_o + 1 > out.shape[0]:
                out = _grow(out, n_o + 1)
            if n_or + count > out_rows.shape[0]:
                out_rows = _grow(out_rows, n_or + count)
            _copy(rows, start, out_rows, n_or, count)
            _copy(runs, g, out, n_o, 1)
            out[n_o, ROW_START] = n_or
            n_or += count
            n_o += 1
    return (
        matches[:n_m],
        times[:n_m],
        out[:n_o],
        out_rows[:n_or],
        status,
        stopped,
        undecided_f[:n_u],
        undecided[:n_u],
        asked[:n_a],
        asked_key[:n_a],
    )


@njit(cache=True, nogil=True)
def absent(
    m_rows: np.ndarray,
    m_part: np.ndarray,
    m_lo: np.ndarray,
    m_hi: np.ndarray,
    item_op_lo: np.ndarray,
    item_op_hi: np.ndarray,
    op_gpm: np.ndarray,
    neg_lo: np.ndarray,
    neg_hi: np.ndarray,
    neg_time: np.ndarray,
    neg_part: np.ndarray,
    neg_rows: np.ndarray,
    gpm_bind: np.ndarray,
    gpm_nbind: np.ndarray,
    gpm_f_lo: np.ndarray,
    gpm_f_hi: np.ndarray,
    f_lo: np.ndarray,
    f_hi: np.ndarray,
    f_mask: np.ndarray,
    f_nmask: np.ndarray,
    f_used: np.ndarray,
    known_f: np.ndarray,
    known_rows: np.ndarray,
    known_value: np.ndarray,
    ops: np.ndarray,
    args: np.ndarray,
    kind: np.ndarray,
    numeric: np.ndarray,
    number: np.ndarray,
    exact: np.ndarray,
    stored: np.ndarray,
) -> tuple[Any, ...]:
    """Which match mappings no negated BOp matches in its gap (SPAseq App. B, CQELS-CEP's
    SEQ_WO, NO_HEAD, NO_TAIL): for mapping ``m`` and negated item ``i`` (a GPM, or a
    conjunction of GPMs: ``item_op_lo..hi``), no instant in ``m_lo[m, i]..m_hi[m, i]``
    (inclusive) where every operand has a solution on an event of the mapping's partition
    (``neg_part`` -1: an event without a key, in every partition) compatible with it,
    their FILTERs holding under it (Def. 7 under ``μ``) and the operands compatible
    together (Def. 8). A negated GPM's solutions are ``neg_lo[g]..neg_hi[g]`` of
    ``neg_*``, sorted by time. Returns the mask of kept mappings and the FILTER rows
    no program nor verdict decided (then the mask is not final)."""
    n_m = m_rows.shape[0]
    width = m_rows.shape[1]
    keep = np.ones(n_m, np.bool_)
    most = 1
    for i in range(item_op_lo.shape[0]):
        most = max(most, item_op_hi[i] - item_op_lo[i])
    stack = np.empty((most + 1, width), np.int32)  # the mapping joined operand by operand
    merged = np.empty(width, np.int32)
    scratch = np.empty(width, np.int32)
    choice = np.empty(most, np.int64)
    longest = 1
    for f in range(f_lo.shape[0]):
        longest = max(longest, f_hi[f] - f_lo[f])
    ints = np.empty((longest, 4), np.int64)
    floats = np.empty((longest, 4), np.float64)
    undecided_f = np.empty(16, np.int64)
    undecided = np.empty((16, width), np.int32)
    n_u = 0
    for m in range(n_m):
        q = m_part[m]
        for i in range(item_op_lo.shape[0]):
            lo = m_lo[m, i]
            hi = m_hi[m, i]
            if lo > hi:
                continue
            o_lo = item_op_lo[i]
            n_ops = item_op_hi[i] - o_lo
            for z in range(width):
                stack[0, z] = m_rows[m, z]
            # the first operand's solutions in the gap, then the others' at the same instant
            g0 = op_gpm[o_lo]
            a = np.searchsorted(neg_time[neg_lo[g0] : neg_hi[g0]], lo) + neg_lo[g0]
            choice[0] = a - 1
            t = -1
            x = 0
            found = False
            while x >= 0 and not found:
                gi = op_gpm[o_lo + x]
                c = choice[x] + 1
                fitting = False
                while c < neg_hi[gi]:
                    at = neg_time[c]
                    if (x == 0 and at > hi) or (x > 0 and at != t):
                        break
                    if neg_part[c] >= 0 and neg_part[c] != q:
                        c += 1
                        continue
                    if not _merge(stack, x, neg_rows, c, gi, gpm_bind, gpm_nbind, stored, merged):
                        c += 1
                        continue
                    for z in range(width):
                        stack[x + 1, z] = merged[z]
                    # its FILTERs under the match's mapping alone (Def. 8: each operand
                    # is evaluated under X, then the pairs are joined)
                    _merge(m_rows, m, neg_rows, c, gi, gpm_bind, gpm_nbind, stored, merged)
                    verdict = 1
                    for f in range(gpm_f_lo[gi], gpm_f_hi[gi]):
                        verdict = _holds(
                            f,
                            m_rows,
                            m,
                            merged,
                            scratch,
                            f_lo,
                            f_hi,
                            f_mask,
                            f_nmask,
                            f_used,
                            known_f,
                            known_rows,
                            known_value,
                            ops,
                            args,
                            kind,
                            numeric,
                            number,
                            exact,
                            ints,
                            floats,
                        )
                        if verdict == 2:
                            if n_u + 1 > undecided.shape[0]:
                                undecided = _grow(undecided, n_u + 1)
                                undecided_f = _grow1(undecided_f, n_u + 1)
                            for z in range(width):
                                undecided[n_u, z] = scratch[z]
                            undecided_f[n_u] = f
                            n_u += 1
                        if verdict != 1:
                            break
                    if verdict != 1:
                        c += 1
                        continue
                    fitting = True
                    break
                if not fitting:
                    x -= 1
                    continue
                choice[x] = c
                if x == 0:
                    t = neg_time[c]
                if x + 1 == n_ops:
                    found = True
                    break
                x += 1
                g1 = op_gpm[o_lo + x]
                choice[x] = np.searchsorted(neg_time[neg_lo[g1] : neg_hi[g1]], t) + neg_lo[g1] - 1
            if found:
                keep[m] = False
                break
    return keep, undecided_f[:n_u], undecided[:n_u]

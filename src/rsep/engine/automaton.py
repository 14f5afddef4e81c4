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

from rsep.engine.expression import evaluate

__all__ = [
    "ANY",
    "NEXT",
    "STATUS_OK",
    "STATUS_TOO_MANY_RUNS",
    "STATUS_UNDECIDED",
    "STRICT",
    "Carried",
    "run_partitions",
]

STRICT, NEXT, ANY = 0, 1, 2
"""The event selection strategy in front of a step (SPAseq Defs. 10-12)."""

STATUS_OK, STATUS_TOO_MANY_RUNS, STATUS_UNDECIDED = 0, 1, 2

NO_END = np.iinfo(np.int64).max
"""A window without end (no WITHIN)."""

# the columns of a run (a group of mappings): partition, next step, first time (-1: a start
# run, which has taken nothing), last time, window end, its rows in the pool, alive, and
# whether it iterates a Kleene+ step (then it waits under the iteration strategy)
PART, STEP, T1, LAST, END, ROW_START, ROW_COUNT, ALIVE, ITERATE = range(9)
_COLUMNS = 9


@dataclass
class Carried:
    """The runs alive between two batches, sorted by partition: one row per run (columns
    ``PART`` … ``ALIVE``) and the pool of their mapping rows."""

    runs: np.ndarray
    rows: np.ndarray

    @classmethod
    def empty(cls, width: int) -> Carried:
        """No run yet."""
        return cls(np.zeros((0, _COLUMNS), np.int64), np.zeros((0, width), np.int32))

    def __len__(self) -> int:
        return len(self.runs)


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
def _extend(
    mu: np.ndarray,
    solution: np.ndarray,
    bind: np.ndarray,
    stored: np.ndarray,
    out: np.ndarray,
) -> bool:
    """``μ ∪ s`` into ``out`` when compatible on the variables the step binds (SPARQL
    1.1 sec. 18.3; a bound term matches a pattern by its stored form)."""
    out[:] = mu
    for i in range(bind.shape[0]):
        slot = bind[i]
        value = solution[slot]
        if value < 0:
            continue
        have = mu[slot]
        if have < 0:
            out[slot] = value
        elif stored[have] != stored[value]:
            return False
    return True


@njit(cache=True)
def _filters_hold(
    merged: np.ndarray,
    mu: np.ndarray,
    lo: int,
    hi: int,
    f_lo: np.ndarray,
    f_hi: np.ndarray,
    f_mask: np.ndarray,
    f_nmask: np.ndarray,
    ops: np.ndarray,
    args: np.ndarray,
    kind: np.ndarray,
    numeric: np.ndarray,
    number: np.ndarray,
    exact: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """1 when every FILTER ``lo..hi`` holds on ``merged``, 0 when one does not, 2 when a
    program cannot decide (the caller then takes the exact path). A FILTER of the event
    part does not see the knowledge base's variables the run does not bind (SPAseq Def.
    15: the event's pattern is matched before the join)."""
    for f in range(lo, hi):
        scratch[:] = merged
        for m in range(f_nmask[f]):
            slot = f_mask[f, m]
            if mu[slot] < 0:
                scratch[slot] = -1
        result = evaluate(
            ops[f_lo[f] : f_hi[f]],
            args[f_lo[f] : f_hi[f]],
            scratch,
            kind,
            numeric,
            number,
            exact,
        )
        if result == 2:
            return 2
        if result != 1:
            return 0
    return 1


@njit(cache=True)
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
) -> tuple[np.ndarray, int]:
    """A new run like ``parent`` at ``step`` over rows ``first..first+count``."""
    runs = _grow(runs, n_g + 1)
    runs[n_g] = runs[parent]
    runs[n_g, STEP] = step
    runs[n_g, ITERATE] = iterate
    runs[n_g, T1] = t1
    runs[n_g, LAST] = t
    runs[n_g, ROW_START] = first
    runs[n_g, ROW_COUNT] = count
    runs[n_g, ALIVE] = 1
    return runs, n_g + 1


@njit(cache=True)
def _compatible(a: np.ndarray, b: np.ndarray, stored: np.ndarray, out: np.ndarray) -> bool:
    """``a ∪ b`` into ``out`` when they agree where both are bound (stored forms)."""
    for k in range(a.shape[0]):
        x = a[k]
        y = b[k]
        if x < 0:
            out[k] = y
        else:
            out[k] = x
            if y >= 0 and stored[x] != stored[y]:
                return False
    return True


@njit(cache=True)
def _same_rows_two(rows: np.ndarray, a: int, other: np.ndarray, b: int) -> bool:
    """Whether row ``a`` of ``rows`` equals row ``b`` of ``other``."""
    for k in range(rows.shape[1]):  # noqa: SIM110 - a loop numba compiles
        if rows[a, k] != other[b, k]:
            return False
    return True


@njit(cache=True)
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
    f_lo: np.ndarray,
    f_hi: np.ndarray,
    f_mask: np.ndarray,
    f_nmask: np.ndarray,
    ops: np.ndarray,
    args: np.ndarray,
    kind: np.ndarray,
    numeric: np.ndarray,
    number: np.ndarray,
    exact: np.ndarray,
    stored: np.ndarray,
    t0: int,
    within: int,
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
    Returns the matches (mapping rows; ``t1, t2, partition`` per row), the runs carried
    out and their rows, a status (:data:`STATUS_OK`, or why it stopped) and the partition
    it stopped in."""
    n_steps = step_op_lo.shape[0]
    width = sol.shape[1]
    matches = np.empty((64, width), np.int32)
    times = np.empty((64, 3), np.int64)  # t1, t2, partition
    n_m = 0
    out = np.empty((64, _COLUMNS), np.int64)
    out_rows = np.empty((64, width), np.int32)
    n_o = 0
    n_or = 0
    runs = np.empty((64, _COLUMNS), np.int64)  # the runs of one partition
    rows = np.empty((256, width), np.int32)
    merged = np.empty(width, np.int32)
    scratch = np.empty(width, np.int32)
    # a conjunction's candidates (operand, event, row) and combinations (events, row)
    cand = np.empty((64, width), np.int32)
    cand_op = np.empty((64, 2), np.int64)
    combo = np.empty((64, width), np.int32)
    most = 1
    for j in range(n_steps):
        most = max(most, step_op_hi[j] - step_op_lo[j])
    combo_key = np.empty((64, most), np.int64)
    choice = np.empty(most, np.int64)
    status = STATUS_OK
    stopped = -1

    n_pe = pe_event.shape[0]
    n_c = carried.shape[0]
    ci = 0
    i = 0
    while (i < n_pe or ci < n_c) and status == STATUS_OK:
        # the next partition: the smaller of the batch's and the carried runs'
        own = i < n_pe and (ci >= n_c or pe_part[i] <= carried[ci, PART])
        q = pe_part[i] if own else carried[ci, PART]
        n_g = 0
        n_r = 0
        while ci < n_c and carried[ci, PART] == q:  # its carried runs
            count = carried[ci, ROW_COUNT]
            runs = _grow(runs, n_g + 1)
            rows = _grow(rows, n_r + count)
            start = carried[ci, ROW_START]
            rows[n_r : n_r + count] = carried_rows[start : start + count]
            runs[n_g] = carried[ci]
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
            if within < 0 or t >= t0:
                runs = _grow(runs, n_g + 1)
                rows = _grow(rows, n_r + 1)
                rows[n_r] = part_start[q]
                runs[n_g, PART] = q
                runs[n_g, END] = NO_END if within < 0 else t0 + ((t - t0) // within + 1) * within
                runs, n_g = _add_run(runs, n_g, n_g, 0, 0, -1, t, n_r, 1)
                n_r += 1
            before = n_g
            for g in range(before):
                if runs[g, ALIVE] == 0:
                    continue
                if runs[g, END] < t:
                    runs[g, ALIVE] = 0
                    continue
                step = runs[g, STEP]
                first_time = t if runs[g, T1] < 0 else runs[g, T1]
                r_lo = runs[g, ROW_START]
                r_hi = r_lo + runs[g, ROW_COUNT]
                took = False
                # the hits: ranges of new rows (hit_lo..hit_hi) in the pool
                n_hits = 0
                hit_bounds = np.empty(0, np.int64)
                if not step_conj[step]:
                    bounds = np.empty(2 * (step_op_hi[step] - step_op_lo[step]) * (j - i), np.int64)
                    for o in range(step_op_lo[step], step_op_hi[step]):
                        gi = op_gpm[o]
                        bind = gpm_bind[gi, : gpm_nbind[gi]]
                        for k in range(i, j):
                            e = pe_event[k]
                            if ev_stream[e] != op_stream[o]:
                                continue
                            first = n_r
                            for r in range(r_lo, r_hi):
                                for s in range(sol_ptr[gi, e], sol_ptr[gi, e + 1]):
                                    if not _extend(rows[r], sol[s], bind, stored, merged):
                                        continue
                                    verdict = _filters_hold(
                                        merged,
                                        rows[r],
                                        gpm_f_lo[gi],
                                        gpm_f_hi[gi],
                                        f_lo,
                                        f_hi,
                                        f_mask,
                                        f_nmask,
                                        ops,
                                        args,
                                        kind,
                                        numeric,
                                        number,
                                        exact,
                                        scratch,
                                    )
                                    if verdict == 2:
                                        status = STATUS_UNDECIDED
                                        stopped = q
                                    if verdict != 1:
                                        continue
                                    rows = _grow(rows, n_r + 1)
                                    rows[n_r] = merged
                                    n_r += 1
                            if n_r > first:
                                bounds[2 * n_hits] = first
                                bounds[2 * n_hits + 1] = n_r
                                n_hits += 1
                    hit_bounds = bounds
                else:
                    n_ops = step_op_hi[step] - step_op_lo[step]
                    n_combo = 0
                    for r in range(r_lo, r_hi):
                        n_cand = 0
                        for o in range(step_op_lo[step], step_op_hi[step]):
                            gi = op_gpm[o]
                            bind = gpm_bind[gi, : gpm_nbind[gi]]
                            for k in range(i, j):
                                e = pe_event[k]
                                if ev_stream[e] != op_stream[o]:
                                    continue
                                for s in range(sol_ptr[gi, e], sol_ptr[gi, e + 1]):
                                    if not _extend(rows[r], sol[s], bind, stored, merged):
                                        continue
                                    verdict = _filters_hold(
                                        merged,
                                        rows[r],
                                        gpm_f_lo[gi],
                                        gpm_f_hi[gi],
                                        f_lo,
                                        f_hi,
                                        f_mask,
                                        f_nmask,
                                        ops,
                                        args,
                                        kind,
                                        numeric,
                                        number,
                                        exact,
                                        scratch,
                                    )
                                    if verdict == 2:
                                        status = STATUS_UNDECIDED
                                        stopped = q
                                    if verdict != 1:
                                        continue
                                    cand = _grow(cand, n_cand + 1)
                                    cand_op = _grow(cand_op, n_cand + 1)
                                    cand[n_cand] = merged
                                    cand_op[n_cand, 0] = o - step_op_lo[step]
                                    cand_op[n_cand, 1] = e
                                    n_cand += 1
                        # every combination of one candidate per operand (Def. 8)
                        for x in range(n_ops):
                            choice[x] = -1
                        x = 0
                        while x >= 0:
                            c = choice[x] + 1
                            while c < n_cand and cand_op[c, 0] != x:
                                c += 1
                            if c >= n_cand:
                                choice[x] = -1
                                x -= 1
                                continue
                            choice[x] = c
                            if x + 1 < n_ops:
                                x += 1
                                continue
                            scratch[:] = cand[choice[0]]
                            fits = True
                            for y in range(1, n_ops):
                                if not _compatible(scratch, cand[choice[y]], stored, merged):
                                    fits = False
                                    break
                                scratch[:] = merged
                            if not fits:
                                continue
                            combo = _grow(combo, n_combo + 1)
                            combo_key = _grow(combo_key, n_combo + 1)
                            combo[n_combo] = scratch
                            # the set of events, sorted, repeated ones as -1 at the end
                            for y in range(n_ops):
                                combo_key[n_combo, y] = cand_op[choice[y], 1]
                            combo_key[n_combo, :n_ops].sort()
                            for y in range(n_ops - 1, 0, -1):
                                if combo_key[n_combo, y] == combo_key[n_combo, y - 1]:
                                    combo_key[n_combo, y : n_ops - 1] = combo_key[
                                        n_combo, y + 1 : n_ops
                                    ].copy()
                                    combo_key[n_combo, n_ops - 1] = -1
                            n_combo += 1
                    # one hit per set of events, its mappings a set
                    bounds = np.empty(2 * n_combo, np.int64)
                    done = np.zeros(n_combo, np.bool_)
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
                                rows = _grow(rows, n_r + 1)
                                rows[n_r] = combo[b]
                                n_r += 1
                        bounds[2 * n_hits] = first
                        bounds[2 * n_hits + 1] = n_r
                        n_hits += 1
                    hit_bounds = bounds
                for h in range(n_hits):
                    first = hit_bounds[2 * h]
                    last = hit_bounds[2 * h + 1]
                    took = True
                    if step_kleene[step]:  # it may take the step again
                        runs, n_g = _add_run(
                            runs, n_g, g, step, 1, first_time, t, first, last - first
                        )
                    if step + 1 == n_steps:  # a match: its mappings, t1 and t2
                        count = last - first
                        matches = _grow(matches, n_m + count)
                        times = _grow(times, n_m + count)
                        matches[n_m : n_m + count] = rows[first:last]
                        times[n_m : n_m + count, 0] = first_time
                        times[n_m : n_m + count, 1] = t
                        times[n_m : n_m + count, 2] = q
                        n_m += count
                    else:  # a run that waits for the next step
                        runs, n_g = _add_run(
                            runs, n_g, g, step + 1, 0, first_time, t, first, last - first
                        )
                if runs[g, T1] < 0:
                    strategy = STRICT
                elif runs[g, ITERATE]:
                    strategy = step_again[step]
                else:
                    strategy = step_strategy[step]
                if strategy == STRICT or (strategy == NEXT and took):
                    runs[g, ALIVE] = 0
            # compact the runs and their rows
            live = 0
            live_rows = 0
            for g in range(n_g):
                if runs[g, ALIVE]:
                    live += 1
                    live_rows += runs[g, ROW_COUNT]
            if live > max_runs:
                status = STATUS_TOO_MANY_RUNS
                stopped = q
            if live < n_g or n_r > 2 * live_rows + 1024:
                kept = np.empty((max(live_rows, 256), width), np.int32)
                w = 0
                nr = 0
                for g in range(n_g):
                    if runs[g, ALIVE] == 0:
                        continue
                    count = runs[g, ROW_COUNT]
                    start = runs[g, ROW_START]
                    kept[nr : nr + count] = rows[start : start + count]
                    runs[w] = runs[g]
                    runs[w, ROW_START] = nr
                    nr += count
                    w += 1
                n_g = w
                n_r = nr
                rows = kept
            i = j
        # carry the partition's runs out (those whose window can still take an instant)
        for g in range(n_g):
            if runs[g, ALIVE] == 0 or runs[g, END] <= batch_last:
                continue
            count = runs[g, ROW_COUNT]
            start = runs[g, ROW_START]
            out = _grow(out, n_o + 1)
            out_rows = _grow(out_rows, n_or + count)
            out_rows[n_or : n_or + count] = rows[start : start + count]
            out[n_o] = runs[g]
            out[n_o, ROW_START] = n_or
            n_or += count
            n_o += 1
    return matches[:n_m], times[:n_m], out[:n_o], out_rows[:n_or], status, stopped

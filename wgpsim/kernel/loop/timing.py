"""A loop's timing: cycles per iteration, LDS cycles exposed and hidden, per op, and what-ifs.

Input: a trace of N iterations with, per row, its ``iteration`` (-1 outside the loop) and a
``label`` (the op it came from: a TTGIR op and its location, or any name), e.g. a
``KernelLoopTrace`` (``time_kernel_loop``). Both engines time it with per-row cycles
(``simulate(..., record_ops=True)``); the accounting is per warp and per cycle (docs/DESIGN.md,
"Loop timing", defines every word):

- a warp's cycle is *work* (a ``delay`` or ``clock`` row), *issue* (at an LDS row that has not
  issued yet: queue full, DS counter full, its SIMD busy), *wait* (at ``wait_ds``, or at
  ``wait_tensor`` for the TDM's writes) or *barrier*;
- *exposed* LDS cycles: issue + wait + the barrier cycles in which some warp not yet at the
  barrier is itself at issue or wait (the barrier waits behind LDS work);
- *in flight*: a cycle in which one of the warp's LDS instructions has issued and not completed;
  *hidden* LDS cycles: in flight while the warp does work;
- exposed cycles are charged to an op: an issue cycle to its own row; a wait cycle to the load
  whose completion ends that stretch of the wait (the stretch from the previous completion it
  waited for); a barrier cycle to what the lowest-numbered stalled warp is charged with.

Steady state: iterations ``steady_from`` (1, the first left out, when there are at least two)
to N - 1; figures are per iteration of that range, per warp, and "the loop" takes the slowest
warp's cycles per iteration and the warps' mean exposed/hidden cycles.

A hand-made loop: two warps (one per pair) each load 4 KiB from partition 0 (8 ``ds_load_b128``,
16 passes), wait, do 200 cycles of work, meet at a barrier. The 32 passes share partition 0 and
go one a cycle, so the last load completes about 32 + 56 (``lds_latency``) cycles after the
first issue; then 200 of work and the barrier's 7: 295 cycles, 87 of them exposed (the wait and
the issue stalls of the full queue, 295 - 200 - 8 at the barrier). On partitions of their own the
pairs' 16 passes each go in parallel: 16 cycles fewer. No bank conflicts: ideal banks save 0.

>>> from wgpsim.trace.trace import TraceBuilder
>>> b, it, lab = TraceBuilder(2), [], []
>>> for i in range(3):
...     for w in range(2):
...         b.loads(w, "ds_load_b128", 8192 * w + 512 * np.arange(8)[:, None] + 16 * np.arange(32))
...         b.wait_ds(w, 0)
...         b.delay(w, 200)
...         it += [i] * 10; lab += ["load A"] * 8 + ["wait", "wmma"]
...     b.barrier()
...     it += [i] * 2; lab += ["barrier"] * 2
>>> lt = time_loop(b.build(), iteration=it, label=lab, engine="des")
>>> lt.cycles_per_iteration, lt.exposed, lt.what_if("separate_partitions")
(295.0, 87.0, 279.0)
>>> print(lt.sentence())  # doctest: +NORMALIZE_WHITESPACE
LDS is exposed for 87 of 295 cycles per iteration; separating partitions would save 16
cycles, removing bank conflicts 0 and infinitely fast LDS 88 (the bound).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from wgpsim.columns import Columns
from wgpsim.engine import simulate
from wgpsim.errors import TraceError
from wgpsim.hw.config import HardwareConfig, load_hardware, target_hardware
from wgpsim.kernel.loop.whatif import TRANSFORMS, WHAT_IFS, applies, kept_rows, same_run
from wgpsim.trace.instructions import BARRIER, NUM_LDS_OPS, TDM, WAIT_DS, WAIT_TENSOR
from wgpsim.trace.trace import Trace

WORK, ISSUE, WAIT, AT_BARRIER, BEHIND_LDS = 1, 2, 3, 4, 5
"""A warp's state in a cycle (0: not started or finished); ``LoopTiming.state`` marks the
barrier cycles behind LDS work ``BEHIND_LDS``."""
WARP_COLUMNS = (
    "warp",
    "cycles_per_iteration",
    "exposed",
    "exposed_wait",
    "exposed_issue",
    "exposed_barrier",
    "hidden",
    "in_flight",
    "work",
    "barrier_other",
)
OP_COLUMNS = (
    "op",
    "kind",
    "instructions",
    "exposed",
    "exposed_share",
    "latency",
    "bank_conflict_cycles",
    "partition_stall_cycles",
)


@dataclass(frozen=True, eq=False)
class LoopTiming:
    """The loop's figures (per steady iteration; module docstring). ``warp_table`` and
    ``op_table`` are ``wgpsim.columns.Columns`` with ``WARP_COLUMNS`` / ``OP_COLUMNS``
    (``warps`` and ``ops`` the same as DataFrames, built when read); ``what_ifs`` maps a name of
    ``loop_whatif.WHAT_IFS`` to its cycles per iteration."""

    iterations: int
    steady_from: int
    num_warps: int
    cycles_per_iteration: float
    exposed: float
    hidden: float
    lds_busy: float
    warp_table: Any
    op_table: Any
    what_ifs: dict[str, float]
    notes: tuple[str, ...] = ()
    result: Any = field(default=None, repr=False)
    state: Any = field(default=None, repr=False)  # int8 [warp, cycle]: WORK .. BEHIND_LDS
    trace: Any = field(default=None, repr=False)  # what was timed, with its provenance:
    iteration: Any = field(default=None, repr=False)
    label: Any = field(default=None, repr=False)

    @cached_property
    def warps(self):
        """Per warp, ``WARP_COLUMNS`` (a DataFrame)."""
        return self.warp_table.to_frame()

    @cached_property
    def ops(self):
        """Per op, ``OP_COLUMNS``, most exposed first (a DataFrame)."""
        return self.op_table.to_frame()

    @cached_property
    def op_times(self):
        """``Result.ops(trace)`` of the timed run: every row's cycles (a DataFrame)."""
        return self.result.ops(self.trace)

    def what_if(self, name: str) -> float:
        return self.what_ifs[name]

    def saving(self, name: str) -> float:
        """Cycles per iteration the what-if ``name`` saves."""
        return self.cycles_per_iteration - self.what_ifs[name]

    def sentence(self, per: str = "iteration") -> str:
        """The finding in words first: the exposed cycles, then what each what-if saves
        (``per``: what the figures are per; "run" for a kernel without a loop).

        >>> lt = LoopTiming(3, 1, 2, 295.0, 87.0, 0.0, 0.0, None, None,
        ...     {"separate_partitions": 279.0, "ideal_banks": 295.0, "no_lds": 207.0})
        >>> print(lt.sentence())  # doctest: +NORMALIZE_WHITESPACE
        LDS is exposed for 87 of 295 cycles per iteration; separating partitions would save 16
        cycles, removing bank conflicts 0 and infinitely fast LDS 88 (the bound).
        """
        y, x = number_text(self.cycles_per_iteration), number_text(self.exposed)
        text = f"LDS is exposed for {x} of {y} cycles per {per}"
        saves = [
            (label, number_text(self.saving(name)))
            for name, label in (
                ("separate_partitions", "separating partitions"),
                ("ideal_banks", "removing bank conflicts"),
                ("no_lds", "infinitely fast LDS"),
            )
            if name in self.what_ifs
        ]
        if not saves:
            return text + "."
        words = [f"{label} {n}" for label, n in saves]
        words[0] = f"{saves[0][0]} would save {saves[0][1]} cycles"
        words = [w + self._tdm_share(label) for w, (label, _) in zip(words, saves, strict=True)]
        listed = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
        return f"{text}; {listed}" + (" (the bound)." if "no_lds" in self.what_ifs else ".")

    def _tdm_share(self, label: str) -> str:
        """Where the bank-conflict saving comes from, when the TDM's writes hold any of the
        conflicts (" (all in the TDM's LDS writes: %24)"); else ""."""
        table = self.op_table
        if label != "removing bank conflicts" or table is None or not len(table):
            return ""
        rows = list(zip(table["op"], table["kind"], table["bank_conflict_cycles"], strict=True))
        tdm = [(op, c) for op, kind, c in rows if kind == "tdm" and c > 0]
        if not tdm:
            return ""
        names = ", ".join(str(op).split(" ", 1)[0] for op, _ in tdm)
        if any(kind != "tdm" and c > 0 for _, kind, c in rows):
            share = number_text(float(sum(c for _, c in tdm)))
            return f" ({share} of the conflict cycles in the TDM's LDS writes: {names})"
        return f" (all in the TDM's LDS writes: {names})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "sentence": self.sentence(),
            "iterations": self.iterations,
            "steady_from": self.steady_from,
            "num_warps": self.num_warps,
            "cycles_per_iteration": self.cycles_per_iteration,
            "lds_exposed": self.exposed,
            "lds_hidden": self.hidden,
            "lds_busy": self.lds_busy,
            "what_ifs": {
                n: {"cycles_per_iteration": c, "saves": self.saving(n), "how": WHAT_IFS[n]}
                for n, c in self.what_ifs.items()
            },
            "warps": self.warp_table.rows(),
            "ops": self.op_table.rows(),
            "notes": list(self.notes),
        }


def time_loop(
    trace: Trace,
    hw: HardwareConfig | None = None,
    *,
    iteration,
    label,
    engine: str = "auto",
    seed: int = 0,
    steady_from: int | None = None,
    what_ifs: tuple[str, ...] = tuple(WHAT_IFS),
) -> LoopTiming:
    """Simulate ``trace`` with per-row cycles and account for it (module docstring)."""
    hw = load_hardware() if hw is None else hw
    iteration = np.asarray(iteration, dtype=np.int64)
    label = np.asarray(label, dtype=object)
    if not len(iteration) == len(label) == len(trace):
        raise TraceError(
            f"provenance for {len(iteration)} / {len(label)} rows, the trace has {len(trace)}"
        )
    n = int(iteration.max(initial=-1)) + 1
    if n < 1:
        raise TraceError("no row of the trace belongs to an iteration (iteration >= 0)")
    steady = (1 if n >= 2 else 0) if steady_from is None else steady_from
    result = simulate(trace, hw, engine=engine, seed=seed, record_events=True, record_ops=True)
    acc = _account(trace, result, iteration, label, n, steady)
    notes = list(acc.pop("notes"))
    ifs = {}
    for name in (w for w in what_ifs if applies(w, hw)):
        t2, hw2 = TRANSFORMS[name](trace, hw)
        r2 = same_run(name, result, t2, hw2)
        if r2 is None:
            r2 = simulate(t2, hw2, engine=engine, seed=seed, record_ops=True)
        keep = kept_rows(name, trace)
        cpi = _cycles_per_iteration(r2, t2, iteration[keep], n, steady)
        ifs[name] = float(cpi.max(initial=0.0))
        if name == "ideal_banks" and r2.bank_conflict_cycles:
            notes.append(f"ideal banks: {r2.bank_conflict_cycles} bank-conflict cycles remain")
    return LoopTiming(
        iterations=n,
        steady_from=steady,
        num_warps=trace.num_warps,
        what_ifs=ifs,
        notes=tuple(notes),
        result=result,
        trace=trace,
        iteration=iteration,
        label=label,
        **acc,
    )


def time_kernel_loop(loop, hw: HardwareConfig | None = None, **kw) -> LoopTiming:
    """``time_loop`` on a ``wgpsim.kernel.loop.traces.KernelLoopTrace``: an LDS row is
    labelled by its TTGIR op and source line (``kernel_loop.op_label``: one row per op, so a
    GEMM's A and B stores are two rows), any other row by its mnemonic."""
    steps = loop.program.steps
    per_step = [s.label if s.label is not None else (s.asm[-1] if s.asm else "?") for s in steps]
    label = np.array(per_step, dtype=object)[loop.step]
    hw = target_hardware(loop.program.target) if hw is None else hw
    return time_loop(loop.trace, hw, iteration=loop.iteration, label=label, **kw)


# ---- the accounting -----------------------------------------------------------------------------


def _cycles_per_iteration(result, trace, iteration: np.ndarray, n: int, steady: int) -> np.ndarray:
    """Per warp: (end of the last iteration - start of iteration ``steady``) / its count."""
    warp = trace.warp.astype(np.int64)
    arrive, leave = result.op_time("arrive"), result.op_time("leave")
    out = []
    for w in np.flatnonzero(np.bincount(warp)):  # np.unique would import numpy.ma
        mine = warp == w
        first = mine & (iteration == steady)
        last = mine & (iteration == n - 1)
        if not first.any() or not last.any():
            out.append(0.0)
            continue
        out.append((leave[last].max() - arrive[first].min()) / max(n - steady, 1))
    return np.array(out, dtype=float)


def _account(trace, result, iteration, label, n, steady) -> dict[str, Any]:
    nw = trace.num_warps
    names, state, blame, iter_of, in_flight = _states(trace, result, iteration, label)
    stalled = (state == ISSUE) | (state == WAIT)
    any_stalled = stalled.any(axis=0)
    first_stalled = stalled.argmax(axis=0)
    behind = (state == AT_BARRIER) & any_stalled[None, :]
    cols = np.arange(state.shape[1])
    blame = np.where(behind, blame[first_stalled, cols][None, :], blame)
    in_steady = iter_of >= steady
    per = max(n - steady, 1)
    exposed = stalled | behind

    def per_warp(mask) -> np.ndarray:
        return (mask & in_steady).sum(axis=1) / per

    cpi = _cycles_per_iteration(result, trace, iteration, n, steady)
    warps = dict(
        zip(
            WARP_COLUMNS,
            (
                np.arange(nw),
                cpi,
                per_warp(exposed),
                per_warp(state == WAIT),
                per_warp(state == ISSUE),
                per_warp(behind),
                per_warp(in_flight & (state == WORK)),
                per_warp(in_flight),
                per_warp(state == WORK),
                per_warp((state == AT_BARRIER) & ~behind),
            ),
            strict=True,
        )
    )
    lds, code = trace.op < NUM_LDS_OPS, names.code
    ops = _per_op(
        names.names,
        code,
        lds,
        trace.op,
        iteration,
        steady,
        per,
        nw,
        result,
        blame,
        exposed,
        in_steady,
    )
    busy = _port_busy(result, iteration, steady, state.shape[1]) / per
    notes = []
    if n < 2:
        notes.append("one iteration: its figures include the loop's start")
    return {
        "state": np.where(behind, BEHIND_LDS, state).astype(np.int8),
        "cycles_per_iteration": float(cpi.max(initial=0.0)),
        "exposed": _mean(warps["exposed"]),
        "hidden": _mean(warps["hidden"]),
        "lds_busy": float(busy),
        "warp_table": _table(warps),
        "op_table": ops,
        "notes": notes,
    }


@dataclass(frozen=True)
class _Labels:
    """The distinct labels (sorted) and each row's index into them."""

    names: np.ndarray
    code: np.ndarray


def _states(trace, result, iteration, label):
    """Per warp and cycle: the warp's state, the op an exposed cycle is charged to (-1: none),
    the iteration it is in, and whether one of its LDS instructions is in flight; with the
    labels (:class:`_Labels`). A warp's rows follow each other (a row's ``arrive`` is the
    previous one's ``leave``), so each cycle of a warp is one row's: every row's cycles are
    written at once, and the waits charged per warp (:func:`_charge_waits`)."""
    nw = trace.num_warps
    arrive, issue = result.op_time("arrive"), result.op_time("issue")
    leave, complete = result.op_time("leave"), result.op_time("complete")
    total = int(max(leave.max(initial=0), complete.max(initial=0))) + 1
    names, code = _codes(label)
    op, warp = trace.op, trace.warp.astype(np.int64)
    lds = op < NUM_LDS_OPS
    waits = (op == WAIT_DS) | (op == WAIT_TENSOR)
    kind = np.select([lds, waits, op == BARRIER], [ISSUE, WAIT, AT_BARRIER], WORK)
    rows, cycle = _cells(arrive, leave)
    at = (warp[rows], cycle)
    state = np.zeros((nw, total), np.int8)
    state[at] = kind[rows]
    iter_of = np.full((nw, total), -1, np.int64)
    iter_of[at] = iteration[rows]
    blame = np.full((nw, total), -1, np.int64)
    issuing = lds[rows]
    blame[warp[rows[issuing]], cycle[issuing]] = code[rows[issuing]]
    flight = np.zeros((nw, total + 1), np.int64)
    np.add.at(flight, (warp[lds], issue[lds]), 1)
    np.add.at(flight, (warp[lds], complete[lds]), -1)
    # wait_ds counts the DS loads and stores (LDS rows but TDM), wait_tensor the TDM
    # instructions' last rows
    counted = {WAIT_DS: lds & (op != TDM), WAIT_TENSOR: (op == TDM) & (trace.arg == 1)}
    for wait_op, counts in counted.items():
        mine = op[rows] == wait_op
        _charge_waits(warp, counts, complete, code, rows[mine], cycle[mine], leave, blame)
    in_flight = np.cumsum(flight, axis=1)[:, :total] > 0
    return _Labels(names, code), state, blame, iter_of, in_flight


def _codes(label: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct labels as text, sorted, and each row's index into them (as ``np.unique(
    label.astype(str), return_inverse=True)``, without sorting every row: a few hundred differ)
    >>> [x.tolist() for x in _codes(np.array(["b", "a", None, "b"], dtype=object))]
    [['None', 'a', 'b'], [2, 1, 0, 2]]
    """
    text = list(map(str, label.tolist()))
    names = sorted(set(text))
    where = {t: k for k, t in enumerate(names)}
    code = np.fromiter(map(where.__getitem__, text), dtype=np.intp, count=len(text))
    return np.array(names, dtype=str), code


def _cells(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every cycle ``[start, end)`` of every row, as (row, cycle) arrays.

    >>> [x.tolist() for x in _cells(np.array([0, 2, 2]), np.array([2, 2, 5]))]
    [[0, 0, 2, 2, 2], [0, 1, 2, 3, 4]]
    """
    length = np.maximum(end - start, 0)
    rows = np.repeat(np.arange(len(start)), length)
    first = np.cumsum(length) - length  # each row's first cell
    return rows, start[rows] + np.arange(len(rows)) - first[rows]


def _charge_waits(warp, counts, complete, code, rows, cycle, leave, blame) -> None:
    """Charge the wait cycles ``cycle`` (of wait rows ``rows``, which end at ``leave``): a
    cycle ``t`` of a wait to the first of its warp's earlier ``counts`` rows (by completion,
    then row) completing after ``t`` and by the wait's end: each stretch of a wait up to a
    completion it waited for goes to that row; none after the last. A row after the wait
    issues at its end or later and completes ``lds_latency`` >= 1 cycles on, so it is never
    the one found.

    A warp's loads complete at 1, 6 and 4 (codes 7, 8, 9) and it waits in cycles 2..7:

    >>> blame = np.full((1, 10), -1)
    >>> _charge_waits(np.zeros(4, int), np.array([1, 1, 1, 0]), np.array([1, 6, 4, -1]),
    ...     np.array([7, 8, 9, 0]), np.full(6, 3), np.arange(2, 8), np.array([0, 0, 0, 8]), blame)
    >>> blame.tolist()
    [[-1, -1, 9, 9, 8, 8, -1, -1, -1, -1]]
    """
    loads = np.flatnonzero(counts)
    loads = loads[np.lexsort((loads, complete[loads], warp[loads]))]  # by warp, completion, row
    done, w = complete[loads], warp[rows]
    lo = min(done.min(initial=0), cycle.min(initial=0))
    span = max(done.max(initial=0), cycle.max(initial=0)) - lo + 1  # a warp's keys apart
    k = np.searchsorted(warp[loads] * span + done - lo, w * span + cycle - lo, side="right")
    ok = k < len(loads)  # the first of its warp's completing after t, if its warp's
    ok[ok] = (warp[loads[k[ok]]] == w[ok]) & (done[k[ok]] <= leave[rows[ok]])
    blame[w[ok], cycle[ok]] = code[loads[k[ok]]]


def _per_op(names, code, lds, op, iteration, steady, per, nw, result, blame, exposed, in_steady):
    """Per op (label) of the steady LDS rows: ``OP_COLUMNS``, most exposed first (ties in
    label order)."""
    rows = lds & (iteration >= steady)
    exp = (exposed & in_steady) & (blame >= 0)
    charged = np.bincount(blame[exp], minlength=len(names)) / (per * nw)
    _, grant_row, grant_cycles = result.granted()
    conflict = np.zeros(len(iteration), np.int64)
    np.add.at(conflict, grant_row, grant_cycles - 1)
    stall = result.op_time("stall_cycles")
    lat = result.op_time("complete") - result.op_time("issue")
    keys = np.flatnonzero(np.bincount(code[rows]))  # the labels present (np.unique: numpy.ma)
    out = {c: np.zeros(len(keys)) for c in OP_COLUMNS[2:]}
    op_name, kind = np.empty(len(keys), object), np.empty(len(keys), object)
    for i, k in enumerate(keys):
        mine = rows & (code == k)
        op_name[i], kind[i] = str(names[k]), "tdm" if (op[mine] == TDM).all() else "ds"
        out["instructions"][i] = mine.sum() / (per * nw)
        out["exposed"][i] = charged[k]
        out["latency"][i] = lat[mine].mean()
        out["bank_conflict_cycles"][i] = conflict[mine].sum() / per
        out["partition_stall_cycles"][i] = stall[mine].sum() / per
    total = out["exposed"].sum()
    out["exposed_share"] = out["exposed"] / total if total else np.zeros(len(keys))
    order = np.argsort(-out["exposed"], kind="stable")  # as pandas' stable descending sort
    return _table({"op": op_name[order], "kind": kind[order]} | {c: out[c][order] for c in out})


def _port_busy(result, iteration, steady, total) -> int:
    """Cycles in which some port serves a pass of a steady iteration's row."""
    start, row, cycles = result.granted()
    steady_rows = iteration[row] >= steady
    start, cycles = start[steady_rows], cycles[steady_rows]
    busy = np.zeros(total + 1, np.int64)
    np.add.at(busy, start, 1)
    np.add.at(busy, start + cycles, -1)
    return int((np.cumsum(busy) > 0).sum())


def _table(columns: dict[str, np.ndarray]) -> Columns:
    """numpy columns as a table of plain values (in ``WARP_COLUMNS`` / ``OP_COLUMNS`` order)."""
    names = WARP_COLUMNS if "warp" in columns else OP_COLUMNS
    return Columns({n: tuple(columns[n].tolist()) for n in names})


def _mean(column: np.ndarray) -> float:
    """The mean as pandas takes it (the sum over the count)."""
    return float(column.sum() / len(column)) if len(column) else float("nan")


def number_text(x: float) -> str:
    """A figure as printed: whole numbers without decimals, else one decimal."""
    return f"{x:.0f}" if abs(x - round(x)) < 0.05 else f"{x:.1f}"

"""wgpsim against the corpus of real Triton 3.9.0 gfx1250 compiles (``tests/corpus``).

For every LDS load and store of the corpus, ``wgpsim.lower`` must give the instruction kinds and
counts per warp that the gfx1250 assembly holds for that op (``expected.json``, measured by
one-op probe kernels); for every case, ``wgpsim.hw.alloc`` must place the buffers at Triton's
``allocation.offset`` with Triton's ``ttg.shared``; every encoding of an LDS op must parse; and
every ``#ttg`` text wgpsim prints must parse in Triton 3.9.0 (live, ``triton``).

What wgpsim does not model yet is an xfail (strict) naming the item of issue 11 ("Every LDS
access Triton 3.9.0 emits for gfx1250"), decided from what the fixture shows (a ``2addr`` in
the assembly, a store, a view, ...), never from what wgpsim answers. When an item lands its
cases XPASS, which fails the run: remove the item from ``GAPS`` below. ``test_summary`` prints
how many cases each test holds, passing and expected to fail, per item.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter

import corpus
import pytest
from corpus import ttgir_text

from wgpsim.errors import WgpsimError
from wgpsim.frontend.ttgir import read_ttgir
from wgpsim.hw.alloc import allocate, tensor_buffers
from wgpsim.kernel.lowering import allocate_kernel
from wgpsim.layout.dtypes import dtype_bytes
from wgpsim.layout.notation import parse, to_text
from wgpsim.layout.views import SharedView
from wgpsim.trace.lowering import lower
from wgpsim.trace.lowering_packed import lower_packed_transposed

#: The items of issue 11 that wgpsim does not model yet; remove one when it lands. The checks
#: below know every item ("1", "2", "3", "4-shared_linear", "4-slice", "4-rank3", "5", "6", "7",
#: "7-alloc", "9", "10", "10-d16_hi", "scratch"); put one back here if it regresses.
GAPS: dict[str, str] = {}

ACCESSES = corpus.accesses()
CASES = corpus.cases()
_BYTES_PER_LANE = re.compile(r"_b(\d+)$")


def _xfail(reason: str | None):
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


def _bases(access: corpus.Access) -> list[int] | int:
    """LDS byte address of each partition buffer of the access's allocation (the case's buffer
    of the same memdesc type, else one partition per 64 KiB)."""
    case = CASES[access.case]
    for b in case.buffers:
        if (
            b["type"]
            and ttgir_text.memdesc(b["type"]).encoding
            == ttgir_text.memdesc(access.memdesc).encoding
        ):
            return b["offsets"] if len(b["offsets"]) > 1 else b["offsets"][0]
    parts = re.search(r"numPartitions = (\d+)", access.shared)
    return [p * 65536 for p in range(int(parts[1]))] if parts else 0


def access_gap(a: corpus.Access, *, assembly: bool = True) -> str | None:
    """The first item of issue 11 an access needs that wgpsim lacks (``GAPS``), from the
    fixture's facts.

    ``assembly=False``: for the comparison with Triton's LLVM-dialect lowering, where LLVM's
    pairing and deduplication (items 1, 2) do not show."""
    low, asm = a.triton_lowering or {}, a.instructions or {}
    needs = [
        ("10", a.kind == "store"),
        ("3", a.op == "amdg.local_load_packed_transposed"),
        ("4-shared_linear", "#ttg.shared_linear" in a.shared),
        ("4-slice", a.dst.startswith("#ttg.slice")),
        ("4-rank3", len(a.shape) == 3 and "amd_wmma" in a.dst),
        ("5", bool(a.views) or bool(a.alloc_shape and a.alloc_shape != a.shape)),
        ("7", inner_shape_differs(a.shared, a.alloc_shape or a.shape)),
        ("10-d16_hi", assembly and any(k.endswith("_d16_hi") for k in asm)),
        ("1", assembly and any("2addr" in k for k in asm)),
        ("2", assembly and any(asm.get(k, 0) < v for k, v in low.items())),
    ]
    return next((GAPS[item] for item, needed in needs if needed and item in GAPS), None)


def inner_shape_differs(text: str, shape) -> bool:
    """A partitioned layout whose padded inner layout carries a shape other than the piece's."""
    if "#ttg.partitioned_shared" not in text or "#ttg.padded_shared" not in text:
        return False
    layout = parse(text)
    piece = list(shape)
    piece[layout.partition_dim] //= layout.num_partitions * layout.num_groups
    inner = layout.partition_layout
    return inner.shape is not None and tuple(inner.shape) != tuple(piece)


def alignment_gap(a: corpus.Access) -> str | None:
    """Item 6: a padding of fewer bytes than the instruction reads per lane."""
    if "6" not in GAPS:
        return None
    pads = [int(p) for p in re.findall(r":\+(\d+)", a.shared)]
    widths = [int(m[1]) // 8 for k in a.instructions or {} if (m := _BYTES_PER_LANE.search(k))]
    if pads and widths and min(pads) * dtype_bytes(a.dtype) % max(widths):
        return GAPS["6"]
    return None


def _params(items, gap, ids):
    return [pytest.param(x, marks=_xfail(gap(x)), id=ids(x)) for x in items]


MEASURED = [a for a in ACCESSES if a.instructions is not None]
LOWER_CASES = _params(MEASURED, access_gap, lambda a: a.id)
DIALECT_CASES = _params(
    [a for a in MEASURED if a.triton_lowering is not None],
    lambda a: access_gap(a, assembly=False),
    lambda a: a.id,
)
TRACE_CASES = _params([a for a in MEASURED if access_gap(a) is None], alignment_gap, lambda a: a.id)


def shared_of(a: corpus.Access):
    """What the access reads: the encoding, or the view (``SharedView``) the kernel takes of
    its allocation, dynamic indices taken as 0."""
    if a.root is not None and a.views:
        md = ttgir_text.memdesc(a.root_type)
        layout = parse(corpus.resolve(md.encoding, CASES[a.case].aliases))
        view = SharedView.of(layout, md.alloc_shape or md.shape)
        for v in a.views:
            result = ttgir_text.memdesc(v["type"])
            if v["op"] == "ttg.memdesc_index":
                view = view.index(0)
            elif v["op"] == "ttg.memdesc_subslice":
                offsets = [int(x) for x in re.search(r"\[([\d, ]+)\]", v["attrs"])[1].split(",")]
                view = view.subslice(offsets, result.shape)
            elif v["op"] == "ttg.memdesc_trans":
                view = view.trans(
                    [int(x) for x in re.search(r"i32: ([\d, ]+)>", v["attrs"])[1].split(",")]
                )
            elif v["op"] == "ttg.memdesc_reshape":
                view = view.reshape(result.shape)
            else:
                raise AssertionError(f"unknown view {v['op']}")
        return view
    if a.alloc_shape and a.alloc_shape != a.shape:  # a loop-carried view: its offsets unknown
        view = SharedView.of(parse(a.shared), a.alloc_shape)
        return view.subslice((0,) * len(a.shape), a.shape)
    return a.shared


def _lower(a: corpus.Access):
    if a.op == "amdg.local_load_packed_transposed":
        mem = ttgir_text.memdesc(a.memdesc).shape
        return lower_packed_transposed(shared_of(a), a.dst, mem, bases=_bases(a))
    store = a.kind == "store"
    return lower(shared_of(a), a.dst, a.shape, a.dtype, bases=_bases(a), store=store)


@pytest.mark.parametrize("access", LOWER_CASES)
def test_lower_matches_assembly(access):
    """wgpsim's instructions per warp are the ones the gfx1250 assembly holds for the op."""
    assert _lower(access).counts == access.instructions


@pytest.mark.parametrize("access", DIALECT_CASES)
def test_lower_matches_triton_lowering(access):
    """...and the ones Triton's LLVM-dialect lowering asks for, before LLVM's passes."""
    assert _lower(access).dialect_counts == access.triton_lowering


@pytest.mark.parametrize("access", TRACE_CASES)
def test_trace_builds(access):
    """What the compiler emits, the simulator accepts: the load's trace builds."""
    trace = _lower(access).trace()
    assert trace.num_warps == CASES[access.case].num_warps


# ------------------------------------------------------------------------------ allocation


def _dtype_bytes(elem: str) -> int:
    return dtype_bytes(corpus.DTYPES.get(elem, elem))


def allocation_gap(case: corpus.Case) -> str | None:
    if any(b["op"] != "ttg.local_alloc" for b in case.buffers):
        return GAPS.get("scratch")
    for b in case.buffers:
        enc = corpus.resolve(ttgir_text.memdesc(b["type"]).encoding, case.aliases)
        if "#ttg.shared_linear" in enc and "4-shared_linear" in GAPS:
            return GAPS["4-shared_linear"]
        md = ttgir_text.memdesc(b["type"])
        if "7-alloc" in GAPS and inner_shape_differs(enc, md.alloc_shape or md.shape):
            return GAPS["7-alloc"]
    return None


def wgpsim_allocation(case: corpus.Case):
    """wgpsim's allocator on the case's local_allocs, live ranges read from the TTGIR."""
    live = ttgir_text.live_ranges(case.ttgir)
    buffers = []
    for b in case.buffers:
        md = ttgir_text.memdesc(b["type"])
        layout = parse(corpus.resolve(md.encoding, case.aliases))
        buffers += tensor_buffers(
            f"b{b['index']}",
            layout,
            md.alloc_shape or md.shape,
            _dtype_bytes(md.elem),
            live=live[b["index"]],
        )
    return allocate(buffers, capacity=None)


ALLOC_CASES = _params(list(CASES.values()), allocation_gap, lambda c: c.name)


@pytest.mark.parametrize("case", ALLOC_CASES)
def test_allocation_matches_triton(case):
    """Every buffer at Triton's allocation.offset, and the kernel's LDS bytes = ttg.shared
    (a case with scratch through the kernel model, which sizes it: `wgpsim.hw.scratch`)."""
    if any(b["op"] != "ttg.local_alloc" for b in case.buffers):
        alloc = allocate_kernel(read_ttgir(case.ttgir))
        got = {
            b["name"]: list(alloc.wgpsim_offsets.get(b["name"], ()))
            or list(alloc.wgpsim_offsets.get(f"scratch:{b['name']}", ()))
            for b in case.buffers
        }
        want = {b["name"]: b["offsets"] for b in case.buffers}
        assert (got, alloc.lds_bytes) == (want, case.ttg_shared)
        return
    placed = wgpsim_allocation(case)
    got = {b["name"]: placed.offsets_of(f"b{b['index']}") for b in case.buffers}
    want = {b["name"]: b["offsets"] for b in case.buffers}
    assert (got, placed.size) == (want, case.ttg_shared)


REJECTED = corpus.rejected()


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_refused_allocation_is_a_clear_error(name):
    """An allocation Triton refuses to compile (issue 11 item 7) is a domain error in wgpsim,
    not an allocation."""
    info = REJECTED[name]
    assert info["rejected"], f"Triton 3.9.0 compiled {name} (expected: {info['expects']})"
    shape, dtype, encoding = info["alloc"]
    with pytest.raises(WgpsimError):
        allocate(tensor_buffers("t", parse(encoding), shape, dtype_bytes(dtype)), capacity=None)


# ------------------------------------------------------------------------------- encodings


def _encodings() -> dict[str, str]:
    """Every distinct encoding of an LDS op or buffer (aliases resolved) -> the gap it shows."""
    out: dict[str, str] = {}
    for case in CASES.values():
        aliases = case.aliases
        for op in case.ops:
            for ty in op["types"]:
                if ty.startswith("!ttg.memdesc<"):
                    enc = ttgir_text.memdesc(ty).encoding
                elif ty.startswith("tensor<"):
                    enc = ttgir_text.tensor(ty).encoding
                else:
                    continue
                if enc:
                    out.setdefault(corpus.resolve(enc, aliases), case.name)
    return out


def encoding_gap(text: str) -> str | None:
    needs = [
        ("4-shared_linear", text.startswith("#ttg.shared_linear")),
        ("4-slice", text.startswith("#ttg.slice")),
        ("4-rank3", bool(re.search(r"amd_wmma<\{[^}]*warp = \[\[\d+, \d+, \d+\]", text))),
    ]
    return next((GAPS[item] for item, needed in needs if needed and item in GAPS), None)


ENCODINGS = _encodings()
ENCODING_CASES = _params(sorted(ENCODINGS), encoding_gap, lambda t: t[:90])


@pytest.mark.parametrize("text", ENCODING_CASES)
def test_encoding_parses(text):
    """Every encoding the corpus' LDS ops use parses, and prints back to text that parses."""
    layout = parse(text)
    assert parse(to_text(layout)) == layout


# Triton aborts the process on an attribute it cannot parse: each text is parsed in a fork.
REPARSE = r"""
import json, os, sys, tempfile
from triton._C.libtriton import ir, amd
out = []
for text in json.loads(sys.stdin.read()):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write("#x = " + text + "\nmodule {\n}\n")
    pid = os.fork()
    if pid == 0:
        os.close(2)
        ctx = ir.context()
        ir.load_dialects(ctx)
        amd.load_dialects(ctx)
        try:
            ir.parse_mlir_module(f.name, ctx)
        except RuntimeError:
            os._exit(1)
        os._exit(0)
    out.append(os.waitpid(pid, 0)[1] == 0)
    os.unlink(f.name)
print(json.dumps(out))
"""


def _printable() -> list[str]:
    texts = []
    for text in sorted(ENCODINGS):
        try:
            texts.append(to_text(parse(text)))
        except WgpsimError:
            continue
    return sorted(set(texts))


PRINTED = _printable()


@pytest.fixture(scope="module")
def triton_parses():
    pytest.importorskip("triton")
    proc = subprocess.run(
        [sys.executable, "-c", REPARSE],
        input=json.dumps(PRINTED),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-500:]
    return dict(zip(PRINTED, json.loads(proc.stdout.strip().splitlines()[-1]), strict=True))


def print_gap(text: str) -> str | None:
    rank3 = re.search(r"amd_wmma<\{[^}]*warp = \[\[\d+, \d+, \d+\]", text)
    return GAPS.get("9") if rank3 and "rank = 3" not in text else None


@pytest.mark.triton
@pytest.mark.parametrize("text", _params(PRINTED, print_gap, lambda t: t[:90]))
def test_printed_text_parses_in_triton(triton_parses, text):
    """Every #ttg text wgpsim prints for a corpus encoding is read by Triton 3.9.0's parser."""
    assert triton_parses[text], text


# --------------------------------------------------------------------------------- summary


def _items_of(reason: str | None) -> str:
    if reason is None:
        return "pass"
    return next(k for k, v in GAPS.items() if v == reason)


def test_summary(capsys):
    """How many cases each test holds: passing, and expected to fail per item of issue 11."""
    rows = {
        "lower_matches_assembly": [access_gap(a) for a in MEASURED],
        "lower_matches_triton_lowering": [
            access_gap(a, assembly=False) for a in MEASURED if a.triton_lowering is not None
        ],
        "trace_builds": [alignment_gap(a) for a in MEASURED if access_gap(a) is None],
        "allocation_matches_triton": [allocation_gap(c) for c in CASES.values()],
        "refused_allocation_is_a_clear_error": [None for _ in REJECTED],
        "encoding_parses": [encoding_gap(t) for t in ENCODINGS],
        "printed_text_parses_in_triton": [print_gap(t) for t in PRINTED],
    }
    loads = sum(a.kind == "load" for a in ACCESSES)
    lines = [
        f"corpus: {len(CASES)} cases, {sum(len(c.ops) for c in CASES.values())} LDS ops, "
        f"{len(ACCESSES)} accesses ({loads} loads, {len(ACCESSES) - loads} stores), "
        f"{len(corpus.distinct(ACCESSES))} distinct, {len(ACCESSES) - len(MEASURED)} unmeasured"
    ]
    for test, gaps in rows.items():
        counts = Counter(_items_of(g) for g in gaps)
        detail = ", ".join(f"item {k}: {v}" for k, v in sorted(counts.items()) if k != "pass")
        lines.append(f"{test}: {len(gaps)} cases, {counts['pass']} pass, xfail {detail or 'none'}")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert len(CASES) >= 10 and all(rows.values())

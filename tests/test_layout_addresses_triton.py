"""Per-lane LDS addresses against Triton 3.9.0's own gfx1250 lowering, views included.

Each case is a module with a ``ttg.local_alloc`` (so the buffer's address is known: the
allocator's offset from ``@global_smem``), optional view ops (``memdesc_index``,
``memdesc_subslice``, ``memdesc_trans``, ``memdesc_reshape``; a trans or reshape result type is
printed from our view's layout, which Triton's verifier accepts only if it equals the layout it
infers) and one ``ttg.local_load``. A child process lowers it
with Triton's passes to the LLVM dialect; ``llvm_addresses`` evaluates its address arithmetic
for every thread. Per warp, the set of 32-lane address rows of Triton's loads must equal the
rows of ``wgpsim.trace.lowering.lower`` (whose shared argument is a ``SharedView`` built with
the same view ops), and the instruction kinds and counts must agree.
"""

from __future__ import annotations

from collections import Counter

import pytest
from forked import run_forked
from llvm_addresses import lds_loads
from test_trace_lowering import ORACLE

from wgpsim.layout import parse
from wgpsim.layout.distributed import BlockedLayout, SliceLayout
from wgpsim.layout.mma.wmma import AMDWMMALayout, DotOperandLayout
from wgpsim.layout.notation import to_text
from wgpsim.layout.shared import PaddedSharedLayout, PartitionedSharedLayout, SharedLinearLayout
from wgpsim.layout.views import SharedView
from wgpsim.trace.lowering import PLAIN_LOADS, lower

pytest.importorskip("triton")
pytestmark = pytest.mark.triton

MLIR_TYPE = {"fp16": "f16", "bf16": "bf16", "i8": "i8"}
BITS = {"f16": 16, "bf16": 16, "i8": 8, "i32": 32, "f32": 32}
TR = {"llvm.amdgcn.ds.load.tr16.b128": "ds_load_tr16_b128", "llvm.amdgcn.ds.load.tr8.b64": "ds_load_tr8_b64"}  # fmt: skip

WORK = r"""
import tempfile
from triton._C.libtriton import ir, amd

def work(text):
    ctx = ir.context(); ir.load_dialects(ctx); amd.load_dialects(ctx)
    path = os.path.join(tempfile.mkdtemp(), "k.mlir")
    open(path, "w").write(text)
    mod = ir.parse_mlir_module(path, ctx)
    mod.context = ctx
    pm = ir.pass_manager(ctx)
    amd.passes.ttgpuir.add_allocate_shared_memory(pm, "gfx1250")
    amd.passes.ttgpuir.add_to_llvmir(pm, "gfx1250", True)
    amd.passes.ttgpuir.add_builtin_func_to_llvmir(pm, "gfx1250", True)
    pm.run(mod, "addresses")
    return str(mod)
"""


def _apply(view: SharedView, op: str, arg: tuple) -> SharedView:
    """One view op; a trans case also carries the result encoding text (for the MLIR)."""
    return view.trans(arg[0]) if op == "trans" else getattr(view, op)(*arg)


def _part_inner(rows: int, order: tuple[int, int]) -> PartitionedSharedLayout:
    """2 partitions along dim 0 of a 128x64 tensor, the padded inner layout of shape [rows, 64]
    (not the 64x64 piece: Triton clamps it to the piece)."""
    inner = PaddedSharedLayout([(512, 16)], order=order, shape=(rows, 64))
    return PartitionedSharedLayout(2, 1, 0, inner)


def _encoding_text(view: SharedView) -> str:
    """A view's layout (a LinearLayout after trans/reshape) as #ttg text: shared_linear, or
    padded_shared with explicit offset bases when its parent was padded."""
    bases = [list(b) for b in view.linear_layout().get_bases("offset")]
    if view.padding:
        return to_text(PaddedSharedLayout(view.padding, offset_bases=bases))
    return to_text(SharedLinearLayout(bases))


def _dims(shape) -> str:
    return "x".join(map(str, shape))


class Case:
    """An allocation, a chain of views (op, argument), a destination; the MLIR and our view."""

    def __init__(self, name, shared, alloc_shape, views, dst, dtype, warps=4):
        self.name, self.shared, self.alloc_shape = name, shared, tuple(alloc_shape)
        self.views, self.dst, self.dtype, self.warps = views, dst, dtype, warps

    def view(self) -> SharedView:
        view = SharedView.of(self.shared, self.alloc_shape)
        for op, arg in self.views:
            view = _apply(view, op, arg)
        return view

    def mlir(self) -> str:
        ty = MLIR_TYPE[self.dtype]
        enc = to_text(self.shared)

        def memdesc(view: SharedView, encoding: str) -> str:
            alloc = f", {_dims(view.alloc_shape)}" if view.alloc_shape != view.shape else ""
            return f"!ttg.memdesc<{_dims(view.shape)}x{ty}, {encoding}, #smem, mutable{alloc}>"

        view = SharedView.of(self.shared, self.alloc_shape)
        lines = [f"    %v0 = ttg.local_alloc : () -> {memdesc(view, enc)}"]
        for k, (op, arg) in enumerate(self.views):
            src = memdesc(view, enc)
            nxt = _apply(view, op, arg)
            if op == "index":
                lines.append(f"    %c{k} = arith.constant {arg[0]} : i32")
                lines.append(
                    f"    %v{k + 1} = ttg.memdesc_index %v{k}[%c{k}] : {src} -> {memdesc(nxt, enc)}"
                )
            elif op == "subslice":
                offs = ", ".join(map(str, arg[0]))
                lines.append(
                    f"    %v{k + 1} = ttg.memdesc_subslice %v{k}[{offs}] : {src} -> "
                    f"{memdesc(nxt, enc)}"
                )
            elif op == "trans":  # the result encoding: the hand-written one, or ours
                enc = arg[1] if len(arg) > 1 else _encoding_text(nxt)
                order = ", ".join(map(str, arg[0]))
                lines.append(
                    f"    %v{k + 1} = ttg.memdesc_trans %v{k} {{order = array<i32: {order}>}} : "
                    f"{src} -> {memdesc(nxt, enc)}"
                )
            else:  # reshape: our view's layout as the result encoding; Triton's verifier
                enc = _encoding_text(nxt)  # accepts it only if it is the layout Triton infers
                lines.append(
                    f"    %v{k + 1} = ttg.memdesc_reshape %v{k} : {src} -> {memdesc(nxt, enc)}"
                )
            view = nxt
        shape = _dims(view.shape)
        src = memdesc(view, enc)
        return f"""#dst = {to_text(self.dst)}
#smem = #ttg.shared_memory
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {self.warps} : i32, "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func @f(%out: !tt.ptr<{ty}>) {{
{chr(10).join(lines)}
    %a = ttg.local_load %v{len(self.views)} : {src} -> tensor<{shape}x{ty}, #dst>
    %p = tt.splat %out : !tt.ptr<{ty}> -> tensor<{shape}x!tt.ptr<{ty}>, #dst>
    tt.store %p, %a : tensor<{shape}x!tt.ptr<{ty}>, #dst>
    tt.return
  }}
}}
"""


SWZ = parse("#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>")
SWZ_T = "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [0, 1]}>"
PAD = parse("#ttg.padded_shared<[128:+8] {order = [1, 0], shape = [64, 128]}>")
PART = parse(
    "#ttg.partitioned_shared<{numPartitions = 2, numGroups = 2, partitionDim = 0, "
    "partitionLayout = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>}>"
)
PART_PAD = parse(
    "#ttg.partitioned_shared<{numPartitions = 2, numGroups = 1, partitionDim = 0, "
    "partitionLayout = #ttg.padded_shared<[64:+8] {order = [1, 0], shape = [64, 64]}>}>"
)
MMA = AMDWMMALayout(3, False, [[0, 1], [1, 0]], instr_shape=(16, 16, 32))
BLOCKED = BlockedLayout([1, 8], [8, 4], [4, 1], [1, 0])


def cases() -> list[Case]:
    out = [
        Case(name, shared, shape, [], dst, dtype, dst.num_warps if hasattr(dst, "num_warps") else 4)
        for name, shared, dst, shape, dtype, *_ in ORACLE
    ]
    a_op, b_op = DotOperandLayout(0, MMA, 8), DotOperandLayout(1, MMA, 8)
    for offs in ((0, 0), (0, 64), (32, 32), (32, 96)):
        out.append(Case(f"swz_sub{offs}", SWZ, (64, 128), [("subslice", (offs, (32, 32)))], BLOCKED, "fp16"))  # fmt: skip
        out.append(Case(f"pad_sub{offs}", PAD, (64, 128), [("subslice", (offs, (32, 32)))], BLOCKED, "fp16"))  # fmt: skip
    out += [
        Case("swz_sub_a_op", SWZ, (64, 128), [("subslice", ((0, 64), (64, 64)))], a_op, "fp16"),
        Case("pad_sub_b_op", PAD, (64, 128), [("subslice", ((0, 64), (64, 64)))], b_op, "fp16"),
        Case("part_sub", PART, (128, 64), [("subslice", ((64, 32), (32, 32)))], BLOCKED, "fp16"),
        Case("swz_index", SWZ, (3, 64, 128), [("index", (2,))], BLOCKED, "fp16"),
        Case("pad_index", PAD, (2, 64, 128), [("index", (1,))], BLOCKED, "fp16"),
        Case(
            "pad_index_sub",
            PAD,
            (2, 64, 128),
            [("index", (1,)), ("subslice", ((32, 64), (32, 32)))],
            BLOCKED,
            "fp16",
        ),  # fmt: skip
        Case(
            "swz_trans",
            SWZ,
            (64, 128),
            [("trans", ((1, 0), SWZ_T))],
            BlockedLayout([1, 8], [8, 4], [4, 1], [1, 0]),
            "fp16",
        ),  # fmt: skip
        Case(
            "swz_trans_b_op",
            SWZ,
            (64, 128),
            [("trans", ((1, 0), SWZ_T))],
            DotOperandLayout(1, MMA, 8),
            "fp16",
        ),  # fmt: skip
    ]
    # The encodings of issue 11 item 4: a 1-D slice destination, shared_linear, batched WMMA.
    vec1 = parse("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>")
    xor = SharedLinearLayout([[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 8], [2, 16], [4, 32], [8, 0], [16, 0]])  # fmt: skip
    mma3 = AMDWMMALayout(3, False, [[0, 1, 0], [0, 0, 1]], [[1, 0, 0]], (16, 16, 32))
    swz3 = parse("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [2, 1, 0]}>")
    out += [
        Case("part_index", PART, (2, 128, 64), [("index", (1,))], BLOCKED, "fp16"),
        *(
            Case(f"part_inner{m}_{o[0]}{o[1]}", _part_inner(m, o), (128, 64), [], BLOCKED, "fp16")
            for m in (128, 256)
            for o in ((1, 0), (0, 1))
        ),  # fmt: skip
        Case("swz_trans_ours", SWZ, (64, 128), [("trans", ((1, 0),))], BLOCKED, "fp16"),
        Case("pad_trans", PAD, (64, 128), [("trans", ((1, 0),))], BLOCKED, "fp16"),
        Case("swz_reshape", SWZ, (64, 128), [("reshape", ((128, 64),))], BLOCKED, "fp16"),
        Case("pad_reshape", PAD, (64, 128), [("reshape", ((32, 256),))], BLOCKED, "fp16"),
        Case(
            "swz_index_reshape",
            SWZ,
            (2, 64, 128),
            [("index", (1,)), ("reshape", ((128, 64),))],
            BLOCKED,
            "fp16",
        ),  # fmt: skip
        Case("part_pad_index", PART_PAD, (2, 128, 64), [("index", (1,))], BLOCKED, "fp16"),
        Case("slice_rows", vec1, (64,), [], SliceLayout(1, BLOCKED), "fp16"),
        Case("slice_cols", vec1, (64,), [], SliceLayout(0, BLOCKED), "fp16"),
        Case("shared_linear", xor, (32, 64), [], BLOCKED, "fp16"),
        Case("shared_linear_b_op", xor, (32, 64), [], DotOperandLayout(1, MMA, 8), "fp16"),
        Case("batched_a_op", swz3, (2, 64, 64), [], DotOperandLayout(0, mma3, 8), "fp16"),
        Case("batched_b_op", swz3, (2, 64, 64), [], DotOperandLayout(1, mma3, 8), "fp16"),
    ]
    return out


def _name(instr: str) -> str:
    if instr in TR:
        return TR[instr]
    ty = instr.split()[-1]
    lanes, elem = ty[7:-1].split("x") if ty.startswith("vector<") else ("1", ty)
    return PLAIN_LOADS[int(lanes) * BITS[elem]]


@pytest.fixture(scope="module")
def triton_modules():
    todo = cases()
    return todo, run_forked(WORK, [c.mlir() for c in todo])


def test_addresses_match_triton(triton_modules):
    todo, modules = triton_modules
    failed = [c.name for c, m in zip(todo, modules, strict=True) if not isinstance(m, str)]
    assert not failed, f"Triton could not lower {failed}"
    mismatches = []
    for case, module in zip(todo, modules, strict=True):
        bases = [0, 65536] if isinstance(case.shared, PartitionedSharedLayout) else 0
        ours = lower(case.view(), case.dst, case.view().shape, case.dtype, bases=bases)
        theirs = lds_loads(module, 32 * ours.num_warps)
        kinds = Counter(_name(n) for n, _ in theirs)
        if dict(kinds) != ours.dialect_counts:
            mismatches.append(f"{case.name}: triton {dict(kinds)} wgpsim {ours.dialect_counts}")
            continue
        for w in range(ours.num_warps):
            t_rows = sorted(tuple(a[32 * w : 32 * w + 32].tolist()) for _, a in theirs)
            o_rows = sorted(tuple(r) for r in ours.addresses[w].tolist())
            if t_rows != o_rows:
                mismatches.append(f"{case.name} warp {w}: first rows {t_rows[:1]} vs {o_rows[:1]}")
                break
    assert len(todo) == 49  # 16 ds_transpose loads, 23 views, 10 new encodings / inner shapes
    assert not mismatches, "\n".join(mismatches)

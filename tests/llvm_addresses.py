"""Per-lane LDS addresses of Triton's own lowering, read off its LLVM-dialect output.

Triton 3.9.0 lowers a ``local_load`` to straight-line LLVM dialect: integer arithmetic on
``rocdl.workitem.id.x`` and ``rocdl.wave.id``, a ``getelementptr`` from ``@global_smem`` (address 0 here) plus the
allocation offset, and one ``llvm.load`` (or ``ds.load.tr*`` intrinsic; gfx950's
``rocdl.ds.read.tr*`` op) per instruction. This
evaluates that arithmetic for every thread of the workgroup (numpy, one value per thread) and
returns each LDS load's byte addresses, so tests compare wgpsim's addresses with Triton's.
Only the ops such code uses are known; an address that depends on anything else is an error.
"""

from __future__ import annotations

import re

import numpy as np

_ASSIGN = re.compile(r"^\s*(%[\w]+)(?::\d+)? = ([\w.]+)(.*)$")
_REF = re.compile(r"%[\w]+")
_BYTES = {"i8": 1, "i16": 2, "f16": 2, "bf16": 2, "i32": 4, "f32": 4, "i64": 8, "f64": 8}
_BINARY = {
    "llvm.add": np.add,
    "llvm.sub": np.subtract,
    "llvm.mul": np.multiply,
    "llvm.and": np.bitwise_and,
    "llvm.or": np.bitwise_or,
    "llvm.xor": np.bitwise_xor,
    "llvm.shl": np.left_shift,
    "llvm.lshr": np.right_shift,
    "llvm.ashr": np.right_shift,
    "llvm.udiv": np.floor_divide,
    "llvm.sdiv": np.floor_divide,
    "llvm.urem": np.remainder,
    "llvm.srem": np.remainder,
}
_CMP = {
    "eq": np.equal, "ne": np.not_equal, "slt": np.less, "ult": np.less, "sle": np.less_equal,
    "ule": np.less_equal, "sgt": np.greater, "ugt": np.greater, "sge": np.greater_equal,
    "uge": np.greater_equal,
}  # fmt: skip
_IDENTITY = ("llvm.zext", "llvm.sext", "llvm.trunc", "llvm.bitcast", "llvm.ptrtoint",
             "llvm.inttoptr", "llvm.freeze", "rocdl.readfirstlane")  # fmt: skip


_STORE = re.compile(r"^\s*llvm\.store %[\w]+, (%[\w]+).* : ([\w<>]+), !llvm\.ptr<(\d+)>")


def _value(env: dict, ref: str):
    if env.get(ref) is None:
        raise Unknown(f"{ref} is not known")
    return env[ref]


class Unknown(Exception):
    """An address depends on an op this evaluator does not model."""


def lds_loads(module: str, num_threads: int, lanes: int = 32) -> list[tuple[str, np.ndarray]]:
    """(instruction, int64 byte address per thread) of every LDS load, in program order.
    ``instruction``: ``llvm.load <type>`` or the intrinsic's name; ``lanes``: the warp size."""
    return [
        (name, a)
        for name, a in lds_accesses(module, num_threads, lanes)
        if "store" not in name and "atomicrmw" not in name
    ]


def lds_accesses(
    module: str, num_threads: int, lanes: int = 32
) -> list[tuple[str, np.ndarray | None]]:
    """Every LDS load, store, atomic and barrier in program order: (``llvm.load <type>`` /
    ``llvm.store <type>`` / ``llvm.atomicrmw <kind> <type>`` / an intrinsic's name, int64 byte
    address per thread), and
    (``barrier``, None) for each ``rocdl.s.barrier``. A store in the block a known
    ``llvm.cond_br`` condition guards (Triton's predicated ``storeShared``) has address -1 in the
    threads whose condition is false. ``lanes``: the warp size (``rocdl.wave.id`` is
    ``tid // lanes``; gfx9's lowering computes it from ``workitem.id.x`` and
    ``rocdl.readfirstlane``, the same value in every lane of a warp)."""
    tid = np.arange(num_threads, dtype=np.int64)
    env: dict[str, object] = {}
    loads = []
    guards: dict[str, np.ndarray] = {}  # block label -> the condition of entering it
    guard = None  # the condition of the current block, when known

    def val(ref: str):
        if ref not in env or env[ref] is None:
            raise Unknown(f"{ref} is not known")
        return env[ref]

    for line in module.splitlines():
        line = re.sub(r" loc\(.*\)$", "", line)
        m = _ASSIGN.match(line)
        if not m:
            label = re.match(r"^\s*(\^\w+):", line)
            branch = re.match(r"^\s*llvm\.cond_br (%[\w]+), (\^\w+)", line)
            if label:
                guard = guards.get(label.group(1))
            elif branch and env.get(branch.group(1)) is not None:
                guards[branch.group(2)] = np.broadcast_to(env[branch.group(1)], tid.shape)
            st = _STORE.match(line)
            if st and st.group(3) == "3":
                where = np.broadcast_to(_value(env, st.group(1)), tid.shape).copy()
                if guard is not None:
                    where[guard == 0] = -1
                loads.append((f"llvm.store {st.group(2)}", where))
            elif line.strip().startswith("rocdl.s.barrier"):
                loads.append(("barrier", None))
            continue
        res, op, rest = m.groups()
        refs = _REF.findall(rest)
        try:
            if op == "llvm.mlir.constant":
                c = re.match(r"\((-?\d+) : i\d+\)", rest.strip())
                flag = re.match(r"\((true|false)\)", rest.strip())
                env[res] = np.int64(int(c.group(1))) if c else None
                if flag:
                    env[res] = np.int64(flag.group(1) == "true")
            elif op == "llvm.mlir.addressof":
                env[res] = np.int64(0)
            elif op in ("llvm.mlir.undef", "llvm.mlir.poison", "llvm.mlir.zero"):
                n = re.search(r"vector<(\d+)x", rest)
                env[res] = [np.int64(0)] * int(n.group(1)) if n else np.int64(0)
            elif op == "rocdl.workitem.id.x":
                env[res] = tid
            elif op == "rocdl.wave.id":
                env[res] = tid // lanes
            elif op in _BINARY:
                a, b = val(refs[0]), val(refs[1])
                env[res] = _BINARY[op](np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
            elif op == "llvm.icmp":
                pred = re.match(r'\s*"(\w+)"', rest).group(1)
                env[res] = _CMP[pred](val(refs[0]), val(refs[1])).astype(np.int64)
            elif op == "llvm.select":
                env[res] = np.where(val(refs[0]), val(refs[1]), val(refs[2]))
            elif op in _IDENTITY:
                env[res] = val(refs[0])
            elif op == "llvm.getelementptr":
                base = val(refs[0])
                elem = rest.rsplit(",", 1)[1].strip()
                idx = refs[1] if len(refs) > 1 else None
                if idx is None:
                    const = re.search(r"\[(-?\d+)\]", rest)
                    offset = np.int64(int(const.group(1)))
                else:
                    offset = val(idx)
                env[res] = base + offset * _BYTES[elem]
            elif op == "llvm.insertelement":
                vec = list(val(refs[1]))
                at = np.asarray(val(refs[2]))
                if at.ndim:
                    raise Unknown("insertelement at a per-thread index")
                vec[int(at)] = val(refs[0])
                env[res] = vec
            elif op == "llvm.extractelement":
                vec, at = val(refs[0]), np.asarray(val(refs[1]))
                if isinstance(vec, list):
                    stack = np.stack([np.broadcast_to(v, tid.shape) for v in vec])
                    env[res] = (
                        stack[np.broadcast_to(at, tid.shape), tid] if at.ndim else vec[int(at)]
                    )
                else:
                    env[res] = None  # an element of loaded data
            elif op == "llvm.call_intrinsic":
                name = re.match(r'\s*"([\w.]+)"', rest).group(1)
                if "readfirstlane" in name:
                    env[res] = val(refs[0])
                elif "ds.load" in name or "ds.read" in name:
                    loads.append((name, np.broadcast_to(val(refs[0]), tid.shape).copy()))
                    env[res] = None
                else:
                    env[res] = None
            elif op.startswith("rocdl.ds.read.tr"):  # gfx950's transposed loads, as ops
                loads.append((op, np.broadcast_to(val(refs[0]), tid.shape).copy()))
                env[res] = None
            elif op == "llvm.atomicrmw" and "!llvm.ptr<3>" in rest:
                kind = rest.split()[0]
                ty = rest.rsplit(",", 1)[1].strip()
                where = np.broadcast_to(val(refs[0]), tid.shape).copy()
                loads.append((f"llvm.atomicrmw {kind} {ty}", where))
                env[res] = None
            elif op == "llvm.load" and "!llvm.ptr<3>" in rest:
                ty = rest.split("->")[1].strip()
                loads.append((f"llvm.load {ty}", np.broadcast_to(val(refs[0]), tid.shape).copy()))
                env[res] = None
            else:
                env[res] = None
        except Unknown:
            env[res] = None
    return loads

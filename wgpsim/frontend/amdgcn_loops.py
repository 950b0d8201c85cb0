"""The instruction stream of a gfx1250 assembly listing, and its loop bodies.

`stream(asm)` reads every instruction of the listing's kernel functions in order into a frozen
`AsmInstr`: its mnemonic, its kind (what the loop timing does with it), its immediates (a DS
instruction's ``offset:``/``offset0:``/``offset1:``, a wait's count) and the ``.loc`` file and
line it follows, with its inlined-at chain (`frames_of`, from the ``.loc`` comment). `loops(asm)` finds each loop body: a label and the last branch back to it
(``s_cbranch_*``/``s_branch``), its instructions from the label to that branch. `straight(asm)`
is the whole function as one body, for a kernel with no loop (the AMD blog's microbenchmark).

Kinds (`KINDS`): ``ds`` (``ds_*`` that access the LDS), ``permute`` (``ds_bpermute_b32``,
``ds_permute_b32``, ``ds_swizzle_b32``: lane permutes through the LDS crossbar), ``wait_ds`` (``s_wait_dscnt``), ``barrier``
(``s_barrier_signal``/``s_barrier_wait``), ``wmma`` (``v_wmma_*``, ``v_swmmac_*``), ``tdm``
(``tensor_load_to_lds``/``tensor_store_from_lds``), ``wait_tensor`` (``s_wait_tensorcnt``),
``async`` (``global_load_async_to_lds_*``), ``wait_async`` (``s_wait_asynccnt``), ``global``
(global/buffer/flat/scratch memory), ``smem`` (scalar memory loads), ``wait_load`` (the other
``s_wait_*cnt``), ``clock`` (``s_get_shader_cycles_u64``, ``s_getreg`` of the cycle counter),
``branch``, ``hint`` (``s_wait_alu``, ``s_delay_alu``, ``s_set_vgpr_msb``, ``s_clause``, ``s_nop``:
scheduling hints and dependency waits), ``valu`` (other ``v_*``) and ``salu`` (other ``s_*``).

>>> asm = '''
... k:
...     .file 1 "/src" "gemm.py"
... .LBB0_1:
...     .loc 1 41 13
...     ds_load_b128 v[1:4], v250 offset:32
...     ds_load_2addr_b64 v[5:8], v2 offset0:1 offset1:9
...     .loc 1 43 15
...     s_wait_dscnt 0x1
...     v_wmma_f32_16x16x32_f16 v[9:16], v[1:8], v[1:8], v[9:16]
...     .loc 1 37 5
...     s_cbranch_scc1 .LBB0_1
... '''
>>> (body,) = loops(asm)
>>> body.label, body.counts()["ds_load_b128"], body.branch.src_line
('.LBB0_1', 1, 37)
>>> [(i.mnemonic, i.kind, i.offsets, i.count, i.src_line) for i in body.instructions[:3]]
[('ds_load_b128', 'ds', (32,), None, 41), ('ds_load_2addr_b64', 'ds', (1, 9), None, 41), \
('s_wait_dscnt', 'wait_ds', (), 1, 43)]
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from wgpsim.errors import ModuleError, shown
from wgpsim.frontend.amdgcn import _FILE, _LOC

__all__ = [
    "KINDS",
    "LANE_PERMUTES",
    "AsmBody",
    "AsmInstr",
    "frames_of",
    "kind_of",
    "loops",
    "straight",
    "stream",
]

#: DS instructions that move data between a warp's lanes through the LDS crossbar without an
#: LDS memory access (LLVM's DS_1A1D_PERMUTE and ds_swizzle: mayLoad = 0, mayStore = 0)
LANE_PERMUTES = ("ds_permute_", "ds_bpermute_", "ds_swizzle_")
KINDS = (
    "ds",
    "permute",
    "wait_ds",
    "barrier",
    "wmma",
    "tdm",
    "wait_tensor",
    "async",
    "wait_async",
    "global",
    "smem",
    "wait_load",
    "clock",
    "branch",
    "hint",
    "valu",
    "salu",
)
_HINTS = ("s_wait_alu", "s_delay_alu", "s_set_vgpr_msb", "s_clause", "s_nop", "s_setprio")
_LABEL = re.compile(r"^([.\w$]+):")
_INSTR = re.compile(r"^\s+([a-z][a-z0-9_]*)\b(.*)$")
_OFFSET = re.compile(r"\boffset([01]?):(0x[0-9a-fA-F]+|\d+)")
_COUNT = re.compile(r"^\s*(0x[0-9a-fA-F]+|\d+)")
_LDS_FLAG = re.compile(r"(?:^|\s)lds(?:\s|$)")
_LGKMCNT = re.compile(r"lgkmcnt\((\d+)\)")
_CLOCK_REG = re.compile(r"SHADER_CYCLES|HW_REG_SHADER_CYCLES", re.I)
#: a frame of a ``.loc`` comment: ``file:line`` or ``file:line:col``
_FRAME = re.compile(r"([^\s@\[\]:;]+):(\d+)(?::\d+)?")


#: mnemonics whose kind depends on their operands (`kind_of`); the others' kinds are memoized
_BY_OPERANDS = ("s_waitcnt", "s_getreg_b32", "global_load_lds_", "buffer_load_")
_KIND_MEMO: dict[str, str] = {}


def _kind(mnemonic: str, operands: str) -> str:
    """`kind_of`, memoized per mnemonic where the operands cannot change it."""
    kind = _KIND_MEMO.get(mnemonic)
    if kind is None:
        kind = kind_of(mnemonic, operands)
        if not mnemonic.startswith(_BY_OPERANDS):
            _KIND_MEMO[mnemonic] = kind
    return kind


def kind_of(mnemonic: str, operands: str = "") -> str:
    """The kind of one instruction (see the module docstring).

    >>> [kind_of(m) for m in ("ds_store_b16", "s_wait_loadcnt", "tensor_load_to_lds", "v_add_f32")]
    ['ds', 'wait_load', 'tdm', 'valu']
    >>> kind_of("ds_bpermute_b32")
    'permute'

    >>> kind_of("s_getreg_b32", "s0, hwreg(HW_REG_SHADER_CYCLES, 0, 20)")
    'clock'

    gfx9 (gfx942, gfx950): one ``s_waitcnt`` waits on the DS (and scalar memory) counter
    ``lgkmcnt`` and the vector memory counter ``vmcnt``; MFMA is the matrix instruction; a
    direct-to-LDS load is ``global_load_lds_*`` or ``buffer_load_* ... lds``:

    >>> [kind_of("s_waitcnt", o) for o in ("lgkmcnt(0)", "vmcnt(2) lgkmcnt(1)", "vmcnt(0)")]
    ['wait_ds', 'wait_ds', 'wait_load']
    >>> kind_of("v_mfma_f32_32x32x8_f16"), kind_of("global_load_lds_dwordx4", "v[2:3], off")
    ('wmma', 'async')
    >>> kind_of("buffer_load_dword", "v1, s[0:3], 0 offen lds"), kind_of("buffer_load_dword", "v1")
    ('async', 'global')
    """
    m = mnemonic
    if m == "s_waitcnt":
        return "wait_ds" if "lgkmcnt" in operands else "wait_load"
    if m.startswith(("global_load_lds_", "buffer_load_")) and (
        m.startswith("global_load_lds_") or _LDS_FLAG.search(operands)
    ):
        return "async"
    if m.startswith(("v_mfma_", "v_smfmac_")):
        return "wmma"
    if m.startswith(LANE_PERMUTES):
        return "permute"
    if m.startswith("ds_"):
        return "ds"
    if m in ("s_wait_dscnt", "s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt"):
        return "wait_ds"
    if m.startswith("s_barrier"):
        return "barrier"
    if m.startswith(("v_wmma_", "v_swmmac_")):
        return "wmma"
    if m in ("tensor_load_to_lds", "tensor_store_from_lds"):
        return "tdm"
    if m == "s_wait_tensorcnt":
        return "wait_tensor"
    if m.startswith("global_load_async_to_lds") or m.startswith("global_store_async_from_lds"):
        return "async"
    if m == "s_wait_asynccnt":
        return "wait_async"
    if m.startswith(("global_", "buffer_", "flat_", "scratch_")):
        return "global"
    if m.startswith(("s_load_", "s_buffer_load_", "s_prefetch_")):
        return "smem"
    if m.startswith("s_wait_") and m.endswith("cnt"):
        return "wait_load"
    if m in ("s_get_shader_cycles_u64", "s_memtime", "s_memrealtime") or (
        m == "s_getreg_b32" and _CLOCK_REG.search(operands)
    ):
        return "clock"
    if m.startswith(("s_cbranch", "s_branch")):
        return "branch"
    if m in _HINTS:
        return "hint"
    if m.startswith("v_"):
        return "valu"
    return "salu"


@dataclass(frozen=True)
class AsmInstr:
    """One instruction: ``line`` is its 1-based line in the listing; ``src_file`` (base name)
        and ``src_line`` the ``.loc`` it follows (None before the first); ``offsets`` a DS
        instruction's immediates (``offset:``, or a 2addr form's ``offset0:``, ``offset1:``; an absent
    one is 0); ``count`` a
        wait's counter value (``s_wait_dscnt 0x1`` -> 1; a combined ``s_wait_loadcnt_dscnt``: its
        DS field, bits 0-5)."""

    line: int
    mnemonic: str
    kind: str
    operands: str
    src_file: str | None
    src_line: int | None
    offsets: tuple[int, ...] = ()
    count: int | None = None
    #: the inlined-at chain of its ``.loc``, innermost first ((src_file, src_line) alone when
    #: nothing was inlined)
    frames: tuple[Frame, ...] = ()

    @property
    def loc(self) -> str:
        """``file:line`` of its ``.loc``, or ``?``."""
        return f"{self.src_file}:{self.src_line}" if self.src_line is not None else "?"

    @property
    def chain(self) -> str:
        """`loc` and, for inlined code, where it was inlined (``standard.py:206 @ k.py:73``)."""
        return " @ ".join([self.loc, *(f"{f}:{n}" for f, n in self.frames[1:])])


@dataclass(frozen=True)
class AsmBody:
    """A loop body (``label``, the instructions from it to ``branch``, the last branch back to
    it, included; ``lines`` the label's and the branch's lines) or, with ``branch`` None, a
    whole function's instructions (``lines``: its first and last instruction's)."""

    label: str
    function: str
    lines: tuple[int, int]
    instructions: tuple[AsmInstr, ...]
    branch: AsmInstr | None

    @property
    def is_loop(self) -> bool:
        return self.branch is not None

    def counts(self, kinds: tuple[str, ...] | None = None) -> dict[str, int]:
        """Mnemonic -> count over the body (only ``kinds`` if given), sorted by name."""
        got = Counter(i.mnemonic for i in self.instructions if kinds is None or i.kind in kinds)
        return dict(sorted(got.items()))


Frame = tuple[str | None, int | None]


def frames_of(loc_line: str, innermost: Frame) -> tuple[Frame, ...]:
    """The inlined-at chain of a ``.loc`` directive, innermost first: the directive's own
    (file, line), then the frames LLVM's verbose listing prints in its comment (``@[ ... ]``
    per inlining level; the cache's ``.amdgcn`` keeps them, so do the corpus fixtures).

    >>> frames_of("\t.loc 2 196 12   ; standard.py:196:12 @[ standard.py:216:16 @[ k.py:39:20 ] ]",
    ...           ("standard.py", 196))
    (('standard.py', 196), ('standard.py', 216), ('k.py', 39))
    >>> frames_of("\t.loc 1 5 0", ("k.py", 5))
    (('k.py', 5),)
    """
    _, _, comment = loc_line.partition(";")
    found = [(f, int(n)) for f, n in _FRAME.findall(comment)]
    if len(found) < 2 or found[0][1] != innermost[1]:
        return (innermost,)
    return (innermost, *found[1:])


def _int(text: str, high: int, what: str, line: int) -> int:
    """An immediate of the listing (``0x1f`` or ``512``) in ``0..high``, the width of its field
    in the instruction's encoding; a ModuleError naming ``line`` otherwise.

    >>> _int("0x3f", 0xFFFF, "s_wait_dscnt count", 7)
    63
    >>> _int("0xffffffffffffffff", 0xFFFF, "s_wait_dscnt count", 7)
    Traceback (most recent call last):
    ...
    wgpsim.errors.ModuleError: assembly line 7: s_wait_dscnt count '0xffffffffffffffff' is out of range (valid: 0..65535, a 16-bit field)
    """
    hexadecimal = text.lower().startswith("0x")
    digits = text[2:] if hexadecimal else text
    value = int(digits, 16 if hexadecimal else 10) if len(digits) <= 20 else None
    if value is None or not 0 <= value <= high:
        raise ModuleError(
            f"assembly line {line}: {what} {shown(text)} is out of range (valid: 0..{high}, "
            f"a {high.bit_length()}-bit field)"
        )
    return value


def _instr(n: int, mnemonic: str, rest: str, where: tuple[Frame, ...]) -> AsmInstr:
    operands = rest.split(";", 1)[0].strip()
    kind = _KIND_MEMO.get(mnemonic) or _kind(mnemonic, operands)
    offsets: tuple[int, ...] = ()
    count = None
    if kind == "ds":
        found = {
            k: _int(v, 0xFF if k else 0xFFFF, f"{mnemonic} offset{k}", n)  # 8-bit pair, 16-bit
            for k, v in _OFFSET.findall(operands)
        }
        keys = ("0", "1") if "2addr" in mnemonic else ("",)
        offsets = tuple(found.get(k, 0) for k in keys)
    elif mnemonic == "s_waitcnt":  # gfx9: the DS count is lgkmcnt(N) (absent: not waited on)
        found_count = _LGKMCNT.search(operands)
        count = _int(found_count.group(1), 0xF, "s_waitcnt lgkmcnt", n) if found_count else None
    elif kind.startswith("wait") and (m := _COUNT.match(operands)):
        count = _int(m.group(1), 0xFFFF, f"{mnemonic} count", n)  # SOPP's 16-bit immediate
        if mnemonic != "s_wait_dscnt" and kind == "wait_ds":
            count &= 0x3F
    (src_file, src_line) = where[0]
    return AsmInstr(n, mnemonic, kind, operands, src_file, src_line, offsets, count, where)


def stream(asm: str, only: tuple[str, ...] | None = None) -> list[tuple[str, AsmInstr | str, int]]:
    """The listing in order: ``("label", name, line)`` for each label and ``("instr",
    AsmInstr, line)`` for each instruction (directives and comments skipped); with ``only``,
    just the instructions whose mnemonic starts with one of those prefixes (a report counting
    its ``ds_*`` builds no record of the other nine in ten). Read once per listing and filter (a
    report reads its kernel's four times): a new list of the same items each call.

    >>> stream("k:\\n  s_endpgm")[0], stream("k:\\n  s_endpgm")[1][1].mnemonic
    (('label', 'k', 1), 's_endpgm')
    >>> stream("k:\\n  s_endpgm\\n  ds_load_b32 v0, v1", only=("ds_",))[1][1].mnemonic
    'ds_load_b32'
    """
    if only is None or asm in _WHOLE:
        whole = _stream(asm)
        if only is None:
            return list(whole)
        return [i for i in whole if i[0] == "label" or i[1].mnemonic.startswith(only)]
    return list(_read(asm, only))


_WHOLE: dict[str, None] = {}
"""The listings ``_stream`` has read whole lately (its cache's keys, at most 4)."""


@lru_cache(maxsize=4)
def _stream(asm: str) -> tuple[tuple[str, AsmInstr | str, int], ...]:
    """The whole listing (`_read`), remembered in `_WHOLE` for `stream`'s filtered reads."""
    _WHOLE[asm] = None
    while len(_WHOLE) > 4:
        del _WHOLE[next(iter(_WHOLE))]
    return _read(asm, None)


@lru_cache(maxsize=4)
def _read(asm: str, only: tuple[str, ...] | None) -> tuple[tuple[str, AsmInstr | str, int], ...]:
    """One pass over the lines, each looked at by its first character: an indented line is an
    instruction (a letter), a directive (``.file``, ``.loc``; a dot) or nothing else; a line at
    column 0 a label (or a directive)."""
    files: dict[str, str] = {}
    where: tuple[Frame, ...] = ((None, None),)
    out: list[tuple[str, AsmInstr | str, int]] = []
    for n, raw in enumerate(asm.splitlines(), start=1):
        head = raw[:1]
        if not head:
            continue
        if head.isspace():
            first = raw.lstrip()[:1]
            if "a" <= first <= "z":
                if (m := _INSTR.match(raw)) and (only is None or m.group(1).startswith(only)):
                    out.append(("instr", _instr(n, m.group(1), m.group(2), where), n))
                continue
            if first != ".":
                continue
        if m := _FILE.match(raw):
            files[m.group(1)] = (m.group(3) or m.group(2)).rsplit("/", 1)[-1]
        elif m := _LOC.match(raw):
            where = frames_of(raw, (files.get(m.group(1)), int(m.group(2))))
        elif not head.isspace() and (m := _LABEL.match(raw)):
            out.append(("label", m.group(1), n))
    return tuple(out)


def _functions(asm: str) -> tuple[tuple[str, tuple[tuple[str, AsmInstr | str, int], ...]], ...]:
    """(function name, its items) for each function: a label not starting with ``.`` opens one."""
    funcs: list[tuple[str, list]] = []
    for item in _stream(asm):
        if item[0] == "label" and not item[1].startswith("."):
            funcs.append((item[1], []))
        elif funcs:
            funcs[-1][1].append(item)
    return tuple(
        (name, tuple(items)) for name, items in funcs if any(it[0] == "instr" for it in items)
    )


_ENDS = ("s_endpgm", "s_setpc_b64")


def _reaches(items: tuple, where: dict[str, int], start: int, end: int) -> bool:
    """Whether control flows from item ``start`` (a label) to item ``end`` (a branch): each
    block falls through to the next unless it ends in ``s_branch``, ``s_endpgm`` or
    ``s_setpc_b64``; a branch also goes to its label (``where``: label -> its item)."""
    todo, seen = [start], set()
    while todo:
        i = todo.pop()
        while i < len(items) and i not in seen:
            seen.add(i)
            k, x, _ = items[i]
            if i == end:
                return True
            if k == "instr" and x.kind == "branch" and x.operands.split()[:1]:
                todo.append(where.get(x.operands.split()[0], len(items)))
                if x.mnemonic == "s_branch":
                    break
            elif k == "instr" and x.mnemonic.startswith(_ENDS):
                break
            i += 1
    return False


_LOOP_NOTE = re.compile(
    r"^([.\w$]+):\s*;.*?(?:=>This (?:Inner )?Loop Header|in Loop: Header=(\S+))"
)


def _llvm_loops(asm: str) -> dict[str, str]:
    """Label -> the header of the LLVM loop its block belongs to, from the comments LLVM's
    listing prints beside block labels (empty when the listing has none).

    >>> _llvm_loops(".LBB0_2:  ;   in Loop: Header=BB0_3 Depth=1\\n.LBB0_3:  ; =>This Loop Header: Depth=1")
    {'.LBB0_2': 'BB0_3', '.LBB0_3': 'BB0_3'}
    """
    out = {}
    for line in asm.splitlines():
        if line[:1] == "." and (m := _LOOP_NOTE.match(line)):
            out[m[1]] = m[2] or m[1].removeprefix(".L")
    return out


def loops(asm: str) -> list[AsmBody]:
    """Every loop body of the listing, in order of their labels (an outer loop's body holds
    its inner loops' instructions once): a label and the last branch back to it, if that
    branch is reached from the label (a block placed before the block that branches to it,
    such as an ``s_endpgm`` exit block, is no loop).

    >>> exit_first = "k:\\n  s_cbranch_scc0 .L2\\n.L1:\\n  s_endpgm\\n.L2:\\n  s_cbranch_scc1 .L1"
    >>> loops(exit_first)
    []

    Where LLVM's listing names each block's loop (``; =>This Loop Header: Depth=1``, ``;   in
    Loop: Header=BB0_3 Depth=1``), one body per LLVM loop, from its first label. A join inside a
    loop body that an else-block placed after the body branches back to (gfx950 listings do
    this) belongs to that loop and is no loop of its own:

    >>> rotated = "\\n".join(["k:", "  s_branch .L3",
    ...     ".L1:  ;   in Loop: Header=BB0_3 Depth=1", "  s_nop 0",
    ...     ".L2:  ;   in Loop: Header=BB0_3 Depth=1", "  s_nop 0",
    ...     ".L3:  ; =>This Loop Header: Depth=1", "  s_cbranch_scc1 .L4", "  s_cbranch_scc0 .L1",
    ...     "  s_endpgm", ".L4:  ;   in Loop: Header=BB0_3 Depth=1", "  s_branch .L2"])
    >>> [b.label for b in loops(rotated)]  # .L2 (up to .L4's branch) would be a second body
    ['.L1']
    """
    return list(_loops(asm))


@lru_cache(maxsize=4)
def _loops(asm: str) -> tuple[AsmBody, ...]:
    """`loops`, read once per listing (a loop timing asks twice: the body, its inner loops)."""
    out = []
    loop_of = _llvm_loops(asm)
    taken: set[str] = set()
    for fname, items in _functions(asm):
        last_back: dict[str, int] = {}  # label -> position of the last branch to it
        where: dict[str, int] = {}  # label -> its position
        for i, (k, x, _) in enumerate(items):
            if k == "label":
                where[x] = i
            elif x.kind == "branch":
                target = x.operands.split()
                if len(target) == 1:
                    last_back[target[0]] = i
        for pos, (kind, label, at) in enumerate(items):
            end_pos = last_back.get(label, -1) if kind == "label" else -1
            if end_pos <= pos or not _reaches(items, where, pos, end_pos):
                continue
            if (llvm_loop := loop_of.get(label)) is not None:
                if llvm_loop in taken:  # a join inside a loop already found
                    continue
                taken.add(llvm_loop)
            body = tuple(x for k, x, _ in items[pos + 1 : end_pos + 1] if k == "instr")
            if body:
                end = items[end_pos][1]
                out.append(AsmBody(label, fname, (at, end.line), body, end))
    return tuple(out)


def straight(asm: str, function: str | None = None) -> AsmBody:
    """The first (or the named) function's instructions as one body, in listing order.

    >>> straight("k:\\n  s_barrier_signal -1\\n  s_barrier_wait -1\\n  s_endpgm").counts()
    {'s_barrier_signal': 1, 's_barrier_wait': 1, 's_endpgm': 1}
    """
    funcs = _functions(asm)
    for fname, items in funcs:
        if function is None or fname == function:
            body = tuple(x for k, x, _ in items if k == "instr")
            return AsmBody(fname, fname, (body[0].line, body[-1].line), body, None)
    names = ", ".join(f for f, _ in funcs) or "none"
    what = "no function" if function is None else f"no function {function!r}"
    raise ModuleError(f"{what} in the assembly (functions: {names}): expected a kernel's listing")

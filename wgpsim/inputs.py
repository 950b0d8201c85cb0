"""Reading what a user gives wgpsim, within limits: text files, YAML, ``--set`` values, JSON.

Every reader here checks what an input would cost before it builds it, and turns anything it
cannot read into one domain error (``error``, a :class:`~wgpsim.errors.WgpsimError`) that names
the input (``where``) and the limit, never into a traceback and never by echoing the input:

* a file is read up to :data:`MAX_TEXT_BYTES` (``--hw /dev/zero`` is refused, not read forever)
  and must be UTF-8;
* YAML nests at most :data:`MAX_DEPTH` levels, expands to at most :data:`MAX_NODES` values
  (anchors and aliases count each time they are used; a recursive alias is refused), and an
  integer has at most :data:`MAX_INT_DIGITS` digits;
* a JSON line obeys the same depth and integer limits;
* a ``--set`` value that begins with ``#`` is that text, not a YAML comment (``#ttg.blocked<...>``).

>>> load_yaml("timing: {lds_latency: 56}", "hw.yaml")
{'timing': {'lds_latency': 56}}
>>> load_yaml("a: " + "[" * 100 + "]" * 100, "hw.yaml")
Traceback (most recent call last):
...
wgpsim.errors.ConfigError: hw.yaml: line 1: nested deeper than 32 levels
>>> load_yaml("timing:\\n  lds_latency: 56\\n  lds_latency: 64\\n", "hw.yaml")
Traceback (most recent call last):
...
wgpsim.errors.ConfigError: hw.yaml: line 3: key 'lds_latency' given twice (first at line 2); keep one
>>> set_value("#ttg.blocked<{order = [1, 0]}>"), set_value("[1, 2]"), set_value("fp16")
('#ttg.blocked<{order = [1, 0]}>', [1, 2], 'fp16')
>>> json_value('{"n": ' + "9" * 40 + "}", "t.jsonl:3", ValueError)
Traceback (most recent call last):
...
ValueError: t.jsonl:3: an integer of 40 digits (at most 20: larger values are never valid)
"""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import yaml

from wgpsim.errors import ConfigError, shown

MAX_TEXT_BYTES = 8 << 20
"""Largest config or text input read (8 MiB; the shipped hardware file is 8 KiB)."""

MAX_DEPTH = 32
"""Deepest nesting of YAML or JSON values (configs nest 4 levels, a trace line 2)."""

MAX_NODES = 1_000_000
"""Most values a YAML document may expand to, aliases counted at every use."""

MAX_INT_DIGITS = 20
"""Most digits of an integer: no field takes a value beyond int64 (19 digits)."""


def available_memory() -> int | None:
    """Bytes this process may still allocate: the smaller of the machine's available memory
    (``MemAvailable``) and what the address-space limit (``ulimit -v``) leaves; None if the
    platform says neither."""
    limits = []
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    limits.append(int(line.split()[1]) * 1024)
    except OSError:
        pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as f:
                used = int(f.read().split()[0]) * resource.getpagesize()
            limits.append(max(0, soft - used))
    except (ImportError, OSError, ValueError):
        pass
    return min(limits) if limits else None


def check_affordable(nbytes: int, what: str, error: type[Exception] = ConfigError) -> None:
    """Refuse, before allocating it, an input that needs more memory than is available:
    ``what`` names it ("t.parquet: 10,000,000 rows").

    >>> check_affordable(1 << 10, "a small trace")
    >>> check_affordable(1 << 62, "t.parquet: 2^56 rows", ValueError)
    Traceback (most recent call last):
    ...
    ValueError: t.parquet: 2^56 rows needs 4,398,046,511,104 MiB, more than the ... MiB this process can still allocate
    """
    free = available_memory()
    if free is not None and nbytes > free:
        raise error(
            f"{what} needs {nbytes >> 20:,} MiB, more than the {free >> 20:,} MiB this process "
            "can still allocate"
        )


def read_text(
    path: str | Path, what: str, error: type[Exception] = ConfigError, *, lenient: bool = False
) -> str:
    """The UTF-8 text of ``path`` (``what`` names it in errors: "hardware config"), read up to
    :data:`MAX_TEXT_BYTES` (``/dev/zero`` is refused). A missing file stays a
    ``FileNotFoundError`` (the CLI names it). ``lenient`` replaces bytes that are not UTF-8
    (a compiler's dump, whose comments may hold any byte) instead of refusing the file."""
    path = Path(path)
    if path.is_dir():
        article = "an" if what[:1] in "aeiou" else "a"
        raise error(f"{path}: is a directory, expected {article} {what} file")
    try:
        with path.open("rb") as f:
            data = f.read(MAX_TEXT_BYTES + 1)
    except FileNotFoundError:
        raise
    except OSError as err:
        why = "a symlink loop" if err.errno == errno.ELOOP else err.strerror or err
        raise error(f"{path}: cannot read the {what} ({why})") from None
    if len(data) > MAX_TEXT_BYTES:
        raise error(f"{path}: larger than {MAX_TEXT_BYTES >> 20} MiB: too big for a {what}")
    if lenient:
        return data.decode("utf-8", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise error(
            f"{path}: cannot read the {what} (not UTF-8 text: byte 0x{data[err.start]:02x} at "
            f"offset {err.start})"
        ) from None


class _Limited(Exception):
    """A limit of this module was hit while composing; carries the message."""


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with the depth and integer limits of this module."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise _Limited(f"line {mark.line + 1}: nested deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node: Any) -> int:
        digits = sum(c.isdigit() for c in str(node.value))
        if digits > MAX_INT_DIGITS:
            raise _Limited(
                f"line {node.start_mark.line + 1}: an integer of {digits} digits (at most "
                f"{MAX_INT_DIGITS}: larger values are never valid)"
            )
        return super().construct_yaml_int(node)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        """A mapping, refusing a key given twice (PyYAML keeps the last, silently); keys a
        merge (``<<: *base``) brings in may be overridden, as YAML says."""
        if isinstance(node, yaml.MappingNode):
            first: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    line = first.setdefault(key, key_node.start_mark.line + 1)
                except TypeError:  # an unhashable key: PyYAML's own error follows
                    continue
                if line != key_node.start_mark.line + 1:
                    raise _Limited(
                        f"line {key_node.start_mark.line + 1}: key {shown(key)} given twice "
                        f"(first at line {line}); keep one"
                    )
        return super().construct_mapping(node, deep=deep)


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)


def _expanded_size(node: Any, sizes: dict[int, int], active: set[int]) -> int:
    """Values ``node`` stands for once every alias is expanded (memoised by node identity)."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in active:
        mark = node.start_mark
        raise _Limited(f"line {mark.line + 1}: an alias refers to a value that contains it")
    active.add(key)
    if isinstance(node, yaml.MappingNode):
        children = [child for pair in node.value for child in pair]
    elif isinstance(node, yaml.SequenceNode):
        children = list(node.value)
    else:
        children = []
    size = 1
    for child in children:
        size += _expanded_size(child, sizes, active)
        if size > MAX_NODES:
            raise _Limited(f"expands to more than {MAX_NODES:,} values (anchors and aliases)")
    active.discard(key)
    sizes[key] = size
    return size


def load_yaml(text: str, where: str, error: type[Exception] = ConfigError) -> Any:
    """``text`` parsed as one YAML document (safe: plain values only), within the limits of the
    module docstring; a syntax error or a limit is one ``error`` naming ``where`` and the line."""
    try:
        loader = _Loader(text)  # its reader refuses control characters at once
    except yaml.YAMLError as err:
        raise error(f"{where}: not valid YAML ({yaml_problem(err)})") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, {}, set())
        return loader.construct_document(node)
    except _Limited as err:
        raise error(f"{where}: {err}") from None
    except yaml.YAMLError as err:
        raise error(f"{where}: not valid YAML ({yaml_problem(err)})") from None
    finally:
        loader.dispose()


def yaml_problem(err: yaml.YAMLError) -> str:
    """One line for a YAML syntax error: the problem and its line (PyYAML's text spans lines)."""
    if isinstance(err, yaml.reader.ReaderError):  # a character YAML does not allow
        return f"character {err.character!r} at offset {err.position} is not allowed in YAML"
    problem = getattr(err, "problem", None) or type(err).__name__
    mark = getattr(err, "problem_mark", None)
    return f"{problem} at line {mark.line + 1}" if mark is not None else problem


def set_value(text: str, where: str = "--set", error: type[Exception] = ConfigError) -> Any:
    """The value of a ``--set key=VALUE`` item: YAML, except that text beginning with ``#`` (a
    ``#ttg`` attribute, which YAML would read as a comment) is that text."""
    if text.lstrip().startswith("#"):
        return text.strip()
    return load_yaml(text, where, error)


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Limited(
            f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS}: larger "
            "values are never valid)"
        )
    return int(text)


def _no_constant(name: str) -> Any:
    raise _Limited(f"{name} is not a JSON number (only finite numbers are)")


def json_value(text: str, where: str, error: type[Exception]) -> Any:
    """``text`` parsed as JSON within the depth and integer limits; ``NaN`` and ``Infinity``
    (which Python's reader accepts, JSON does not) are refused; problems are one ``error``
    naming ``where``.

    >>> json_value('{"dur": Infinity}', "t.json", ValueError)
    Traceback (most recent call last):
    ...
    ValueError: t.json: Infinity is not a JSON number (only finite numbers are)
    """
    try:
        return json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except _Limited as err:
        raise error(f"{where}: {err}") from None
    except RecursionError:  # the C decoder's own depth guard, raised before any value is built
        raise error(f"{where}: nested too deeply (a value here nests a few levels)") from None
    except json.JSONDecodeError as err:
        raise error(f"{where}: not valid JSON ({err.msg} at column {err.colno})") from None


__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_NODES",
    "MAX_TEXT_BYTES",
    "available_memory",
    "check_affordable",
    "json_value",
    "load_yaml",
    "read_text",
    "set_value",
    "yaml_problem",
]

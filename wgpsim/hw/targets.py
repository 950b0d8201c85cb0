"""What makes one hardware file a target: its name as Triton spells it and the LDS instructions
it has (the first ``passes.groupings`` table lists them). ``wgpsim.hw.config_schema`` calls
these while it reads a file.

>>> is_target_name("hip:gfx950"), is_target_name("gfx950")
(True, False)
>>> instruction_set([("blog", (("ds_read2_b32", ((5,),)),))], "hw.yaml")
Traceback (most recent call last):
...
wgpsim.errors.ConfigError: hw.yaml: missing field 'passes.groupings.blog.ds_read_b32' (the target has ds_read2_b32, a pair of ds_read_b32)
"""

from __future__ import annotations

from typing import Any

from wgpsim.errors import ConfigError
from wgpsim.trace.instructions import INSTRUCTIONS

TARGET_PREFIX = "hip:gfx"
"""A ``target:`` is Triton's ``ttg.target`` spelling: ``hip:gfx950``."""


def is_target_name(value: Any) -> bool:
    """Is ``value`` a target as Triton's ``ttg.target`` spells it (``hip:gfx`` + alphanumerics)?"""
    return (
        isinstance(value, str)
        and value.startswith(TARGET_PREFIX)
        and value[len(TARGET_PREFIX) :].isalnum()
    )


def instruction_set(tables: list, source: str) -> None:
    """Check the groupings ``tables`` ([(name, ((op, masks), ...)), ...]): the first lists the
    target's instructions (at least one, and the single twin of each 2addr form it lists); the
    others may only regroup those."""
    first, base = tables[0][0], dict(tables[0][1])
    if not base:
        raise ConfigError(
            f"{source}: field 'passes.groupings.{first}' must list the target's instructions"
        )
    for op in base:
        single = INSTRUCTIONS[op].single
        if single is not None and single not in base:
            raise ConfigError(
                f"{source}: missing field 'passes.groupings.{first}.{single}' "
                f"(the target has {op}, a pair of {single})"
            )
    for name, table in tables[1:]:
        extra = [op for op, _ in table if op not in base]
        if extra:
            raise ConfigError(
                f"{source}: field 'passes.groupings.{name}.{extra[0]}': not an "
                f"instruction of this target (the first grouping, {first!r}, lists them)"
            )

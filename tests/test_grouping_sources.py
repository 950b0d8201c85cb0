"""Each lane grouping's source as data (review 2, item 3): every packaged hardware file gives
``passes.sources``, a kind (measured, document, assumption) per grouping entry, that agrees
with the comment the file cites for the entry; the schema refuses a missing, extra or unknown
kind in one line; the kernel report marks each instruction with it (text and JSON), so gfx950's
``ds_read_b64_tr_b16`` (served like ds_read_b64 by assumption) is flagged beside the measured
``ds_read_b128``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wgpsim.cli import main
from wgpsim.errors import ConfigError
from wgpsim.hw import load_hardware
from wgpsim.hw.config import HardwareConfig
from wgpsim.packaged import hardware_path

TARGETS = ("mi450", "gfx950", "gfx942")
MATMUL_950 = (
    Path(__file__).parent / "corpus_others" / "gfx950" / "fixtures" / "tutorial_matmul_fp16"
)


def _comments(text: str) -> dict[tuple[str, str], str]:
    """Per (grouping, instruction) of ``passes.groupings``, the comment the file gives it: its
    own inline comment, else the comment lines above it (else the last such block above)."""
    body = text.split("\n  groupings:\n", 1)[1].split("\n  sources:", 1)[0].split("\n# ")[0]
    out, block, grouping = {}, [], None
    for line in body.splitlines():
        stripped = line.strip()
        if re.fullmatch(r"    \w+:", line):
            grouping, block = stripped[:-1], []
        elif stripped.startswith("#"):
            block = [] if block and block[-1] is None else block
            block.append(stripped)
        elif ":" in stripped:
            op, _, rest = stripped.partition(":")
            own = rest.split("#", 1)[1] if "#" in rest else ""
            out[(grouping, op)] = own or " ".join(b for b in block if b)
            block.append(None)  # a later comment line starts a new block
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_every_entry_has_a_kind_that_agrees_with_its_comment(target):
    path = hardware_path(target)
    hw = load_hardware(path)
    sources = dict(hw.passes.sources)
    assert [g for g, _ in hw.passes.groupings] == list(sources)
    comments = _comments(path.read_text())
    checked = 0
    for grouping, table in hw.passes.groupings:
        for op, _ in table:
            kind, comment = dict(sources[grouping])[op], comments[(grouping, op)].lower()
            if kind == "measured":
                assert "measured:" in comment and "assumption" not in comment, (op, comment)
            elif kind == "document":
                assert "assumption" not in comment, (op, comment)
            else:
                assert "assumption" in comment, (op, comment)
            checked += 1
    assert checked == sum(len(t) for _, t in hw.passes.groupings)


def test_mi450_sources_name_the_blog_and_tritons_b128_only():
    hw = load_hardware()
    assert hw.grouping_source("ds_load_b128") == "document"
    assert hw.grouping_source("ds_load_tr16_b128") == "assumption"
    triton = hw.with_overrides(**{"passes.lane_grouping": "triton"})
    assert triton.passes.sources == hw.passes.sources  # kept through the overrides round trip
    assert triton.grouping_source("ds_load_b128") == "document"


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: s["blog"].pop("ds_load_b64"), "passes.sources.blog: expected a kind for each"),
        (
            lambda s: s["blog"].update(ds_load_b64="seed"),
            "passes.sources.blog.ds_load_b64: "
            "expected one of measured, document, assumption, got 'seed'",
        ),  # fmt: skip
        (lambda s: s["triton"].update(ds_load_b64="document"), "passes.sources.triton"),
        (lambda s: s.pop("triton"), "a table per grouping (blog, triton)"),
    ],
)
def test_schema_refuses_bad_sources_in_one_line(change, message):
    data = load_hardware().to_dict()
    change(data["passes"]["sources"])
    with pytest.raises(ConfigError) as err:
        HardwareConfig.from_dict(data, "hw.yaml")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_file_without_sources_reads_as_unknown():
    data = load_hardware().to_dict()
    del data["passes"]["sources"]
    assert HardwareConfig.from_dict(data).grouping_source("ds_load_b128") == "unknown"


def test_kernel_report_marks_measured_and_assumed_groupings(capsys):
    assert main(["kernel", str(MATMUL_950), "--json"]) == 0
    ops = json.loads(capsys.readouterr().out)["ops"]
    seen = {k: v for op in ops for k, v in op["grouping_sources"].items()}
    assert seen["ds_read_b128"] == "measured" and seen["ds_read_b64_tr_b16"] == "assumption"
    assert main(["kernel", str(MATMUL_950)]) == 0
    out = capsys.readouterr().out
    assert "x ds_read_b64_tr_b16[a]" in out and "x ds_read_b128[m]" in out
    assert "[m] measured on the chip; [a] assumed" in out


def test_an_overridden_grouping_is_an_assumption():
    """``--set`` or ``with_overrides`` of a grouping entry replaces the file's source: the
    entry it changes reads as an assumption, the others keep their kind."""
    from wgpsim.hw.config import apply_overrides

    hw = load_hardware(hardware_path("gfx950"))
    changed = apply_overrides(hw, ["passes.groupings.measured.ds_read_b128=[[2, 4], [5]]"])
    assert hw.grouping_source("ds_read_b128") == "measured"
    assert changed.grouping_source("ds_read_b128") == "assumption"
    assert changed.grouping_source("ds_read_b64") == "measured"
    same = hw.with_overrides(**{"passes.groupings.measured.ds_read_b128": [[2, 3, 4], [5]]})
    assert same.grouping_source("ds_read_b128") == "measured"


def test_an_emptied_passes_section_is_the_schemas_one_line():
    """Found by the config fuzzer: ``--set passes=`` was an AttributeError while the sources
    followed the groupings."""
    from wgpsim.hw.config import apply_overrides

    with pytest.raises(ConfigError, match="section 'passes' must be a mapping, got None"):
        apply_overrides(load_hardware(), ["passes="])

"""Fuzz compiled-kernel inputs through ``wgpsim kernel``: tritonparse traces (JSON lines of odd
events and payloads) and TTGIR modules with a piece cut out or replaced.

The module edited is a small compile of the corpus (``transpose_fp16``: a local_store and a
local_load, 10 ms a report; an edit of the Gluon GEMM that still parses would take seconds).
The parser's own edge cases are pinned in tests/test_frontend_ttgir.py."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from cli_runner import fuzz
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st
from strategies_fuzz import SCALARS, VALUES

ROOT = Path(__file__).resolve().parents[2]
TTGIR = (ROOT / "tests" / "corpus" / "fixtures" / "transpose_fp16" / "kernel.ttgir").read_text()


@pytest.fixture(scope="module")
def workdir():
    path = Path(tempfile.mkdtemp(prefix="wgpsim-fuzz-kernel-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


TEXTS = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["module {", "}", "#ttg.blocked<{", '"ttg.num-warps" = 4 : i32', "(" * 500]),
    st.integers(1, len(TTGIR)).map(lambda n: TTGIR[:n]),  # a truncated dump
)
PAYLOADS = st.one_of(
    VALUES,
    st.fixed_dictionaries(
        {},
        optional={
            "metadata": st.one_of(VALUES, st.fixed_dictionaries({"name": SCALARS})),
            "file_content": st.one_of(
                VALUES, st.dictionaries(st.sampled_from(["k.ttgir", "k.amdgcn", "x"]), TEXTS)
            ),
        },
    ),
)
EVENTS = st.one_of(
    st.fixed_dictionaries(
        {"event_type": st.sampled_from(["compilation", "launch", ""]) | SCALARS},
        optional={"payload": PAYLOADS},
    ),
    VALUES,
)


@examples(100)
@given(
    st.lists(
        st.one_of(EVENTS.map(json.dumps), st.text(max_size=20), st.just("[" * 3000)), max_size=4
    )
)
def test_tritonparse_traces(workdir, lines):
    path = workdir / "trace.ndjson"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    fuzz("kernel", path, "--json")


CUTS = st.integers(0, len(TTGIR) - 1).flatmap(
    lambda at: st.tuples(st.just(at), st.integers(at + 1, min(len(TTGIR), at + 400)))
)


@examples(100)
@given(CUTS, st.one_of(st.just(""), TEXTS.filter(lambda t: len(t) < 40)))
def test_edited_ttgir(workdir, cut, junk):
    start, end = cut
    text = TTGIR[:start] + junk + TTGIR[end:]
    if text.strip() == TTGIR.strip():
        return
    path = workdir / "k.ttgir"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    fuzz("kernel", path, "--json")

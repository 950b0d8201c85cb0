"""The corpus fixtures are what ``tests/corpus/regenerate.py`` makes today (live, ``triton``).

A few cases are compiled again for gfx1250 the way ``regenerate.py`` does it (a subprocess,
a fresh cache) and must give the stored TTGIR, post-allocation module and assembly byte for
byte; one probe is compiled again and must give the stored instruction counts. Also checked
without triton: every case of ``index.json`` has its files, and the reader of the corpus
finds every op and buffer that ``expected.json`` lists.
"""

from __future__ import annotations

import json

import corpus
import pytest
from corpus import ttgir_text

#: A Gluon kernel (the AMD blog's microbenchmark) and a plain Triton one (BLOCK_K = 16).
LIVE = ["lds_bandwidth_partitioned", "matmul_fp16_k16"]
FILES = ["kernel.ttgir", "kernel.alloc.mlir", "kernel.amdgcn"]


@pytest.fixture(scope="module")
def regenerate():
    pytest.importorskip("triton")
    from corpus import regenerate

    return regenerate


@pytest.mark.triton
@pytest.mark.parametrize("name", LIVE)
def test_regenerate_reproduces_fixture(regenerate, name, tmp_path):
    if name not in corpus.cases():
        pytest.fail(f"{name} is not in the corpus")
    meta, err = regenerate._run_child(["compile", name, str(tmp_path)])
    assert meta is not None, err
    case = corpus.cases()[name]
    for file in FILES:
        assert (tmp_path / file).read_text() == case.text(file), file
    assert meta["shared"] == case.expected["metadata_shared"]


@pytest.mark.triton
def test_probe_reproduces_counts(regenerate):
    access = next(a for a in corpus.cases()[LIVE[0]].accesses if a.kind == "load")
    result, err = regenerate._run_child(["probe", str(access.probe_path)])
    assert result is not None, err
    assert result["probe"] == access.instructions and result["harness"] == {}
    assert result["lowering"] == access.triton_lowering


@pytest.mark.parametrize("name", list(corpus.index()["cases"]))
def test_case_files_and_ops(name):
    """Each listed case compiled, has its files, and its op list matches its TTGIR."""
    info = corpus.index()["cases"][name]
    assert "error" not in info, info.get("error")
    if "rejected" in info:  # refused by Triton, as the case expects: no files
        assert info["rejected"] and info["expects"] in info["rejected"]
        return
    case = corpus.cases()[name]
    for file in info["files"]:
        assert (case.dir / file).is_file(), file
    ops = ttgir_text.ops(case.ttgir)
    for op in case.ops:
        assert ops[[o.line for o in ops].index(op["line"])].op == op["op"]
    assert {b["index"] for b in case.buffers} <= {o.index for o in ops}
    assert json.loads((case.dir / "expected.json").read_text())["name"] == name

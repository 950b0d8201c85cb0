"""The notebooks are stored executed (a reader on a code host sees the outputs), they still run
top to bottom, and their stored text outputs are the ones a fresh run gives.

``python notebooks/execute.py`` re-executes them in place. Figures are not compared (their bytes
depend on the machine's fonts and renderer); text outputs are, with memory addresses masked.
"""

import importlib.util
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

HERE = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(HERE.glob("*.ipynb"))

_spec = importlib.util.spec_from_file_location("execute_notebooks", HERE / "execute.py")
execute_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(execute_notebooks)


def text_outputs(nb) -> list[str]:
    """Per code cell, its text outputs (stdout, results' text/plain, errors) joined (how stdout
    is cut into chunks varies between runs), addresses masked and stderr left out."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        texts = []
        for out in cell.outputs:
            if execute_notebooks.is_stderr(out):
                continue
            if out.output_type == "stream":
                texts.append(out.text)
            elif out.output_type in ("execute_result", "display_data"):
                texts.append(out.get("data", {}).get("text/plain", "") + "\n")
            elif out.output_type == "error":
                texts.append(f"{out.ename}: {out.evalue}\n")
        cells.append(re.sub(r"0x[0-9a-f]+", "0x…", "".join(texts)).rstrip())
    return cells


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stored_executed(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"{path.name}: not executed top to bottom; run python notebooks/execute.py"
    )
    assert any(c.outputs for c in code), path.name
    stored = "".join(nbformat.writes(nb))
    assert "/work/" not in stored and "/home/" not in stored and "/root/" not in stored
    for out in (o for c in code for o in c.outputs):
        assert out.output_type != "error", f"{path.name}: a stored output is an error"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_and_stored_outputs_are_current(path):
    fresh = execute_notebooks.execute(path)
    stored = nbformat.read(path, as_version=4)
    for i, (now, then) in enumerate(zip(text_outputs(fresh), text_outputs(stored), strict=True)):
        assert now == then, f"{path.name}: code cell {i + 1} prints something else now"

"""Execute the notebooks in place, so the committed files show their outputs on a code host.

    python notebooks/execute.py                 # every notebook here
    python notebooks/execute.py lds_bandwidth   # the ones whose name contains a word

Each notebook runs top to bottom in a fresh ``python3`` kernel from this directory, and its
outputs (text and figures) are written back into the ``.ipynb``; stderr (library warnings,
which name paths of this machine) is left out. ``tests/test_notebooks.py``
checks that the stored text outputs are the ones a fresh run gives (figures are not compared
byte for byte: rendering differs between machines).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent


def execute(path: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """``path`` run top to bottom in a fresh kernel (the notebook object, outputs filled)."""
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, kernel_name="python3", timeout=timeout, resources={"metadata": {"path": str(HERE)}}
    )
    client.execute()
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if not is_stderr(o)]
    return nb


def is_stderr(output: nbformat.NotebookNode) -> bool:
    return output.output_type == "stream" and output.get("name") == "stderr"


def main(words: list[str]) -> int:
    paths = sorted(HERE.glob("*.ipynb"))
    for path in paths:
        if words and not any(w in path.stem for w in words):
            continue
        nb = execute(path)
        nb.metadata.pop("widgets", None)
        nbformat.write(nb, path)
        print(f"executed {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

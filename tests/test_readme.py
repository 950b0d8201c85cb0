"""The README's commands work as the README writes them, and so do those of docs/USAGE.md (the
reference the README links to)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from wgpsim.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
USAGE = (ROOT / "docs" / "USAGE.md").read_text()


def _console_commands() -> list[str]:
    blocks = re.findall(r"```console\n(.*?)```", README + USAGE, flags=re.S)
    return [line[2:] for block in blocks for line in block.splitlines() if line.startswith("$ ")]


def test_readme_opens_with_the_two_setup_commands():
    first_block = re.search(r"```bash\n(.*?)```", README, flags=re.S).group(1).splitlines()
    assert first_block[0].endswith("wgpsim run configs/lds_bandwidth.yaml")
    assert first_block[1] == "python -m pip install -e '.[dev,triton]' && python -m pytest"
    ci = (ROOT / ".ci" / "run").read_text()
    assert first_block[1] in ci


@pytest.mark.parametrize("command", _console_commands(), ids=lambda c: " ".join(c.split()[:2]))
def test_readme_command_runs(command, tmp_path, monkeypatch, capsys):
    argv = shlex.split(command)
    assert argv[0] == "wgpsim"
    monkeypatch.chdir(ROOT)
    # Files the command writes go to tmp_path, not into the checkout.
    for i, arg in enumerate(argv[:-1]):
        if arg in ("--timeline", "--timeline-png", "--plot", "--events", "--out"):
            argv[i + 1] = str(tmp_path / Path(argv[i + 1]).name)
    if argv[1] == "run" and "--out" not in argv:
        argv += ["--out", str(tmp_path)]
    assert main(argv[1:]) == 0
    assert capsys.readouterr().out.strip()


def test_console_script_is_installed():
    out = subprocess.run(
        [sys.executable, "-m", "wgpsim", "--help"], capture_output=True, text=True, check=True
    )
    assert "layout" in out.stdout and "run" in out.stdout


def test_broken_pipe_is_quiet():
    """`wgpsim ... --json | head -1` ends quietly with exit 0, as Unix tools do."""
    code = (
        "import os, sys\n"
        "r, w = os.pipe(); os.close(r); os.dup2(w, 1)  # stdout is a pipe nobody reads\n"
        "from wgpsim.cli import main\n"
        "rc = main(['replay', 'examples/traces/two_pairs_conflict.jsonl', '--json'])\n"
        "sys.stderr.write(f'rc={rc}')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.stderr == "rc=0"
    assert proc.returncode == 0


def test_out_that_is_a_file_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    target = tmp_path / "afile"
    target.write_text("keep me")
    assert main(["run", "configs/lds_bandwidth.yaml", "--out", str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out" in err[0] and "is a file" in err[0]
    assert target.read_text() == "keep me"


@pytest.mark.parametrize("doc", ["README.md", "docs/USAGE.md"])
def test_relative_links_resolve(doc):
    text = (ROOT / doc).read_text()
    links = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]
    assert links, doc
    for target in links:
        assert (ROOT / doc).parent.joinpath(target.split("#")[0]).exists(), (doc, target)


def test_readme_own_kernel_commands_are_valid_command_lines():
    """The front page's own-kernel commands (not run here: they need the user's files) use
    verbs and flags that exist; tests/test_cli_compile.py runs the same forms."""
    from wgpsim.cli import _parse

    blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.S)[1:]
    commands = [c for b in blocks for c in b.replace("\\\n", " ").splitlines() if c.strip()]
    commands = [shlex.split(c, comments=True) for c in commands]
    verbs = [argv[1] for argv in commands]
    assert verbs == ["kernel", "kernel", "compile"]
    for argv in commands:
        args = _parse(argv[1:])
        assert args.verb == argv[1]
    compile_args = _parse(commands[-1][1:])
    assert compile_args.constexpr == ["BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=64"]


def test_readme_says_what_a_newcomer_needs():
    """Issue 25: the venv, the checkout root, where results go, how long the suite takes, the
    own-kernel route, and the reference it moved to."""
    for words in (
        "python -m venv",
        "root of the checkout",
        "`results/lds_bandwidth/`",
        "about 4\nminutes",
        "TRITON_CACHE_DIR",
        "wgpsim compile",
        "[docs/USAGE.md](docs/USAGE.md)",
    ):
        assert words in README, words

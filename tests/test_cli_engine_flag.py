"""Every verb that simulates takes one ``--engine``: the same names in the same order, the same
help, the same default, and an unknown name is one line and exit 2."""

import argparse

import pytest

from wgpsim.cli import build_parser, main
from wgpsim.engine import ENGINES


def _verbs() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _engine_help(parser: argparse.ArgumentParser) -> str | None:
    """The ``--engine`` lines of the verb's ``--help`` (None without the flag)."""
    text = parser.format_help()
    if "--engine" not in text:
        return None
    block = text[text.index("  --engine") :].splitlines()
    lines = [block[0]]
    for line in block[1:]:  # the help's wrapped lines, up to the next flag
        if line.lstrip().startswith("-") or not line.strip():
            break
        lines.append(line)
    return " ".join(" ".join(lines).split())


def test_every_verb_shows_the_same_engine_text():
    helps = {name: _engine_help(p) for name, p in _verbs().items()}
    helps = {name: h for name, h in helps.items() if h is not None}
    assert {"kernel", "diff", "lower", "replay"} <= set(helps)
    assert len(set(helps.values())) == 1, helps
    text = helps["replay"]
    assert text.startswith("--engine {" + ",".join(ENGINES) + "} timing engine (default auto")


@pytest.mark.parametrize("verb", ["kernel", "diff", "lower", "replay"])
def test_every_verb_defaults_to_auto(verb):
    action = next(a for a in _verbs()[verb]._actions if "--engine" in a.option_strings)
    assert action.default == "auto"


@pytest.mark.parametrize(
    "argv",
    [
        ["kernel", "examples/kernels/matmul", "--engine", "fast9"],
        ["lower", "--engine=fast9"],
        ["diff", "a", "b", "--engine", "fast9"],
        ["replay", "x.jsonl", "--engine", "fast9"],
    ],
)
def test_unknown_engine_is_one_line_exit_2(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == "wgpsim: error: unknown engine 'fast9' (valid: des, fast, auto)\n"

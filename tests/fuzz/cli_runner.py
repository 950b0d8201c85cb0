"""Run the ``wgpsim`` command in this process as a user would, and check the error contract.

The contract for every input (tests/fuzz and the regression cases): the command succeeds (exit 0)
or prints exactly one line, ``wgpsim: error: ...``, on stderr and exits with code 2. Never a
traceback, never more than one line.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

from wgpsim.cli import main


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str

    def assert_ok_or_one_line(self) -> None:
        """Success, or one ``wgpsim: error:`` line and exit 2."""
        if self.code == 0:
            return
        assert self.code == 2, f"exit {self.code}: {self.err[-2000:]}"
        self.assert_one_line()

    def assert_one_line(self, *fragments: str) -> None:
        """Exit 2 with one error line containing every fragment."""
        assert self.code == 2, f"exit {self.code}, expected 2: {self.err[-2000:]}"
        assert self.err.startswith("wgpsim: error: "), self.err[-2000:]
        assert self.err.count("\n") == 1, self.err[-2000:]
        for fragment in fragments:
            assert fragment in self.err, self.err


def run_cli(*argv: object) -> Outcome:
    """``wgpsim ARGV`` in this process; stdout and stderr captured. argparse usage errors
    (its own exit 2 with a usage line) count as one line too: they are caught here."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exit_:  # argparse: usage + one error line
            code = exit_.code if isinstance(exit_.code, int) else 2
            text = err.getvalue().splitlines()
            err = io.StringIO("wgpsim: error: " + (text[-1] if text else "") + "\n")
    return Outcome(code, out.getvalue(), err.getvalue())

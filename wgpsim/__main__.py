"""``python -m wgpsim`` is the ``wgpsim`` command."""

import sys

from wgpsim.cli import main

if __name__ == "__main__":
    sys.exit(main())

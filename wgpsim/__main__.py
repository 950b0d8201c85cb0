"""``python -m wgpsim`` is the ``wgpsim`` command."""

from wgpsim.cli import entry

if __name__ == "__main__":
    entry()

"""The frozen app's entry point: the ``rnn-designer`` command, as pip installs it.

The app starts its own worker processes (``train --nproc N``, and the window's data-parallel
runs) as ``sys.executable -m designer train ...``. Frozen, ``sys.executable`` is this app, not
a Python interpreter, so it takes ``-m designer`` here to mean what ``python -m designer``
means: the same command line.
"""
import sys

from designer.cli import main


def command_line(argv: list[str]) -> list[str]:
    """The arguments for :func:`designer.cli.main`, without a leading ``-m designer``."""
    return argv[2:] if argv[:2] == ["-m", "designer"] else argv


if __name__ == "__main__":
    sys.exit(main(command_line(sys.argv[1:])))

"""The frozen app's entry point: the ``rnn-designer`` command, as pip installs it."""
import sys

from designer.cli import main

if __name__ == "__main__":
    sys.exit(main())

"""``python -m designer`` runs the ``rnn-designer`` command."""
import sys

from designer.cli import main

sys.exit(main())

"""``python -m fastnet``: the ``fastnet`` command line (see :mod:`fastnet.cli`)."""
import sys

from fastnet.cli import main

if __name__ == "__main__":
    sys.exit(main())

import sys

from fastnet.cli import main

sys.exit(main())

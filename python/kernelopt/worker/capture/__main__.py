"""`python -m kernelopt.worker.capture`: the capture command line (capture.main)."""

import sys

from .capture import main

if __name__ == "__main__":
    sys.exit(main())

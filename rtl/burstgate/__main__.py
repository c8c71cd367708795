"""``python -m burstgate``: the same as the ``burstgate`` command."""

import sys

from .command import main

# Guarded: `burstgate sweep` and `fleet` start Dask worker processes, which re-import the main
# module (multiprocessing's spawn) and must not run the command again.
if __name__ == "__main__":
    sys.exit(main())

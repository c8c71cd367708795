"""``python -m burstgate``: the same as the ``burstgate`` command."""

import sys

from .command import main

sys.exit(main())

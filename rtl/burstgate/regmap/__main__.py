"""``python -m burstgate.regmap``: the same as ``burstgate regs``."""

import sys

from .command import main

sys.exit(main())

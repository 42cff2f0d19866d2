"""``python -m practice 06 DIR``: the same as ``nox -s practice -- 06 DIR``."""

from __future__ import annotations

import sys
from pathlib import Path

from practice.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], invoked_from=Path.cwd()))

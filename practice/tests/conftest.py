"""Make the repository root importable, so the tests can import ``practice`` and ``checkpoints``.

pytest runs with ``--import-mode=importlib``, which does not put the root on ``sys.path``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

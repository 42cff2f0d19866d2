"""Measure what the coding tools' bounds cost: a 1 GB file against a 1 MB one, 100 MB of output.

Three measurements, in one temporary workspace made for the run:

- ``read 2,000 lines``: the first 2,000 lines of a 1 GB file (sparse: 2 MB of text, then zeros
  that take no disk space) and of a 1 MB file, through ``harness.file_tools.read_lines``, the
  bounded line reader every read goes through. The two should cost the same time and the same
  peak memory, within noise: a bounded read never looks past what it returns.
- ``read_file``: one call of the tool's function on each file (it stops at its character cap).
- ``projection``: 100 MB written to a ``Projection`` in 64 KiB chunks; its peak memory.

Times are the median of the repeats (the projection is timed once), peak memory is
``tracemalloc``'s in one more run (Python allocations, the harness's own). A report, not a test:
it exits 0 whatever the numbers are.

    python bench/bench_coding_tools.py --repeats 7
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path

from harness.file_tools import read_file, read_lines
from harness.projection import Projection
from harness.workspace import Workspace, workspace_at

__all__ = ["main"]

_LINE = b"a line of a log file, about sixty bytes long, for the benchmark\n"
_LINES = 2000


def _make_files(root: Path) -> None:
    """Write small.log (1 MB of lines) and big.log (the same start, sparse up to 1 GB)."""
    text = _LINE * (1_000_000 // len(_LINE))
    (root / "small.log").write_bytes(text)
    with open(root / "big.log", "wb") as file:
        file.write(text * 2)
        file.truncate(1 << 30)


def _first_lines(workspace: Workspace, path: str) -> None:
    with open(workspace.open_file(path), "rb") as file:
        for number, _line, _cut in read_lines(file):
            if number == _LINES:
                return


def _measure(action: Callable[[], object], repeats: int) -> tuple[float, int]:
    """Return the median time of ``repeats`` runs, in ms, and the peak memory of one, in bytes."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    tracemalloc.start()
    try:
        action()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return statistics.median(times), peak


def _project_100_mb(workspace: Workspace) -> None:
    chunk = b"x" * 1023 + b"\n"
    chunk *= 64
    with Projection(workspace) as projection:
        for _ in range(100 * 1024 * 1024 // len(chunk)):
            projection.write(chunk)
        projection.finish()


def main(argv: list[str] | None = None) -> int:
    """Run the three measurements and print a table; always return 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per read row (7)")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        _make_files(root)
        workspace = workspace_at(root)
        rows = []
        for label, action in (
            ("read 2,000 lines", _first_lines),
            ("read_file", read_file),
        ):
            small = _measure(partial(action, workspace, "small.log"), options.repeats)
            big = _measure(partial(action, workspace, "big.log"), options.repeats)
            rows.append((label, small, big))
        print(
            f"{'what':<18} {'1 MB: ms':>9} {'peak KiB':>9} {'1 GB: ms':>9} {'peak KiB':>9} "
            f"{'time 1 GB / 1 MB':>17}"
        )
        for label, (small_ms, small_peak), (big_ms, big_peak) in rows:
            print(
                f"{label:<18} {small_ms:>9.2f} {small_peak / 1024:>9.0f} {big_ms:>9.2f} "
                f"{big_peak / 1024:>9.0f} {big_ms / small_ms:>17.2f}"
            )
        projected_ms, projected_peak = _measure(lambda: _project_100_mb(workspace), 1)
        print(
            f"\nprojection of 100 MB in 64 KiB chunks: {projected_ms:.0f} ms, "
            f"peak {projected_peak / 1024:.0f} KiB (the bound: 64 MB)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Measure checkpoint 08's processes: kill latency, sandbox start-up, memory for 100 MB of output.

- kill latency: from a command's timeout to the last process of its group gone, for a group
  that obeys SIGTERM and for one whose grandchild ignores it (which waits for the grace period);
- sandbox start-up: one ``execute_code("pass")`` (probe, isolation, launcher, interpreter)
  against a bare ``python -c pass`` started the same way;
- memory: the harness's peak of Python allocations while a command prints 100 MB, which its
  Projection spills to a file in the workspace (on disk, not in memory).

A report, not a test: it exits 0 whatever the numbers are.

    python bench/bench_processes.py --repeats 5
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from harness.commands import run_command, run_process
from harness.projection import Projection
from harness.sandbox import SandboxLimits, execute_code, find_isolation
from harness.workspace import workspace_at

__all__ = ["main"]

TIMEOUT = 0.2  # seconds: every command of the latency rows times out after this
GRACE = 0.5  # seconds between SIGTERM and SIGKILL in the latency rows
OBEYS = "sleep 100 & sleep 100; wait"
IGNORES = "(trap '' TERM; exec sleep 100) & sleep 100; wait"


async def _kill_latencies(command: str, root: Path, repeats: int) -> list[float]:
    """Return, per run, the seconds from the timeout to the group being gone."""
    latencies = []
    for _ in range(repeats):
        started = time.perf_counter()
        await run_command(command, workspace=workspace_at(root), timeout=TIMEOUT, grace=GRACE)
        latencies.append(time.perf_counter() - started - TIMEOUT)
    return latencies


async def _start_times(repeats: int, root: Path) -> tuple[list[float], list[float]]:
    """Return the seconds of a sandboxed `pass` and of a bare `python -c pass`, per run."""
    sandboxed, bare = [], []
    limits = SandboxLimits()
    for _ in range(repeats):
        started = time.perf_counter()
        await execute_code("pass", limits=limits, sandbox_required=False)
        sandboxed.append(time.perf_counter() - started)
        started = time.perf_counter()
        bare_argv = [sys.executable, "-c", "pass"]
        await run_process(bare_argv, cwd=root, env={}, timeout=30.0, output=Projection(None))
        bare.append(time.perf_counter() - started)
    return sandboxed, bare


async def _peak_for_100_mb(root: Path) -> tuple[int, int]:
    """Return the bytes spilled to disk and the peak of Python allocations for 100 MB of output."""
    workspace = workspace_at(root)
    tracemalloc.start()
    try:
        await run_command("head -c 100000000 /dev/zero", workspace=workspace, timeout=120.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return _remove_spill_files(root), peak


def _remove_spill_files(root: Path) -> int:
    """Remove the spill files under ``root``; return how many bytes they held."""
    spilled = list(root.glob(".harness/output/output-*.txt"))
    size = sum(path.stat().st_size for path in spilled)
    for path in spilled:
        path.unlink()  # 100 MB of zeros: the report needs only its size
    return size


def _ms(seconds: list[float]) -> str:
    return f"median {statistics.median(seconds) * 1000:7.1f} ms   max {max(seconds) * 1000:7.1f} ms"


async def _run(repeats: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-processes-") as name:
        root = Path(name)
        isolation, _ = await find_isolation()
        print(f"isolation here: {isolation.value}; {repeats} runs per row\n")
        obeys = await _kill_latencies(OBEYS, root, repeats)
        ignores = await _kill_latencies(IGNORES, root, repeats)
        print(f"kill latency, group obeys SIGTERM:        {_ms(obeys)}")
        print(f"kill latency, grandchild ignores SIGTERM: {_ms(ignores)}")
        print(f"  (the second waits for the grace period, {GRACE * 1000:.0f} ms, then SIGKILL)\n")
        sandboxed, bare = await _start_times(repeats, root)
        ratio = statistics.median(sandboxed) / statistics.median(bare)
        print(f"execute_code('pass'):  {_ms(sandboxed)}")
        print(f"python -c pass (bare): {_ms(bare)}")
        print(f"  sandboxed / bare: {ratio:.1f}x\n")
        spilled, peak = await _peak_for_100_mb(root)
        verdict = "under" if peak < 64 * 2**20 else "OVER"
        print(
            f"100 MB of output: {spilled:,} bytes spilled to the workspace, peak of Python "
            f"allocations {peak / 2**20:.2f} MiB ({verdict} the 64 MiB budget)"
        )


def main(argv: list[str] | None = None) -> int:
    """Run the measurements and print them; return 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeats", type=int, default=5, help="runs per latency and start-up row (5)"
    )
    options = parser.parse_args(argv)
    asyncio.run(_run(options.repeats))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Run the course's benchmarks in turn: tool call, event stream, loop, coding tools, processes.

``nox -s bench`` runs this file (as a script, so this folder is on ``sys.path``). Arguments go
to the tool-call benchmark (``--calls``, ``--repeats``, ``--warmup``); the others run with their
defaults (run one alone to give it arguments: ``python bench/bench_agent_loop.py --help``).
Benchmarks are reports, not tests: this exits 0 whatever the numbers are.
"""

from __future__ import annotations

import sys

import bench_agent_loop
import bench_coding_tools
import bench_event_stream
import bench_processes
import bench_tool_call

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run every benchmark and return 0: benchmarks report, they do not gate."""
    print("== bench/bench_tool_call.py ==\n")
    bench_tool_call.main(sys.argv[1:] if argv is None else argv)
    print("\n== bench/bench_event_stream.py ==\n")
    bench_event_stream.main([])
    print("\n== bench/bench_agent_loop.py ==\n")
    bench_agent_loop.main([])
    print("\n== bench/bench_coding_tools.py ==\n")
    bench_coding_tools.main([])
    print("\n== bench/bench_processes.py ==\n")
    bench_processes.main([])
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

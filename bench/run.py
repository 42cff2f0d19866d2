"""Run the course's benchmarks in turn: the tool call, then the event stream when it is present.

``nox -s bench`` runs this file. Arguments go to the tool-call benchmark
(``--calls``, ``--repeats``, ``--warmup``); the event-stream benchmark runs with its defaults.
Benchmarks are reports, not tests: this exits 0 whatever the numbers are.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, cast

__all__ = ["main"]

BENCH_DIR = Path(__file__).resolve().parent
# Module names of the benchmark scripts beside this file, in the order they run.
BENCHMARKS = ("bench_tool_call", "bench_event_stream")


def load_entry_point(module_name: str) -> Callable[..., object] | None:
    """Return the ``main`` of a benchmark script beside this file, or None when it is absent."""
    if not (BENCH_DIR / f"{module_name}.py").is_file():
        return None
    if str(BENCH_DIR) not in sys.path:
        sys.path.insert(0, str(BENCH_DIR))
    entry = getattr(importlib.import_module(module_name), "main", None)
    if not callable(entry):
        raise LookupError(f"bench/{module_name}.py has no main()")
    return cast("Callable[..., object]", entry)


def run_entry_point(entry: Callable[..., object], argv: list[str] | None) -> object:
    """Call a benchmark's main, with argv when given, and drive it if it is a coroutine."""
    outcome = entry() if argv is None else entry(argv)
    if inspect.iscoroutine(outcome):
        return asyncio.run(cast("Coroutine[Any, Any, object]", outcome))
    return outcome


def main(argv: list[str] | None = None) -> int:
    """Run every benchmark that exists and return 0: benchmarks report, they do not gate."""
    tool_call_argv = sys.argv[1:] if argv is None else argv
    for module_name in BENCHMARKS:
        entry = load_entry_point(module_name)
        if entry is None:
            print(f"== bench/{module_name}.py: not present, skipped ==\n")
            continue
        print(f"== bench/{module_name}.py ==\n")
        # Only the tool-call benchmark takes this file's arguments; the others get none.
        own_argv = tool_call_argv if module_name == "bench_tool_call" else None
        saved_argv = sys.argv
        sys.argv = [str(BENCH_DIR / f"{module_name}.py"), *(own_argv or [])]
        try:
            run_entry_point(entry, own_argv)
        finally:
            sys.argv = saved_argv
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

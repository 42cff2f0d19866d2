"""Measure events per second through harness.event_stream.EventStream against asyncio.Queue.

One producer task and one consumer task share one event loop and pass N small events, then the
end. Two schedules are timed:

- ``burst``: the producer pushes every event before it yields, so the consumer finds a buffer;
- ``lockstep``: the producer yields after every push, so the consumer waits for each event.

Each repeat runs both contenders, in alternating order; the table shows the median of the
repeats and the ratio EventStream / Queue (above 1.0: EventStream is faster). A report, not a
test: it exits 0 whatever the numbers are.

    python bench/bench_event_stream.py --events 50000 --repeats 7
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

from harness.event_stream import EventStream

__all__ = ["main"]

Schedule = Callable[[int], Awaitable[None]]  # passes N events through one contender, once
_END = object()  # asyncio.Queue has no end: a sentinel item stands for it


async def _stream_burst(count: int) -> None:
    stream: EventStream[int, int] = EventStream()

    async def consume() -> None:
        async for _ in stream:
            pass
        await stream.result()

    consumer = asyncio.create_task(consume())
    for number in range(count):
        stream.push(number)
    stream.end(count)
    await consumer


async def _stream_lockstep(count: int) -> None:
    stream: EventStream[int, int] = EventStream()

    async def consume() -> None:
        async for _ in stream:
            pass
        await stream.result()

    consumer = asyncio.create_task(consume())
    for number in range(count):
        stream.push(number)
        await asyncio.sleep(0)
    stream.end(count)
    await consumer


async def _queue_burst(count: int) -> None:
    queue: asyncio.Queue[object] = asyncio.Queue()

    async def consume() -> None:
        while await queue.get() is not _END:
            pass

    consumer = asyncio.create_task(consume())
    for number in range(count):
        queue.put_nowait(number)
    queue.put_nowait(_END)
    await consumer


async def _queue_lockstep(count: int) -> None:
    queue: asyncio.Queue[object] = asyncio.Queue()

    async def consume() -> None:
        while await queue.get() is not _END:
            pass

    consumer = asyncio.create_task(consume())
    for number in range(count):
        queue.put_nowait(number)
        await asyncio.sleep(0)
    queue.put_nowait(_END)
    await consumer


SCHEDULES: dict[str, tuple[Schedule, Schedule]] = {
    "burst": (_stream_burst, _queue_burst),
    "lockstep": (_stream_lockstep, _queue_lockstep),
}


def _events_per_second(schedule: Schedule, count: int) -> float:
    """Run one contender once in a fresh loop and return its throughput."""

    async def timed() -> float:
        started = time.perf_counter()
        await schedule(count)
        return count / (time.perf_counter() - started)

    return asyncio.run(timed())


def measure(name: str, count: int, repeats: int) -> tuple[float, float]:
    """Return the median events/s of EventStream and of Queue for one schedule."""
    stream_schedule, queue_schedule = SCHEDULES[name]
    _events_per_second(stream_schedule, min(count, 1000))  # warm up both paths
    _events_per_second(queue_schedule, min(count, 1000))
    stream_runs: list[float] = []
    queue_runs: list[float] = []
    for repeat in range(repeats):
        # Interleave, and swap who goes first, so drift in the machine hits both alike.
        pairs = [(stream_schedule, stream_runs), (queue_schedule, queue_runs)]
        for schedule, runs in pairs if repeat % 2 == 0 else reversed(pairs):
            runs.append(_events_per_second(schedule, count))
    return statistics.median(stream_runs), statistics.median(queue_runs)


def main(argv: list[str] | None = None) -> int:
    """Print the table and return 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=50_000, help="events per run")
    parser.add_argument("--repeats", type=int, default=7, help="interleaved repeats (median)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.events < 1 or args.repeats < 1:
        parser.error("--events and --repeats must be at least 1")

    print(
        f"EventStream vs asyncio.Queue: {args.events:,} events, median of {args.repeats}"
        f" interleaved repeats (CPython {platform.python_version()})"
    )
    print()
    print("| schedule | EventStream ev/s | asyncio.Queue ev/s | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for name in SCHEDULES:
        stream_rate, queue_rate = measure(name, args.events, args.repeats)
        print(
            f"| {name} | {stream_rate:,.0f} | {queue_rate:,.0f} | {stream_rate / queue_rate:.2f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

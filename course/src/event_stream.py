"""Carry a producer's events, in order, to one async consumer, then hand over a separate result.

Theory of operation
-------------------
A producer calls ``push(event)`` any number of times, then ``end(result)`` exactly once. Both are
plain synchronous calls: a producer never waits for its consumer. The one consumer reads the
events with ``async for``; the final result is not an event, it is read with
``await stream.result()``, which any number of tasks may await without taking events from the
consumer.

The stream has one lifecycle, ``StreamState``: ``OPEN`` until ``end()``, then ``ENDED``. Events
pushed while ``OPEN`` wait in a buffer until the consumer takes them, so an ended stream still
delivers everything pushed before the end; the iteration stops once that buffer is empty.

A consumer that finds the buffer empty parks on one future, the *waiter*. ``push()`` and
``end()`` wake it; the consumer then looks at the buffer again. The waiter is created by the
consumer and forgotten by the consumer, in a ``finally`` block, so a consumer that is cancelled
while parked leaves nothing behind::

    consumer: waiter = future; await waiter  <-- cancelled here
    finally:  self._waiter = None             <-- still runs; CancelledError propagates
"""

from __future__ import annotations

__all__ = [
    "EventStream",
    "StreamState",
]

import asyncio
import enum
from collections import deque
from typing import Generic, TypeVar

E = TypeVar("E")
R = TypeVar("R")


class StreamState(enum.Enum):
    """The lifecycle of one stream: open to pushes, then ended with a result."""

    OPEN = "open"
    ENDED = "ended"


# --8<-- [start:state]
class EventStream(Generic[E, R]):
    """Deliver events of type E in push order to one consumer, then a final result of type R."""

    def __init__(self) -> None:
        self._state = StreamState.OPEN
        self._buffer: deque[E] = deque()  # pushed, not yet taken by the consumer
        # (result,) once ended, None while open: a 1-tuple, because None is a valid result.
        self._outcome: tuple[R] | None = None
        # The consumer's parked future: not None iff a consumer is suspended in __anext__.
        self._waiter: asyncio.Future[None] | None = None
        self._has_consumer = False  # True iff __aiter__ was called once
        # Set by end(); an Event lets any number of result() callers wait, each on its own
        # future that asyncio removes when that caller is cancelled.
        self._ended = asyncio.Event()

    # --8<-- [end:state]

    @property
    def state(self) -> StreamState:
        """Return the lifecycle state."""
        return self._state

    @property
    def buffered(self) -> int:
        """Return how many pushed events the consumer has not taken yet."""
        return len(self._buffer)

    @property
    def consumer_waiting(self) -> bool:
        """Return True iff the consumer is suspended, waiting for a push or the end."""
        return self._waiter is not None

    # --8<-- [start:deliver]
    def push(self, event: E) -> None:
        """Append an event for the consumer; raise RuntimeError if the stream has ended."""
        # BEGIN LAB 2.1
        if self._state is StreamState.ENDED:
            raise RuntimeError("cannot push to an ended stream")
        self._buffer.append(event)
        self._wake_consumer()
        # END LAB 2.1

    async def __anext__(self) -> E:
        """Return the next event, waiting for one; stop once the stream ended and is drained."""
        # BEGIN LAB 2.1
        while not self._buffer:
            if self._state is StreamState.ENDED:
                raise StopAsyncIteration
            await self._wait_for_push_or_end()
        return self._buffer.popleft()
        # END LAB 2.1

    # --8<-- [end:deliver]

    def _wake_consumer(self) -> None:
        """Resolve the consumer's waiter, if it is parked; it will look at the buffer again."""
        # done() is True when the consumer's task was cancelled while parked: leave it alone.
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    # --8<-- [start:end]
    def end(self, result: R) -> None:
        """Store the final result and wake everyone; raise RuntimeError if already ended."""
        # BEGIN LAB 2.2
        if self._state is StreamState.ENDED:
            raise RuntimeError("cannot end an ended stream")
        self._state = StreamState.ENDED
        self._outcome = (result,)
        self._wake_consumer()
        self._ended.set()
        # END LAB 2.2

    async def result(self) -> R:
        """Wait until the stream ended and return its result; take no events."""
        # BEGIN LAB 2.2
        await self._ended.wait()
        assert self._outcome is not None, "end() sets the outcome before the event"
        return self._outcome[0]
        # END LAB 2.2

    def __aiter__(self) -> EventStream[E, R]:
        """Claim the stream for its one consumer; raise RuntimeError on a second claim."""
        # BEGIN LAB 2.2
        if self._has_consumer:
            raise RuntimeError("the stream already has a consumer")
        self._has_consumer = True
        return self
        # END LAB 2.2

    # --8<-- [end:end]

    # --8<-- [start:wait]
    async def _wait_for_push_or_end(self) -> None:
        """Park the consumer until push() or end(); forget the waiter however the wait ends."""
        # BEGIN LAB 2.3
        if self._waiter is not None:
            raise RuntimeError("the consumer is already waiting for an event")
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            # Cancelled or woken, the future is spent: a push must never find a dead waiter.
            self._waiter = None
        # END LAB 2.3

    # --8<-- [end:wait]

    def __repr__(self) -> str:
        return (
            f"<EventStream state={self._state.value} buffered={len(self._buffer)}"
            f" consumer_waiting={self._waiter is not None}>"
        )

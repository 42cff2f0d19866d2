"""Checkpoint 02: an event stream with one consumer, ordered delivery and a separate result."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkpoints.support import StartedTasks, raises_exactly
from harness.event_stream import EventStream, StreamState

T = TypeVar("T")
U = TypeVar("U")


lab_2_1 = pytest.mark.lab("2.1")
lab_2_2 = pytest.mark.lab("2.2")
lab_2_3 = pytest.mark.lab("2.3")


class _Touchy:
    """An event that refuses comparison and truth tests: the stream must only move it."""

    def __eq__(self, other: object) -> bool:
        raise AssertionError("event compared")

    def __hash__(self) -> int:
        raise AssertionError("event hashed")

    def __bool__(self) -> bool:
        raise AssertionError("event tested for truth")


async def _drain(stream: EventStream[T, U]) -> list[T]:
    return [event async for event in stream]


def _parked(stream: EventStream[T, U]) -> bool:
    """Read the waiter slot through a call, so the type checker does not narrow it."""
    return stream.consumer_waiting


def _still_waiting(task: asyncio.Task[Any]) -> bool:
    """Return True iff ``task`` has not finished; re-raise what it raised if it failed.

    Asked before any look at the stream's state, so a reader that failed (on a lab stub, say)
    fails the test with its own error rather than with an assertion about the waiter slot.
    """
    if task.done():
        task.result()
    return not task.done()


# ---------------------------------------------------------------------------------------------
# Lab 2.1: ordered, buffered delivery
# ---------------------------------------------------------------------------------------------


@lab_2_1
async def test_buffered_events_come_out_in_push_order() -> None:
    stream: EventStream[str, None] = EventStream()
    for event in ["a", "b", "c"]:
        stream.push(event)
    assert stream.buffered == 3
    assert [await anext(stream), await anext(stream), await anext(stream)] == ["a", "b", "c"]
    assert stream.buffered == 0
    assert stream.state is StreamState.OPEN


@lab_2_1
async def test_falsy_and_none_events_are_events_not_an_end() -> None:
    stream: EventStream[object, None] = EventStream()
    falsy: list[object] = [None, 0, "", (), False]
    for event in falsy:
        stream.push(event)
    assert [await anext(stream) for _ in falsy] == falsy


@lab_2_1
async def test_events_are_moved_not_inspected_copied_or_awaited() -> None:
    stream: EventStream[object, None] = EventStream()
    touchy = _Touchy()
    pending: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    coroutine_function = asyncio.sleep  # a callable, not called
    stream.push(touchy)
    stream.push(pending)
    stream.push(coroutine_function)
    assert await anext(stream) is touchy
    assert await anext(stream) is pending  # delivered as a value, never awaited
    assert not pending.done()
    assert await anext(stream) is coroutine_function


@lab_2_1
@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=3)), max_size=50))
def test_any_pushed_sequence_is_read_back_unchanged(events: list[object]) -> None:
    async def roundtrip() -> list[object]:
        stream: EventStream[object, None] = EventStream()
        for event in events:
            stream.push(event)
        return [await anext(stream) for _ in events]

    assert asyncio.run(roundtrip()) == events


# ---------------------------------------------------------------------------------------------
# Lab 2.2: the end, the result, one consumer
# ---------------------------------------------------------------------------------------------


@lab_2_2
async def test_ended_stream_delivers_its_buffer_then_stops() -> None:
    stream: EventStream[object, object] = EventStream()
    stream.push("a")
    stream.push("b")
    stream.end("final")
    assert stream.state is StreamState.ENDED
    assert await _drain(stream) == ["a", "b"]
    assert await stream.result() == "final"


@lab_2_2
async def test_result_is_kept_apart_from_the_events() -> None:
    stream: EventStream[str, str] = EventStream()
    stream.push("event")
    stream.end("result")
    assert await stream.result() == "result"
    assert await stream.result() == "result"  # asking twice takes nothing
    assert stream.buffered == 1
    assert [event async for event in stream] == ["event"]


@lab_2_2
async def test_result_waits_for_the_end_and_reaches_every_caller(tasks: StartedTasks) -> None:
    stream: EventStream[str, str] = EventStream()
    readers = [tasks.start(stream.result()) for _ in range(3)]
    await asyncio.sleep(0)
    assert all(_still_waiting(reader) for reader in readers)
    stream.end("done")
    assert await asyncio.gather(*readers) == ["done", "done", "done"]


@lab_2_2
async def test_cancelled_result_reader_propagates_and_others_still_get_the_result(
    tasks: StartedTasks,
) -> None:
    stream: EventStream[str, str] = EventStream()
    cancelled = tasks.start(stream.result())
    patient = tasks.start(stream.result())
    await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    stream.end("kept")
    assert await patient == "kept"


@lab_2_2
async def test_none_is_a_valid_result() -> None:
    stream: EventStream[str, object] = EventStream()
    stream.end(None)
    assert await stream.result() is None


@lab_2_2
async def test_push_after_end_is_refused_and_changes_nothing() -> None:
    stream: EventStream[str, str] = EventStream()
    stream.push("kept")
    stream.end("final")
    with raises_exactly(RuntimeError, "cannot push to an ended stream"):
        stream.push("late")
    assert stream.buffered == 1
    assert [event async for event in stream] == ["kept"]


@lab_2_2
async def test_second_end_is_refused_and_the_first_result_stays() -> None:
    stream: EventStream[str, str] = EventStream()
    stream.end("first")
    with raises_exactly(RuntimeError, "cannot end an ended stream"):
        stream.end("second")
    assert await stream.result() == "first"


# --8<-- [start:one-consumer]
@lab_2_2
async def test_second_consumer_is_refused() -> None:
    stream: EventStream[str, None] = EventStream()
    stream.push("only once")
    stream.end(None)
    assert [event async for event in stream] == ["only once"]
    with raises_exactly(RuntimeError, "the stream already has a consumer"):
        async for _ in stream:
            pass  # pragma: no cover - never reached


# --8<-- [end:one-consumer]


@lab_2_2
async def test_second_consumer_is_refused_even_while_the_first_is_reading() -> None:
    stream: EventStream[int, None] = EventStream()
    stream.push(1)
    stream.push(2)
    first = aiter(stream)
    assert await anext(first) == 1
    with raises_exactly(RuntimeError, "the stream already has a consumer"):
        aiter(stream)
    assert await anext(first) == 2


@lab_2_2
async def test_repr_shows_state_and_buffer() -> None:
    stream: EventStream[int, None] = EventStream()
    stream.push(1)
    assert repr(stream) == "<EventStream state=open buffered=1 consumer_waiting=False>"
    stream.end(None)
    assert repr(stream) == "<EventStream state=ended buffered=1 consumer_waiting=False>"


# ---------------------------------------------------------------------------------------------
# Lab 2.3: waiting delivery, and a waiter that never outlives its consumer
# ---------------------------------------------------------------------------------------------


@lab_2_3
async def test_the_wait_parks_until_a_push_and_leaves_the_event_to_the_reader(
    tasks: StartedTasks,
) -> None:
    # The wait that Lab 2.3 writes, called on its own: it parks and wakes, and taking the event
    # stays the reader's job. It is the one test of this lab that needs no other lab's code.
    stream: EventStream[str, None] = EventStream()
    wait = tasks.start(stream._wait_for_push_or_end())
    await asyncio.sleep(0)
    assert _still_waiting(wait)
    assert _parked(stream)
    stream.push("kept")
    await wait
    assert not _parked(stream)
    assert stream.buffered == 1


@lab_2_3
async def test_waiting_consumer_is_woken_by_a_push(tasks: StartedTasks) -> None:
    stream: EventStream[str, None] = EventStream()
    reader = tasks.start(anext(stream))
    await asyncio.sleep(0)
    assert _still_waiting(reader)
    assert _parked(stream)
    stream.push("hello")
    assert await reader == "hello"
    assert not _parked(stream)


@lab_2_3
async def test_waiting_consumer_is_stopped_by_the_end(tasks: StartedTasks) -> None:
    stream: EventStream[str, str] = EventStream()
    reader = tasks.start(_drain(stream))
    await asyncio.sleep(0)
    assert _still_waiting(reader)
    assert _parked(stream)
    stream.end("bye")
    assert await reader == []
    assert await stream.result() == "bye"
    assert not _parked(stream)


@lab_2_3
async def test_interleaved_producer_and_consumer_keep_the_order(tasks: StartedTasks) -> None:
    stream: EventStream[int, str] = EventStream()

    async def produce() -> None:
        for number in range(100):
            stream.push(number)
            for _ in range(number % 3):  # sometimes the consumer waits, sometimes it lags
                await asyncio.sleep(0)
        stream.end("done")

    consumer = tasks.start(_drain(stream))
    await produce()
    assert await consumer == list(range(100))
    assert await stream.result() == "done"


@lab_2_3
@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(), st.integers(0, 3)), max_size=40))
def test_any_schedule_of_pushes_and_yields_keeps_the_order(plan: list[tuple[int, int]]) -> None:
    """Property: however the producer's pushes interleave with the consumer, order is kept."""

    async def run() -> list[object]:
        stream: EventStream[object, None] = EventStream()
        consumer = asyncio.create_task(_drain(stream))
        try:
            for event, ticks in plan:
                stream.push(event)
                for _ in range(ticks):
                    await asyncio.sleep(0)
            stream.end(None)
            return await consumer
        finally:  # retrieve the consumer's outcome even when the producer failed
            consumer.cancel()
            await asyncio.gather(consumer, return_exceptions=True)

    assert asyncio.run(run()) == [event for event, _ in plan]


# --8<-- [start:cancelled-consumer]
@lab_2_3
async def test_cancelled_consumer_leaves_no_waiter_and_loses_no_event(tasks: StartedTasks) -> None:
    stream: EventStream[str, None] = EventStream()
    reader = tasks.start(anext(stream))
    await asyncio.sleep(0)
    assert _still_waiting(reader)
    assert _parked(stream)  # parked on its waiter future

    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader  # the cancellation propagates out of the consumer

    assert not _parked(stream)  # the waiter slot is empty again
    stream.push("after")  # no cancelled future to trip over
    assert await anext(stream) == "after"


# --8<-- [end:cancelled-consumer]


@lab_2_3
async def test_consumer_cancelled_after_being_woken_keeps_the_event_buffered(
    tasks: StartedTasks,
) -> None:
    stream: EventStream[str, None] = EventStream()
    reader = tasks.start(anext(stream))
    await asyncio.sleep(0)
    stream.push("in flight")  # wakes the waiter ...
    reader.cancel()  # ... but the consumer is cancelled before it runs again
    with pytest.raises(asyncio.CancelledError):
        await reader
    assert stream.buffered == 1
    assert await anext(stream) == "in flight"


@lab_2_3
async def test_two_concurrent_reads_are_refused(tasks: StartedTasks) -> None:
    stream: EventStream[str, None] = EventStream()
    first = tasks.start(anext(stream))
    await asyncio.sleep(0)
    assert _still_waiting(first)
    with raises_exactly(RuntimeError, "the consumer is already waiting for an event"):
        await anext(stream)
    assert _parked(stream)  # the refused read did not disturb the first
    stream.push("for the first")
    assert await first == "for the first"


@lab_2_3
async def test_cancelling_an_async_for_consumer_propagates_through_the_loop(
    tasks: StartedTasks,
) -> None:
    stream: EventStream[int, None] = EventStream()
    seen: list[int] = []

    async def consume() -> None:
        async for event in stream:
            seen.append(event)

    consumer = tasks.start(consume())
    stream.push(1)
    await asyncio.sleep(0)
    assert _still_waiting(consumer)
    assert seen == [1]
    assert _parked(stream)
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    stream.push(2)
    stream.end(None)
    assert stream.buffered == 1

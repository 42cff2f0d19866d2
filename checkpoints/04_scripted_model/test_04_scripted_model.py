"""Checkpoint 04: abort signals (Lab 4.1) and the scripted, deterministic model (Lab 4.2)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.abort import AbortController, AbortError, AbortSignal, SignalState

# ---------------------------------------------------------------------------------------------
# Lab 4.1: AbortController, AbortSignal, AbortError
# ---------------------------------------------------------------------------------------------

T = TypeVar("T")

lab_4_1 = pytest.mark.lab("4.1")


class _Tasks:
    """Start tasks for one test; at teardown cancel and await them all.

    Awaiting every task retrieves its exception, so a test that fails half way (on a lab stub,
    say) never leaves an "exception was never retrieved" task behind it.
    """

    def __init__(self) -> None:
        self._started: list[asyncio.Task[Any]] = []

    def start(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        task = asyncio.create_task(coroutine)
        self._started.append(task)
        return task

    async def close(self) -> None:
        for task in self._started:
            task.cancel()
        await asyncio.gather(*self._started, return_exceptions=True)


@pytest.fixture
async def tasks() -> AsyncIterator[_Tasks]:
    started = _Tasks()
    yield started
    await started.close()


class _Unraisable:
    """A reason that refuses every comparison and truth test: abort must not need them."""

    def __eq__(self, other: object) -> bool:
        raise AssertionError("reason compared")

    def __hash__(self) -> int:
        raise AssertionError("reason hashed")

    def __bool__(self) -> bool:
        raise AssertionError("reason tested for truth")


class _FakesExceptionClass:
    """Claims to be a ValueError through __class__; isinstance believes it, raise would not."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return ValueError


@lab_4_1
def test_new_signal_is_open_without_reason_or_listeners() -> None:
    signal = AbortController().signal
    assert signal.state is SignalState.OPEN
    assert signal.aborted is False
    assert signal.reason is None
    assert signal.listener_count == 0
    signal.raise_if_aborted()  # nothing to raise
    assert repr(signal) == "<AbortSignal state=open listeners=0>"


@lab_4_1
def test_bare_abort_stores_an_abort_error_and_raises_that_instance() -> None:
    controller = AbortController()
    controller.abort()
    signal = controller.signal
    assert signal.aborted is True
    assert signal.state is SignalState.ABORTED
    assert type(signal.reason) is AbortError
    assert signal.reason.reason == "aborted"
    with pytest.raises(AbortError, match=r"^aborted$") as caught:
        signal.raise_if_aborted()
    assert caught.value is signal.reason


@lab_4_1
@pytest.mark.parametrize(
    "reason",
    [ValueError("disk full"), TimeoutError("deadline"), asyncio.CancelledError("stop")],
    ids=["exception", "timeout", "base-exception"],
)
def test_exception_reason_is_raised_as_itself(reason: BaseException) -> None:
    controller = AbortController()
    controller.abort(reason)
    with pytest.raises(type(reason)) as caught:
        controller.signal.raise_if_aborted()
    assert caught.value is reason


@lab_4_1
@pytest.mark.parametrize("reason", ["user pressed stop", 42, ("a", "tuple")])
def test_other_reason_is_wrapped_in_abort_error(reason: object) -> None:
    controller = AbortController()
    controller.abort(reason)
    assert controller.signal.reason is reason
    with pytest.raises(AbortError) as caught:
        controller.signal.raise_if_aborted()
    assert caught.value.reason is reason


@lab_4_1
def test_reason_that_fakes_its_class_is_wrapped_not_raised() -> None:
    impostor = _FakesExceptionClass()
    assert isinstance(impostor, ValueError)  # the lie that isinstance believes
    controller = AbortController()
    controller.abort(impostor)
    with pytest.raises(AbortError) as caught:
        controller.signal.raise_if_aborted()
    assert caught.value.reason is impostor


@lab_4_1
def test_abort_never_compares_or_tests_the_reason() -> None:
    reason = _Unraisable()
    controller = AbortController()
    seen: list[object] = []
    controller.signal.add_listener(seen.append)
    controller.abort(reason)
    controller.abort("second")
    assert controller.signal.reason is reason
    assert len(seen) == 1
    assert seen[0] is reason


@lab_4_1
def test_abort_is_idempotent_and_keeps_the_first_reason() -> None:
    controller = AbortController()
    calls: list[object] = []
    controller.signal.add_listener(calls.append)
    controller.abort("first")
    controller.abort("second")
    controller.abort()
    assert controller.signal.reason == "first"
    assert calls == ["first"]


@lab_4_1
def test_listeners_run_synchronously_in_registration_order() -> None:
    controller = AbortController()
    order: list[str] = []
    controller.signal.add_listener(lambda reason: order.append(f"a:{reason}"))
    controller.signal.add_listener(lambda reason: order.append(f"b:{reason}"))
    controller.signal.add_listener(lambda reason: order.append(f"c:{reason}"))
    controller.abort("why")
    order.append("after abort")
    assert order == ["a:why", "b:why", "c:why", "after abort"]
    assert controller.signal.listener_count == 0


@lab_4_1
def test_removed_listener_is_not_called_and_removal_is_idempotent() -> None:
    controller = AbortController()
    calls: list[str] = []
    remove_a = controller.signal.add_listener(lambda _: calls.append("a"))
    controller.signal.add_listener(lambda _: calls.append("b"))
    assert controller.signal.listener_count == 2
    remove_a()
    remove_a()
    assert controller.signal.listener_count == 1
    controller.abort()
    assert calls == ["b"]


@lab_4_1
def test_same_callable_added_twice_is_two_registrations() -> None:
    controller = AbortController()
    calls: list[object] = []
    remove_first = controller.signal.add_listener(calls.append)
    controller.signal.add_listener(calls.append)
    remove_first()
    controller.abort("x")
    assert calls == ["x"]


@lab_4_1
def test_listener_added_after_abort_runs_at_once_and_is_not_stored() -> None:
    controller = AbortController()
    controller.abort("late")
    calls: list[object] = []
    remove = controller.signal.add_listener(calls.append)
    assert calls == ["late"]
    assert controller.signal.listener_count == 0
    remove()  # harmless


@lab_4_1
@pytest.mark.parametrize("listener", [None, "print", 3])
def test_non_callable_listener_is_refused(listener: object) -> None:
    signal = AbortController().signal
    with pytest.raises(TypeError, match=r"^listener must be callable, got \w+$"):
        signal.add_listener(listener)  # type: ignore[arg-type]
    assert signal.listener_count == 0


# --8<-- [start:raising-listener]
@lab_4_1
def test_raising_listeners_do_not_stop_the_others_and_are_raised_together() -> None:
    controller = AbortController()
    first, second = RuntimeError("first"), KeyError("second")
    calls: list[str] = []

    def fail_with(exc: Exception) -> Callable[[object], None]:
        def listener(_: object) -> None:
            calls.append(f"raise {exc!r}")
            raise exc

        return listener

    controller.signal.add_listener(fail_with(first))
    controller.signal.add_listener(lambda _: calls.append("still called"))
    controller.signal.add_listener(fail_with(second))

    with pytest.raises(ExceptionGroup, match=r"^abort listeners raised") as caught:
        controller.abort()

    assert caught.value.exceptions == (first, second)
    assert calls == ["raise RuntimeError('first')", "still called", "raise KeyError('second')"]
    assert controller.signal.aborted
    assert controller.signal.listener_count == 0
    controller.abort()  # idempotent: the listeners are gone, nothing raises again


# --8<-- [end:raising-listener]


@lab_4_1
def test_keyboard_interrupt_in_a_listener_escapes_at_once() -> None:
    controller = AbortController()
    calls: list[str] = []

    def interrupt(_: object) -> None:
        raise KeyboardInterrupt

    controller.signal.add_listener(interrupt)
    controller.signal.add_listener(lambda _: calls.append("later"))
    with pytest.raises(KeyboardInterrupt):
        controller.abort()
    assert calls == []
    assert controller.signal.aborted
    assert controller.signal.listener_count == 0


@lab_4_1
def test_listener_that_aborts_again_or_adds_a_listener_sees_a_finished_signal() -> None:
    controller = AbortController()
    calls: list[object] = []

    def reenter(reason: object) -> None:
        controller.abort("again")
        controller.signal.add_listener(lambda inner: calls.append(("inner", inner)))

    controller.signal.add_listener(reenter)
    controller.abort("once")
    assert calls == [("inner", "once")]
    assert controller.signal.reason == "once"


@lab_4_1
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 9)), max_size=30))
def test_exactly_the_listeners_not_removed_run_in_order(ops: list[tuple[bool, int]]) -> None:
    """Property: after any mix of adds and removes, abort calls the survivors in add order."""
    controller = AbortController()
    called: list[int] = []
    removers: dict[int, Callable[[], None]] = {}
    alive: list[int] = []

    def record(label: int) -> Callable[[object], None]:
        return lambda _: called.append(label)

    for label, (add, slot) in enumerate(ops):
        if add:
            removers[label] = controller.signal.add_listener(record(label))
            alive.append(label)
        elif removers:
            victim = sorted(removers)[slot % len(removers)]
            removers.pop(victim)()
            alive.remove(victim)
    assert controller.signal.listener_count == len(alive)
    controller.abort()
    assert called == alive
    assert controller.signal.listener_count == 0


@lab_4_1
async def test_wait_aborted_returns_the_reason_and_leaves_no_listener(tasks: _Tasks) -> None:
    controller = AbortController()
    waiter = tasks.start(controller.signal.wait_aborted())
    await asyncio.sleep(0)
    assert controller.signal.listener_count == 1
    controller.abort("done")
    assert await waiter == "done"
    assert controller.signal.listener_count == 0


@lab_4_1
async def test_wait_aborted_on_an_aborted_signal_returns_at_once() -> None:
    controller = AbortController()
    controller.abort("already")
    assert await controller.signal.wait_aborted() == "already"
    assert controller.signal.listener_count == 0


# --8<-- [start:cancelled-waiter]
@lab_4_1
async def test_cancelled_wait_removes_its_listener_and_propagates(tasks: _Tasks) -> None:
    controller = AbortController()
    waiter = tasks.start(controller.signal.wait_aborted())
    await asyncio.sleep(0)
    assert controller.signal.listener_count == 1

    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter

    assert waiter.cancelled()
    assert controller.signal.listener_count == 0
    controller.abort()  # nothing left to wake, nothing to complain about


# --8<-- [end:cancelled-waiter]


@lab_4_1
async def test_many_waiters_all_wake_with_the_same_reason(tasks: _Tasks) -> None:
    controller = AbortController()
    waiters = [tasks.start(controller.signal.wait_aborted()) for _ in range(50)]
    await asyncio.sleep(0)
    assert controller.signal.listener_count == 50
    waiters[7].cancel()
    await asyncio.sleep(0)
    assert controller.signal.listener_count == 49
    reason = ValueError("all")
    controller.abort(reason)
    results = await asyncio.gather(*waiters, return_exceptions=True)
    assert type(results[7]) is asyncio.CancelledError
    assert all(result is reason for i, result in enumerate(results) if i != 7)
    assert controller.signal.listener_count == 0


# --8<-- [start:deferred-cancel]
@lab_4_1
async def test_listener_defers_cancelling_the_running_task_to_the_loop(tasks: _Tasks) -> None:
    controller = AbortController()
    steps: list[str] = []

    async def worker() -> None:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        # Never task.cancel() here: this listener runs inside the very task it would cancel.
        controller.signal.add_listener(lambda _: loop.call_soon(task.cancel))
        controller.abort("stop")
        steps.append("finished the synchronous step")
        try:
            await asyncio.sleep(0)  # here the loop delivers the cancellation
            steps.append("never reached")
        finally:
            steps.append("cleaned up")

    task = tasks.start(worker())
    with pytest.raises(asyncio.CancelledError):
        await task
    assert steps == ["finished the synchronous step", "cleaned up"]
    assert controller.signal.listener_count == 0


# --8<-- [end:deferred-cancel]


@lab_4_1
async def test_deferred_cancellation_can_still_be_withdrawn_before_it_runs() -> None:
    controller = AbortController()
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    handles: list[asyncio.Handle] = []
    controller.signal.add_listener(lambda _: handles.append(loop.call_soon(task.cancel)))
    controller.abort()
    handles[0].cancel()  # changed our mind: a scheduled callback can be dropped, a cancel not
    await asyncio.sleep(0)
    assert task.cancelling() == 0


@lab_4_1
def test_controller_owns_one_signal_and_shows_it_in_repr() -> None:
    controller = AbortController()
    assert isinstance(controller.signal, AbortSignal)
    assert controller.signal is controller.signal
    controller.signal.add_listener(lambda _: None)
    assert repr(controller) == "<AbortController signal=<AbortSignal state=open listeners=1>>"
    controller.abort("shown")
    assert repr(controller) == "<AbortController signal=<AbortSignal state=aborted listeners=0>>"

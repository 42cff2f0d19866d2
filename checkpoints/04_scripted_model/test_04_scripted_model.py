"""Checkpoint 04: abort signals (Lab 4.1) and the scripted, deterministic model (Lab 4.2)."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkpoints.support import (
    StartedTasks,
    loud_instance,
    raises_exactly,
    raises_starting_with,
    watched_class_instance,
)
from harness.abort import AbortController, AbortError, AbortSignal, SignalState
from harness.event_stream import EventStream
from harness.protocol import (
    AssistantMessage,
    StreamAborted,
    StreamDone,
    StreamEvent,
    StreamFailed,
    StreamResult,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolResultMessage,
    UserMessage,
)
from harness.scripted_model import (
    ModelRequest,
    ScriptedModel,
    ScriptedResponse,
    ScriptExhaustedError,
    ToolSpec,
)

# ---------------------------------------------------------------------------------------------
# Lab 4.1: AbortController, AbortSignal, AbortError
# ---------------------------------------------------------------------------------------------

T = TypeVar("T")

lab_4_1 = pytest.mark.lab("4.1")


def _still_waiting(task: asyncio.Task[Any]) -> bool:
    """Return True iff ``task`` has not finished; re-raise what it raised if it failed.

    Asked before any look at the signal's listeners, so a waiter that failed (on a lab stub,
    say) fails the test with its own error rather than with an assertion about a count.
    """
    if task.done():
        task.result()
    return not task.done()


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
    with raises_exactly(AbortError, "aborted") as caught:
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
def test_raising_the_same_reason_again_does_not_grow_its_traceback() -> None:
    # Every step of every later call raises the one reason; if each raise kept its frames, the
    # reason would hold them all (and everything they refer to) for as long as it lives.
    def traceback_length(error: BaseException) -> int:
        length, entry = 0, error.__traceback__
        while entry is not None:
            length, entry = length + 1, entry.tb_next
        return length

    try:
        raise ValueError("disk full")
    except ValueError as caught:
        reason = caught  # it carries the traceback of where it was first raised
    original = traceback_length(reason)
    controller = AbortController()
    controller.abort(reason)
    lengths = []
    for _ in range(3):
        with pytest.raises(ValueError):
            controller.signal.raise_if_aborted()
        lengths.append(traceback_length(reason))
    assert lengths == [original + 2] * 3  # the original frames, raise_if_aborted's and ours


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
@pytest.mark.parametrize(
    ("listener", "message"),
    [
        (None, "listener must be callable, got NoneType"),
        ("print", "listener must be callable, got str"),
        (3, "listener must be callable, got int"),
    ],
)
def test_non_callable_listener_is_refused(listener: object, message: str) -> None:
    signal = AbortController().signal
    with raises_exactly(TypeError, message):
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

    with raises_starting_with(ExceptionGroup, "abort listeners raised") as caught:
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
    # Every example starts in lab code, so a stub fails them all at one place, as one error.
    controller.signal.raise_if_aborted()  # open: nothing to raise
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
async def test_wait_aborted_returns_the_reason_and_leaves_no_listener(tasks: StartedTasks) -> None:
    controller = AbortController()
    waiter = tasks.start(controller.signal.wait_aborted())
    await asyncio.sleep(0)
    assert _still_waiting(waiter)
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
async def test_cancelled_wait_removes_its_listener_and_propagates(tasks: StartedTasks) -> None:
    controller = AbortController()
    waiter = tasks.start(controller.signal.wait_aborted())
    await asyncio.sleep(0)
    assert _still_waiting(waiter)
    assert controller.signal.listener_count == 1

    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter

    assert waiter.cancelled()
    assert controller.signal.listener_count == 0
    controller.abort()  # nothing left to wake, nothing to complain about


# --8<-- [end:cancelled-waiter]


@lab_4_1
async def test_many_waiters_all_wake_with_the_same_reason(tasks: StartedTasks) -> None:
    controller = AbortController()
    waiters = [tasks.start(controller.signal.wait_aborted()) for _ in range(50)]
    await asyncio.sleep(0)
    assert all(_still_waiting(waiter) for waiter in waiters)
    assert controller.signal.listener_count == 50
    waiters[7].cancel()
    await asyncio.sleep(0)
    reason = ValueError("all")
    controller.abort(reason)
    results = await asyncio.gather(*waiters, return_exceptions=True)
    assert type(results[7]) is asyncio.CancelledError
    assert all(result is reason for i, result in enumerate(results) if i != 7)
    assert controller.signal.listener_count == 0


# --8<-- [start:deferred-cancel]
@lab_4_1
async def test_listener_defers_cancelling_the_running_task_to_the_loop(tasks: StartedTasks) -> None:
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


# ---------------------------------------------------------------------------------------------
# Lab 4.2: ScriptedModel
# ---------------------------------------------------------------------------------------------

lab_4_2 = pytest.mark.lab("4.2")


def _user(text: str) -> UserMessage:
    return UserMessage(content=(TextBlock(text=text),))


def _say(text: str) -> AssistantMessage:
    return AssistantMessage(content=(TextBlock(text=text),))


ADD_CALL = ToolCall.create(id="call-1", name="add", arguments={"left": 2, "right": 3})
ADD_SPEC = ToolSpec.create(
    name="add",
    description="Add two numbers.",
    parameters={"type": "object", "properties": {"left": {"type": "number"}}},
)


async def _collect(
    stream: EventStream[StreamEvent, StreamResult],
) -> tuple[list[StreamEvent], StreamResult]:
    events = [event async for event in stream]
    return events, await stream.result()


# Given code: the records the scaffold keeps (ToolSpec, ScriptedResponse). The practice folder
# hands the learner their declarations and checks whole, so these tests carry no lab tag and
# pass from the start.


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "", "description": "d"}, "ToolSpec.name must be a non-empty str, got ''"),
        ({"name": 7, "description": "d"}, "ToolSpec.name must be a non-empty str, got 7"),
        (
            {"name": "n", "description": None},
            "ToolSpec.description must be a str, got NoneType",
        ),
    ],
)
def test_tool_spec_refuses_bad_fields(kwargs: dict[str, object], message: str) -> None:
    with raises_exactly(TypeError, message):
        ToolSpec.create(**kwargs)  # type: ignore[arg-type]


def test_tool_spec_names_a_bad_name_by_type_without_running_it() -> None:
    loud, asked = loud_instance()
    with raises_exactly(TypeError, "ToolSpec.name must be a non-empty str, got Loud"):
        ToolSpec.create(name=loud, description="d")  # type: ignore[arg-type]
    assert asked == []


def test_tool_spec_refuses_a_plain_dict_as_parameters() -> None:
    with raises_starting_with(TypeError, "ToolSpec.parameters must be a JSON object snapshot"):
        ToolSpec(name="n", description="d", parameters={"type": "object"})


def test_scripted_response_refuses_wrong_events_and_an_aborted_result() -> None:
    with raises_exactly(TypeError, "ScriptedResponse.events[1] has unexpected type str"):
        ScriptedResponse(events=(TextDelta(text="a"), "b"), result=StreamDone(message=_say("a")))  # type: ignore[arg-type]
    with raises_exactly(
        TypeError, "ScriptedResponse.result must be StreamDone or StreamFailed, got StreamAborted"
    ):
        ScriptedResponse(result=StreamAborted(reason="scripts do not abort"))  # type: ignore[arg-type]


@lab_4_2
async def test_scripted_reply_streams_its_chunks_in_order_then_the_message() -> None:
    final = _say("Hello, world")
    chunks = [TextDelta(text="Hel"), TextDelta(text="lo, "), TextDelta(text="world")]
    model = ScriptedModel([ScriptedResponse.reply(final, events=chunks)])

    events, result = await _collect(model.stream([_user("hi")]))

    assert events == chunks
    assert result == StreamDone(message=final)
    assert model.requests == (ModelRequest(messages=(_user("hi"),)),)
    assert model.remaining == 0
    assert model.active_streams == 0  # the producer finished: nothing left running


@lab_4_2
async def test_default_events_are_one_per_content_block() -> None:
    final = AssistantMessage(content=(TextBlock(text="Let me add."), ADD_CALL))
    model = ScriptedModel([ScriptedResponse.reply(final)])
    events, result = await _collect(model.stream([_user("2+3?")], tools=[ADD_SPEC]))
    assert events == [TextDelta(text="Let me add."), ToolCallEvent(call=ADD_CALL)]
    assert result == StreamDone(message=final)
    assert model.requests[0].tools == (ADD_SPEC,)


# --8<-- [start:factory]
@lab_4_2
async def test_factories_see_the_captured_request_and_can_answer_from_it() -> None:
    def call_the_tool(request: ModelRequest) -> ScriptedResponse:
        assert [spec.name for spec in request.tools] == ["add"]
        return ScriptedResponse.reply(AssistantMessage(content=(ADD_CALL,)))

    def answer_from_the_result(request: ModelRequest) -> ScriptedResponse:
        last = request.messages[-1]
        assert type(last) is ToolResultMessage
        assert last.tool_call_id == ADD_CALL.id
        return ScriptedResponse.reply(_say(f"The sum is {last.content}."))

    model = ScriptedModel([call_the_tool, answer_from_the_result])
    transcript: list[object] = [_user("What is 2 + 3?")]

    _, first = await _collect(model.stream(transcript, tools=[ADD_SPEC]))
    assert type(first) is StreamDone
    transcript += [
        first.message,
        ToolResultMessage(
            id="tool-result-call-1",
            tool_call_id="call-1",
            tool_name="add",
            content="5",
            is_error=False,
        ),
    ]
    _, second = await _collect(model.stream(transcript, tools=[ADD_SPEC]))

    assert second == StreamDone(message=_say("The sum is 5."))
    assert [len(request.messages) for request in model.requests] == [1, 3]


# --8<-- [end:factory]


@lab_4_2
async def test_captured_requests_do_not_change_when_the_caller_mutates_its_lists() -> None:
    model = ScriptedModel([ScriptedResponse.reply(_say("ok"))])
    messages: list[object] = [_user("first")]
    tools = [ADD_SPEC]
    stream = model.stream(messages, tools=tools)
    messages.append(_user("added later"))
    tools.clear()
    await _collect(stream)
    request = model.requests[0]
    assert request.messages == (_user("first"),)
    assert request.tools == (ADD_SPEC,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.messages = ()  # type: ignore[misc]


@lab_4_2
async def test_captured_tool_specs_keep_a_frozen_copy_of_their_schema() -> None:
    schema: dict[str, object] = {"type": "object", "properties": {}}
    spec = ToolSpec.create(name="noop", description="Do nothing.", parameters=schema)
    model = ScriptedModel([ScriptedResponse.reply(_say("ok"))])
    await _collect(model.stream([_user("hi")], tools=(spec,)))
    schema["properties"] = {"sneaky": {"type": "string"}}
    captured = model.requests[0].tools[0]
    assert captured.parameters["properties"] == {}
    with pytest.raises(TypeError):
        captured.parameters["type"] = "array"  # type: ignore[index]
    assert ToolSpec.create(name="bare", description="").parameters["type"] == "object"


@lab_4_2
async def test_asking_past_the_end_of_the_script_raises_a_typed_error() -> None:
    model = ScriptedModel([ScriptedResponse.reply(_say("only answer"))])
    await _collect(model.stream([_user("one")]))
    with raises_exactly(ScriptExhaustedError, "request 2 is past the end of the script (length 1)"):
        model.stream([_user("two")])
    assert len(model.requests) == 2  # the unexpected request is kept, to show what was asked
    assert model.remaining == 0


@lab_4_2
async def test_empty_script_is_exhausted_at_the_first_request() -> None:
    model = ScriptedModel([])
    with raises_exactly(ScriptExhaustedError, "request 1 is past the end of the script (length 0)"):
        model.stream([_user("anyone?")])


@lab_4_2
async def test_factory_exception_propagates_and_uses_up_its_entry() -> None:
    problem = LookupError("no such fixture")

    def broken(request: ModelRequest) -> ScriptedResponse:
        raise problem

    model = ScriptedModel([broken, ScriptedResponse.reply(_say("next"))])
    with pytest.raises(LookupError) as caught:
        model.stream([_user("go")])
    assert caught.value is problem
    assert model.remaining == 1
    _, result = await _collect(model.stream([_user("again")]))
    assert result == StreamDone(message=_say("next"))


@lab_4_2
async def test_factory_returning_the_wrong_type_is_refused() -> None:
    def not_a_response(request: ModelRequest) -> object:
        return {"text": "hi"}

    model = ScriptedModel([not_a_response])  # type: ignore[list-item]
    with raises_exactly(TypeError, "script entry 0 returned dict, expected ScriptedResponse"):
        model.stream([_user("hi")])


@lab_4_2
async def test_async_factory_is_refused_without_a_never_awaited_warning() -> None:
    async def async_factory(request: ModelRequest) -> ScriptedResponse:
        return ScriptedResponse.reply(_say("too late"))  # pragma: no cover - never run

    model = ScriptedModel([async_factory])  # type: ignore[list-item]
    with raises_exactly(TypeError, "script entry 0 returned coroutine, expected ScriptedResponse"):
        model.stream([_user("hi")])
    gc.collect()  # a coroutine left open would warn here, and warnings are errors


@lab_4_2
@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (42, "script entry 1 must be a ScriptedResponse or a factory, got int"),
        ({"events": []}, "script entry 1 must be a ScriptedResponse or a factory, got dict"),
        (ScriptedResponse, "script entry 1 must be a ScriptedResponse or a factory, got type"),
        (None, "script entry 1 must be a ScriptedResponse or a factory, got NoneType"),
    ],
)
def test_script_refuses_entries_that_are_neither_responses_nor_factories(
    entry: object, message: str
) -> None:
    with raises_exactly(TypeError, message):
        ScriptedModel([ScriptedResponse.reply(_say("fine")), entry])  # type: ignore[list-item]


class _SneakyList(list[object]):
    """A list subclass that lies when iterated."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        raise AssertionError("iterated a list subclass")


@lab_4_2
@pytest.mark.parametrize(
    ("messages", "tools", "message"),
    [
        (_SneakyList([_user("x")]), (), "messages must be a list or tuple, got _SneakyList"),
        ((m for m in [_user("x")]), (), "messages must be a list or tuple, got generator"),
        ([{"role": "user"}], (), "ModelRequest.messages[0] has unexpected type dict"),
        ([_user("x")], "add", "tools must be a list or tuple, got str"),
        ([_user("x")], [ADD_CALL], "ModelRequest.tools[0] has unexpected type ToolCall"),
    ],
    ids=["list-subclass", "generator", "dict-message", "str-tools", "call-as-tool"],
)
async def test_malformed_requests_are_refused_before_the_script_moves(
    messages: object, tools: object, message: str
) -> None:
    model = ScriptedModel([ScriptedResponse.reply(_say("unused"))])
    with raises_exactly(TypeError, message):
        model.stream(messages, tools=tools)
    assert model.remaining == 1
    assert model.requests == ()


@lab_4_2
async def test_scripted_failure_streams_its_events_then_fails() -> None:
    model = ScriptedModel(
        [
            ScriptedResponse.fail(
                code="RATE_LIMITED", message="slow down", events=[TextDelta(text="Par")]
            )
        ]
    )
    events, result = await _collect(model.stream([_user("hi")]))
    assert events == [TextDelta(text="Par")]
    assert result == StreamFailed(code="RATE_LIMITED", message="slow down")


# --8<-- [start:abort-between-chunks]
@lab_4_2
async def test_abort_between_chunks_ends_the_stream_with_stream_aborted() -> None:
    controller = AbortController()

    def stop_after_second_chunk(index: int, event: StreamEvent) -> None:
        if index == 1:
            controller.abort("user pressed stop")

    chunks = [TextDelta(text=part) for part in ("one ", "two ", "three")]
    model = ScriptedModel(
        [ScriptedResponse.reply(_say("one two three"), events=chunks)],
        on_chunk=stop_after_second_chunk,
    )

    events, result = await _collect(model.stream([_user("count")], signal=controller.signal))

    assert events == chunks[:2]  # the third chunk was never pushed
    assert result == StreamAborted(reason="user pressed stop")
    assert model.active_streams == 0


@lab_4_2
async def test_a_finished_stream_leaves_no_listener_on_an_open_signal() -> None:
    # On an aborted signal, abort() itself clears every listener; only an open one shows a leak.
    controller = AbortController()
    model = ScriptedModel([ScriptedResponse.reply(_say("done"), events=[TextDelta(text="done")])])

    _, result = await _collect(model.stream([_user("go")], signal=controller.signal))

    assert result == StreamDone(message=_say("done"))
    assert controller.signal.listener_count == 0


# --8<-- [end:abort-between-chunks]


@lab_4_2
async def test_consumer_can_abort_after_reading_the_first_chunk() -> None:
    controller = AbortController()
    chunks = [TextDelta(text=part) for part in ("a", "b", "c")]
    model = ScriptedModel([ScriptedResponse.reply(_say("abc"), events=chunks)])
    stream = model.stream([_user("go")], signal=controller.signal)
    seen: list[StreamEvent] = []
    async for event in stream:
        seen.append(event)
        controller.abort()
    assert seen == chunks[:1]
    assert await stream.result() == StreamAborted(reason="aborted")


@lab_4_2
async def test_abort_after_the_last_chunk_still_wins_over_the_result() -> None:
    controller = AbortController()
    chunks = [TextDelta(text="all"), TextDelta(text=" of it")]
    model = ScriptedModel(
        [ScriptedResponse.reply(_say("all of it"), events=chunks)],
        on_chunk=lambda index, _: controller.abort(ValueError("late")) if index == 1 else None,
    )
    events, result = await _collect(model.stream([_user("go")], signal=controller.signal))
    assert events == chunks
    assert result == StreamAborted(reason="ValueError")


@lab_4_2
async def test_already_aborted_signal_gives_stream_aborted_without_using_the_script() -> None:
    calls: list[ModelRequest] = []

    def factory(request: ModelRequest) -> ScriptedResponse:
        calls.append(request)
        return ScriptedResponse.reply(_say("should not run"))

    controller = AbortController()
    controller.abort("closed before asking")
    model = ScriptedModel([factory])
    events, result = await _collect(model.stream([_user("hi")], signal=controller.signal))
    assert events == []
    assert result == StreamAborted(reason="closed before asking")
    assert calls == []
    assert model.remaining == 1
    assert len(model.requests) == 1


@lab_4_2
async def test_cancelled_producer_ends_the_stream_and_its_cancellation_propagates() -> None:
    model = ScriptedModel([ScriptedResponse.reply(_say("never finished"))])
    before = asyncio.all_tasks()
    stream = model.stream([_user("hi")])
    (producer,) = asyncio.all_tasks() - before
    producer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await producer
    assert await stream.result() == StreamAborted(reason="producer cancelled")
    assert model.active_streams == 0


@lab_4_2
async def test_failing_chunk_hook_ends_the_stream_with_a_failure() -> None:
    def broken_hook(index: int, event: StreamEvent) -> None:
        raise RuntimeError("hook bug")

    model = ScriptedModel(
        [ScriptedResponse.reply(_say("x"), events=[TextDelta(text="x")])], on_chunk=broken_hook
    )
    events, result = await _collect(model.stream([_user("hi")]))
    assert events == [TextDelta(text="x")]
    assert result == StreamFailed(code="CHUNK_HOOK_FAILED", message="on_chunk raised RuntimeError")


@lab_4_2
@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=20))
def test_any_chunking_of_a_text_streams_back_in_order(parts: list[str]) -> None:
    """Property: the chunks arrive in script order and join to the final message's text."""
    final = _say("".join(parts))
    model = ScriptedModel(
        [ScriptedResponse.reply(final, events=[TextDelta(text=part) for part in parts])]
    )

    async def run() -> tuple[list[StreamEvent], StreamResult]:
        return await _collect(model.stream([_user("stream it")]))

    events, result = asyncio.run(run())
    assert events == [TextDelta(text=part) for part in parts]
    assert result == StreamDone(message=final)


@lab_4_2
async def test_repr_shows_position_requests_and_running_streams() -> None:
    model = ScriptedModel([ScriptedResponse.reply(_say("a")), ScriptedResponse.reply(_say("b"))])
    stream = model.stream([_user("hi")])
    assert repr(model) == "<ScriptedModel remaining=1 requests=1 active_streams=1>"
    await _collect(stream)
    assert repr(model) == "<ScriptedModel remaining=1 requests=1 active_streams=0>"


def test_the_script_records_check_types_without_asking_a_metaclass() -> None:
    odd, asked = watched_class_instance()
    with raises_exactly(TypeError, "ModelRequest.messages[0] has unexpected type Odd"):
        ModelRequest(messages=(odd,))  # type: ignore[arg-type]
    with raises_starting_with(TypeError, "ScriptedResponse.result must be StreamDone or "):
        ScriptedResponse(result=odd)  # type: ignore[arg-type]
    assert asked == []

"""Checkpoint 07: the agent loop, from one turn to every way a run can end.

Each test is tagged with the lab it proves: 7.1 turns, 7.2 the event stream, 7.3 policies and
concurrent groups, 7.4 timeouts, aborts and fatal errors, 7.5 hardening. The tools of these tests
are gated by asyncio events, never by sleeps; only the timeout tests wait on the clock, because a
timeout is their subject, and they use a small one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkpoints.support import raises_exactly
from harness.abort import AbortController, AbortSignal
from harness.agent_loop import (
    INVALID_ASSISTANT_MESSAGE,
    TOOL_CALL_ABORTED,
    TOOL_CALL_SKIPPED,
    TOOL_TIMED_OUT,
    AgentEvent,
    AgentRun,
    LoopAborted,
    LoopCompleted,
    LoopModelFailed,
    LoopResult,
    LoopToolFatal,
    LoopTurnLimit,
    MessageAppended,
    PendingToolCallsError,
    ToolEnd,
    ToolPolicy,
    ToolProgress,
    ToolStart,
    partition_calls,
    replay_transcript,
    run_agent_loop,
)
from harness.event_stream import EventStream
from harness.loop_inputs import refuse_stream_end
from harness.messages import OrphanToolResultError, check_transcript
from harness.protocol import (
    AssistantMessage,
    Message,
    StreamEvent,
    StreamResult,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from harness.scripted_model import ScriptedModel, ScriptedResponse, ScriptExhaustedError
from harness.tool import NonRecoverableToolError, ToolContext, ToolContractError, ToolRegistry
from harness.tool_groups import error_result

lab_7_1 = pytest.mark.lab("7.1")
lab_7_2 = pytest.mark.lab("7.2")
lab_7_3 = pytest.mark.lab("7.3")
lab_7_4 = pytest.mark.lab("7.4")
lab_7_5 = pytest.mark.lab("7.5")

SAFE = ToolPolicy(concurrency_safe=True)
QUESTION = UserMessage(content=(TextBlock(text="go"),))
FINAL = AssistantMessage(content=(TextBlock(text="done"),))


# ---------------------------------------------------------------------------------------------
# Helpers: calls, scripts, tools whose every step the test controls, and a run read to its end.
# ---------------------------------------------------------------------------------------------


def call(call_id: str, name: str = "probe") -> ToolCall:
    return ToolCall.create(id=call_id, name=name, arguments={"id": call_id})


def asks(*calls: ToolCall) -> ScriptedResponse:
    return ScriptedResponse.reply(AssistantMessage(content=calls))


def accept(arguments: object) -> object:
    return {"ok": True, "value": arguments}


@dataclass
class Probe:
    """Tools whose calls log their start and end, and wait for the test's word when gated."""

    log: list[tuple[str, str]] = field(default_factory=list)  # ("start" | "end", call id)
    gates: dict[str, asyncio.Event] = field(default_factory=dict)
    running: set[str] = field(default_factory=set)
    most_at_once: int = 0

    started: dict[str, asyncio.Event] = field(default_factory=dict)

    def gate(self, call_id: str) -> asyncio.Event:
        return self.gates.setdefault(call_id, asyncio.Event())

    def has_started(self, call_id: str) -> asyncio.Event:
        return self.started.setdefault(call_id, asyncio.Event())

    async def execute(self, value: dict[str, str], context: ToolContext) -> str:
        call_id = value["id"]
        self.log.append(("start", call_id))
        self.has_started(call_id).set()
        self.running.add(call_id)
        self.most_at_once = max(self.most_at_once, len(self.running))
        try:
            if call_id in self.gates:
                await self.gates[call_id].wait()
            else:
                await asyncio.sleep(0)
            return f"ran {call_id}"
        finally:
            self.running.discard(call_id)
            self.log.append(("end", call_id))

    def tools(self, *names: str) -> ToolRegistry:
        return ToolRegistry(
            [
                {"name": name, "description": name, "validate": accept, "execute": self.execute}
                for name in names or ("probe",)
            ]
        )


def registry_of(
    name: str, execute: Callable[[object, ToolContext], Awaitable[object]]
) -> ToolRegistry:
    return ToolRegistry(
        [{"name": name, "description": name, "validate": accept, "execute": execute}]
    )


@dataclass
class Outcome:
    events: list[AgentEvent]
    result: LoopResult

    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]

    def results(self) -> list[ToolResultMessage]:
        return [m for m in self.result.transcript if type(m) is ToolResultMessage]

    def ends(self) -> list[ToolEnd]:
        return [e for e in self.events if type(e) is ToolEnd]


async def until_started(probe: Probe, run: AgentRun, call_id: str) -> None:
    """Wait for the call's tool to start; if the run ends first, raise what ended it.

    A run ends before its tools start when a later lab is still a stub: its NotImplementedError
    is raised here at once, so the test reads *blocked* instead of waiting for its timeout.
    """
    assert run.driver is not None, "run_agent_loop must keep its task on run.driver"
    started = asyncio.ensure_future(probe.has_started(call_id).wait())
    await asyncio.wait({started, run.driver}, return_when=asyncio.FIRST_COMPLETED)
    if not started.done():
        started.cancel()
        await run.result()
        raise AssertionError(f"the run ended before the tool of {call_id!r} started")


async def read_to_end(
    run: AgentRun, on_event: Callable[[AgentEvent], None] | None = None
) -> Outcome:
    events: list[AgentEvent] = []
    async for event in run:
        events.append(event)
        if on_event is not None:
            on_event(event)
    return Outcome(events=events, result=await run.result())


def start(
    script: list[ScriptedResponse],
    registry: ToolRegistry,
    *,
    controller: AbortController | None = None,
    transcript: list[Message] | None = None,
    **options: Any,
) -> tuple[ScriptedModel, AgentRun]:
    model = ScriptedModel(script)
    signal = (controller or AbortController()).signal
    run = run_agent_loop(
        model,
        registry,
        [QUESTION] if transcript is None else transcript,
        signal=signal,
        **options,
    )
    return model, run


def content_of(code: str, message: str) -> str:
    return '{"error":{"code":"' + code + '","message":"' + message + '"}}'


# ---------------------------------------------------------------------------------------------
# Lab 7.1: one turn after another
# ---------------------------------------------------------------------------------------------


@lab_7_1
async def test_an_answer_without_calls_completes_the_run_in_one_turn() -> None:
    model, run = start([ScriptedResponse.reply(FINAL)], Probe().tools())
    outcome = await read_to_end(run)
    assert outcome.result == LoopCompleted(transcript=(QUESTION, FINAL), turns=1)
    assert model.requests[0].messages == (QUESTION,)


@lab_7_1
async def test_calls_run_one_after_another_and_their_results_follow_in_call_order() -> None:
    probe = Probe()
    first = AssistantMessage(content=(call("c1"), call("c2")))
    model, run = start(
        [ScriptedResponse.reply(first), ScriptedResponse.reply(FINAL)], probe.tools()
    )
    outcome = await read_to_end(run)
    assert probe.log == [("start", "c1"), ("end", "c1"), ("start", "c2"), ("end", "c2")]
    assert [type(m).__name__ for m in outcome.result.transcript] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]
    assert [(r.tool_call_id, r.content, r.is_error) for r in outcome.results()] == [
        ("c1", "ran c1", False),
        ("c2", "ran c2", False),
    ]
    # The second request sees the results of the first turn.
    assert model.requests[1].messages == outcome.result.transcript[:4]
    assert outcome.result.turns == 2


@lab_7_1
async def test_a_run_ends_with_loop_turn_limit_after_max_turns_requests() -> None:
    model, run = start(
        [asks(call("c1")), asks(call("c2")), asks(call("c3"))], Probe().tools(), max_turns=2
    )
    outcome = await read_to_end(run)
    assert type(outcome.result) is LoopTurnLimit
    assert outcome.result.turns == 2
    assert len(model.requests) == 2
    check_transcript(outcome.result.transcript)


@lab_7_1
async def test_a_failed_stream_ends_the_run_and_appends_nothing_of_its_turn() -> None:
    failing = ScriptedResponse.fail(code="RATE_LIMITED", message="slow down")
    _, run = start([asks(call("c1")), failing], Probe().tools())
    outcome = await read_to_end(run)
    assert type(outcome.result) is LoopModelFailed
    assert (outcome.result.code, outcome.result.message) == ("RATE_LIMITED", "slow down")
    assert len(outcome.result.transcript) == 3  # question, first answer, its result
    assert outcome.kinds()[-1] == "turn_end"


@lab_7_1
async def test_an_unknown_tool_gets_the_06_error_result_and_the_run_goes_on() -> None:
    _, run = start(
        [asks(call("c1", name="missing")), ScriptedResponse.reply(FINAL)], Probe().tools()
    )
    outcome = await read_to_end(run)
    (result,) = outcome.results()
    assert result.content == content_of("TOOL_NOT_FOUND", "tool 'missing' is not registered")
    assert type(outcome.result) is LoopCompleted


@lab_7_1
async def test_the_callers_transcript_is_never_mutated() -> None:
    transcript: list[Message] = [QUESTION]
    _, run = start(
        [asks(call("c1")), ScriptedResponse.reply(FINAL)], Probe().tools(), transcript=transcript
    )
    outcome = await read_to_end(run)
    assert transcript == [QUESTION]
    assert outcome.result.transcript[0] is QUESTION


@lab_7_1
async def test_a_tool_registered_after_the_start_is_neither_offered_nor_run() -> None:
    probe = Probe()
    registry = probe.tools("probe")
    model, run = start([asks(call("c1", name="late")), ScriptedResponse.reply(FINAL)], registry)
    registry.register(
        {"name": "late", "description": "late", "validate": accept, "execute": probe.execute}
    )
    outcome = await read_to_end(run)
    assert [spec.name for spec in model.requests[0].tools] == ["probe"]
    assert probe.log == []
    assert outcome.results()[0].content == content_of(
        "TOOL_NOT_FOUND", "tool 'late' is not registered"
    )


@lab_7_1
@pytest.mark.parametrize(
    ("options", "expected", "message"),
    [
        ({"max_turns": 0}, ValueError, "max_turns must be at least 1, got 0"),
        ({"max_turns": True}, TypeError, "max_turns must be an int, got bool"),
        ({"max_concurrency": 0}, ValueError, "max_concurrency must be at least 1, got 0"),
        ({"max_concurrency": 2.0}, TypeError, "max_concurrency must be an int, got float"),
        (
            {"policies": [("probe", SAFE)]},
            TypeError,
            "policies must be a mapping or None, got list",
        ),
        (
            {"policies": {"probe": True}},
            TypeError,
            "policies['probe'] must be a ToolPolicy, got bool",
        ),
        ({"policies": {1: SAFE}}, TypeError, "policies keys must be tool names (str), got int"),
    ],
)
async def test_a_bad_setting_is_refused_before_the_model_is_asked(
    options: dict[str, Any], expected: type[Exception], message: str
) -> None:
    model = ScriptedModel([ScriptedResponse.reply(FINAL)])
    with raises_exactly(expected, message):
        run_agent_loop(
            model, Probe().tools(), [QUESTION], signal=AbortController().signal, **options
        )
    assert model.requests == ()


@lab_7_1
async def test_bad_arguments_are_refused_with_a_message_naming_them() -> None:
    model = ScriptedModel([])
    signal = AbortController().signal
    with raises_exactly(TypeError, "model must have a stream() method, got object"):
        run_agent_loop(object(), Probe().tools(), [], signal=signal)  # type: ignore[arg-type]
    with raises_exactly(TypeError, "registry must be a ToolRegistry, got dict"):
        run_agent_loop(model, {}, [], signal=signal)  # type: ignore[arg-type]
    with raises_exactly(TypeError, "signal must be an AbortSignal, got NoneType"):
        run_agent_loop(model, Probe().tools(), [], signal=None)  # type: ignore[arg-type]
    with raises_exactly(TypeError, "transcript[1] must be a Message, got dict"):
        run_agent_loop(model, Probe().tools(), [QUESTION, {"role": "user"}], signal=signal)  # type: ignore[list-item]
    with raises_exactly(TypeError, "transcript must be an iterable of messages, got int"):
        run_agent_loop(model, Probe().tools(), 3, signal=signal)  # type: ignore[arg-type]


@lab_7_1
async def test_a_transcript_with_unanswered_calls_is_refused() -> None:
    model = ScriptedModel([ScriptedResponse.reply(FINAL)])
    pending: list[Message] = [QUESTION, AssistantMessage(content=(call("c1"), call("c2")))]
    with raises_exactly(
        PendingToolCallsError,
        "the transcript ends with unanswered tool calls 'c1', 'c2'; "
        "append their results before running the loop",
    ):
        run_agent_loop(model, Probe().tools(), pending, signal=AbortController().signal)
    assert model.requests == ()


@lab_7_1
async def test_a_broken_transcript_raises_the_checkpoint_03_error() -> None:
    orphan = ToolResultMessage(
        id="r", tool_call_id="x", tool_name="probe", content="", is_error=False
    )
    with raises_exactly(OrphanToolResultError, "$[1]: no pending tool call has id 'x'"):
        run_agent_loop(
            ScriptedModel([]), Probe().tools(), [QUESTION, orphan], signal=AbortController().signal
        )


@lab_7_1
def test_without_a_running_event_loop_nothing_starts() -> None:
    async def inside_a_loop() -> LoopResult:
        _, run = start([ScriptedResponse.reply(FINAL)], Probe().tools())
        return await run.result()

    assert type(asyncio.run(inside_a_loop())) is LoopCompleted
    model = ScriptedModel([ScriptedResponse.reply(FINAL)])
    with raises_exactly(RuntimeError, "no running event loop"):
        run_agent_loop(model, Probe().tools(), [QUESTION], signal=AbortController().signal)
    assert model.requests == ()


@lab_7_1
async def test_every_result_is_a_typed_record_handled_by_match() -> None:
    _, run = start([ScriptedResponse.reply(FINAL)], Probe().tools())
    result = await run.result()
    match result:
        case LoopCompleted(turns=turns):
            assert turns == 1
        case LoopTurnLimit() | LoopModelFailed() | LoopAborted() | LoopToolFatal():
            pytest.fail(f"unexpected {result.kind}")


# ---------------------------------------------------------------------------------------------
# Lab 7.2: one stream, globally ordered
# ---------------------------------------------------------------------------------------------


@lab_7_2
async def test_seq_counts_from_zero_without_a_gap_and_the_kinds_follow_the_turn() -> None:
    _, run = start([asks(call("c1")), ScriptedResponse.reply(FINAL)], Probe().tools())
    outcome = await read_to_end(run)
    assert [event.seq for event in outcome.events] == list(range(len(outcome.events)))
    assert outcome.kinds() == [
        "turn_start",
        "model_event",
        "message",
        "tool_start",
        "tool_end",
        "message",
        "turn_end",
        "turn_start",
        "model_event",
        "message",
        "turn_end",
    ]


@lab_7_2
async def test_the_message_events_rebuild_the_final_transcript_exactly() -> None:
    _, run = start([asks(call("c1"), call("c2")), ScriptedResponse.reply(FINAL)], Probe().tools())
    outcome = await read_to_end(run)
    assert replay_transcript([QUESTION], outcome.events) == outcome.result.transcript


@lab_7_2
def test_replay_refuses_events_whose_seq_has_a_gap() -> None:
    events = [
        MessageAppended(seq=0, message=QUESTION),
        MessageAppended(seq=2, message=FINAL),
    ]
    with raises_exactly(ValueError, "event 1 has seq 2; seq must count 0, 1, 2, ..."):
        replay_transcript([], events)


@lab_7_2
async def test_progress_becomes_events_between_the_start_and_the_end_of_its_call() -> None:
    async def reporting(value: object, context: ToolContext) -> str:
        context.report_progress({"done": 1, "of": 2})
        context.report_progress("half way")
        return "ok"

    _, run = start(
        [asks(call("c1", "slow")), ScriptedResponse.reply(FINAL)], registry_of("slow", reporting)
    )
    outcome = await read_to_end(run)
    kinds = outcome.kinds()
    start_at, end_at = kinds.index("tool_start"), kinds.index("tool_end")
    progress = [e for e in outcome.events if type(e) is ToolProgress]
    assert [(e.tool_call_id, e.content) for e in progress] == [
        ("c1", '{"done":1,"of":2}'),
        ("c1", "half way"),
    ]
    assert all(start_at < outcome.events.index(e) < end_at for e in progress)


@lab_7_2
async def test_a_late_report_or_unwritable_data_emits_nothing_and_raises_nothing() -> None:
    kept: list[ToolContext] = []

    async def reporting(value: object, context: ToolContext) -> str:
        kept.append(context)
        context.report_progress(object())  # the serializer refuses it
        return "ok"

    _, run = start(
        [asks(call("c1", "slow")), ScriptedResponse.reply(FINAL)], registry_of("slow", reporting)
    )
    outcome = await read_to_end(run)
    kept[0].report_progress("too late")
    assert "tool_progress" not in outcome.kinds()


@lab_7_2
async def test_tool_end_carries_a_duration_in_seconds() -> None:
    _, run = start([asks(call("c1")), ScriptedResponse.reply(FINAL)], Probe().tools())
    (end,) = (await read_to_end(run)).ends()
    assert type(end.duration) is float
    assert end.duration >= 0


# ---------------------------------------------------------------------------------------------
# Lab 7.3: policies, the partition and concurrent groups
# ---------------------------------------------------------------------------------------------


def test_a_policy_opts_in_only_with_the_literal_true() -> None:
    assert ToolPolicy().concurrency_safe is False
    assert ToolPolicy(concurrency_safe=True).concurrency_safe is True


class Truthy:
    def __bool__(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (1, "ToolPolicy.concurrency_safe must be True or False, got int"),
        ("yes", "ToolPolicy.concurrency_safe must be True or False, got str"),
        (Truthy(), "ToolPolicy.concurrency_safe must be True or False, got Truthy"),
    ],
)
def test_a_truthy_policy_value_is_refused(value: object, message: str) -> None:
    with raises_exactly(TypeError, message):
        ToolPolicy(concurrency_safe=value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("timeout", "expected", "message"),
    [
        (0, ValueError, "ToolPolicy.timeout must be a positive, finite number, got 0"),
        (float("inf"), ValueError, "ToolPolicy.timeout must be a positive, finite number, got inf"),
        ("1", TypeError, "ToolPolicy.timeout must be a number of seconds, got str"),
    ],
)
def test_a_bad_timeout_is_refused(timeout: object, expected: type[Exception], message: str) -> None:
    with raises_exactly(expected, message):
        ToolPolicy(timeout=timeout)  # type: ignore[arg-type]


@lab_7_3
@pytest.mark.parametrize(
    ("names", "groups"),
    [
        ("", []),
        ("r", ["r"]),
        ("rr", ["rr"]),
        ("w", ["w"]),
        ("ww", ["w", "w"]),
        ("rrwr", ["rr", "w", "r"]),
        ("wrrw", ["w", "rr", "w"]),
        ("rnr", ["r", "n", "r"]),  # n has no policy: exclusive
        ("rrrr", ["rrrr"]),
    ],
)
def test_partition_cuts_runs_of_safe_calls_and_isolates_exclusive_ones(
    names: str, groups: list[str]
) -> None:
    policies = {"r": SAFE, "w": ToolPolicy(concurrency_safe=False)}
    calls = tuple(call(f"c{i}", name) for i, name in enumerate(names))
    parts = partition_calls(calls, policies)
    assert ["".join(c.name for c in group) for group in parts] == groups
    assert [c for group in parts for c in group] == list(calls)


@lab_7_3
async def test_concurrent_results_follow_call_order_when_they_finish_in_reverse() -> None:
    probe = Probe()
    gates = [probe.gate(f"c{i}") for i in range(3)]

    def release_in_reverse(event: AgentEvent) -> None:
        if type(event) is ToolStart and event.call.id == "c2":  # all three are running
            gates[2].set()
        if type(event) is ToolEnd:
            ended = int(event.result.tool_call_id[1:])
            if ended > 0:
                gates[ended - 1].set()

    script = [asks(call("c0"), call("c1"), call("c2")), ScriptedResponse.reply(FINAL)]
    _, run = start(script, probe.tools(), policies={"probe": SAFE})
    outcome = await read_to_end(run, release_in_reverse)
    assert [e.result.tool_call_id for e in outcome.ends()] == ["c2", "c1", "c0"]
    assert [r.tool_call_id for r in outcome.results()] == ["c0", "c1", "c2"]
    assert probe.most_at_once == 3


@lab_7_3
async def test_an_exclusive_call_never_overlaps_any_other_call() -> None:
    probe = Probe()
    calls = [call("a", "read"), call("b", "read"), call("w", "write"), call("c", "read")]
    script = [asks(*calls), ScriptedResponse.reply(FINAL)]
    _, run = start(script, probe.tools("read", "write"), policies={"read": SAFE})
    outcome = await read_to_end(run)
    # From the tools' own log: nothing starts or ends while "w" runs.
    w_start, w_end = probe.log.index(("start", "w")), probe.log.index(("end", "w"))
    assert w_end == w_start + 1
    # From the events: between w's tool_start and tool_end there is no other tool event.
    tool_events = [e for e in outcome.events if type(e) in (ToolStart, ToolEnd, ToolProgress)]
    ids = [e.call.id if type(e) is ToolStart else e.result.tool_call_id for e in tool_events]  # type: ignore[union-attr]
    assert ids[ids.index("w") + 1] == "w"
    # a and b did run together.
    assert probe.log[:2] == [("start", "a"), ("start", "b")]


@lab_7_3
async def test_a_tool_with_no_policy_is_exclusive() -> None:
    probe = Probe()
    _, run = start([asks(call("a"), call("b")), ScriptedResponse.reply(FINAL)], probe.tools())
    await read_to_end(run)
    assert probe.log == [("start", "a"), ("end", "a"), ("start", "b"), ("end", "b")]


@lab_7_3
async def test_max_concurrency_bounds_the_calls_running_at_once() -> None:
    probe = Probe()
    gates = [probe.gate(f"c{i}") for i in range(5)]

    def release_each_start(event: AgentEvent) -> None:
        if type(event) is ToolStart:
            gates[int(event.call.id[1:])].set()

    calls = [call(f"c{i}") for i in range(5)]
    _, run = start(
        [asks(*calls), ScriptedResponse.reply(FINAL)],
        probe.tools(),
        policies={"probe": SAFE},
        max_concurrency=2,
    )
    outcome = await read_to_end(run, release_each_start)
    assert probe.most_at_once == 2
    assert [r.tool_call_id for r in outcome.results()] == [f"c{i}" for i in range(5)]


@lab_7_3
async def test_policies_never_reach_the_models_request() -> None:
    registry = Probe().tools("read", "write")
    model, run = start(
        [asks(call("a", "read")), ScriptedResponse.reply(FINAL)],
        registry,
        policies={"read": ToolPolicy(concurrency_safe=True, timeout=5.0)},
    )
    await read_to_end(run)
    for request in model.requests:
        assert request.tools == registry.definitions()
        assert "concurrency_safe" not in repr(request)
        assert "timeout" not in repr(request)


# ---------------------------------------------------------------------------------------------
# Lab 7.4: timeouts, aborts and fatal errors; every call gets exactly one result
# ---------------------------------------------------------------------------------------------


@lab_7_4
def test_a_synthesized_result_carries_the_06_error_content() -> None:
    result = error_result(call("c9"), TOOL_CALL_SKIPPED, "not run")
    assert result == ToolResultMessage(
        id="tool-result-c9",
        tool_call_id="c9",
        tool_name="probe",
        content=content_of("TOOL_CALL_SKIPPED", "not run"),
        is_error=True,
    )


@lab_7_4
@pytest.mark.parametrize("swallow_once", [False, True], ids=["well_behaved", "swallows_once"])
async def test_a_timeout_stops_the_tool_and_the_run_goes_on(swallow_once: bool) -> None:
    stopped: list[str] = []
    # Set only when the test ends: until Lab 7.4 stops the tool, nothing else would, and a tool
    # that cannot end would hang the event loop's shutdown after the test's own timeout.
    test_over = asyncio.Event()

    async def stuck(value: object, context: ToolContext) -> str:
        try:
            await test_over.wait()
        except asyncio.CancelledError:
            stopped.append("cancelled")
            if not swallow_once:
                raise
        try:
            await test_over.wait()  # waits again: only a second cancellation stops it
        except asyncio.CancelledError:
            stopped.append("cancelled again")
            raise
        return "never"

    _, run = start(
        [asks(call("c1", "stuck")), ScriptedResponse.reply(FINAL)],
        registry_of("stuck", stuck),
        policies={"stuck": ToolPolicy(timeout=0.02)},
    )
    try:
        outcome = await read_to_end(run)
    finally:
        test_over.set()
    (result,) = outcome.results()
    assert result.content == content_of(
        TOOL_TIMED_OUT, "the tool did not finish within 0.02 s and was stopped"
    )
    assert stopped == (["cancelled", "cancelled again"] if swallow_once else ["cancelled"])
    assert type(outcome.result) is LoopCompleted
    assert outcome.ends()[0].result is result


@lab_7_4
async def test_an_abort_while_a_group_runs_gives_every_call_exactly_one_result() -> None:
    probe = Probe()
    controller = AbortController()
    probe.gate("b")  # b waits for ever; a finishes; w and c never start

    def abort_once_a_ended(event: AgentEvent) -> None:
        if type(event) is ToolEnd and event.result.tool_call_id == "a":
            controller.abort("user pressed stop")

    calls = [call("a", "read"), call("b", "read"), call("w", "write"), call("c", "read")]
    _, run = start(
        [asks(*calls)], probe.tools("read", "write"), controller=controller, policies={"read": SAFE}
    )
    outcome = await read_to_end(run, abort_once_a_ended)
    assert outcome.result == LoopAborted(
        transcript=outcome.result.transcript, turns=1, reason="user pressed stop"
    )
    aborted = content_of(TOOL_CALL_ABORTED, "not run to the end: the run was aborted")
    assert [(r.tool_call_id, r.content) for r in outcome.results()] == [
        ("a", "ran a"),
        ("b", aborted),
        ("w", aborted),
        ("c", aborted),
    ]
    assert [e.call.id for e in outcome.events if type(e) is ToolStart] == ["a", "b"]
    assert [e.result.tool_call_id for e in outcome.ends()] == ["a", "b"]
    assert probe.running == set()
    check_transcript(outcome.result.transcript)


@lab_7_4
async def test_a_fatal_error_in_a_group_stops_its_siblings_and_skips_the_rest() -> None:
    probe = Probe()
    probe.gate("b")
    fatal = NonRecoverableToolError("disk on fire")

    async def explode(value: object, context: ToolContext) -> str:
        await probe.has_started("b").wait()  # b is running when the error is raised
        raise fatal

    registry = probe.tools("read", "write")
    registry.register(
        {"name": "boom", "description": "boom", "validate": accept, "execute": explode}
    )
    calls = [call("b", "read"), call("x", "boom"), call("w", "write")]
    _, run = start([asks(*calls)], registry, policies={"read": SAFE, "boom": SAFE})
    outcome = await read_to_end(run)
    assert type(outcome.result) is LoopToolFatal
    assert outcome.result.error is fatal
    skipped = content_of(
        TOOL_CALL_SKIPPED,
        "not run to the end: a call of this turn raised a non-recoverable error",
    )
    assert [(r.tool_call_id, r.content) for r in outcome.results()] == [
        ("b", skipped),
        ("x", skipped),
        ("w", skipped),
    ]
    assert probe.running == set()
    assert ("start", "w") not in probe.log
    check_transcript(outcome.result.transcript)


@lab_7_4
async def test_an_abort_while_the_model_streams_appends_nothing_of_the_turn() -> None:
    controller = AbortController()
    model = ScriptedModel(
        [asks(call("c1"), call("c2"))], on_chunk=lambda index, event: controller.abort("stop")
    )
    run = run_agent_loop(model, Probe().tools(), [QUESTION], signal=controller.signal)
    outcome = await read_to_end(run)
    assert outcome.result == LoopAborted(transcript=(QUESTION,), turns=1, reason="stop")


@lab_7_4
async def test_an_abort_before_the_start_asks_the_model_nothing() -> None:
    controller = AbortController()
    controller.abort("not now")
    model, run = start([ScriptedResponse.reply(FINAL)], Probe().tools(), controller=controller)
    outcome = await read_to_end(run)
    assert outcome.result == LoopAborted(transcript=(QUESTION,), turns=0, reason="not now")
    assert model.requests == ()
    assert outcome.events == []


# ---------------------------------------------------------------------------------------------
# Lab 7.5: hardening
# ---------------------------------------------------------------------------------------------


async def test_a_crashed_run_raises_its_bug_from_result() -> None:  # crash is given
    run = AgentRun()
    bug = RuntimeError("a bug")
    run.crash(bug)
    with raises_exactly(RuntimeError, "a bug"):
        await run.result()
    assert [event async for event in run] == []


@lab_7_5
async def test_an_exhausted_script_is_raised_by_result_and_leaves_no_consumer_waiting() -> None:
    _, run = start([asks(call("c1"))], Probe().tools())
    events = [event async for event in run]  # ends: the consumer is not left waiting
    with raises_exactly(ScriptExhaustedError, "request 2 is past the end of the script (length 1)"):
        await run.result()
    assert events[-1].kind == "turn_start"  # the second turn asked an exhausted script


class BadModel:
    def __init__(self, answer: object) -> None:
        self.answer = answer

    def stream(self, messages: object, *, tools: object, signal: AbortSignal) -> object:
        return self.answer


def stream_of(events: list[object], ending: object) -> EventStream[StreamEvent, StreamResult]:
    stream: EventStream[object, object] = EventStream()
    for event in events:
        stream.push(event)
    stream.end(ending)
    return stream  # type: ignore[return-value]


@lab_7_5
@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (3, "model.stream() must return an EventStream, got int"),
        ("stream_with_a_dict", "the model's stream must carry StreamEvents, got dict"),
        (
            "stream_ending_with_none",
            "the model's stream must end with a StreamResult, got NoneType",
        ),
    ],
)
async def test_a_model_that_breaks_the_protocol_ends_the_run_with_a_type_error(
    answer: object, message: str
) -> None:
    if answer == "stream_with_a_dict":
        answer = stream_of([{"kind": "text_delta"}], None)
    elif answer == "stream_ending_with_none":
        answer = stream_of([], None)
    model: Any = BadModel(answer)  # it claims to be a Model; the loop finds out it is not
    run = run_agent_loop(model, Probe().tools(), [QUESTION], signal=AbortController().signal)
    [event async for event in run]
    with raises_exactly(TypeError, message):
        await run.result()


@lab_7_5
def test_refuse_stream_end_names_what_the_stream_ended_with() -> None:
    with raises_exactly(TypeError, "the model's stream must end with a StreamResult, got dict"):
        refuse_stream_end({"kind": "done"})


@lab_7_5
async def test_an_answer_that_reuses_a_call_id_fails_the_run_and_appends_nothing() -> None:
    _, run = start([asks(call("c1")), asks(call("c1"))], Probe().tools())
    outcome = await read_to_end(run)
    assert outcome.result == LoopModelFailed(
        transcript=outcome.result.transcript,
        turns=2,
        code=INVALID_ASSISTANT_MESSAGE,
        message="$[3]: tool call id 'c1' was already used",
    )
    assert len(outcome.result.transcript) == 3


TURN_ONE = [call("a", "read"), call("b", "read"), call("w", "write"), call("c", "read")]
LAST_EVENT_BEFORE_THE_FINAL_ANSWER = 20


@lab_7_5
@pytest.mark.parametrize("abort_at", range(23))
async def test_an_abort_at_any_point_leaves_one_result_per_call_and_a_valid_transcript(
    abort_at: int,
) -> None:
    # Without an abort this run has 23 events: abort right after the consumer sees each one
    # (while streaming, before a group, inside the concurrent group, between groups, after).
    probe = Probe()
    controller = AbortController()

    def abort_there(event: AgentEvent) -> None:
        if event.seq == abort_at:
            controller.abort("stop")

    _, run = start(
        [asks(*TURN_ONE), ScriptedResponse.reply(FINAL)],
        probe.tools("read", "write"),
        controller=controller,
        policies={"read": SAFE},
    )
    outcome = await read_to_end(run, abort_there)
    result = outcome.result
    check_transcript(result.transcript)
    assert probe.running == set()
    assert replay_transcript([QUESTION], outcome.events) == result.transcript
    if len(result.transcript) > 1:
        assert [r.tool_call_id for r in outcome.results()] == ["a", "b", "w", "c"]
    # Up to the final answer's model_event (seq 20) the abort wins; once the final answer is
    # appended (seq 21) the run has already completed when the consumer sees it.
    assert result.kind == (
        "aborted" if abort_at <= LAST_EVENT_BEFORE_THE_FINAL_ANSWER else "completed"
    )


@lab_7_5
async def test_a_cancelled_consumer_does_not_stop_the_run() -> None:
    probe = Probe()
    probe.gate("c1")
    _, run = start([asks(call("c1")), ScriptedResponse.reply(FINAL)], probe.tools())
    seen: list[AgentEvent] = []

    async def consume() -> None:
        async for event in run:
            seen.append(event)

    consumer = asyncio.get_running_loop().create_task(consume())
    await until_started(probe, run, "c1")
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    probe.gates["c1"].set()
    result = await run.result()
    assert type(result) is LoopCompleted
    assert probe.running == set()


@lab_7_5
@settings(max_examples=40, deadline=None)
@given(
    turns=st.lists(
        st.lists(
            st.tuples(st.sampled_from(["safe", "exclusive", "none"]), st.integers(0, 3)), max_size=5
        ),
        min_size=1,
        max_size=3,
    ),
    max_concurrency=st.integers(1, 3),
)
def test_random_scripts_policies_and_finishing_orders_keep_every_invariant(
    turns: list[list[tuple[str, int]]], max_concurrency: int
) -> None:
    ticks: dict[str, int] = {}
    running: set[str] = set()
    overlaps: list[tuple[str, frozenset[str]]] = []

    async def tool(value: dict[str, str], context: ToolContext) -> str:
        call_id = value["id"]
        running.add(call_id)
        overlaps.append((call_id, frozenset(running)))
        for _ in range(ticks[call_id]):
            await asyncio.sleep(0)
            overlaps.append((call_id, frozenset(running)))
        running.discard(call_id)
        return call_id

    registry = ToolRegistry(
        [
            {"name": n, "description": n, "validate": accept, "execute": tool}
            for n in ("safe", "exclusive", "none")
        ]
    )
    script = []
    for t, turn in enumerate(turns):
        calls = []
        for i, (name, tick) in enumerate(turn):
            ticks[f"t{t}c{i}"] = tick
            calls.append(call(f"t{t}c{i}", name))
        script.append(asks(*calls) if calls else ScriptedResponse.reply(FINAL))
    script.append(ScriptedResponse.reply(FINAL))

    async def scenario() -> Outcome:
        model = ScriptedModel(script)
        run = run_agent_loop(
            model,
            registry,
            [QUESTION],
            signal=AbortController().signal,
            policies={"safe": SAFE, "exclusive": ToolPolicy()},
            max_concurrency=max_concurrency,
        )
        return await read_to_end(run)

    outcome = asyncio.run(scenario())
    transcript = outcome.result.transcript
    check_transcript(transcript)
    assert [e.seq for e in outcome.events] == list(range(len(outcome.events)))
    assert replay_transcript([QUESTION], outcome.events) == transcript
    answers = [m for m in transcript if type(m) is AssistantMessage]
    expected_ids = [c.id for m in answers for c in m.tool_calls]
    assert [r.tool_call_id for r in outcome.results()] == expected_ids
    exclusive = {c.id for m in answers for c in m.tool_calls if c.name != "safe"}
    for call_id, others in overlaps:
        if call_id in exclusive:
            assert others == {call_id}
        assert len(others) <= max_concurrency


@lab_7_1
async def test_a_cancelled_driver_stops_the_tools_and_result_says_so() -> None:
    probe = Probe()
    probe.gate("c1")
    _, run = start([asks(call("c1"))], probe.tools())
    await until_started(probe, run, "c1")
    assert run.driver is not None
    run.driver.cancel()
    with raises_exactly(RuntimeError, "the agent loop's task was cancelled"):
        await run.result()
    assert probe.running == set()
    assert run.driver.cancelled()


def test_report_progress_without_a_listener_does_nothing() -> None:
    context = ToolContext(signal=AbortController().signal, tool_call_id="c1")
    assert context.on_progress is None
    context.report_progress({"any": "data"})  # 06 alone: nobody listens


def test_a_tool_context_refuses_an_on_progress_that_is_not_callable() -> None:
    with raises_exactly(TypeError, "ToolContext.on_progress must be callable or None, got int"):
        ToolContext(signal=AbortController().signal, tool_call_id="c1", on_progress=3)  # type: ignore[arg-type]


@lab_7_5
async def test_a_call_that_breaks_the_tool_contract_is_a_bug_raised_by_result() -> None:
    forged = call("c1")
    object.__setattr__(forged, "name", "")  # a frozen record forged after its checks
    probe = Probe()
    _, run = start([asks(forged)], probe.tools())
    events = [event async for event in run]
    with raises_exactly(ToolContractError, "INVALID_TOOL_CALL: call name must be a non-empty str"):
        await run.result()
    assert "tool_end" not in [event.kind for event in events]
    assert probe.log == []

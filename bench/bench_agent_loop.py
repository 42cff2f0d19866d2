"""Time the agent loop: the cost of one turn, and what running calls side by side saves.

**Loop overhead.** One workload goes through every path: a scripted model that calls one trivial
tool, ``add(left=2, right=40)``, on every turn but the last, and answers ``done`` on the last;
a run of 200 turns is 200 model requests and 199 tool calls, and its time divided by 200 is the
cost of a turn. The paths are a hand-written baseline (the least a loop must do: ask, parse the
arguments, await the tool, append), this course's ``run_agent_loop`` with checkpoint 04's
``ScriptedModel``, the OpenAI Agents SDK's ``Runner`` (with its own ``agents.testing`` scripted
model, and with a minimal ``Model`` that only returns the next reply), Pydantic AI's ``Agent``
with a ``FunctionModel``, and LangGraph's prebuilt ReAct agent with a fake chat model that
accepts tools. Every model's replies are built before the clock starts, and every path's
transcript is checked once (every result reads ``42``, then ``done``) before it is timed.

A transcript grows by two messages a turn, and every path reads the whole of it on some turn
step, so a turn costs more late in a long run: the run is timed at 20 turns and at 200 (the
issue's workload). For the harness, the two steps that read the whole transcript are also timed
alone, to say how much of its turn they are.

Method: the paths take turns (interleaved, in a rotating order) for R repeats, one whole run
each per repeat, and the median is reported. Ratios are against the baseline of the same
repeat, so load from other processes that drifts between repeats cancels out of them.

**Concurrency.** One turn of eight calls to a tool that waits 50 ms, through ``run_agent_loop``:
concurrency-safe (target: the run takes under 1.5 x 50 ms) and exclusive (target: about
8 x 50 ms; "about" is written down as at least 8 x 50 ms, since exclusive calls never overlap,
and under 8.5 x 50 ms).

Nothing here touches the network: every model is scripted, the OpenAI Agents SDK's tracing
(which would upload spans) is turned off, and ``network_refused`` makes any attempt fail.
Benchmarks are reports, not tests: a missed target is printed as MISSED and the exit code stays
0. ``python bench/bench_agent_loop.py --help`` lists the options.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import socket
import statistics
import time
import warnings
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

# Shared with the tool-call benchmark, this folder's first (both run with bench/ on sys.path):
# the same tool, add, registered with the harness the same way.
from bench_tool_call import (
    NOT_A_GATE,
    Kind,
    Row,
    Unavailable,
    add,
    below_every_framework,
    describe,
    distribution_version,
    execute_add,
    harness_registry,
    machine_line,
    rotations,
    verdict,
)

__all__ = ["main"]

TURNS = (20, 200)  # model requests per run, by default: turns - 1 tool calls, then the answer
TOOL_NAME = "add"
ARGUMENTS: dict[str, int] = {"left": 2, "right": 40}
ARGUMENTS_TEXT = json.dumps(ARGUMENTS)
EXPECTED_RESULT = "42"
ANSWER = "done"
QUESTION = "add 2 and 40, again and again"

# The concurrency workload: eight calls in one turn, each waiting this long.
CONCURRENT_CALLS = 8
WAIT_SECONDS = 0.05
SAFE_TARGET = 1.5  # x WAIT_SECONDS: eight safe calls overlap
EXCLUSIVE_FLOOR = CONCURRENT_CALLS  # x WAIT_SECONDS: exclusive calls never overlap
EXCLUSIVE_CEILING = CONCURRENT_CALLS + 0.5  # x WAIT_SECONDS: and add little to their waits


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What a run left in its transcript: the text of each tool result, and the answer."""

    results: tuple[str, ...]
    answer: str


RunOnce = Callable[[], Awaitable[object]]  # one whole run; returns the path's own transcript


@dataclass(frozen=True, slots=True, kw_only=True)
class Contender:
    """One way to run the workload: ``prepare`` builds a fresh run, untimed; the run is timed."""

    kind: Kind
    label: str
    version: str
    turns: int
    prepare: Callable[[], RunOnce]
    read: Callable[[object], Outcome]


def call_id(turn: int) -> str:
    """Return the id of the call made on ``turn`` (0-based): unique within a run."""
    return f"call-{turn}"


# --- the baseline: the least a loop must do by hand -----------------------------------------


@dataclass(frozen=True, slots=True)
class PlainCall:
    """A tool call as a model sends it: a name, an id, the arguments as JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class PlainReply:
    """An assistant message: text and the calls it makes."""

    text: str
    calls: tuple[PlainCall, ...]


@dataclass(frozen=True, slots=True)
class PlainResult:
    """A tool result: the id of the call it answers, and the text the model reads."""

    call_id: str
    text: str


PlainMessage = str | PlainReply | PlainResult


class ListModel:
    """A scripted model reduced to its core: return the next reply, after one await."""

    def __init__(self, replies: list[PlainReply]) -> None:
        self._replies = iter(replies)

    async def ask(self, messages: list[PlainMessage]) -> PlainReply:
        """Answer the transcript with the next scripted reply."""
        del messages  # a real model would read them; the script does not need to
        return next(self._replies)


def plain_replies(turns: int) -> list[PlainReply]:
    """Return the workload's replies: a call to add on every turn, then the answer."""
    calls = [
        PlainReply("", (PlainCall(call_id(turn), TOOL_NAME, ARGUMENTS_TEXT),))
        for turn in range(turns - 1)
    ]
    return [*calls, PlainReply(ANSWER, ())]


# --8<-- [start:baseline]
async def baseline_loop(model: ListModel, question: str) -> list[PlainMessage]:
    """Ask, append; for each call parse its arguments, await the tool, append; until no call."""
    messages: list[PlainMessage] = [question]
    while True:
        reply = await model.ask(messages)
        messages.append(reply)
        if not reply.calls:
            return messages
        for call in reply.calls:
            arguments = json.loads(call.arguments)
            output = await add(**arguments)
            messages.append(PlainResult(call.id, json.dumps(output)))


# --8<-- [end:baseline]


def checked_list(value: object) -> list[Any]:
    """Return ``value`` if it is a list, else raise: a path returned something unexpected."""
    if type(value) is not list:
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def read_baseline(transcript: object) -> Outcome:
    """Return what the baseline's transcript holds."""
    messages = checked_list(transcript)
    results = tuple(m.text for m in messages if type(m) is PlainResult)
    last = messages[-1]
    return Outcome(results=results, answer=last.text if type(last) is PlainReply else "")


def baseline_contender(turns: int) -> Contender:
    """Return the hand-written loop every ratio is measured against."""

    def prepare() -> RunOnce:
        model = ListModel(plain_replies(turns))
        return lambda: baseline_loop(model, QUESTION)

    return Contender(
        kind="reference",
        label="baseline: ask, json.loads, await add(**a), json.dumps, append",
        version="-",
        turns=turns,
        prepare=prepare,
        read=read_baseline,
    )


# --- this course's loop ---------------------------------------------------------------------


async def consume(run: Any) -> object:
    """Read every event of an agent run, as a host does, and return its result."""
    async for _ in run:
        pass
    return await run.result()


async def harness_contender(turns: int) -> Contender:
    """Return run_agent_loop with 04's ScriptedModel and 06's registry, every event read."""
    from harness.abort import AbortController
    from harness.agent_loop import run_agent_loop
    from harness.protocol import AssistantMessage, TextBlock, ToolCall, UserMessage
    from harness.scripted_model import ScriptedModel, ScriptedResponse

    registry = harness_registry(execute_add)
    question = UserMessage(content=(TextBlock(text=QUESTION),))
    calls = [
        ScriptedResponse.reply(
            AssistantMessage(
                content=(ToolCall.create(id=call_id(turn), name=TOOL_NAME, arguments=ARGUMENTS),)
            )
        )
        for turn in range(turns - 1)
    ]
    script = [*calls, ScriptedResponse.reply(AssistantMessage(content=(TextBlock(text=ANSWER),)))]

    def prepare() -> RunOnce:
        model = ScriptedModel(script)  # a script is used up by one run
        signal = AbortController().signal

        async def run_once() -> object:
            run = run_agent_loop(model, registry, [question], signal=signal, max_turns=turns)
            return await consume(run)

        return run_once

    return Contender(
        kind="harness",
        label="this course: run_agent_loop, 04's ScriptedModel, every event read",
        version=distribution_version("agent-harness-course"),
        turns=turns,
        prepare=prepare,
        read=read_harness,
    )


def read_harness(result: object) -> Outcome:
    """Return what a LoopCompleted's transcript holds."""
    from harness.loop_events import LoopCompleted
    from harness.protocol import AssistantMessage, TextBlock, ToolResultMessage

    if type(result) is not LoopCompleted:
        raise TypeError(f"the run ended with {result!r}")
    results = tuple(m.content for m in result.transcript if type(m) is ToolResultMessage)
    last = result.transcript[-1]
    texts = [] if type(last) is not AssistantMessage else last.content
    answer = "".join(block.text for block in texts if type(block) is TextBlock)
    return Outcome(results=results, answer=answer)


# --- the OpenAI Agents SDK ------------------------------------------------------------------


def openai_output(turn: int, turns: int) -> list[Any]:
    """Return the output items of one scripted turn: a call to add, or the answer."""
    from agents.testing import assistant_message, function_call

    if turn < turns - 1:
        return [function_call(TOOL_NAME, ARGUMENTS_TEXT, call_id=call_id(turn))]
    return [assistant_message(ANSWER)]


def openai_runner(agent: Any, turns: int) -> RunOnce:
    """Return one Runner.run of ``agent`` on the question, tracing off, turns enough."""
    from agents import RunConfig, Runner

    config = RunConfig(tracing_disabled=True)  # tracing would upload spans: never here

    async def run_once() -> object:
        return await Runner.run(agent, QUESTION, max_turns=turns, run_config=config)

    return run_once


def read_openai(result: object) -> Outcome:
    """Return what a RunResult holds: its tool outputs and its final output."""
    from agents import RunResult, ToolCallOutputItem

    if type(result) is not RunResult:
        raise TypeError(f"the run ended with {result!r}")
    results = tuple(
        str(item.output) for item in result.new_items if type(item) is ToolCallOutputItem
    )
    return Outcome(results=results, answer=str(result.final_output))


async def openai_scripted_contender(turns: int) -> Contender:
    """Return Runner.run with the SDK's own scripted model, agents.testing.ScriptedModel."""
    from agents import Agent, Tool, function_tool
    from agents.testing import ScriptedModel

    steps = [openai_output(turn, turns) for turn in range(turns)]
    tools: list[Tool] = [function_tool(add)]

    def prepare() -> RunOnce:
        model = ScriptedModel(steps)  # a script is used up by one run
        return openai_runner(Agent(name="bench", model=model, tools=tools), turns)

    return Contender(
        kind="framework",
        label="OpenAI Agents SDK: Runner.run, agents.testing.ScriptedModel",
        version=distribution_version("openai-agents"),
        turns=turns,
        prepare=prepare,
        read=read_openai,
    )


async def openai_minimal_contender(turns: int) -> Contender:
    """Return Runner.run with the least Model the SDK accepts: it returns the next reply."""
    from agents import Agent, Model, ModelResponse, Tool, Usage, function_tool

    outputs = [openai_output(turn, turns) for turn in range(turns)]

    class NextReplyModel(Model):
        """The SDK's Model interface, answering each request with the next prepared output."""

        def __init__(self) -> None:
            self._outputs = iter(outputs)

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            return ModelResponse(
                output=next(self._outputs), usage=Usage(requests=1), response_id=None
            )

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the benchmark runs the SDK without streaming")

    tools: list[Tool] = [function_tool(add)]

    def prepare() -> RunOnce:
        return openai_runner(Agent(name="bench", model=NextReplyModel(), tools=tools), turns)

    return Contender(
        kind="framework",
        label="OpenAI Agents SDK: Runner.run, a minimal Model (next reply only)",
        version=distribution_version("openai-agents"),
        turns=turns,
        prepare=prepare,
        read=read_openai,
    )


# --- Pydantic AI ----------------------------------------------------------------------------


async def pydantic_ai_contender(turns: int) -> Contender:
    """Return Agent.run with a FunctionModel that returns the next prepared response."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import UsageLimits

    responses = [
        ModelResponse(
            parts=[ToolCallPart(tool_name=TOOL_NAME, args=ARGUMENTS_TEXT, tool_call_id=call_id(t))]
        )
        for t in range(turns - 1)
    ]
    responses.append(ModelResponse(parts=[TextPart(content=ANSWER)]))
    limits = UsageLimits(request_limit=None)  # the default stops a run at 50 requests

    def prepare() -> RunOnce:
        replies = iter(responses)

        async def next_response(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            # async: FunctionModel runs a plain function in a worker thread, a hop that no
            # other path makes.
            return next(replies)

        agent = Agent(FunctionModel(next_response), tools=[add])

        async def run_once() -> object:
            return await agent.run(QUESTION, usage_limits=limits)

        return run_once

    return Contender(
        kind="framework",
        label="Pydantic AI: Agent.run, FunctionModel",
        version=distribution_version("pydantic-ai-slim"),
        turns=turns,
        prepare=prepare,
        read=read_pydantic_ai,
    )


def read_pydantic_ai(result: object) -> Outcome:
    """Return what an AgentRunResult holds: its tool returns and its output."""
    from pydantic_ai.agent import AgentRunResult
    from pydantic_ai.messages import ModelRequest, ToolReturnPart

    if type(result) is not AgentRunResult:
        raise TypeError(f"the run ended with {result!r}")
    results = tuple(
        part.model_response_str()
        for message in result.all_messages()
        if type(message) is ModelRequest
        for part in message.parts
        if type(part) is ToolReturnPart
    )
    return Outcome(results=results, answer=str(result.output))


# --- LangGraph ------------------------------------------------------------------------------


async def langgraph_contender(turns: int) -> Contender:
    """Return the prebuilt ReAct agent (create_react_agent) with a fake chat model."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatResult
    from langchain_core.runnables import RunnableConfig
    from langgraph.prebuilt import create_react_agent

    class ToolCallingFakeModel(FakeMessagesListChatModel):
        """langchain-core's list fake, taught to accept tools and to answer without a thread."""

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self  # the replies are scripted: the tools change nothing

        async def _agenerate(
            self, messages: list[BaseMessage], *args: Any, **kwargs: Any
        ) -> ChatResult:
            # The inherited async path runs the sync one in a thread pool; a model that
            # answers at once should not pay for a thread hop the other paths never make.
            return self._generate(messages)

    def replies() -> list[BaseMessage]:
        calls: list[BaseMessage] = [
            AIMessage(
                content="",
                tool_calls=[{"name": TOOL_NAME, "args": dict(ARGUMENTS), "id": call_id(turn)}],
            )
            for turn in range(turns - 1)
        ]
        return [*calls, AIMessage(content=ANSWER)]

    model = ToolCallingFakeModel(responses=replies())
    with warnings.catch_warnings():
        # 1.x says create_react_agent moved to langchain.agents.create_agent, a package the
        # course does not pin; the pinned langgraph-prebuilt still ships and runs this one.
        warnings.simplefilter("ignore")
        graph = create_react_agent(model, tools=[add])
    # Two graph steps a turn (the model, then the tools), and one to spare.
    config: RunnableConfig = {"recursion_limit": 2 * turns + 1}

    def prepare() -> RunOnce:
        model.responses = replies()  # fresh messages: the graph gives each an id in place
        model.i = 0

        async def run_once() -> object:
            return await graph.ainvoke({"messages": [("user", QUESTION)]}, config)

        return run_once

    return Contender(
        kind="framework",
        label="LangGraph: create_react_agent, a fake chat model that accepts tools",
        version=distribution_version("langgraph")
        + " (prebuilt "
        + distribution_version("langgraph-prebuilt")
        + ")",
        turns=turns,
        prepare=prepare,
        read=read_langgraph,
    )


def read_langgraph(state: object) -> Outcome:
    """Return what the graph's final state holds: its tool messages and the last message."""
    from langchain_core.messages import AIMessage, ToolMessage

    if type(state) is not dict:
        raise TypeError(f"the run ended with {state!r}")
    messages = state["messages"]
    results = tuple(str(m.content) for m in messages if type(m) is ToolMessage)
    last = messages[-1]
    return Outcome(results=results, answer=str(last.content) if type(last) is AIMessage else "")


LOOP_PATHS: tuple[tuple[Kind, str, Callable[[int], Awaitable[Contender]]], ...] = (
    ("harness", "this course", harness_contender),
    ("framework", "OpenAI Agents SDK (agents.testing)", openai_scripted_contender),
    ("framework", "OpenAI Agents SDK (minimal Model)", openai_minimal_contender),
    ("framework", "Pydantic AI", pydantic_ai_contender),
    ("framework", "LangGraph", langgraph_contender),
)


# --- measuring the loops --------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    """One timed run, in microseconds per turn: the process's CPU time, and the wall time."""

    cpu: float
    wall: float


async def time_run(contender: Contender) -> Sample:
    """Prepare one run, untimed, then return its microseconds per turn."""
    run_once = contender.prepare()
    gc.collect()
    # CPU time is what the loop itself spends: on a machine shared with other jobs, the wall
    # clock also counts the moments this process waited for a core.
    cpu, wall = time.process_time_ns(), time.perf_counter_ns()
    await run_once()
    cpu, wall = time.process_time_ns() - cpu, time.perf_counter_ns() - wall
    return Sample(cpu=cpu / contender.turns / 1000, wall=wall / contender.turns / 1000)


async def checked_run(contender: Contender) -> None:
    """Run once and raise unless the transcript holds exactly the expected outcome."""
    outcome = contender.read(await contender.prepare()())
    calls = contender.turns - 1
    if outcome != Outcome(results=(EXPECTED_RESULT,) * calls, answer=ANSWER):
        raise AssertionError(
            f"{len(outcome.results)} results {outcome.results[:2]!r}..., answer"
            f" {outcome.answer!r}; expected {calls} results of {EXPECTED_RESULT!r}, {ANSWER!r}"
        )


async def measure(contenders: list[Contender], repeats: int) -> dict[str, list[Sample]]:
    """Return each contender's microseconds per turn in every repeat, repeats interleaved."""
    samples: dict[str, list[Sample]] = {c.label: [] for c in contenders}
    for order in rotations(contenders, repeats):
        for contender in order:
            samples[contender.label].append(await time_run(contender))
    return samples


async def set_up(turns: int, warmup: int) -> tuple[list[Contender], list[Unavailable]]:
    """Build every path, check its transcript, warm it up, and keep those that work."""
    baseline = baseline_contender(turns)
    ready = [baseline]
    missing: list[Unavailable] = []
    for kind, label, factory in LOOP_PATHS:
        try:
            contender = await factory(turns)
            await checked_run(contender)
        except Exception as error:  # a framework absent, or its API moved
            missing.append(Unavailable(kind=kind, label=label, reason=describe(error)))
            continue
        ready.append(contender)
    await checked_run(baseline)
    for contender in ready:
        for _ in range(warmup):
            await time_run(contender)
    return ready, missing


# --- where a turn of the harness goes -------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Share:
    """Microseconds per turn, averaged over a run, that one step of the harness's turn costs."""

    step: str
    micros: float


async def harness_shares(turns: int, repeats: int) -> list[Share]:
    """Time, outside the loop, the two steps of a turn that read the whole transcript.

    The loop checks the transcript with the answer appended (``pending_tool_calls``, checkpoint
    03) and ScriptedModel records every request (``ModelRequest``, checkpoint 04); both go over
    every message, so their cost grows with the run. Each is timed here on the transcript a run
    of ``turns`` turns has at each request, and averaged over the turns.
    """
    from harness.loop_events import LoopCompleted
    from harness.messages import pending_tool_calls
    from harness.scripted_model import ModelRequest

    result = await (await harness_contender(turns)).prepare()()
    if type(result) is not LoopCompleted:
        raise TypeError(f"the run ended with {result!r}")
    transcript = result.transcript
    # Before request t (0-based) the transcript holds the question and t (call, result) pairs.
    asked = [tuple(transcript[: 1 + 2 * t]) for t in range(turns)]
    answered = [tuple(transcript[: 2 + 2 * t]) for t in range(turns)]

    def per_turn(step: Callable[[tuple[Any, ...]], object], inputs: list[tuple[Any, ...]]) -> float:
        samples = []
        for _ in range(repeats):
            gc.collect()
            start = time.process_time_ns()  # CPU time, as for the runs
            for messages in inputs:
                step(messages)
            samples.append((time.process_time_ns() - start) / turns / 1000)
        return statistics.median(samples)

    return [
        Share(
            step="checking the transcript with the answer (pending_tool_calls)",
            micros=per_turn(pending_tool_calls, answered),
        ),
        Share(
            step="04's ScriptedModel recording the request (ModelRequest)",
            micros=per_turn(lambda messages: ModelRequest(messages=messages), asked),
        ),
    ]


def render_shares(shares: list[Share], rows: list[Row], turns: int) -> list[str]:
    """Render each step's µs per turn and its share of the harness's µs per turn."""
    harness = next((r for r in rows if r.kind == "harness" and r.micros is not None), None)
    lines = [f"Where a harness turn goes, {turns} turns (each step timed alone, CPU µs/turn):", ""]
    for share in shares:
        part = (
            ""
            if harness is None or harness.micros is None
            else (f" ({share.micros / harness.micros:.0%} of the harness's {harness.micros:.1f})")
        )
        lines.append(f"  {share.step}: {share.micros:.1f} µs{part}")
    return [*lines, ""]


# --- concurrency ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class WallTimes:
    """The wall times, in ms, of one concurrency workload over every repeat."""

    label: str
    samples: tuple[float, ...]
    target: str
    met: bool


async def execute_wait(value: dict[str, int], context: object) -> int:
    """Wait WAIT_SECONDS, as a tool waiting on I/O does, then add."""
    del context
    await asyncio.sleep(WAIT_SECONDS)
    return value["left"] + value["right"]


async def eight_calls_ms(*, safe: bool) -> float:
    """Run one turn of eight waiting calls, then the answer; return the run's wall time in ms."""
    from harness.abort import AbortController
    from harness.agent_loop import LoopCompleted, ToolPolicy, run_agent_loop
    from harness.protocol import AssistantMessage, TextBlock, ToolCall, UserMessage
    from harness.scripted_model import ScriptedModel, ScriptedResponse

    calls = tuple(
        ToolCall.create(id=call_id(n), name=TOOL_NAME, arguments=ARGUMENTS)
        for n in range(CONCURRENT_CALLS)
    )
    model = ScriptedModel(
        [
            ScriptedResponse.reply(AssistantMessage(content=calls)),
            ScriptedResponse.reply(AssistantMessage(content=(TextBlock(text=ANSWER),))),
        ]
    )
    policies = {TOOL_NAME: ToolPolicy(concurrency_safe=safe)}
    question = UserMessage(content=(TextBlock(text=QUESTION),))
    registry = harness_registry(execute_wait)
    start = time.perf_counter_ns()
    run = run_agent_loop(
        model, registry, [question], signal=AbortController().signal, policies=policies
    )
    result = await consume(run)
    elapsed = (time.perf_counter_ns() - start) / 1e6
    if type(result) is not LoopCompleted or len(result.transcript) != CONCURRENT_CALLS + 3:
        raise AssertionError(f"the concurrency run ended with {result!r}")
    return elapsed


async def measure_concurrency(repeats: int) -> list[WallTimes]:
    """Time both workloads, interleaved, and judge each median against its target."""
    safe: list[float] = []
    exclusive: list[float] = []
    for _ in range(repeats):
        safe.append(await eight_calls_ms(safe=True))
        exclusive.append(await eight_calls_ms(safe=False))
    wait_ms = WAIT_SECONDS * 1000
    safe_median = statistics.median(safe)
    exclusive_median = statistics.median(exclusive)
    return [
        WallTimes(
            label=f"{CONCURRENT_CALLS} concurrency-safe calls",
            samples=tuple(safe),
            target=f"< {SAFE_TARGET} x {wait_ms:.0f} ms = {SAFE_TARGET * wait_ms:.0f} ms",
            met=safe_median < SAFE_TARGET * wait_ms,
        ),
        WallTimes(
            label=f"{CONCURRENT_CALLS} exclusive calls",
            samples=tuple(exclusive),
            target=f"about {CONCURRENT_CALLS} x {wait_ms:.0f} ms: "
            f"{EXCLUSIVE_FLOOR * wait_ms:.0f} to {EXCLUSIVE_CEILING * wait_ms:.0f} ms",
            met=EXCLUSIVE_FLOOR * wait_ms <= exclusive_median < EXCLUSIVE_CEILING * wait_ms,
        ),
    ]


# --- reporting ------------------------------------------------------------------------------


def build_rows(
    samples: dict[str, list[Sample]], ready: list[Contender], missing: list[Unavailable]
) -> list[Row]:
    """Turn samples into rows: the median times, and the median of the per-repeat CPU ratios."""
    reference = [sample.cpu for sample in samples[ready[0].label]]
    rows = [
        Row(
            kind=entry.kind,
            label=entry.label,
            version=entry.version,
            micros=statistics.median(sample.cpu for sample in samples[entry.label]),
            ratio=statistics.median(
                mine.cpu / theirs
                for mine, theirs in zip(samples[entry.label], reference, strict=True)
            ),
            wall=statistics.median(sample.wall for sample in samples[entry.label]),
        )
        for entry in ready
    ]
    rows.extend(
        Row(kind=m.kind, label=m.label, version="-", micros=None, ratio=None, note=m.reason)
        for m in missing
    )
    return rows


def render_table(rows: list[Row]) -> list[str]:
    """Render rows as a Markdown table (readable in a terminal, pasteable into the docs)."""
    lines = [
        "| path | version | CPU µs/turn | x baseline | wall µs/turn |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for row in rows:
        if row.micros is None or row.ratio is None or row.wall is None:
            lines.append(f"| {row.label} | {row.version} | - | unavailable: {row.note} | - |")
        else:
            lines.append(
                f"| {row.label} | {row.version} | {row.micros:.1f} | {row.ratio:.2f} |"
                f" {row.wall:.1f} |"
            )
    return lines


def render_loop_target(rows: list[Row], turns: int) -> str:
    """Say whether the harness took less time a turn than every framework measured."""
    met, partial = below_every_framework(rows)
    return f"  harness below every framework, {turns} turns .. {verdict(met)}{partial}"


def render_concurrency(times: list[WallTimes]) -> list[str]:
    """Render the wall times: median, spread, target, verdict."""
    lines = [
        "| workload | median ms | min-max ms | target | |",
        "| --- | ---: | ---: | --- | --- |",
    ]
    for entry in times:
        low, high = min(entry.samples), max(entry.samples)
        lines.append(
            f"| {entry.label} | {statistics.median(entry.samples):.1f} | "
            f"{low:.1f}-{high:.1f} | {entry.target} | {verdict(entry.met)} |"
        )
    return lines


# --- offline ------------------------------------------------------------------------------


@contextlib.contextmanager
def network_refused() -> Iterator[None]:
    """Refuse name lookups and every connection but a local socket's, while the block runs.

    Every model here is scripted, so nothing should reach the network; this makes sure of it. A
    framework that tried (a tracer uploading spans, say) fails loudly instead of measuring a
    round trip. asyncio's own wake-up sockets are a socketpair, which never calls connect.
    """
    connect, connect_ex, getaddrinfo = (
        socket.socket.connect,
        socket.socket.connect_ex,
        socket.getaddrinfo,
    )

    def refuse(what: object) -> ConnectionRefusedError:
        return ConnectionRefusedError(f"the benchmark is offline: refused {what!r}")

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if self.family != socket.AF_UNIX:
            raise refuse(address)
        connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        if self.family != socket.AF_UNIX:
            raise refuse(address)
        return connect_ex(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        raise refuse(host)

    socket.socket.connect = guarded_connect  # type: ignore[method-assign, assignment]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign, assignment]
    socket.getaddrinfo = guarded_getaddrinfo
    try:
        yield
    finally:
        socket.socket.connect = connect  # type: ignore[method-assign]
        socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = getaddrinfo


# --- entry point ----------------------------------------------------------------------------


async def loop_report(turns: int, repeats: int, warmup: int) -> tuple[list[str], list[Row]]:
    """Measure every path on a run of ``turns`` turns; return the table's lines and rows."""
    ready, missing = await set_up(turns, warmup)
    # What was set up (three frameworks' modules) moves out of the collector's sight, so the
    # collections the timed runs trigger cost the same for every path.
    gc.collect()
    gc.freeze()
    rows = build_rows(await measure(ready, repeats), ready, missing)
    lines = [
        f"Loop overhead, {turns} turns: {turns - 1} calls to add(left, right), then the answer;"
        f" µs per turn = a run's time / {turns}",
        "",
        *render_table(rows),
        "",
    ]
    return lines, rows


async def run(turn_counts: list[int], repeats: int, warmup: int, rounds: int) -> list[str]:
    """Measure everything in one event loop and return the report's lines."""
    lines = [
        "Agent loop benchmark",
        f"Machine: {machine_line()}",
        f"Method: one whole run per path per repeat after {warmup} warm-up run(s) and one checked"
        f" run, median of {repeats} interleaved repeats (ratios: median of per-repeat ratios of"
        " the process's CPU time), one asyncio loop",
        "",
    ]
    targets: list[str] = []
    for turns in turn_counts:
        table, rows = await loop_report(turns, repeats, warmup)
        lines.extend(table)
        lines.extend(render_shares(await harness_shares(turns, repeats), rows, turns))
        targets.append(render_loop_target(rows, turns))
    times = await measure_concurrency(rounds)
    return [
        *lines,
        f"Concurrency: one turn of {CONCURRENT_CALLS} calls to a tool that waits"
        f" {WAIT_SECONDS * 1000:.0f} ms, through run_agent_loop, {rounds} runs each, interleaved"
        " (a whole run's wall time: two model requests and the eight calls)",
        "",
        *render_concurrency(times),
        "",
        "Targets:",
        *targets,
        *(f"  {t.label} .. {verdict(t.met)}" for t in times),
        "",
        NOT_A_GATE,
    ]


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    """Read the command line: the run lengths, how many repeats, warm-up runs and rounds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--turns",
        type=int,
        nargs="+",
        default=list(TURNS),
        help="turns per run, one table each (20 200)",
    )
    parser.add_argument("--repeats", type=int, default=5, help="interleaved repeats (5)")
    parser.add_argument("--warmup", type=int, default=0, help="warm-up runs per path (0)")
    parser.add_argument(
        "--rounds", type=int, default=5, help="runs of each concurrency workload (5)"
    )
    options = parser.parse_args(argv)
    if min(options.turns) < 2 or options.repeats < 1 or options.warmup < 0 or options.rounds < 1:
        parser.error(
            "--turns must be at least 2 (a call, then the answer), --repeats and --rounds"
            " at least 1, --warmup at least 0"
        )
    return options


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the tables and return 0 whatever the numbers are."""
    options = parse_arguments(argv)
    with network_refused():
        lines = asyncio.run(run(options.turns, options.repeats, options.warmup, options.rounds))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

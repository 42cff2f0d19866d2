"""Page 07 (agent loop): concurrency of one answer's calls, opting out, timeouts, progress, and
what a cancelled run leaves in the history.

Overlap is shown without timers: a tool that waits for a sibling's event can only finish if the
sibling runs at the same time, and a bounded wait turns a serial run into a logged "gave up"
instead of a hang. The "Performance" part of the page is measured by `nox -s bench`, not here.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool
from agents.exceptions import UserError
from agents.items import ToolCallOutputItem
from agents.run_config import ToolExecutionConfig
from agents.testing import ScriptedModel, assistant_message, function_call
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tool_node
from mcp.client._memory import InMemoryTransport
from mcp.client.client import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import CancellationToken
from pydantic_ai import messages as pai
from pydantic_ai.exceptions import RunCancelled
from pydantic_ai.models.function import AgentInfo, FunctionModel

# Long enough never to expire while a sibling that runs at the same time sets the event.
PATIENCE = 5.0


class Log:
    """What the tools of one probe did, in order: "start a", "end a", "a gave up", …"""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.events: dict[str, asyncio.Event] = {}

    def event(self, name: str) -> asyncio.Event:
        return self.events.setdefault(name, asyncio.Event())

    async def waits_for(self, name: str, other: str) -> str:
        """Start, wait until ``other`` has ended, end: finishes only if ``other`` overlaps it."""
        self.lines.append(f"start {name}")
        try:
            async with asyncio.timeout(PATIENCE):
                await self.event(other).wait()
        except TimeoutError:
            self.lines.append(f"{name} gave up")
            return name
        self.lines.append(f"end {name}")
        return name

    async def yields(self, name: str) -> str:
        """Start, let the other tasks run a few times, end (no wait on anyone)."""
        self.lines.append(f"start {name}")
        for _ in range(5):
            await asyncio.sleep(0)
        self.lines.append(f"end {name}")
        self.event(name).set()
        return name


# --- OpenAI Agents SDK ----------------------------------------------------------------------


async def agents_turn(
    log: Log, calls: list[tuple[str, str]], config: RunConfig | None = None
) -> list[str]:
    """One response calling ``work(name, mode)`` for each pair; the outputs in item order."""

    async def work(name: str, mode: str) -> str:
        return await (log.yields(name) if mode == "yields" else log.waits_for(name, mode))

    model = ScriptedModel(
        [
            [
                function_call("work", f'{{"name": "{name}", "mode": "{mode}"}}', call_id=name)
                for name, mode in calls
            ],
            [assistant_message("done")],
        ]
    )
    agent = Agent(name="probe", model=model, tools=[function_tool(work)])
    result = await Runner.run(agent, "go", run_config=config)
    return [str(i.output) for i in result.new_items if isinstance(i, ToolCallOutputItem)]


async def test_openai_agents_runs_the_calls_of_one_response_concurrently() -> None:
    """Agents SDK: a response's calls run at once, outputs in call order; a cap of 1 serializes."""
    log = Log()
    outputs = await agents_turn(log, [("a", "b"), ("b", "yields")])
    assert log.lines == ["start a", "start b", "end b", "end a"]
    assert outputs == ["a", "b"]

    capped = Log()
    config = RunConfig(tool_execution=ToolExecutionConfig(max_function_tool_concurrency=1))
    await agents_turn(capped, [("a", "yields"), ("b", "yields")], config)
    assert capped.lines == ["start a", "end a", "start b", "end b"]


def interrupted_agent(started: asyncio.Event) -> Agent[Any]:
    """An agent whose one response calls `fast`, which returns, and `slow`, which never does."""

    async def fast(x: int) -> int:
        return x

    async def slow(x: int) -> int:
        started.set()
        await asyncio.Event().wait()
        return x

    model = ScriptedModel(
        [
            [
                function_call("fast", '{"x": 1}', call_id="c1"),
                function_call("slow", '{"x": 2}', call_id="c2"),
            ],
            [assistant_message("done")],
        ]
    )
    return Agent(name="probe", model=model, tools=[function_tool(fast), function_tool(slow)])


async def test_openai_agents_cancelled_run_keeps_nothing_of_the_turn() -> None:
    """Agents SDK: a run cancelled mid-tool keeps nothing of the turn, in its items or session."""
    started = asyncio.Event()
    session = SQLiteSession("streamed")
    result = Runner.run_streamed(interrupted_agent(started), "go", session=session)

    async def cancel_once_started() -> None:
        await started.wait()
        result.cancel()

    canceller = asyncio.create_task(cancel_once_started())
    async for _ in result.stream_events():
        pass
    await canceller
    assert result.new_items == []
    assert result.to_input_list() == [{"content": "go", "role": "user"}]
    assert await session.get_items() == [{"content": "go", "role": "user"}]

    started = asyncio.Event()
    session = SQLiteSession("run")
    run = asyncio.create_task(Runner.run(interrupted_agent(started), "go", session=session))
    await started.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert await session.get_items() == [{"content": "go", "role": "user"}]


async def test_openai_agents_timeout_cancels_the_tool_and_tells_the_model() -> None:
    """Agents SDK: `timeout_seconds` cancels the tool; the model reads one sentence; async only."""
    cancelled: list[int] = []

    async def slow(x: int) -> int:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(x)
            raise
        return x

    model = ScriptedModel(
        [[function_call("slow", '{"x": 1}', call_id="c1")], [assistant_message("ok")]]
    )
    agent = Agent(name="probe", model=model, tools=[function_tool(slow, timeout=0.05)])
    result = await Runner.run(agent, "go")
    outputs = [i.output for i in result.new_items if isinstance(i, ToolCallOutputItem)]
    assert outputs == ["Tool 'slow' timed out after 0.05 seconds."]
    assert cancelled == [1]

    def blocking(x: int) -> int:
        return x

    with pytest.raises(ValueError, match="only supported for async @function_tool handlers"):
        function_tool(blocking, timeout=1)


class Stubborn:
    """A tool that swallows the first cancellation, then waits for ``release``."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.swallowed = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, x: int) -> int:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.log.append("swallowed")
            self.swallowed.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.log.append("cancelled again")
            raise
        self.log.append("released")
        return x


async def test_openai_agents_waits_for_a_tool_that_swallows_its_timeout() -> None:
    """Agents SDK: a tool swallowing the timeout's cancellation holds the run; its value wins."""
    tool = Stubborn()

    async def stubborn(x: int) -> int:
        return await tool(x)

    model = ScriptedModel(
        [[function_call("stubborn", '{"x": 1}', call_id="c1")], [assistant_message("ok")]]
    )
    agent = Agent(name="probe", model=model, tools=[function_tool(stubborn, timeout=0.05)])
    run = asyncio.create_task(Runner.run(agent, "go"))
    await tool.swallowed.wait()
    for _ in range(50):
        await asyncio.sleep(0)
    assert not run.done()  # still waiting for the tool, long after its timeout
    tool.release.set()
    result = await run
    assert [i.output for i in result.new_items if isinstance(i, ToolCallOutputItem)] == [1]
    assert tool.log == ["swallowed", "released"]


def test_openai_agents_has_no_per_tool_concurrency_switch() -> None:
    """Agents SDK: function_tool has no per-tool concurrency switch, only the run-wide cap."""
    words = ("sequential", "parallel", "concurren", "exclusive")
    parameters = inspect.signature(function_tool).parameters
    assert not [name for name in parameters if any(word in name for word in words)]


# --- Pydantic AI ------------------------------------------------------------------------------


def scripted(calls: list[tuple[str, str, str]]) -> FunctionModel:
    """A FunctionModel that answers once with ``calls`` (name, arguments, id), then with text."""
    answered: list[bool] = []

    def model(history: list[pai.ModelMessage], info: AgentInfo) -> pai.ModelResponse:
        if answered:
            return pai.ModelResponse(parts=[pai.TextPart(content="done")])
        answered.append(True)
        parts = [pai.ToolCallPart(tool_name=n, args=a, tool_call_id=i) for n, a, i in calls]
        return pai.ModelResponse(parts=list(parts))

    return FunctionModel(function=model)


def tool_returns(history: list[pai.ModelMessage]) -> list[tuple[str, str, str]]:
    """Every ToolReturnPart of a history: (call id, outcome, text the model reads)."""
    return [
        (part.tool_call_id, part.outcome, part.model_response_str())
        for message in history
        for part in message.parts
        if isinstance(part, pai.ToolReturnPart)
    ]


def pydantic_worker(log: Log) -> Callable[[str, str], Awaitable[str]]:
    async def work(name: str, mode: str) -> str:
        return await (log.yields(name) if mode == "yields" else log.waits_for(name, mode))

    return work


def call(name: str, mode: str, tool_name: str = "work") -> tuple[str, str, str]:
    return (tool_name, f'{{"name": "{name}", "mode": "{mode}"}}', name)


async def test_pydantic_ai_runs_tool_calls_in_parallel() -> None:
    """Pydantic AI: the calls of one response run at once; returns in call order."""
    log = Log()
    agent = PydanticAgent(scripted([call("a", "b"), call("b", "yields")]))
    agent.tool_plain(pydantic_worker(log))
    result = await agent.run("go")
    assert log.lines == ["start a", "start b", "end b", "end a"]
    assert [(i, outcome) for i, outcome, _ in tool_returns(result.all_messages())] == [
        ("a", "success"),
        ("b", "success"),
    ]


async def test_pydantic_ai_sequential_tool_is_a_barrier_not_the_whole_batch() -> None:
    """Pydantic AI: a `sequential=True` call is a barrier: it runs alone, the rest at once."""
    log = Log()
    calls = [call("a", "yields"), call("s", "yields", "alone"), call("b", "c"), call("c", "yields")]
    agent = PydanticAgent(scripted(calls))
    work = pydantic_worker(log)
    agent.tool_plain(work)

    async def alone(name: str, mode: str) -> str:
        return await work(name, mode)

    agent.tool_plain(sequential=True)(alone)
    await agent.run("go")
    assert log.lines == [
        *("start a", "end a", "start s", "end s"),
        *("start b", "start c", "end c", "end b"),
    ]


async def test_pydantic_ai_timeout_cancels_the_tool_and_asks_for_a_retry() -> None:
    """Pydantic AI: a tool's `timeout` cancels it; the model gets "Timed out after …" as a retry."""
    cancelled: list[int] = []
    agent = PydanticAgent(scripted([("slow", '{"x": 1}', "c1")]))

    async def slow(x: int) -> int:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(x)
            raise
        return x

    agent.tool_plain(timeout=0.05)(slow)
    result = await agent.run("go")
    ((call_id, outcome, text),) = tool_returns(result.all_messages())
    assert (call_id, outcome) == ("c1", "retried")
    assert "Timed out after 0.05 seconds." in text
    assert cancelled == [1]


async def test_pydantic_ai_cancels_again_a_tool_that_swallows_its_timeout() -> None:
    """Pydantic AI: a tool that swallows the timeout's cancellation is cancelled again and stops."""
    tool = Stubborn()
    agent = PydanticAgent(scripted([("stubborn", '{"x": 1}', "c1")]))

    async def stubborn(x: int) -> int:
        return await tool(x)

    agent.tool_plain(timeout=0.05)(stubborn)
    async with asyncio.timeout(PATIENCE):  # without the second cancellation: a clear failure
        result = await agent.run("go")
    ((call_id, outcome, text),) = tool_returns(result.all_messages())
    assert (call_id, outcome) == ("c1", "retried")
    assert "Timed out after 0.05 seconds." in text
    assert tool.log == ["swallowed", "cancelled again"]


async def test_pydantic_ai_cancelled_run_closes_unanswered_calls_as_interrupted() -> None:
    """Pydantic AI: a cancelled run keeps finished returns; the next marks the rest interrupted."""
    started = asyncio.Event()
    token = CancellationToken()
    agent = PydanticAgent(scripted([("fast", '{"x": 1}', "c1"), ("hang", '{"x": 2}', "c2")]))

    @agent.tool_plain
    async def fast(x: int) -> int:
        return x

    @agent.tool_plain
    async def hang(x: int) -> int:
        started.set()
        await asyncio.Event().wait()
        return x

    async def cancel_once_started() -> None:
        await started.wait()
        token.cancel()

    canceller = asyncio.create_task(cancel_once_started())
    with pytest.raises(RunCancelled) as raised:
        await agent.run("go", cancellation_token=token)
    await canceller
    history = raised.value.all_messages()
    assert tool_returns(history) == [("c1", "success", "1")]  # c2 has no return yet
    last = history[-1]
    assert isinstance(last, pai.ModelRequest)
    assert last.state == "interrupted"

    sent: list[pai.ModelMessage] = []

    def next_model(messages: list[pai.ModelMessage], info: AgentInfo) -> pai.ModelResponse:
        sent.extend(messages)
        return pai.ModelResponse(parts=[pai.TextPart(content="ok")])

    await PydanticAgent(FunctionModel(function=next_model)).run(message_history=history)
    assert tool_returns(sent) == [
        ("c1", "success", "1"),
        ("c2", "interrupted", "The tool call was interrupted before a result was produced."),
    ]


async def test_a_raising_call_cancels_its_siblings_in_agents_sdk_and_pydantic_ai() -> None:
    """Agents SDK (failure_error_function=None) and Pydantic AI cancel a raising call's siblings."""
    cancelled: list[str] = []
    started = asyncio.Event()

    async def hang(x: int) -> int:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append("agents" if x == 1 else "pydantic")
            raise
        return x

    async def fail(x: int) -> int:
        await started.wait()
        raise ValueError("disk on fire")

    model = ScriptedModel(
        [
            [
                function_call("hang", '{"x": 1}', call_id="c1"),
                function_call("fail", '{"x": 1}', call_id="c2"),
            ]
        ]
    )
    tools = [function_tool(t, failure_error_function=None) for t in (hang, fail)]
    with pytest.raises(UserError, match="disk on fire"):
        await Runner.run(Agent(name="probe", model=model, tools=tools), "go")
    assert cancelled == ["agents"]

    started.clear()
    agent = PydanticAgent(scripted([("hang", '{"x": 2}', "c1"), ("fail", '{"x": 2}', "c2")]))
    agent.tool_plain(hang)
    agent.tool_plain(fail)
    with pytest.raises(ValueError, match="disk on fire"):
        await agent.run("go")
    assert cancelled == ["agents", "pydantic"]


# --- LangGraph's ToolNode ---------------------------------------------------------------------


def tool_graph(
    tools: list[BaseTool], checkpointer: InMemorySaver | None = None, **options: Any
) -> CompiledStateGraph[Any]:
    """A one-node graph: ToolNode runs the calls of the AI message it is given."""
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(tools, **options))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile(checkpointer=checkpointer)


def ai_message(*calls: tuple[str, dict[str, Any], str]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in calls])


def langchain_worker(log: Log) -> BaseTool:
    @tool
    async def work(name: str, mode: str) -> str:
        """Log, then yield or wait for a sibling."""
        return await (log.yields(name) if mode == "yields" else log.waits_for(name, mode))

    return work


@tool
async def boom(name: str) -> str:
    """Always fails."""
    raise ValueError("disk on fire")


async def test_langgraph_tool_node_runs_calls_at_once_in_call_order() -> None:
    """ToolNode runs a message's calls at once, ToolMessages in call order; no switch stops it."""
    log = Log()
    message = ai_message(
        ("work", {"name": "a", "mode": "b"}, "a"), ("work", {"name": "b", "mode": "yields"}, "b")
    )
    state = await tool_graph([langchain_worker(log)]).ainvoke({"messages": [message]})
    assert log.lines == ["start a", "start b", "end b", "end a"]
    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.content) for m in results] == [("a", "a"), ("b", "b")]
    words = ("sequential", "parallel", "concurren", "exclusive")
    parameters = inspect.signature(ToolNode.__init__).parameters
    assert not [name for name in parameters if any(word in name for word in words)]


async def test_langgraph_tool_node_error_leaves_siblings_running() -> None:
    """ToolNode: an exception ends the graph, siblings run on; handled, an error ToolMessage."""
    log = Log()
    work = langchain_worker(log)
    message = ai_message(("work", {"name": "a", "mode": "z"}, "a"), ("boom", {"name": "b"}, "b"))
    with pytest.raises(ValueError, match="disk on fire"):
        await tool_graph([work, boom]).ainvoke({"messages": [message]})
    assert log.lines == ["start a"]  # the graph has returned; `a` has not ended
    log.event("z").set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert log.lines == ["start a", "end a"]  # not cancelled: it ran on after the graph raised

    handled = Log()
    message = ai_message(
        ("work", {"name": "a", "mode": "yields"}, "a"), ("boom", {"name": "b"}, "b")
    )
    state = await tool_graph([langchain_worker(handled), boom], handle_tool_errors=True).ainvoke(
        {"messages": [message]}
    )
    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.status, m.content) for m in results] == [
        ("a", "success", "a"),
        ("b", "error", "Error: ValueError('disk on fire')\n Please fix your mistakes."),
    ]


async def test_langgraph_cancelled_graph_cancels_tools_and_saves_no_result() -> None:
    """ToolNode: cancelling the graph cancels its tools; its checkpoint keeps no ToolMessage."""
    log = Log()
    cancelled: list[str] = []

    @tool
    async def hang(name: str) -> str:
        """Wait for ever."""
        log.lines.append(f"start {name}")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(name)
            raise
        return name

    graph = tool_graph([langchain_worker(log), hang], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "probe"}}
    message = ai_message(
        ("work", {"name": "a", "mode": "yields"}, "a"), ("hang", {"name": "b"}, "b")
    )
    run = asyncio.create_task(graph.ainvoke({"messages": [message]}, config))
    await log.event("a").wait()  # `a` has finished; `b` still waits
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert cancelled == ["b"]
    saved = await graph.aget_state(config)
    assert [type(m).__name__ for m in saved.values["messages"]] == ["AIMessage"]
    assert saved.next == ("tools",)  # resuming runs both calls again


def test_tool_node_and_mcp_tools_take_no_timeout() -> None:
    """ToolNode and MCPServer's add_tool or tool take no timeout; tool_node.py never names one."""
    for function in (ToolNode.__init__, MCPServer.add_tool, MCPServer.tool):
        assert not [p for p in inspect.signature(function).parameters if "timeout" in p]
    assert "timeout" not in inspect.getsource(tool_node)


# --- MCP Python SDK ---------------------------------------------------------------------------


class RecordingTransport:
    """The SDK's in-memory transport, recording every JSON-RPC message the client sends."""

    def __init__(self, server: MCPServer) -> None:
        self.inner = InMemoryTransport(server)
        self.sent: list[dict[str, Any]] = []

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self.inner.__aenter__()
        sent = self.sent

        class Recording:
            async def send(self, message: Any) -> None:
                sent.append(message.message.model_dump(by_alias=True, exclude_none=True))
                await write.send(message)

            async def aclose(self) -> None:
                await write.aclose()

            async def __aenter__(self) -> Recording:
                return self

            async def __aexit__(self, *exc: object) -> None:
                await write.aclose()

        return read, Recording()

    async def __aexit__(self, *exc: Any) -> None:
        await self.inner.__aexit__(*exc)


def mcp_calls(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [message for message in sent if message.get("method") == "tools/call"]


async def test_mcp_progress_needs_a_progress_token() -> None:
    """MCP: a `progress_callback` puts a progressToken on the request and receives each report."""
    server = MCPServer("probe")

    async def work(steps: int, context: Context) -> str:
        for step in range(1, steps + 1):
            await context.report_progress(step, steps, f"step {step}")
        return "done"

    server.add_tool(work)
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    transport = RecordingTransport(server)
    async with Client(transport) as client:
        await client.call_tool("work", {"steps": 2}, progress_callback=on_progress)
        quiet = await client.call_tool("work", {"steps": 2})
    assert reports == [(1.0, 2.0, "step 1"), (2.0, 2.0, "step 2")]
    assert not quiet.is_error
    with_callback, without = mcp_calls(transport.sent)
    assert "progressToken" in with_callback["params"]["_meta"]
    assert "progressToken" not in without["params"]["_meta"]


async def test_mcp_read_timeout_raises_and_cancels_the_request() -> None:
    """MCP: `read_timeout_seconds` raises MCPError -32001 and cancels the request's handler."""
    server = MCPServer("probe")
    stopped = anyio.Event()

    async def slow(x: int) -> int:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            stopped.set()
            raise
        return x

    server.add_tool(slow)
    transport = RecordingTransport(server)
    async with Client(transport) as client:
        with pytest.raises(MCPError, match="Request 'tools/call' timed out") as raised:
            await client.call_tool("slow", {"x": 1}, read_timeout_seconds=0.05)
        await stopped.wait()  # the handler's own cancellation, not a timer
    assert raised.value.error.code == -32001
    (request,) = mcp_calls(transport.sent)
    cancelled = [m for m in transport.sent if m.get("method") == "notifications/cancelled"]
    assert [m["params"] for m in cancelled] == [
        {"requestId": request["id"], "reason": "timed out after 0.05s"}
    ]


# --- Pi SDK -----------------------------------------------------------------------------------


def test_pi_parallel_mode_runs_calls_at_once_results_in_call_order(pi: dict[str, Any]) -> None:
    """Pi: "parallel" (the default) runs calls at once, results in call order; "sequential" not."""
    loop = pi["agentLoop"]
    assert loop["parallel"] == {
        "log": ["start a", "start b", "end b", "end a"],
        "results": ["a", "b"],
    }
    assert loop["sequential"]["log"] == ["start a", "end a", "start b", "end b"]


def test_pi_one_sequential_tool_serializes_the_whole_batch(pi: dict[str, Any]) -> None:
    """Pi: one tool with `executionMode: "sequential"` makes the whole batch run one by one."""
    assert pi["agentLoop"]["oneSequentialTool"]["log"] == [
        *("start a", "end a", "start s", "end s", "start b", "end b")
    ]


def test_pi_abort_keeps_what_running_tools_return(pi: dict[str, Any]) -> None:
    """Pi: an abort while calls run leaves each its own outcome: the tool's error or its result."""
    assert pi["agentLoop"]["abortedWhileRunning"] == [
        {"id": "c0", "isError": True, "text": "stopped by its signal"},
        {"id": "c1", "isError": False, "text": "finished anyway"},
    ]


def test_pi_abort_in_sequence_leaves_calls_without_a_result(pi: dict[str, Any]) -> None:
    """Pi: an abort during a sequential batch leaves the later calls without a result."""
    aborted = pi["agentLoop"]["abortedInSequence"]
    assert aborted["calls"] == ["c0", "c1", "c2"]
    assert aborted["results"] == [{"id": "c0", "isError": False, "text": "first"}]


def test_pi_progress_updates_only_while_the_tool_runs(pi: dict[str, Any]) -> None:
    """Pi: `onUpdate` while `execute` runs emits tool_execution_update; a late one is dropped."""
    assert pi["agentLoop"]["progressEvents"] == [
        {"type": "tool_execution_start", "id": "c0"},
        {"type": "tool_execution_update", "id": "c0", "partial": "half"},
        {"type": "tool_execution_update", "id": "c0", "partial": "all"},
        {"type": "tool_execution_end", "id": "c0"},
    ]


def test_pi_has_no_timeout(pi: dict[str, Any]) -> None:
    """Pi: neither the agent loop nor the AgentTool type mentions a timeout."""
    assert pi["agentLoop"]["timeoutMentioned"] is False

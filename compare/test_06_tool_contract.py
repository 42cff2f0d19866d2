"""Page 06 (tool contract): validation, result codes, errors, cancellation, output, schemas.

The "Performance" part of the page is measured by `nox -s bench`, not here.
"""

from __future__ import annotations

import asyncio
import inspect
import typing
from typing import Any

import anyio
import pydantic
import pytest
from agents import function_tool
from agents.exceptions import ModelBehaviorError, UserError
from agents.run_config import ToolExecutionConfig
from agents.tool_context import ToolContext
from frameworks import (
    json_text,
    langchain_call,
    mcp_call,
    mcp_text,
    openai_agents_call,
    pydantic_ai_calls,
    tool_node_call,
)
from langchain_core.messages import ToolMessage
from langchain_core.tools import InjectedToolCallId, StructuredTool, tool
from langgraph.prebuilt import tool_node
from mcp.client.client import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import ToolAnnotations
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import FunctionToolset, ModelRetry, RunContext, ToolFailed
from pydantic_ai import messages as pai_messages
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.models.test import TestModel
from pydantic_ai.tool_manager import ToolManager
from pydantic_ai.usage import RunUsage

FIXED_TEXT = "An error occurred while running the tool. Please try again."
BIG = "y" * 100_000


def add(left: int, right: int) -> int:
    """Add two integers."""
    return left + right


def fail(left: int, right: int) -> int:
    """Always fails."""
    raise ValueError("disk on fire")


def mapping(left: int, right: int) -> dict[str, Any]:
    """Return a mapping whose keys are not in sorted order."""
    return {"b": left, "a": "é"}


def big(left: int, right: int) -> str:
    """Return 100,000 characters."""
    return BIG


lc_add = tool(add)
lc_fail = tool(fail)


# --- Validation before effects -------------------------------------------------------------


def test_pi_coerces_arguments_and_keeps_unknown_keys(pi: dict[str, Any]) -> None:
    """Pi's argument validation coerces "2" -> 2 and null -> 0, and keeps unknown keys."""
    checked = pi["argumentValidation"]
    assert checked["typeboxString"] == {"ok": {"left": 2, "right": 3}}
    assert checked["typeboxNull"] == {"ok": {"left": 0, "right": 3}}
    assert checked["jsonSchemaString"] == {"ok": {"left": 2, "right": 3}}
    assert checked["jsonSchemaNull"] == {"ok": {"left": 0, "right": 3}}
    assert checked["typeboxExtra"] == {"ok": {"left": 2, "right": 3, "extra": True}}
    assert checked["jsonSchemaExtra"] == {"ok": {"left": 2, "right": 3, "extra": True}}
    assert pi["toolExecution"]["received"][0]["params"] == {"left": 2, "right": 3, "extra": 1}


async def test_openai_agents_ignores_extra_keys_and_coerces() -> None:
    """Agents SDK: a pydantic model of the signature runs first; extra keys ignored, "2" -> 2."""
    output = await openai_agents_call(add, '{"left": "2", "right": 3, "extra": 1}')
    assert output.text == "5"


async def test_pydantic_ai_refuses_an_extra_key_and_retries() -> None:
    """Pydantic AI refuses an extra key (a retry to the model) and accepts "2" as 2."""
    returns = await pydantic_ai_calls(
        add, ['{"left": 2, "right": 3, "extra": 1}', '{"left": "2", "right": 3}']
    )
    assert [r.outcome for r in returns] == ["retried", "success"]
    assert "extra_forbidden" in returns[0].text
    assert returns[1].text == "5"


async def test_langchain_drops_extra_keys_coerces_and_skips_dict_schemas() -> None:
    """LangChain: extra keys dropped, "2" -> 2; a plain-dict args_schema is not checked at all."""
    message = await langchain_call(lc_add, {"left": "2", "right": 3, "extra": 1})
    assert message.content == "5"

    async def echo(**arguments: Any) -> str:
        return json_text(arguments)

    schema = {
        "type": "object",
        "properties": {"left": {"type": "integer"}},
        "required": ["left"],
        "additionalProperties": False,
    }
    unchecked = StructuredTool.from_function(
        coroutine=echo, name="echo", description="echo", args_schema=schema
    )
    message = await langchain_call(unchecked, {"left": "two", "other": 1})
    assert message.content == '{"left":"two","other":1}'


async def test_mcp_ignores_extra_keys_and_coerces() -> None:
    """MCP's MCPServer: a pydantic model; extra keys ignored, "2" accepted as 2."""
    server = MCPServer("probe")
    server.add_tool(add)
    result = await mcp_call(server, "add", {"left": "2", "right": 3, "extra": 1})
    assert not result.is_error
    assert mcp_text(result) == "5"


# --- Result codes --------------------------------------------------------------------------


def test_pi_results_carry_no_error_code(pi: dict[str, Any]) -> None:
    """Pi: a failure is a ToolResultMessage with isError and the error's text; no error code."""
    (thrown,) = pi["toolExecution"]["thrown"]["results"]
    assert thrown["isError"] is True
    assert thrown["text"] == "disk on fire"
    assert not any("code" in key.lower() for key in thrown["keys"])


async def test_openai_agents_output_is_one_string() -> None:
    """Agents SDK: no result codes; by default the output the model reads is one string."""
    assert (await openai_agents_call(fail, '{"left": 1, "right": 2}')).text == FIXED_TEXT


def test_pydantic_ai_outcomes() -> None:
    """Pydantic AI: ToolReturnPart.outcome is success, failed, denied, interrupted or retried."""
    outcome = typing.get_type_hints(pai_messages.ToolReturnPart)["outcome"]
    assert typing.get_args(outcome) == ("success", "failed", "denied", "interrupted", "retried")


def test_langchain_status_and_mcp_is_error() -> None:
    """LangChain's ToolMessage.status is success or error; MCP's result has is_error plus text."""
    status = typing.get_type_hints(ToolMessage)["status"]
    assert typing.get_args(status) == ("success", "error")
    from mcp_types import CallToolResult

    assert CallToolResult.model_fields["is_error"].annotation is bool


# --- Errors: shown to the model or fatal ---------------------------------------------------


def test_pi_has_no_fatal_marker_and_terminate_stops_a_batch(pi: dict[str, Any]) -> None:
    """Pi: errors, unknown tools become results; `terminate: true` on every result ends the run."""
    runs = pi["toolExecution"]
    assert runs["unknown"]["results"] == [
        {
            "isError": True,
            "text": "Tool missing not found",
            "keys": runs["unknown"]["results"][0]["keys"],
        }
    ]
    assert runs["thrown"]["modelCalls"] == 2  # the run went on after the failure
    assert runs["terminated"]["modelCalls"] == 1  # both results set terminate: the run stopped
    assert runs["mixed"]["modelCalls"] == 2  # one result without it: the run went on
    assert "terminate?: boolean;" in pi["declaredTypes"]["agentToolResult"]


async def test_openai_agents_shows_every_failure_as_one_fixed_text() -> None:
    """Agents SDK: any exception, and invalid arguments, become the same fixed text."""
    failed = await openai_agents_call(fail, '{"left": 1, "right": 2}')
    invalid = await openai_agents_call(add, '{"left": "two", "right": 2}')
    assert failed.text == invalid.text == FIXED_TEXT


async def test_openai_agents_raises_only_without_a_failure_function() -> None:
    """Agents SDK: a tool raises only with failure_error_function=None; an unknown tool raises."""
    with pytest.raises(UserError, match="disk on fire") as raised:
        await openai_agents_call(fail, '{"left": 1, "right": 2}', failure_error_function=None)
    assert isinstance(raised.value.__cause__, ValueError)
    from agents import Agent, Runner
    from agents.testing import ScriptedModel, function_call

    model = ScriptedModel([[function_call("missing", "{}", call_id="c1")]])
    with pytest.raises(ModelBehaviorError, match="not found"):
        await Runner.run(Agent(name="a", model=model, tools=[function_tool(add)]), "go")


async def test_pydantic_ai_shows_invalid_arguments_as_a_retry_without_opt_in() -> None:
    """Pydantic AI shows invalid arguments to the model as a retry (no opt-in); once, then fails."""
    returns = await pydantic_ai_calls(
        add, ['{"left": "two", "right": 2}', '{"left": 1, "right": 2}']
    )
    assert [r.outcome for r in returns] == ["retried", "success"]
    with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries count of 1"):
        await pydantic_ai_calls(add, ['{"left": "two", "right": 2}'] * 2)


async def test_pydantic_ai_ends_the_run_on_any_other_exception() -> None:
    """Pydantic AI: other exceptions end the run; a tool opts in with ModelRetry or ToolFailed."""
    with pytest.raises(ValueError, match="disk on fire"):
        await pydantic_ai_calls(fail, ['{"left": 1, "right": 2}'])

    def retry(left: int, right: int) -> int:
        raise ModelRetry("try smaller numbers")

    returns = await pydantic_ai_calls(retry, ['{"left": 1, "right": 2}'])
    assert returns[0].outcome == "retried"
    assert issubclass(ToolFailed, Exception)


async def test_langchain_tool_raises_on_invalid_arguments_and_exceptions() -> None:
    """LangChain's @tool raises on invalid arguments and on any exception; handlers are off."""
    with pytest.raises(Exception, match="validation error"):
        await langchain_call(lc_add, {"left": "two", "right": 2})
    with pytest.raises(ValueError, match="disk on fire"):
        await langchain_call(lc_fail, {"left": 1, "right": 2})
    assert lc_add.handle_tool_error is False
    assert lc_add.handle_validation_error is False


async def test_langgraph_tool_node_shows_argument_errors_and_reraises_the_rest() -> None:
    """LangGraph's ToolNode shows argument errors to the model and re-raises the rest."""
    message = await tool_node_call([lc_add, lc_fail], "add", {"left": "two", "right": 2})
    assert message.status == "error"
    with pytest.raises(ValueError, match="disk on fire"):
        await tool_node_call([lc_add, lc_fail], "fail", {"left": 1, "right": 2})


async def test_mcp_error_kinds() -> None:
    """MCP: invalid arguments, ToolError are is_error text; others only "Error executing tool"."""
    server = MCPServer("probe")
    server.add_tool(add)
    server.add_tool(fail)

    def told(left: int) -> int:
        raise ToolError("told the model")

    def protocol(left: int) -> int:
        raise MCPError(code=-32000, message="protocol level")

    server.add_tool(told)
    server.add_tool(protocol)
    invalid = await mcp_call(server, "add", {"left": "two", "right": 2})
    assert invalid.is_error
    failed = await mcp_call(server, "fail", {"left": 1, "right": 2})
    assert (failed.is_error, mcp_text(failed)) == (True, "Error executing tool fail")
    explained = await mcp_call(server, "told", {"left": 1})
    assert (explained.is_error, mcp_text(explained)) == (
        True,
        "Error executing tool told: told the model",
    )
    async with Client(server) as client:
        with pytest.raises(MCPError, match="protocol level"):
            await client.call_tool("protocol", {"left": 1})


# --- Cancellation --------------------------------------------------------------------------


def test_pi_execute_receives_an_abort_signal(pi: dict[str, Any]) -> None:
    """Pi: `execute` receives an AbortSignal."""
    assert all(seen["signalIsAbortSignal"] for seen in pi["toolExecution"]["received"])


def test_pi_abort_runs_no_further_call_of_the_batch(pi: dict[str, Any]) -> None:
    """Pi: after an abort no further call of the batch runs ("Operation aborted" in parallel)."""
    batch = pi["toolExecution"]["abortedBatch"]
    assert batch["sequential"] == {"ran": ["first"], "results": ["first"]}
    assert batch["parallel"] == {"ran": ["first"], "results": ["first", "Operation aborted"]}


async def test_openai_agents_turns_a_cancelled_error_into_text() -> None:
    """Agents SDK: a CancelledError raised inside a tool becomes the error text."""

    async def cancelled(left: int) -> int:
        raise asyncio.CancelledError

    assert (await openai_agents_call(cancelled, '{"left": 1}')).text == FIXED_TEXT


async def test_openai_agents_cancels_the_tool_without_waiting_for_it() -> None:
    """Agents SDK: cancelling the run cancels the tool's task and re-raises without waiting."""
    started, release = asyncio.Event(), asyncio.Event()
    cancelled: list[int] = []
    cleaned: list[int] = []

    async def slow(left: int) -> int:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(left)
            raise
        finally:
            await release.wait()
            cleaned.append(left)
        return left

    run = asyncio.create_task(openai_agents_call(slow, '{"left": 1}'))
    await started.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run  # returns while the tool's cleanup still waits
    assert (cancelled, cleaned) == ([1], [])
    release.set()
    for _ in range(20):
        await asyncio.sleep(0)
    assert cleaned == [1]


async def test_pydantic_ai_waits_for_cancelled_tool_tasks() -> None:
    """Pydantic AI: cancelling the run cancels the tool tasks and waits for them."""
    started, release = asyncio.Event(), asyncio.Event()
    cleaned = []

    async def slow(left: int) -> int:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            await release.wait()
            cleaned.append(left)
        return left

    run = asyncio.create_task(pydantic_ai_calls(slow, ['{"left": 1}']))
    await started.wait()
    run.cancel()
    for _ in range(20):
        await asyncio.sleep(0)
    assert not run.done()  # still waiting for the tool's cleanup
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert cleaned == [1]


async def test_mcp_cancelling_a_call_cancels_the_handler() -> None:
    """MCP: a client that cancels its call gets no answer, and the server's handler is cancelled."""
    server = MCPServer("probe")
    started, stopped = anyio.Event(), anyio.Event()
    answers: list[object] = []

    async def slow(left: int) -> int:
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            stopped.set()
            raise
        return left

    server.add_tool(slow)
    async with Client(server) as client, anyio.create_task_group() as group:
        scope = anyio.CancelScope()

        async def call() -> None:
            with scope:
                answers.append(await client.call_tool("slow", {"left": 1}))

        group.start_soon(call)
        await started.wait()
        scope.cancel()
        await stopped.wait()  # the handler's own cancellation, not a timer
    assert answers == []


def test_langgraph_tool_node_gathers_without_return_exceptions() -> None:
    """LangGraph's ToolNode runs every call at once with asyncio.gather, no return_exceptions."""
    source = inspect.getsource(tool_node.ToolNode._afunc)
    assert "asyncio.gather(*coros)" in source
    assert "return_exceptions" not in source


# --- Output text and size cap --------------------------------------------------------------


def test_pi_results_are_structured(pi: dict[str, Any]) -> None:
    """Pi: a tool returns structured `content` and `details`."""
    result = pi["declaredTypes"]["agentToolResult"]
    assert "content: (TextContent | ImageContent)[];" in result
    assert "details: T;" in result


async def test_openai_agents_writes_str_of_the_output_without_cap() -> None:
    """Agents SDK: by default str(output), so a dict arrives as a Python repr; no cap."""
    assert (
        await openai_agents_call(mapping, '{"left": 1, "right": 2}')
    ).text == "{'b': 1, 'a': 'é'}"
    assert (await openai_agents_call(big, '{"left": 1, "right": 2}')).text == BIG


class MappingOutput(pydantic.BaseModel):
    b: int
    a: str


async def test_openai_agents_writes_compact_json_with_an_output_schema() -> None:
    """Agents SDK: with `output_type` or `output_json_schema` the output is compact JSON."""
    schema = MappingOutput.model_json_schema()
    typed = await openai_agents_call(mapping, '{"left": 1, "right": 2}', output_type=MappingOutput)
    raw = await openai_agents_call(mapping, '{"left": 1, "right": 2}', output_json_schema=schema)
    assert typed.text == raw.text == '{"b":1,"a":"é"}'


async def test_pydantic_ai_writes_json_in_insertion_order_without_cap() -> None:
    """Pydantic AI: pydantic JSON, keys in insertion order; no cap."""
    (written,) = await pydantic_ai_calls(mapping, ['{"left": 1, "right": 2}'])
    assert written.text == '{"b":1,"a":"é"}'
    (large,) = await pydantic_ai_calls(big, ['{"left": 1, "right": 2}'])
    assert large.text == BIG


async def test_langchain_writes_json_dumps_without_cap() -> None:
    """LangChain: json.dumps(ensure_ascii=False), else str(); no cap."""
    message = await langchain_call(tool(mapping), {"left": 1, "right": 2})
    assert message.content == '{"b": 1, "a": "é"}'
    assert (await langchain_call(tool(big), {"left": 1, "right": 2})).content == BIG


async def test_mcp_writes_indented_json_and_structured_content_without_cap() -> None:
    """MCP: pydantic_core.to_json(indent=2) plus structured_content; no cap."""
    server = MCPServer("probe")
    server.add_tool(mapping)
    server.add_tool(add)
    server.add_tool(big)
    written = await mcp_call(server, "mapping", {"left": 1, "right": 2})
    assert mcp_text(written) == '{\n  "b": 1,\n  "a": "é"\n}'
    assert (await mcp_call(server, "add", {"left": 1, "right": 2})).structured_content == {
        "result": 3
    }
    assert mcp_text(await mcp_call(server, "big", {"left": 1, "right": 2})) == BIG


# --- What the model is told ----------------------------------------------------------------


def test_pi_tools_have_a_schema_and_a_ui_label(pi: dict[str, Any]) -> None:
    """Pi: an AgentTool has TypeBox `parameters` (from Tool) and a `label` for the UI."""
    declared = pi["declaredTypes"]["agentTool"]
    assert "extends Tool<TParameters>" in declared
    assert "label: string;" in declared
    assert "executionMode?: ToolExecutionMode;" in declared
    assert "prepareArguments?" in declared


def test_openai_agents_schema_forbids_extra_keys_and_hides_the_context() -> None:
    """Agents SDK: schema has additionalProperties false; a ToolContext parameter is left out."""

    def read(context: ToolContext[None], path: str) -> str:
        return path

    schema = function_tool(read).params_json_schema
    assert schema["additionalProperties"] is False
    assert list(schema["properties"]) == ["path"]


async def test_pydantic_ai_schema_forbids_extra_keys_and_hides_the_context() -> None:
    """Pydantic AI: schema has additionalProperties false; a RunContext parameter is left out."""

    def read(context: RunContext[None], path: str) -> str:
        return path

    toolset: FunctionToolset[None] = FunctionToolset([read])
    run_context = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    manager = await ToolManager[None](toolset=toolset).for_run_step(run_context)
    (definition,) = manager.tool_defs
    assert definition.parameters_json_schema["additionalProperties"] is False
    assert list(definition.parameters_json_schema["properties"]) == ["path"]


def test_langchain_call_schema_hides_injected_arguments() -> None:
    """LangChain: tool_call_schema leaves out injected arguments."""

    @tool
    def read(path: str, call_id: typing.Annotated[str, InjectedToolCallId]) -> str:
        """Read a path."""
        return path

    assert list(read.tool_call_schema.model_json_schema()["properties"]) == ["path"]


async def test_mcp_schema_allows_extra_keys_and_hides_the_context() -> None:
    """MCP: inputSchema without additionalProperties false; the Context parameter is left out."""
    server = MCPServer("probe")

    def read(path: str, context: Context) -> str:
        return path

    server.add_tool(read)
    (listed,) = await server.list_tools()
    assert "additionalProperties" not in listed.input_schema
    assert list(listed.input_schema["properties"]) == ["path"]


# --- Concurrency ---------------------------------------------------------------------------


def test_concurrency_settings() -> None:
    """Agents SDK caps with max_function_tool_concurrency; Pydantic AI has `sequential`."""
    assert "max_function_tool_concurrency" in ToolExecutionConfig.__dataclass_fields__
    assert inspect.signature(PydanticAgent.tool_plain).parameters["sequential"].default is False
    assert callable(ToolManager.parallel_execution_mode)
    assert {"read_only_hint", "destructive_hint"} <= set(ToolAnnotations.model_fields)


def test_pi_tools_run_sequentially_or_in_parallel(pi: dict[str, Any]) -> None:
    """Pi runs a batch sequentially or in parallel; `executionMode` per tool."""
    assert "executionMode?: ToolExecutionMode;" in pi["declaredTypes"]["agentTool"]

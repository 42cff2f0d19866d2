"""Page 05 (provider adapter): how argument fragments are joined, and what is done with the text."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents.exceptions import ModelBehaviorError
from agents.models.chatcmpl_stream_handler import ChatCmplStreamHandler
from frameworks import mcp_call, openai_agents_call, pydantic_ai_calls
from langchain_core.messages import AIMessageChunk
from langchain_core.messages.tool import tool_call_chunk
from mcp.server.mcpserver import MCPServer
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import Response, ResponseFunctionToolCall
from pydantic_ai._parts_manager import ModelResponsePartsManager
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.models import ModelRequestParameters

FIXED_TEXT = "An error occurred while running the tool. Please try again."


def add(left: int, right: int) -> int:
    return left + right


def echo(value: float) -> float:
    return value


def delta(
    index: int, *, id: str | None = None, name: str | None = None, args: str | None = None
) -> ChatCompletionChunk:
    call = {"index": index, "id": id, "function": {"name": name, "arguments": args}}
    if id is not None:
        call["type"] = "function"
    choice = {"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}
    return ChatCompletionChunk.model_validate(
        {
            "id": "x",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [choice],
        }
    )


FINISH = ChatCompletionChunk.model_validate(
    {
        "id": "x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
    }
)


async def chunks(*items: ChatCompletionChunk) -> AsyncIterator[ChatCompletionChunk]:
    for item in items:
        yield item


async def handle(stream: AsyncIterator[ChatCompletionChunk]) -> list[Any]:
    response = Response(
        id="r",
        created_at=0,
        model="m",
        object="response",
        output=[],
        tool_choice="auto",
        tools=[],
        parallel_tool_calls=True,
    )
    return [event async for event in ChatCmplStreamHandler.handle_stream(response, stream)]  # type: ignore[arg-type]


async def test_openai_agents_joins_fragments_per_index_and_lets_a_later_id_win() -> None:
    """Agents SDK: fragments join per delta index, each re-emitted; a later id or name replaces."""
    events = await handle(
        chunks(
            delta(0, id="first", name="read", args='{"pa'),
            delta(0, args='th": "a"}'),
            delta(0, id="second", name="write"),
            FINISH,
        )
    )
    fragments = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert fragments == ['{"pa', 'th": "a"}']
    (completed,) = [e for e in events if e.type == "response.completed"]
    (call,) = completed.response.output
    assert isinstance(call, ResponseFunctionToolCall)
    assert (call.call_id, call.name, call.arguments) == ("second", "write", '{"path": "a"}')


async def test_openai_agents_buffered_stream_refuses_a_call_without_an_id() -> None:
    """Agents SDK: buffer_streamed_tool_calls raises ModelBehaviorError for a call with no id."""
    stream = ChatCmplStreamHandler.buffer_tool_call_stream(chunks(delta(0, args="{}"), FINISH))
    with pytest.raises(ModelBehaviorError, match="without a tool call id"):
        await handle(stream)


@pytest.mark.parametrize("text", ['{"left": 1, "right": 2', "[1, 2]"])
async def test_openai_agents_sends_fixed_text_for_bad_argument_text(text: str) -> None:
    """Agents SDK: truncated text or a non-object becomes the fixed error text sent to the model."""
    assert (await openai_agents_call(add, text)).text == FIXED_TEXT


async def test_openai_agents_keeps_the_last_duplicate_and_accepts_nan() -> None:
    """Agents SDK: a duplicate key keeps the last value, and NaN is accepted."""
    assert (await openai_agents_call(add, '{"left": 1, "left": 5, "right": 2}')).text == "7"
    assert math.isnan((await openai_agents_call(echo, '{"value": NaN}')).value)


def test_pydantic_ai_joins_fragments_per_vendor_part_id() -> None:
    """Pydantic AI's parts manager maps a vendor part id to one part and joins its fragments."""
    manager = ModelResponsePartsManager(model_request_parameters=ModelRequestParameters())
    manager.handle_tool_call_delta(
        vendor_part_id=0, tool_name="add", args='{"left":', tool_call_id="c"
    )
    manager.handle_tool_call_delta(vendor_part_id=1, tool_name="add", args='{"left": 9}')
    manager.handle_tool_call_delta(vendor_part_id=0, args=" 1}")
    parts = manager.get_parts()
    assert all(isinstance(part, ToolCallPart) for part in parts)
    assert [part.args for part in parts] == ['{"left": 1}', '{"left": 9}']


async def test_pydantic_ai_retries_invalid_json_once_by_default() -> None:
    """Pydantic AI: invalid JSON becomes a retry prompt (json_invalid) to the model, one retry."""
    returns = await pydantic_ai_calls(add, ['{"left": 1, "right": 2', '{"left": 1, "right": 2}'])
    assert [r.outcome for r in returns] == ["retried", "success"]
    assert "json_invalid" in returns[0].text


async def test_pydantic_ai_keeps_the_last_duplicate_and_accepts_nan() -> None:
    """Pydantic AI: a duplicate key keeps the last value, and NaN is accepted."""
    (duplicate,) = await pydantic_ai_calls(add, ['{"left": 1, "left": 5, "right": 2}'])
    assert duplicate.text == "7"
    (nan,) = await pydantic_ai_calls(echo, ['{"value": NaN}'])
    assert nan.outcome == "success"


def test_langchain_merges_chunks_by_index_unless_ids_differ() -> None:
    """LangChain: chunks with one index join unless their ids differ; index=None never merges."""

    def chunk(args: str, index: int | None, id: str | None) -> AIMessageChunk:
        return AIMessageChunk(
            content="", tool_call_chunks=[tool_call_chunk(name=None, args=args, id=id, index=index)]
        )

    same = chunk('{"a":', 0, "c1") + chunk(" 1}", 0, None)
    assert [c["args"] for c in same.tool_call_chunks] == ['{"a": 1}']
    other_id = chunk('{"a":', 0, "c1") + chunk(" 1}", 0, "c2")
    assert len(other_id.tool_call_chunks) == 2
    no_index = chunk('{"a":', None, None) + chunk(" 1}", None, None)
    assert len(no_index.tool_call_chunks) == 2


def test_langchain_completes_truncated_argument_text() -> None:
    """LangChain closes what is left open: {"path": "a -> {"path": "a"}, {"a": tru -> {}."""

    def parsed(text: str) -> AIMessageChunk:
        return AIMessageChunk(
            content="",
            tool_call_chunks=[tool_call_chunk(name="read", args=text, id="c1", index=0)],
        )

    assert [c["args"] for c in parsed('{"path": "a').tool_calls] == [{"path": "a"}]
    assert [c["args"] for c in parsed('{"a": tru').tool_calls] == [{}]
    for text in ("not json at all", "[1, 2]"):
        message = parsed(text)
        assert message.tool_calls == []
        assert [c["error"] for c in message.invalid_tool_calls] == [None]
    assert parsed('{"a": 1, "a": 2}').tool_calls[0]["args"] == {"a": 2}
    assert math.isnan(parsed('{"a": NaN}').tool_calls[0]["args"]["a"])


async def test_mcp_validates_parsed_arguments_and_answers_is_error() -> None:
    """MCP: `tools/call` carries parsed arguments; MCPServer validates them; failure: is_error."""
    server = MCPServer("probe")
    server.add_tool(add)
    result = await mcp_call(server, "add", {"left": "two", "right": 3})
    assert result.is_error


def test_pi_providers_complete_truncated_argument_text(pi: dict[str, Any]) -> None:
    """Pi's providers complete truncated argument JSON (parseStreamingJson), never refuse it."""
    truncated = pi["truncatedArguments"]
    assert truncated["openString"] == {"path": "a"}
    assert truncated["openLiteral"] == {"a": True}
    assert truncated["garbage"] == {}
    assert truncated["duplicate"] == {"a": 2}
    assert truncated["completionsProviderParsesWithIt"] is True


def test_pi_agent_loop_refuses_calls_of_a_length_stopped_message(pi: dict[str, Any]) -> None:
    """Pi's agent loop runs no call of a message cut off by the token limit: each is an error."""
    (result,) = pi["toolExecution"]["truncated"]["results"]
    assert result["isError"] is True
    assert "hit the output token limit" in result["text"]


def test_pi_agent_loop_validates_before_execute(pi: dict[str, Any]) -> None:
    """Pi's agent loop checks arguments against the tool's schema before `execute`."""
    (result,) = pi["toolExecution"]["invalid"]["results"]
    assert result["isError"] is True
    assert result["text"].startswith('Validation failed for tool "add":')
    assert all(seen["params"]["left"] != "two" for seen in pi["toolExecution"]["received"])

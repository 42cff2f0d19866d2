"""Page 03 (messages): where a tool result lives, how ids link it, how histories round-trip."""

from __future__ import annotations

import typing
from typing import Any

from langchain_core.messages import (
    AIMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)
from langchain_core.messages.tool import ToolCall as LangChainToolCall
from mcp_types import CallToolResult
from openai.types.responses.response_input_param import FunctionCallOutput
from pydantic_ai import Agent, messages
from pydantic_ai.models.test import TestModel


def test_pi_message_union_and_tool_result_fields(pi: dict[str, Any]) -> None:
    """Pi: Message = User | Assistant | ToolResult; a result has toolCallId, toolName, isError."""
    types = pi["declaredTypes"]
    assert types["messageUnion"] == "UserMessage | AssistantMessage | ToolResultMessage"
    for field in ("toolCallId: string;", "toolName: string;", "isError: boolean;", "timestamp"):
        assert field in types["toolResultMessage"]
    assert "content: string | (TextContent | ImageContent)[];" in types["userMessage"]


async def test_pydantic_ai_puts_the_tool_return_in_the_next_request() -> None:
    """Pydantic AI puts a ToolReturnPart, with the call's tool_call_id, in the next ModelRequest."""
    agent = Agent(TestModel())

    @agent.tool_plain
    def ping() -> str:
        return "pong"

    result = await agent.run("hi")
    history = result.all_messages()
    call_index, call = next(
        (i, part)
        for i, message in enumerate(history)
        for part in message.parts
        if isinstance(part, messages.ToolCallPart)
    )
    following = history[call_index + 1]
    assert isinstance(following, messages.ModelRequest)
    returns = [p for p in following.parts if isinstance(p, messages.ToolReturnPart)]
    assert [r.tool_call_id for r in returns] == [call.tool_call_id]


def test_results_name_their_call_except_in_mcp() -> None:
    """LangChain's ToolMessage and OpenAI's FunctionCallOutput name the call; MCP's does not."""
    assert ToolMessage.model_fields["tool_call_id"].annotation is str
    assert "call_id" in FunctionCallOutput.__annotations__
    fields = set(CallToolResult.model_fields)
    assert {"content", "structured_content", "is_error"} <= fields
    assert not any("id" in name.split("_") for name in fields)


def test_ids_are_optional_in_langchain_and_generated_by_pydantic_ai() -> None:
    """LangChain's ToolCall.id is `str | None`; Pydantic AI generates a missing tool_call_id."""
    assert typing.get_type_hints(LangChainToolCall)["id"] == str | None
    part = messages.ToolCallPart(tool_name="ping", args={})
    assert isinstance(part.tool_call_id, str)
    assert part.tool_call_id


def test_pydantic_ai_round_trip_loads_a_broken_linkage() -> None:
    """ModelMessagesTypeAdapter round-trips a history and does not refuse a result with no call."""
    orphan = [
        messages.ModelRequest(
            parts=[messages.ToolReturnPart(tool_name="ping", content="x", tool_call_id="nobody")]
        )
    ]
    adapter = messages.ModelMessagesTypeAdapter
    loaded = adapter.validate_json(adapter.dump_json(orphan))
    assert loaded == orphan


def test_langchain_round_trip_loads_a_broken_linkage() -> None:
    """messages_to_dict / messages_from_dict round-trip and do not refuse a result with no call."""
    history = [AIMessage(content="no calls"), ToolMessage(content="x", tool_call_id="nobody")]
    loaded = messages_from_dict(messages_to_dict(history))
    assert loaded == history

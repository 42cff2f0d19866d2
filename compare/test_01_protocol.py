"""Page 01 (protocol records): how the frameworks tag, store and type their records."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pydantic
import pytest
import typing_extensions
from agents.items import ToolCallItem
from langchain_core.messages.tool import ToolCall as LangChainToolCall
from mcp_types import CallToolRequestParams
from openai.types.responses import ResponseFunctionToolCall
from pydantic_ai import messages


def test_pydantic_ai_tags_parts_and_messages_with_literals() -> None:
    """Pydantic AI tags parts with part_kind literals and messages with a 'kind' discriminator."""
    assert typing.get_type_hints(messages.ToolCallPart)["part_kind"] == typing.Literal["tool-call"]
    assert typing.get_type_hints(messages.TextPart)["part_kind"] == typing.Literal["text"]
    union, discriminator = typing.get_args(messages.ModelMessage)
    assert typing.get_args(union) == (messages.ModelRequest, messages.ModelResponse)
    assert discriminator.discriminator == "kind"


def test_openai_agents_tags_run_items_with_a_type() -> None:
    """The OpenAI Agents SDK gives each run item a `type`, such as "tool_call_item"."""
    field = {f.name: f for f in dataclasses.fields(ToolCallItem)}["type"]
    assert field.default == "tool_call_item"


def test_pi_tags_messages_by_role_and_blocks_by_type(pi: dict[str, Any]) -> None:
    """Pi uses `role` on messages and `type` on content blocks ("toolCall")."""
    types = pi["declaredTypes"]
    assert 'type: "toolCall";' in types["toolCall"]
    assert 'role: "toolResult";' in types["toolResultMessage"]


def test_no_python_framework_freezes_its_records() -> None:
    """Pydantic AI's parts and messages and the Agents SDK's run items are unfrozen dataclasses."""
    for record in (messages.ToolCallPart, messages.ModelResponse, ToolCallItem):
        assert dataclasses.is_dataclass(record)
        assert not record.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert not messages.TextPart.__dataclass_params__.repr  # type: ignore[attr-defined]


def test_pydantic_ai_keeps_the_parts_list_it_was_given() -> None:
    """Pydantic AI's ModelResponse keeps a list passed in: changing the list changes the message."""
    parts: list[Any] = [messages.TextPart(content="a")]
    response = messages.ModelResponse(parts=parts)
    parts.append(messages.TextPart(content="b"))
    assert [p.content for p in response.parts] == ["a", "b"]
    response.parts = []  # assignable too: nothing is frozen
    assert response.parts == []


def test_tool_arguments_types() -> None:
    """Arguments: Pydantic AI str|dict|None, OpenAI a JSON str, LangChain and MCP a dict."""
    args = typing.get_type_hints(messages.ToolCallPart)["args"]
    assert args == str | dict[str, Any] | None
    assert ResponseFunctionToolCall.model_fields["arguments"].annotation is str
    assert typing_extensions.is_typeddict(LangChainToolCall)
    assert LangChainToolCall.__annotations__["args"] == dict[str, Any]
    assert CallToolRequestParams.model_fields["arguments"].annotation == dict[str, Any] | None


def test_pi_tool_call_arguments_are_a_record(pi: dict[str, Any]) -> None:
    """Pi's ToolCall.arguments is `Record<string, any>`."""
    assert "arguments: Record<string, any>;" in pi["declaredTypes"]["toolCall"]


def test_pydantic_ai_refuses_an_unknown_kind() -> None:
    """Pydantic AI's discriminated union refuses an unknown `kind` at run time."""
    adapter = messages.ModelMessagesTypeAdapter
    with pytest.raises(pydantic.ValidationError, match="kind"):
        adapter.validate_python([{"kind": "telegram", "parts": []}])

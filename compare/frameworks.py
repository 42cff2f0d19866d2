"""One tool call through each framework's own public path, shared by the probes of pages 05-06.

Each helper takes a plain Python function and the arguments a model sent, runs them the way the
framework runs a model's call (a scripted or function model stands in for the provider, so
nothing leaves the process), and returns what the model would read next, or raises what the
framework raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agents import Agent, Runner, function_tool
from agents.items import ToolCallOutputItem
from agents.testing import ScriptedModel, assistant_message, function_call
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from mcp.client.client import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import messages
from pydantic_ai.models.function import AgentInfo, FunctionModel


@dataclass(frozen=True, slots=True)
class AgentsOutput:
    """What the OpenAI Agents SDK hands the model: the output item's text, and the raw value."""

    text: str
    value: Any


async def openai_agents_call(
    tool: Callable[..., Any], arguments: str, **options: Any
) -> AgentsOutput:
    """Run one call of ``tool`` through ``Runner.run`` with the SDK's own ScriptedModel."""
    wrapped = function_tool(tool, **options)
    model = ScriptedModel(
        [[function_call(wrapped.name, arguments, call_id="c1")], [assistant_message("done")]]
    )
    result = await Runner.run(Agent(name="probe", model=model, tools=[wrapped]), "go")
    (item,) = [i for i in result.new_items if isinstance(i, ToolCallOutputItem)]
    raw = item.raw_item
    text = raw["output"] if isinstance(raw, dict) else raw.output
    return AgentsOutput(text=str(text), value=item.output)


@dataclass(frozen=True, slots=True)
class PydanticReturn:
    """One ToolReturnPart that Pydantic AI sent the model: its outcome and its text."""

    outcome: str
    text: str


async def pydantic_ai_calls(
    tool: Callable[..., Any], arguments: list[str], **tool_options: Any
) -> list[PydanticReturn]:
    """Run ``Agent.run`` with a FunctionModel that sends each of ``arguments`` in turn."""
    turns = iter(arguments)

    def model(history: list[messages.ModelMessage], info: AgentInfo) -> messages.ModelResponse:
        text = next(turns, None)
        if text is None:
            return messages.ModelResponse(parts=[messages.TextPart(content="done")])
        part = messages.ToolCallPart(tool_name=tool.__name__, args=text, tool_call_id="c1")
        return messages.ModelResponse(parts=[part])

    agent = PydanticAgent(FunctionModel(function=model))
    agent.tool_plain(**tool_options)(tool)
    result = await agent.run("go")
    return [
        PydanticReturn(outcome=part.outcome, text=part.model_response_str())
        for message in result.all_messages()
        for part in message.parts
        if isinstance(part, messages.ToolReturnPart)
    ]


async def langchain_call(tool: BaseTool, arguments: dict[str, Any]) -> ToolMessage:
    """Call a LangChain tool with a ToolCall, as an agent does: ``ainvoke`` -> ToolMessage."""
    call = {"type": "tool_call", "id": "c1", "name": tool.name, "args": arguments}
    message = await tool.ainvoke(call)
    assert isinstance(message, ToolMessage)
    return message


async def tool_node_call(
    tools: list[BaseTool], name: str, arguments: dict[str, Any]
) -> ToolMessage:
    """Run LangGraph's ToolNode in a one-node graph on one AI message with one call."""
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    call = AIMessage(content="", tool_calls=[{"name": name, "args": arguments, "id": "c1"}])
    state = await graph.compile().ainvoke({"messages": [call]})
    message = state["messages"][-1]
    assert isinstance(message, ToolMessage)
    return message


async def mcp_call(server: MCPServer, name: str, arguments: dict[str, Any]) -> CallToolResult:
    """Call a tool of an in-process MCPServer through the SDK's own Client (no transport)."""
    async with Client(server) as client:
        return await client.call_tool(name, arguments)


def mcp_text(result: CallToolResult) -> str:
    """The text of a one-block MCP result."""
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


def json_text(value: object) -> str:
    """Compact JSON, as this course writes an output."""
    return json.dumps(value, separators=(",", ":"))

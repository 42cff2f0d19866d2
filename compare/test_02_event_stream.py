"""Page 02 (event stream): how the frameworks stream a run and deliver its final result."""

from __future__ import annotations

import inspect
import typing
from typing import Any

import pytest
from agents import Agent, Runner, function_tool
from agents.exceptions import MaxTurnsExceeded
from agents.result import RunResultStreaming
from agents.testing import ScriptedModel, assistant_message, function_call
from langchain_core.language_models.chat_model_stream import AsyncChatModelStream
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from mcp.shared import jsonrpc_dispatcher
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models.test import TestModel
from pydantic_ai.result import StreamedRunResult


def test_pi_event_stream_ignores_a_push_after_the_end(pi: dict[str, Any]) -> None:
    """Pi's EventStream ignores a push after the end; the terminal event is read as an event."""
    stream = pi["eventStream"]
    assert stream["seen"] == ["a", "end"]
    assert stream["result"] == "result"


def test_pi_event_stream_readers_split_the_events(pi: dict[str, Any]) -> None:
    """Pi's EventStream: two readers split the events between them instead of being refused."""
    assert pi["eventStream"]["split"] == [1, 2]


def test_pi_event_stream_end_without_result_leaves_result_pending(pi: dict[str, Any]) -> None:
    """Pi's EventStream: `end()` without a result leaves `result()` pending."""
    assert pi["eventStream"]["endWithoutResult"] == "pending"


async def test_openai_agents_streams_events_then_the_final_output() -> None:
    """The Agents SDK's stream_events() is an async generator; the output is read afterwards."""
    model = ScriptedModel([[assistant_message("hello")]])
    result = Runner.run_streamed(Agent(name="a", model=model), "hi")
    assert isinstance(result, RunResultStreaming)
    assert inspect.isasyncgenfunction(RunResultStreaming.stream_events)
    events = [event async for event in result.stream_events()]
    assert events
    assert result.final_output == "hello"
    mode = typing.get_type_hints(RunResultStreaming.cancel)["mode"]
    assert typing.get_args(mode) == ("immediate", "after_turn")


async def test_openai_agents_raises_errors_from_stream_events() -> None:
    """The Agents SDK raises an error such as MaxTurnsExceeded from stream_events()."""

    @function_tool
    def ping() -> str:
        return "pong"

    model = ScriptedModel(
        [[function_call("ping", {}, call_id="c1")], [function_call("ping", {}, call_id="c2")]]
    )
    result = Runner.run_streamed(Agent(name="a", model=model, tools=[ping]), "hi", max_turns=1)
    with pytest.raises(MaxTurnsExceeded):
        async for _ in result.stream_events():
            pass


async def test_pydantic_ai_run_stream_is_an_async_context_manager() -> None:
    """Pydantic AI: run_stream() yields a StreamedRunResult; streams debounce by 0.1 by default."""
    agent = PydanticAgent(TestModel(custom_output_text="hello world"))
    async with agent.run_stream("hi") as result:
        assert isinstance(result, StreamedRunResult)
        texts = [text async for text in result.stream_text(debounce_by=None)]
    assert texts[-1] == "hello world"
    for method in (StreamedRunResult.stream_text, StreamedRunResult.stream_output):
        assert inspect.signature(method).parameters["debounce_by"].default == 0.1
    assert inspect.iscoroutinefunction(StreamedRunResult.cancel)


async def test_langchain_astream_yields_chunks_that_add_up() -> None:
    """LangChain's astream() yields AIMessageChunks; the caller adds them up, no terminal result."""
    model = GenericFakeChatModel(messages=iter([AIMessage(content="hello big world")]))
    chunks = [chunk async for chunk in model.astream("hi")]
    assert all(isinstance(chunk, AIMessageChunk) for chunk in chunks)
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert total.content == "hello big world"


async def test_langchain_v3_events_have_an_awaitable_output_and_many_readers() -> None:
    """LangChain's beta astream_events(version="v3"): an awaitable .output, several readers."""
    model = GenericFakeChatModel(messages=iter([AIMessage(content="hello big world")]))
    stream = await model.astream_events("hi", version="v3")
    assert isinstance(stream, AsyncChatModelStream)
    first = "".join([text async for text in stream.text])
    second = "".join([text async for text in stream.text])
    message = await stream.output
    assert first == second == "hello big world"
    assert isinstance(message, AIMessage)


def test_mcp_request_outcome_travels_through_a_one_slot_channel() -> None:
    """MCP's dispatcher sends a request's outcome through a memory object stream of one slot."""
    source = inspect.getsource(jsonrpc_dispatcher)
    assert "anyio.create_memory_object_stream[dict[str, Any] | ErrorData](1)" in source

"""Page 04 (scripted model): the frameworks' own fake models, and how each one runs out."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, Runner
from agents.testing import (
    ScriptedModel,
    UnconsumedModelSteps,
    UnexpectedModelCall,
    assistant_message,
)
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel


def test_pi_faux_provider_takes_options_and_queued_responses(pi: dict[str, Any]) -> None:
    """Pi's registerFauxProvider(options) is fed through setResponses/appendResponses."""
    faux = pi["fauxProvider"]
    assert {"setResponses", "appendResponses", "getPendingResponseCount"} <= set(faux["handleKeys"])
    assert faux["pendingBefore"] == 2
    assert "tokensPerSecond?: number;" in pi["declaredTypes"]["fauxOptions"]
    assert "factory" not in pi["declaredTypes"]["fauxRegistration"]


def test_pi_faux_provider_streams_deltas_and_honours_abort(pi: dict[str, Any]) -> None:
    """Pi's faux provider streams token-sized deltas and ends an aborted stream with "aborted"."""
    faux = pi["fauxProvider"]
    assert faux["firstDeltas"] > 1
    assert faux["firstLast"] == "done"
    assert faux["aborted"] == {"type": "error", "stopReason": "aborted"}


def test_pi_faux_provider_exhaustion_is_an_error_message(pi: dict[str, Any]) -> None:
    """Pi's faux provider: running out ends the stream with "No more faux responses queued"."""
    faux = pi["fauxProvider"]
    assert faux["exhausted"] == {
        "type": "error",
        "stopReason": "error",
        "message": "No more faux responses queued",
    }
    assert faux["thrown"] == {"type": "error", "message": "factory failed"}
    assert faux["callCount"] == 4


def test_pi_faux_provider_keeps_no_request_log(pi: dict[str, Any]) -> None:
    """Pi's faux provider counts calls (state.callCount) but declares no log of the requests."""
    registration = pi["declaredTypes"]["fauxRegistration"]
    assert "state: FauxProviderState;" in registration
    assert "request" not in registration.lower()


async def test_pydantic_ai_function_model_sees_history_and_agent_info() -> None:
    """Pydantic AI's FunctionModel calls one function with the history and an AgentInfo."""
    seen: list[tuple[int, list[str]]] = []

    def reply(history: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append((len(history), [tool.name for tool in info.function_tools]))
        return ModelResponse(parts=[TextPart(content="ok")])

    agent = PydanticAgent(FunctionModel(function=reply))

    @agent.tool_plain
    def ping() -> str:
        return "pong"

    await agent.run("hi")
    assert seen == [(1, ["ping"])]


async def test_pydantic_ai_test_model_calls_every_tool_unscripted() -> None:
    """Pydantic AI's TestModel calls every tool with generated arguments, keeps the last request."""
    calls: list[int] = []
    model = TestModel()
    agent = PydanticAgent(model)

    @agent.tool_plain
    def double(number: int) -> int:
        calls.append(number)
        return number * 2

    await agent.run("hi")
    assert len(calls) == 1
    assert model.last_model_request_parameters is not None


async def test_openai_agents_scripted_model_refuses_a_call_past_the_script() -> None:
    """The Agents SDK ships agents.testing.ScriptedModel: UnexpectedModelCall when it runs out."""
    model = ScriptedModel([[assistant_message("one")]])
    agent = Agent(name="a", model=model)
    assert (await Runner.run(agent, "hi")).final_output == "one"
    assert len(model.calls) == 1
    with pytest.raises(UnexpectedModelCall) as raised:
        await Runner.run(agent, "again")
    assert raised.value.call_index == 1
    assert raised.value.call.input


def test_openai_agents_scripted_model_assert_complete() -> None:
    """The Agents SDK's ScriptedModel.assert_complete() raises while steps remain unconsumed."""
    model = ScriptedModel([[assistant_message("one")], ValueError("provider down")])
    assert model.remaining_steps == 2
    with pytest.raises(UnconsumedModelSteps):
        model.assert_complete()


def test_langchain_fake_model_exhaustion_in_sync_invoke_is_stop_iteration() -> None:
    """LangChain's GenericFakeChatModel: running out in sync invoke() raises StopIteration."""
    model = GenericFakeChatModel(messages=iter([]))
    with pytest.raises(StopIteration):
        model.invoke("hi")


async def test_langchain_fake_model_exhaustion_elsewhere_is_runtime_error() -> None:
    """LangChain's GenericFakeChatModel: running out in ainvoke, stream, astream is RuntimeError."""
    with pytest.raises(RuntimeError):
        await GenericFakeChatModel(messages=iter([])).ainvoke("hi")
    with pytest.raises(RuntimeError):
        list(GenericFakeChatModel(messages=iter([])).stream("hi"))
    with pytest.raises(RuntimeError):
        async for _ in GenericFakeChatModel(messages=iter([])).astream("hi"):
            pass


def test_langchain_fake_model_streams_words() -> None:
    """LangChain's GenericFakeChatModel splits its streamed content on whitespace."""
    model = GenericFakeChatModel(messages=iter([AIMessage(content="hello big world")]))
    assert [chunk.content for chunk in model.stream("hi")] == ["hello", " ", "big", " ", "world"]


def test_langchain_messages_list_model_wraps_around() -> None:
    """LangChain's FakeMessagesListChatModel cycles: after the last response comes the first."""
    model = FakeMessagesListChatModel(responses=[AIMessage(content="a"), AIMessage(content="b")])
    assert [model.invoke("x").content for _ in range(3)] == ["a", "b", "a"]

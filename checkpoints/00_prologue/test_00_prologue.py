"""Checkpoint 00: one complete agent turn: its order, its call/result links, its immutability."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from checkpoints import support
from checkpoints.support import raises_exactly
from harness.prologue import TraceStep, complete_trace
from harness.protocol import AssistantMessage, ToolResultMessage, UserMessage


def test_the_trace_goes_user_model_harness_model() -> None:
    trace = complete_trace()
    assert [step.position for step in trace] == [0, 1, 2, 3]
    assert [step.actor for step in trace] == ["user", "model", "harness", "model"]
    assert [type(step.message) for step in trace] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        AssistantMessage,
    ]


def test_the_model_proposes_exactly_one_tool_call_and_runs_nothing() -> None:
    proposal = complete_trace()[1].message
    assert type(proposal) is AssistantMessage
    (call,) = proposal.tool_calls
    assert (call.id, call.name, dict(call.arguments)) == (
        "call_1",
        "get_weather",
        {"city": "Paris"},
    )


# --8<-- [start:linkage]
def test_the_tool_result_answers_the_call_it_names() -> None:
    _, proposal, result, _ = (step.message for step in complete_trace())
    assert type(proposal) is AssistantMessage
    assert type(result) is ToolResultMessage
    (call,) = proposal.tool_calls
    assert (result.tool_call_id, result.tool_name) == (call.id, call.name)
    assert result.is_error is False


def test_the_tool_result_id_is_derived_from_the_call_id() -> None:
    _, proposal, result, _ = (step.message for step in complete_trace())
    assert type(proposal) is AssistantMessage
    assert type(result) is ToolResultMessage
    assert result.id == f"tool-result-{proposal.tool_calls[0].id}"


# --8<-- [end:linkage]


def test_the_turn_ends_with_a_text_answer_and_no_open_call() -> None:
    answer = complete_trace()[-1].message
    assert type(answer) is AssistantMessage
    assert answer.tool_calls == ()
    assert answer.content[0].type == "text"


def test_every_tool_call_has_exactly_one_result_after_it() -> None:
    trace = complete_trace()
    for step in trace:
        if type(step.message) is AssistantMessage:
            for call in step.message.tool_calls:
                answers = [
                    later.position
                    for later in trace
                    if type(later.message) is ToolResultMessage
                    and later.message.tool_call_id == call.id
                ]
                assert len(answers) == 1
                assert answers[0] > step.position


def test_the_trace_cannot_be_mutated() -> None:
    trace = complete_trace()
    assert type(trace) is tuple
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(trace[0], "actor", "model")
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(trace[2].message, "content", "changed")
    proposal = trace[1].message
    assert type(proposal) is AssistantMessage
    arguments = proposal.tool_calls[0].arguments
    assert type(arguments) is MappingProxyType
    with pytest.raises(TypeError):
        arguments["city"] = "Lyon"  # type: ignore[index]
    assert complete_trace() == trace


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"position": -1}, ValueError, "TraceStep.position must be an int >= 0, got -1"),
        ({"position": True}, ValueError, "TraceStep.position must be an int >= 0, got True"),
        (
            {"actor": "tool"},
            ValueError,
            "TraceStep.actor must be user, model or harness: 'tool'",
        ),
        ({"message": "hi"}, TypeError, "TraceStep.message must be a Message: str"),
    ],
)
def test_a_step_refuses_a_bad_position_actor_or_message(
    changes: dict[str, object], error: type[Exception], message: str
) -> None:
    step = complete_trace()[0]
    fields = {"position": step.position, "actor": step.actor, "message": step.message}
    with raises_exactly(error, message):
        TraceStep(**{**fields, **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("position", "TraceStep.position must be an int >= 0, got Loud"),
        ("actor", "TraceStep.actor must be user, model or harness: Loud"),
    ],
)
def test_a_step_names_a_bad_position_or_actor_by_type_without_running_it(
    field: str, message: str
) -> None:
    loud, asked = support.loud_instance()
    step = complete_trace()[0]
    fields = {"position": step.position, "actor": step.actor, "message": step.message}
    with raises_exactly(ValueError, message):
        TraceStep(**{**fields, field: loud})  # type: ignore[arg-type]
    assert asked == []


def test_a_trace_step_checks_its_message_type_without_asking_a_metaclass() -> None:
    odd, asked = support.watched_class_instance()
    with raises_exactly(TypeError, "TraceStep.message must be a Message: Odd"):
        TraceStep(position=0, actor="user", message=odd)  # type: ignore[arg-type]
    assert asked == []

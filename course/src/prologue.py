"""One complete agent turn, user → model → tool → model → answer, as an immutable trace."""

from __future__ import annotations

__all__ = ["Actor", "TraceStep", "complete_trace"]

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from harness.protocol import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    safe_repr,
    type_name,
)

# Who produced a step. The model only ever proposes; the harness is the code that runs tools.
Actor = Literal["user", "model", "harness"]
_MESSAGE_TYPES = (UserMessage, AssistantMessage, ToolResultMessage)


# --8<-- [start:step]
@dataclass(frozen=True, slots=True, kw_only=True)
class TraceStep:
    """One step of a trace: its position, who produced it, and the message it added."""

    position: int  # 0, 1, 2, … in the order the steps happened
    actor: Actor
    message: Message

    def __post_init__(self) -> None:
        # Exact types first: a foreign object's __eq__ and __repr__ are code of whoever made it.
        position: object = self.position
        if type(position) is not int or position < 0:
            raise ValueError(f"TraceStep.position must be an int >= 0, got {safe_repr(position)}")
        actor: object = self.actor
        if type(actor) is not str or actor not in ("user", "model", "harness"):
            raise ValueError(f"TraceStep.actor must be user, model or harness: {safe_repr(actor)}")
        # `is`, not `in (...)`: comparing classes with == would run a metaclass's code
        if not any(type(self.message) is kind for kind in _MESSAGE_TYPES):
            raise TypeError(f"TraceStep.message must be a Message: {type_name(self.message)}")


# --8<-- [end:step]


# --8<-- [start:trace]
def complete_trace() -> tuple[TraceStep, ...]:
    """Return the trace of one turn: a question, a proposed tool call, its result, an answer."""
    question = UserMessage(content=(TextBlock(text="What is the weather in Paris?"),))

    # The model answers with data: a proposal to call get_weather. Nothing has run yet. The
    # arguments are written already frozen (a read-only view), so this trace needs none of the
    # snapshot code that checkpoint 01 has you write.
    arguments = MappingProxyType({"city": "Paris"})
    call = ToolCall(id="call_1", name="get_weather", arguments=arguments)
    proposal = AssistantMessage(content=(TextBlock(text="Let me check."), call))

    # The harness ran the tool and reports back; the result names the call it answers.
    result = ToolResultMessage(
        id=f"tool-result-{call.id}",
        tool_call_id=call.id,
        tool_name=call.name,
        content='{"temperature_c":18}',
        is_error=False,
    )

    # With the result in its transcript, the model can answer in plain text.
    answer = AssistantMessage(content=(TextBlock(text="It is 18 °C in Paris."),))

    steps: tuple[tuple[Actor, Message], ...] = (
        ("user", question),
        ("model", proposal),
        ("harness", result),
        ("model", answer),
    )
    return tuple(
        TraceStep(position=position, actor=actor, message=message)
        for position, (actor, message) in enumerate(steps)
    )


# --8<-- [end:trace]

"""What the host and the model hand the agent loop, and the checks that refuse a bad one.

The host hands ``run_agent_loop`` a model, its settings, a transcript and the policies of its
tools; all of them are checked before anything starts. The model hands back one stream per
turn; what it carries is checked as it arrives, because a model that breaks the protocol is a
bug in the program, which ``result()`` raises, not a failure the loop could report.
"""

from __future__ import annotations

__all__ = [
    "Model",
    "ToolPolicy",
    "checked_policies",
    "checked_transcript",
    "refuse_stream_end",
    "require_count",
    "require_event_stream",
    "require_stream_event",
]

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NoReturn, Protocol

from harness.abort import AbortSignal
from harness.event_stream import EventStream
from harness.messages import PendingToolCallsError, pending_tool_calls
from harness.protocol import (
    AssistantMessage,
    Message,
    StreamEvent,
    StreamResult,
    TextDelta,
    ToolCallEvent,
    ToolResultMessage,
    UserMessage,
)
from harness.tool import ToolSpec
from harness.untrusted import type_name


class Model(Protocol):
    """Anything with ScriptedModel's ``stream``: checkpoint 04's script, checkpoint 05's adapter."""

    def stream(
        self, messages: tuple[Message, ...], *, tools: tuple[ToolSpec, ...], signal: AbortSignal
    ) -> EventStream[StreamEvent, StreamResult]:
        """Start answering ``messages``; ``tools`` are what the model may call."""


# --8<-- [start:policy]
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolPolicy:
    """How the host lets one tool run; never shown to the model."""

    concurrency_safe: bool = False  # True (the literal) lets its calls run beside others
    timeout: float | None = None  # seconds; None: no timeout

    def __post_init__(self) -> None:
        # `is True`, not truthiness: 1, "yes" or an object with __bool__ must not opt a tool
        # into running beside others by accident.
        if type(self.concurrency_safe) is not bool:
            raise TypeError(
                "ToolPolicy.concurrency_safe must be True or False, "
                f"got {type_name(self.concurrency_safe)}"
            )
        timeout = self.timeout
        if timeout is None:
            return
        if type(timeout) is not float and type(timeout) is not int:
            raise TypeError(
                f"ToolPolicy.timeout must be a number of seconds, got {type_name(timeout)}"
            )
        if not 0 < timeout < float("inf"):
            raise ValueError(
                f"ToolPolicy.timeout must be a positive, finite number, got {timeout!r}"
            )


# --8<-- [end:policy]


def require_count(name: str, value: object) -> None:
    """Refuse anything but an int of at least 1 (a bool is not a count)."""
    # BEGIN LAB 7.1
    if type(value) is not int:
        raise TypeError(f"{name} must be an int, got {type_name(value)}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    # END LAB 7.1


def checked_transcript(transcript: Iterable[Message]) -> tuple[Message, ...]:
    """Copy the transcript and check it: messages, linked, with no call left unanswered."""
    # BEGIN LAB 7.1
    try:
        messages = tuple(transcript)
    except TypeError as exc:
        raise TypeError(
            f"transcript must be an iterable of messages, got {type_name(transcript)}"
        ) from exc
    for index, message in enumerate(messages):
        if type(message) not in (UserMessage, AssistantMessage, ToolResultMessage):
            raise TypeError(f"transcript[{index}] must be a Message, got {type_name(message)}")
    pending = pending_tool_calls(messages)  # the 03 errors of a broken transcript
    if pending:
        waiting = ", ".join(repr(call.id) for call in pending)
        raise PendingToolCallsError(
            f"the transcript ends with unanswered tool calls {waiting}; "
            "append their results before running the loop"
        )
    return messages
    # END LAB 7.1


def checked_policies(policies: Mapping[str, ToolPolicy] | None) -> dict[str, ToolPolicy]:
    """Copy the host's policies, refusing anything but str names mapped to ToolPolicy records."""
    # BEGIN LAB 7.1
    if policies is None:
        return {}
    if not isinstance(policies, Mapping):
        raise TypeError(f"policies must be a mapping or None, got {type_name(policies)}")
    copied: dict[str, ToolPolicy] = {}
    for name, policy in dict(policies).items():
        if type(name) is not str:
            raise TypeError(f"policies keys must be tool names (str), got {type_name(name)}")
        if type(policy) is not ToolPolicy:
            raise TypeError(f"policies[{name!r}] must be a ToolPolicy, got {type_name(policy)}")
        copied[name] = policy
    return copied
    # END LAB 7.1


def require_event_stream(answer: object) -> None:
    """Refuse a model whose stream() did not return an EventStream: a bug in the model."""
    # BEGIN LAB 7.1
    if not isinstance(answer, EventStream):
        raise TypeError(f"model.stream() must return an EventStream, got {type_name(answer)}")
    # END LAB 7.1


def require_stream_event(event: object) -> None:
    """Refuse an event that is not a StreamEvent: a bug in the model."""
    # BEGIN LAB 7.1
    if type(event) is not TextDelta and type(event) is not ToolCallEvent:
        raise TypeError(f"the model's stream must carry StreamEvents, got {type_name(event)}")
    # END LAB 7.1


def refuse_stream_end(ending: object) -> NoReturn:
    """Raise the TypeError for a stream that ended with something else than a StreamResult."""
    # BEGIN LAB 7.5
    # A bug in the model, not a failure of its request: no LoopResult could say it honestly.
    raise TypeError(f"the model's stream must end with a StreamResult, got {type_name(ending)}")
    # END LAB 7.5

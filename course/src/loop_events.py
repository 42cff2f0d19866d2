"""The records of one agent run: its events, numbered by ``seq``, and its typed results.

Every event is a frozen record with a ``kind`` tag first and a ``seq``: 0 for the first event of
a run, then one more for each. ``AgentEvent`` is their union. ``error_result`` writes the results
the loop gives a call itself (``TOOL_TIMED_OUT``, ``TOOL_CALL_ABORTED``, ``TOOL_CALL_SKIPPED``);
``LoopResult`` is the union of the five ways a run ends. ``AgentRun`` is the stream a run
returns: its ``result()`` returns the LoopResult, or raises the bug that ended the run
(``harness.agent_loop`` says when).
"""

from __future__ import annotations

__all__ = [
    "TOOL_CALL_ABORTED",
    "TOOL_CALL_SKIPPED",
    "TOOL_TIMED_OUT",
    "AgentEvent",
    "AgentRun",
    "EventSink",
    "LoopAborted",
    "LoopCompleted",
    "LoopModelFailed",
    "LoopResult",
    "LoopToolFatal",
    "LoopTurnLimit",
    "MessageAppended",
    "ModelEvent",
    "ToolEnd",
    "ToolProgress",
    "ToolStart",
    "TurnEnd",
    "TurnStart",
    "error_result",
    "replay_transcript",
]

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal, Protocol, TypeAlias

from harness.event_stream import EventStream
from harness.protocol import Message, StreamEvent, ToolCall, ToolResultMessage
from harness.tool import NonRecoverableToolError
from harness.tool_output import serialize_output


# --8<-- [start:events]
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStart:
    """A call's tool starts running."""

    kind: Literal["tool_start"] = "tool_start"
    seq: int
    call: ToolCall


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolProgress:
    """A running tool reported progress; ``content`` is its data, serialized and bounded."""

    kind: Literal["tool_progress"] = "tool_progress"
    seq: int
    tool_call_id: str
    content: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolEnd:
    """A started call has its result; ``duration`` is in seconds, on the monotonic clock."""

    kind: Literal["tool_end"] = "tool_end"
    seq: int
    result: ToolResultMessage
    duration: float


# --8<-- [end:events]


class EventSink(Protocol):
    """Where the calls' events go: the run numbers them and pushes them on its stream."""

    def next_seq(self) -> int:
        """Return the seq of the next event."""

    def push(self, event: ToolStart | ToolProgress | ToolEnd) -> None:
        """Deliver one event."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStart:
    """A turn begins: the model is about to be asked (``turn`` counts from 1)."""

    kind: Literal["turn_start"] = "turn_start"
    seq: int
    turn: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelEvent:
    """One event of the model's stream, forwarded as it arrived."""

    kind: Literal["model_event"] = "model_event"
    seq: int
    turn: int
    event: StreamEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageAppended:
    """A message was appended to the run's transcript (the ``"message"`` event)."""

    kind: Literal["message"] = "message"
    seq: int
    message: Message


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEnd:
    """A turn is over: its messages are all appended."""

    kind: Literal["turn_end"] = "turn_end"
    seq: int
    turn: int


AgentEvent: TypeAlias = (
    TurnStart | ModelEvent | MessageAppended | ToolStart | ToolProgress | ToolEnd | TurnEnd
)


# --8<-- [start:codes]
# The codes of the results the loop writes itself; 06's five codes still come from the tools.
TOOL_TIMED_OUT: Final = "TOOL_TIMED_OUT"
TOOL_CALL_ABORTED: Final = "TOOL_CALL_ABORTED"
TOOL_CALL_SKIPPED: Final = "TOOL_CALL_SKIPPED"
# --8<-- [end:codes]


def error_result(call: ToolCall, code: str, message: str) -> ToolResultMessage:
    """Return the error result the loop writes for ``call``: 06's ``{"error": ...}`` content."""
    # BEGIN LAB 7.4
    # The messages are the loop's own short, fixed texts: the content never reaches the cap.
    content = serialize_output({"error": {"code": code, "message": message}})
    return ToolResultMessage(
        id=f"tool-result-{call.id}",
        tool_call_id=call.id,
        tool_name=call.name,
        content=content,
        is_error=True,
    )
    # END LAB 7.4


# --8<-- [start:results]
@dataclass(frozen=True, slots=True, kw_only=True)
class LoopCompleted:
    """The model answered without calling a tool."""

    kind: Literal["completed"] = "completed"
    transcript: tuple[Message, ...]
    turns: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopTurnLimit:
    """``max_turns`` model requests were made and the last one still called tools."""

    kind: Literal["turn_limit"] = "turn_limit"
    transcript: tuple[Message, ...]
    turns: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopModelFailed:
    """The model's stream failed; nothing of that turn was appended."""

    kind: Literal["model_failed"] = "model_failed"
    transcript: tuple[Message, ...]
    turns: int
    code: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopAborted:
    """The run's signal was aborted; every call already made has a result."""

    kind: Literal["aborted"] = "aborted"
    transcript: tuple[Message, ...]
    turns: int
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopToolFatal:
    """A tool raised a genuine NonRecoverableToolError; the other calls were skipped."""

    kind: Literal["tool_fatal"] = "tool_fatal"
    transcript: tuple[Message, ...]
    turns: int
    error: NonRecoverableToolError


LoopResult: TypeAlias = (
    LoopCompleted | LoopTurnLimit | LoopModelFailed | LoopAborted | LoopToolFatal
)


@dataclass(frozen=True, slots=True)
class _Crashed:
    """How a bug travels through the stream to ``AgentRun.result()``."""

    error: Exception


class AgentRun(EventStream[AgentEvent, "LoopResult | _Crashed"]):
    """The stream of one run: its events, then ``result()``, which re-raises a bug that ended it."""

    def __init__(self) -> None:
        super().__init__()
        self.driver: asyncio.Task[None] | None = None  # the task running the turns, once started

    def crash(self, error: Exception) -> None:
        """End the run because of a bug: the events stop and ``result()`` raises ``error``."""
        # Given, not a lab: while later labs are stubs, their NotImplementedError raised in the
        # driver task ends the run through here, so a test reads "blocked" instead of hanging.
        self.end(_Crashed(error))

    async def result(self) -> LoopResult:
        """Wait for the end of the run; return its LoopResult, or raise the bug that ended it."""
        match await super().result():
            case _Crashed(error=error):
                raise error
            case outcome:
                return outcome


# --8<-- [end:results]


# ---------------------------------------------------------------------------------------------
# Lab 7.2: one stream, globally ordered.
# ---------------------------------------------------------------------------------------------


def replay_transcript(
    transcript: Iterable[Message], events: Iterable[AgentEvent]
) -> tuple[Message, ...]:
    """Return the transcript a run ended with: the input, then every ``"message"`` event's message.

    Raises ValueError if the events are not numbered 0, 1, 2, ... without a gap.
    """
    # BEGIN LAB 7.2
    messages = list(transcript)
    for expected, event in enumerate(events):
        if event.seq != expected:
            raise ValueError(f"event {expected} has seq {event.seq}; seq must count 0, 1, 2, ...")
        if type(event) is MessageAppended:
            messages.append(event.message)
    return tuple(messages)
    # END LAB 7.2

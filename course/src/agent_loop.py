"""Run an agent: ask the model, run the tools it calls, append everything, and report it in order.

Theory of operation
-------------------
``run_agent_loop`` checks its arguments and the transcript (``harness.loop_inputs``), snapshots
the registry, and starts one *driver* task; it returns an ``AgentRun``, the ``EventStream`` the
driver writes to. The run is a sequence of turns::

    turn_start -> ask the model (model_event ...) -> append the assistant message
               -> run its calls, group by group -> append one result per call, in call order
               -> turn_end -> next turn, or a LoopResult

The calls of one turn are split into groups (``harness.tool_groups``): consecutive calls whose
host policy says ``concurrency_safe=True`` run together, every other call runs alone. Whatever
ends the run (an abort, a timeout, a fatal tool error), every call of the last assistant message
gets exactly one result, so the transcript always passes ``check_transcript``.

Every event (``harness.loop_events``) carries ``seq``: 0, 1, 2, ... with no gap, in the order
the driver emitted them. The ``"message"`` events, after the input, are the final transcript.

A run ends in one of five ``LoopResult`` records, read with ``await run.result()``. An exception
that is nobody's fault but the program's (a model raising ``ScriptExhaustedError``, a model that
returns something else than an ``EventStream``) is not a result: the events stop, and
``result()`` raises that exception, so it is neither lost nor left for a consumer to wait on.
"""

from __future__ import annotations

__all__ = [
    "INVALID_ASSISTANT_MESSAGE",
    "TOOL_CALL_ABORTED",
    "TOOL_CALL_SKIPPED",
    "TOOL_TIMED_OUT",
    "AgentEvent",
    "AgentRun",
    "LoopAborted",
    "LoopCompleted",
    "LoopModelFailed",
    "LoopResult",
    "LoopToolFatal",
    "LoopTurnLimit",
    "MessageAppended",
    "Model",
    "ModelEvent",
    "PendingToolCallsError",
    "ToolEnd",
    "ToolPolicy",
    "ToolProgress",
    "ToolStart",
    "TurnEnd",
    "TurnStart",
    "partition_calls",
    "replay_transcript",
    "run_agent_loop",
]

import asyncio
from collections.abc import Iterable, Mapping
from typing import Final

from harness.abort import AbortSignal, reason_text
from harness.loop_events import (
    TOOL_CALL_ABORTED,
    TOOL_CALL_SKIPPED,
    TOOL_TIMED_OUT,
    AgentEvent,
    AgentRun,
    LoopAborted,
    LoopCompleted,
    LoopModelFailed,
    LoopResult,
    LoopToolFatal,
    LoopTurnLimit,
    MessageAppended,
    ModelEvent,
    ToolEnd,
    ToolProgress,
    ToolStart,
    TurnEnd,
    TurnStart,
    replay_transcript,
)
from harness.loop_inputs import (
    Model,
    ToolPolicy,
    checked_policies,
    checked_transcript,
    refuse_stream_end,
    require_count,
    require_event_stream,
    require_stream_event,
)
from harness.messages import PendingToolCallsError, TranscriptLinkError, pending_tool_calls
from harness.protocol import AssistantMessage, Message, StreamAborted, StreamDone, StreamFailed
from harness.tool import ToolRegistry
from harness.tool_groups import CallGroups, partition_calls
from harness.untrusted import class_attribute, type_name

# The code of a LoopModelFailed whose assistant message would break the transcript.
INVALID_ASSISTANT_MESSAGE: Final = "INVALID_ASSISTANT_MESSAGE"

# ---------------------------------------------------------------------------------------------
# Lab 7.1: the turns. The driver owns the transcript and numbers every event.
# ---------------------------------------------------------------------------------------------


class _Run:
    """One run's state: what the driver task reads and writes while the run lasts."""

    def __init__(
        self,
        *,
        model: Model,
        transcript: tuple[Message, ...],
        signal: AbortSignal,
        max_turns: int,
        calls: CallGroups,
    ) -> None:
        self.model = model
        self.calls = calls  # runs the calls of a turn, with the tools of the registry snapshot
        self.tools = calls.definitions()  # offered to the model: the snapshot's allowlist
        self.transcript = list(transcript)  # ours alone: the caller's sequence is never touched
        self.signal = signal
        self.max_turns = max_turns
        self.turns = 0  # model requests made so far, <= max_turns
        self.stream = AgentRun()
        self._seq = 0  # the seq of the next event

    # --8<-- [start:seq]
    def next_seq(self) -> int:
        """Return the seq of the next event and count it: 0, 1, 2, ... with no gap."""
        # BEGIN LAB 7.2
        seq = self._seq
        self._seq += 1
        return seq
        # END LAB 7.2

    def push(self, event: AgentEvent) -> None:
        """Deliver one event to the consumer."""
        self.stream.push(event)

    def append(self, message: Message) -> None:
        """Append a message to the transcript and say so with a ``"message"`` event."""
        # BEGIN LAB 7.2
        self.transcript.append(message)
        self.push(MessageAppended(seq=self.next_seq(), message=message))
        # END LAB 7.2

    # --8<-- [end:seq]

    # --8<-- [start:drive]
    async def drive(self) -> None:
        """Run turns until one of them ends the run; end the stream with its result."""
        # BEGIN LAB 7.1
        try:
            result = await self._turns()
        except Exception as bug:  # not a result: result() raises it (see AgentRun)
            self.stream.crash(bug)
            return
        except asyncio.CancelledError:
            # The driver itself was cancelled (the event loop is closing, say): the tools are
            # stopped by now; say so to whoever waits, then let the cancellation go on.
            self.stream.crash(RuntimeError("the agent loop's task was cancelled"))
            raise
        self.stream.end(result)
        # END LAB 7.1

    async def _turns(self) -> LoopResult:
        """Run turns until one of them ends the run; return how it ended."""
        # BEGIN LAB 7.1
        while True:
            if self.signal.aborted:  # before a request: nothing is asked after an abort
                return self._aborted()
            self.turns += 1
            self.push(TurnStart(seq=self.next_seq(), turn=self.turns))
            ending = await self._turn(self.turns)
            self.push(TurnEnd(seq=self.next_seq(), turn=self.turns))
            if ending is not None:
                return ending
        # END LAB 7.1

    async def _turn(self, turn: int) -> LoopResult | None:
        """Ask, append the answer, run its calls, append their results; None: ask again."""
        # BEGIN LAB 7.1
        answer = await self._ask_model(turn)
        if not isinstance(answer, AssistantMessage):
            return answer  # the model failed, or the run was aborted: nothing is appended
        self.append(answer)
        results, fatal = await self.calls.run(answer.tool_calls, sink=self)
        for result in results:  # in call order, whatever order they finished in
            self.append(result)
        if self.signal.aborted:
            return self._aborted()
        if fatal is not None:
            return LoopToolFatal(transcript=self._final(), turns=self.turns, error=fatal)
        if not answer.tool_calls:
            return LoopCompleted(transcript=self._final(), turns=self.turns)
        if self.turns == self.max_turns:
            return LoopTurnLimit(transcript=self._final(), turns=self.turns)
        return None
        # END LAB 7.1

    async def _ask_model(self, turn: int) -> AssistantMessage | LoopResult:
        """Ask the model, forwarding its events; return its message, or how the run ends."""
        # BEGIN LAB 7.1
        answer = self.model.stream(tuple(self.transcript), tools=self.tools, signal=self.signal)
        require_event_stream(answer)
        async for event in answer:
            require_stream_event(event)
            self.push(ModelEvent(seq=self.next_seq(), turn=turn, event=event))
        ending: object = await answer.result()
        if self.signal.aborted:  # a model that ignored the signal: its answer is dropped
            return self._aborted()
        match ending:
            case StreamDone(message=message):
                try:  # a call id the transcript already used would make it unsendable
                    pending_tool_calls((*self.transcript, message))
                except TranscriptLinkError as exc:
                    return self._refused_answer(exc)
                return message
            case StreamFailed(code=code, message=text):
                return LoopModelFailed(
                    transcript=self._final(), turns=self.turns, code=code, message=text
                )
            case StreamAborted(reason=reason):
                return LoopAborted(transcript=self._final(), turns=self.turns, reason=reason)
            case _:
                refuse_stream_end(ending)
        # END LAB 7.1

    # --8<-- [end:drive]

    def _refused_answer(self, problem: TranscriptLinkError) -> LoopModelFailed:
        """Return how the run ends when the model's answer would break the transcript."""
        # BEGIN LAB 7.5
        return LoopModelFailed(
            transcript=self._final(),
            turns=self.turns,
            code=INVALID_ASSISTANT_MESSAGE,
            message=str(problem),
        )
        # END LAB 7.5

    def _aborted(self) -> LoopAborted:
        """Return the LoopAborted of this run, with the signal's reason as text."""
        return LoopAborted(
            transcript=self._final(), turns=self.turns, reason=reason_text(self.signal.reason)
        )

    def _final(self) -> tuple[Message, ...]:
        """Return the transcript as it stands: the input, then everything appended."""
        return tuple(self.transcript)


# ---------------------------------------------------------------------------------------------
# The entry point: every check before anything starts.
# ---------------------------------------------------------------------------------------------


# --8<-- [start:entry]
def run_agent_loop(  # noqa: PLR0913  the contract's signature: four are keyword-only settings
    model: Model,
    registry: ToolRegistry,
    transcript: Iterable[Message],
    *,
    signal: AbortSignal,
    max_turns: int = 16,
    policies: Mapping[str, ToolPolicy] | None = None,
    max_concurrency: int = 8,
) -> AgentRun:
    """Start an agent run and return its stream of events; ``await run.result()`` ends it.

    Checks everything first, and starts nothing if a check fails: raises TypeError or
    ValueError for a bad argument, the checkpoint 03 error for a broken transcript,
    PendingToolCallsError if its last assistant message has unanswered calls, and RuntimeError
    without a running event loop. The registry is snapshotted now; the transcript is copied.
    """
    # BEGIN LAB 7.1
    asyncio.get_running_loop()
    if not callable(class_attribute(type(model), "stream")):
        raise TypeError(f"model must have a stream() method, got {type_name(model)}")
    if type(registry) is not ToolRegistry:
        raise TypeError(f"registry must be a ToolRegistry, got {type_name(registry)}")
    if type(signal) is not AbortSignal:
        raise TypeError(f"signal must be an AbortSignal, got {type_name(signal)}")
    require_count("max_turns", max_turns)
    require_count("max_concurrency", max_concurrency)
    messages = checked_transcript(transcript)
    calls = CallGroups(
        registry=registry.snapshot(),  # a tool registered later is neither offered nor run
        policies=checked_policies(policies),
        signal=signal,
        max_concurrency=max_concurrency,
    )
    run = _Run(model=model, transcript=messages, signal=signal, max_turns=max_turns, calls=calls)
    run.stream.driver = asyncio.get_running_loop().create_task(run.drive())
    return run.stream
    # END LAB 7.1


# --8<-- [end:entry]

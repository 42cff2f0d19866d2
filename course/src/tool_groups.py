"""Run every tool call of one turn: in groups, within timeouts, with exactly one result per call.

Theory of operation
-------------------
The host, never the model, decides how a tool may run: a ``ToolPolicy`` per tool name
(``harness.loop_inputs``). A call is *concurrency-safe* only if its tool's policy says
``concurrency_safe=True`` (the literal); every other call is *exclusive*. ``partition_calls``
cuts the calls, in call order, into groups: a maximal run of consecutive safe calls is one
group, each exclusive call a group of its own::

    calls:   read_a  read_b  write  read_c        (read_* safe, write exclusive)
    groups:  [read_a, read_b]  [write]  [read_c]

Groups run one after another; the calls of a group run together, each in its own task, at most
``max_concurrency`` at once. Each call gets its own ``AbortController``: the run's abort, the
call's timeout, or a sibling's fatal error aborts it, which stops the tool as checkpoint 06
does, and then its task is cancelled again every ``CANCEL_RETRY`` seconds until it ends (a tool
may swallow one cancellation and wait again)::

    run aborted / timeout / sibling fatal  ->  call signal aborted (the stop's reason)
                                           ->  06 cancels the tool; we cancel until it ends

Whatever happened, ``CallGroups.run`` returns one result per call, in call order: the tool's
own, ``TOOL_TIMED_OUT``, or a synthesized ``TOOL_CALL_ABORTED`` / ``TOOL_CALL_SKIPPED`` for a
call that was stopped or never started.
"""

from __future__ import annotations

__all__ = [
    "CANCEL_RETRY",
    "CallGroups",
    "error_result",  # lives in loop_events; still importable here, where the tests import it
    "partition_calls",
]

import asyncio
import enum
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, NoReturn, cast

from harness.abort import AbortController, AbortError, AbortSignal
from harness.loop_events import (
    TOOL_CALL_ABORTED,
    TOOL_CALL_SKIPPED,
    TOOL_TIMED_OUT,
    EventSink,
    ToolEnd,
    ToolProgress,
    ToolStart,
    error_result,
)
from harness.loop_inputs import ToolPolicy
from harness.protocol import ToolCall, ToolResultMessage
from harness.tool import NonRecoverableToolError, ToolRegistry, ToolSpec, execute_tool_call
from harness.tool_output import ToolOutputError, serialize_output

CANCEL_RETRY: Final = 0.01  # seconds between two cancellations of a tool that will not stop


# --8<-- [start:partition]
def partition_calls(
    calls: tuple[ToolCall, ...], policies: Mapping[str, ToolPolicy]
) -> tuple[tuple[ToolCall, ...], ...]:
    """Cut ``calls`` into groups, in call order: runs of safe calls, and each exclusive one."""
    # BEGIN LAB 7.3
    groups: list[tuple[ToolCall, ...]] = []
    safe_run: list[ToolCall] = []
    for call in calls:
        policy = policies.get(call.name)
        if policy is not None and policy.concurrency_safe is True:
            safe_run.append(call)
            continue
        if safe_run:
            groups.append(tuple(safe_run))
            safe_run = []
        groups.append((call,))
    if safe_run:
        groups.append(tuple(safe_run))
    return tuple(groups)
    # END LAB 7.3


# --8<-- [end:partition]


class _Stop(enum.Enum):
    """Why the loop aborted a call's signal: the reason the tool's signal carries."""

    RUN_ABORTED = "the run was aborted"
    TIMED_OUT = "the call timed out"
    SIBLING_FATAL = "another call of its group raised a non-recoverable error"


@dataclass(slots=True, kw_only=True)
class _CallRun:
    """The state of one call while its turn runs."""

    call: ToolCall
    sink: EventSink  # where its tool_start, tool_progress and tool_end go
    controller: AbortController = field(default_factory=AbortController)
    started: float | None = None  # monotonic time of its tool_start; None iff not started
    result: ToolResultMessage | None = None  # not None iff its tool_end was emitted
    task: asyncio.Task[None] | None = None  # the task running it, once its group started


class CallGroups:
    """Run the calls of one turn for a run: its registry snapshot, policies, signal and sink."""

    def __init__(
        self,
        *,
        registry: ToolRegistry,
        policies: Mapping[str, ToolPolicy],
        signal: AbortSignal,
        max_concurrency: int,
    ) -> None:
        self._registry = registry
        self._policies = policies
        self._signal = signal
        self._slots = asyncio.Semaphore(max_concurrency)  # running safe calls, at most this many

    def definitions(self) -> tuple[ToolSpec, ...]:
        """Return what the model is offered: the tools of the registry these calls may use."""
        return self._registry.definitions()

    # --8<-- [start:run]
    async def run(
        self, calls: tuple[ToolCall, ...], sink: EventSink
    ) -> tuple[tuple[ToolResultMessage, ...], NonRecoverableToolError | None]:
        """Run ``calls`` group by group; return one result per call, in call order, and any fatal.

        Stops at the first group that raises a NonRecoverableToolError, or when the run's signal
        aborts. Re-raises any other exception of a call: that is a bug, not a tool failure.
        """
        # BEGIN LAB 7.1
        runs = [_CallRun(call=call, sink=sink) for call in calls]
        fatal: NonRecoverableToolError | None = None
        start = 0
        for group in partition_calls(calls, self._policies):
            if self._signal.aborted:
                break
            fatal = await self._run_group(runs[start : start + len(group)])
            start += len(group)
            if fatal is not None:
                break
        missing = TOOL_CALL_ABORTED if self._signal.aborted else TOOL_CALL_SKIPPED
        return tuple(self._result_of(run, missing) for run in runs), fatal
        # END LAB 7.1

    # --8<-- [end:run]

    def _result_of(self, run: _CallRun, missing: str) -> ToolResultMessage:
        """Return the call's result, or synthesize one; a started call also gets its tool_end."""
        # BEGIN LAB 7.4
        if run.result is not None:
            return run.result
        if missing == TOOL_CALL_ABORTED:
            why = _Stop.RUN_ABORTED.value
        else:  # said of the turn: true of the call that raised it and of later groups' calls too
            why = "a call of this turn raised a non-recoverable error"
        result = error_result(run.call, missing, f"not run to the end: {why}")
        if run.started is not None:  # every tool_start has its tool_end
            self._end(run, result)
        return result
        # END LAB 7.4

    def _end(self, run: _CallRun, result: ToolResultMessage) -> None:
        """Record the call's result and emit its tool_end."""
        # BEGIN LAB 7.1
        assert run.started is not None, "only a started call ends"
        run.result = result
        duration = time.monotonic() - run.started
        run.sink.push(ToolEnd(seq=run.sink.next_seq(), result=result, duration=duration))
        # END LAB 7.1

    # --8<-- [start:run-call]
    async def _run_call(self, run: _CallRun) -> None:
        """Run one call: wait for a slot, start it, execute it through 06, end it."""
        # BEGIN LAB 7.1
        async with self._slots:
            run.controller.signal.raise_if_aborted()  # stopped while it waited: never started
            run.started = time.monotonic()
            run.sink.push(ToolStart(seq=run.sink.next_seq(), call=run.call))
            policy = self._policies.get(run.call.name)
            if policy is not None and policy.timeout is not None:
                loop = asyncio.get_running_loop()
                timer = loop.call_later(policy.timeout, self._stop, run, _Stop.TIMED_OUT)
            else:
                timer = None
            try:
                result = await execute_tool_call(
                    self._registry,
                    run.call,
                    run.controller.signal,
                    on_progress=lambda data: self._progress(run, data),
                )
            except (Exception, asyncio.CancelledError):
                if run.controller.signal.reason is not _Stop.TIMED_OUT:
                    raise
                result = error_result(run.call, TOOL_TIMED_OUT, _timed_out_text(policy))
            finally:
                if timer is not None:
                    timer.cancel()
            self._end(run, result)
        # END LAB 7.1

    # --8<-- [end:run-call]

    # --8<-- [start:progress]
    def _progress(self, run: _CallRun, data: object) -> None:
        """Emit a tool_progress for a running call; ignore a late report or unwritable data."""
        # BEGIN LAB 7.2
        if run.started is None or run.result is not None or run.controller.signal.aborted:
            return
        try:
            content = serialize_output(data)
        except ToolOutputError:
            return
        event = ToolProgress(seq=run.sink.next_seq(), tool_call_id=run.call.id, content=content)
        run.sink.push(event)
        # END LAB 7.2

    # --8<-- [end:progress]

    # --8<-- [start:run-group]
    async def _run_group(self, runs: list[_CallRun]) -> NonRecoverableToolError | None:
        """Run a group's calls together until all end; return the first fatal error, if any."""
        # BEGIN LAB 7.3
        for run in runs:
            run.task = asyncio.get_running_loop().create_task(self._run_call(run))
        tasks = [run.task for run in runs if run.task is not None]
        remove = self._signal.add_listener(lambda _: self._stop_all(runs, _Stop.RUN_ABORTED))
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            # A call failed, or this task is being cancelled: nothing of the group keeps running.
            self._stop_all(runs, _Stop.SIBLING_FATAL)
            await asyncio.wait(tasks)
            remove()
        return _fatal_error_of(tasks)
        # END LAB 7.3

    # --8<-- [end:run-group]

    def _stop_all(self, runs: list[_CallRun], why: _Stop) -> None:
        """Stop every call of the group that has not ended."""
        # BEGIN LAB 7.4
        for run in runs:
            self._stop(run, why)
        # END LAB 7.4

    # --8<-- [start:stop]
    def _stop(self, run: _CallRun, why: _Stop) -> None:
        """Abort the call's signal with ``why``, then cancel its task until it ends."""
        # BEGIN LAB 7.4
        if run.task is None or run.task.done():
            return
        run.controller.abort(why)  # the first reason stays: a later abort does nothing
        _cancel_until_done(run.task)
        # END LAB 7.4


# BEGIN LAB 7.4
def _cancel_until_done(task: asyncio.Task[None]) -> None:
    """Cancel ``task`` now, and again every CANCEL_RETRY seconds until it is done."""
    if task.done():
        return
    task.cancel()
    asyncio.get_running_loop().call_later(CANCEL_RETRY, _cancel_until_done, task)


# --8<-- [end:stop]


def _timed_out_text(policy: ToolPolicy | None) -> str:
    """Return the message of a TOOL_TIMED_OUT result."""
    timeout = None if policy is None else policy.timeout
    return f"the tool did not finish within {timeout} s and was stopped"


def _fatal_error_of(tasks: list[asyncio.Task[None]]) -> NonRecoverableToolError | None:
    """Return the first NonRecoverableToolError of the tasks; re-raise a bug; ignore stops."""
    fatal: NonRecoverableToolError | None = None
    for task in tasks:
        if task.cancelled():
            continue
        error = task.exception()
        if error is None or (type(error) is AbortError and type(error.reason) is _Stop):
            continue
        if issubclass(type(error), NonRecoverableToolError):  # only 06 lets a genuine one out
            if fatal is None:
                fatal = cast(NonRecoverableToolError, error)
            continue
        _raise_bug(error)
    return fatal


# END LAB 7.4


def _raise_bug(error: BaseException) -> NoReturn:
    """Re-raise what no call should raise: a bug, which ends the run through AgentRun.result."""
    # BEGIN LAB 7.5
    # Not a result: turning it into TOOL_EXECUTION_FAILED would hide a bug in our own code (a
    # forged call, a broken registry) behind something the model reads and shrugs off.
    raise error
    # END LAB 7.5

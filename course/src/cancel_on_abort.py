"""Let an AbortSignal cancel the task that awaits inside a ``with`` block, as asyncio.timeout does.

Theory of operation
-------------------
The model is CPython's ``asyncio/timeouts.py``. The work (checkpoint 06: a tool) is awaited in
the caller's own task, so cancelling that task reaches the work, and whoever cancels the caller
cancels the work too::

    abort()  ->  listener: call_soon(cancel)  ->  next loop turn: task.cancel()
                                                 ->  CancelledError inside the work
    exit: task.uncancel() <= cancelling at entry  ->  ours: swallow; the caller raises the reason
                                                 else the caller's: let it propagate

Why not ``add_listener(lambda _: task.cancel())``? The work itself may call ``abort()``, inside
this very task. Cancelling a running task only sets a flag for its next ``await``; if the work
returns first, the flag outlives the block and hits the caller at some unrelated ``await``, and
3.11's ``uncancel()`` does not clear it. From ``call_soon`` the cancel lands while the task
waits, and if the work finished first, ``__exit__`` cancels the pending callback instead.

Why not race a separate task against ``signal.wait_aborted()`` with ``asyncio.wait``? It works,
but costs two tasks and several loop turns per call, about four times a plain ``await``; here a
block costs one listener.
"""

from __future__ import annotations

__all__ = ["CancelOnAbort"]

import asyncio
import enum
from collections.abc import Callable
from typing import Any

from harness.abort import AbortSignal
from harness.untrusted import type_name


# --8<-- [start:cancel-on-abort]
class _Watch(enum.Enum):
    """The lifecycle of one CancelOnAbort: made, entered, maybe cancelling, exited."""

    READY = "ready"  # made, not entered yet
    WATCHING = "watching"  # inside the block; an abort schedules a cancellation
    CANCEL_SCHEDULED = "cancel scheduled"  # aborted; task.cancel() waits for the next loop turn
    CANCELLING = "cancelling"  # we called task.cancel(); it must be taken back with uncancel()
    CLOSED = "closed"  # exited; single use


class CancelOnAbort:
    """Cancel the current task, from a loop callback, if the signal aborts inside the block.

    Single use: ``with CancelOnAbort(signal): await work``, inside an asyncio task. On exit, a
    CancelledError that this block caused is swallowed (the caller then raises the abort
    reason); a cancellation that came from anywhere else propagates untouched. Raises TypeError
    for a signal that is not an AbortSignal, and RuntimeError when entered outside a task or a
    second time, or exited without having been entered.
    """

    __slots__ = ("_cancelling_at_entry", "_handle", "_remove", "_signal", "_state", "_task")
    _signal: AbortSignal
    _state: _Watch
    # Set on entry:
    _task: asyncio.Task[Any]  # the task that entered the block, and that an abort cancels
    _cancelling_at_entry: int  # its cancellation count then: more on exit is the caller's
    _handle: asyncio.Handle | None  # the scheduled cancel: not None iff an abort came inside
    _remove: Callable[[], None]  # takes our listener off the signal

    def __init__(self, signal: AbortSignal) -> None:
        """Prepare to watch ``signal``; nothing is watched until the block is entered."""
        if type(signal) is not AbortSignal:
            raise TypeError(f"signal must be an AbortSignal, got {type_name(signal)}")
        self._signal = signal
        self._state = _Watch.READY

    def __repr__(self) -> str:
        return f"<CancelOnAbort {self._state.value}>"

    def __enter__(self) -> None:
        """Watch the signal on behalf of the current task, until the block exits.

        Raises RuntimeError("CancelOnAbort is single use; this one is <state>") unless READY,
        and RuntimeError("CancelOnAbort must be entered inside an asyncio task") outside one.
        The state is WATCHING before the listener is added: a signal that already aborted calls
        its listener during add_listener.
        """
        # BEGIN LAB 6.5
        if self._state is not _Watch.READY:
            raise RuntimeError(f"CancelOnAbort is single use; this one is {self._state.value}")
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("CancelOnAbort must be entered inside an asyncio task")
        self._task = task
        self._cancelling_at_entry = task.cancelling()
        self._handle = None
        self._state = _Watch.WATCHING
        self._remove = self._signal.add_listener(self._on_abort)
        # END LAB 6.5

    # BEGIN LAB 6.5
    def _on_abort(self, _reason: object) -> None:
        if self._state is _Watch.WATCHING:
            self._state = _Watch.CANCEL_SCHEDULED
            self._handle = self._task.get_loop().call_soon(self._cancel_task)

    def _cancel_task(self) -> None:
        if self._state is _Watch.CANCEL_SCHEDULED:
            self._state = _Watch.CANCELLING
            self._task.cancel()

    # END LAB 6.5

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> bool:
        """Stop watching; swallow the cancellation this block caused, and only that one.

        If the caller's task was cancelled meanwhile and the work swallowed that cancellation (it
        returned, or an ordinary exception replaced the CancelledError), raise CancelledError:
        the caller asked to stop. Raises RuntimeError("CancelOnAbort cannot exit: it is
        <state>") when the block was never entered, or already exited.
        """
        # BEGIN LAB 6.5
        if self._state is _Watch.READY or self._state is _Watch.CLOSED:
            raise RuntimeError(f"CancelOnAbort cannot exit: it is {self._state.value}")
        self._remove()
        if self._handle is not None:
            self._handle.cancel()  # harmless if it already ran
        ours = self._state is _Watch.CANCELLING
        self._state = _Watch.CLOSED
        if ours and self._task.uncancel() <= self._cancelling_at_entry:
            return exc_type is asyncio.CancelledError  # swallow the cancellation we caused
        if self._task.cancelling() > self._cancelling_at_entry and (
            exc_type is None or issubclass(exc_type, Exception)
        ):
            # The caller's task was cancelled while the work ran, and the work swallowed the
            # CancelledError, or let an ordinary error replace it. The caller asked to stop:
            # nothing may look finished, and a failure would be published as a result.
            raise asyncio.CancelledError
        return False
        # END LAB 6.5


# --8<-- [end:cancel-on-abort]

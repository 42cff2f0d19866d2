"""Cancel an operation cooperatively: a controller aborts, a signal tells the code that runs.

Theory of operation
-------------------
An ``AbortController`` owns the right to abort; the ``AbortSignal`` it holds is what it hands to
the code doing the work. The signal has one lifecycle, ``OPEN`` then ``ABORTED``, and never goes
back. ``abort()`` moves it once: it stores the reason, forgets every listener, and then calls
each of them synchronously, in registration order. Later calls to ``abort()`` do nothing.

Why a signal beside asyncio's own cancellation? ``Task.cancel()`` says *that* a task should
stop, to one task, by throwing ``CancelledError`` into it. A signal says *why* (its reason), can
be shared by many tasks and by plain synchronous code, can be checked between steps without
waiting, and can be passed down as an argument, so a tool sees exactly the cancellation of its
own call and nothing else.

Where the two meet, one rule holds: a listener must never cancel, synchronously, the task that is
running it. If the task that calls ``abort()`` is the one being cancelled, ``task.cancel()`` marks
a pending cancellation that Python 3.11's ``Task.uncancel()`` cannot withdraw. Defer it to the
loop instead, as CPython's ``asyncio/timeouts.py`` does::

    signal.add_listener(lambda reason: loop.call_soon(task.cancel))

A listener that raises does not stop the others. After all of them ran, ``abort()`` raises one
``ExceptionGroup`` holding every listener's exception, so a failure is never lost. The signal is
aborted all the same. ``BaseException`` s that are not ``Exception`` s (``KeyboardInterrupt``,
``SystemExit``, ``CancelledError``) are not collected: they escape at once.

Not thread-safe: call ``abort()`` from the thread that runs the event loop (from another thread,
use ``loop.call_soon_threadsafe(controller.abort)``).
"""

from __future__ import annotations

__all__ = [
    "AbortController",
    "AbortError",
    "AbortSignal",
    "SignalState",
    "reason_text",
]

import asyncio
import enum
from collections.abc import Callable
from types import TracebackType
from typing import Final, cast

from harness.protocol import type_name

# A listener's return value is ignored, so `lambda _: loop.call_soon(task.cancel)` fits.
Listener = Callable[[object], object]

# An exception's traceback, read through BaseException's own descriptor (a subclass could make
# `__traceback__` a property).
_traceback_of: Final = BaseException.__dict__["__traceback__"].__get__


class AbortError(Exception):
    """Raised when an operation stops because its signal was aborted."""

    def __init__(self, reason: object = "aborted") -> None:
        super().__init__(reason)
        self.reason = reason  # what the caller of abort() gave, or "aborted"


def reason_text(reason: object) -> str:
    """Describe an abort reason as text without running its code: str as is, else its type."""
    # An abort reason is whatever the caller of abort() gave: its __str__ is foreign code.
    if type(reason) is str:
        return reason
    if type(reason) is AbortError and type(reason.reason) is str:
        return reason.reason
    return type_name(reason)


# --8<-- [start:signal-state]
class SignalState(enum.Enum):
    """The lifecycle of one signal: open, then aborted for good."""

    OPEN = "open"
    ABORTED = "aborted"


# Python 3.11 reads a member through its enum class about as slowly as it makes a call, and
# checkpoint 06 asks a signal whether it is open four times per tool call; a module constant
# is read in a fraction of that.
_OPEN: Final = SignalState.OPEN


class AbortSignal:
    """Tell running code whether, and why, its operation was aborted."""

    def __init__(self) -> None:
        self._state = SignalState.OPEN
        self._reason: object = None  # None iff the state is OPEN
        self._reason_traceback: TracebackType | None = None  # an exception reason's, at abort
        # Listeners keyed by a token private to this signal: removal is O(1) and a listener
        # added twice is two registrations. Empty once the state is ABORTED.
        self._listeners: dict[int, Listener] = {}
        self._next_token = 0

    @property
    def state(self) -> SignalState:
        """Return the lifecycle state."""
        return self._state

    @property
    def aborted(self) -> bool:
        """Return True iff the signal was aborted."""
        return self._state is SignalState.ABORTED

    @property
    def reason(self) -> object:
        """Return the abort reason, or None while the signal is open."""
        return self._reason

    @property
    def listener_count(self) -> int:
        """Return how many listeners wait for the abort (0 after it)."""
        return len(self._listeners)

    # --8<-- [end:signal-state]

    # --8<-- [start:raise-if-aborted]
    def raise_if_aborted(self) -> None:
        """Raise the reason if it is an exception, else AbortError(reason); do nothing if open."""
        # BEGIN LAB 4.1
        if self._state is _OPEN:
            return
        reason = self._reason
        # type(), not isinstance(): an object can fake __class__ to pass isinstance and then
        # fail to be raised at all.
        if issubclass(type(reason), BaseException):
            # Each `raise` adds its frames to the exception's traceback: one reason raised by
            # every call would hold them all, and their frames. Reset it, as Future.result() does.
            raise BaseException.with_traceback(cast(BaseException, reason), self._reason_traceback)
        raise AbortError(reason)
        # END LAB 4.1

    # --8<-- [end:raise-if-aborted]

    # --8<-- [start:listeners]
    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(reason)`` on abort; return a function that removes it (idempotent).

        If the signal is already aborted, the listener is called at once, before this returns,
        and the remover does nothing.
        """
        # BEGIN LAB 4.1
        if not callable(listener):
            raise TypeError(f"listener must be callable, got {type_name(listener)}")
        if self._state is SignalState.ABORTED:
            listener(self._reason)
            return _do_nothing
        token = self._next_token
        self._next_token += 1
        self._listeners[token] = listener

        def remove() -> None:
            self._listeners.pop(token, None)

        return remove
        # END LAB 4.1

    async def wait_aborted(self) -> object:
        """Wait until the signal is aborted and return the reason.

        If the waiting task is cancelled, its listener is removed and CancelledError propagates.
        """
        # BEGIN LAB 4.1
        if self._state is SignalState.ABORTED:
            return self._reason
        waiter: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        remove = self.add_listener(lambda reason: _resolve(waiter, reason))
        try:
            return await waiter
        finally:
            # Runs on cancellation too: the future dies with this frame, the listener must too.
            remove()
        # END LAB 4.1

    # --8<-- [end:listeners]

    # --8<-- [start:dispatch]
    def _abort(self, reason: object) -> None:
        """Move to ABORTED, then call every listener once; see AbortController.abort."""
        # BEGIN LAB 4.1
        if self._state is SignalState.ABORTED:
            return
        self._state = SignalState.ABORTED
        self._reason = reason
        if issubclass(type(reason), BaseException):
            self._reason_traceback = _traceback_of(cast(BaseException, reason))
        # Forget the listeners before calling them: each runs once, and a listener that
        # aborts again or adds a listener sees a consistent, finished signal.
        listeners = list(self._listeners.values())
        self._listeners.clear()
        failures = _call_each(listeners, reason)
        if failures:
            raise ExceptionGroup("abort listeners raised", failures)
        # END LAB 4.1

    # --8<-- [end:dispatch]

    def __repr__(self) -> str:
        return f"<AbortSignal state={self._state.value} listeners={len(self._listeners)}>"


# BEGIN LAB 4.1
def _do_nothing() -> None:
    """Remove nothing: the listener of an aborted signal was never stored."""


def _resolve(waiter: asyncio.Future[object], reason: object) -> None:
    """Wake a waiter unless its task was cancelled meanwhile."""
    if not waiter.done():
        waiter.set_result(reason)


def _call_each(listeners: list[Listener], reason: object) -> list[Exception]:
    """Call every listener with the reason; return the exceptions they raised."""
    failures: list[Exception] = []
    for listener in listeners:
        try:
            listener(reason)
        except Exception as exc:  # collected, raised together once every listener ran
            failures.append(exc)
    return failures


# END LAB 4.1


# --8<-- [start:controller]
class AbortController:
    """Own the right to abort one operation; hand its ``signal`` to the code that runs it."""

    def __init__(self) -> None:
        self._signal = AbortSignal()

    @property
    def signal(self) -> AbortSignal:
        """Return the signal this controller aborts."""
        return self._signal

    def abort(self, reason: object = None) -> None:
        """Abort the signal with ``reason`` (None stores AbortError("aborted")); idempotent.

        Raises ExceptionGroup after all listeners ran if any of them raised; the signal is
        aborted regardless. A second call does nothing, whatever its reason.
        """
        # BEGIN LAB 4.1
        self._signal._abort(AbortError() if reason is None else reason)
        # END LAB 4.1

    def __repr__(self) -> str:
        return f"<AbortController signal={self._signal!r}>"


# --8<-- [end:controller]

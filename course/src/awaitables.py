"""Leave nothing behind when an awaitable is refused: close it, cancel it or observe it.

A validator must decide synchronously (checkpoint 06). One that returns a coroutine, a future,
a task or any other awaitable has not decided yet, and the executor refuses it; this module
cleans up after the refusal, so that nothing complains later: no "coroutine ... was never
awaited" warning, no "exception was never retrieved" log, no task left running.
"""

from __future__ import annotations

__all__ = ["dispose_of_awaitable"]

import asyncio
import contextlib
import types
from typing import cast


# --8<-- [start:dispose]
def dispose_of_awaitable(value: object) -> None:
    """Close a refused coroutine, cancel a refused task, and observe a refused future.

    Anything else (an object with its own ``__await__``) is left alone: nothing of its class
    runs. Never raises for what the awaitable's own code does: the awaitable is refused
    whatever happens here, and an error while it is disposed of must not turn the refusal into
    a crash. One exception to every rule: the task running this call, the caller's own.
    """
    # BEGIN LAB 6.7
    if type(value) is types.CoroutineType:
        # Closing it means no "never awaited" warning; if the validator started it, its
        # finally blocks run now. One close cannot be forced: a started coroutine that catches
        # GeneratorExit and waits again refuses to close, and Python reports it when collected.
        with contextlib.suppress(Exception):
            value.close()
        return
    if not issubclass(type(value), asyncio.Future):  # issubclass on type(): no __class__ tricks
        return
    if value is asyncio.current_task():
        # The caller's own task: cancelled from inside, it would be hit at a later await of the
        # caller's, and its outcome is the caller's to observe. It is neither cancelled nor
        # observed here.
        return
    # The base classes' own methods: a subclass's overrides are foreign code.
    if issubclass(type(value), asyncio.Task):
        with contextlib.suppress(Exception):  # it cancels what the task waits on, too
            asyncio.Task.cancel(cast("asyncio.Task[object]", value))  # the validator's work
    # Observe the outcome, now or when it comes, so asyncio never logs "exception was never
    # retrieved". A plain future is someone else's: it is not cancelled.
    with contextlib.suppress(Exception):
        asyncio.Future.add_done_callback(cast("asyncio.Future[object]", value), _retrieve_exception)
    # END LAB 6.7


# BEGIN LAB 6.7
def _retrieve_exception(future: asyncio.Future[object]) -> None:
    """Mark a refused future's exception as seen, so asyncio does not log it."""
    if not asyncio.Future.cancelled(future):
        asyncio.Future.exception(future)


# END LAB 6.7
# --8<-- [end:dispose]

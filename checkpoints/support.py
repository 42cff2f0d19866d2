"""Helpers that several checkpoints' focused tests share; copied into every practice folder."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["StartedTasks"]

T = TypeVar("T")


class StartedTasks:
    """Start tasks for one test; at teardown cancel and await them all.

    Awaiting every task retrieves its exception, so a test that fails half way (on a lab stub,
    say) never leaves an "exception was never retrieved" task behind it. The ``tasks`` fixture
    in ``checkpoints/conftest.py`` hands one to each test that asks for it.
    """

    def __init__(self) -> None:
        self._started: list[asyncio.Task[Any]] = []

    def start(self, coroutine: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Start ``coroutine`` as a task that is cancelled and awaited at teardown."""
        task = asyncio.create_task(coroutine)
        self._started.append(task)
        return task

    async def close(self) -> None:
        """Cancel every task started here and wait until each has finished."""
        for task in self._started:
            task.cancel()
        await asyncio.gather(*self._started, return_exceptions=True)

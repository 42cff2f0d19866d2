"""Helpers that several checkpoints' focused tests share; copied into every practice folder."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from hypothesis import strategies as st

__all__ = ["StartedTasks", "json_scalars", "json_values", "watched_class_instance"]

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


def json_scalars(
    *, int_bound: int | None = None, text_size: int | None = None
) -> st.SearchStrategy[object]:
    """Generate JSON scalars: None, bools, ints within ±int_bound, finite floats and text."""
    low = None if int_bound is None else -int_bound
    return (
        st.none()
        | st.booleans()
        | st.integers(min_value=low, max_value=int_bound)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=text_size)
    )


def json_values(
    scalars: st.SearchStrategy[object],
    *,
    key_size: int | None = None,
    width: int,
    max_leaves: int,
) -> st.SearchStrategy[object]:
    """Generate JSON values from ``scalars``: lists and str-keyed dicts, nested, ``width`` wide."""
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=width)
            | st.dictionaries(st.text(max_size=key_size), inner, max_size=width)
        ),
        max_leaves=max_leaves,
    )


def loud_instance() -> tuple[object, list[str]]:
    """Return an object that records each ``==``, hash, ``repr``, ``str`` or format asked of it.

    A record that refuses it must name it by type alone (``safe_repr``, ``type_name``): its
    methods are code of whoever made it. A test asserts that the list stayed empty.
    """
    asked: list[str] = []

    class Loud:
        def __eq__(self, other: object) -> bool:
            asked.append("__eq__")
            return True

        def __hash__(self) -> int:
            asked.append("__hash__")
            return 0

        def __repr__(self) -> str:
            asked.append("__repr__")
            return "whatever it likes"

        __str__ = __repr__

        def __format__(self, spec: str) -> str:
            asked.append("__format__")
            return "whatever it likes"

    return Loud(), asked


def watched_class_instance() -> tuple[object, list[str]]:
    """Return an object whose class's metaclass records each ``==``, hash or name asked of it.

    Checking ``type(x) in (A, B)`` or ``type(x) in frozenset(...)`` asks exactly that, and so
    does ``type(x).__name__`` in an error message; a metaclass's ``__eq__``, ``__hash__`` and
    ``__getattribute__`` are code of whoever wrote ``x``. ``type(x) is A`` asks nothing, and
    nor does reading the name through ``type``'s own descriptor. A test passes the object where
    a record or a walk checks types, then asserts that the list stayed empty.
    """
    asked: list[str] = []

    class Watched(type):
        def __getattribute__(cls, name: str) -> object:
            if name == "__name__":
                asked.append("__name__")
            return super().__getattribute__(name)

        def __eq__(cls, other: object) -> bool:
            asked.append("__eq__")
            return False

        def __hash__(cls) -> int:
            asked.append("__hash__")
            return id(cls)

    class Odd(metaclass=Watched):
        pass

    odd = Odd()
    asked.clear()  # making the class may have hashed it
    return odd, asked

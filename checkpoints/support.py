"""Helpers that several checkpoints' focused tests share; copied into every practice folder."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, Generic, Literal, TypeVar

import pytest
from hypothesis import strategies as st

__all__ = [
    "PinnedMessage",
    "StartedTasks",
    "json_scalars",
    "json_values",
    "raises_ending_with",
    "raises_exactly",
    "raises_starting_with",
    "watched_class_instance",
]

T = TypeVar("T")
E = TypeVar("E", bound=BaseException)


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


# Where a pinned text sits in the message: all of it, its start or its end.
Part = Literal["whole", "start", "end"]
_PART_WORDING: dict[Part, str] = {
    "whole": "the message",
    "start": "a message starting with",
    "end": "a message ending with",
}


class PinnedMessage(Generic[E]):
    """Expect the block to raise ``expected`` whose message is, or starts or ends with, ``text``.

    Made by ``raises_exactly``, ``raises_starting_with`` and ``raises_ending_with``; ``value`` is
    the exception caught. A failure always names the exception and the whole expected text, so
    a learner never reads a bare "DID NOT RAISE". An exception of another type, or a lab's stub
    (a ``NotImplementedError``, though it is a ``RuntimeError``), passes through untouched, so
    the labs report reads "not started"; one of the right type with another message fails with
    it as the cause. ``docs_tools/pinned_messages.py`` reads the texts given
    here and checks that the lab's section of the lesson page states each in full.
    """

    __slots__ = ("_caught", "expected", "part", "text")

    def __init__(self, expected: type[E], text: str, *, part: Part) -> None:
        self.expected = expected
        self.text = text
        self.part: Part = part
        self._caught: E | None = None

    @property
    def value(self) -> E:
        """The exception the block raised; only after the block has ended."""
        if self._caught is None:
            raise AttributeError("the block has not raised the expected exception (yet)")
        return self._caught

    def __enter__(self) -> PinnedMessage[E]:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        __tracebackhide__ = True
        name = self.expected.__name__
        what = _PART_WORDING[self.part]
        if error is None:
            pytest.fail(f"DID NOT RAISE {name}: expected {name} with {what}\n  {self.text}")
        if not isinstance(error, self.expected) or self._unwritten(error):
            return False
        if self._fits(str(error)):
            self._caught = error
            return True
        raise AssertionError(
            f"{type(error).__name__} was raised with another message.\n"
            f"expected {what}:\n  {self.text}\ngot the message:\n  {error}"
        ) from error

    def _unwritten(self, error: BaseException) -> bool:
        # A NotImplementedError is a RuntimeError, but it is code not yet written (a lab's
        # stub), never the refusal a test pins: it goes on, and the labs report reads it.
        return type(error) is NotImplementedError and self.expected is not NotImplementedError

    def _fits(self, message: str) -> bool:
        if self.part == "start":
            return message.startswith(self.text)
        if self.part == "end":
            return message.endswith(self.text)
        return message == self.text


def raises_exactly(expected: type[E], message: str) -> PinnedMessage[E]:
    """Expect ``expected`` raised with exactly ``message`` (``str(error) == message``)."""
    return PinnedMessage(expected, message, part="whole")


def raises_starting_with(expected: type[E], prefix: str) -> PinnedMessage[E]:
    """Expect ``expected`` raised with a message that starts with ``prefix``."""
    return PinnedMessage(expected, prefix, part="start")


def raises_ending_with(expected: type[E], suffix: str) -> PinnedMessage[E]:
    """Expect ``expected`` raised with a message that ends with ``suffix`` (a path before it)."""
    return PinnedMessage(expected, suffix, part="end")

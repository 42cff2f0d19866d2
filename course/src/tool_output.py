"""Write a tool's output as bounded, deterministic content text, running none of its code.

The tool already ran; what it returned must not run code, flood the transcript, or read
differently twice.
"""

from __future__ import annotations

__all__ = [
    "CIRCULAR_MARKER",
    "MAX_CONTENT_CODE_POINTS",
    "MAX_OUTPUT_COLLECTION_VISITS",
    "MAX_OUTPUT_DEPTH",
    "MAX_OUTPUT_INT_BITS",
    "MAX_OUTPUT_NODES",
    "MAX_OUTPUT_STRING_CODE_POINTS",
    "TRUNCATION_MARKER",
    "ToolOutputError",
    "cap_content",
    "serialize_output",
]

import json
import math
from collections.abc import Iterable
from itertools import islice
from operator import itemgetter
from typing import Final, cast

from harness.untrusted import type_name

# --8<-- [start:limits]
MAX_CONTENT_CODE_POINTS: Final = 4096  # the whole content, marker included
TRUNCATION_MARKER: Final = "\n[Tool output truncated]"
MAX_OUTPUT_DEPTH: Final = 32  # the walk stops at a container inside this many others
MAX_OUTPUT_NODES: Final = 128  # values written: containers, scalars, cycle markers (not keys)
MAX_OUTPUT_COLLECTION_VISITS: Final = 256  # list items and dict entries read
MAX_OUTPUT_STRING_CODE_POINTS: Final = 4096  # per string and per key
MAX_OUTPUT_INT_BITS: Final = 4096
CIRCULAR_MARKER: Final = "[Circular]"
# --8<-- [end:limits]


class ToolOutputError(ValueError):
    """Raised when a tool's output holds a value that cannot be serialized; names its path."""


# Two configured encoders, made once (json.dumps with keyword arguments builds one per call).
# Both only ever see trees of exact builtin types, which the C encoder writes without calling
# any method of theirs; neither checks for cycles, because a cycle never reaches them.
_encode_sorted: Final = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True, check_circular=False
).encode
_encode_in_order: Final = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), check_circular=False
).encode


# --8<-- [start:cap]
def cap_content(text: str, *, truncated: bool = False) -> str:
    """Return ``text`` cut to MAX_CONTENT_CODE_POINTS, marker included, if it is too long.

    With ``truncated=True`` (the serializer stopped at a budget) the marker is added even if
    the text is short. Text of exactly MAX_CONTENT_CODE_POINTS code points is not cut.
    """
    # BEGIN LAB 6.3
    if not truncated and len(text) <= MAX_CONTENT_CODE_POINTS:
        return text
    keep = MAX_CONTENT_CODE_POINTS - len(TRUNCATION_MARKER)
    return text[:keep] + TRUNCATION_MARKER
    # END LAB 6.3


# --8<-- [end:cap]


# --8<-- [start:serialize]
def serialize_output(output: object) -> str:
    """Return the content text of a tool's output: a str as is, anything else as compact JSON.

    Accepts None, bool, int (up to MAX_OUTPUT_INT_BITS bits), float, str, and exact dict (str
    keys), list and tuple. Keys are sorted; a cycle becomes CIRCULAR_MARKER; NaN and the
    infinities become the strings "NaN", "Infinity" and "-Infinity". The walk stops at the
    budgets (depth, nodes, collection visits, string length): what was written so far is kept
    and the content ends with TRUNCATION_MARKER. Raises ToolOutputError for anything else.
    """
    # BEGIN LAB 6.3
    if type(output) is str:
        return cap_content(output)
    scalar = _scalar_text(output)
    if scalar is not None:  # never longer than the cap: 4096 bits is about 1,233 digits
        return scalar
    # Fast path: most outputs are small, plain JSON. One counting pass proves that, and then
    # the C encoder writes the value itself. Everything else takes the copying walk, which
    # writes the same text for a plain value (a test holds the two paths to that).
    if _plain_size(output, 0) > 0:
        return cap_content(_encode_sorted(output))
    walk = _OutputWalk()
    try:
        copy = walk.copy(output, 0)
    except _UnsupportedValueError as exc:
        raise ToolOutputError(exc.describe()) from None
    return cap_content(_encode_in_order(copy), truncated=walk.truncated)
    # END LAB 6.3


# --8<-- [end:serialize]


# BEGIN LAB 6.3
def _scalar_text(value: object) -> str | None:
    """Return the JSON text of a plain scalar, exactly as json.dumps writes it, or None."""
    # Tools often return a number or a flag; for those the encoder's setup costs more than the
    # writing. The reprs are the exact types' own, as the C encoder calls them.
    if type(value) is int and value.bit_length() <= MAX_OUTPUT_INT_BITS:
        return int.__repr__(value)
    if type(value) is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if type(value) is float and math.isfinite(value):
        return float.__repr__(value)
    return None  # a container, a non-finite float, a huge int, or not JSON at all


def _plain_size(value: object, depth: int) -> int:
    """Count the nodes of ``value`` if the C encoder may write it as is; else return 0.

    "As is" means: exact builtin types, str keys, finite floats, short strings, small ints, and
    within the depth and node budgets (a cycle exceeds the depth budget, so it lands here too).
    """
    # `type(value) is str` both narrows the type for mypy and costs next to nothing; a cast()
    # would be one more function call per node at run time.
    if type(value) is str:
        return 1 if len(value) <= MAX_OUTPUT_STRING_CODE_POINTS else 0
    if type(value) is int:
        return 1 if value.bit_length() <= MAX_OUTPUT_INT_BITS else 0
    if type(value) is float:
        return 1 if math.isfinite(value) else 0
    if value is None or type(value) is bool:
        return 1
    if type(value) is not dict and type(value) is not list and type(value) is not tuple:
        return 0
    # The budgets first: a million-key dict must not be scanned only to be sent to the walk.
    if depth >= MAX_OUTPUT_DEPTH or len(value) >= MAX_OUTPUT_NODES:
        return 0
    children: Iterable[object] = value
    if type(value) is dict:
        for key in value:
            if type(key) is not str or len(key) > MAX_OUTPUT_STRING_CODE_POINTS:
                return 0
        children = value.values()
    total = 1
    for child in children:
        size = _plain_size(child, depth + 1)
        total += size
        if size == 0 or total > MAX_OUTPUT_NODES:
            return 0
    return total


_CUT: Final = object()  # what copy() returns for a container too deep to enter


class _UnsupportedValueError(Exception):
    """Raised during the walk at an unsupported value; containers add their key on the way up."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.path: list[str | int] = []  # innermost last, once every container has added its key

    def describe(self) -> str:
        path = "$"
        for step in reversed(self.path):
            if type(step) is int:
                path += f"[{step}]"
            else:
                key = cast("str", step)
                path += f".{key}" if key.isidentifier() else f"[{json.dumps(key[:40])}]"
        return f"{path}: {self.problem}"


class _OutputWalk:
    """One walk over an output: copies it into plain JSON data while counting the budgets."""

    __slots__ = ("nodes", "open", "stopped", "truncated", "visits")

    def __init__(self) -> None:
        self.nodes = 0  # values written so far
        self.visits = 0  # collection entries read so far
        self.open: set[int] = set()  # ids of the containers on the current path
        self.stopped = False  # True once a node, visit or depth budget ran out
        self.truncated = False  # True if anything was cut: stopped, or a long string or key

    def copy(self, value: object, depth: int) -> object:
        """Return the plain JSON copy of one value; the caller checked the node budget."""
        self.nodes += 1
        if type(value) is str:
            return self.text(value)
        if value is None or type(value) is bool:
            return value
        if type(value) is int:
            if value.bit_length() > MAX_OUTPUT_INT_BITS:
                raise _UnsupportedValueError(f"int larger than {MAX_OUTPUT_INT_BITS} bits")
            return value
        if type(value) is float:
            if math.isfinite(value):
                return value
            if math.isnan(value):
                return "NaN"
            return "Infinity" if value > 0 else "-Infinity"
        if type(value) is list or type(value) is tuple or type(value) is dict:
            if id(value) in self.open:
                return CIRCULAR_MARKER
            if depth >= MAX_OUTPUT_DEPTH:
                self.stop()
                return _CUT
            self.open.add(id(value))
            try:
                if type(value) is dict:
                    return self.copy_dict(value, depth)
                return self.copy_list(value, depth)
            finally:
                self.open.discard(id(value))
        raise _UnsupportedValueError(f"unsupported type {type_name(value)}")

    def copy_list(self, items: Iterable[object], depth: int) -> list[object]:
        copied: list[object] = []
        for index, item in enumerate(items):
            if not self.may_take_entry():
                break
            try:
                child = self.copy(item, depth + 1)
            except _UnsupportedValueError as exc:
                exc.path.append(index)
                raise
            if child is not _CUT:
                copied.append(child)
            if self.stopped:
                break
        return copied

    def copy_dict(self, entries: dict[object, object], depth: int) -> dict[str, object]:
        # Sorting needs every key before any value is written, so keys are read first, as many
        # as the visit budget allows; a bigger dict is cut to that many.
        room = MAX_OUTPUT_COLLECTION_VISITS - self.visits
        taken = list(islice(entries.items(), max(room, 0)))
        self.visits += len(taken)
        if len(taken) < len(entries):
            self.truncated = True  # the entries read are still written, sorted
        for key, _ in taken:
            if type(key) is not str:
                raise _UnsupportedValueError(f"dict keys must be str, got {type_name(key)}")
        taken.sort(key=itemgetter(0))  # exact str keys only: comparing them runs no code
        copied: dict[str, object] = {}
        for key, item in taken:
            assert type(key) is str  # checked above, before sorting
            if self.nodes >= MAX_OUTPUT_NODES:
                self.stop()
                break
            name = self.text(key)
            try:
                child = self.copy(item, depth + 1)
            except _UnsupportedValueError as exc:
                exc.path.append(key)
                raise
            if child is not _CUT:
                copied[name] = child
            if self.stopped:
                break
        return copied

    def may_take_entry(self) -> bool:
        """Count one list item read; return False (and stop) once a budget is spent."""
        if self.nodes >= MAX_OUTPUT_NODES or self.visits >= MAX_OUTPUT_COLLECTION_VISITS:
            self.stop()
            return False
        self.visits += 1
        return True

    def text(self, value: str) -> str:
        if len(value) > MAX_OUTPUT_STRING_CODE_POINTS:
            self.truncated = True
            return value[:MAX_OUTPUT_STRING_CODE_POINTS]
        return value

    def stop(self) -> None:
        self.stopped = self.truncated = True


# END LAB 6.3

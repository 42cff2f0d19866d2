"""Typed records for messages, tool calls and stream events, and deeply frozen JSON snapshots.

Theory of operation. Every value that crosses a boundary of the harness is one of a few frozen
records, and every record carries a ``Literal`` tag (``role``, ``type`` or ``kind``) as its first
field. A union of such records (``Message``, ``StreamEvent``, ``StreamResult``) is handled with
one ``match`` statement whose last case is ``assert_never``: the type checker then proves that
every member has its case, and adding a member without handling it is a type error.

JSON that comes from outside (a model's tool arguments, a provider record) is copied once, at
the boundary, into a *snapshot*: exact builtin types only, lists as tuples, objects as read-only
``MappingProxyType`` views over a private dict. Nothing outside can change a snapshot afterwards,
and making one never runs code that belongs to the input.
"""

from __future__ import annotations

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_JSON_INT_BITS",
    "MAX_JSON_NODES",
    "AssistantMessage",
    "JsonObject",
    "JsonSnapshotError",
    "JsonValue",
    "Message",
    "StreamAborted",
    "StreamDone",
    "StreamEvent",
    "StreamFailed",
    "StreamResult",
    "TextBlock",
    "TextDelta",
    "ToolCall",
    "ToolCallEvent",
    "ToolResultMessage",
    "UserMessage",
    "copy_json_object",
    "describe",
    "describe_event",
    "describe_result",
    "safe_repr",
    "snapshot_json",
    "snapshot_json_object",
    "thaw_json",
    "type_name",
]

import gc
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Final, Literal, TypeAlias, TypeGuard, assert_never, cast

# --8<-- [start:json-types]
# The frozen form of a JSON value: what snapshot_json returns and what records hold.
JsonValue: TypeAlias = (
    "bool | int | float | str | tuple[JsonValue, ...] | Mapping[str, JsonValue] | None"
)
JsonObject: TypeAlias = "Mapping[str, JsonValue]"

MAX_JSON_DEPTH = 64  # containers nested deeper than this are refused
MAX_JSON_NODES = 100_000  # values (containers and scalars) in one snapshot
MAX_JSON_INT_BITS = 4096  # json.dumps refuses ints past 4300 digits; we stop well before
# --8<-- [end:json-types]


class JsonSnapshotError(ValueError):
    """Raised when a value cannot be snapshotted as JSON; the message starts with its path."""


# --8<-- [start:type-name]
# Error messages name the type of a bad value, and `type(x).__name__` would ask its class's
# metaclass: a __getattribute__ or a property there is code of whoever wrote x, and so is a
# str subclass it answers with. `type`'s own descriptor, written in C, reads the real name.
_name_of_class: Final = type.__dict__["__name__"].__get__


def type_name(value: object) -> str:
    """Return the name of ``value``'s class without asking the class (or its metaclass)."""
    name = _name_of_class(type(value))
    return name if type(name) is str else "object"


def _has_scalar_type(value: object) -> bool:
    """Return True iff ``value`` is None or an exact bool, int, float or str."""
    # `is`, never `in (bool, int, ...)`: that compares types with ==, and a metaclass's __eq__
    # is code of the value's author.
    kind = type(value)
    return value is None or kind is str or kind is int or kind is float or kind is bool


def safe_repr(value: object) -> str:
    """Return ``repr(value)`` for None or an exact bool, int, float or str, else its type's name."""
    # Those reprs are Python's own; any other object's __repr__ is code of whoever made it.
    return repr(value) if _has_scalar_type(value) else type_name(value)


# --8<-- [end:type-name]


# ---------------------------------------------------------------------------------------------
# Records. Each validates its own fields, with exact type checks, when it is constructed.
# ---------------------------------------------------------------------------------------------


def _require_tag(owner: str, field: str, value: object, expected: str) -> None:
    """Refuse a tag field that was overridden with anything but its one allowed value."""
    if type(value) is not str or value != expected:
        raise ValueError(f"{owner}.{field} must be {expected!r}")


def _require_str(owner: str, field: str, value: object, *, non_empty: bool = False) -> None:
    """Refuse a field that is not an exact str (or is empty, when it must not be)."""
    if type(value) is not str:
        raise TypeError(f"{owner}.{field} must be a str, got {type_name(value)}")
    if non_empty and not value:
        raise ValueError(f"{owner}.{field} must not be empty")


def _require_tuple_of(owner: str, field: str, value: object, allowed: tuple[type, ...]) -> None:
    """Refuse a field that is not an exact tuple whose items are exactly of the allowed types."""
    if type(value) is not tuple:
        raise TypeError(f"{owner}.{field} must be a tuple, got {type_name(value)}")
    for index, item in enumerate(value):
        # `is`, not `in allowed`: that compares types with ==, which runs a metaclass's code
        if not any(type(item) is kind for kind in allowed):
            raise TypeError(
                f"{owner}.{field}[{index}] must be one of "
                f"{', '.join(t.__name__ for t in allowed)}, got {type_name(item)}"
            )


# --8<-- [start:content]
@dataclass(frozen=True, slots=True, kw_only=True)
class TextBlock:
    """A piece of text inside a user or assistant message."""

    type: Literal["text"] = "text"
    text: str

    def __post_init__(self) -> None:
        _require_tag("TextBlock", "type", self.type, "text")
        _require_str("TextBlock", "text", self.text)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """A model's proposal to run the tool ``name`` with JSON ``arguments``; nothing ran yet."""

    type: Literal["tool_call"] = "tool_call"
    id: str  # non-empty; the tool result that answers this call repeats it
    name: str  # non-empty
    arguments: JsonObject  # a snapshot: build calls from plain data with ToolCall.create

    def __post_init__(self) -> None:
        _require_tag("ToolCall", "type", self.type, "tool_call")
        _require_str("ToolCall", "id", self.id, non_empty=True)
        _require_str("ToolCall", "name", self.name, non_empty=True)
        # Only the outer type is checked here: the constructor is for values that are already
        # snapshots. Untrusted data goes through create(), which makes the snapshot itself.
        if type(self.arguments) is not MappingProxyType:
            raise TypeError(
                "ToolCall.arguments must be a JSON object snapshot, "
                f"got {type_name(self.arguments)}; use ToolCall.create"
            )

    @classmethod
    def create(cls, *, id: str, name: str, arguments: object) -> ToolCall:
        """Return a call whose arguments are a fresh snapshot of plain JSON ``arguments``."""
        return cls(id=id, name=name, arguments=snapshot_json_object(arguments))


# --8<-- [end:content]


# --8<-- [start:messages]
@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage:
    """What the person asked."""

    role: Literal["user"] = "user"
    content: tuple[TextBlock, ...]

    def __post_init__(self) -> None:
        _require_tag("UserMessage", "role", self.role, "user")
        _require_tuple_of("UserMessage", "content", self.content, (TextBlock,))


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage:
    """What the model answered: text, tool calls, or both, in the order it produced them."""

    role: Literal["assistant"] = "assistant"
    content: tuple[TextBlock | ToolCall, ...]

    def __post_init__(self) -> None:
        _require_tag("AssistantMessage", "role", self.role, "assistant")
        _require_tuple_of("AssistantMessage", "content", self.content, (TextBlock, ToolCall))
        seen: set[str] = set()
        for call in self.tool_calls:
            if call.id in seen:
                raise ValueError(f"AssistantMessage has two tool calls with id {call.id!r}")
            seen.add(call.id)

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Return the tool calls of this message, in order."""
        return tuple(block for block in self.content if type(block) is ToolCall)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultMessage:
    """What running one tool call produced; ``tool_call_id`` names the call it answers."""

    role: Literal["tool_result"] = "tool_result"
    id: str  # non-empty; checkpoint 06 uses f"tool-result-{call.id}"
    tool_call_id: str  # non-empty
    tool_name: str  # non-empty; equal to the name of the call it answers
    content: str  # what the model will read; may be empty
    is_error: bool

    def __post_init__(self) -> None:
        _require_tag("ToolResultMessage", "role", self.role, "tool_result")
        _require_str("ToolResultMessage", "id", self.id, non_empty=True)
        _require_str("ToolResultMessage", "tool_call_id", self.tool_call_id, non_empty=True)
        _require_str("ToolResultMessage", "tool_name", self.tool_name, non_empty=True)
        _require_str("ToolResultMessage", "content", self.content)
        if type(self.is_error) is not bool:
            raise TypeError(
                f"ToolResultMessage.is_error must be a bool, got {type_name(self.is_error)}"
            )


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
# --8<-- [end:messages]


# --8<-- [start:events]
@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    """A few more characters of the assistant's text, as they stream in."""

    kind: Literal["text_delta"] = "text_delta"
    text: str

    def __post_init__(self) -> None:
        _require_tag("TextDelta", "kind", self.kind, "text_delta")
        _require_str("TextDelta", "text", self.text)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallEvent:
    """A tool call that has been streamed completely."""

    kind: Literal["tool_call"] = "tool_call"
    call: ToolCall

    def __post_init__(self) -> None:
        _require_tag("ToolCallEvent", "kind", self.kind, "tool_call")
        if type(self.call) is not ToolCall:
            raise TypeError(f"ToolCallEvent.call must be a ToolCall, got {type_name(self.call)}")


StreamEvent: TypeAlias = TextDelta | ToolCallEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamDone:
    """The stream ended normally with this complete assistant message."""

    kind: Literal["done"] = "done"
    message: AssistantMessage

    def __post_init__(self) -> None:
        _require_tag("StreamDone", "kind", self.kind, "done")
        if type(self.message) is not AssistantMessage:
            raise TypeError(
                f"StreamDone.message must be an AssistantMessage, got {type_name(self.message)}"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamFailed:
    """The stream ended with an error that has a machine-readable code."""

    kind: Literal["error"] = "error"
    code: str  # non-empty, such as "PROVIDER_PROTOCOL_ERROR"
    message: str

    def __post_init__(self) -> None:
        _require_tag("StreamFailed", "kind", self.kind, "error")
        _require_str("StreamFailed", "code", self.code, non_empty=True)
        _require_str("StreamFailed", "message", self.message)


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamAborted:
    """The stream was stopped by its caller before it could finish."""

    kind: Literal["aborted"] = "aborted"
    reason: str

    def __post_init__(self) -> None:
        _require_tag("StreamAborted", "kind", self.kind, "aborted")
        _require_str("StreamAborted", "reason", self.reason)


StreamResult: TypeAlias = StreamDone | StreamFailed | StreamAborted
# --8<-- [end:events]


# ---------------------------------------------------------------------------------------------
# Exhaustive handling: one match per union, closed by assert_never.
# ---------------------------------------------------------------------------------------------


def _plain_text(content: tuple[TextBlock | ToolCall, ...]) -> str:
    """Join the text blocks of some content, leaving tool calls out."""
    return "".join(block.text for block in content if type(block) is TextBlock)


# --8<-- [start:describe]
def describe(message: Message) -> str:
    """Return a one-line, human-readable summary of a message."""
    # BEGIN LAB 1.1
    match message:
        case UserMessage(content=content):
            return f"user: {_plain_text(content)}"
        case AssistantMessage(content=content):
            calls = ", ".join(f"{call.name}#{call.id}" for call in message.tool_calls)
            return f"assistant: {_plain_text(content)}" + (f" [calls: {calls}]" if calls else "")
        case ToolResultMessage(tool_name=name, tool_call_id=call_id, is_error=is_error):
            outcome = "error" if is_error else "ok"
            return f"tool_result {name}#{call_id} ({outcome}): {message.content}"
        case _:
            # If a new member is added to Message and not handled above, `message` is not
            # Never here and mypy reports this line. At run time it raises AssertionError.
            assert_never(message)
    # END LAB 1.1


# --8<-- [end:describe]


def describe_event(event: StreamEvent) -> str:
    """Return a one-line summary of a stream event."""
    # BEGIN LAB 1.1
    match event:
        case TextDelta(text=text):
            return f"text_delta: {text!r}"
        case ToolCallEvent(call=call):
            return f"tool_call: {call.name}#{call.id}"
        case _:
            assert_never(event)
    # END LAB 1.1


def describe_result(result: StreamResult) -> str:
    """Return a one-line summary of how a stream ended."""
    # BEGIN LAB 1.1
    match result:
        case StreamDone(message=message):
            return f"done: {describe(message)}"
        case StreamFailed(code=code, message=text):
            return f"error {code}: {text}"
        case StreamAborted(reason=reason):
            return f"aborted: {reason}"
        case _:
            assert_never(result)
    # END LAB 1.1


# ---------------------------------------------------------------------------------------------
# JSON snapshots. Exact types only, an explicit stack instead of recursion, paths in errors.
# ---------------------------------------------------------------------------------------------


# BEGIN LAB 1.2
@dataclass(frozen=True, slots=True)
class _Visit:
    """Work item: snapshot ``value``, the child ``key`` of the container at ``parent_path``."""

    value: object
    parent_path: str
    key: str | int | None  # None for the top-level value
    depth: int  # how many containers hold this value

    @property
    def path(self) -> str:
        """Return the path of this value; built only when needed, since most never are."""
        return self.parent_path if self.key is None else _child_path(self.parent_path, self.key)


@dataclass(frozen=True, slots=True)
class _Close:
    """Work item: the children of a container are done; build its frozen form."""

    container_id: int
    keys: tuple[str, ...] | None  # None for an array
    size: int


def _child_path(path: str, key: str | int) -> str:
    """Return the path of a child: ``$.name``, ``$["odd key"]`` or ``$[3]``."""
    if type(key) is int:
        return f"{path}[{key}]"
    assert type(key) is str
    if key.isidentifier() and key.isascii():
        return f"{path}.{key}"
    return f"{path}[{_quoted(key)}]"


def _quoted(key: str) -> str:
    """Quote a key for an error message, shortened so a huge key cannot flood the log."""
    shown = key if len(key) <= 40 else key[:40] + "…"
    return '"' + shown.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _refuse(path: str, value: object) -> JsonSnapshotError:
    """Explain why a value of a type we do not accept is refused."""
    kind = type(value)
    for base in (dict, list, tuple, str, int, float):
        if issubclass(kind, base):  # exact types never get here, so this is a subclass
            return JsonSnapshotError(
                f"{path}: {type_name(value)} is a subclass of {base.__name__}; "
                f"only {base.__name__} is accepted"
            )
    return JsonSnapshotError(f"{path}: {type_name(value)} is not a JSON type")


def _snapshot_scalar(visit: _Visit) -> JsonValue:
    """Return a JSON scalar unchanged after checking it; refuse anything else."""
    value = visit.value
    if _is_plain_scalar(value):
        return value
    if type(value) is int:
        raise JsonSnapshotError(
            f"{visit.path}: int of {value.bit_length()} bits "
            f"is larger than {MAX_JSON_INT_BITS} bits"
        )
    if type(value) is float:
        what = "NaN" if math.isnan(value) else "Infinity"
        raise JsonSnapshotError(f"{visit.path}: {what} is not a JSON number")
    raise _refuse(visit.path, value)


def _open_container(
    visit: _Visit, open_paths: dict[int, str], max_depth: int, work: list[_Visit | _Close]
) -> None:
    """Check a dict or list before entering it, then schedule its children and its closing."""
    value, path = visit.value, visit.path
    if id(value) in open_paths:
        raise JsonSnapshotError(f"{path}: cycle back to {open_paths[id(value)]}")
    if visit.depth >= max_depth:
        raise JsonSnapshotError(f"{path}: nested deeper than {max_depth} containers")
    children: list[_Visit]
    if type(value) is dict:
        for key in value:  # iterating an exact dict runs no code of ours or theirs
            if type(key) is not str:
                raise JsonSnapshotError(f"{path}: object keys must be str, got {type_name(key)}")
        keys = tuple(value)
        children = [_Visit(value[k], path, k, visit.depth + 1) for k in keys]
        work.append(_Close(id(value), keys, len(keys)))
    else:
        assert type(value) is list or type(value) is tuple
        children = [_Visit(item, path, index, visit.depth + 1) for index, item in enumerate(value)]
        work.append(_Close(id(value), None, len(children)))
    open_paths[id(value)] = path
    work.extend(reversed(children))  # reversed: the stack pops the first child first


def _close_container(close: _Close, open_paths: dict[int, str], done: list[JsonValue]) -> None:
    """Replace the finished children on ``done`` by their frozen container."""
    children = done[len(done) - close.size :]
    del done[len(done) - close.size :]
    del open_paths[close.container_id]
    if close.keys is None:
        done.append(tuple(children))
    else:
        done.append(MappingProxyType(dict(zip(close.keys, children, strict=True))))


def _flat_object_copy(value: dict[object, object]) -> dict[str, object] | None:
    """Return a plain copy of a flat object of plain scalars, or None if it is anything else."""
    # Most tool arguments are one level of scalars, and for those the walk's work items cost
    # more than the copy itself. Anything else (a nested container, a non-str key, a float that
    # is not finite, an int too large) returns None: the walk then answers, with its message.
    if len(value) >= MAX_JSON_NODES:  # the object itself is a node too
        return None
    copy: dict[str, object] = {}
    for key, item in value.items():  # an exact dict: iterating it runs no code of theirs
        if type(key) is str and _is_plain_scalar(item):
            copy[key] = item
        else:
            return None
    return copy


def _is_plain_scalar(value: object) -> TypeGuard[JsonValue]:
    """Return True iff ``value`` is a JSON scalar that the walk would keep as it is."""
    if type(value) is int:
        return value.bit_length() <= MAX_JSON_INT_BITS
    if type(value) is float:
        return math.isfinite(value)
    return value is None or type(value) is bool or type(value) is str


# END LAB 1.2


# --8<-- [start:snapshot]
def snapshot_json(
    value: object, *, max_depth: int = MAX_JSON_DEPTH, max_nodes: int = MAX_JSON_NODES
) -> JsonValue:
    """Return a deeply frozen copy of a plain JSON value.

    Accepts exactly ``None``, ``bool``, ``int``, finite ``float``, ``str``, ``list``, ``tuple``
    and ``dict`` with ``str`` keys; subclasses are refused, and no method of the input is called.
    Raises JsonSnapshotError, whose message starts with the path of the offending value, for
    anything else, for a cycle, and past ``max_depth`` nested containers or ``max_nodes`` values.
    """
    # BEGIN LAB 1.2
    # An explicit stack, not recursion: 10,000 nested lists must give a clean error, never
    # RecursionError, and the depth check must not depend on how deep the caller already is.
    work: list[_Visit | _Close] = [_Visit(value, "$", None, 0)]
    done: list[JsonValue] = []  # finished children, waiting for their container to close
    open_paths: dict[int, str] = {}  # id of each container we are inside -> its path
    nodes = 0
    while work:
        item = work.pop()
        match item:
            case _Close():
                _close_container(item, open_paths, done)
            case _Visit(value=current):
                nodes += 1
                if nodes > max_nodes:
                    raise JsonSnapshotError(f"{item.path}: more than {max_nodes} values")
                # `is`, not `in (dict, list, tuple)`, which would run a metaclass's ==
                kind = type(current)
                if kind is dict or kind is list or kind is tuple:
                    _open_container(item, open_paths, max_depth, work)
                else:
                    done.append(_snapshot_scalar(item))
    assert len(done) == 1
    assert not open_paths
    return done[0]
    # END LAB 1.2


# --8<-- [end:snapshot]


def snapshot_json_object(value: object) -> JsonObject:
    """Return a frozen snapshot of a JSON object; raise JsonSnapshotError for anything else."""
    # BEGIN LAB 1.2
    if type(value) is not dict:
        raise JsonSnapshotError(f"$: expected a JSON object, got {type_name(value)}")
    flat = _flat_object_copy(value)
    if flat is not None:  # plain scalars only, each a JsonValue already
        return cast(JsonObject, MappingProxyType(flat))
    snapshot = snapshot_json(value)
    assert type(snapshot) is MappingProxyType
    return snapshot
    # END LAB 1.2


def copy_json_object(value: object) -> dict[str, object]:
    """Return a plain, mutable deep copy of a JSON object, checked exactly as a snapshot is.

    The same as ``thaw_json(snapshot_json_object(value))``, with the same errors, but a flat
    object of plain scalars is copied once, not twice.
    """
    # BEGIN LAB 1.2
    if type(value) is not dict:
        raise JsonSnapshotError(f"$: expected a JSON object, got {type_name(value)}")
    flat = _flat_object_copy(value)
    if flat is not None:
        return flat
    thawed = thaw_json(snapshot_json(value))
    assert type(thawed) is dict
    return thawed
    # END LAB 1.2


def _wrapped_dict(proxy: MappingProxyType[str, JsonValue]) -> dict[str, JsonValue]:
    """Return the plain dict of str keys that a snapshot's read-only mapping wraps, or refuse."""
    # A mappingproxy passes every read (iteration, items, copy) on to the mapping it wraps, and
    # anyone can wrap any mapping, with methods of its own. gc.get_referents returns the wrapped
    # object itself, so its type is checked before anything of it runs; then its keys, before
    # copying them hashes them.
    (wrapped,) = gc.get_referents(proxy)
    if type(wrapped) is not dict:
        raise TypeError("a read-only mapping of a JSON snapshot wraps a plain dict")
    for key in wrapped:  # iterating an exact dict runs no code
        if type(key) is not str:
            raise TypeError("the keys of a JSON snapshot are exact str")
    return cast("dict[str, JsonValue]", wrapped)


def thaw_json(value: JsonValue, *, max_nodes: int = MAX_JSON_NODES) -> object:
    """Return a plain, mutable dict/list copy of a snapshot, ready for ``json.dumps``.

    Raises TypeError if ``value`` is not in the frozen form that snapshot_json returns (tuples
    and read-only mappings of plain dicts, with exact JSON scalars as leaves), or if it holds
    more than ``max_nodes`` values, as only a value made by hand can: one with a cycle, say.
    """
    # BEGIN LAB 1.2
    if type(value) is MappingProxyType:  # most tool arguments are flat: one copy, in C
        fields = _wrapped_dict(value)
        for child in fields.values():
            if not _has_scalar_type(child):
                break
        else:
            if len(fields) < max_nodes:  # the object and its values, within the budget
                return fields.copy()
    # Mutable containers can be created before their children are known, so this walk fills
    # each one in place: a work item is (frozen value, function that stores its thawed copy).
    holder: list[object] = []
    work: list[tuple[object, Callable[[object], None]]] = [(value, holder.append)]
    # A value made by hand can hold itself, or share a branch at every level: the walk would
    # never end, or copy 2**depth values. The budget that bounds every snapshot bounds it too.
    budget = max_nodes
    while work:
        item, store = work.pop()
        budget -= 1
        if budget < 0:
            raise TypeError(
                f"more values than max_nodes={max_nodes}: not a JSON snapshot (a cycle?)"
            )
        if type(item) is MappingProxyType:
            fields = _wrapped_dict(item)
            thawed_object: dict[str, object] = dict.fromkeys(fields)  # keys first: order survives
            work.extend(
                (child, partial(thawed_object.__setitem__, key)) for key, child in fields.items()
            )
            store(thawed_object)
        elif type(item) is tuple:
            thawed_array: list[object] = [None] * len(item)
            work.extend(
                (child, partial(thawed_array.__setitem__, i)) for i, child in enumerate(item)
            )
            store(thawed_array)
        elif _has_scalar_type(item):
            store(item)
        else:
            raise TypeError(f"{type_name(item)} is not part of a JSON snapshot")
    return holder[0]
    # END LAB 1.2

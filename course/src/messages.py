"""Turn untrusted plain data into message records, check transcript linkage, round-trip JSON.

Theory of operation. A transcript is a sequence of messages in which every tool call made by
the assistant is answered by exactly one tool result before the conversation moves on:

    user → assistant(calls c1, c2) → result(c1) → result(c2) → assistant → …

Walking it keeps one piece of state, the calls still *pending* (made, not yet answered). Each
message kind has one rule: a user or assistant message needs no call pending (and an assistant
message adds its calls); a tool result must answer a pending call of the same tool name, which
then stops pending. A transcript may end with calls pending: the harness is about to run them.

Messages arrive as plain dicts (from JSON text, a session file, a test). ``normalize_message``
is the one way in: exact types, every field read once, unknown fields refused, and every
error a ``MessageError`` whose message starts with the path of the offending value.
"""

from __future__ import annotations

__all__ = [
    "DuplicateToolCallIdError",
    "DuplicateToolResultError",
    "EmptyFieldError",
    "FieldTypeError",
    "InvalidArgumentsError",
    "MalformedMessageError",
    "Message",
    "MessageError",
    "MissingFieldError",
    "OrphanToolResultError",
    "PendingToolCallsError",
    "ToolCall",
    "ToolNameMismatchError",
    "ToolResultMessage",
    "TranscriptLinkError",
    "UnexpectedFieldError",
    "UnknownBlockTypeError",
    "UnknownRoleError",
    "check_transcript",
    "message_from_json",
    "message_to_json",
    "normalize_message",
    "pending_tool_calls",
    "transcript_from_json",
    "transcript_to_json",
]

from collections.abc import Iterable
from typing import assert_never

from harness.protocol import (
    AssistantMessage,
    JsonSnapshotError,
    Message,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    thaw_json,
    type_name,
)


# --8<-- [start:errors]
class MessageError(ValueError):
    """Raised when a message or a transcript is not valid; the message starts with a path."""


class MalformedMessageError(MessageError):
    """Raised when one message does not have the shape of a message."""


class UnknownRoleError(MalformedMessageError):
    """Raised when ``role`` is not ``user``, ``assistant`` or ``tool_result``."""


class UnknownBlockTypeError(MalformedMessageError):
    """Raised when a content block's ``type`` is not one this role may use."""


class MissingFieldError(MalformedMessageError):
    """Raised when a required field is absent."""


class UnexpectedFieldError(MalformedMessageError):
    """Raised when a field is present that the message kind does not have."""


class FieldTypeError(MalformedMessageError):
    """Raised when a field holds a value of the wrong type (subclasses count as wrong)."""


class EmptyFieldError(MalformedMessageError):
    """Raised when a field that must say something is the empty string."""


class InvalidArgumentsError(MalformedMessageError):
    """Raised when a tool call's arguments are not a JSON object we can snapshot."""


class TranscriptLinkError(MessageError):
    """Raised when tool calls and tool results do not pair up."""


class DuplicateToolCallIdError(TranscriptLinkError):
    """Raised when a tool call id is used a second time."""


class OrphanToolResultError(TranscriptLinkError):
    """Raised when a tool result answers no pending tool call."""


class DuplicateToolResultError(TranscriptLinkError):
    """Raised when a tool call that was already answered is answered again."""


class ToolNameMismatchError(TranscriptLinkError):
    """Raised when a tool result names a different tool than the call it answers."""


class PendingToolCallsError(TranscriptLinkError):
    """Raised when a user or assistant message arrives while tool calls are unanswered."""


# --8<-- [end:errors]


# The exact fields _read_fields accepts for each kind of message and content block.
USER_FIELDS = ("role", "content")
ASSISTANT_FIELDS = ("role", "content")
TOOL_RESULT_FIELDS = ("role", "id", "tool_call_id", "tool_name", "content", "is_error")
TEXT_BLOCK_FIELDS = ("type", "text")
TOOL_CALL_FIELDS = ("type", "id", "name", "arguments")


# BEGIN LAB 3.1
def _shown(text: str) -> str:
    """Return ``repr(text)``, shortened so that a huge value cannot flood an error message."""
    return repr(text if len(text) <= 40 else text[:40] + "…")


def _object(value: object, path: str) -> dict[str, object]:
    """Return an exact dict whose keys are all exact strs; refuse anything else."""
    if type(value) is not dict:
        raise FieldTypeError(f"{path}: expected an object, got {type_name(value)}")
    # Before any lookup: `name in value` compares the keys that hash like name, and a str
    # subclass among them would compare with its own __eq__.
    for key in value:  # an exact dict: iterating it runs no code that the sender wrote
        if type(key) is not str:
            raise UnexpectedFieldError(f"{path}: field names must be str, got {type_name(key)}")
    return value


def _read_fields(value: object, path: str, names: tuple[str, ...]) -> dict[str, object]:
    """Copy the fields ``names`` out of an exact dict that has exactly those str keys."""
    fields = _object(value, path)
    for key in fields:
        if key not in names:
            raise UnexpectedFieldError(f"{path}: unexpected field {_shown(key)}")
    for name in names:
        if name not in fields:
            raise MissingFieldError(f"{path}: missing field {name!r}")
    return {name: fields[name] for name in names}


def _tag(value: object, path: str, name: str) -> str:
    """Return the tag field ``name`` (role or block type) of an exact dict, as an exact str."""
    fields = _object(value, path)
    if name not in fields:
        raise MissingFieldError(f"{path}: missing field {name!r}")
    # Compare only exact strs: `"user" == tag` would call the __eq__ of a hostile object.
    return _text(fields[name], f"{path}.{name}")


def _text(value: object, path: str, *, non_empty: bool = False) -> str:
    """Return a str field, refusing other types and, when asked, the empty string."""
    if type(value) is not str:
        raise FieldTypeError(f"{path}: expected str, got {type_name(value)}")
    if non_empty and not value:
        raise EmptyFieldError(f"{path}: must not be empty")
    return value


def _items(value: object, path: str) -> list[object]:
    """Return the items of an exact list."""
    if type(value) is not list:
        raise FieldTypeError(f"{path}: expected list or str, got {type_name(value)}")
    return list(value)


def _text_block(value: object, path: str) -> TextBlock:
    fields = _read_fields(value, path, TEXT_BLOCK_FIELDS)
    return TextBlock(text=_text(fields["text"], f"{path}.text"))


def _tool_call(value: object, path: str) -> ToolCall:
    fields = _read_fields(value, path, TOOL_CALL_FIELDS)
    call_id = _text(fields["id"], f"{path}.id", non_empty=True)
    name = _text(fields["name"], f"{path}.name", non_empty=True)
    try:
        return ToolCall.create(id=call_id, name=name, arguments=fields["arguments"])
    except JsonSnapshotError as exc:
        # The snapshot's own path starts at "$"; graft it onto where the arguments sit.
        raise InvalidArgumentsError(f"{path}.arguments{str(exc).removeprefix('$')}") from exc


def _user_content(value: object, path: str) -> tuple[TextBlock, ...]:
    if type(value) is str:  # a plain string is short for one text block
        return (TextBlock(text=value),)
    blocks: list[TextBlock] = []
    for index, item in enumerate(_items(value, path)):
        item_path = f"{path}[{index}]"
        kind = _tag(item, item_path, "type")
        if kind != "text":
            raise UnknownBlockTypeError(f"{item_path}.type: a user message has no {_shown(kind)}")
        blocks.append(_text_block(item, item_path))
    return tuple(blocks)


def _assistant_content(value: object, path: str) -> tuple[TextBlock | ToolCall, ...]:
    if type(value) is str:
        return (TextBlock(text=value),)
    blocks: list[TextBlock | ToolCall] = []
    seen_ids: set[str] = set()
    for index, item in enumerate(_items(value, path)):
        item_path = f"{path}[{index}]"
        kind = _tag(item, item_path, "type")
        if kind == "text":
            blocks.append(_text_block(item, item_path))
        elif kind == "tool_call":
            call = _tool_call(item, item_path)
            if call.id in seen_ids:
                raise DuplicateToolCallIdError(
                    f"{item_path}.id: tool call id {_shown(call.id)} was already used"
                )
            seen_ids.add(call.id)
            blocks.append(call)
        else:
            raise UnknownBlockTypeError(
                f"{item_path}.type: an assistant message has no {_shown(kind)}"
            )
    return tuple(blocks)


def _tool_result(fields: dict[str, object], path: str) -> ToolResultMessage:
    is_error = fields["is_error"]
    if type(is_error) is not bool:
        raise FieldTypeError(f"{path}.is_error: expected bool, got {type_name(is_error)}")
    return ToolResultMessage(
        id=_text(fields["id"], f"{path}.id", non_empty=True),
        tool_call_id=_text(fields["tool_call_id"], f"{path}.tool_call_id", non_empty=True),
        tool_name=_text(fields["tool_name"], f"{path}.tool_name", non_empty=True),
        content=_text(fields["content"], f"{path}.content"),
        is_error=is_error,
    )


# END LAB 3.1


# --8<-- [start:normalize]
def normalize_message(value: object, *, path: str = "$") -> Message:
    """Return the message record that the plain dict ``value`` describes.

    ``content`` of a user or assistant message is a list of blocks, or a str as a short form
    of one text block. Raises a MalformedMessageError (or DuplicateToolCallIdError) whose
    message starts with ``path`` and names the first offending field.
    """
    # BEGIN LAB 3.1
    role = _tag(value, path, "role")
    if role == "user":
        fields = _read_fields(value, path, USER_FIELDS)
        return UserMessage(content=_user_content(fields["content"], f"{path}.content"))
    if role == "assistant":
        fields = _read_fields(value, path, ASSISTANT_FIELDS)
        return AssistantMessage(content=_assistant_content(fields["content"], f"{path}.content"))
    if role == "tool_result":
        return _tool_result(_read_fields(value, path, TOOL_RESULT_FIELDS), path)
    raise UnknownRoleError(f"{path}.role: unknown role {_shown(role)}")
    # END LAB 3.1


# --8<-- [end:normalize]


# --8<-- [start:linkage]
def pending_tool_calls(messages: Iterable[Message]) -> tuple[ToolCall, ...]:
    """Check the linkage of a transcript and return its unanswered tool calls, in call order.

    Raises a TranscriptLinkError naming the index of the first message that breaks a rule.
    """
    # BEGIN LAB 3.2
    pending: dict[str, ToolCall] = {}  # made and not yet answered, by call id, in call order
    used_ids: set[str] = set()  # every call id seen so far, answered or not
    for index, message in enumerate(messages):
        path = f"$[{index}]"
        match message:
            case UserMessage() | AssistantMessage() if pending:
                waiting = ", ".join(map(repr, pending))
                raise PendingToolCallsError(
                    f"{path}: a {message.role} message while tool calls {waiting} are pending"
                )
            case UserMessage():
                pass
            case AssistantMessage():
                for call in message.tool_calls:
                    if call.id in used_ids:
                        raise DuplicateToolCallIdError(
                            f"{path}: tool call id {call.id!r} was already used"
                        )
                    used_ids.add(call.id)
                    pending[call.id] = call
            case ToolResultMessage(tool_call_id=call_id, tool_name=tool_name):
                answered = pending.pop(call_id, None)
                if answered is None and call_id in used_ids:
                    raise DuplicateToolResultError(
                        f"{path}: tool call {call_id!r} was already answered"
                    )
                if answered is None:
                    raise OrphanToolResultError(f"{path}: no pending tool call has id {call_id!r}")
                if answered.name != tool_name:
                    raise ToolNameMismatchError(
                        f"{path}: tool call {call_id!r} is {answered.name!r}, not {tool_name!r}"
                    )
            case _:
                assert_never(message)
    return tuple(pending.values())
    # END LAB 3.2


# --8<-- [end:linkage]


def check_transcript(messages: Iterable[Message]) -> None:
    """Raise a TranscriptLinkError unless every tool result answers one pending call in time."""
    pending_tool_calls(messages)


# BEGIN LAB 3.3
def _block_to_json(block: TextBlock | ToolCall) -> dict[str, object]:
    """Return a plain dict for one content block."""
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text}
        case ToolCall(id=call_id, name=name, arguments=arguments):
            return {
                "type": "tool_call",
                "id": call_id,
                "name": name,
                "arguments": thaw_json(arguments),
            }
        case _:
            assert_never(block)


# END LAB 3.3


# --8<-- [start:to-json]
def message_to_json(message: Message) -> dict[str, object]:
    """Return a plain, JSON-ready dict for a message; message_from_json reads it back equal."""
    # BEGIN LAB 3.3
    match message:
        case UserMessage(content=content):
            return {"role": "user", "content": [_block_to_json(block) for block in content]}
        case AssistantMessage(content=content):
            return {"role": "assistant", "content": [_block_to_json(block) for block in content]}
        case ToolResultMessage():
            return {
                "role": "tool_result",
                "id": message.id,
                "tool_call_id": message.tool_call_id,
                "tool_name": message.tool_name,
                "content": message.content,
                "is_error": message.is_error,
            }
        case _:
            assert_never(message)
    # END LAB 3.3


# --8<-- [end:to-json]


def message_from_json(data: object) -> Message:
    """Return the message that a dict written by message_to_json (or by anyone) describes."""
    # BEGIN LAB 3.3
    return normalize_message(data)
    # END LAB 3.3


def transcript_to_json(messages: Iterable[Message]) -> list[dict[str, object]]:
    """Return a plain, JSON-ready list for a transcript."""
    # BEGIN LAB 3.3
    return [message_to_json(message) for message in messages]
    # END LAB 3.3


def transcript_from_json(data: object) -> tuple[Message, ...]:
    """Return the transcript that a JSON list describes, normalized and linkage-checked."""
    # BEGIN LAB 3.3
    if type(data) is not list:
        raise FieldTypeError(f"$: expected a list of messages, got {type_name(data)}")
    messages = tuple(normalize_message(item, path=f"$[{index}]") for index, item in enumerate(data))
    check_transcript(messages)
    return messages
    # END LAB 3.3

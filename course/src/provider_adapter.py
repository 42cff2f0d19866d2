"""Turn recorded provider stream records into normalized stream events and one terminal result.

Theory of operation. A provider streams a response as JSON records: OpenAI chat-completions
chunks or Anthropic messages events. Nothing in a record is trusted. An adapter is fed one record
at a time and answers each with zero or more events; ``close()`` says that the records have run
out. The adapter does no I/O itself: ``read_fixture`` reads a recording from disk.

    OPEN ──end record──▶ ENDED ──close()──▶ FINISHED, with StreamDone
    OPEN ──bad record, or close() before the end──▶ FINISHED, with StreamFailed
    ENDED ──any record but a usage-only chunk──▶ FINISHED, with StreamFailed

A failure is returned at once, but StreamDone waits for ``close()``: only then is it known that
nothing follows the end record. Whatever the records do, exactly one terminal event comes out,
and it comes last.
"""

from __future__ import annotations

__all__ = [
    "MAX_ARGUMENTS_CHARS",
    "MAX_LINE_BYTES",
    "MAX_TOOL_CALLS",
    "AdapterEvent",
    "AnthropicMessagesAdapter",
    "OpenAIChatAdapter",
    "ProviderAdapter",
    "ProviderRecordError",
    "adapt_records",
    "parse_strict_json",
    "parse_tool_arguments",
    "read_fixture",
]

import enum
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import ClassVar, TypeAlias, TypeVar

from harness.protocol import (
    AssistantMessage,
    JsonObject,
    StreamDone,
    StreamFailed,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    snapshot_json_object,
    type_name,
)

MAX_ARGUMENTS_CHARS = 65_536  # one tool call's assembled arguments text
MAX_TOOL_CALLS = 64  # tool calls in one response
MAX_LINE_BYTES = 1_048_576  # one recorded line

AdapterEvent: TypeAlias = TextDelta | ToolCallEvent | StreamDone | StreamFailed
_T = TypeVar("_T")


class ProviderRecordError(ValueError):
    """Raised when a record or its tool-call arguments cannot be accepted; ``code`` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


# --8<-- [start:fields]
def _invalid(where: str, problem: str) -> ProviderRecordError:
    return ProviderRecordError("INVALID_PROVIDER_RECORD", f"{where}: {problem}")


# BEGIN LAB 5.1
def _object(value: object, where: str) -> dict[str, object]:
    # Exactly a dict with str keys: a subclass, or a key object with its own __eq__, could run
    # code during our lookups. Iterating an exact dict runs none.
    if type(value) is not dict:
        raise _invalid(where, f"expected dict, got {type_name(value)}")
    if not all(type(key) is str for key in value):
        raise _invalid(where, "expected str keys")
    return value


def _field(obj: dict[str, object], key: str, kind: type[_T], where: str) -> _T:
    value = obj.get(key)
    if type(value) is int and value.bit_length() > 32:  # a huge int cannot even be printed
        raise _invalid(f"{where}.{key}", "int out of range")
    if type(value) is not kind:  # exactly: True is an int to isinstance, not to us
        raise _invalid(f"{where}.{key}", f"expected {kind.__name__}, got {type_name(value)}")
    return value


def _optional(obj: dict[str, object], key: str, kind: type[_T], where: str) -> _T | None:
    return None if obj.get(key) is None else _field(obj, key, kind, where)


def _expect(obj: dict[str, object], key: str, expected: str, where: str) -> None:
    if (value := _field(obj, key, str, where)) != expected:
        raise _invalid(f"{where}.{key}", f"expected {expected!r}, got {value!r}")


# END LAB 5.1
# --8<-- [end:fields]


# --8<-- [start:strict-json]
def parse_strict_json(text: str) -> object:
    """Parse JSON text; raise ValueError for NaN or Infinity literals and duplicate keys."""
    # BEGIN LAB 5.2
    try:
        return json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:  # its message counts lines inside the text; drop that
        raise ValueError(f"{exc.msg} at character {exc.pos}") from exc
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc
    # END LAB 5.2


# BEGIN LAB 5.2
def _refuse_constant(literal: str) -> object:
    raise ValueError(f"{literal} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:  # json.loads would keep the last value and say nothing
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


# END LAB 5.2


def parse_tool_arguments(text: str) -> JsonObject:
    """Parse a tool call's complete arguments text into a frozen JSON object snapshot."""
    # BEGIN LAB 5.2
    if len(text) > MAX_ARGUMENTS_CHARS:
        raise ProviderRecordError(
            "INVALID_TOOL_ARGUMENTS", f"longer than {MAX_ARGUMENTS_CHARS} characters"
        )
    try:
        return snapshot_json_object(parse_strict_json(text))
    except ValueError as exc:  # JsonSnapshotError is a ValueError too
        raise ProviderRecordError("INVALID_TOOL_ARGUMENTS", str(exc)) from exc
    # END LAB 5.2


class _ToolCallDraft:
    """A tool call whose id and name are known and whose arguments are still streaming in."""

    __slots__ = ("_fragments", "_size", "id", "name")

    def __init__(self, *, id: str, name: str) -> None:
        self.id, self.name = id, name
        self._fragments: list[str] = []
        self._size = 0  # characters so far: an endless stream is refused before it is joined

    def append(self, fragment: str) -> None:
        """Add the next piece of the arguments text."""
        # BEGIN LAB 5.2
        self._size += len(fragment)
        if self._size > MAX_ARGUMENTS_CHARS:
            raise ProviderRecordError(
                "INVALID_TOOL_ARGUMENTS",
                f"tool call {self.id!r}: longer than {MAX_ARGUMENTS_CHARS} characters",
            )
        self._fragments.append(fragment)
        # END LAB 5.2

    def finish(self, *, if_empty: str = "") -> ToolCall:
        """Join the fragments and parse them strictly into a ToolCall."""
        # BEGIN LAB 5.2
        try:
            arguments = parse_tool_arguments("".join(self._fragments) or if_empty)
        except ProviderRecordError as exc:
            raise ProviderRecordError(exc.code, f"tool call {self.id!r}: {exc}") from exc
        return ToolCall(id=self.id, name=self.name, arguments=arguments)
        # END LAB 5.2


# --8<-- [end:strict-json]


class _Phase(enum.Enum):
    OPEN = "open"  # records are arriving
    ENDED = "ended"  # the end record came; close() should come next
    FINISHED = "finished"  # the terminal event was returned


class ProviderAdapter(ABC):
    """Read one provider's records in order; see the module docstring for the lifecycle."""

    COMPLETE: ClassVar[frozenset[str]]  # the stop reasons of a response that finished normally

    def __init__(self) -> None:
        self._phase = _Phase.OPEN
        self._line = 0  # the number of the record being read, from 1, as in the recording
        self._content: list[TextBlock | ToolCall] = []  # the finished blocks, in order
        self._text: list[str] = []  # the text block being streamed
        self._call_ids: set[str] = set()

    @property
    def finished(self) -> bool:
        """True once the terminal event has been returned."""
        return self._phase is _Phase.FINISHED

    def feed(self, record: object) -> tuple[AdapterEvent, ...]:
        """Accept the next decoded record; a refused one gives a StreamFailed naming its line.

        Raises RuntimeError if the terminal event was already returned.
        """
        return self._step(lambda: record)

    def feed_line(self, line: bytes) -> tuple[AdapterEvent, ...]:
        """Decode one recorded line as untrusted UTF-8 JSON, then accept it like ``feed``."""
        return self._step(lambda: _decode_line(line))

    def close(self) -> tuple[AdapterEvent, ...]:
        """Say the records have run out; return the terminal event, or () if already returned."""
        if self._phase is _Phase.ENDED:
            self._phase = _Phase.FINISHED
            return (StreamDone(message=AssistantMessage(content=tuple(self._content))),)
        # BEGIN LAB 5.3
        if self._phase is _Phase.FINISHED:
            return ()  # the terminal event was returned already: closing again changes nothing
        return (self._fail("MISSING_END", f"after line {self._line}: no end record"),)
        # END LAB 5.3

    # --8<-- [start:step]
    def _step(self, read: Callable[[], object]) -> tuple[AdapterEvent, ...]:
        if self._phase is _Phase.FINISHED:
            raise RuntimeError(f"{type_name(self)} is finished: no record may follow")
        self._line += 1
        try:
            return self._accept(read())
        except ProviderRecordError as exc:  # refused, never skipped: the response fails here
            return (self._fail(exc.code, f"line {self._line}: {exc}"),)

    # --8<-- [end:step]

    @abstractmethod
    def _accept(self, record: object) -> tuple[AdapterEvent, ...]:
        """Validate one record and return its events; raise ProviderRecordError to refuse it."""

    def _require_open(self) -> None:
        if self._phase is _Phase.OPEN:
            return
        # BEGIN LAB 5.3
        raise ProviderRecordError("RECORD_AFTER_END", "a record after the end record")
        # END LAB 5.3

    def _end(self, stop_reason: str) -> None:
        self._flush_text()
        self._phase = _Phase.ENDED
        if stop_reason in self.COMPLETE:
            return
        # BEGIN LAB 5.3
        # Cut short by a token limit or a content filter: the message is incomplete, not done.
        raise ProviderRecordError("RESPONSE_INCOMPLETE", f"stopped early: {stop_reason!r}")
        # END LAB 5.3

    def _fail(self, code: str, message: str) -> StreamFailed:
        self._phase = _Phase.FINISHED
        return StreamFailed(code=code, message=message)

    def _text_delta(self, text: str) -> tuple[TextDelta, ...]:
        self._text.append(text)
        return (TextDelta(text=text),) if text else ()

    def _flush_text(self) -> None:
        if text := "".join(self._text):
            self._content.append(TextBlock(text=text))
        self._text.clear()

    def _start_call(self, *, id: str, name: str) -> _ToolCallDraft:
        if not id or not name:
            raise _invalid("tool call", f"empty id or name: {id!r}, {name!r}")
        if id in self._call_ids:
            raise _invalid("tool call", f"id {id!r} is used twice")
        if len(self._call_ids) == MAX_TOOL_CALLS:
            raise _invalid("tool call", f"more than {MAX_TOOL_CALLS} in one response")
        self._call_ids.add(id)
        return _ToolCallDraft(id=id, name=name)

    def _finish_call(self, draft: _ToolCallDraft, *, if_empty: str = "") -> ToolCallEvent:
        call = draft.finish(if_empty=if_empty)
        self._content.append(call)
        return ToolCallEvent(call=call)


def _decode_line(line: bytes) -> object:
    if len(line) > MAX_LINE_BYTES:
        raise ProviderRecordError("INVALID_JSON_LINE", f"longer than {MAX_LINE_BYTES} bytes")
    try:
        return parse_strict_json(line.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError is a ValueError too
        raise ProviderRecordError("INVALID_JSON_LINE", f"not a JSON line: {exc}") from exc


class OpenAIChatAdapter(ProviderAdapter):
    """Adapt OpenAI chat-completions stream chunks: ``choices[0].delta``, ``finish_reason``."""

    COMPLETE = frozenset({"stop", "tool_calls"})

    def __init__(self) -> None:
        super().__init__()
        self._drafts: list[_ToolCallDraft] = []  # position = the call index fragments name

    def _accept(self, record: object) -> tuple[AdapterEvent, ...]:
        """Validate one chunk; a chunk without a choice (token usage) may follow the end."""
        # BEGIN LAB 5.1
        chunk = _object(record, "record")
        _expect(chunk, "object", "chat.completion.chunk", "record")
        if not (choices := _field(chunk, "choices", list, "record")):
            return ()
        self._require_open()
        if len(choices) != 1:
            raise _invalid("record.choices", f"expected one choice, got {len(choices)}")
        choice = _object(choices[0], "choices[0]")
        if _field(choice, "index", int, "choices[0]") != 0:
            raise _invalid("choices[0].index", "expected 0")
        delta = _object(choice.get("delta"), "choices[0].delta")
        events = self._text_delta(_optional(delta, "content", str, "delta") or "")
        for fragment in _optional(delta, "tool_calls", list, "delta") or ():
            self._add_fragment(_object(fragment, "delta.tool_calls[]"))
        if (reason := _optional(choice, "finish_reason", str, "choices[0]")) is None:
            return events
        self._end(reason)
        return events + tuple(self._finish_call(draft) for draft in self._drafts)
        # END LAB 5.1

    def _add_fragment(self, fragment: dict[str, object]) -> None:
        # BEGIN LAB 5.2
        index = _field(fragment, "index", int, "tool_calls[]")
        function = _object(fragment.get("function"), "tool_calls[].function")
        if index == len(self._drafts):  # a call's first fragment carries its id and name
            _expect(fragment, "type", "function", "tool_calls[]")
            name = _field(function, "name", str, "tool_calls[].function")
            self._drafts.append(
                self._start_call(id=_field(fragment, "id", str, "tool_calls[]"), name=name)
            )
        elif not 0 <= index < len(self._drafts):
            raise _invalid("tool_calls[].index", f"expected 0 to {len(self._drafts)}, got {index}")
        elif "id" in fragment or "name" in function:
            raise _invalid("tool_calls[]", f"call {index} was already started")
        self._drafts[index].append(_field(function, "arguments", str, "tool_calls[].function"))
        # END LAB 5.2


class AnthropicMessagesAdapter(ProviderAdapter):
    """Adapt Anthropic messages stream events: message_start, content blocks, message_stop."""

    COMPLETE = frozenset({"end_turn", "tool_use", "stop_sequence"})

    def __init__(self) -> None:
        super().__init__()
        self._started = False  # True once message_start came
        self._blocks = 0  # content blocks started; the next one must carry this index
        self._open: _ToolCallDraft | str | None = None  # the open block: a call, "text" or none
        self._stop_reason: str | None = None

    def _accept(self, record: object) -> tuple[AdapterEvent, ...]:
        """Validate one event and dispatch on its type."""
        # BEGIN LAB 5.1
        event = _object(record, "record")
        kind = _field(event, "type", str, "record")
        self._require_open()
        if kind == "error":
            error = _object(event.get("error"), "record.error")
            raise ProviderRecordError("PROVIDER_ERROR", _field(error, "message", str, "error"))
        if (kind == "message_start") is self._started:  # it comes first, and only once
            raise _invalid("record.type", f"{kind!r} is out of order")
        match kind:
            case "message_start":
                _expect(_object(event.get("message"), "message"), "role", "assistant", "message")
                self._started = True
            case "ping":
                pass
            case "content_block_start":
                return self._start_block(event)
            case "content_block_delta":
                return self._block_delta(event)
            case "content_block_stop":
                return self._stop_block(event)
            case "message_delta":
                delta = _object(event.get("delta"), "record.delta")
                self._stop_reason = _field(delta, "stop_reason", str, "record.delta")
            case "message_stop" if self._open is None and self._stop_reason is not None:
                self._end(self._stop_reason)
            case _:
                raise _invalid("record.type", f"unexpected {kind!r}")
        return ()
        # END LAB 5.1

    # BEGIN LAB 5.1
    def _check_block(self, event: dict[str, object], *, opening: bool) -> None:
        if (self._open is None) is not opening:
            raise _invalid("record", "a block is still open" if opening else "no block is open")
        expected = self._blocks if opening else self._blocks - 1
        if (index := _field(event, "index", int, "record")) != expected:
            raise _invalid("record.index", f"expected {expected}, got {index}")

    def _start_block(self, event: dict[str, object]) -> tuple[AdapterEvent, ...]:
        self._check_block(event, opening=True)
        self._blocks += 1
        block = _object(event.get("content_block"), "content_block")
        kind = _field(block, "type", str, "content_block")
        if kind == "text":
            self._open = "text"
            return self._text_delta(_field(block, "text", str, "content_block"))
        if kind != "tool_use" or _object(block.get("input"), "content_block.input"):
            raise _invalid("content_block", f"expected text, or tool_use with input {{}}: {kind!r}")
        name = _field(block, "name", str, "content_block")
        self._open = self._start_call(id=_field(block, "id", str, "content_block"), name=name)
        return ()

    def _block_delta(self, event: dict[str, object]) -> tuple[AdapterEvent, ...]:
        self._check_block(event, opening=False)
        delta = _object(event.get("delta"), "delta")
        if self._open == "text":
            _expect(delta, "type", "text_delta", "delta")
            return self._text_delta(_field(delta, "text", str, "delta"))
        assert type(self._open) is _ToolCallDraft
        _expect(delta, "type", "input_json_delta", "delta")
        self._open.append(_field(delta, "partial_json", str, "delta"))
        return ()

    def _stop_block(self, event: dict[str, object]) -> tuple[AdapterEvent, ...]:
        self._check_block(event, opening=False)
        block, self._open = self._open, None
        if type(block) is _ToolCallDraft:
            # A tool without parameters may stream no partial_json at all: its input is {}.
            return (self._finish_call(block, if_empty="{}"),)
        self._flush_text()
        return ()

    # END LAB 5.1


# --8<-- [start:drive]
def adapt_records(records: Iterable[object], adapter: ProviderAdapter) -> Iterator[AdapterEvent]:
    """Feed decoded records to ``adapter``; yield its events, exactly one terminal event last."""
    return _drive(map(adapter.feed, records), adapter)


def read_fixture(path: Path, adapter: ProviderAdapter) -> tuple[AdapterEvent, ...]:
    """Replay a recorded JSON-lines file through ``adapter``; a bad line ends it with an error."""
    with path.open("rb") as lines:
        return tuple(_drive(map(adapter.feed_line, lines), adapter))


def _drive(
    steps: Iterator[tuple[AdapterEvent, ...]], adapter: ProviderAdapter
) -> Iterator[AdapterEvent]:
    for events in steps:  # map() is lazy: no record is read after the terminal event
        yield from events
        if adapter.finished:
            return
    yield from adapter.close()


# --8<-- [end:drive]

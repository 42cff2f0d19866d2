"""Stand in for a language model with a finite script, so agent code runs offline and exactly.

Theory of operation
-------------------
A ``ScriptedModel`` holds a script: a list of entries, one per model turn. An entry is either a
``ScriptedResponse`` or a *factory*, a function that receives the request and returns one. Each
call of ``stream()`` does, in this order:

1. capture the request (messages and tool specs) as an immutable ``ModelRequest`` in
   ``model.requests``, so a test can later check exactly what the model was asked;
2. if the signal is already aborted, return a stream that ends with ``StreamAborted`` at once,
   without using up a script entry;
3. take the next entry, or raise ``ScriptExhaustedError`` when there is none;
4. call the factory (its exception propagates from ``stream()``; the entry is used up);
5. return an ``EventStream`` fed by a producer task that pushes the response's events one by one,
   yielding to the loop after each, then ends the stream with the response's result.

The producer checks the signal before every event and before the end. Once it is aborted, the
stream ends with ``StreamAborted`` and no further event is pushed. ``on_chunk`` is a hook called
after each push; a test aborts from it to stop the stream between two chunks deterministically,
without sleeping.
"""

from __future__ import annotations

__all__ = [
    "ChunkHook",
    "ModelRequest",
    "ResponseFactory",
    "ScriptEntry",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedResponse",
    "ToolSpec",
]

import asyncio
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeAlias, cast

from harness.abort import AbortController, AbortSignal, reason_text
from harness.event_stream import EventStream, StreamState
from harness.protocol import (
    AssistantMessage,
    JsonObject,
    Message,
    StreamAborted,
    StreamDone,
    StreamEvent,
    StreamFailed,
    StreamResult,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolResultMessage,
    UserMessage,
    safe_repr,
    snapshot_json_object,
    type_name,
)

_MESSAGE_TYPES = (UserMessage, AssistantMessage, ToolResultMessage)
_EVENT_TYPES = (TextDelta, ToolCallEvent)
_FINAL_TYPES = (StreamDone, StreamFailed)  # a script never says "aborted" itself


class ScriptExhaustedError(RuntimeError):
    """Raised when the model is asked for more turns than its script holds."""


# --8<-- [start:records]
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """What the model is told about one tool: its name, what it does, its argument schema."""

    name: str  # non-empty
    description: str
    parameters: JsonObject  # a JSON Schema object, as a snapshot: build with ToolSpec.create

    def __post_init__(self) -> None:
        if type(self.name) is not str or not self.name:
            raise TypeError(f"ToolSpec.name must be a non-empty str, got {safe_repr(self.name)}")
        if type(self.description) is not str:
            raise TypeError(
                f"ToolSpec.description must be a str, got {type_name(self.description)}"
            )
        if type(self.parameters) is not MappingProxyType:
            raise TypeError(
                "ToolSpec.parameters must be a JSON object snapshot, "
                f"got {type_name(self.parameters)}; use ToolSpec.create"
            )

    @classmethod
    def create(cls, *, name: str, description: str, parameters: object = None) -> ToolSpec:
        """Return a spec whose parameters are a snapshot of plain JSON (None: no parameters)."""
        schema = {"type": "object", "properties": {}} if parameters is None else parameters
        return cls(name=name, description=description, parameters=snapshot_json_object(schema))


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequest:
    """One request as the model received it, frozen: later changes by the caller cannot leak in."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()

    def __post_init__(self) -> None:
        _require_items("ModelRequest.messages", self.messages, _MESSAGE_TYPES)
        _require_items("ModelRequest.tools", self.tools, (ToolSpec,))


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedResponse:
    """One scripted model turn: the events to stream, in order, then how the stream ends."""

    events: tuple[StreamEvent, ...] = ()
    result: StreamDone | StreamFailed

    def __post_init__(self) -> None:
        _require_items("ScriptedResponse.events", self.events, _EVENT_TYPES)
        if not _is_one_of(self.result, _FINAL_TYPES):
            raise TypeError(
                "ScriptedResponse.result must be StreamDone or StreamFailed, "
                f"got {type_name(self.result)}"
            )

    @classmethod
    def reply(
        cls, message: AssistantMessage, *, events: Iterable[StreamEvent] | None = None
    ) -> ScriptedResponse:
        """Return a turn that ends with ``message``; by default one event per content block."""
        chosen = _events_of(message) if events is None else tuple(events)
        return cls(events=chosen, result=StreamDone(message=message))

    @classmethod
    def fail(
        cls, *, code: str, message: str, events: Iterable[StreamEvent] = ()
    ) -> ScriptedResponse:
        """Return a turn that streams ``events`` and then fails with ``code``."""
        return cls(events=tuple(events), result=StreamFailed(code=code, message=message))


# --8<-- [end:records]

ResponseFactory: TypeAlias = Callable[[ModelRequest], ScriptedResponse]
ScriptEntry: TypeAlias = ScriptedResponse | ResponseFactory
ChunkHook: TypeAlias = Callable[[int, StreamEvent], None]  # (index of the event, the event)


def _is_one_of(value: object, allowed: tuple[type, ...]) -> bool:
    """Return True iff the exact type of ``value`` is one of ``allowed``."""
    # `is`, not `in allowed`: that compares (or hashes) types, which runs a metaclass's code.
    return any(type(value) is kind for kind in allowed)


def _require_items(field: str, value: object, allowed: tuple[type, ...]) -> None:
    """Refuse anything but an exact tuple whose items are exactly of the allowed types."""
    if type(value) is not tuple:
        raise TypeError(f"{field} must be a tuple, got {type_name(value)}")
    for index, item in enumerate(value):
        if not _is_one_of(item, allowed):
            raise TypeError(f"{field}[{index}] has unexpected type {type_name(item)}")


def _events_of(message: AssistantMessage) -> tuple[StreamEvent, ...]:
    """Return the events a model would stream for ``message``: one per content block."""
    events: list[StreamEvent] = []
    for block in message.content:
        if type(block) is TextBlock:
            events.append(TextDelta(text=block.text))
        elif type(block) is ToolCall:
            events.append(ToolCallEvent(call=block))
    return tuple(events)


def _exact_sequence(field: str, value: object) -> tuple[object, ...]:
    """Copy an exact list or tuple; refuse subclasses, which could override iteration."""
    if type(value) is not list and type(value) is not tuple:
        raise TypeError(f"{field} must be a list or tuple, got {type_name(value)}")
    return tuple(cast("list[object] | tuple[object, ...]", value))


def _check_entry(index: int, entry: object) -> ScriptEntry:
    """Accept a ScriptedResponse or a callable factory; refuse anything else."""
    if type(entry) is ScriptedResponse or (callable(entry) and not inspect.isclass(entry)):
        return cast(ScriptEntry, entry)
    raise TypeError(
        f"script entry {index} must be a ScriptedResponse or a factory, got {type_name(entry)}"
    )


class ScriptedModel:
    """Answer each request with the next entry of a finite script, streamed like a real model."""

    def __init__(self, script: Iterable[ScriptEntry], *, on_chunk: ChunkHook | None = None) -> None:
        """Check every script entry now, so a bad one fails here and not in the middle of a run."""
        # BEGIN LAB 4.2
        self._script: tuple[ScriptEntry, ...] = tuple(
            _check_entry(i, e) for i, e in enumerate(script)
        )
        self._position = 0  # index of the next entry; == len(script) iff exhausted
        self._requests: list[ModelRequest] = []
        self._on_chunk = on_chunk
        # Strong references to running producers: asyncio keeps only weak ones.
        self._producers: set[asyncio.Task[Any]] = set()
        # END LAB 4.2

    @property
    def requests(self) -> tuple[ModelRequest, ...]:
        """Return every request captured so far, in order."""
        return tuple(self._requests)

    @property
    def remaining(self) -> int:
        """Return how many script entries are still unused."""
        return len(self._script) - self._position

    @property
    def active_streams(self) -> int:
        """Return how many producers are still feeding a stream."""
        return len(self._producers)

    # --8<-- [start:stream]
    def stream(
        self,
        messages: object,
        *,
        tools: object = (),
        signal: AbortSignal | None = None,
    ) -> EventStream[StreamEvent, StreamResult]:
        """Capture the request and return a stream of the next scripted response.

        Raises ScriptExhaustedError when the script has no entry left, TypeError for a request
        or a factory result of the wrong shape, and whatever the factory raises. Must be called
        with a running event loop.
        """
        # BEGIN LAB 4.2
        # ModelRequest checks every item's exact type; the casts only tell mypy so.
        request = ModelRequest(
            messages=cast("tuple[Message, ...]", _exact_sequence("messages", messages)),
            tools=cast("tuple[ToolSpec, ...]", _exact_sequence("tools", tools)),
        )
        self._requests.append(request)
        signal = AbortController().signal if signal is None else signal
        stream: EventStream[StreamEvent, StreamResult] = EventStream()
        if signal.aborted:
            stream.end(StreamAborted(reason=reason_text(signal.reason)))
            return stream
        response = self._next_response(request)
        producer = asyncio.get_running_loop().create_task(self._produce(response, stream, signal))
        self._producers.add(producer)
        # A task cancelled before its first step never enters _produce: this callback then
        # ends the stream, so that its consumer is not left waiting forever.
        producer.add_done_callback(lambda task: self._forget_producer(task, stream))
        return stream
        # END LAB 4.2

    def _next_response(self, request: ModelRequest) -> ScriptedResponse:
        """Use up the next script entry and return its response for ``request``."""
        # BEGIN LAB 4.2
        if self._position == len(self._script):
            raise ScriptExhaustedError(
                f"request {len(self._requests)} is past the end of the script"
                f" (length {len(self._script)})"
            )
        entry = self._script[self._position]
        self._position += 1
        if type(entry) is ScriptedResponse:
            return entry
        factory = cast(ResponseFactory, entry)  # _check_entry let only callables through
        response: object = factory(request)
        if inspect.iscoroutine(response):
            response.close()  # never awaited: close it so no "never awaited" warning appears
        if type(response) is not ScriptedResponse:
            raise TypeError(
                f"script entry {self._position - 1} returned {type_name(response)},"
                " expected ScriptedResponse"
            )
        return response
        # END LAB 4.2

    # --8<-- [end:stream]

    # --8<-- [start:produce]
    async def _produce(
        self,
        response: ScriptedResponse,
        stream: EventStream[StreamEvent, StreamResult],
        signal: AbortSignal,
    ) -> None:
        """Push the response's events, checking the signal before each, then end the stream."""
        # BEGIN LAB 4.2
        try:
            for index, event in enumerate(response.events):
                if signal.aborted:
                    break
                stream.push(event)
                if self._on_chunk is not None:
                    self._on_chunk(index, event)
                await asyncio.sleep(0)  # let the consumer run between chunks, as with a network
            if signal.aborted:
                stream.end(StreamAborted(reason=reason_text(signal.reason)))
            else:
                stream.end(response.result)
        except Exception as exc:  # only on_chunk can raise here: a bug in the test's hook
            stream.end(
                StreamFailed(code="CHUNK_HOOK_FAILED", message=f"on_chunk raised {type_name(exc)}")
            )
        finally:
            # Ended or cancelled (CancelledError goes on after this), the producer is done now,
            # before the consumer runs again: active_streams is already 0 when it looks.
            self._forget_producer(asyncio.current_task(), stream)
        # END LAB 4.2

    def _forget_producer(
        self, producer: asyncio.Task[Any] | None, stream: EventStream[StreamEvent, StreamResult]
    ) -> None:
        """Drop a finished producer and end its stream if it is still open; idempotent."""
        # BEGIN LAB 4.2
        self._producers.discard(producer)
        if stream.state is StreamState.OPEN:
            stream.end(StreamAborted(reason="producer cancelled"))
        # END LAB 4.2

    # --8<-- [end:produce]

    def __repr__(self) -> str:
        return (
            f"<ScriptedModel remaining={self.remaining} requests={len(self._requests)}"
            f" active_streams={len(self._producers)}>"
        )

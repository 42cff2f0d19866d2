"""Turn a model's proposed tool call into a validated, cancellable, linked tool result.

Theory of operation
-------------------
A model never runs anything: it *proposes* a call, a name and some JSON arguments. This module
owns the boundary where our code decides what happens to that proposal. It re-exports the
definitions and the registry (``harness.tool_registry``) and the output limits
(``harness.tool_output``), so a caller of the executor imports from here alone.

1. ``define_tool`` snapshots a definition (name, description, validate, execute) into a frozen
   ``ToolDefinition``; ``ToolRegistry`` owns the definitions one run may use. A definition's
   ``validate`` is usually built with ``harness.validators``.
2. ``execute_tool_call`` checks the signal, snapshots the call, looks the tool up, asks the
   tool's synchronous ``validate`` for a decision, awaits ``execute`` while an abort can cancel
   it, serializes the output within fixed budgets (``harness.tool_output``), and publishes one
   frozen ``ToolResultMessage`` linked to the call.

Everything that can go wrong *because of the call or the tool* becomes an error result that the
model reads on its next turn (five codes). Cancellation is different: the call raises the abort
reason and publishes nothing. Programmer errors raise ``ToolContractError`` (four codes), and a
tool that must stop the whole run raises a genuine ``NonRecoverableToolError``.

Nothing here trusts an object it did not make (``harness.untrusted`` says how). Types are
compared with ``type(x) is ...`` (a faked ``__class__`` fools ``isinstance``), and no
``__str__``, ``__repr__``, property or collection method of a foreign object is called. The
exceptions are the point of the contract: a tool's own ``validate`` and ``execute`` are called.
"""

from __future__ import annotations

__all__ = [
    "CONTRACT_CODES",
    "DUPLICATE_TOOL_NAME",
    "INVALID_TOOL_BATCH",
    "INVALID_TOOL_CALL",
    "INVALID_TOOL_DEFINITION",
    "MAX_CONTENT_CODE_POINTS",
    "MAX_OUTPUT_COLLECTION_VISITS",
    "MAX_OUTPUT_DEPTH",
    "MAX_OUTPUT_INT_BITS",
    "MAX_OUTPUT_NODES",
    "MAX_OUTPUT_STRING_CODE_POINTS",
    "RESULT_CODES",
    "TOOL_ARGUMENTS_INVALID",
    "TOOL_EXECUTION_FAILED",
    "TOOL_NOT_FOUND",
    "TOOL_OUTPUT_SERIALIZATION_FAILED",
    "TOOL_VALIDATION_FAILED",
    "TRUNCATION_MARKER",
    "NonRecoverableToolError",
    "ToolContext",
    "ToolContractError",
    "ToolDefinition",
    "ToolRegistry",
    "ToolSpec",
    "define_tool",
    "execute_tool_call",
]

import asyncio
import bisect
import json
import sys
import weakref
from collections.abc import Callable
from typing import Final, cast

from harness.abort import AbortSignal
from harness.awaitables import dispose_of_awaitable
from harness.cancel_on_abort import CancelOnAbort
from harness.protocol import (
    JsonObject,
    JsonSnapshotError,
    ToolCall,
    ToolResultMessage,
    copy_json_object,
    thaw_json,
)

# The limits the contract names are part of this module's API too; they live with the serializer.
from harness.tool_output import (
    MAX_CONTENT_CODE_POINTS,
    MAX_OUTPUT_COLLECTION_VISITS,
    MAX_OUTPUT_DEPTH,
    MAX_OUTPUT_INT_BITS,
    MAX_OUTPUT_NODES,
    MAX_OUTPUT_STRING_CODE_POINTS,
    TRUNCATION_MARKER,
    ToolOutputError,
    serialize_output,
)
from harness.tool_registry import (
    CONTRACT_CODES,
    DUPLICATE_TOOL_NAME,
    INVALID_TOOL_BATCH,
    INVALID_TOOL_CALL,
    INVALID_TOOL_DEFINITION,
    ToolContext,
    ToolContractError,
    ToolDefinition,
    ToolRegistry,
    ToolSpec,
    define_tool,
)
from harness.untrusted import class_attribute, describe_exception, key_mismatch, type_name

# --8<-- [start:codes]
# What the model reads back: every recoverable outcome of a call has one of these codes.
TOOL_NOT_FOUND: Final = "TOOL_NOT_FOUND"
TOOL_ARGUMENTS_INVALID: Final = "TOOL_ARGUMENTS_INVALID"
TOOL_VALIDATION_FAILED: Final = "TOOL_VALIDATION_FAILED"
TOOL_EXECUTION_FAILED: Final = "TOOL_EXECUTION_FAILED"
TOOL_OUTPUT_SERIALIZATION_FAILED: Final = "TOOL_OUTPUT_SERIALIZATION_FAILED"
RESULT_CODES: Final = frozenset(
    {
        TOOL_NOT_FOUND,
        TOOL_ARGUMENTS_INVALID,
        TOOL_VALIDATION_FAILED,
        TOOL_EXECUTION_FAILED,
        TOOL_OUTPUT_SERIALIZATION_FAILED,
    }
)
# --8<-- [end:codes]


# ---------------------------------------------------------------------------------------------
# A non-recoverable error stops the run.
# ---------------------------------------------------------------------------------------------


# --8<-- [start:genuine]
# Genuine NonRecoverableToolErrors, by id, wherever their class came from. The registry lives on
# the sys module, under a key that is not an identifier, so that importlib.reload(harness.tool),
# which makes a *new* class, still recognises errors built by the old one, and subclasses too.
# It is not a security boundary: any code in the process can call the real constructor, or
# find this registry. It only tells an error that was constructed from one that was forged.
_GENUINE_ERRORS_KEY: Final = "harness.tool:genuine-non-recoverable-errors"


def _genuine_errors() -> weakref.WeakValueDictionary[int, BaseException]:
    """Return the process-wide registry of genuine non-recoverable errors, creating it once."""
    registry = vars(sys).setdefault(_GENUINE_ERRORS_KEY, weakref.WeakValueDictionary())
    return cast("weakref.WeakValueDictionary[int, BaseException]", registry)


class NonRecoverableToolError(Exception):
    """Raised by a tool to stop the whole agent run instead of reporting an error result.

    Only an instance made by this constructor (subclasses must call ``super().__init__``)
    escapes execute_tool_call; a look-alike is an ordinary TOOL_EXECUTION_FAILED.
    """

    def __init__(self, message: str) -> None:
        # Borrowed as NonRecoverableToolError.__init__(other, ...), this must not register the
        # other exception. super() is no guard: it falls back to other.__class__, which a
        # property can fake. The bare name __class__ is the class this method was written in
        # (the cell super() uses), even after a reload has rebound the module's global name.
        if not issubclass(type(self), __class__):  # type: ignore[name-defined]  # mypy: no cell
            raise TypeError(
                f"NonRecoverableToolError.__init__ needs a NonRecoverableToolError, "
                f"got {type_name(self)}"
            )
        super().__init__(message)
        self.message = message
        _genuine_errors()[id(self)] = self


def _is_genuine_non_recoverable(exc: BaseException) -> bool:
    """Return True iff ``exc`` was built by NonRecoverableToolError's constructor."""
    # By id, then identity: no __hash__ or __eq__ of the candidate runs, and an id reused after
    # a genuine error died cannot match, because its entry died with it.
    return _genuine_errors().get(id(exc)) is exc


# --8<-- [end:genuine]


# ---------------------------------------------------------------------------------------------
# Lab 6.4: executing a call. Seven steps in order; recoverable outcomes become error results,
# cancellation raises, and the tool runs in the caller's task so that an abort can stop it.
# ---------------------------------------------------------------------------------------------


class _RecoverableToolError(Exception):
    """Raised inside execute_tool_call for an outcome that becomes an error result."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message


_CALL_FIELDS: Final = dict.fromkeys(("id", "name", "arguments")).keys()  # an ordered set


# BEGIN LAB 6.4
def _snapshot_call(call: object) -> tuple[str, str, dict[str, object]]:
    """Return the id, the name and a private copy of the arguments of a ToolCall or a dict.

    The copy is plain (dicts and lists) and belongs to this call alone: whatever the validator
    does to it, the caller's call stays as it was, and the value it accepts is made of
    containers the serializer can write.
    """
    arguments: object  # a frozen snapshot or plain data, checked below either way
    if type(call) is ToolCall:
        call_id, name, arguments = call.id, call.name, call.arguments  # thawed below
    elif type(call) is dict:
        mismatch = key_mismatch(call, _CALL_FIELDS)
        if mismatch is not None:
            raise ToolContractError(INVALID_TOOL_CALL, f"call {mismatch}")
        call_id, name, arguments = call["id"], call["name"], call["arguments"]  # each read once
    else:
        raise ToolContractError(
            INVALID_TOOL_CALL, f"call must be a ToolCall or a dict, got {type_name(call)}"
        )
    # A ToolCall checked these when it was made, but a frozen record can still be forged with
    # object.__setattr__; the two checks cost less than trusting it.
    if type(call_id) is not str or not call_id:
        raise ToolContractError(INVALID_TOOL_CALL, "call id must be a non-empty str")
    if type(name) is not str or not name:
        raise ToolContractError(INVALID_TOOL_CALL, "call name must be a non-empty str")
    if type(call) is ToolCall:  # thawed only now: both kinds of call refuse in the same order
        arguments = _thawed_arguments(arguments)
    try:
        return call_id, name, copy_json_object(arguments)  # checked exactly as a snapshot is
    except JsonSnapshotError as exc:
        raise ToolContractError(
            INVALID_TOOL_CALL, f"call arguments must be a JSON object: {exc}"
        ) from exc


def _thawed_arguments(arguments: object) -> object:
    """Return a ToolCall's frozen arguments as plain data, or refuse them as INVALID_TOOL_CALL."""
    # ToolCall's constructor checks only that they are a read-only mapping, and anyone can wrap
    # anything in one; thaw_json refuses what is not a snapshot without running any of it.
    try:
        return thaw_json(cast("JsonObject", arguments))
    except TypeError as exc:
        raise ToolContractError(
            INVALID_TOOL_CALL,
            f"call arguments must be a JSON object snapshot (see ToolCall.create): {exc}",
        ) from exc


def _validate(definition: ToolDefinition, arguments: dict[str, object]) -> object:
    """Run the synchronous validator and return the accepted value, or raise a failure."""
    try:
        decision = definition.validate(arguments)
    except Exception as exc:
        raise _RecoverableToolError(
            TOOL_VALIDATION_FAILED, f"validate raised {describe_exception(exc)}"
        ) from None
    if type(decision) is dict and len(decision) == 2:
        first, second = decision  # iterating an exact dict runs no code
        # Exact str keys before any lookup: a foreign key's __eq__ could run during one.
        if type(first) is str and type(second) is str:
            ok = decision.get("ok")
            if ok is True and "value" in decision:
                return decision["value"]
            error = decision.get("error")
            if ok is False and type(error) is str and error:
                raise _RecoverableToolError(TOOL_ARGUMENTS_INVALID, error)
    # Every coroutine, future and task has an __await__ of its class; so has a custom awaitable.
    if class_attribute(type(decision), "__await__") is not None:
        dispose_of_awaitable(decision)  # close, cancel or observe it: nothing is left behind
        raise _RecoverableToolError(
            TOOL_VALIDATION_FAILED, "validate returned an awaitable; it must decide synchronously"
        )
    raise _RecoverableToolError(TOOL_VALIDATION_FAILED, "validate returned an invalid decision")


# --8<-- [start:run-the-tool]
async def _execute(definition: ToolDefinition, value: object, context: ToolContext) -> object:
    """Run the tool in this task, where an abort while it waits cancels it; return its output."""
    signal = context.signal
    failure: Exception | None = None
    output: object = None
    try:
        with CancelOnAbort(signal):  # from here on, an abort cancels this task's await
            output = await definition.execute(value, context)
    except Exception as exc:  # KeyboardInterrupt, SystemExit, CancelledError pass through
        failure = exc
    signal.raise_if_aborted()  # the abort wins, whatever the tool did after it
    if failure is not None:
        if _is_genuine_non_recoverable(failure):
            raise failure  # the same object, to stop the run
        raise _RecoverableToolError(TOOL_EXECUTION_FAILED, describe_exception(failure))
    return output


# --8<-- [end:run-the-tool]


def _serialize(output: object) -> str:
    """Serialize the output, turning an unsupported value into a recoverable failure."""
    # Only serialize_output's own error is caught here. An abort reason raised by the checks
    # around it may be a ToolOutputError too, and must pass through untouched.
    try:
        return serialize_output(output)
    except ToolOutputError as exc:
        raise _RecoverableToolError(TOOL_OUTPUT_SERIALIZATION_FAILED, str(exc)) from None


_MESSAGE_CUT: Final = " [message truncated]"
# Made once: json.dumps with keyword arguments builds an encoder on every call.
_encode_string: Final = json.JSONEncoder(ensure_ascii=False).encode


def _error_content(code: str, message: str) -> str:
    """Return the deterministic, compact JSON an error result carries; it always parses."""
    # The serializer of Lab 6.3 writes it: sorted keys ("code" before "message"), compact, capped.
    content = serialize_output({"error": {"code": code, "message": message}})
    if not content.endswith(TRUNCATION_MARKER):  # compact JSON never holds a raw newline
        return content
    # The cap cut it inside the message, and cut JSON does not parse: shorten the message
    # instead, so that the whole object fits.
    envelope = len(serialize_output({"error": {"code": code, "message": _MESSAGE_CUT}}))
    kept = _prefix_written_within(message, MAX_CONTENT_CODE_POINTS - envelope)
    return serialize_output({"error": {"code": code, "message": kept + _MESSAGE_CUT}})


def _prefix_written_within(text: str, room: int) -> str:
    """Return the longest prefix of ``text`` that JSON writes in ``room`` code points or fewer."""
    # Escapes make the written text longer (a quote takes two code points, a control character
    # six), but never shorter, so the written length grows with the prefix: bisect it. Every
    # character takes at least one code point, so no fitting prefix is longer than room.
    lengths = range(min(len(text), room) + 1)
    fitting = bisect.bisect_right(lengths, room, key=lambda n: _written_length(text[:n]))
    return text[: fitting - 1]


def _written_length(text: str) -> int:
    """Return how many code points JSON takes to write ``text``, without its quotes."""
    return len(_encode_string(text)) - 2


# END LAB 6.4


# --8<-- [start:execute]
async def execute_tool_call(
    registry: ToolRegistry,
    call: object,
    signal: AbortSignal,
    *,
    on_progress: Callable[[object], None] | None = None,
) -> ToolResultMessage:
    """Execute one proposed call and return its result, linked to the call.

    Returns an error result (``is_error=True``) for every recoverable outcome. Raises the abort
    reason if ``signal`` aborts before the result is published (and the tool is stopped first);
    raises CancelledError if the caller's task is cancelled; re-raises a genuine
    NonRecoverableToolError; raises ToolContractError(INVALID_TOOL_CALL) for a malformed call,
    TypeError for a registry or a signal of the wrong type, and RuntimeError outside a running
    asyncio event loop. ``on_progress`` (checkpoint 07) receives what the tool passes to
    ``context.report_progress``.
    """
    # BEGIN LAB 6.4
    if type(registry) is not ToolRegistry:
        raise TypeError(f"registry must be a ToolRegistry, got {type_name(registry)}")
    if type(signal) is not AbortSignal:
        raise TypeError(f"signal must be an AbortSignal, got {type_name(signal)}")
    asyncio.get_running_loop()  # outside asyncio, raise RuntimeError before any tool code runs
    signal.raise_if_aborted()  # 1. nothing starts after an abort
    call_id, name, arguments = _snapshot_call(call)  # 2. malformed: ToolContractError
    try:
        definition = registry.get(name)  # 3. look the tool up
        if definition is None:
            raise _RecoverableToolError(TOOL_NOT_FOUND, f"tool {name!r} is not registered")
        value = _validate(definition, arguments)  # 4. decide, before any effect
        signal.raise_if_aborted()
        context = ToolContext(signal=signal, tool_call_id=call_id, on_progress=on_progress)
        output = await _execute(definition, value, context)  # 5. run, racing the signal
        content, is_error = _serialize(output), False  # 6. bounded, deterministic text
    except _RecoverableToolError as failure:
        content, is_error = _error_content(failure.code, failure.message), True
    signal.raise_if_aborted()  # last chance: an aborted call publishes nothing
    return ToolResultMessage(  # 7. publish, linked to the call
        id=f"tool-result-{call_id}",
        tool_call_id=call_id,
        tool_name=name,
        content=content,
        is_error=is_error,
    )
    # END LAB 6.4


# --8<-- [end:execute]

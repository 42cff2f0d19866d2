"""Snapshot tool definitions once, and keep the tools that one agent run may use.

Import these names from ``harness.tool``, which re-exports all of them but the type aliases.
"""

from __future__ import annotations

__all__ = [
    "CONTRACT_CODES",
    "DUPLICATE_TOOL_NAME",
    "INVALID_TOOL_BATCH",
    "INVALID_TOOL_CALL",
    "INVALID_TOOL_DEFINITION",
    "Execute",
    "ToolContext",
    "ToolContractError",
    "ToolDefinition",
    "ToolRegistry",
    "ToolSpec",
    "Validate",
    "define_tool",
]

import types
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, cast

from harness.abort import AbortSignal
from harness.protocol import JsonObject, JsonSnapshotError, snapshot_json_object, thaw_json

# What a model request carries about a tool: checkpoint 04's record, so definitions() can go
# straight into a ModelRequest.
from harness.scripted_model import ToolSpec
from harness.untrusted import (
    class_attribute,
    describe_exception,
    key_mismatch,
    non_str_key,
    own_attributes,
    type_name,
)

# --8<-- [start:contract-codes]
# What the programmer reads: misuse of the contract raises ToolContractError with one of these.
INVALID_TOOL_DEFINITION: Final = "INVALID_TOOL_DEFINITION"
INVALID_TOOL_BATCH: Final = "INVALID_TOOL_BATCH"
DUPLICATE_TOOL_NAME: Final = "DUPLICATE_TOOL_NAME"
INVALID_TOOL_CALL: Final = "INVALID_TOOL_CALL"
CONTRACT_CODES: Final = frozenset(
    {INVALID_TOOL_DEFINITION, INVALID_TOOL_BATCH, DUPLICATE_TOOL_NAME, INVALID_TOOL_CALL}
)
# --8<-- [end:contract-codes]


# ---------------------------------------------------------------------------------------------
# A contract error is a bug in the caller: a malformed definition, batch or call.
# ---------------------------------------------------------------------------------------------


class ToolContractError(Exception):
    """Raised when the caller breaks the tool contract; ``code`` is one of CONTRACT_CODES.

    Only the harness raises it (this module, and harness.tool for a malformed call). A tool that
    raises one is just a failing tool: execute_tool_call turns it into a TOOL_EXECUTION_FAILED
    result like any other exception.
    """

    def __init__(self, code: str, message: str) -> None:
        if code not in CONTRACT_CODES:
            raise ValueError(f"unknown contract code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


# What a tool's execute receives. The executor (Lab 6.4) builds one per call; it is defined here
# because a definition's Execute type names it.
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """What a tool's ``execute`` receives besides its validated value."""

    signal: AbortSignal  # the run's signal: check it, or pass it on, to stop early
    tool_call_id: str  # the id of the call being executed
    # Checkpoint 07: where report_progress sends its data; None (06 alone): nobody listens.
    on_progress: Callable[[object], None] | None = None

    def __post_init__(self) -> None:
        if type(self.signal) is not AbortSignal:
            raise TypeError(
                f"ToolContext.signal must be an AbortSignal, got {type_name(self.signal)}"
            )
        if type(self.tool_call_id) is not str or not self.tool_call_id:
            raise TypeError("ToolContext.tool_call_id must be a non-empty str")
        if self.on_progress is not None and not callable(self.on_progress):
            raise TypeError(
                "ToolContext.on_progress must be callable or None, "
                f"got {type_name(self.on_progress)}"
            )

    def report_progress(self, data: object) -> None:
        """Tell the agent loop how the call is going; do nothing if nobody listens (06 alone).

        Never raises into the tool: the loop ignores data it cannot write, or a late report.
        """
        if self.on_progress is not None:
            self.on_progress(data)


Validate: TypeAlias = Callable[[object], object]
Execute: TypeAlias = Callable[[Any, ToolContext], Awaitable[object]]


# ---------------------------------------------------------------------------------------------
# Lab 6.2: definitions and the registry. A definition is snapshotted once; a registry owns the
# frozen definitions of one run and tells the model about them through an explicit allowlist.
# ---------------------------------------------------------------------------------------------


# --8<-- [start:definition]
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDefinition:
    """One tool, frozen: what the model is told about it, and the two functions behind it."""

    name: str  # non-empty, unique within a registry
    description: str  # non-empty; shown to the model
    validate: Validate  # synchronous, side-effect free: arguments -> Decision
    execute: Execute  # async: (validated value, ToolContext) -> output
    parameters: (
        JsonObject  # JSON Schema read once from validate, frozen; {"type": "object"} if none
    )

    def __post_init__(self) -> None:
        for field_name in ("name", "description"):
            text = getattr(self, field_name)
            if type(text) is not str or not text:
                raise TypeError(f"ToolDefinition.{field_name} must be a non-empty str")
        if not callable(self.validate) or not callable(self.execute):
            raise TypeError("ToolDefinition.validate and .execute must be callable")
        if type(self.parameters) is not types.MappingProxyType:
            raise TypeError("ToolDefinition.parameters must be a JSON object snapshot")


# --8<-- [end:definition]

# The keys of a dict compare like a set, in C, and keep their order for error messages.
_DEFINITION_FIELDS: Final = dict.fromkeys(("name", "description", "validate", "execute")).keys()


# BEGIN LAB 6.2
def _definition_fields(definition: object) -> dict[object, object]:
    """Return the definition's fields as a plain dict: the dict itself, or its own attributes."""
    if type(definition) is dict:
        return cast("dict[object, object]", definition)
    own = own_attributes(definition)
    if own is None:
        raise ToolContractError(
            INVALID_TOOL_DEFINITION,
            f"definition must be a dict or an object with its own attributes, "
            f"got {type_name(definition)}",
        )
    wrong_key = non_str_key(own)  # before `field_name not in own` compares any key
    if wrong_key is not None:
        raise ToolContractError(INVALID_TOOL_DEFINITION, f"definition {wrong_key}")
    for field_name in _DEFINITION_FIELDS:
        if field_name not in own and class_attribute(type(definition), field_name) is not None:
            # A method, class attribute or property: it belongs to the class, so any object of
            # that class would share it. Refused, and a property's getter is never called.
            raise ToolContractError(
                INVALID_TOOL_DEFINITION,
                f"{field_name} is inherited from the class; define it on the object itself",
            )
    return cast("dict[object, object]", own)


def _required_text(field_name: str, value: object) -> str:
    """Return ``value`` if it is a non-empty exact str, else refuse the definition."""
    if type(value) is not str:
        raise ToolContractError(
            INVALID_TOOL_DEFINITION, f"{field_name} must be a str, got {type_name(value)}"
        )
    if not value:
        raise ToolContractError(INVALID_TOOL_DEFINITION, f"{field_name} must not be empty")
    return value


def _required_callable(field_name: str, value: object) -> object:
    """Return ``value`` if it is callable, else refuse the definition."""
    if not callable(value):  # looks at the type's call slot; runs nothing
        raise ToolContractError(
            INVALID_TOOL_DEFINITION, f"{field_name} must be callable, got {type_name(value)}"
        )
    return value


def _require_object_schema(where: str, schema: JsonObject) -> None:
    """Refuse a JSON Schema that does not describe an object: a tool's arguments are one."""
    if schema.get("type") != "object":  # a snapshot: plain dict, str keys, JSON values
        raise ToolContractError(INVALID_TOOL_DEFINITION, f'{where} must have "type": "object"')


def _checked_again(definition: ToolDefinition) -> ToolDefinition:
    """Return a ToolDefinition whose fields pass the checks again, or refuse it."""
    # Frozen does not mean unforgeable: object.__setattr__ changes a field after __post_init__
    # checked it, and a registry hashes and compares names. The executor re-checks a ToolCall
    # for the same reason.
    _required_text("name", definition.name)
    _required_text("description", definition.description)
    _required_callable("validate", definition.validate)
    _required_callable("execute", definition.execute)
    parameters: object = definition.parameters
    if type(parameters) is not types.MappingProxyType:
        raise ToolContractError(
            INVALID_TOOL_DEFINITION,
            f"parameters must be a JSON object snapshot, got {type_name(parameters)}",
        )
    schema = cast("JsonObject", parameters)
    try:
        thaw_json(schema)  # refuses a non-snapshot, running none of it
    except TypeError as exc:
        raise ToolContractError(
            INVALID_TOOL_DEFINITION, f"parameters must be a JSON object snapshot: {exc}"
        ) from exc
    _require_object_schema("parameters", schema)
    return definition


def _parameters_of(validate: object) -> JsonObject:
    """Return the frozen JSON Schema a validator carries, or {"type": "object"}."""
    # Only a plain function is asked, and only through its own __dict__, with dict's own
    # methods (so even a dict subclass planted there runs nothing) and after its keys are
    # checked (so a str subclass among them compares nothing). Anything else carries no schema.
    attributes = vars(validate) if type(validate) is types.FunctionType else {}
    wrong_key = non_str_key(attributes)
    if wrong_key is not None:
        raise ToolContractError(INVALID_TOOL_DEFINITION, f"validate's attributes: {wrong_key}")
    schema = dict.get(attributes, "json_schema")
    if schema is None:
        return snapshot_json_object({"type": "object"})
    try:
        parameters = snapshot_json_object(schema)
    except JsonSnapshotError as exc:
        raise ToolContractError(
            INVALID_TOOL_DEFINITION, f"validate.json_schema is not a JSON object: {exc}"
        ) from exc
    _require_object_schema("validate.json_schema", parameters)
    return parameters


# END LAB 6.2


# --8<-- [start:define-tool]
def define_tool(definition: object) -> ToolDefinition:
    """Snapshot one definition into a frozen ToolDefinition; a ToolDefinition is checked again.

    ``definition`` is a plain dict with exactly the keys name, description, validate and
    execute, or an object whose own attributes are exactly those. Each field is read once.
    Raises ToolContractError(INVALID_TOOL_DEFINITION) naming the field at fault.
    """
    # BEGIN LAB 6.2
    if type(definition) is ToolDefinition:
        return _checked_again(definition)
    fields = _definition_fields(definition)
    mismatch = key_mismatch(fields, _DEFINITION_FIELDS)
    if mismatch is not None:
        raise ToolContractError(INVALID_TOOL_DEFINITION, f"definition {mismatch}")
    name = _required_text("name", fields["name"])
    description = _required_text("description", fields["description"])
    validate = _required_callable("validate", fields["validate"])
    execute = _required_callable("execute", fields["execute"])
    # The locals hold the very objects read above: renaming the caller's dict or swapping its
    # functions later changes nothing here.
    return ToolDefinition(
        name=name,
        description=description,
        validate=cast("Validate", validate),
        execute=cast("Execute", execute),
        parameters=_parameters_of(validate),
    )
    # END LAB 6.2


# --8<-- [end:define-tool]


# BEGIN LAB 6.2
def _batch_entries(definitions: object) -> list[object]:
    """Return the entries of a batch as a list, or raise INVALID_TOOL_BATCH."""
    # A dict or a str is iterable, but iterating one yields keys or characters: never a batch.
    kind = type(definitions)
    if kind is dict or kind is str or kind is bytes or kind is ToolDefinition:
        raise ToolContractError(
            INVALID_TOOL_BATCH,
            f"a batch must be an iterable of definitions, got {type_name(definitions)}",
        )
    try:
        return list(cast("Iterable[object]", definitions))
    except Exception as exc:  # the caller's iterator failed: the whole batch is refused
        raise ToolContractError(
            INVALID_TOOL_BATCH, f"the batch could not be read: {describe_exception(exc)}"
        ) from exc


# END LAB 6.2


# --8<-- [start:registry]
class ToolRegistry:
    """Own the frozen tool definitions one agent run may use; there is no global registry."""

    __slots__ = ("_definitions",)

    def __init__(self, definitions: Iterable[object] = ()) -> None:
        """Create a registry holding ``definitions`` (see register_many)."""
        self._definitions: dict[str, ToolDefinition] = {}  # name -> definition, in order
        self.register_many(definitions)

    def register(self, definition: object) -> None:
        """Register one definition; raise ToolContractError and change nothing on failure."""
        self.register_many((definition,))

    def register_many(self, definitions: Iterable[object]) -> None:
        """Register a batch atomically: all of it, or (raising ToolContractError) none of it.

        Phase one snapshots every definition of the batch; phase two checks every name against
        the batch and the registry; only then is the registry changed.
        """
        # BEGIN LAB 6.2
        batch = [define_tool(entry) for entry in _batch_entries(definitions)]
        taken = set(self._definitions)
        for definition in batch:
            if definition.name in taken:
                raise ToolContractError(
                    DUPLICATE_TOOL_NAME, f"duplicate tool name {definition.name!r}"
                )
            taken.add(definition.name)
        for definition in batch:
            self._definitions[definition.name] = definition
        # END LAB 6.2

    def get(self, name: str) -> ToolDefinition | None:
        """Return the definition called ``name``, or None."""
        return self._definitions.get(name) if type(name) is str else None

    def names(self) -> tuple[str, ...]:
        """Return the registered names in registration order."""
        return tuple(self._definitions)

    def __len__(self) -> int:
        return len(self._definitions)

    def __contains__(self, name: object) -> bool:
        return type(name) is str and name in self._definitions

    def snapshot(self) -> ToolRegistry:
        """Return a new registry with the same members (the same frozen definitions)."""
        # BEGIN LAB 6.2
        copy = ToolRegistry()
        copy._definitions = dict(self._definitions)
        return copy
        # END LAB 6.2

    def definitions(self) -> tuple[ToolSpec, ...]:
        """Return what the model is told about each tool, in registration order."""
        # BEGIN LAB 6.2
        # An allowlist: three named fields. Copying the definition (dataclasses.asdict, a
        # spread) would one day ship execute, or whatever field is added next, to a provider.
        return tuple(
            ToolSpec(name=d.name, description=d.description, parameters=d.parameters)
            for d in self._definitions.values()
        )
        # END LAB 6.2

    def __repr__(self) -> str:
        return f"<ToolRegistry {list(self._definitions)}>"


# --8<-- [end:registry]

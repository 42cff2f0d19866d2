"""Decide, synchronously and without side effects, whether a tool's arguments are acceptable.

Each validator also carries the JSON Schema that tells the model, in advance, what it accepts.
"""

from __future__ import annotations

__all__ = [
    "Accepted",
    "Decision",
    "Field",
    "Rejected",
    "accept",
    "boolean",
    "choice",
    "integer",
    "list_of",
    "number",
    "object_schema",
    "optional",
    "positive_integer",
    "reject",
    "string",
]

import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias, TypedDict, cast

from harness.protocol import JsonObject, snapshot_json_object, thaw_json
from harness.untrusted import type_name


# --8<-- [start:decisions]
class Accepted(TypedDict):
    """A validator's yes: ``value`` is what ``execute`` will receive."""

    ok: Literal[True]
    value: object


class Rejected(TypedDict):
    """A validator's no: ``error`` is shown to the model verbatim."""

    ok: Literal[False]
    error: str


Decision: TypeAlias = Accepted | Rejected


def accept(value: object) -> Accepted:
    """Return the decision that lets ``execute`` run with ``value``."""
    return {"ok": True, "value": value}


def reject(error: str) -> Rejected:
    """Return the decision that refuses the call with ``error`` (a short, non-empty message)."""
    return {"ok": False, "error": error}


# --8<-- [end:decisions]


# --8<-- [start:field]
@dataclass(frozen=True, slots=True, kw_only=True)
class Field:
    """One field of an object schema: how to check a value, and how to describe it."""

    check: Callable[[object], str | None]  # None if the value is fine, else what is wrong
    json_schema: JsonObject  # a frozen snapshot, such as {"type": "integer"}
    required: bool = True  # False only through optional(...)

    def __post_init__(self) -> None:
        if not callable(self.check):
            raise TypeError(f"Field.check must be callable, got {type_name(self.check)}")
        if type(self.json_schema) is not types.MappingProxyType:
            raise TypeError("Field.json_schema must be a JSON object snapshot")
        if type(self.required) is not bool:
            raise TypeError(f"Field.required must be a bool, got {type_name(self.required)}")


# --8<-- [end:field]


# BEGIN LAB 6.1
def _field(
    check: Callable[[object], str | None], schema: dict[str, object], description: str | None
) -> Field:
    """Build a required field, adding the description to its schema when there is one."""
    if description is not None:
        if type(description) is not str or not description:
            raise TypeError("description must be a non-empty str")
        schema = {**schema, "description": description}
    return Field(check=check, json_schema=snapshot_json_object(schema))


def _expected(what: str, value: object) -> str:
    """Say what was expected and what type came instead: ``expected a string, got int``."""
    # A JSON snapshot holds objects as mappingproxy and arrays as tuple; name them as the model
    # and the reader think of them.
    if type(value) is types.MappingProxyType:
        return f"expected {what}, got dict"
    return f"expected {what}, got {'list' if type(value) is tuple else type_name(value)}"


def _at(prefix: str, error: str) -> str:
    """Put a field name or index in front of an error from inside it: ``tags[2]: …``."""
    return f"{prefix}{error}" if error.startswith("[") else f"{prefix}: {error}"


def _check_string(value: object) -> str | None:
    return None if type(value) is str else _expected("a string", value)


def _check_integer(value: object) -> str | None:
    # Exact types: True is an int to isinstance, but a model that sends true meant a boolean.
    return None if type(value) is int else _expected("an integer", value)


def _check_number(value: object) -> str | None:
    return None if type(value) is int or type(value) is float else _expected("a number", value)


def _check_boolean(value: object) -> str | None:
    return None if type(value) is bool else _expected("a boolean", value)


def _check_positive_integer(value: object) -> str | None:
    if type(value) is not int:
        return _expected("a positive integer", value)
    return None if value >= 1 else "must be at least 1"


# END LAB 6.1


def string(*, description: str | None = None) -> Field:
    """Return a field that accepts a str."""
    # BEGIN LAB 6.1
    return _field(_check_string, {"type": "string"}, description)
    # END LAB 6.1


def integer(*, description: str | None = None) -> Field:
    """Return a field that accepts an int (not a bool, not a float)."""
    # BEGIN LAB 6.1
    return _field(_check_integer, {"type": "integer"}, description)
    # END LAB 6.1


def number(*, description: str | None = None) -> Field:
    """Return a field that accepts an int or a float (not a bool)."""
    # BEGIN LAB 6.1
    return _field(_check_number, {"type": "number"}, description)
    # END LAB 6.1


def boolean(*, description: str | None = None) -> Field:
    """Return a field that accepts True or False."""
    # BEGIN LAB 6.1
    return _field(_check_boolean, {"type": "boolean"}, description)
    # END LAB 6.1


def positive_integer(*, description: str | None = None) -> Field:
    """Return a field that accepts an int of at least 1."""
    # BEGIN LAB 6.1
    return _field(_check_positive_integer, {"type": "integer", "minimum": 1}, description)
    # END LAB 6.1


def choice(*values: str, description: str | None = None) -> Field:
    """Return a field that accepts exactly one of the given strings."""
    # BEGIN LAB 6.1
    if not values or any(type(v) is not str for v in values):
        raise TypeError("choice needs at least one str value")
    allowed = frozenset(values)
    listed = ", ".join(repr(v) for v in values)

    def check_choice(value: object) -> str | None:
        return None if type(value) is str and value in allowed else f"expected one of {listed}"

    return _field(check_choice, {"type": "string", "enum": list(values)}, description)
    # END LAB 6.1


def list_of(item: Field, *, description: str | None = None) -> Field:
    """Return a field that accepts a JSON array whose every item passes ``item``."""
    # BEGIN LAB 6.1
    if type(item) is not Field:
        raise TypeError(f"list_of needs a Field, got {type_name(item)}")
    check_item = item.check

    def check_list(value: object) -> str | None:
        # Arguments are frozen snapshots (arrays are tuples); a hand-made dict may hold lists.
        if type(value) is not tuple and type(value) is not list:
            return _expected("a list", value)
        for index, element in enumerate(cast("tuple[object, ...]", value)):
            error = check_item(element)
            if error is not None:
                return _at(f"[{index}]", error)
        return None

    schema = {"type": "array", "items": thaw_json(item.json_schema)}
    return _field(check_list, schema, description)
    # END LAB 6.1


def optional(field: Field) -> Field:
    """Return the same field, but allowed to be absent (``null`` is still refused)."""
    # BEGIN LAB 6.1
    if type(field) is not Field:
        raise TypeError(f"optional needs a Field, got {type_name(field)}")
    return Field(check=field.check, json_schema=field.json_schema, required=False)
    # END LAB 6.1


# --8<-- [start:object-schema]
def object_schema(fields: Mapping[str, Field]) -> Callable[[object], Decision]:
    """Return a validator for a JSON object with exactly these fields; it carries its schema.

    The validator accepts a dict or a frozen JSON object (a read-only mapping must wrap a
    snapshot), refuses unknown keys and missing required ones, coerces nothing, and returns
    ``accept(dict_of_the_declared_fields)`` or ``reject("name: what is wrong")``. Its JSON
    Schema is stored in the function's own ``__dict__`` under ``"json_schema"``, where
    define_tool reads it.
    """
    # BEGIN LAB 6.1
    declared = dict(fields)
    for name, field in declared.items():
        if type(name) is not str or not name or type(field) is not Field:
            raise TypeError("object_schema needs non-empty str names mapped to Field values")

    # Each field's parts are read once, here, rather than on every call.
    checks = tuple((name, field.check, field.required) for name, field in declared.items())

    def validate(arguments: object) -> Decision:
        if type(arguments) is not dict:
            if type(arguments) is not types.MappingProxyType:
                return reject(_expected("an object", arguments))
            # A read-only mapping passes every read on to what it wraps, which may be anything
            # with methods of its own; thaw_json looks inside without running any of it.
            try:
                thaw_json(cast("JsonObject", arguments))
            except TypeError as exc:
                return reject(f"expected a JSON object snapshot: {exc}")
        given: Mapping[object, object] = arguments
        for key in given:
            if type(key) is not str:  # checked before `in`, which would hash a foreign key
                return reject(f"keys must be str, got {type_name(key)}")
            if key not in declared:
                return reject(f"{key}: unknown field")
        value: dict[str, object] = {}
        for name, check, required in checks:
            if name in given:
                item = given[name]
                error = check(item)
                if error is not None:
                    return reject(_at(name, error))
                value[name] = item
            elif required:
                return reject(f"{name}: is required")
        return accept(value)

    vars(validate)["json_schema"] = {
        "type": "object",
        "properties": {name: thaw_json(field.json_schema) for name, field in declared.items()},
        "required": [name for name, field in declared.items() if field.required],
        "additionalProperties": False,
    }
    return validate
    # END LAB 6.1


# --8<-- [end:object-schema]

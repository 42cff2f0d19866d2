"""Checkpoint 06: the tool contract, from untrusted proposal to linked result.

Each test is tagged with the lab it proves: 6.1 validators, 6.2 definitions and the registry,
6.3 bounded serialization, 6.4 executing a call. Hostile inputs appear at every boundary: they
record in ``seen`` anything of theirs that runs, and the tests assert that nothing did.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import importlib
import inspect
import json
import math
import types
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness.tool as tool_module
from checkpoints import support
from checkpoints.support import raises_exactly
from harness.abort import AbortController, AbortError, AbortSignal
from harness.awaitables import dispose_of_awaitable
from harness.cancel_on_abort import CancelOnAbort
from harness.protocol import (
    JsonObject,
    ToolCall,
    ToolResultMessage,
    snapshot_json_object,
    thaw_json,
)
from harness.scripted_model import ModelRequest
from harness.scripted_model import ToolSpec as ScriptedModelToolSpec
from harness.tool import (
    NonRecoverableToolError,
    ToolContext,
    ToolContractError,
    ToolDefinition,
    ToolRegistry,
    ToolSpec,
    define_tool,
    execute_tool_call,
)
from harness.tool_output import (
    CIRCULAR_MARKER,
    MAX_CONTENT_CODE_POINTS,
    MAX_OUTPUT_STRING_CODE_POINTS,
    TRUNCATION_MARKER,
    ToolOutputError,
    cap_content,
    serialize_output,
)
from harness.untrusted import MAX_DESCRIBED_CODE_POINTS, class_attribute, own_attributes
from harness.validators import (
    Decision,
    Field,
    accept,
    boolean,
    choice,
    integer,
    list_of,
    number,
    object_schema,
    optional,
    positive_integer,
    reject,
    string,
)

lab_6_1 = pytest.mark.lab("6.1")
lab_6_2 = pytest.mark.lab("6.2")
lab_6_3 = pytest.mark.lab("6.3")
lab_6_4 = pytest.mark.lab("6.4")
lab_6_5 = pytest.mark.lab("6.5")
lab_6_6 = pytest.mark.lab("6.6")
lab_6_7 = pytest.mark.lab("6.7")

Execute = Callable[[Any, ToolContext], Awaitable[object]]


# --- helpers ---------------------------------------------------------------------------------


async def echo(value: object, context: ToolContext) -> object:
    """A tool that returns what it was given."""
    del context
    return value


def accept_anything(arguments: object) -> Decision:
    return accept(arguments)


def tool(
    name: str = "echo",
    *,
    validate: Callable[[object], object] = accept_anything,
    execute: Execute = echo,
) -> dict[str, object]:
    """Return a plain definition dict."""
    return {
        "name": name,
        "description": f"The {name} tool.",
        "validate": validate,
        "execute": execute,
    }


def call(name: str, arguments: dict[str, object], call_id: str = "call-1") -> ToolCall:
    return ToolCall.create(id=call_id, name=name, arguments=arguments)


def registry_with(*definitions: dict[str, object]) -> ToolRegistry:
    return ToolRegistry(definitions)


async def run(
    registry: ToolRegistry, proposed: object, signal: AbortSignal | None = None
) -> ToolResultMessage:
    return await execute_tool_call(registry, proposed, signal or AbortController().signal)


def assert_no_cancellation_is_pending() -> None:
    """Assert that nothing is left to cancel the running test's task at a later await."""
    current = asyncio.current_task()
    assert current is not None
    assert current.cancelling() == 0


async def start_call(
    registry: ToolRegistry, proposed: object, signal: AbortSignal, started: asyncio.Event
) -> asyncio.Task[ToolResultMessage]:
    """Run the call in a task of its own; return it once the tool has started.

    If the call ends first (a lab's stub raising NotImplementedError, say), raise what ended it,
    so that an unfinished executor fails the test at once instead of hanging until the timeout.
    """
    pending = asyncio.create_task(run(registry, proposed, signal))
    waiting = asyncio.create_task(started.wait())
    await asyncio.wait({pending, waiting}, return_when=asyncio.FIRST_COMPLETED)
    if not waiting.done():
        waiting.cancel()
        pending.result()  # raises what ended the call
        raise AssertionError("the call returned before its tool started")
    return pending


def error_content(code: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "message": message}}, separators=(",", ":"))


async def run_returning(output: object) -> ToolResultMessage:
    """Run a tool that returns ``output`` and return the result."""

    async def produce(value: object, context: ToolContext) -> object:
        return output

    return await run(registry_with(tool(execute=produce)), call("echo", {}))


# =============================================================================================
# Lab 6.1: validators that decide without side effects and carry their JSON Schema
# =============================================================================================


@lab_6_1
@pytest.mark.parametrize(
    ("make_field", "good", "bad", "message"),
    [
        (string, "text", 3, "expected a string, got int"),
        (integer, 3, True, "expected an integer, got bool"),
        (integer, -7, 2.0, "expected an integer, got float"),
        (number, 2.5, "2.5", "expected a number, got str"),
        (number, 2, False, "expected a number, got bool"),
        (boolean, False, 0, "expected a boolean, got int"),
        (positive_integer, 1, 0, "must be at least 1"),
        (positive_integer, 9, "9", "expected a positive integer, got str"),
        (lambda: choice("c", "f"), "f", "k", "expected one of 'c', 'f'"),
        (lambda: list_of(integer()), (1, 2), "12", "expected a list, got str"),
    ],
)
def test_field_accepts_its_exact_type_and_names_what_came_instead(
    make_field: Callable[[], Field], good: object, bad: object, message: str
) -> None:
    field = make_field()  # built here, so a stubbed lab fails this test, not the whole file
    assert field.check(good) is None
    assert field.check(bad) == message


@lab_6_1
def test_list_of_names_the_index_of_the_bad_item() -> None:
    validate = object_schema({"tags": list_of(string())})
    assert validate({"tags": ("a", "b", 3)}) == reject("tags[2]: expected a string, got int")


@lab_6_1
def test_nested_lists_keep_every_index_in_the_message() -> None:
    validate = object_schema({"grid": list_of(list_of(integer()))})
    assert validate({"grid": ((1,), (2, "x"))}) == reject(
        "grid[1][1]: expected an integer, got str"
    )


@lab_6_1
def test_object_schema_accepts_declared_fields_into_a_new_dict() -> None:
    validate = object_schema({"left": integer(), "right": integer()})
    arguments = {"left": 20, "right": 22}
    decision = validate(arguments)
    assert decision == accept({"left": 20, "right": 22})
    assert decision["ok"] is True
    assert decision["value"] is not arguments


@lab_6_1
def test_object_schema_accepts_a_frozen_json_snapshot() -> None:
    validate = object_schema({"tags": list_of(string())})
    frozen = call("x", {"tags": ["a", "b"]}).arguments
    assert validate(frozen) == accept({"tags": ("a", "b")})


@lab_6_6
def test_object_schema_refuses_a_read_only_mapping_around_anything_but_a_snapshot() -> None:
    # A mappingproxy passes every read to what it wraps: a dict subclass's methods would run.
    validate = object_schema({"left": integer()})
    wrapped = RecordingDict(left=1)
    decision = validate(types.MappingProxyType(wrapped))
    assert decision == reject(
        "expected a JSON object snapshot: a read-only mapping of a JSON snapshot wraps a plain dict"
    )
    assert wrapped.calls == []


@lab_6_1
def test_object_schema_refuses_an_unknown_key() -> None:
    validate = object_schema({"left": integer()})
    assert validate({"left": 1, "extra": 2}) == reject("extra: unknown field")


@lab_6_1
def test_object_schema_reports_a_missing_required_field() -> None:
    validate = object_schema({"left": integer(), "right": integer()})
    assert validate({"left": 1}) == reject("right: is required")


@lab_6_1
def test_the_seed_message_format_names_field_and_type() -> None:
    validate = object_schema({"left": integer(), "right": integer()})
    assert validate({"left": "twenty", "right": 22}) == reject("left: expected an integer, got str")


@lab_6_1
def test_optional_field_may_be_absent_but_not_null() -> None:
    validate = object_schema({"limit": optional(positive_integer())})
    assert validate({}) == accept({})
    assert validate({"limit": None}) == reject("limit: expected a positive integer, got NoneType")


@lab_6_1
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([1, 2], "expected an object, got list"),
        (None, "expected an object, got NoneType"),
        ("{}", "expected an object, got str"),
    ],
)
def test_object_schema_refuses_anything_but_an_object(arguments: object, message: str) -> None:
    assert object_schema({})(arguments) == reject(message)


@lab_6_6
def test_object_schema_refuses_a_non_str_key_without_hashing_it() -> None:
    seen: list[str] = []

    class Key:
        def __hash__(self) -> int:
            seen.append("hash")
            return 0

    assert object_schema({})({Key(): 1}) == reject("keys must be str, got Key")
    assert seen == ["hash"]  # once, by the test's own dict literal; never by the validator


@lab_6_1
def test_object_schema_carries_its_json_schema() -> None:
    validate = object_schema(
        {
            "path": string(description="File to read."),
            "limit": optional(positive_integer()),
            "unit": choice("c", "f"),
            "tags": list_of(string()),
            "exact": boolean(),
            "ratio": number(),
        }
    )
    assert vars(validate)["json_schema"] == {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to read."},
            "limit": {"type": "integer", "minimum": 1},
            "unit": {"type": "string", "enum": ["c", "f"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "exact": {"type": "boolean"},
            "ratio": {"type": "number"},
        },
        "required": ["path", "unit", "tags", "exact", "ratio"],
        "additionalProperties": False,
    }


@lab_6_1
@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: object_schema({"": integer()}),
            "object_schema needs non-empty str names mapped to Field values",
        ),
        (
            lambda: object_schema({"x": int}),  # type: ignore[dict-item]
            "object_schema needs non-empty str names mapped to Field values",
        ),
        (
            lambda: list_of(int),  # type: ignore[arg-type]
            "list_of needs a Field, got type",
        ),
        (
            lambda: optional("x"),  # type: ignore[arg-type]
            "optional needs a Field, got str",
        ),
        (choice, "choice needs at least one str value"),
        (lambda: string(description=""), "description must be a non-empty str"),
    ],
)
def test_schema_builders_refuse_bad_declarations(build: Callable[[], object], message: str) -> None:
    with raises_exactly(TypeError, message):
        build()


json_scalars = support.json_scalars()
json_values = support.json_values(json_scalars, width=4, max_leaves=20)


@lab_6_1
def test_object_schema_always_returns_a_decision() -> None:
    # Built once, outside the property: an unfinished lab fails here, at once, instead of
    # inside hypothesis, whose search for a smaller failure is slow on a busy machine.
    validate = object_schema({"left": integer(), "right": optional(string())})

    @settings(max_examples=60, deadline=None)
    @given(st.dictionaries(st.sampled_from(["left", "right", "extra"]), json_values))
    def always_decides(arguments: dict[str, object]) -> None:
        decision = validate(arguments)
        if decision["ok"] is True:
            assert type(decision["value"]) is dict
            assert type(arguments.get("left")) is int
        else:
            assert type(decision["error"]) is str
            assert decision["error"]

    always_decides()


# =============================================================================================
# Lab 6.2: definitions are snapshotted once; the registry is atomic and owns frozen data
# =============================================================================================


# Lab 6.6: the readers of harness.untrusted, called directly.
@lab_6_6
def test_own_attributes_never_compares_a_planted_dict_slot_through_its_metaclass() -> None:
    asked: list[str] = []

    class Meta(type):
        def __eq__(cls, other: object) -> bool:
            asked.append("__eq__")
            return True  # "yes, I am the real __dict__ descriptor"

        __hash__ = type.__hash__

    class Planted(metaclass=Meta):
        pass

    class Shape:
        __dict__ = Planted()  # type: ignore[assignment]  # not the descriptor Python puts there

    assert own_attributes(Shape()) is None
    assert asked == []


# Lab 6.6: the readers of harness.untrusted, called directly.
@lab_6_6
def test_own_attributes_refuses_another_slot_planted_under_the_dict_name() -> None:
    class Slotted:
        __slots__ = ("x",)
        x: dict[str, object]

    class Shape(Slotted):
        __slots__ = ()
        __dict__ = Slotted.__dict__["x"]  # a real C descriptor, but of the slot x

    shape = Shape()
    shape.x = {"name": "not its own attributes"}
    assert own_attributes(shape) is None
    assert own_attributes(types.SimpleNamespace(a=1)) == {"a": 1}  # member descriptors named
    module = own_attributes(types.ModuleType("m"))  # __dict__: accepted
    assert module is not None
    assert module["__name__"] == "m"


# Lab 6.6: the readers of harness.untrusted, called directly.
@lab_6_6
def test_class_attribute_never_compares_a_posing_key_of_a_class_namespace() -> None:
    key = PosingKey("__await__")  # hashes like "__await__" and claims to equal anything
    shape = type("Shape", (), {key: "not an __await__ method", "size": 1})
    key.seen.clear()  # making the class hashed it; from here on nothing of it may run
    assert class_attribute(shape, "__await__") is None
    assert class_attribute(shape, "size") == 1
    assert key.seen == []


# Given code: the ToolContext record a tool receives (no lab tag, it passes from the start).
def test_a_tool_context_is_frozen_and_refuses_swapped_or_wrong_fields() -> None:
    controller = AbortController()
    context = ToolContext(signal=controller.signal, tool_call_id="call-1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(context, "tool_call_id", "other")
    with pytest.raises(TypeError, match=r"^ToolContext\.signal must be an AbortSignal, got "):
        ToolContext(signal=controller, tool_call_id="call-1")  # type: ignore[arg-type]
    for call_id in ("", 7, None):
        with raises_exactly(TypeError, "ToolContext.tool_call_id must be a non-empty str"):
            ToolContext(signal=controller.signal, tool_call_id=call_id)  # type: ignore[arg-type]


@lab_6_2
def test_define_tool_snapshots_a_dict_and_ignores_later_changes() -> None:
    definition = tool("echo")
    frozen = define_tool(definition)
    definition["name"] = "renamed"
    definition["execute"] = None
    assert type(frozen) is ToolDefinition
    assert (frozen.name, frozen.execute) == ("echo", echo)
    with pytest.raises(AttributeError):
        frozen.name = "other"  # type: ignore[misc]
    assert not hasattr(frozen, "__dict__")  # slotted: nothing can be added either


@lab_6_2
def test_define_tool_reads_an_objects_own_attributes() -> None:
    class Definition:
        def __init__(self) -> None:
            self.name = "echo"
            self.description = "Echo."
            self.validate = accept_anything
            self.execute = echo

    assert define_tool(Definition()).name == "echo"
    namespace = types.SimpleNamespace(**tool("ns"))
    assert define_tool(namespace).name == "ns"


@lab_6_2
def test_define_tool_returns_a_tool_definition_unchanged() -> None:
    frozen = define_tool(tool())
    assert define_tool(frozen) is frozen


@lab_6_6
def test_an_inherited_property_is_refused_without_calling_its_getter() -> None:
    seen: list[str] = []

    class Definition:
        def __init__(self) -> None:
            self.description, self.validate, self.execute = "d", accept_anything, echo

        @property
        def name(self) -> str:
            seen.append("getter")
            return "echo"

    with raises_exactly(
        ToolContractError,
        "INVALID_TOOL_DEFINITION: name is inherited from the class; define it on the object itself",
    ):
        define_tool(Definition())
    assert seen == []


@lab_6_2
def test_an_inherited_method_is_refused() -> None:
    class Definition:
        def __init__(self) -> None:
            self.name, self.description, self.validate = "echo", "d", accept_anything

        async def execute(self, value: object, context: ToolContext) -> object:
            return value

    with raises_exactly(
        ToolContractError,
        "INVALID_TOOL_DEFINITION: execute is inherited from the class; define it on the object "
        "itself",
    ):
        define_tool(Definition())


@lab_6_2
def test_a_class_attribute_is_refused() -> None:
    class Definition:
        description = "shared by every instance"

        def __init__(self) -> None:
            self.name, self.validate, self.execute = "echo", accept_anything, echo

    with raises_exactly(
        ToolContractError,
        "INVALID_TOOL_DEFINITION: description is inherited from the class; define it on the "
        "object itself",
    ):
        define_tool(Definition())


@lab_6_6
def test_define_tool_never_runs_attribute_lookup_overrides() -> None:
    seen: list[str] = []

    class Definition:
        def __init__(self) -> None:
            vars(self).update(tool("echo"))

        def __getattribute__(self, name: str) -> object:
            seen.append(name)
            return object.__getattribute__(self, name)

        def __getattr__(self, name: str) -> object:
            seen.append(name)
            raise AttributeError(name)

    definition = Definition()
    seen.clear()  # building it looked up __dict__ once
    assert define_tool(definition).name == "echo"
    assert seen == []


@lab_6_6
def test_a_class_level_dict_property_is_refused_without_running_it() -> None:
    seen: list[str] = []

    class Definition:
        @property
        def __dict__(self) -> dict[str, object]:  # type: ignore[override]
            seen.append("__dict__")
            return tool("echo")

    with raises_exactly(
        ToolContractError,
        "INVALID_TOOL_DEFINITION: definition must be a dict or an object with its own "
        "attributes, got Definition",
    ):
        define_tool(Definition())
    assert seen == []


@lab_6_6
def test_a_faked_class_does_not_make_an_object_a_dict() -> None:
    seen: list[str] = []

    class Impostor:
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            seen.append("__class__")
            return dict

    impostor = Impostor()
    assert isinstance(impostor, dict)  # isinstance believes it: that is the point
    seen.clear()
    with raises_exactly(ToolContractError, "INVALID_TOOL_DEFINITION: definition is missing 'name'"):
        define_tool(impostor)
    assert seen == []


@lab_6_6
def test_a_dict_subclass_is_read_without_running_its_overrides() -> None:
    seen: list[str] = []

    class Sneaky(dict[str, object]):
        def __getitem__(self, key: str) -> object:
            seen.append(key)
            return "swapped"

        def get(self, key: str, default: object = None) -> object:
            seen.append(key)
            return "swapped"

    with raises_exactly(ToolContractError, "INVALID_TOOL_DEFINITION: definition is missing 'name'"):
        define_tool(Sneaky(tool()))
    assert seen == []


@lab_6_2
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": 7}, "INVALID_TOOL_DEFINITION: name must be a str, got int"),
        ({"name": ""}, "INVALID_TOOL_DEFINITION: name must not be empty"),
        (
            {"description": b"bytes"},
            "INVALID_TOOL_DEFINITION: description must be a str, got bytes",
        ),
        (
            {"validate": "not callable"},
            "INVALID_TOOL_DEFINITION: validate must be callable, got str",
        ),
        ({"execute": None}, "INVALID_TOOL_DEFINITION: execute must be callable, got NoneType"),
        ({"parameters": {}}, "INVALID_TOOL_DEFINITION: definition has unknown field 'parameters'"),
    ],
)
def test_define_tool_names_the_bad_field(change: dict[str, object], message: str) -> None:
    with raises_exactly(ToolContractError, message):
        define_tool({**tool(), **change})


@lab_6_2
def test_define_tool_refuses_a_missing_field_and_a_non_str_key() -> None:
    incomplete = tool()
    del incomplete["execute"]
    with raises_exactly(
        ToolContractError, "INVALID_TOOL_DEFINITION: definition is missing 'execute'"
    ):
        define_tool(incomplete)
    with_int_key: dict[object, object] = {1: "one"}
    with_int_key.update(tool())
    with raises_exactly(
        ToolContractError, "INVALID_TOOL_DEFINITION: definition keys must be str, got int"
    ):
        define_tool(with_int_key)


class PosingKey(str):
    """A str subclass posing as a field name: it hashes like one and claims equality."""

    def __init__(self, text: str) -> None:
        self.seen: list[str] = []

    def __hash__(self) -> int:
        self.seen.append("__hash__")
        return str.__hash__(self)

    def __eq__(self, other: object) -> bool:
        self.seen.append("__eq__")
        return True


@lab_6_6
@pytest.mark.parametrize("form", ["dict", "object"])
def test_define_tool_refuses_a_posing_key_before_comparing_any_key(form: str) -> None:
    key = PosingKey("name")
    fields: dict[object, object] = {k: v for k, v in tool().items() if k != "name"}
    fields[key] = "echo"
    # As an object, the key sits in its own attributes, where no `obj.name = ...` could put it.
    definition: object = fields
    if form == "object":
        definition = types.SimpleNamespace()
        cast("dict[object, object]", vars(definition)).update(fields)
    key.seen.clear()  # building the dict hashed it; from here on nothing of it may run
    with raises_exactly(
        ToolContractError, "INVALID_TOOL_DEFINITION: definition keys must be str, got PosingKey"
    ):
        define_tool(definition)
    assert key.seen == []


@lab_6_6
def test_a_validator_with_a_posing_attribute_key_is_refused_without_comparing_it() -> None:
    def validate(arguments: object) -> Decision:
        return accept(arguments)

    key = PosingKey("json_schema")
    vars(validate)[key] = {"type": "object"}
    key.seen.clear()
    with raises_exactly(
        ToolContractError,
        "INVALID_TOOL_DEFINITION: validate's attributes: keys must be str, got PosingKey",
    ):
        define_tool(tool(validate=validate))
    assert key.seen == []


@lab_6_6
@pytest.mark.parametrize(
    ("field", "forge", "refused"),
    [
        (
            "name",
            lambda: PosingKey("echo"),
            "INVALID_TOOL_DEFINITION: name must be a str, got PosingKey",
        ),
        ("description", lambda: "", "INVALID_TOOL_DEFINITION: description must not be empty"),
        (
            "execute",
            lambda: "not callable",
            "INVALID_TOOL_DEFINITION: execute must be callable, got str",
        ),
        (
            "parameters",
            lambda: {"type": "object"},
            "INVALID_TOOL_DEFINITION: parameters must be a JSON object snapshot, got dict",
        ),
        (
            "parameters",
            lambda: types.MappingProxyType(RecordingDict(type="object")),
            "INVALID_TOOL_DEFINITION: parameters must be a JSON object snapshot: "
            "a read-only mapping of a JSON snapshot wraps a plain dict",
        ),
        (
            "parameters",
            lambda: snapshot_json_object({"type": "array"}),
            'INVALID_TOOL_DEFINITION: parameters must have "type": "object"',
        ),
    ],
    ids=[
        "posing-name",
        "empty-description",
        "execute",
        "plain-dict",
        "wrapped-subclass",
        "not-an-object-schema",
    ],
)
def test_define_tool_checks_a_tool_definition_forged_after_it_was_made(
    field: str, forge: Callable[[], object], refused: str
) -> None:
    # A frozen record can still be changed with object.__setattr__; a registry would then hash
    # and compare a foreign name, or tell a model about a mapping that runs code.
    definition = define_tool(tool())
    forged = forge()
    object.__setattr__(definition, field, forged)
    watched: list[str] = forged.seen if type(forged) is PosingKey else []
    watched.clear()  # making the key ran nothing of ours; from here on nothing of it may run
    with raises_exactly(ToolContractError, refused):
        define_tool(definition)
    assert watched == []


@lab_6_2
@pytest.mark.parametrize(
    ("definition", "message"),
    [
        (
            None,
            "INVALID_TOOL_DEFINITION: definition must be a dict or an object with its own "
            "attributes, got NoneType",
        ),
        (
            42,
            "INVALID_TOOL_DEFINITION: definition must be a dict or an object with its own "
            "attributes, got int",
        ),
        (
            "echo",
            "INVALID_TOOL_DEFINITION: definition must be a dict or an object with its own "
            "attributes, got str",
        ),
        (
            ("echo",),
            "INVALID_TOOL_DEFINITION: definition must be a dict or an object with its own "
            "attributes, got tuple",
        ),
    ],
)
def test_define_tool_refuses_values_without_fields(definition: object, message: str) -> None:
    with raises_exactly(ToolContractError, message):
        define_tool(definition)


@lab_6_2
def test_definitions_show_the_model_only_name_description_and_schema() -> None:
    validate = object_schema({"left": integer()})
    registry = registry_with(tool("add", validate=validate), tool("echo"))
    specs = registry.definitions()
    assert [type(spec) for spec in specs] == [ToolSpec, ToolSpec]
    assert [s.name for s in specs] == ["add", "echo"]
    assert ToolSpec.__slots__ == ("name", "description", "parameters")
    assert thaw_json(specs[0].parameters) == vars(validate)["json_schema"]
    assert specs[1].parameters == {"type": "object"}


@lab_6_2
def test_definitions_are_the_tool_specs_a_model_request_carries() -> None:
    # Checkpoint 04's ToolSpec, not a look-alike: checkpoint 07 sends them to the model as they are.
    assert ToolSpec is ScriptedModelToolSpec
    specs = registry_with(tool("add"), tool("echo")).definitions()
    request = ModelRequest(messages=(), tools=specs)
    assert [spec.name for spec in request.tools] == ["add", "echo"]


@lab_6_2
def test_the_schema_is_read_once_and_frozen_at_definition_time() -> None:
    validate = object_schema({"left": integer()})
    frozen = define_tool(tool(validate=validate))
    vars(validate)["json_schema"]["properties"]["left"]["type"] = "string"
    parameters: Any = frozen.parameters
    assert parameters["properties"]["left"]["type"] == "integer"
    with pytest.raises(TypeError):
        frozen.parameters["type"] = "array"  # type: ignore[index]


@lab_6_6
def test_a_planted_dict_subclass_on_the_validator_is_not_consulted() -> None:
    seen: list[str] = []

    class Planted(dict[str, object]):
        def get(self, key: str, default: object = None) -> object:
            seen.append(key)
            return {"type": "string"}

    def validate(arguments: object) -> Decision:
        return accept(arguments)

    validate.__dict__ = Planted(json_schema={"type": "object", "title": "real"})
    assert define_tool(tool(validate=validate)).parameters == {"type": "object", "title": "real"}
    assert seen == []


@lab_6_2
@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            {"type": "object", "bad": {1, 2}},
            "INVALID_TOOL_DEFINITION: validate.json_schema is not a JSON object: "
            "$.bad: set is not a JSON type",
        ),
        (
            {"type": "array"},
            'INVALID_TOOL_DEFINITION: validate.json_schema must have "type": "object"',
        ),
    ],
)
def test_a_validator_schema_must_be_a_json_object_schema(schema: object, message: str) -> None:
    def validate(arguments: object) -> Decision:
        return accept(arguments)

    vars(validate)["json_schema"] = schema
    with raises_exactly(ToolContractError, message):
        define_tool(tool(validate=validate))


@lab_6_2
def test_registry_reports_its_members_in_registration_order() -> None:
    registry = registry_with(tool("b"), tool("a"))
    assert registry.names() == ("b", "a")
    assert len(registry) == 2
    assert "a" in registry
    assert "c" not in registry
    assert registry.get("b") is not None
    assert registry.get("c") is None


@lab_6_6
def test_registry_lookups_ignore_non_str_names_without_hashing_them() -> None:
    seen: list[str] = []

    class Name:
        def __hash__(self) -> int:
            seen.append("hash")
            return hash("a")

    registry = registry_with(tool("a"))
    assert Name() not in registry
    assert registry.get(Name()) is None  # type: ignore[arg-type]
    assert seen == []


@lab_6_2
def test_a_hostile_second_definition_leaves_the_registry_unchanged() -> None:
    registry = registry_with(tool("first"))
    with raises_exactly(
        ToolContractError, "INVALID_TOOL_DEFINITION: name must be a str, got NoneType"
    ):
        registry.register_many([tool("second"), {**tool(), "name": None}])
    assert registry.names() == ("first",)


@lab_6_2
def test_a_batch_generator_that_raises_halfway_registers_nothing() -> None:
    def batch() -> Iterator[dict[str, object]]:
        yield tool("second")
        raise RuntimeError("disk gone")

    registry = registry_with(tool("first"))
    with raises_exactly(
        ToolContractError,
        "INVALID_TOOL_BATCH: the batch could not be read: RuntimeError: disk gone",
    ) as raised:
        registry.register_many(batch())
    assert type(raised.value.__cause__) is RuntimeError
    assert registry.names() == ("first",)


@lab_6_2
def test_a_huge_error_message_from_a_batch_is_cut_to_the_string_budget() -> None:
    def batch() -> Iterator[dict[str, object]]:
        yield from ()  # a generator: the error comes from iterating it
        raise RuntimeError("x" * 1_000_000)

    with pytest.raises(ToolContractError) as raised:
        ToolRegistry().register_many(batch())
    prefix = "the batch could not be read: RuntimeError: "
    assert raised.value.message == prefix + "x" * MAX_OUTPUT_STRING_CODE_POINTS


def test_an_exception_message_is_cut_where_the_serializer_cuts_strings() -> None:  # given
    assert MAX_DESCRIBED_CODE_POINTS == MAX_OUTPUT_STRING_CODE_POINTS


@lab_6_2
def test_a_none_entry_fails_the_whole_batch() -> None:
    registry = ToolRegistry()
    with raises_exactly(
        ToolContractError,
        "INVALID_TOOL_DEFINITION: definition must be a dict or an object with its own "
        "attributes, got NoneType",
    ):
        registry.register_many([tool("a"), None])
    assert len(registry) == 0


@lab_6_2
@pytest.mark.parametrize(
    ("batch", "message"),
    [
        (tool(), "INVALID_TOOL_BATCH: a batch must be an iterable of definitions, got dict"),
        ("echo", "INVALID_TOOL_BATCH: a batch must be an iterable of definitions, got str"),
        (
            42,
            "INVALID_TOOL_BATCH: the batch could not be read: "
            "TypeError: 'int' object is not iterable",
        ),
    ],
)
def test_a_batch_that_is_not_an_iterable_of_definitions_is_refused(
    batch: object, message: str
) -> None:
    with raises_exactly(ToolContractError, message):
        ToolRegistry().register_many(batch)  # type: ignore[arg-type]


@lab_6_2
def test_duplicate_names_are_refused_in_the_batch_and_against_the_registry() -> None:
    registry = registry_with(tool("a"))
    with raises_exactly(ToolContractError, "DUPLICATE_TOOL_NAME: duplicate tool name 'b'"):
        registry.register_many([tool("b"), tool("c"), tool("b")])
    with raises_exactly(ToolContractError, "DUPLICATE_TOOL_NAME: duplicate tool name 'a'"):
        registry.register(tool("a"))
    assert registry.names() == ("a",)


@lab_6_2
def test_contract_errors_carry_a_known_code_and_message() -> None:
    with pytest.raises(ToolContractError) as raised:
        ToolRegistry([tool("a"), tool("a")])
    assert (raised.value.code, raised.value.message) == (
        "DUPLICATE_TOOL_NAME",
        "duplicate tool name 'a'",
    )
    with raises_exactly(ValueError, "unknown contract code 'OOPS'"):
        ToolContractError("OOPS", "x")


@lab_6_2
def test_a_snapshot_is_isolated_and_shares_the_frozen_definitions() -> None:
    registry = registry_with(tool("a"))
    copy = registry.snapshot()
    registry.register(tool("b"))
    assert copy.names() == ("a",)
    assert copy.get("a") is registry.get("a")
    copy.register(tool("c"))
    assert registry.names() == ("a", "b")


@lab_6_2
def test_registries_are_independent() -> None:
    one, two = ToolRegistry(), ToolRegistry()
    one.register(tool("a"))
    assert len(two) == 0


# =============================================================================================
# Lab 6.3: bounded, deterministic serialization of whatever the tool returned
# =============================================================================================


def compact(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@lab_6_3
def test_a_str_output_is_the_content_itself() -> None:
    assert serialize_output("line 1\nline 2") == "line 1\nline 2"


@lab_6_3
def test_other_outputs_are_compact_json_with_sorted_keys() -> None:
    assert (
        serialize_output({"b": [1, 2.5, None, True], "a": "é"}) == '{"a":"é","b":[1,2.5,null,true]}'
    )
    assert serialize_output(42) == "42"
    assert serialize_output(None) == "null"


@lab_6_3
def test_the_same_output_always_reads_the_same() -> None:
    first = {"z": 1, "a": {"y": 2, "b": 3}}
    second = {"a": {"b": 3, "y": 2}, "z": 1}
    assert serialize_output(first) == serialize_output(second) == '{"a":{"b":3,"y":2},"z":1}'


@lab_6_3
def test_non_finite_floats_are_written_as_strings() -> None:
    output = [math.nan, math.inf, -math.inf, 1.5]
    assert serialize_output(output) == '["NaN","Infinity","-Infinity",1.5]'


@lab_6_3
def test_a_cycle_becomes_a_marker() -> None:
    loop: list[object] = [1]
    loop.append(loop)
    ring: dict[str, object] = {"name": "a"}
    ring["self"] = [ring]
    assert serialize_output(loop) == f'[1,"{CIRCULAR_MARKER}"]'
    assert serialize_output(ring) == f'{{"name":"a","self":["{CIRCULAR_MARKER}"]}}'


@lab_6_3
def test_a_shared_value_is_not_a_cycle() -> None:
    shared = [1, 2]
    assert serialize_output({"a": shared, "b": shared}) == '{"a":[1,2],"b":[1,2]}'


@lab_6_3
def test_a_million_item_list_stops_at_the_node_budget() -> None:
    content = serialize_output(list(range(1_000_000)))
    assert content.endswith("]" + TRUNCATION_MARKER)
    assert json.loads(content.removesuffix(TRUNCATION_MARKER)) == list(range(127))


@lab_6_3
def test_exactly_128_nodes_are_written_whole() -> None:
    assert serialize_output(list(range(127))) == compact(list(range(127)))


@lab_6_3
def test_a_wide_dict_is_cut_to_the_visit_budget_before_sorting() -> None:
    wide = {f"k{i:04d}": i for i in range(1000, 0, -1)}  # inserted in descending order
    content = serialize_output(wide)
    kept = json.loads(content.removesuffix(TRUNCATION_MARKER))
    assert content.endswith(TRUNCATION_MARKER)
    assert len(kept) == 127
    assert list(kept) == sorted(kept)
    assert min(kept) == "k0745"  # the first 256 entries read were k1000 … k0745


@lab_6_3
def test_nesting_stops_at_depth_32() -> None:
    def nested(levels: int) -> list[object]:
        value: list[object] = []
        for _ in range(levels - 1):
            value = [value]
        return value

    assert serialize_output(nested(32)) == "[" * 32 + "]" * 32
    assert serialize_output(nested(33)) == "[" * 32 + "]" * 32 + TRUNCATION_MARKER
    # The walk stops there, as at any budget: a sibling after the cut is not written either.
    assert serialize_output([nested(40), 1]) == "[" * 32 + "]" * 32 + TRUNCATION_MARKER
    assert serialize_output({"a": nested(40), "b": 1}) == (
        '{"a":' + "[" * 31 + "]" * 31 + "}" + TRUNCATION_MARKER
    )


@lab_6_3
def test_ten_thousand_levels_of_nesting_are_cut_without_recursion_errors() -> None:
    deep: object = "bottom"
    for _ in range(10_000):
        deep = {"inner": deep}
    content = serialize_output(deep)
    assert content.endswith(TRUNCATION_MARKER)
    assert content.count("{") == 32  # dicts at depths 0..31; the 32nd one's child is cut
    assert content.count("inner") == 31


@lab_6_3
def test_a_long_string_inside_an_output_is_cut_and_marked() -> None:
    content = serialize_output({"log": "x" * 10_000})
    assert len(content) == MAX_CONTENT_CODE_POINTS
    assert (
        content == ('{"log":"' + "x" * 10_000)[: MAX_CONTENT_CODE_POINTS - 24] + TRUNCATION_MARKER
    )


@lab_6_3
def test_integers_up_to_4096_bits_are_written_and_bigger_ones_refused() -> None:
    assert serialize_output([2**4095]) == f"[{2**4095}]"
    with raises_exactly(ToolOutputError, "$[0]: int larger than 4096 bits"):
        serialize_output([2**4096])


@lab_6_3
def test_a_non_str_key_is_refused_with_its_path() -> None:
    with raises_exactly(ToolOutputError, "$.rows[1]: dict keys must be str, got int"):
        serialize_output({"rows": [{}, {1: "one"}]})


class Tracked:
    """An object whose every hook records that it ran."""

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    def __json__(self) -> object:
        self.seen.append("__json__")
        return {}

    def to_json(self) -> object:
        self.seen.append("to_json")
        return {}

    def __str__(self) -> str:
        self.seen.append("__str__")
        return ""

    def __repr__(self) -> str:
        self.seen.append("__repr__")
        return ""

    def __iter__(self) -> Iterator[object]:
        self.seen.append("__iter__")
        return iter(())


@lab_6_3
def test_unsupported_values_are_refused_without_running_their_code() -> None:
    seen: list[str] = []

    class Rows(list[object]):
        def __iter__(self) -> Iterator[object]:
            seen.append("Rows.__iter__")
            return iter(())

    class Record(dict[str, object]):
        def items(self) -> Any:
            seen.append("Record.items")
            return []

    class Count(int):
        def __repr__(self) -> str:
            seen.append("Count.__repr__")
            return "0"

    for value, message in [
        (Tracked(seen), "$.value: unsupported type Tracked"),
        (Rows([1]), "$.value: unsupported type Rows"),
        (Record(a=1), "$.value: unsupported type Record"),
        (Count(3), "$.value: unsupported type Count"),
        ({1, 2}, "$.value: unsupported type set"),
        (b"raw", "$.value: unsupported type bytes"),
    ]:
        with raises_exactly(ToolOutputError, message):
            serialize_output({"value": value})
    assert seen == []


@lab_6_3
def test_a_faked_class_is_not_a_dict_to_the_serializer() -> None:
    class Impostor:
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            raise AssertionError("__class__ was consulted")

    with raises_exactly(ToolOutputError, "$: unsupported type Impostor"):
        serialize_output(Impostor())


@lab_6_3
def test_an_output_of_exactly_4096_code_points_is_not_cut() -> None:
    exact = "é" * MAX_CONTENT_CODE_POINTS
    assert serialize_output(exact) == exact


@lab_6_3
def test_a_longer_output_is_cut_to_4096_code_points_with_the_marker() -> None:
    content = serialize_output("🙂" * (MAX_CONTENT_CODE_POINTS + 1))
    assert len(content) == MAX_CONTENT_CODE_POINTS
    assert content == "🙂" * (MAX_CONTENT_CODE_POINTS - 24) + "\n[Tool output truncated]"


@lab_6_3
def test_cap_content_adds_the_marker_when_a_budget_cut_the_text() -> None:
    assert cap_content("[1,2]", truncated=True) == "[1,2]" + TRUNCATION_MARKER
    assert cap_content("[1,2]") == "[1,2]"


def hostile_outputs() -> st.SearchStrategy[object]:
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**5000), max_value=2**5000)
        | st.floats()
        | st.text(max_size=50)
        | st.sampled_from([{1, 2}, b"x", object(), 1j])
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=6)
            | st.lists(inner, max_size=6).map(tuple)
            | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=6)
        ),
        max_leaves=60,
    )


@lab_6_3
@settings(max_examples=150, deadline=None)
@given(hostile_outputs())
def test_serialization_is_bounded_deterministic_and_fails_only_as_contracted(
    output: object,
) -> None:
    try:
        content = serialize_output(output)
    except ToolOutputError:
        with pytest.raises(ToolOutputError):
            serialize_output(output)
        return
    assert len(content) <= MAX_CONTENT_CODE_POINTS
    assert serialize_output(output) == content


@lab_6_3
@settings(max_examples=80, deadline=None)
@given(json_values)
def test_plain_json_reads_like_sorted_compact_json_on_both_paths(value: object) -> None:
    # [value, NaN] can never take the fast path, so it checks the copying walk against json.dumps.
    direct, via_walk = serialize_output([value]), serialize_output([value, math.nan])
    if not direct.endswith(TRUNCATION_MARKER) and len(direct) < 3000:
        assert direct == compact([value])
        assert via_walk == compact([value, "NaN"])


@lab_6_3
@settings(max_examples=200, deadline=None)
@given(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**4096) + 1, max_value=2**4096 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
)
def test_a_scalar_output_reads_exactly_as_json_dumps_writes_it(value: object) -> None:
    assert serialize_output(value) == json.dumps(value)


@lab_6_3
def test_a_scalar_output_of_a_foreign_or_oversized_kind_is_refused_at_the_top() -> None:
    seen: list[str] = []

    class Count(int):
        def __repr__(self) -> str:
            seen.append("Count.__repr__")
            return "0"

    class Label(str):  # the content must be an exact str: its own methods would answer for it
        def __str__(self) -> str:
            seen.append("Label.__str__")
            return "forged"

    for value, message in [
        (Count(3), "$: unsupported type Count"),
        (Label("hi"), "$: unsupported type Label"),
        (2**4096, "$: int larger than 4096 bits"),
        (-(2**4096), "$: int larger than 4096 bits"),
    ]:
        with raises_exactly(ToolOutputError, message):
            serialize_output(value)
    assert seen == []
    assert serialize_output(math.inf) == '"Infinity"'


# =============================================================================================
# Lab 6.4: executing a call — validation before effects, linked results, cancellation
# =============================================================================================


# --8<-- [start:seed-example]
@lab_6_4
async def test_argument_validation_runs_before_effects() -> None:
    executed: list[object] = []

    async def spy(value: object, context: ToolContext) -> object:
        executed.append(value)
        return {"unreachable": True}

    registry = ToolRegistry(
        [
            define_tool(
                {
                    "name": "add",
                    "description": "Add numbers.",
                    "validate": lambda arguments: reject("left must be a number"),
                    "execute": spy,
                }
            )
        ]
    )

    result = await execute_tool_call(
        registry,
        ToolCall.create(
            id="call-invalid-add", name="add", arguments={"left": "twenty", "right": 22}
        ),
        AbortController().signal,
    )

    assert (result.tool_call_id, result.tool_name, result.is_error) == (
        "call-invalid-add",
        "add",
        True,
    )
    assert result.content == (
        '{"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"left must be a number"}}'
    )
    assert executed == []


# --8<-- [end:seed-example]


@lab_6_4
async def test_a_valid_call_returns_a_frozen_result_linked_to_its_call() -> None:
    validate = object_schema({"left": integer(), "right": integer()})

    async def add(value: dict[str, int], context: ToolContext) -> object:
        return {"sum": value["left"] + value["right"], "call": context.tool_call_id}

    result = await run(
        registry_with(tool("add", validate=validate, execute=add)),
        call("add", {"left": 20, "right": 22}, "c-7"),
    )
    assert result == ToolResultMessage(
        id="tool-result-c-7",
        tool_call_id="c-7",
        tool_name="add",
        content='{"call":"c-7","sum":42}',
        is_error=False,
    )
    with pytest.raises(AttributeError):
        result.content = "changed"  # type: ignore[misc]


@lab_6_6
async def test_a_str_subclass_output_is_refused_and_the_content_is_an_exact_str() -> None:
    class Label(str):
        pass

    async def label(value: object, context: ToolContext) -> object:
        return Label("hi")

    result = await run(registry_with(tool(execute=label)), call("echo", {}))
    assert result.is_error
    assert type(result.content) is str
    assert json.loads(result.content) == {
        "error": {
            "code": "TOOL_OUTPUT_SERIALIZATION_FAILED",
            "message": "$: unsupported type Label",
        }
    }


@lab_6_4
async def test_a_plain_call_dict_works_like_a_tool_call() -> None:
    registry = registry_with(tool())
    from_dict = await run(registry, {"id": "c", "name": "echo", "arguments": {"x": [1]}})
    from_record = await run(registry, call("echo", {"x": [1]}, "c"))
    assert from_dict == from_record
    assert from_dict.content == '{"x":[1]}'


@lab_6_4
async def test_an_unknown_tool_gives_tool_not_found_and_changes_nothing() -> None:
    registry = registry_with(tool("echo"))
    result = await run(registry, call("lookup", {}, "c-1"))
    assert (result.id, result.tool_call_id, result.tool_name, result.is_error) == (
        "tool-result-c-1",
        "c-1",
        "lookup",
        True,
    )
    assert result.content == error_content("TOOL_NOT_FOUND", "tool 'lookup' is not registered")
    assert registry.names() == ("echo",)


@lab_6_4
async def test_a_validator_that_raises_gives_validation_failed() -> None:
    def validate(arguments: object) -> Decision:
        raise KeyError("left")

    result = await run(registry_with(tool(validate=validate)), call("echo", {}))
    assert result.content == error_content(
        "TOOL_VALIDATION_FAILED", "validate raised KeyError: left"
    )


@lab_6_4
async def test_a_contract_error_raised_by_a_validator_gives_validation_failed() -> None:
    # Only the harness raises ToolContractError for the caller; a validator that raises one is
    # just a validator that failed, and the model reads it like any other.
    def validate(arguments: object) -> Decision:
        raise ToolContractError("INVALID_TOOL_CALL", "the validator's own mistake")

    executed: list[object] = []

    async def spy(value: object, context: ToolContext) -> object:
        executed.append(value)
        return "ran"

    result = await run(registry_with(tool(validate=validate, execute=spy)), call("echo", {}))
    assert result.is_error
    assert result.content == error_content(
        "TOOL_VALIDATION_FAILED",
        "validate raised ToolContractError: INVALID_TOOL_CALL: the validator's own mistake",
    )
    assert executed == []


@lab_6_4
@pytest.mark.parametrize(
    "decision",
    [
        None,
        True,
        {"ok": True},
        {"ok": False, "error": ""},
        {"ok": False, "error": 3},
        {"ok": 1, "value": 2},
        {"ok": True, "value": 1, "extra": 2},
        {"ok": "true", "value": 1},
        {1: True, "value": 1},
        {"ok": True, "error": "an acceptance needs a value"},
        {"ok": False, "value": 1},
    ],
)
async def test_a_malformed_decision_gives_validation_failed(decision: object) -> None:
    result = await run(registry_with(tool(validate=lambda arguments: decision)), call("echo", {}))
    assert result.content == error_content(
        "TOOL_VALIDATION_FAILED", "validate returned an invalid decision"
    )


AWAITABLE_REFUSED = error_content(
    "TOOL_VALIDATION_FAILED", "validate returned an awaitable; it must decide synchronously"
)


@lab_6_7
async def test_dispose_of_awaitable_closes_cancels_or_observes_and_leaves_the_rest_alone() -> None:
    async def decide() -> Decision:
        return accept({})

    # Each awaitable is cleaned up by the test too, whatever dispose_of_awaitable did (a lab's
    # stub does nothing): a leftover would warn or log in some later test.
    coroutine = decide()
    try:
        dispose_of_awaitable(coroutine)
        assert inspect.getcoroutinestate(coroutine) == inspect.CORO_CLOSED
    finally:
        coroutine.close()
    task = asyncio.ensure_future(asyncio.Event().wait())
    try:
        dispose_of_awaitable(task)
        await asyncio.sleep(0)
        assert task.cancelled()
    finally:
        task.cancel()
        await asyncio.wait({task})
    future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    dispose_of_awaitable(future)
    assert not future.done()  # a plain future is someone else's: observed, not cancelled
    future.set_exception(ValueError("later"))
    await asyncio.sleep(0)  # its done-callback retrieves the exception: nothing is logged
    own = asyncio.current_task()
    assert own is not None
    dispose_of_awaitable(own)
    assert own.cancelling() == 0  # the caller's own task: left alone
    dispose_of_awaitable("not awaitable")  # anything else: nothing happens


@lab_6_7
async def test_a_coroutine_validator_is_refused_and_closed_without_a_warning() -> None:
    made: list[Coroutine[Any, Any, Decision]] = []

    async def decide() -> Decision:
        return accept({})

    def validate(arguments: object) -> object:
        made.append(decide())
        return made[-1]

    executed: list[object] = []

    async def spy(value: object, context: ToolContext) -> object:
        executed.append(value)
        return None

    try:
        result = await run(registry_with(tool(validate=validate, execute=spy)), call("echo", {}))
        assert result.content == AWAITABLE_REFUSED
        # Closed, so collecting it cannot warn "coroutine ... was never awaited".
        assert inspect.getcoroutinestate(made[0]) == inspect.CORO_CLOSED
        assert executed == []
    finally:
        close_all(made)  # if the executor did not (a lab's stub), a later test would see it


def close_all(coroutines: list[Coroutine[Any, Any, Decision]]) -> None:
    """Close coroutines a test made, ignoring what their own cleanup raises."""
    for coroutine in coroutines:
        with contextlib.suppress(Exception):
            coroutine.close()


@contextlib.contextmanager
def loop_reports() -> Iterator[list[dict[str, object]]]:
    """Collect what the running loop would log, such as "exception was never retrieved"."""
    loop = asyncio.get_running_loop()
    reports: list[dict[str, object]] = []
    loop.set_exception_handler(lambda _loop, context: reports.append(context))
    try:
        yield reports
    finally:
        loop.set_exception_handler(None)


async def let_late_reports_happen() -> None:
    """Run pending done callbacks, then collect garbage: a late report is made by now."""
    await asyncio.sleep(0)
    gc.collect()


@lab_6_7
async def test_a_failed_future_from_a_validator_is_observed() -> None:
    def validate(arguments: object) -> object:
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        future.set_exception(RuntimeError("async validator failed"))
        return future

    with loop_reports() as reports:
        result = await run(registry_with(tool(validate=validate)), call("echo", {}))
        await let_late_reports_happen()
    assert result.content == AWAITABLE_REFUSED
    assert reports == []


@lab_6_7
async def test_a_future_that_fails_after_the_refusal_is_observed_and_not_cancelled() -> None:
    pending: list[asyncio.Future[object]] = []

    def validate(arguments: object) -> object:
        pending.append(asyncio.get_running_loop().create_future())  # someone else's
        return pending[-1]

    with loop_reports() as reports:
        result = await run(registry_with(tool(validate=validate)), call("echo", {}))
        assert not pending[0].cancelled(), "a plain future belongs to someone else"
        pending.pop().set_exception(RuntimeError("failed after the refusal"))
        await let_late_reports_happen()
    assert result.content == AWAITABLE_REFUSED
    assert reports == []


@lab_6_7
async def test_refusing_a_future_runs_none_of_its_subclass_methods() -> None:
    called: list[str] = []

    class HostileFuture(asyncio.Future[object]):
        def add_done_callback(self, *args: Any, **kwargs: Any) -> None:
            called.append("add_done_callback")
            raise RuntimeError("no callbacks here")

        def exception(self) -> BaseException | None:
            called.append("exception")
            raise RuntimeError("no exception either")

    def validate(arguments: object) -> object:
        future = HostileFuture(loop=asyncio.get_running_loop())
        future.set_exception(ValueError("failed"))
        return future

    with loop_reports() as reports:
        result = await run(registry_with(tool(validate=validate)), call("echo", {}))
        await let_late_reports_happen()
    assert result.content == AWAITABLE_REFUSED
    assert called == []
    assert reports == []


class StubbornTask(asyncio.Task[object]):
    """A task whose own cancel() refuses: the executor must not rely on a subclass's method."""

    def cancel(self, msg: Any = None) -> bool:
        raise RuntimeError("this task will not be cancelled")


@lab_6_7
@pytest.mark.parametrize("task_type", [asyncio.Task, StubbornTask], ids=["task", "stubborn"])
async def test_a_task_started_by_a_validator_is_cancelled(
    task_type: type[asyncio.Task[object]],
) -> None:
    started: list[asyncio.Task[object]] = []

    def validate(arguments: object) -> object:
        started.append(task_type(asyncio.Event().wait()))
        return started[-1]

    try:
        result = await run(registry_with(tool(validate=validate)), call("echo", {}))
        assert result.content == AWAITABLE_REFUSED
        await asyncio.sleep(0)  # the cancellation is delivered at the task's next step
        assert started[0].cancelled(), "the task the validator started was not cancelled"
    finally:  # if the executor did not (a lab's stub), the loop's teardown would meet it
        for task in started:
            asyncio.Task.cancel(task)
        if started:
            await asyncio.wait(started)


@lab_6_7
async def test_a_validator_that_returns_the_callers_own_task_does_not_cancel_it() -> None:
    # Refused like any awaitable, but not cancelled: cancelling the running task from inside
    # it leaves a cancellation that strikes the caller at some later, unrelated await.
    result = await run(
        registry_with(tool(validate=lambda _: asyncio.current_task())), call("echo", {})
    )
    assert result.content == AWAITABLE_REFUSED
    assert_no_cancellation_is_pending()
    await asyncio.sleep(0)  # would raise CancelledError if a cancellation were pending


@lab_6_7
async def test_the_callers_own_task_returned_by_a_validator_is_not_observed_for_it() -> None:
    # Observing it would mark the caller's own later failure as seen, and asyncio would then
    # never report it.
    async def caller() -> None:
        result = await run(
            registry_with(tool(validate=lambda _: asyncio.current_task())), call("echo", {})
        )
        assert result.content == AWAITABLE_REFUSED
        raise ValueError("the caller's own failure, which nobody retrieves")

    with loop_reports() as reports:
        task = asyncio.create_task(caller())
        await asyncio.wait({task})
        del task
        await let_late_reports_happen()
    assert [report["message"] for report in reports] == ["Task exception was never retrieved"]
    failure = cast(BaseException, reports[0]["exception"])
    if type(failure) is not ValueError:
        raise failure  # what ended the caller instead of its own failure: a lab's stub, say


@lab_6_7
async def test_a_started_coroutine_whose_cleanup_fails_is_still_just_refused() -> None:
    async def decide() -> Decision:
        try:
            await asyncio.sleep(0)
        finally:
            raise ValueError("the cleanup failed")  # runs when the executor closes it

    made: list[Coroutine[Any, Any, Decision]] = []

    def validate(arguments: object) -> object:
        made.append(decide())
        made[-1].send(None)  # started: suspended inside sleep(0)
        return made[-1]

    try:
        result = await run(registry_with(tool(validate=validate)), call("echo", {}))
        assert result.content == AWAITABLE_REFUSED
        assert inspect.getcoroutinestate(made[0]) == inspect.CORO_CLOSED
    finally:
        close_all(made)  # its failing cleanup would otherwise be reported in a later test


@lab_6_7
async def test_a_custom_awaitable_from_a_validator_is_refused() -> None:
    class Later:
        def __await__(self) -> Iterator[None]:
            yield None

    result = await run(registry_with(tool(validate=lambda arguments: Later())), call("echo", {}))
    assert result.content == AWAITABLE_REFUSED


@lab_6_4
async def test_the_validator_gets_a_private_plain_copy_of_the_arguments() -> None:
    def validate(arguments: Any) -> Decision:
        assert arguments == {"left": [1]}
        arguments["left"].append("changed by the validator")
        return accept(arguments)

    proposed = call("echo", {"left": [1]})
    result = await run(registry_with(tool(validate=validate)), proposed)
    assert result.content == '{"left":[1,"changed by the validator"]}'
    assert proposed.arguments == {"left": (1,)}


@lab_6_4
@pytest.mark.parametrize("arguments", [{"left": 1}, {"left": [1]}], ids=["flat", "nested"])
async def test_a_validator_never_changes_the_arguments_of_a_plain_call_dict(
    arguments: dict[str, object],
) -> None:
    def validate(copy: Any) -> Decision:
        assert copy == arguments
        assert copy is not arguments
        copy["added by the validator"] = True
        if type(copy["left"]) is list:
            copy["left"].append("appended by the validator")
        return accept(copy)

    proposed = {"id": "c", "name": "echo", "arguments": arguments}
    before = json.dumps(proposed)
    result = await run(registry_with(tool(validate=validate)), proposed)
    assert '"added by the validator":true' in result.content
    assert json.dumps(proposed) == before


@lab_6_6
async def test_a_failing_tool_gives_execution_failed_without_running_its_str() -> None:
    seen: list[str] = []

    class LoudError(Exception):
        def __str__(self) -> str:
            seen.append("__str__")
            return "loud"

        def __repr__(self) -> str:
            seen.append("__repr__")
            return "loud"

    async def fail(value: object, context: ToolContext) -> object:
        raise LoudError("disk full")

    result = await run(registry_with(tool(execute=fail)), call("echo", {}))
    assert result.content == error_content("TOOL_EXECUTION_FAILED", "LoudError: disk full")
    assert seen == []


@lab_6_4
@pytest.mark.parametrize(
    ("error", "message"),
    [
        (ValueError(), "ValueError"),
        (OSError(2, "No such file"), "FileNotFoundError"),
        (RuntimeError("a\nb"), "RuntimeError: a\nb"),
        (
            ToolContractError("INVALID_TOOL_CALL", "forged"),
            "ToolContractError: INVALID_TOOL_CALL: forged",
        ),
    ],
)
async def test_execution_failure_messages_come_from_the_first_str_argument(
    error: Exception, message: str
) -> None:
    async def fail(value: object, context: ToolContext) -> object:
        raise error

    result = await run(registry_with(tool(execute=fail)), call("echo", {}))
    assert result.content == error_content("TOOL_EXECUTION_FAILED", message)


@lab_6_4
async def test_an_execute_that_returns_no_awaitable_fails_as_a_result() -> None:
    def not_async(value: object, context: ToolContext) -> object:
        return 42

    result = await run(registry_with(tool(execute=not_async)), call("echo", {}))  # type: ignore[arg-type]
    assert result.content == error_content(
        "TOOL_EXECUTION_FAILED", "TypeError: object int can't be used in 'await' expression"
    )


@lab_6_4
async def test_an_unsupported_output_gives_serialization_failed() -> None:
    result = await run_returning({"rows": [{1, 2}]})
    assert result.is_error
    assert result.content == error_content(
        "TOOL_OUTPUT_SERIALIZATION_FAILED", "$.rows[0]: unsupported type set"
    )


@lab_6_4
async def test_a_serializer_error_raised_by_a_tool_or_validator_is_not_an_output_failure() -> None:
    async def raise_it(value: object, context: ToolContext) -> object:
        raise ToolOutputError("raised by the tool")

    def refuse(arguments: object) -> object:
        raise ToolOutputError("raised by the validator")

    from_tool = await run(registry_with(tool(execute=raise_it)), call("echo", {}))
    from_validator = await run(registry_with(tool(validate=refuse)), call("echo", {}))
    assert from_tool.content == error_content(
        "TOOL_EXECUTION_FAILED", "ToolOutputError: raised by the tool"
    )
    assert from_validator.content == error_content(
        "TOOL_VALIDATION_FAILED", "validate raised ToolOutputError: raised by the validator"
    )


@lab_6_5
@pytest.mark.parametrize("where", ["validate", "execute"])
async def test_an_abort_reason_that_is_a_serializer_error_is_raised_untouched(where: str) -> None:
    seen: list[str] = []

    class LoudOutputError(ToolOutputError):
        def __str__(self) -> str:
            seen.append("__str__")
            raise RuntimeError("hijacked")

    controller = AbortController()
    reason = LoudOutputError("stop")

    def validate(arguments: object) -> Decision:
        if where == "validate":
            controller.abort(reason)
        return accept(arguments)

    async def execute(value: object, context: ToolContext) -> object:
        controller.abort(reason)
        return value

    registry = registry_with(tool(validate=validate, execute=execute))
    with pytest.raises(LoudOutputError) as raised:
        await run(registry, call("echo", {}), controller.signal)
    assert raised.value is reason
    assert seen == []


@lab_6_4
@pytest.mark.parametrize(
    ("message", "escaped_as"),
    [("x" * 9000, "x"), ('"' * 9000, '\\"'), ("\u0001" * 9000, "\\u0001")],
    ids=["plain", "quotes", "control-characters"],
)
async def test_a_long_error_message_is_shortened_so_the_content_still_parses(
    message: str, escaped_as: str
) -> None:
    # Cutting the content would cut the JSON inside a string: the message is cut instead, by
    # what its written form (escapes included) did not fit.
    result = await run(
        registry_with(tool(validate=lambda arguments: reject(message))), call("echo", {})
    )
    assert len(result.content) <= MAX_CONTENT_CODE_POINTS
    assert len(result.content) > MAX_CONTENT_CODE_POINTS - len(escaped_as)  # nothing wasted
    error = json.loads(result.content)["error"]
    assert error["code"] == "TOOL_ARGUMENTS_INVALID"
    assert error["message"].endswith(" [message truncated]")
    assert message.startswith(error["message"].removesuffix(" [message truncated]"))


@lab_6_4
async def test_an_error_message_that_just_fits_is_kept_whole_and_one_more_is_shortened() -> None:
    room = MAX_CONTENT_CODE_POINTS - len(error_content("TOOL_ARGUMENTS_INVALID", ""))

    async def content_for(message: str) -> str:
        registry = registry_with(tool(validate=lambda arguments: reject(message)))
        return (await run(registry, call("echo", {}))).content

    whole = await content_for("x" * room)
    assert whole == error_content("TOOL_ARGUMENTS_INVALID", "x" * room)
    assert len(whole) == MAX_CONTENT_CODE_POINTS
    shortened = await content_for("x" * (room + 1))
    assert len(shortened) == MAX_CONTENT_CODE_POINTS
    assert json.loads(shortened)["error"]["message"].endswith("x [message truncated]")


@lab_6_4
@given(message=st.text(min_size=1, max_size=5000))
@settings(max_examples=60, deadline=None)
def test_error_content_always_parses_and_keeps_the_start_of_the_message(message: str) -> None:
    registry = registry_with(tool(validate=lambda arguments: reject(message)))
    content = asyncio.run(run(registry, call("echo", {}))).content
    assert len(content) <= MAX_CONTENT_CODE_POINTS
    shown = json.loads(content)["error"]["message"]
    assert shown == message or message.startswith(shown.removesuffix(" [message truncated]"))


@lab_6_4
@pytest.mark.parametrize(
    ("proposed", "message"),
    [
        (None, "INVALID_TOOL_CALL: call must be a ToolCall or a dict, got NoneType"),
        ([], "INVALID_TOOL_CALL: call must be a ToolCall or a dict, got list"),
        ({"name": "echo", "arguments": {}}, "INVALID_TOOL_CALL: call is missing 'id'"),
        (
            {"id": "c", "name": "echo", "arguments": {}, "extra": 1},
            "INVALID_TOOL_CALL: call has unknown field 'extra'",
        ),
        (
            {"id": "c", "name": "echo", "arguments": {}, 2: 1},
            "INVALID_TOOL_CALL: call keys must be str, got int",
        ),
        (
            {"id": "", "name": "echo", "arguments": {}},
            "INVALID_TOOL_CALL: call id must be a non-empty str",
        ),
        (
            {"id": "c", "name": 5, "arguments": {}},
            "INVALID_TOOL_CALL: call name must be a non-empty str",
        ),
        (
            {"id": "c", "name": "echo", "arguments": []},
            "INVALID_TOOL_CALL: call arguments must be a JSON object: "
            "$: expected a JSON object, got list",
        ),
        (
            {"id": "c", "name": "echo", "arguments": {"x": math.nan}},
            "INVALID_TOOL_CALL: call arguments must be a JSON object: "
            "$.x: NaN is not a JSON number",
        ),
    ],
)
async def test_a_malformed_call_raises_before_any_lookup(
    proposed: object, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked_at: list[object] = []
    registry = registry_with(tool(validate=looked_at.append))
    monkeypatch.setattr(ToolRegistry, "get", lambda _registry, name: looked_at.append(name))
    with raises_exactly(ToolContractError, message):
        await run(registry, proposed)
    assert looked_at == []


@lab_6_6
@pytest.mark.parametrize(
    ("proposed", "message"),
    [
        (
            {"id": PosingKey("c"), "name": "echo", "arguments": {}},
            "INVALID_TOOL_CALL: call id must be a non-empty str",
        ),
        (
            {"id": "c", "name": PosingKey("echo"), "arguments": {}},
            "INVALID_TOOL_CALL: call name must be a non-empty str",
        ),
    ],
    ids=["id", "name"],
)
async def test_a_str_subclass_id_or_name_of_a_call_is_refused_before_any_lookup(
    proposed: object, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Exact str: the id and the name end up in the published result, where a subclass's own
    # __eq__ and __hash__ would answer for them.
    looked_at: list[object] = []
    registry = registry_with(tool(validate=looked_at.append))
    monkeypatch.setattr(ToolRegistry, "get", lambda _registry, name: looked_at.append(name))
    with raises_exactly(ToolContractError, message):
        await run(registry, proposed)
    assert looked_at == []


class RecordingDict(dict[str, object]):
    """A dict subclass that records every method a reader calls on it."""

    def __init__(self, **fields: object) -> None:
        super().__init__(**fields)
        self.calls: list[str] = []

    def __iter__(self) -> Iterator[str]:
        self.calls.append("__iter__")
        return super().__iter__()

    def items(self) -> Any:
        self.calls.append("items")
        return super().items()

    def keys(self) -> Any:
        self.calls.append("keys")
        return super().keys()

    def copy(self) -> dict[str, object]:
        self.calls.append("copy")
        return {"left": "not what the dict holds"}


@lab_6_6
async def test_a_call_with_a_posing_key_is_refused_before_comparing_any_key() -> None:
    key = PosingKey("id")
    proposed: dict[object, object] = {key: "c", "name": "echo", "arguments": {}}
    key.seen.clear()
    with raises_exactly(
        ToolContractError, "INVALID_TOOL_CALL: call keys must be str, got PosingKey"
    ):
        await run(registry_with(tool()), proposed)
    assert key.seen == []


def hand_made_call(arguments: dict[str, object]) -> ToolCall:
    """Return a ToolCall built with its constructor, around a mapping nobody snapshotted."""
    forged = cast(JsonObject, types.MappingProxyType(arguments))
    return ToolCall(id="c", name="echo", arguments=forged)


def cyclic_arguments() -> dict[str, object]:
    arguments: dict[str, object] = {}
    arguments["self"] = types.MappingProxyType(arguments)
    return arguments


@lab_6_6
@pytest.mark.parametrize(
    ("arguments", "refused"),
    [
        (
            {"left": [1]},
            (
                "INVALID_TOOL_CALL: call arguments must be a JSON object snapshot "
                "(see ToolCall.create): "
                "list is not part of a JSON snapshot"
            ),
        ),
        (
            {"left": {"nested": 1}},
            (
                "INVALID_TOOL_CALL: call arguments must be a JSON object snapshot "
                "(see ToolCall.create): "
                "dict is not part of a JSON snapshot"
            ),
        ),
        (
            {"x": math.nan},
            (
                "INVALID_TOOL_CALL: call arguments must be a JSON object: "
                "$.x: NaN is not a JSON number"
            ),
        ),
        (
            {1: "key"},
            (
                "INVALID_TOOL_CALL: call arguments must be a JSON object snapshot "
                "(see ToolCall.create): "
                "the keys of a JSON snapshot are exact str"
            ),
        ),
        (
            cyclic_arguments(),
            (
                "INVALID_TOOL_CALL: call arguments must be a JSON object snapshot "
                "(see ToolCall.create): "
                "more values than max_nodes=100000: not a JSON snapshot (a cycle?)"
            ),
        ),
    ],
    ids=["mutable-list", "mutable-dict", "nan", "int-key", "cycle"],
)
async def test_a_hand_made_tool_call_is_checked_like_a_dict_call(
    arguments: dict[str, object], refused: str
) -> None:
    # ToolCall's constructor checks only that arguments is a mappingproxy; ToolCall.create is
    # the door for plain data. What the mappingproxy wraps must be a snapshot (thaw_json says
    # so), and is then checked exactly as a dict call's arguments are.
    validated: list[object] = []

    def validate(arguments: object) -> Decision:
        validated.append(arguments)
        return accept(arguments)

    registry = registry_with(tool(validate=validate))
    with raises_exactly(ToolContractError, refused):
        await run(registry, hand_made_call(arguments))
    assert validated == []


@lab_6_6
@pytest.mark.parametrize(
    ("field", "forged", "refused"),
    [
        ("id", ["c"], "INVALID_TOOL_CALL: call id must be a non-empty str"),
        ("id", PosingKey("c"), "INVALID_TOOL_CALL: call id must be a non-empty str"),
        ("name", "", "INVALID_TOOL_CALL: call name must be a non-empty str"),
        ("name", PosingKey("echo"), "INVALID_TOOL_CALL: call name must be a non-empty str"),
    ],
)
async def test_a_tool_call_forged_after_it_was_made_is_refused_before_any_lookup(
    field: str, forged: object, refused: str
) -> None:
    proposed = hand_made_call({"x": [1]})  # its arguments would be refused too, but later
    object.__setattr__(proposed, field, forged)  # what a frozen record cannot stop
    validated: list[object] = []
    registry = registry_with(tool(validate=validated.append))
    with raises_exactly(ToolContractError, refused):
        await run(registry, proposed)
    assert validated == []


@lab_6_6
async def test_a_tool_call_around_a_dict_subclass_is_refused_without_running_it() -> None:
    arguments = RecordingDict(left=1)
    with raises_exactly(
        ToolContractError,
        "INVALID_TOOL_CALL: call arguments must be a JSON object snapshot (see ToolCall.create): "
        "a read-only mapping of a JSON snapshot wraps a plain dict",
    ):
        await run(registry_with(tool()), hand_made_call(arguments))
    assert arguments.calls == []


@lab_6_6
@pytest.mark.parametrize(
    ("where", "refused"),
    [
        (
            "key",
            (
                "INVALID_TOOL_CALL: call arguments must be a JSON object: "
                "$: object keys must be str, got Odd"
            ),
        ),
        (
            "value",
            (
                "INVALID_TOOL_CALL: call arguments must be a JSON object: "
                "$.x: Odd is not a JSON type"
            ),
        ),
        (
            "nested value",
            (
                "INVALID_TOOL_CALL: call arguments must be a JSON object: "
                "$.x[1]: Odd is not a JSON type"
            ),
        ),
        (
            "hand-made ToolCall",
            (
                "INVALID_TOOL_CALL: call arguments must be a JSON object snapshot "
                "(see ToolCall.create): "
                "Odd is not part of a JSON snapshot"
            ),
        ),
    ],
    ids=["key", "value", "nested-value", "hand-made-tool-call"],
)
async def test_call_arguments_are_refused_without_asking_their_metaclass_anything(
    where: str, refused: str
) -> None:
    # The refusal names the type: read through `type`'s own descriptor, not type(x).__name__,
    # which a metaclass answers (and could answer by raising, out of the contract).
    odd, asked = support.watched_class_instance()
    proposed: object = {
        "key": {"id": "c", "name": "echo", "arguments": {odd: 1}},
        "value": {"id": "c", "name": "echo", "arguments": {"x": odd}},
        "nested value": {"id": "c", "name": "echo", "arguments": {"x": [1, odd]}},
        "hand-made ToolCall": hand_made_call({"x": odd}),
    }[where]
    validated: list[object] = []
    with raises_exactly(ToolContractError, refused):
        await run(registry_with(tool(validate=validated.append)), proposed)
    assert asked == []
    assert validated == []


@lab_6_4
async def test_a_tool_call_made_by_create_gives_the_validator_a_private_copy() -> None:
    shared: list[object] = [1]
    proposed = ToolCall.create(id="c", name="echo", arguments={"left": shared, "n": {"k": 2}})

    def validate(arguments: Any) -> Decision:
        assert arguments == {"left": [1], "n": {"k": 2}}
        assert type(arguments["left"]) is list
        assert type(arguments["n"]) is dict
        arguments["left"].append("changed by the validator")
        return accept(arguments)

    result = await run(registry_with(tool(validate=validate)), proposed)
    assert result.content == '{"left":[1,"changed by the validator"],"n":{"k":2}}'
    assert proposed.arguments == {"left": (1,), "n": {"k": 2}}
    assert shared == [1]


@lab_6_6
async def test_a_call_object_that_lies_about_its_type_is_refused() -> None:
    class Meta(type):
        @property
        def __name__(cls) -> str:  # type: ignore[override]
            raise AssertionError("the metaclass was asked")

    class Shape(metaclass=Meta):
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            return ToolCall

    with raises_exactly(
        ToolContractError, "INVALID_TOOL_CALL: call must be a ToolCall or a dict, got Shape"
    ):
        await run(registry_with(tool()), Shape())


@lab_6_4
async def test_registry_and_signal_must_be_the_real_types() -> None:
    with raises_exactly(TypeError, "registry must be a ToolRegistry, got dict"):
        await execute_tool_call({}, call("echo", {}), AbortController().signal)  # type: ignore[arg-type]
    with raises_exactly(TypeError, "signal must be an AbortSignal, got NoneType"):
        await execute_tool_call(ToolRegistry(), call("echo", {}), None)  # type: ignore[arg-type]


# --- cancellation at every boundary ----------------------------------------------------------


class StopError(Exception):
    """An abort reason that is an exception: it is raised as it is."""


@lab_6_5
async def test_an_aborted_signal_stops_the_call_before_anything_runs() -> None:
    controller = AbortController()
    reason = StopError("user pressed stop")
    controller.abort(reason)
    looked_at: list[object] = []
    registry = registry_with(tool(validate=looked_at.append))
    with pytest.raises(StopError) as raised:
        await run(registry, "not even a call", controller.signal)
    assert raised.value is reason
    assert looked_at == []


@lab_6_5
async def test_a_reason_that_is_not_an_exception_raises_abort_error() -> None:
    controller = AbortController()
    controller.abort("timeout")
    with pytest.raises(AbortError) as raised:
        await run(registry_with(tool()), call("echo", {}), controller.signal)
    assert raised.value.reason == "timeout"


@lab_6_5
@pytest.mark.parametrize("decision", [accept({}), reject("no")])
async def test_an_abort_during_validation_publishes_nothing_and_runs_nothing(
    decision: Decision,
) -> None:
    controller = AbortController()
    executed: list[object] = []

    def validate(arguments: object) -> Decision:
        controller.abort(StopError("during validation"))
        return decision

    async def spy(value: object, context: ToolContext) -> object:
        executed.append(value)
        return None

    with raises_exactly(StopError, "during validation"):
        await run(
            registry_with(tool(validate=validate, execute=spy)), call("echo", {}), controller.signal
        )
    assert executed == []


@lab_6_5
async def test_an_abort_while_the_tool_waits_cancels_it_and_waits_for_its_cleanup() -> None:
    controller = AbortController()
    started, events = asyncio.Event(), []

    async def slow(value: object, context: ToolContext) -> object:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            events.append("tool cancelled")
            raise
        finally:
            events.append("tool cleaned up")
        return "never"

    registry = registry_with(tool(execute=slow))
    pending = await start_call(registry, call("echo", {}), controller.signal, started)
    reason = StopError("stop now")
    controller.abort(reason)
    with pytest.raises(StopError) as raised:
        await pending
    assert raised.value is reason
    assert events == ["tool cancelled", "tool cleaned up"]
    assert controller.signal.listener_count == 0


@lab_6_4
async def test_the_tool_gets_a_frozen_context_with_the_same_signal_and_its_own_call_id() -> None:
    controller = AbortController()
    seen: list[ToolContext] = []

    async def look(value: object, context: ToolContext) -> object:
        seen.append(context)
        return None

    await run(registry_with(tool(execute=look)), call("echo", {}, "c-9"), controller.signal)
    [context] = seen
    assert type(context) is ToolContext
    # Exactly the record the public constructor makes, and as frozen.
    assert context == ToolContext(signal=controller.signal, tool_call_id="c-9")
    assert context.signal is controller.signal
    with pytest.raises(AttributeError):
        context.tool_call_id = "c-10"  # type: ignore[misc]


@lab_6_5
async def test_an_abort_just_before_the_tool_returns_wins_and_leaves_no_stray_cancellation() -> (
    None
):
    controller = AbortController()

    async def abort_then_return(value: object, context: ToolContext) -> object:
        controller.abort(StopError("late"))  # from inside the running task: the dangerous case
        return "finished anyway"

    with raises_exactly(StopError, "late"):
        await run(
            registry_with(tool(execute=abort_then_return)), call("echo", {}), controller.signal
        )
    await asyncio.sleep(0)  # a stray cancel of this task would surface here
    await asyncio.sleep(0)
    assert_no_cancellation_is_pending()


@lab_6_5
@pytest.mark.parametrize("waits", [False, True], ids=["returns-at-once", "waits-first"])
async def test_an_abort_wins_over_a_fatal_error_raised_after_it(waits: bool) -> None:
    controller = AbortController()

    async def abort_then_fail(value: object, context: ToolContext) -> object:
        if waits:
            await asyncio.sleep(0)
        controller.abort(StopError("stopped first"))
        raise NonRecoverableToolError("failed after the abort")

    with raises_exactly(StopError, "stopped first"):
        await run(registry_with(tool(execute=abort_then_fail)), call("echo", {}), controller.signal)
    assert_no_cancellation_is_pending()


@lab_6_5
async def test_a_call_nested_on_the_same_signal_lets_the_cancellation_through() -> None:
    # A tool that runs another call on its own signal, as a sub-agent tool would. On abort,
    # both guards cancel the one task. The inner guard sees a cancellation it did not cause
    # (the outer one's) and lets CancelledError through, as nested asyncio.timeout blocks do;
    # the outer call, the one its caller awaits, raises the abort reason.
    controller = AbortController()
    started = asyncio.Event()
    inner_saw: list[str] = []

    async def wait_forever(value: object, context: ToolContext) -> object:
        started.set()
        await asyncio.Event().wait()
        return "never"

    inner = ToolRegistry([tool("inner", execute=wait_forever)])

    async def delegate(value: object, context: ToolContext) -> object:
        try:
            return await execute_tool_call(inner, call("inner", {}), context.signal)
        except BaseException as exc:
            inner_saw.append(type(exc).__name__)
            raise

    registry = registry_with(tool("outer", execute=delegate))
    pending = await start_call(registry, call("outer", {}), controller.signal, started)
    controller.abort(StopError("stop both"))
    with raises_exactly(StopError, "stop both"):
        await pending
    assert inner_saw == ["CancelledError"]
    assert_no_cancellation_is_pending()


@lab_6_5
async def test_a_tool_that_swallows_the_cancellation_still_publishes_nothing() -> None:
    controller = AbortController()
    started = asyncio.Event()

    async def stubborn(value: object, context: ToolContext) -> object:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return "ignored the cancellation"
        return "never"

    registry = registry_with(tool(execute=stubborn))
    pending = await start_call(registry, call("echo", {}), controller.signal, started)
    controller.abort(StopError("stop"))
    with pytest.raises(StopError):
        await pending


@lab_6_5
async def test_a_tool_that_swallows_the_cancellation_and_waits_again_holds_the_call() -> None:
    # The guard cancels once, as asyncio.timeout does; it cannot force a tool that catches
    # CancelledError and waits again. The call waits for the tool, then raises the reason.
    controller = AbortController()
    started, swallowed, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def stubborn(value: object, context: ToolContext) -> object:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            swallowed.set()
        await release.wait()  # waits again, and is not cancelled a second time
        return "finished after the abort"

    registry = registry_with(tool(execute=stubborn))
    pending = await start_call(registry, call("echo", {}), controller.signal, started)
    controller.abort(StopError("stop"))
    await swallowed.wait()
    for _ in range(5):
        await asyncio.sleep(0)
    assert not pending.done()  # still running: nothing forced the tool to stop
    release.set()
    with raises_exactly(StopError, "stop"):
        await pending  # and once it ends, the abort wins: nothing is published
    assert controller.signal.listener_count == 0


@lab_6_5
async def test_an_abort_after_serialization_publishes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    controller = AbortController()
    real = serialize_output

    def serialize_then_abort(output: object) -> str:
        content = real(output)
        controller.abort(StopError("after serialization"))
        return content

    monkeypatch.setattr(tool_module, "serialize_output", serialize_then_abort)
    with raises_exactly(StopError, "after serialization"):
        await run(registry_with(tool()), call("echo", {}), controller.signal)


@lab_6_5
async def test_cancelling_the_callers_task_cancels_the_tool_and_propagates() -> None:
    controller = AbortController()
    started, events = asyncio.Event(), []

    async def slow(value: object, context: ToolContext) -> object:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            events.append("tool cleaned up")
        return "never"

    registry = registry_with(tool(execute=slow))
    pending = await start_call(registry, call("echo", {}), controller.signal, started)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    assert events == ["tool cleaned up"]
    assert controller.signal.listener_count == 0
    assert not controller.signal.aborted


@lab_6_5
async def test_the_callers_cancellation_wins_even_if_the_tool_swallows_it() -> None:
    started = asyncio.Event()

    async def stubborn(value: object, context: ToolContext) -> object:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return "ignored"
        return "never"

    registry = registry_with(tool(execute=stubborn))
    pending = await start_call(registry, call("echo", {}), AbortController().signal, started)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending


@lab_6_5
async def test_the_callers_cancellation_wins_even_if_the_tool_turns_it_into_an_error() -> None:
    started = asyncio.Event()

    async def clumsy(value: object, context: ToolContext) -> object:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            raise ValueError("cleanup failed")  # replaces the CancelledError on its way out

    registry = registry_with(tool(execute=clumsy))
    pending = await start_call(registry, call("echo", {}), AbortController().signal, started)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):  # not a TOOL_EXECUTION_FAILED result
        await pending


@lab_6_5
async def test_when_caller_and_signal_both_cancel_the_callers_cancellation_propagates() -> None:
    controller = AbortController()
    started = asyncio.Event()

    async def slow(value: object, context: ToolContext) -> object:
        started.set()
        await asyncio.Event().wait()
        return "never"

    registry = registry_with(tool(execute=slow))
    pending = await start_call(registry, call("echo", {}), controller.signal, started)
    controller.abort(StopError("stop"))
    await asyncio.sleep(0)  # the abort's cancel lands first
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending


@lab_6_5
async def test_a_waiting_tool_is_watched_by_one_listener_and_none_is_left_after() -> None:
    controller = AbortController()
    counts: list[int] = []

    async def count_listeners(value: object, context: ToolContext) -> object:
        await asyncio.sleep(0)
        counts.append(context.signal.listener_count)  # while it waits, an abort must reach it
        return "done"

    result = await run(
        registry_with(tool(execute=count_listeners)), call("echo", {}), controller.signal
    )
    assert (result.content, counts) == ("done", [1])
    assert controller.signal.listener_count == 0


@lab_6_5
async def test_a_tool_that_waits_gets_every_value_and_error_it_awaits() -> None:
    loop = asyncio.get_running_loop()

    async def several_waits(value: object, context: ToolContext) -> object:
        seen: list[object] = []
        await asyncio.sleep(0)  # a bare yield to the loop
        ready: asyncio.Future[int] = loop.create_future()
        loop.call_soon(ready.set_result, 7)
        seen.append(await ready)
        failing: asyncio.Future[int] = loop.create_future()
        loop.call_soon(failing.set_exception, KeyError("k"))
        try:
            await failing
        except KeyError as exc:
            seen.append(f"caught {exc.args[0]}")
        seen.append(await asyncio.wait_for(asyncio.sleep(0, result="slept"), timeout=5))
        return seen

    result = await run(registry_with(tool(execute=several_waits)), call("echo", {}))
    assert result.content == '[7,"caught k","slept"]'


@lab_6_5
async def test_a_tool_that_aborts_and_then_waits_is_cancelled_at_that_wait() -> None:
    controller = AbortController()
    events: list[str] = []

    async def abort_then_wait(value: object, context: ToolContext) -> object:
        controller.abort(StopError("from the tool"))
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            events.append("cancelled")
            raise
        return "never"

    registry = registry_with(tool(execute=abort_then_wait))
    with raises_exactly(StopError, "from the tool"):
        async with asyncio.timeout(5):  # a guard that never cancels fails here, not by hanging
            await run(registry, call("echo", {}), controller.signal)
    assert events == ["cancelled"]
    assert_no_cancellation_is_pending()


@lab_6_5
async def test_a_cancelled_tool_may_still_await_while_it_cleans_up() -> None:
    controller = AbortController()
    started, events = asyncio.Event(), []

    async def tidy(value: object, context: ToolContext) -> object:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0)  # cleanup that waits, after the cancellation was thrown in
            events.append("cleaned up after a wait")
        return "never"

    registry = registry_with(tool(execute=tidy))
    pending = await start_call(registry, call("echo", {}), controller.signal, started)
    controller.abort(StopError("stop"))
    with pytest.raises(StopError):
        await pending
    assert events == ["cleaned up after a wait"]


@lab_6_5
async def test_an_execute_that_returns_a_future_is_awaited_and_cancelled_on_abort() -> None:
    loop = asyncio.get_running_loop()
    controller = AbortController()
    futures: list[asyncio.Future[object]] = []

    def hand_back_a_future(value: object, context: ToolContext) -> asyncio.Future[object]:
        futures.append(loop.create_future())
        return futures[-1]

    async def started(proposed: object, signal: AbortSignal) -> asyncio.Task[ToolResultMessage]:
        task = asyncio.create_task(run(registry, proposed, signal))
        await asyncio.sleep(0)  # the call runs up to the future its tool handed back
        if task.done():
            task.result()  # it ended first (a lab's stub, say): fail with what ended it
        return task

    registry = registry_with(tool(execute=hand_back_a_future))
    done = await started(call("echo", {}), AbortController().signal)
    futures[0].set_result({"from": "future"})
    assert (await done).content == '{"from":"future"}'

    pending = await started(call("echo", {}), controller.signal)
    controller.abort(StopError("stop"))
    with pytest.raises(StopError):
        await pending
    assert futures[1].cancelled()


@lab_6_4
def test_outside_an_event_loop_the_call_raises_before_the_tool_runs() -> None:
    ran: list[str] = []

    async def record(value: object, context: ToolContext) -> object:
        ran.append("tool")
        return "ran"

    driven = execute_tool_call(
        registry_with(tool(execute=record)), call("echo", {}), AbortController().signal
    )
    with pytest.raises(RuntimeError) as raised:
        driven.send(None)  # a plain send, as a framework other than asyncio would drive it
    if type(raised.value) is not RuntimeError:
        raise raised.value  # a subclass, such as a lab stub's NotImplementedError
    assert str(raised.value) == "no running event loop"
    assert ran == []


@lab_6_6
@pytest.mark.parametrize("waits", [False, True], ids=["returns-at-once", "waits-first"])
async def test_driven_from_a_bare_loop_callback_the_guard_refuses_before_the_tool_runs(
    waits: bool,
) -> None:
    # Not supported, and written down: a loop callback is not a task, so CancelOnAbort has no
    # task to cancel. It refuses on entry, before any tool code runs, as the page says.
    ran: list[str] = []

    async def wait_once(value: object, context: ToolContext) -> object:
        ran.append("first step")
        if waits:
            await asyncio.sleep(0)
        return "ran"

    driven = execute_tool_call(
        registry_with(tool(execute=wait_once)), call("echo", {}), AbortController().signal
    )
    results: list[ToolResultMessage] = []
    loop = asyncio.get_running_loop()
    driving_done: asyncio.Future[BaseException | None] = loop.create_future()

    def drive() -> None:  # a loop callback, not a task
        try:
            driven.send(None)
        except StopIteration as finished:
            results.append(finished.value)
        except BaseException as exc:  # a lab's stub, say: the test fails with it, below
            driving_done.set_result(exc)
            return
        driving_done.set_result(None)

    loop.call_soon(drive)
    failure = await driving_done
    if failure is not None:
        raise failure
    assert ran == []
    assert [r.content for r in results] == [
        error_content(
            "TOOL_EXECUTION_FAILED",
            "RuntimeError: CancelOnAbort must be entered inside an asyncio task",
        )
    ]


class Halt(BaseException):
    """A BaseException that is not an Exception, like KeyboardInterrupt or SystemExit."""


@lab_6_5
@pytest.mark.parametrize("error", [Halt("halt"), asyncio.CancelledError()])
async def test_base_exceptions_from_the_tool_are_never_results(error: BaseException) -> None:
    async def raise_it(value: object, context: ToolContext) -> object:
        raise error

    with pytest.raises(type(error)) as raised:
        await run(registry_with(tool(execute=raise_it)), call("echo", {}))
    assert raised.value is error


@lab_6_5
@pytest.mark.parametrize("error", [Halt("halt"), asyncio.CancelledError()])
async def test_base_exceptions_from_the_validator_are_never_results(error: BaseException) -> None:
    def raise_it(arguments: object) -> Decision:
        raise error

    with pytest.raises(type(error)) as raised:
        await run(registry_with(tool(validate=raise_it)), call("echo", {}))
    assert raised.value is error


# --- CancelOnAbort, the guard around the tool's await ------------------------------------------


@lab_6_5
async def test_an_abort_inside_the_block_stops_the_work_and_the_block_swallows_it() -> None:
    controller = AbortController()
    stopped: list[str] = []

    async def work() -> None:
        controller.abort()  # from inside the very task that the block guards
        try:
            await asyncio.Event().wait()  # never set: only the cancellation ends it
        finally:
            stopped.append("cleaned up")

    async with asyncio.timeout(5):  # a guard that never cancels fails here, not by hanging
        with CancelOnAbort(controller.signal):
            await work()
    assert stopped == ["cleaned up"]
    assert_no_cancellation_is_pending()  # taken back: nothing strikes this task later


@lab_6_5
async def test_a_signal_aborted_before_the_block_cancels_the_first_wait_inside_it() -> None:
    controller = AbortController()
    controller.abort()  # add_listener then calls the listener at once, during entry
    stopped: list[str] = []

    async with asyncio.timeout(5):  # a guard that never cancels fails here, not by hanging
        with CancelOnAbort(controller.signal):
            try:
                await asyncio.Event().wait()
            finally:
                stopped.append("cleaned up")
    assert stopped == ["cleaned up"]
    assert_no_cancellation_is_pending()


@lab_6_5
async def test_an_abort_just_before_the_block_exits_leaves_no_stray_cancellation() -> None:
    controller = AbortController()
    with CancelOnAbort(controller.signal):
        controller.abort()  # the block ends before the next loop turn, where a cancel would land
    await asyncio.sleep(0)  # a stray cancellation of this task would strike here...
    await asyncio.sleep(0)  # ...or here
    assert_no_cancellation_is_pending()


@lab_6_5
async def test_an_error_that_replaces_the_blocks_own_cancellation_passes_through() -> None:
    controller = AbortController()

    async def clean_up_badly() -> None:
        async with asyncio.timeout(5):  # a guard that never cancels fails here, not by hanging
            with CancelOnAbort(controller.signal):
                controller.abort()
                try:
                    await asyncio.Event().wait()
                finally:
                    raise ValueError("cleanup failed")  # only CancelledError is the block's

    with raises_exactly(ValueError, "cleanup failed"):
        await clean_up_badly()
    assert_no_cancellation_is_pending()


@lab_6_5
async def test_cancel_on_abort_is_single_use_and_its_repr_shows_its_state() -> None:
    signal = AbortController().signal
    guard = CancelOnAbort(signal)
    assert repr(guard) == "<CancelOnAbort ready>"
    assert signal.listener_count == 0  # nothing is watched until the block is entered
    with guard:
        assert repr(guard) == "<CancelOnAbort watching>"
        assert signal.listener_count == 1
        with raises_exactly(RuntimeError, "CancelOnAbort is single use; this one is watching"):
            guard.__enter__()
    assert repr(guard) == "<CancelOnAbort closed>"
    assert signal.listener_count == 0
    with raises_exactly(RuntimeError, "CancelOnAbort is single use; this one is closed"):
        guard.__enter__()
    with raises_exactly(RuntimeError, "CancelOnAbort cannot exit: it is closed"):
        guard.__exit__(None, None, None)
    with raises_exactly(RuntimeError, "CancelOnAbort cannot exit: it is ready"):
        CancelOnAbort(AbortController().signal).__exit__(None, None, None)


@lab_6_5
async def test_cancel_on_abort_must_be_entered_inside_a_task() -> None:
    loop = asyncio.get_running_loop()
    outcome: asyncio.Future[None] = loop.create_future()

    def enter_from_a_callback() -> None:  # the loop runs it, outside any task
        try:
            with CancelOnAbort(AbortController().signal):
                pass
        except BaseException as exc:  # handed to the test, whatever it is
            outcome.set_exception(exc)
        else:
            outcome.set_result(None)

    loop.call_soon(enter_from_a_callback)
    with pytest.raises(RuntimeError) as raised:
        await outcome
    if type(raised.value) is NotImplementedError:
        raise raised.value  # a RuntimeError too: a lab's stub, not the error wanted here
    assert str(raised.value) == "CancelOnAbort must be entered inside an asyncio task"


def test_cancel_on_abort_needs_a_real_signal() -> None:  # given code: no lab
    with raises_exactly(TypeError, "signal must be an AbortSignal, got AbortController"):
        CancelOnAbort(AbortController())  # type: ignore[arg-type]


# --- fatal errors: genuine versus look-alike -------------------------------------------------


async def raising(error: BaseException) -> ToolResultMessage:
    async def fail(value: object, context: ToolContext) -> object:
        raise error

    return await run(registry_with(tool(execute=fail)), call("echo", {}))


@lab_6_4
async def test_a_genuine_non_recoverable_error_escapes_as_the_same_object() -> None:
    fatal = NonRecoverableToolError("workspace corrupted")
    with pytest.raises(NonRecoverableToolError) as raised:
        await raising(fatal)
    assert raised.value is fatal


@lab_6_4
async def test_a_subclass_that_calls_the_real_constructor_is_genuine() -> None:
    class DiskLostError(NonRecoverableToolError):
        def __init__(self) -> None:
            super().__init__("disk lost")

    fatal = DiskLostError()
    with pytest.raises(DiskLostError):
        await raising(fatal)


@lab_6_6
async def test_an_instance_made_without_the_constructor_is_an_ordinary_failure() -> None:
    forged = NonRecoverableToolError.__new__(NonRecoverableToolError, "forged")
    assert isinstance(forged, NonRecoverableToolError)  # isinstance is no brand check
    result = await raising(forged)
    assert result.content == error_content(
        "TOOL_EXECUTION_FAILED", "NonRecoverableToolError: forged"
    )


@lab_6_6
async def test_the_constructor_cannot_be_borrowed_by_another_exception() -> None:
    other = ValueError("other")
    with raises_exactly(
        TypeError,
        "NonRecoverableToolError.__init__ needs a NonRecoverableToolError, got ValueError",
    ):
        NonRecoverableToolError.__init__(other, "borrowed")  # type: ignore[arg-type]
    result = await raising(other)
    assert result.content == error_content("TOOL_EXECUTION_FAILED", "ValueError: other")


@lab_6_6
async def test_a_faked_class_cannot_borrow_the_constructor_either() -> None:
    # super() alone would accept this `self`: it falls back to the faked __class__.
    class ImpostorError(Exception):
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            return NonRecoverableToolError

    impostor = ImpostorError("pretending")
    with raises_exactly(
        TypeError,
        "NonRecoverableToolError.__init__ needs a NonRecoverableToolError, got ImpostorError",
    ):
        NonRecoverableToolError.__init__(impostor, "borrowed")  # type: ignore[arg-type]
    result = await raising(impostor)
    assert result.content == error_content("TOOL_EXECUTION_FAILED", "ImpostorError: pretending")


@lab_6_6
async def test_a_subclass_that_skips_the_constructor_is_an_ordinary_failure() -> None:
    class LazyError(NonRecoverableToolError):
        def __init__(self) -> None:
            Exception.__init__(self, "lazy")

    assert (await raising(LazyError())).content == error_content(
        "TOOL_EXECUTION_FAILED", "LazyError: lazy"
    )


@lab_6_6
async def test_a_faked_class_is_an_ordinary_failure() -> None:
    class ImpostorError(Exception):
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            return NonRecoverableToolError

    impostor = ImpostorError("pretending")
    assert isinstance(impostor, NonRecoverableToolError)
    result = await raising(impostor)
    assert result.content == error_content("TOOL_EXECUTION_FAILED", "ImpostorError: pretending")


@lab_6_6
async def test_copied_names_and_fields_are_an_ordinary_failure() -> None:
    genuine = NonRecoverableToolError("real")
    copied = type("NonRecoverableToolError", (Exception,), {})("copy")
    vars(copied).update(vars(genuine))
    result = await raising(copied)
    assert result.content == error_content("TOOL_EXECUTION_FAILED", "NonRecoverableToolError: copy")


@contextlib.contextmanager
def reloaded_tool_module() -> Iterator[Any]:
    """Reload harness.tool (new classes, new functions); restore the old namespace afterwards."""
    saved = dict(vars(tool_module))
    try:
        yield importlib.reload(tool_module)
    finally:
        vars(tool_module).clear()
        vars(tool_module).update(saved)


@lab_6_6
async def test_genuine_errors_are_recognised_across_a_module_reload() -> None:
    made_before = NonRecoverableToolError("made before the reload")
    with reloaded_tool_module() as fresh:
        assert fresh.NonRecoverableToolError is not NonRecoverableToolError
        made_after = fresh.NonRecoverableToolError("made by the new class")
        # A tool module imported before the reload still holds the old class, and uses it.
        made_by_old_class = NonRecoverableToolError("made by the old class after the reload")
        for fatal in (made_before, made_after, made_by_old_class):

            async def fail(value: object, context: Any, fatal: BaseException = fatal) -> object:
                raise fatal

            registry = fresh.ToolRegistry([tool(execute=fail)])
            with pytest.raises(Exception) as raised:
                await fresh.execute_tool_call(registry, call("echo", {}), AbortController().signal)
            if raised.value is not fatal:
                raise raised.value  # something else ended the call: fail with it


# --- many calls at once ----------------------------------------------------------------------


@lab_6_4
async def test_two_hundred_concurrent_calls_each_get_their_own_result() -> None:
    gate = asyncio.Event()
    arrived = 0

    async def wait_then_echo(value: dict[str, object], context: ToolContext) -> object:
        nonlocal arrived
        arrived += 1
        if arrived == 200:
            gate.set()
        await gate.wait()  # every call is in flight before any returns
        return {"seen": value["n"], "id": context.tool_call_id}

    registry = registry_with(tool(execute=wait_then_echo))
    signal = AbortController().signal
    calls = [call("echo", {"n": n}, f"call-{n}") for n in range(200)]
    results = await asyncio.gather(
        *(execute_tool_call(registry, c, signal) for c in reversed(calls))
    )
    for n, result in enumerate(reversed(results)):
        assert (result.tool_call_id, result.is_error) == (f"call-{n}", False)
        assert result.content == f'{{"id":"call-{n}","seen":{n}}}'
    assert signal.listener_count == 0


# --- properties over generated calls ---------------------------------------------------------


proposals = st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=8),
        "name": st.sampled_from(["echo", "fail", "refuse", "missing"]),
        "arguments": st.dictionaries(st.text(max_size=6), json_values, max_size=5),
    }
)


async def fail_always(value: object, context: ToolContext) -> object:
    raise RuntimeError("x" * 5000)


def contract_registry() -> ToolRegistry:
    return registry_with(
        tool("echo"),
        tool("fail", execute=fail_always),
        tool(
            "refuse", validate=lambda arguments: reject("refused: " + json.dumps(arguments)[:9000])
        ),
    )


@lab_6_4
def test_every_call_gets_a_bounded_deterministic_result_linked_to_it() -> None:
    # One call first, outside the property: an unfinished lab fails here, at once, instead of
    # inside hypothesis, whose search for a smaller failure is slow on a busy machine.
    registry = contract_registry()
    asyncio.run(run(registry, {"id": "probe", "name": "echo", "arguments": {}}))

    @settings(max_examples=60, deadline=None)
    @given(proposals)
    def linked_and_bounded(proposed: dict[str, Any]) -> None:
        with asyncio.Runner() as runner:
            first = runner.run(run(registry, proposed))
            second = runner.run(run(registry, dict(proposed)))
        assert (first.id, first.tool_call_id, first.tool_name) == (
            f"tool-result-{proposed['id']}",
            proposed["id"],
            proposed["name"],
        )
        assert len(first.content) <= MAX_CONTENT_CODE_POINTS
        assert first == second
        assert first.is_error == (proposed["name"] != "echo")
        # The result is one the public constructor accepts.
        assert type(first) is ToolResultMessage
        assert dataclasses.replace(first) == first

    linked_and_bounded()

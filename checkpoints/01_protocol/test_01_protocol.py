"""Checkpoint 01: tagged frozen records, exhaustive matches, and frozen JSON snapshots."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable
from enum import IntEnum
from types import MappingProxyType
from typing import Any, ClassVar, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkpoints import support
from checkpoints.support import raises_ending_with, raises_exactly, raises_starting_with
from harness.protocol import (
    MAX_JSON_DEPTH,
    MAX_JSON_INT_BITS,
    MAX_JSON_NODES,
    AssistantMessage,
    JsonSnapshotError,
    JsonValue,
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
    copy_json_object,
    describe,
    describe_event,
    describe_result,
    snapshot_json,
    snapshot_json_object,
    thaw_json,
    type_name,
)

lab_1_1 = pytest.mark.lab("1.1")
lab_1_2 = pytest.mark.lab("1.2")


def a_call(call_id: str = "call-1", name: str = "read_file") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=MappingProxyType({"path": "notes.txt"}))


# ---------------------------------------------------------------------------------------------
# Given code: records the scaffold keeps. The practice folder hands the learner these record
# declarations whole, so these tests carry no lab tag and pass from the start; they pin the
# contract every lab below builds on.
# ---------------------------------------------------------------------------------------------


def test_records_are_frozen_slotted_and_keyword_only() -> None:
    block = TextBlock(text="hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(block, "text", "changed")
    assert not hasattr(block, "__dict__")
    with pytest.raises(TypeError):
        TextBlock("text", "hi")  # type: ignore[call-arg]


ALL_RECORDS: list[tuple[type, str]] = [
    (TextBlock, "text"),
    (ToolCall, "tool_call"),
    (UserMessage, "user"),
    (AssistantMessage, "assistant"),
    (ToolResultMessage, "tool_result"),
    (TextDelta, "text_delta"),
    (ToolCallEvent, "tool_call"),
    (StreamDone, "done"),
    (StreamFailed, "error"),
    (StreamAborted, "aborted"),
]


@pytest.mark.parametrize(("record", "tag"), ALL_RECORDS)
def test_each_record_starts_with_its_literal_tag(record: type, tag: str) -> None:
    first = dataclasses.fields(record)[0]
    assert first.name in ("type", "role", "kind")
    assert first.default == tag
    params = getattr(record, "__dataclass_params__")
    assert params.frozen
    assert all(field.kw_only for field in dataclasses.fields(record))
    assert "__slots__" in vars(record)


def test_a_tag_cannot_be_overridden() -> None:
    with raises_exactly(ValueError, "UserMessage.role must be 'user'"):
        UserMessage(role="assistant", content=())  # type: ignore[arg-type]


def test_fields_need_exact_types_not_subclasses() -> None:
    class Str(str):
        pass

    with raises_exactly(TypeError, "TextBlock.text must be a str, got Str"):
        TextBlock(text=Str("hi"))
    with raises_exactly(TypeError, "ToolResultMessage.is_error must be a bool, got int"):
        ToolResultMessage(id="r", tool_call_id="c", tool_name="t", content="", is_error=1)  # type: ignore[arg-type]
    with raises_exactly(ValueError, "ToolCall.id must not be empty"):
        ToolCall(id="", name="t", arguments=MappingProxyType({}))


class LoudStr(str):
    """A str subclass whose comparison would record that it ran."""

    seen: ClassVar[list[str]] = []

    def __eq__(self, other: object) -> bool:
        LoudStr.seen.append("__eq__")
        return True

    __hash__ = str.__hash__


# ToolResultMessage checks its usual case in one expression before the per-field helpers, so
# every field gets a wrong value here: the quick check must never let one through.
GOOD_RESULT: dict[str, object] = {
    "id": "r",
    "tool_call_id": "c",
    "tool_name": "t",
    "content": "",
    "is_error": False,
}


@pytest.mark.parametrize(
    ("field", "value", "error", "message"),
    [
        ("role", "user", ValueError, "ToolResultMessage.role must be 'tool_result'"),
        (
            "role",
            LoudStr("tool_result"),
            ValueError,
            "ToolResultMessage.role must be 'tool_result'",
        ),
        ("id", "", ValueError, "ToolResultMessage.id must not be empty"),
        ("id", LoudStr("r"), TypeError, "ToolResultMessage.id must be a str, got LoudStr"),
        ("tool_call_id", "", ValueError, "ToolResultMessage.tool_call_id must not be empty"),
        ("tool_call_id", 7, TypeError, "ToolResultMessage.tool_call_id must be a str, got int"),
        ("tool_name", "", ValueError, "ToolResultMessage.tool_name must not be empty"),
        ("tool_name", b"t", TypeError, "ToolResultMessage.tool_name must be a str, got bytes"),
        ("content", LoudStr(""), TypeError, "ToolResultMessage.content must be a str, got LoudStr"),
        ("is_error", 0, TypeError, "ToolResultMessage.is_error must be a bool, got int"),
    ],
)
def test_every_tool_result_field_is_checked(
    field: str, value: object, error: type[Exception], message: str
) -> None:
    LoudStr.seen.clear()
    with raises_exactly(error, message):
        ToolResultMessage(**{**GOOD_RESULT, field: value})  # type: ignore[arg-type]
    assert LoudStr.seen == []


def test_content_must_be_a_tuple_of_known_blocks() -> None:
    with raises_exactly(TypeError, "UserMessage.content must be a tuple, got list"):
        UserMessage(content=[TextBlock(text="hi")])  # type: ignore[arg-type]
    with raises_exactly(TypeError, "UserMessage.content[0] must be one of TextBlock, got ToolCall"):
        UserMessage(content=(a_call(),))  # type: ignore[arg-type]


def test_a_faked_class_fools_isinstance_but_not_the_records() -> None:
    class Impostor:
        text = "hi"

        @property  # type: ignore[misc]
        def __class__(self) -> type:
            return TextBlock

    impostor = Impostor()
    assert isinstance(impostor, TextBlock)  # what a `match` class pattern would believe
    with raises_exactly(TypeError, "UserMessage.content[0] must be one of TextBlock, got Impostor"):
        UserMessage(content=(impostor,))


def test_tool_call_constructor_takes_only_a_snapshot() -> None:
    with raises_exactly(
        TypeError,
        "ToolCall.arguments must be a JSON object snapshot, got dict; use ToolCall.create",
    ):
        ToolCall(id="c", name="t", arguments={"path": "x"})


def test_assistant_tool_calls_keep_their_order_and_ids_are_unique() -> None:
    first, second = a_call("c1", "read_file"), a_call("c2", "write_file")
    message = AssistantMessage(content=(first, TextBlock(text="and"), second))
    assert message.tool_calls == (first, second)
    with raises_exactly(ValueError, "AssistantMessage has two tool calls with id 'c1'"):
        AssistantMessage(content=(first, a_call("c1", "other")))


# ---------------------------------------------------------------------------------------------
# Lab 1.1: exhaustive matches
# ---------------------------------------------------------------------------------------------


@lab_1_1
def test_describe_handles_every_message_kind() -> None:
    user = UserMessage(content=(TextBlock(text="read "), TextBlock(text="notes")))
    assistant = AssistantMessage(content=(TextBlock(text="sure"), a_call()))
    result = ToolResultMessage(
        id="tool-result-call-1",
        tool_call_id="call-1",
        tool_name="read_file",
        content="hello",
        is_error=True,
    )
    assert describe(user) == "user: read notes"
    assert describe(assistant) == "assistant: sure [calls: read_file#call-1]"
    assert describe(AssistantMessage(content=(TextBlock(text="done"),))) == "assistant: done"
    assert describe(result) == "tool_result read_file#call-1 (error): hello"


@lab_1_1
def test_describe_event_and_result_handle_every_kind() -> None:
    events: list[StreamEvent] = [TextDelta(text="he"), ToolCallEvent(call=a_call())]
    assert [describe_event(e) for e in events] == [
        "text_delta: 'he'",
        "tool_call: read_file#call-1",
    ]
    results: list[StreamResult] = [
        StreamDone(message=AssistantMessage(content=(TextBlock(text="ok"),))),
        StreamFailed(code="PROVIDER_ERROR", message="bad record"),
        StreamAborted(reason="user pressed stop"),
    ]
    assert [describe_result(r) for r in results] == [
        "done: assistant: ok",
        "error PROVIDER_ERROR: bad record",
        "aborted: user pressed stop",
    ]


# --8<-- [start:assert-never-test]
@lab_1_1
def test_a_value_outside_the_union_reaches_assert_never() -> None:
    # mypy proves this cannot happen in typed code; cast() lies to it on purpose.
    stranger = cast(Message, "not a message")
    with raises_starting_with(AssertionError, "Expected code to be unreachable, but got: "):
        describe(stranger)
    with raises_starting_with(AssertionError, "Expected code to be unreachable, but got: "):
        describe_event(cast(StreamEvent, UserMessage(content=())))
    with raises_starting_with(AssertionError, "Expected code to be unreachable, but got: "):
        describe_result(cast(StreamResult, TextDelta(text="x")))


# --8<-- [end:assert-never-test]


# ---------------------------------------------------------------------------------------------
# Lab 1.2: JSON snapshots
# ---------------------------------------------------------------------------------------------


@lab_1_2
def test_snapshot_freezes_lists_into_tuples_and_dicts_into_read_only_views() -> None:
    original: dict[str, Any] = {"path": "a.txt", "lines": [1, 2], "opts": {"force": True}}
    snapshot = snapshot_json(original)
    assert type(snapshot) is MappingProxyType
    assert snapshot == {"path": "a.txt", "lines": (1, 2), "opts": {"force": True}}
    assert type(snapshot["lines"]) is tuple
    assert type(snapshot["opts"]) is MappingProxyType
    with pytest.raises(TypeError):
        snapshot["path"] = "b.txt"  # type: ignore[index]


# --8<-- [start:independence-test]
@lab_1_2
def test_snapshot_is_independent_of_the_original() -> None:
    original: dict[str, Any] = {"lines": [1, 2], "opts": {"force": True}}
    snapshot = snapshot_json(original)
    original["lines"].append(3)
    original["opts"]["force"] = False
    original["new"] = "key"
    assert snapshot == {"lines": (1, 2), "opts": {"force": True}}


# --8<-- [end:independence-test]


@lab_1_2
def test_snapshot_keeps_key_order_and_accepts_tuples_as_arrays() -> None:
    snapshot = snapshot_json({"b": 1, "a": (None, 1.5, "x", False)})
    assert type(snapshot) is MappingProxyType
    assert list(snapshot) == ["b", "a"]
    assert snapshot["a"] == (None, 1.5, "x", False)


@lab_1_2
def test_a_shared_value_that_is_not_a_cycle_is_copied_twice() -> None:
    shared = [1]
    assert snapshot_json([shared, shared]) == ((1,), (1,))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (math.nan, "$: NaN is not a JSON number"),
        ({"x": [1, math.inf]}, "$.x[1]: Infinity is not a JSON number"),
        ([-math.inf], "$[0]: Infinity is not a JSON number"),
        ({1: "one"}, "$: object keys must be str, got int"),
        ({"a": {None: 1}}, "$.a: object keys must be str, got NoneType"),
        ({"a b": {1, 2}}, '$["a b"]: set is not a JSON type'),
        ([b"bytes"], "$[0]: bytes is not a JSON type"),
        ([object()], "$[0]: object is not a JSON type"),
        (frozenset(), "$: frozenset is not a JSON type"),
        (MappingProxyType({}), "$: mappingproxy is not a JSON type"),
        ({"n": 1 << MAX_JSON_INT_BITS}, "$.n: int of 4097 bits is larger than 4096 bits"),
    ],
)
@lab_1_2
def test_snapshot_refuses_non_json_values_naming_the_path(value: object, message: str) -> None:
    with raises_exactly(JsonSnapshotError, message):
        snapshot_json(value)


@lab_1_2
def test_ints_up_to_the_bit_limit_are_accepted() -> None:
    largest = (1 << MAX_JSON_INT_BITS) - 1
    assert snapshot_json([largest, -largest]) == (largest, -largest)
    assert json.loads(json.dumps(thaw_json(snapshot_json(largest)))) == largest


@lab_1_2
def test_subclasses_of_json_types_are_refused() -> None:
    class Color(IntEnum):
        RED = 1

    class Text(str):
        pass

    class Number(float):
        pass

    class Items(list[int]):
        pass

    cases: list[tuple[object, str]] = [
        ([Color.RED], "$[0]: Color is a subclass of int; only int is accepted"),
        ({"k": Text("v")}, "$.k: Text is a subclass of str; only str is accepted"),
        ([Number(1.0)], "$[0]: Number is a subclass of float; only float is accepted"),
        ({"k": Items()}, "$.k: Items is a subclass of list; only list is accepted"),
        ({Text("k"): 1}, "$: object keys must be str, got Text"),
    ]
    for value, message in cases:
        with raises_exactly(JsonSnapshotError, message):
            snapshot_json(value)


@lab_1_2
def test_a_dict_subclass_is_refused_without_running_its_methods() -> None:
    calls: list[str] = []

    class Hostile(dict[str, object]):
        def __getitem__(self, key: str) -> object:
            calls.append("__getitem__")
            return "forged"

        def items(self) -> Any:
            calls.append("items")
            return iter([("forged", True)])

        def __iter__(self) -> Any:
            calls.append("__iter__")
            return iter(["forged"])

        def keys(self) -> Any:
            calls.append("keys")
            return ["forged"]

    with raises_exactly(
        JsonSnapshotError, "$.args: Hostile is a subclass of dict; only dict is accepted"
    ):
        snapshot_json({"args": Hostile(path="x")})
    assert calls == []


@lab_1_2
def test_a_faked_class_does_not_pass_for_a_dict() -> None:
    class Liar:
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            return dict

    assert isinstance(Liar(), dict)
    with raises_exactly(JsonSnapshotError, "$[0]: Liar is not a JSON type"):
        snapshot_json([Liar()])


@lab_1_2
def test_cycles_are_refused_with_both_paths() -> None:
    loop: list[object] = [1]
    loop.append(loop)
    with raises_exactly(JsonSnapshotError, "$.items[1]: cycle back to $.items"):
        snapshot_json({"items": loop})
    node: dict[str, object] = {}
    node["self"] = {"parent": node}
    with raises_exactly(JsonSnapshotError, "$.self.parent: cycle back to $"):
        snapshot_json(node)


def nested_lists(depth: int) -> list[object]:
    """Return ``depth`` lists, each holding the next one."""
    top: list[object] = []
    current = top
    for _ in range(depth - 1):
        inner: list[object] = []
        current.append(inner)
        current = inner
    return top


@lab_1_2
def test_nesting_up_to_the_depth_limit_is_accepted_and_deeper_is_refused() -> None:
    assert snapshot_json(nested_lists(MAX_JSON_DEPTH)) is not None
    with raises_ending_with(JsonSnapshotError, ": nested deeper than 64 containers") as caught:
        snapshot_json(nested_lists(MAX_JSON_DEPTH + 1))
    assert str(caught.value) == "$" + "[0]" * 64 + ": nested deeper than 64 containers"
    with raises_exactly(JsonSnapshotError, "$[0][0]: nested deeper than 2 containers"):
        snapshot_json(nested_lists(3), max_depth=2)


@lab_1_2
def test_ten_thousand_levels_give_a_snapshot_error_not_recursion_error() -> None:
    deep_dict: dict[str, object] = {}
    current = deep_dict
    for _ in range(10_000):
        inner: dict[str, object] = {}
        current["k"] = inner
        current = inner
    for value in (nested_lists(10_000), deep_dict):
        with raises_ending_with(JsonSnapshotError, ": nested deeper than 64 containers"):
            snapshot_json(value)
        # Even with the depth limit lifted, the walk itself must not recurse.
        assert snapshot_json(value, max_depth=20_000) is not None


@lab_1_2
def test_a_shared_list_doubled_forty_times_hits_the_value_budget() -> None:
    bomb: list[object] = []
    for _ in range(40):
        bomb = [bomb, bomb]  # 2**40 values if copied naively
    with raises_ending_with(JsonSnapshotError, ": more than 1000 values") as caught:
        snapshot_json(bomb, max_nodes=1000)
    assert re.fullmatch(r"\$(\[[01]\])*: more than 1000 values", str(caught.value))


@lab_1_2
def test_snapshot_json_object_requires_an_object_at_the_top() -> None:
    with raises_exactly(JsonSnapshotError, "$: expected a JSON object, got list"):
        snapshot_json_object([])

    class Mapping(dict[str, object]):
        pass

    with raises_exactly(JsonSnapshotError, "$: expected a JSON object, got Mapping"):
        snapshot_json_object(Mapping())
    assert snapshot_json_object({"a": [1]}) == {"a": (1,)}


@lab_1_2
def test_tool_call_create_snapshots_its_arguments() -> None:
    arguments: dict[str, Any] = {"paths": ["a.txt"]}
    call = ToolCall.create(id="c1", name="read_files", arguments=arguments)
    arguments["paths"].append("b.txt")
    assert call.arguments == {"paths": ("a.txt",)}
    with raises_exactly(JsonSnapshotError, "$.x: NaN is not a JSON number"):
        ToolCall.create(id="c1", name="t", arguments={"x": math.nan})


@lab_1_2
def test_thaw_gives_fresh_mutable_copies() -> None:
    snapshot = snapshot_json({"a": [1, {"b": 2}]})
    first, second = thaw_json(snapshot), thaw_json(snapshot)
    assert first == {"a": [1, {"b": 2}]}
    assert type(first) is dict
    assert first is not second
    cast(dict[str, Any], first)["a"].append(3)
    assert second == {"a": [1, {"b": 2}]}


@lab_1_2
def test_thaw_refuses_values_that_are_not_snapshots() -> None:
    with raises_exactly(TypeError, "list is not part of a JSON snapshot"):
        thaw_json(cast(JsonValue, (1, [2])))


@lab_1_2
def test_thaw_refuses_a_read_only_mapping_of_anything_but_a_plain_dict_without_reading_it() -> None:
    read: list[str] = []

    class Recording(dict[str, object]):
        def __iter__(self) -> Any:
            read.append("__iter__")
            return super().__iter__()

        def items(self) -> Any:
            read.append("items")
            return super().items()

    forged = cast(JsonValue, MappingProxyType(Recording(a=1)))
    with raises_exactly(TypeError, "a read-only mapping of a JSON snapshot wraps a plain dict"):
        thaw_json(forged)
    assert read == []


@lab_1_2
def test_thawing_a_flat_object_never_hands_out_the_snapshots_own_dict() -> None:
    snapshot = snapshot_json_object({"a": 1, "b": "two"})
    thawed = cast(dict[str, Any], thaw_json(snapshot))
    thawed["a"] = "changed"
    assert snapshot == {"a": 1, "b": "two"}
    assert thaw_json(snapshot) is not thawed


@lab_1_2
@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_thaw_refuses_a_key_that_is_not_an_exact_str_without_hashing_it(nested: bool) -> None:
    hashed: list[str] = []

    class PosingKey(str):
        def __hash__(self) -> int:
            hashed.append(str.__str__(self))
            return str.__hash__(self)

    fields: dict[object, object] = {PosingKey("k"): (1,) if nested else 1}
    hashed.clear()  # building the dict above hashed it once
    for forged in (MappingProxyType(fields), MappingProxyType({1: "one"})):
        with raises_exactly(TypeError, "the keys of a JSON snapshot are exact str"):
            thaw_json(cast(JsonValue, forged))
    assert hashed == []


@lab_1_2
def test_snapshot_never_compares_types_through_a_metaclass() -> None:
    odd, asked = support.watched_class_instance()
    with raises_exactly(JsonSnapshotError, "$.x: Odd is not a JSON type"):
        snapshot_json({"x": odd})
    assert asked == []


@lab_1_2
def test_type_name_reads_the_real_name_and_refuses_a_str_subclass() -> None:
    # Every error message of the records and the snapshots names types with type_name.
    odd, asked = support.watched_class_instance()
    assert type_name(odd) == "Odd"
    assert asked == []

    formatted: list[str] = []

    class Posing(str):
        def __format__(self, spec: str) -> str:
            formatted.append(spec)
            return "whatever it likes"

    class Plain:
        pass

    Plain.__name__ = Posing("Plain")  # a class's name may be any str, subclasses included
    assert type_name(Plain()) == "object"
    with raises_exactly(JsonSnapshotError, "$.x: object is not a JSON type"):
        snapshot_json({"x": Plain()})
    assert formatted == []


@lab_1_2
def test_thaw_stops_at_the_value_budget_so_a_hand_made_value_always_ends() -> None:
    # First a legitimate snapshot over a small budget: a walk with no budget fails here at once,
    # before the values below would keep it busy forever.
    eleven_values = snapshot_json(list(range(10)))  # the list and its ten items
    assert thaw_json(eleven_values, max_nodes=11) == list(range(10))
    with raises_exactly(TypeError, "more values than max_nodes=10: not a JSON snapshot (a cycle?)"):
        thaw_json(eleven_values, max_nodes=10)
    # The same budget holds for a flat object, which is copied without the walk.
    flat = snapshot_json_object({"a": 1, "b": 2})
    assert thaw_json(flat, max_nodes=3) == {"a": 1, "b": 2}
    with raises_starting_with(TypeError, "more values than max_nodes=2: "):
        thaw_json(flat, max_nodes=2)
    # snapshot_json only makes trees; by hand, a value can hold itself, or share a branch at
    # every level (2**60 values to copy).
    fields: dict[str, object] = {}
    cyclic = MappingProxyType(fields)
    fields["self"] = cyclic
    branch: object = (1,)
    for _ in range(60):
        branch = (branch, branch)
    for endless in (cyclic, branch):
        with raises_starting_with(TypeError, "more values than max_nodes=100000: "):
            thaw_json(cast(JsonValue, endless))
    # A small shared branch is within budget; equal tuple literals are often one object.
    shared = MappingProxyType({"xs": (1, 2), "ys": (1, 2)})
    assert thaw_json(cast(JsonValue, shared)) == {"xs": [1, 2], "ys": [1, 2]}


# Hypothesis: any JSON-able value survives snapshot -> thaw -> json text -> parse unchanged.
json_scalars = support.json_scalars(int_bound=(1 << MAX_JSON_INT_BITS) - 1, text_size=20)
json_values = support.json_values(json_scalars, key_size=8, width=5, max_leaves=25)


@lab_1_2
@settings(max_examples=150, deadline=None)
@given(json_values)
def test_snapshot_round_trips_through_json_text(value: object) -> None:
    snapshot = snapshot_json(value)
    assert json.loads(json.dumps(thaw_json(snapshot))) == value


def every_container(value: JsonValue) -> list[JsonValue]:
    found: list[JsonValue] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is tuple:
            found.append(item)
            stack.extend(item)
        elif type(item) is MappingProxyType:
            found.append(item)
            stack.extend(item.values())
    return found


@lab_1_2
@settings(max_examples=100, deadline=None)
@given(json_values)
def test_every_container_in_a_snapshot_is_immutable(value: object) -> None:
    for container in every_container(snapshot_json(value)):
        assert type(container) in (tuple, MappingProxyType)
        with pytest.raises(TypeError):
            cast(Any, container)["k"] = 1


# snapshot_json_object copies a flat object of plain scalars directly; everything else takes the
# general walk of snapshot_json. Both must give the same snapshot, or the same error.
class StrSubclass(str):
    pass


limit = 1 << MAX_JSON_INT_BITS
flat_values = (
    json_scalars
    | st.floats()  # NaN and the infinities too
    | st.sampled_from([limit - 1, limit, -limit, 1 - limit, True, False])
    | st.builds(StrSubclass, st.text(max_size=3))
    | st.lists(json_scalars, max_size=2)
    | st.dictionaries(st.text(max_size=3), json_scalars, max_size=2)
)
flat_objects = st.dictionaries(st.text(max_size=8) | st.integers(), flat_values, max_size=6)


def results_or_same_refusal(
    expected_of: Callable[[], object], actual_of: Callable[[], object]
) -> tuple[object, object] | None:
    """Return both results, or None once both refused with the very same message."""
    try:
        expected = expected_of()
    except JsonSnapshotError as refusal:
        with raises_exactly(JsonSnapshotError, str(refusal)):
            actual_of()
        return None
    return expected, actual_of()


def assert_same_snapshot_or_error(value: dict[object, object]) -> None:
    results = results_or_same_refusal(
        lambda: snapshot_json(value), lambda: snapshot_json_object(value)
    )
    if results is None:
        return
    expected, snapshot = results
    assert type(snapshot) is MappingProxyType
    assert type(expected) is MappingProxyType
    assert list(snapshot) == list(expected)
    for key, item in snapshot.items():
        assert type(item) is type(expected[key])  # so True is not taken for 1
        assert item == expected[key]
    value.clear()
    assert len(snapshot) == len(expected)  # a copy, not a view of the caller's dict


@lab_1_2
@settings(max_examples=200, deadline=None)
@given(flat_objects)
def test_snapshot_json_object_agrees_with_the_general_walk(value: dict[object, object]) -> None:
    assert_same_snapshot_or_error(value)


@lab_1_2
@pytest.mark.parametrize("size", [MAX_JSON_NODES - 1, MAX_JSON_NODES])
def test_a_flat_object_at_the_value_budget_agrees_with_the_general_walk(size: int) -> None:
    assert_same_snapshot_or_error(dict.fromkeys(map(str, range(size)), 0))


# copy_json_object is thaw_json(snapshot_json_object(value)) in one step: the same checks, the
# same errors, the same plain result. A flat object is copied once, everything else takes the
# general walk, so both kinds of input are generated.
def assert_same_copy_or_error(value: object) -> None:
    results = results_or_same_refusal(
        lambda: thaw_json(snapshot_json_object(value)), lambda: copy_json_object(value)
    )
    if results is None:
        return
    expected, copy = results
    assert type(copy) is dict
    assert repr(copy) == repr(expected)  # the same keys in the same order, lists, exact types
    assert copy is not value
    copy.clear()
    assert thaw_json(snapshot_json_object(value)) == expected  # the caller's dict is untouched


@lab_1_2
@settings(max_examples=200, deadline=None)
@given(flat_objects | st.dictionaries(st.text(max_size=3), json_values, max_size=4))
def test_copy_json_object_is_a_thawed_snapshot_in_one_step(value: dict[object, object]) -> None:
    assert_same_copy_or_error(value)


@lab_1_2
def test_copy_json_object_refuses_what_is_not_an_object_at_the_top() -> None:
    class LoudDict(dict[str, object]):
        def items(self) -> Any:
            raise AssertionError("a dict subclass's methods must never run")

    not_objects: tuple[object, ...] = ([], None, "text", MappingProxyType({}), LoudDict(a=1))
    for value in not_objects:
        with raises_starting_with(JsonSnapshotError, "$: expected a JSON object, got "):
            copy_json_object(value)


@lab_1_2
def test_copy_json_object_gives_nested_containers_of_their_own() -> None:
    value: dict[str, object] = {"tags": ["a"], "owner": {"name": "b"}}
    copy = copy_json_object(value)
    assert copy == value
    assert copy["tags"] is not value["tags"]
    assert copy["owner"] is not value["owner"]
    assert type(copy["tags"]) is list
    assert type(copy["owner"]) is dict


def test_a_record_checks_item_types_without_asking_a_metaclass() -> None:
    odd, asked = support.watched_class_instance()
    with raises_exactly(TypeError, "UserMessage.content[0] must be one of TextBlock, got Odd"):
        UserMessage(content=(odd,))  # type: ignore[arg-type]
    assert asked == []

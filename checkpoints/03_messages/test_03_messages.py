"""Checkpoint 03: normalize untrusted messages, check transcript linkage, round-trip JSON."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness.messages as messages_module
from checkpoints import support
from checkpoints.support import raises_ending_with, raises_exactly
from harness import protocol
from harness.messages import (
    DuplicateToolCallIdError,
    DuplicateToolResultError,
    EmptyFieldError,
    FieldTypeError,
    InvalidArgumentsError,
    MalformedMessageError,
    Message,
    MessageError,
    MissingFieldError,
    OrphanToolResultError,
    PendingToolCallsError,
    ToolCall,
    ToolNameMismatchError,
    ToolResultMessage,
    TranscriptLinkError,
    UnexpectedFieldError,
    UnknownBlockTypeError,
    UnknownRoleError,
    check_transcript,
    message_from_json,
    message_to_json,
    normalize_message,
    pending_tool_calls,
    transcript_from_json,
    transcript_to_json,
)
from harness.protocol import AssistantMessage, TextBlock, UserMessage

lab_3_1 = pytest.mark.lab("3.1")
lab_3_2 = pytest.mark.lab("3.2")
lab_3_3 = pytest.mark.lab("3.3")


def user(text: str) -> UserMessage:
    return UserMessage(content=(TextBlock(text=text),))


def call(call_id: str, name: str = "read_file") -> ToolCall:
    return ToolCall.create(id=call_id, name=name, arguments={"path": "notes.txt"})


def calls(*made: ToolCall) -> AssistantMessage:
    return AssistantMessage(content=made)


def result(call_id: str, name: str = "read_file") -> ToolResultMessage:
    return ToolResultMessage(
        id=f"tool-result-{call_id}",
        tool_call_id=call_id,
        tool_name=name,
        content="hello",
        is_error=False,
    )


# ---------------------------------------------------------------------------------------------
# Given code: the re-exports and the error family the scaffold keeps. The practice folder
# hands the learner these declarations whole, so these tests carry no lab tag and pass from
# the start.
# ---------------------------------------------------------------------------------------------


def test_messages_reexports_the_protocol_records() -> None:
    assert ToolCall is protocol.ToolCall
    assert ToolResultMessage is protocol.ToolResultMessage
    assert {"ToolCall", "ToolResultMessage"} <= set(messages_module.__all__)


def test_every_message_error_is_a_value_error_of_one_family() -> None:
    assert issubclass(MessageError, ValueError)
    for shape_error in (UnknownRoleError, FieldTypeError, InvalidArgumentsError, EmptyFieldError):
        assert issubclass(shape_error, MalformedMessageError)
    for link_error in (OrphanToolResultError, PendingToolCallsError, DuplicateToolCallIdError):
        assert issubclass(link_error, TranscriptLinkError)


# ---------------------------------------------------------------------------------------------
# Lab 3.1: normalization of untrusted dicts
# ---------------------------------------------------------------------------------------------


@lab_3_1
def test_user_content_may_be_a_string_or_a_list_of_text_blocks() -> None:
    assert normalize_message({"role": "user", "content": "hi"}) == user("hi")
    blocks = {
        "role": "user",
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": ""}],
    }
    assert normalize_message(blocks) == UserMessage(
        content=(TextBlock(text="a"), TextBlock(text=""))
    )


@lab_3_1
def test_assistant_text_and_tool_calls_become_records_with_frozen_arguments() -> None:
    arguments: dict[str, Any] = {"path": "notes.txt", "lines": [1, 2]}
    raw = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Reading it."},
            {"type": "tool_call", "id": "c1", "name": "read_file", "arguments": arguments},
        ],
    }
    message = normalize_message(raw)
    arguments["lines"].append(3)  # the sender changes its dict afterwards: no effect
    assert type(message) is AssistantMessage
    (tool_call,) = message.tool_calls
    assert (tool_call.id, tool_call.name) == ("c1", "read_file")
    assert tool_call.arguments == {"path": "notes.txt", "lines": (1, 2)}
    assert type(tool_call.arguments) is MappingProxyType


@lab_3_1
def test_a_tool_result_is_normalized_with_any_non_empty_id() -> None:
    raw = {
        "role": "tool_result",
        "id": "r-7",
        "tool_call_id": "c1",
        "tool_name": "read_file",
        "content": "",
        "is_error": True,
    }
    assert normalize_message(raw) == ToolResultMessage(
        id="r-7", tool_call_id="c1", tool_name="read_file", content="", is_error=True
    )


def tool_result_dict(**changes: object) -> dict[str, object]:
    raw: dict[str, object] = {
        "role": "tool_result",
        "id": "r1",
        "tool_call_id": "c1",
        "tool_name": "read_file",
        "content": "ok",
        "is_error": False,
    }
    raw.update(changes)
    return raw


def assistant_with(block: object) -> dict[str, object]:
    return {"role": "assistant", "content": [block]}


class StrKey(str):
    pass


@pytest.mark.parametrize(
    ("raw", "error", "message"),
    [
        ([], FieldTypeError, "$: expected an object, got list"),
        ({"content": "hi"}, MissingFieldError, "$: missing field 'role'"),
        ({"role": 1, "content": "hi"}, FieldTypeError, "$.role: expected str, got int"),
        (
            {"role": "system", "content": "hi"},
            UnknownRoleError,
            "$.role: unknown role 'system'",
        ),
        ({"role": "user"}, MissingFieldError, "$: missing field 'content'"),
        (
            {"role": "user", "content": "hi", "colour": "red"},
            UnexpectedFieldError,
            "$: unexpected field 'colour'",
        ),
        (
            {"role": "user", "content": "hi", 7: "x"},
            UnexpectedFieldError,
            "$: field names must be str, got int",
        ),
        (
            {"role": "user", "content": "hi", StrKey("extra"): "x"},
            UnexpectedFieldError,
            "$: field names must be str, got StrKey",
        ),
        (
            {"role": "user", "content": 3},
            FieldTypeError,
            "$.content: expected list or str, got int",
        ),
        (
            {"role": "user", "content": ("hi",)},
            FieldTypeError,
            "$.content: expected list or str, got tuple",
        ),
        (
            {"role": "user", "content": [{"type": "tool_call"}]},
            UnknownBlockTypeError,
            "$.content[0].type: a user message has no 'tool_call'",
        ),
        (
            assistant_with({"type": "image", "url": "x"}),
            UnknownBlockTypeError,
            "$.content[0].type: an assistant message has no 'image'",
        ),
        (
            assistant_with({"text": "x"}),
            MissingFieldError,
            "$.content[0]: missing field 'type'",
        ),
        (assistant_with("x"), FieldTypeError, "$.content[0]: expected an object, got str"),
        (
            assistant_with({"type": "text", "text": None}),
            FieldTypeError,
            "$.content[0].text: expected str, got NoneType",
        ),
        (
            assistant_with({"type": "tool_call", "id": "", "name": "t", "arguments": {}}),
            EmptyFieldError,
            "$.content[0].id: must not be empty",
        ),
        (
            assistant_with({"type": "tool_call", "id": "c", "name": StrKey("t"), "arguments": {}}),
            FieldTypeError,
            "$.content[0].name: expected str, got StrKey",
        ),
        (
            assistant_with({"type": "tool_call", "id": "c", "name": "t"}),
            MissingFieldError,
            "$.content[0]: missing field 'arguments'",
        ),
        (
            assistant_with({"type": "tool_call", "id": "c", "name": "t", "arguments": [1]}),
            InvalidArgumentsError,
            "$.content[0].arguments: expected a JSON object, got list",
        ),
        (
            assistant_with(
                {"type": "tool_call", "id": "c", "name": "t", "arguments": {"x": [0, math.nan]}}
            ),
            InvalidArgumentsError,
            "$.content[0].arguments.x[1]: NaN is not a JSON number",
        ),
        (
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_call", "id": "c", "name": "a", "arguments": {}},
                    {"type": "tool_call", "id": "c", "name": "b", "arguments": {}},
                ],
            },
            DuplicateToolCallIdError,
            "$.content[1].id: tool call id 'c' was already used",
        ),
        (
            tool_result_dict(is_error=0),
            FieldTypeError,
            "$.is_error: expected bool, got int",
        ),
        (
            tool_result_dict(content=["ok"]),
            FieldTypeError,
            "$.content: expected str, got list",
        ),
        (
            tool_result_dict(tool_call_id=""),
            EmptyFieldError,
            "$.tool_call_id: must not be empty",
        ),
        (tool_result_dict(id=None), FieldTypeError, "$.id: expected str, got NoneType"),
    ],
)
@lab_3_1
def test_malformed_messages_are_refused_with_a_typed_error_naming_the_path(
    raw: object, error: type[MessageError], message: str
) -> None:
    with raises_exactly(error, message):
        normalize_message(raw)


@lab_3_1
def test_invalid_arguments_keep_the_snapshot_error_as_cause() -> None:
    raw = assistant_with({"type": "tool_call", "id": "c", "name": "t", "arguments": {1: 2}})
    with pytest.raises(InvalidArgumentsError) as caught:
        normalize_message(raw)
    assert type(caught.value.__cause__) is protocol.JsonSnapshotError


@lab_3_1
def test_ten_thousand_levels_of_arguments_give_a_message_error() -> None:
    deep: list[object] = []
    current = deep
    for _ in range(10_000):
        inner: list[object] = []
        current.append(inner)
        current = inner
    raw = assistant_with({"type": "tool_call", "id": "c", "name": "t", "arguments": {"x": deep}})
    with raises_ending_with(InvalidArgumentsError, ": nested deeper than 64 containers"):
        normalize_message(raw)


# --8<-- [start:hostile-test]
@lab_3_1
def test_hostile_containers_and_tags_are_refused_without_running_their_code() -> None:
    ran: list[str] = []

    class Hostile(dict[str, object]):
        def __getitem__(self, key: str) -> object:
            ran.append("__getitem__")
            return "user"

        def get(self, key: str, default: object = None) -> object:
            ran.append("get")
            return "user"

        def __contains__(self, key: object) -> bool:
            ran.append("__contains__")
            return True

    class Role:
        def __eq__(self, other: object) -> bool:
            ran.append("__eq__")
            return True

        __hash__ = object.__hash__

    with raises_exactly(FieldTypeError, "$: expected an object, got Hostile"):
        normalize_message(Hostile(role="user", content="hi"))
    with raises_exactly(FieldTypeError, "$.role: expected str, got Role"):
        normalize_message({"role": Role(), "content": "hi"})
    with raises_exactly(FieldTypeError, "$.content[0]: expected an object, got Hostile"):
        normalize_message({"role": "user", "content": [Hostile(type="text", text="x")]})

    class PosingKey(str):  # hashes like "role", so a lookup of "role" would compare with it
        def __eq__(self, other: object) -> bool:
            ran.append("key __eq__")
            return True

        __hash__ = str.__hash__

    with raises_exactly(UnexpectedFieldError, "$: field names must be str, got PosingKey"):
        normalize_message({PosingKey("role"): "user", "content": "hi"})
    assert ran == []


# --8<-- [end:hostile-test]


@lab_3_1
def test_a_huge_unknown_field_name_is_shortened_in_the_error() -> None:
    with raises_exactly(
        UnexpectedFieldError, "$: unexpected field 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…'"
    ):
        normalize_message({"role": "user", "content": "hi", "x" * 10_000: 1})


# ---------------------------------------------------------------------------------------------
# Lab 3.2: transcript linkage
# ---------------------------------------------------------------------------------------------


@lab_3_2
def test_results_may_answer_parallel_calls_in_any_order() -> None:
    transcript: list[Message] = [
        user("read both"),
        calls(call("c1"), call("c2", "list_dir")),
        result("c2", "list_dir"),
        result("c1"),
        AssistantMessage(content=(TextBlock(text="done"),)),
        user("thanks"),
    ]
    check_transcript(transcript)
    assert pending_tool_calls(transcript) == ()


@lab_3_2
def test_a_transcript_may_end_with_calls_pending_in_call_order() -> None:
    first, second = call("c1"), call("c2", "list_dir")
    assert pending_tool_calls([user("go"), calls(first, second)]) == (first, second)
    assert pending_tool_calls([user("go"), calls(first, second), result("c1")]) == (second,)


@lab_3_2
def test_a_result_that_answers_no_call_is_an_orphan() -> None:
    with raises_exactly(OrphanToolResultError, "$[1]: no pending tool call has id 'c9'"):
        check_transcript([user("go"), result("c9")])


# --8<-- [start:duplicate-test]
@lab_3_2
def test_a_call_answered_twice_is_refused() -> None:
    transcript: list[Message] = [user("go"), calls(call("c1")), result("c1"), result("c1")]
    with raises_exactly(DuplicateToolResultError, "$[3]: tool call 'c1' was already answered"):
        check_transcript(transcript)


# --8<-- [end:duplicate-test]


@lab_3_2
def test_a_result_must_name_the_tool_that_was_called() -> None:
    with raises_exactly(ToolNameMismatchError, "$[2]: tool call 'c1' is 'read_file', not 'rm'"):
        check_transcript([user("go"), calls(call("c1")), result("c1", "rm")])


@lab_3_2
def test_no_new_turn_while_calls_are_pending() -> None:
    with raises_exactly(
        PendingToolCallsError, "$[3]: a user message while tool calls 'c2' are pending"
    ):
        check_transcript([user("go"), calls(call("c1"), call("c2")), result("c1"), user("hey")])
    with raises_exactly(
        PendingToolCallsError, "$[2]: a assistant message while tool calls 'c1', 'c2' are pending"
    ):
        check_transcript([user("go"), calls(call("c1"), call("c2")), calls(call("c3"))])


@lab_3_2
def test_a_call_id_cannot_be_reused_in_a_later_turn() -> None:
    with raises_exactly(DuplicateToolCallIdError, "$[3]: tool call id 'c1' was already used"):
        check_transcript([user("go"), calls(call("c1")), result("c1"), calls(call("c1"))])


@lab_3_2
def test_linkage_walks_any_iterable_exactly_once() -> None:
    made = (call("c1"), call("c2"))
    transcript: list[Message] = [user("go"), calls(*made), result("c1")]
    assert pending_tool_calls(iter(transcript)) == (made[1],)


# ---------------------------------------------------------------------------------------------
# Lab 3.3: JSON round trips
# ---------------------------------------------------------------------------------------------


@lab_3_3
def test_message_to_json_writes_the_tag_first_and_plain_containers() -> None:
    message = AssistantMessage(
        content=(
            TextBlock(text="Reading."),
            ToolCall.create(id="c1", name="read_file", arguments={"paths": ["a", "b"]}),
        )
    )
    data = message_to_json(message)
    assert data == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Reading."},
            {
                "type": "tool_call",
                "id": "c1",
                "name": "read_file",
                "arguments": {"paths": ["a", "b"]},
            },
        ],
    }
    assert list(data) == ["role", "content"]
    assert list(message_to_json(result("c1"))) == [
        "role",
        "id",
        "tool_call_id",
        "tool_name",
        "content",
        "is_error",
    ]


@lab_3_3
def test_changing_the_json_copy_leaves_the_record_alone() -> None:
    message = calls(ToolCall.create(id="c1", name="t", arguments={"xs": [1]}))
    data: Any = message_to_json(message)
    data["content"][0]["arguments"]["xs"].append(2)
    assert message.tool_calls[0].arguments == {"xs": (1,)}


@lab_3_3
def test_message_from_json_reads_what_message_to_json_wrote() -> None:
    message = UserMessage(content=(TextBlock(text="a"), TextBlock(text="b")))
    assert message_from_json(json.loads(json.dumps(message_to_json(message)))) == message


EXAMPLE_TRANSCRIPT = Path(__file__).with_name("example_transcript.json")


@lab_3_3
def test_the_example_transcript_on_the_page_reads_back_exactly() -> None:
    data = json.loads(EXAMPLE_TRANSCRIPT.read_text(encoding="utf-8"))
    transcript = transcript_from_json(data)
    assert [type(m) for m in transcript] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        AssistantMessage,
    ]
    assert pending_tool_calls(transcript) == ()
    assert transcript_to_json(transcript) == data


@lab_3_3
def test_transcript_from_json_normalizes_each_message_and_checks_linkage() -> None:
    good: list[Message] = [user("go"), calls(call("c1")), result("c1")]
    assert transcript_from_json(json.loads(json.dumps(transcript_to_json(good)))) == tuple(good)
    with raises_exactly(FieldTypeError, "$[1].content: expected list or str, got int"):
        transcript_from_json([{"role": "user", "content": "go"}, {"role": "user", "content": 1}])
    with raises_exactly(OrphanToolResultError, "$[0]: no pending tool call has id 'c1'"):
        transcript_from_json(transcript_to_json([result("c1")]))
    with raises_exactly(FieldTypeError, "$: expected a list of messages, got dict"):
        transcript_from_json({})


# Hypothesis strategies that generate valid records.
json_scalars = support.json_scalars(int_bound=2**80, text_size=10)
json_values = support.json_values(json_scalars, key_size=5, width=3, max_leaves=10)
non_empty = st.text(min_size=1, max_size=8)
text_blocks = st.builds(TextBlock, text=st.text(max_size=15))
tool_calls = st.builds(
    lambda call_id, name, arguments: ToolCall.create(id=call_id, name=name, arguments=arguments),
    non_empty,
    non_empty,
    st.dictionaries(st.text(max_size=5), json_values, max_size=3),
)
user_messages = st.lists(text_blocks, max_size=3).map(
    lambda blocks: UserMessage(content=tuple(blocks))
)
assistant_messages = st.lists(
    text_blocks | tool_calls,
    max_size=4,
    unique_by=lambda block: block.id if type(block) is ToolCall else id(block),
).map(lambda blocks: AssistantMessage(content=tuple(blocks)))
tool_results = st.builds(
    ToolResultMessage,
    id=non_empty,
    tool_call_id=non_empty,
    tool_name=non_empty,
    content=st.text(max_size=15),
    is_error=st.booleans(),
)
any_message = user_messages | assistant_messages | tool_results


@st.composite
def transcripts(draw: st.DrawFn) -> list[Message]:
    """Draw a valid transcript: every call answered, in some order, before the next turn."""
    transcript: list[Message] = []
    for turn in range(draw(st.integers(min_value=0, max_value=5))):
        if draw(st.booleans()):
            transcript.append(draw(user_messages))
            continue
        blocks = draw(st.lists(text_blocks | tool_calls, max_size=3))
        made: list[ToolCall] = []
        content: list[TextBlock | ToolCall] = []
        for index, block in enumerate(blocks):
            if type(block) is ToolCall:  # give each call an id unique in the transcript
                renamed = ToolCall(
                    id=f"t{turn}-{index}", name=block.name, arguments=block.arguments
                )
                made.append(renamed)
                content.append(renamed)
            else:
                content.append(block)
        transcript.append(AssistantMessage(content=tuple(content)))
        for answered in draw(st.permutations(made)):
            transcript.append(result(answered.id, answered.name))
    return transcript


# --8<-- [start:round-trip-property]
@lab_3_3
@settings(max_examples=150, deadline=None)
@given(any_message)
def test_any_message_survives_a_json_text_round_trip(message: Message) -> None:
    text = json.dumps(message_to_json(message))
    assert message_from_json(json.loads(text)) == message


# --8<-- [end:round-trip-property]


@lab_3_3
@settings(max_examples=75, deadline=None)
@given(transcripts())
def test_any_valid_transcript_survives_a_json_text_round_trip(transcript: list[Message]) -> None:
    text = json.dumps(transcript_to_json(transcript))
    assert transcript_from_json(json.loads(text)) == tuple(transcript)


@lab_3_2
@settings(max_examples=75, deadline=None)
@given(transcripts(), st.data())
def test_every_prefix_of_a_valid_transcript_is_valid(
    transcript: list[Message], data: st.DataObject
) -> None:
    cut = data.draw(st.integers(min_value=0, max_value=len(transcript)))
    check_transcript(transcript[:cut])


@lab_3_2
@settings(max_examples=75, deadline=None)
@given(transcripts(), st.data())
def test_repeating_any_tool_result_breaks_the_transcript(
    transcript: list[Message], data: st.DataObject
) -> None:
    positions = [i for i, m in enumerate(transcript) if type(m) is ToolResultMessage]
    if not positions:
        return
    position = data.draw(st.sampled_from(positions))
    broken = [*transcript[: position + 1], transcript[position], *transcript[position + 1 :]]
    with pytest.raises(DuplicateToolResultError):
        check_transcript(broken)

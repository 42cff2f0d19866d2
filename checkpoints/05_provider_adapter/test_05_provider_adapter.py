"""Checkpoint 05: untrusted provider records in, normalized events and one terminal event out."""

from __future__ import annotations

import itertools
import json
import socket
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pytest_socket import SocketBlockedError

from checkpoints import support
from checkpoints.support import raises_ending_with, raises_exactly
from harness.protocol import (
    AssistantMessage,
    StreamDone,
    StreamFailed,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    thaw_json,
)
from harness.provider_adapter import (
    MAX_ARGUMENTS_CHARS,
    MAX_LINE_BYTES,
    MAX_TOOL_CALLS,
    AdapterEvent,
    AnthropicMessagesAdapter,
    OpenAIChatAdapter,
    ProviderAdapter,
    ProviderRecordError,
    adapt_records,
    parse_strict_json,
    parse_tool_arguments,
    read_fixture,
)

lab_5_1 = pytest.mark.lab("5.1")
lab_5_2 = pytest.mark.lab("5.2")
lab_5_3 = pytest.mark.lab("5.3")

FIXTURES = Path(__file__).resolve().parents[2] / "course" / "fixtures"

# ---------------------------------------------------------------------------------------------
# Records in the two providers' shapes, and what to check about the events that come out
# ---------------------------------------------------------------------------------------------


def chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    """Return an OpenAI chat-completions stream chunk with one choice."""
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {"id": "chatcmpl-t", "object": "chat.completion.chunk", "choices": [choice]}


def first_fragment(index: int, call_id: str, name: str, arguments: str = "") -> dict[str, object]:
    function = {"name": name, "arguments": arguments}
    return {"index": index, "id": call_id, "type": "function", "function": function}


def next_fragment(index: int, arguments: str) -> dict[str, object]:
    return {"index": index, "function": {"arguments": arguments}}


def calls(*fragments: dict[str, object]) -> dict[str, object]:
    return chunk({"tool_calls": list(fragments)})


ROLE = chunk({"role": "assistant", "content": ""})
STOP = chunk({}, "stop")
TOOL_CALLS = chunk({}, "tool_calls")
USAGE = {"id": "chatcmpl-t", "object": "chat.completion.chunk", "choices": [], "usage": {}}

MESSAGE_START = {"type": "message_start", "message": {"id": "msg_t", "role": "assistant"}}
MESSAGE_STOP = {"type": "message_stop"}
PING = {"type": "ping"}


def text_start(index: int) -> dict[str, object]:
    block = {"type": "text", "text": ""}
    return {"type": "content_block_start", "index": index, "content_block": block}


def tool_start(index: int, call_id: str, name: str) -> dict[str, object]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return {"type": "content_block_start", "index": index, "content_block": block}


def text_delta(index: int, text: str) -> dict[str, object]:
    delta = {"type": "text_delta", "text": text}
    return {"type": "content_block_delta", "index": index, "delta": delta}


def json_delta(index: int, partial: str) -> dict[str, object]:
    delta = {"type": "input_json_delta", "partial_json": partial}
    return {"type": "content_block_delta", "index": index, "delta": delta}


def block_stop(index: int) -> dict[str, object]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str) -> dict[str, object]:
    return {"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {}}


def openai(*records: object) -> tuple[AdapterEvent, ...]:
    return tuple(adapt_records(records, OpenAIChatAdapter()))


def anthropic(*records: object) -> tuple[AdapterEvent, ...]:
    return tuple(adapt_records(records, AnthropicMessagesAdapter()))


def terminal(events: Sequence[AdapterEvent]) -> StreamDone | StreamFailed:
    """Return the one terminal event, after checking that there is exactly one and it is last."""
    terminals = [
        event for event in events if type(event) is StreamDone or type(event) is StreamFailed
    ]
    assert len(terminals) == 1, events
    assert events[-1] is terminals[0]
    end = terminals[0]
    assert type(end) is StreamDone or type(end) is StreamFailed
    return end


def done(events: Sequence[AdapterEvent]) -> AssistantMessage:
    end = terminal(events)
    assert type(end) is StreamDone, end
    return end.message


def failure(events: Sequence[AdapterEvent]) -> tuple[str, str]:
    end = terminal(events)
    assert type(end) is StreamFailed, end
    return end.code, end.message


def the_call(events: Sequence[AdapterEvent]) -> ToolCall:
    (call,) = done(events).tool_calls
    return call


WEATHER = ToolCall.create(id="call_1", name="get_weather", arguments={"city": "Paris"})


# ---------------------------------------------------------------------------------------------
# Lab 5.1: every record is validated; an unknown or broken one fails the response, naming it
# ---------------------------------------------------------------------------------------------


@lab_5_1
def test_openai_text_fixture_replays_into_deltas_and_one_text_block() -> None:
    lines = (FIXTURES / "openai_text.jsonl").read_text(encoding="utf-8").splitlines()
    events = openai(*(json.loads(line) for line in lines))
    assert events[:-1] == (TextDelta(text="It is 18 °C "), TextDelta(text="in Paris."))
    assert done(events) == AssistantMessage(content=(TextBlock(text="It is 18 °C in Paris."),))


class Text(str):
    """A str subclass: it passes isinstance(x, str) and could override any str method."""


class SpyDict(dict[str, object]):
    """A dict subclass that logs every lookup: the adapter must refuse it without one."""

    calls: list[str] = []  # noqa: RUF012 - a log shared on purpose, reset by each test

    def get(self, key: str, default: object = None) -> object:
        SpyDict.calls.append(f"get {key}")
        return super().get(key, default)

    def __getitem__(self, key: str) -> object:
        SpyDict.calls.append(f"getitem {key}")
        return super().__getitem__(key)

    def __iter__(self) -> Iterator[str]:
        SpyDict.calls.append("iter")
        return super().__iter__()


class LoudKey:
    """A dict key whose hash equals the str it imitates and whose __eq__ logs being called."""

    calls: list[str] = []  # noqa: RUF012 - a log shared on purpose, reset by each test

    def __hash__(self) -> int:
        return hash("object")

    def __eq__(self, other: object) -> bool:
        LoudKey.calls.append(f"eq {other!r}")
        return other == "object"


def with_choice(**changes: object) -> dict[str, object]:
    record = chunk({"content": "hi"})
    choices = record["choices"]
    assert type(choices) is list
    choices[0] = {**choices[0], **changes}
    return record


OPENAI_BROKEN_RECORDS: list[tuple[object, str]] = [
    ([], "record: expected dict, got list"),
    ({1: "one", "choices": []}, "record: expected str keys"),
    (
        {**ROLE, "object": "chat.completion"},
        "record.object: expected 'chat.completion.chunk', got 'chat.completion'",
    ),
    ({**ROLE, "object": None}, "record.object: expected str, got NoneType"),
    ({**ROLE, "choices": ()}, "record.choices: expected list, got tuple"),
    ({**ROLE, "choices": [{}, {}]}, "record.choices: expected one choice, got 2"),
    (with_choice(index=True), "choices[0].index: expected int, got bool"),
    (with_choice(index=1), "choices[0].index: expected 0"),
    (with_choice(index=2**80), "choices[0].index: int out of range"),
    (with_choice(delta=None), "choices[0].delta: expected dict, got NoneType"),
    (with_choice(finish_reason=7), "choices[0].finish_reason: expected str, got int"),
    (chunk({"content": 5}), "delta.content: expected str, got int"),
    (chunk({"content": Text("hi")}), "delta.content: expected str, got Text"),
    (chunk({"tool_calls": {}}), "delta.tool_calls: expected list, got dict"),
    (chunk({"tool_calls": ["call"]}), "delta.tool_calls[]: expected dict, got str"),
]


@lab_5_1
@pytest.mark.parametrize(("record", "problem"), OPENAI_BROKEN_RECORDS)
def test_a_broken_openai_record_fails_the_response_naming_its_line(
    record: object, problem: str
) -> None:
    assert failure(openai(ROLE, record, STOP)) == (
        "INVALID_PROVIDER_RECORD",
        f"line 2: {problem}",
    )


@lab_5_1
def test_a_dict_subclass_record_is_refused_without_running_its_methods() -> None:
    SpyDict.calls = []
    assert failure(openai(SpyDict(ROLE))) == (
        "INVALID_PROVIDER_RECORD",
        "line 1: record: expected dict, got SpyDict",
    )
    assert SpyDict.calls == []


@lab_5_1
def test_a_key_object_imitating_a_field_name_is_refused_without_being_compared() -> None:
    LoudKey.calls = []
    record = {LoudKey(): "chat.completion.chunk", "choices": []}
    assert failure(openai(record)) == (
        "INVALID_PROVIDER_RECORD",
        "line 1: record: expected str keys",
    )
    assert LoudKey.calls == []


ANTHROPIC_BROKEN_RECORDS: list[tuple[list[object], str, str]] = [
    ([PING], "INVALID_PROVIDER_RECORD", "line 1: record.type: 'ping' is out of order"),
    (
        [MESSAGE_START, MESSAGE_START],
        "INVALID_PROVIDER_RECORD",
        "line 2: record.type: 'message_start' is out of order",
    ),
    (
        [{"type": "message_start", "message": {"role": "user"}}],
        "INVALID_PROVIDER_RECORD",
        "line 1: message.role: expected 'assistant', got 'user'",
    ),
    (
        [MESSAGE_START, {"type": "thinking"}],
        "INVALID_PROVIDER_RECORD",
        "line 2: record.type: unexpected 'thinking'",
    ),
    (
        [MESSAGE_START, {"type": Text("ping")}],
        "INVALID_PROVIDER_RECORD",
        "line 2: record.type: expected str, got Text",
    ),
    (
        [MESSAGE_START, text_start(1)],
        "INVALID_PROVIDER_RECORD",
        "line 2: record.index: expected 0, got 1",
    ),
    (
        [MESSAGE_START, text_start(0), text_start(1)],
        "INVALID_PROVIDER_RECORD",
        "line 3: record: a block is still open",
    ),
    (
        [MESSAGE_START, text_delta(0, "hi")],
        "INVALID_PROVIDER_RECORD",
        "line 2: record: no block is open",
    ),
    ([MESSAGE_START, block_stop(0)], "INVALID_PROVIDER_RECORD", "line 2: record: no block is open"),
    (
        [MESSAGE_START, text_start(0), text_delta(1, "hi")],
        "INVALID_PROVIDER_RECORD",
        "line 3: record.index: expected 0, got 1",
    ),
    (
        [MESSAGE_START, text_start(0), json_delta(0, "{")],
        "INVALID_PROVIDER_RECORD",
        "line 3: delta.type: expected 'text_delta', got 'input_json_delta'",
    ),
    (
        [MESSAGE_START, tool_start(0, "t", "f"), text_delta(0, "hi")],
        "INVALID_PROVIDER_RECORD",
        "line 3: delta.type: expected 'input_json_delta', got 'text_delta'",
    ),
    (
        [MESSAGE_START, {**text_start(0), "content_block": {"type": "thinking", "thinking": ""}}],
        "INVALID_PROVIDER_RECORD",
        "line 2: content_block: expected text, or tool_use with input {}: 'thinking'",
    ),
    (
        [
            MESSAGE_START,
            {
                **tool_start(0, "t", "f"),
                "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}},
            },
        ],
        "INVALID_PROVIDER_RECORD",
        "line 2: content_block: expected text, or tool_use with input {}: 'tool_use'",
    ),
    (
        [MESSAGE_START, {"type": "message_delta", "delta": {"stop_reason": None}}],
        "INVALID_PROVIDER_RECORD",
        "line 2: record.delta.stop_reason: expected str, got NoneType",
    ),
    (
        [MESSAGE_START, MESSAGE_STOP],
        "INVALID_PROVIDER_RECORD",
        "line 2: record.type: unexpected 'message_stop'",
    ),
    (
        [MESSAGE_START, text_start(0), message_delta("end_turn"), MESSAGE_STOP],
        "INVALID_PROVIDER_RECORD",
        "line 4: record.type: unexpected 'message_stop'",
    ),
    (
        [
            MESSAGE_START,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ],
        "PROVIDER_ERROR",
        "line 2: Overloaded",
    ),
]


@lab_5_1
@pytest.mark.parametrize(("records", "code", "message"), ANTHROPIC_BROKEN_RECORDS)
def test_a_broken_anthropic_event_fails_the_response_naming_its_line(
    records: list[object], code: str, message: str
) -> None:
    assert failure(anthropic(*records)) == (code, message)


@lab_5_1
def test_a_usage_chunk_after_the_end_is_accepted() -> None:
    assert done(openai(chunk({"content": "hi"}), STOP, USAGE)).content == (TextBlock(text="hi"),)


@lab_5_1
def test_no_record_is_read_after_the_terminal_event() -> None:
    pulled: list[int] = []

    def records() -> Iterator[object]:
        for number, record in enumerate([ROLE, "broken", ROLE, STOP], start=1):
            pulled.append(number)
            yield record

    assert failure(tuple(adapt_records(records(), OpenAIChatAdapter())))[0] == (
        "INVALID_PROVIDER_RECORD"
    )
    assert pulled == [1, 2]


# ---------------------------------------------------------------------------------------------
# Lab 5.2: argument fragments are assembled per call and parsed strictly
# ---------------------------------------------------------------------------------------------


OPENAI_BROKEN_FRAGMENTS: list[tuple[object, str]] = [
    (
        calls({**first_fragment(0, "c", "f"), "index": "0"}),
        "tool_calls[].index: expected int, got str",
    ),
    (calls(first_fragment(1, "c", "f")), "tool_calls[].index: expected 0 to 0, got 1"),
    (calls(first_fragment(-1, "c", "f")), "tool_calls[].index: expected 0 to 0, got -1"),
    (
        calls({**first_fragment(0, "c", "f"), "id": None}),
        "tool_calls[].id: expected str, got NoneType",
    ),
    (
        calls({**first_fragment(0, "c", "f"), "type": "custom"}),
        "tool_calls[].type: expected 'function', got 'custom'",
    ),
    (
        calls({"index": 0, "id": "c", "type": "function"}),
        "tool_calls[].function: expected dict, got NoneType",
    ),
    (calls(first_fragment(0, "c", "")), "tool call: empty id or name: 'c', ''"),
    (
        calls({**first_fragment(0, "c", "f"), "function": {"name": "f"}}),
        "tool_calls[].function.arguments: expected str, got NoneType",
    ),
]


@lab_5_2
@pytest.mark.parametrize(("record", "problem"), OPENAI_BROKEN_FRAGMENTS)
def test_a_broken_tool_call_fragment_fails_the_response_naming_its_line(
    record: object, problem: str
) -> None:
    assert failure(openai(ROLE, record, STOP)) == (
        "INVALID_PROVIDER_RECORD",
        f"line 2: {problem}",
    )


@lab_5_2
def test_anthropic_fixture_gives_the_same_events_as_the_openai_one() -> None:
    from_anthropic = read_fixture(FIXTURES / "anthropic_tool_use.jsonl", AnthropicMessagesAdapter())
    from_openai = read_fixture(FIXTURES / "openai_tool_call.jsonl", OpenAIChatAdapter())
    assert [type(event) for event in from_anthropic] == [
        TextDelta,
        TextDelta,
        ToolCallEvent,
        StreamDone,
    ]
    assert from_anthropic[:2] == from_openai[:2]
    (call,) = done(from_anthropic).tool_calls
    assert (call.id, call.name) == ("toolu_fixture_1", "get_weather")
    assert call.arguments == the_call(from_openai).arguments


@lab_5_2
def test_openai_fixture_assembles_one_tool_call_from_fragments() -> None:
    events = read_fixture(FIXTURES / "openai_tool_call.jsonl", OpenAIChatAdapter())
    expected = ToolCall.create(
        id="call_weather_1", name="get_weather", arguments={"city": "Paris", "unit": "celsius"}
    )
    assert events[2] == ToolCallEvent(call=expected)
    assert done(events).content == (TextBlock(text="Let me check the weather."), expected)
    assert type(expected.arguments) is MappingProxyType


@lab_5_2
def test_two_calls_are_assembled_by_index_even_when_their_fragments_interleave() -> None:
    events = openai(
        calls(first_fragment(0, "call_a", "read_file", '{"path": ')),
        calls(first_fragment(1, "call_b", "list_dir", '{"depth"')),
        calls(next_fragment(0, '"a.txt"}'), next_fragment(1, ": 2}")),
        TOOL_CALLS,
    )
    assert done(events).tool_calls == (
        ToolCall.create(id="call_a", name="read_file", arguments={"path": "a.txt"}),
        ToolCall.create(id="call_b", name="list_dir", arguments={"depth": 2}),
    )
    assert [type(event) for event in events] == [ToolCallEvent, ToolCallEvent, StreamDone]


@lab_5_2
def test_two_tool_call_fixture_keeps_the_calls_in_index_order() -> None:
    events = read_fixture(FIXTURES / "openai_two_tool_calls.jsonl", OpenAIChatAdapter())
    assert [call.id for call in done(events).tool_calls] == ["call_read_1", "call_list_2"]


@lab_5_2
def test_a_later_fragment_that_restarts_its_call_is_refused() -> None:
    assert failure(
        openai(calls(first_fragment(0, "call_a", "f", "{")), calls(first_fragment(0, "x", "f")))
    ) == ("INVALID_PROVIDER_RECORD", "line 2: tool_calls[]: call 0 was already started")


@lab_5_2
def test_two_calls_with_one_id_are_refused() -> None:
    assert failure(
        openai(calls(first_fragment(0, "same", "f", "{}"), first_fragment(1, "same", "g", "{}")))
    ) == ("INVALID_PROVIDER_RECORD", "line 1: tool call: id 'same' is used twice")


@lab_5_2
def test_more_tool_calls_than_the_limit_are_refused() -> None:
    many = [first_fragment(index, f"call_{index}", "f", "{}") for index in range(MAX_TOOL_CALLS)]
    assert done(openai(calls(*many), TOOL_CALLS)).tool_calls[-1].id == f"call_{MAX_TOOL_CALLS - 1}"
    one_more = first_fragment(MAX_TOOL_CALLS, "call_extra", "f", "{}")
    assert failure(openai(calls(*many), calls(one_more), TOOL_CALLS)) == (
        "INVALID_PROVIDER_RECORD",
        f"line 2: tool call: more than {MAX_TOOL_CALLS} in one response",
    )


# --8<-- [start:duplicate-keys]
@lab_5_2
def test_a_duplicate_key_in_arguments_is_refused_naming_call_and_line() -> None:
    # json.loads keeps the last of two equal keys without a word; a checker that read the first
    # one would approve a call that runs with the second.
    events = read_fixture(FIXTURES / "openai_invalid_arguments.jsonl", OpenAIChatAdapter())
    assert failure(events) == (
        "INVALID_TOOL_ARGUMENTS",
        "line 4: tool call 'call_bad_1': duplicate key 'city'",
    )
    with raises_exactly(ProviderRecordError, "duplicate key 'b'"):
        parse_tool_arguments('{"a": {"b": 1, "b": 2}}')


# --8<-- [end:duplicate-keys]


@lab_5_2
def test_nan_and_infinity_literals_are_refused() -> None:
    for literal, message in (
        ("NaN", "NaN is not a JSON number"),
        ("Infinity", "Infinity is not a JSON number"),
        ("-Infinity", "-Infinity is not a JSON number"),
    ):
        with raises_exactly(ValueError, message):
            parse_strict_json(f'{{"x": [1, {literal}]}}')


@lab_5_2
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "$: expected a JSON object, got list"),
        ('"text"', "$: expected a JSON object, got str"),
        ("", "Expecting value at character 0"),
        ('{"a": 1', "Expecting ',' delimiter at character 7"),
        ('{"a": 1} {}', "Extra data at character 9"),
        ('{"big": 1e999}', "$.big: Infinity is not a JSON number"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ("[" * 10_000 + "]" * 10_000, "nested too deeply"),
    ],
)
def test_arguments_that_are_not_one_bounded_json_object_are_refused(
    text: str, message: str
) -> None:
    with raises_exactly(ProviderRecordError, message) as error:
        parse_tool_arguments(text)
    assert error.value.code == "INVALID_TOOL_ARGUMENTS"


@lab_5_2
def test_arguments_too_deep_or_too_long_are_refused_naming_the_limit() -> None:
    with raises_ending_with(ProviderRecordError, ": nested deeper than 64 containers") as deep:
        parse_tool_arguments('{"a":' * 100 + "1" + "}" * 100)
    assert str(deep.value) == "$" + ".a" * 64 + ": nested deeper than 64 containers"
    with raises_exactly(ProviderRecordError, "longer than 65536 characters") as long:
        parse_tool_arguments(" " * (MAX_ARGUMENTS_CHARS + 1))
    assert MAX_ARGUMENTS_CHARS == 65_536
    assert deep.value.code == long.value.code == "INVALID_TOOL_ARGUMENTS"


@lab_5_2
def test_an_endless_argument_stream_is_refused_before_it_is_joined() -> None:
    piece = "x" * 4096
    records = [calls(first_fragment(0, "call_big", "f", '{"a": "'))]
    records += [calls(next_fragment(0, piece)) for _ in range(MAX_ARGUMENTS_CHARS // 4096)]
    events = openai(*records, TOOL_CALLS)
    assert failure(events) == (
        "INVALID_TOOL_ARGUMENTS",
        f"line {len(records)}: tool call 'call_big': longer than {MAX_ARGUMENTS_CHARS} characters",
    )


@lab_5_2
def test_an_anthropic_tool_without_input_deltas_gets_empty_arguments() -> None:
    events = anthropic(
        MESSAGE_START,
        tool_start(0, "toolu_1", "list_dir"),
        block_stop(0),
        message_delta("tool_use"),
        MESSAGE_STOP,
    )
    assert the_call(events) == ToolCall.create(id="toolu_1", name="list_dir", arguments={})


JSON_SCALARS = support.json_scalars(int_bound=2**63, text_size=8)
JSON_VALUES = support.json_values(JSON_SCALARS, key_size=4, width=3, max_leaves=12)
JSON_OBJECTS = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4)


def split(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted(cuts), len(text)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


# --8<-- [start:any-split]
@lab_5_2
@settings(max_examples=60, deadline=None)
@given(arguments=JSON_OBJECTS, data=st.data())
def test_any_split_of_the_arguments_text_assembles_the_same_tool_call(
    arguments: dict[str, object], data: st.DataObject
) -> None:
    text = json.dumps(arguments, ensure_ascii=data.draw(st.booleans()))
    pieces = split(text, data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    expected = ToolCall.create(id="call_1", name="f", arguments=arguments)

    from_openai = the_call(
        openai(
            calls(first_fragment(0, "call_1", "f", pieces[0])),
            *(calls(next_fragment(0, piece)) for piece in pieces[1:]),
            TOOL_CALLS,
        )
    )
    from_anthropic = the_call(
        anthropic(
            MESSAGE_START,
            tool_start(0, "call_1", "f"),
            *(json_delta(0, piece) for piece in pieces),
            block_stop(0),
            message_delta("tool_use"),
            MESSAGE_STOP,
        )
    )
    assert from_openai == from_anthropic == expected
    assert thaw_json(from_openai.arguments) == arguments


# --8<-- [end:any-split]


# ---------------------------------------------------------------------------------------------
# Lab 5.3: exactly one terminal event per response, whatever the records do
# ---------------------------------------------------------------------------------------------


@lab_5_3
@pytest.mark.parametrize("fixture", sorted(path.name for path in FIXTURES.glob("*.jsonl")))
def test_every_fixture_ends_with_exactly_one_terminal_event(fixture: str) -> None:
    adapter: ProviderAdapter
    adapter = AnthropicMessagesAdapter() if fixture.startswith("anthropic") else OpenAIChatAdapter()
    terminal(read_fixture(FIXTURES / fixture, adapter))
    assert adapter.finished


@lab_5_3
def test_a_record_after_the_end_fails_the_response() -> None:
    assert failure(openai(ROLE, STOP, chunk({"content": "late"}))) == (
        "RECORD_AFTER_END",
        "line 3: a record after the end record",
    )
    assert failure(anthropic(MESSAGE_START, message_delta("end_turn"), MESSAGE_STOP, PING)) == (
        "RECORD_AFTER_END",
        "line 4: a record after the end record",
    )


@lab_5_3
def test_a_second_end_record_fails_the_response() -> None:
    assert failure(openai(ROLE, STOP, STOP)) == (
        "RECORD_AFTER_END",
        "line 3: a record after the end record",
    )
    assert failure(
        anthropic(MESSAGE_START, message_delta("end_turn"), MESSAGE_STOP, MESSAGE_STOP)
    ) == ("RECORD_AFTER_END", "line 4: a record after the end record")


@lab_5_3
@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([], "after line 0: no end record"),
        ([ROLE, chunk({"content": "Hel"})], "after line 2: no end record"),
        ([calls(first_fragment(0, "c", "f", '{"a"'))], "after line 1: no end record"),
    ],
)
def test_records_that_stop_before_the_end_fail_the_response(
    records: list[object], message: str
) -> None:
    assert failure(openai(*records)) == ("MISSING_END", message)


@lab_5_3
def test_an_anthropic_stream_without_message_stop_fails_the_response() -> None:
    events = anthropic(MESSAGE_START, text_start(0), text_delta(0, "Hel"))
    assert events[0] == TextDelta(text="Hel")
    assert failure(events) == ("MISSING_END", "after line 3: no end record")


@lab_5_3
def test_a_response_cut_short_by_the_provider_is_not_done() -> None:
    assert failure(openai(ROLE, chunk({"content": "It is"}, "length"))) == (
        "RESPONSE_INCOMPLETE",
        "line 2: stopped early: 'length'",
    )
    assert failure(anthropic(MESSAGE_START, message_delta("max_tokens"), MESSAGE_STOP)) == (
        "RESPONSE_INCOMPLETE",
        "line 3: stopped early: 'max_tokens'",
    )


@lab_5_3
def test_feeding_a_finished_adapter_raises_and_close_is_idempotent() -> None:
    adapter = OpenAIChatAdapter()
    assert adapter.feed(STOP) == ()
    (end,) = adapter.close()
    assert type(end) is StreamDone
    assert adapter.close() == ()
    with raises_exactly(RuntimeError, "OpenAIChatAdapter is finished: no record may follow"):
        adapter.feed(ROLE)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"\n", "line 2: not a JSON line: Expecting value at character 1"),
        (
            b"{not json}\n",
            "line 2: not a JSON line: "
            "Expecting property name enclosed in double quotes at character 1",
        ),
        (b'{"a": -Infinity}\n', "line 2: not a JSON line: -Infinity is not a JSON number"),
        (
            b'"\xff"\n',
            "line 2: not a JSON line: "
            "'utf-8' codec can't decode byte 0xff in position 1: invalid start byte",
        ),
        (b" " * (MAX_LINE_BYTES + 1), f"line 2: longer than {MAX_LINE_BYTES} bytes"),
    ],
)
@lab_5_3
def test_a_bad_line_in_a_recording_fails_the_response_naming_the_line(
    tmp_path: Path, line: bytes, message: str
) -> None:
    recording = tmp_path / "broken.jsonl"
    recording.write_bytes(json.dumps(ROLE).encode() + b"\n" + line + json.dumps(STOP).encode())
    assert failure(read_fixture(recording, OpenAIChatAdapter())) == ("INVALID_JSON_LINE", message)


OPENAI_POOL = [
    ROLE,
    chunk({"content": "x"}),
    calls(first_fragment(0, "c0", "f", "{")),
    calls(next_fragment(0, "}")),
    STOP,
    TOOL_CALLS,
    USAGE,
    chunk({}, "length"),
    "junk",
    {"object": "chat.completion.chunk"},
]
ANTHROPIC_POOL = [
    MESSAGE_START,
    PING,
    text_start(0),
    text_delta(0, "x"),
    tool_start(1, "t1", "f"),
    json_delta(1, "{}"),
    block_stop(0),
    block_stop(1),
    message_delta("end_turn"),
    MESSAGE_STOP,
    {"type": "error", "error": {"message": "boom"}},
    None,
]


# --8<-- [start:one-terminal]
@lab_5_3
@settings(max_examples=150, deadline=None)
@given(
    openai_records=st.lists(st.sampled_from(OPENAI_POOL), max_size=8),
    anthropic_records=st.lists(st.sampled_from(ANTHROPIC_POOL), max_size=8),
)
def test_whatever_the_records_do_exactly_one_terminal_event_comes_last(
    openai_records: list[object], anthropic_records: list[object]
) -> None:
    terminal(openai(*openai_records))
    terminal(anthropic(*anthropic_records))


# --8<-- [end:one-terminal]


@lab_5_3
def test_replaying_a_recording_needs_no_network() -> None:
    # pytest-socket refuses every socket in these tests, so the replay below proves that the
    # adapter never opens one: a recording stands in for the provider.
    with (
        pytest.warns(UserWarning, match="A test tried to use socket.socket."),
        pytest.raises(SocketBlockedError),
    ):
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    done(read_fixture(FIXTURES / "openai_tool_call.jsonl", OpenAIChatAdapter()))  # asserts Done

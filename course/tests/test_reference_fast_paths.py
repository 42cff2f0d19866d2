"""The reference's fast paths, which the labs do not require but the 06 page describes.

A learner's plainer code passes the checkpoint tests without them; these tests keep the
reference honest about what its Performance section says it does.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import tool
from harness.abort import AbortController
from harness.protocol import ToolCall, ToolResultMessage
from harness.tool import ToolContext, ToolRegistry, define_tool, execute_tool_call
from harness.validators import accept


async def test_the_abort_guard_is_set_up_only_once_the_tool_waits() -> None:
    controller = AbortController()
    counts: list[int] = []

    async def count_listeners(value: object, context: ToolContext) -> object:
        counts.append(context.signal.listener_count)  # the first step: no guard yet
        await asyncio.sleep(0)
        counts.append(context.signal.listener_count)  # after a wait: the guard watches
        return "done"

    registry = ToolRegistry(
        [
            define_tool(
                {
                    "name": "count",
                    "description": "Count the signal's listeners.",
                    "validate": accept,
                    "execute": count_listeners,
                }
            )
        ]
    )
    call = ToolCall.create(id="call-1", name="count", arguments={})
    result = await execute_tool_call(registry, call, controller.signal)
    assert (result.content, counts) == ("done", [0, 1])
    assert controller.signal.listener_count == 0


async def test_the_executor_fills_in_its_two_records_without_their_constructors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    constructed: list[str] = []
    for record_type in (ToolContext, ToolResultMessage):
        monkeypatch.setattr(
            record_type, "__post_init__", lambda self: constructed.append(type(self).__name__)
        )

    async def echo(value: object, context: ToolContext) -> object:
        return context.tool_call_id

    registry = ToolRegistry(
        [define_tool({"name": "echo", "description": "Echo.", "validate": accept, "execute": echo})]
    )
    call = ToolCall.create(id="call-1", name="echo", arguments={})
    result = await execute_tool_call(registry, call, AbortController().signal)
    assert result.content == "call-1"
    assert constructed == []  # neither constructor ran
    # The published record is the one the constructor makes, which runs here, once.
    assert dataclasses.replace(result) == result
    assert constructed == ["ToolResultMessage"]


@given(
    call_id=st.text(min_size=1),
    name=st.text(min_size=1),
    content=st.text(),
    is_error=st.booleans(),
)
def test_a_result_filled_in_slot_by_slot_equals_the_constructed_one(
    call_id: str, name: str, content: str, is_error: bool
) -> None:
    filled_in = tool._result_for(call_id, name, content, is_error)
    constructed = ToolResultMessage(
        id=f"tool-result-{call_id}",
        tool_call_id=call_id,
        tool_name=name,
        content=content,
        is_error=is_error,
    )
    assert filled_in == constructed
    assert hash(filled_in) == hash(constructed)
    assert repr(filled_in) == repr(constructed)


def test_a_context_filled_in_slot_by_slot_equals_the_constructed_one() -> None:
    signal = AbortController().signal
    assert tool._context_for(signal, "call-1") == ToolContext(signal=signal, tool_call_id="call-1")


@pytest.mark.parametrize(
    "names",
    [
        ("tool_call_id", "signal"),  # out of order
        ("signal",),  # one missing
        ("signal", "tool_call_id", "extra"),  # one too many
    ],
)
def test_slot_setters_refuse_a_field_list_that_is_not_the_records(names: tuple[str, ...]) -> None:
    # A field added to a record later must fail at import, not leave an empty slot.
    fields = r"\('signal', 'tool_call_id'\)"
    with pytest.raises(TypeError, match=rf"^ToolContext has the fields {fields}, not "):
        tool._slot_setters(ToolContext, *names)


def test_slot_setters_refuse_a_field_that_is_not_a_slot_of_the_record_itself() -> None:
    @dataclasses.dataclass(frozen=True)
    class Unslotted:
        note: str

    with pytest.raises(TypeError, match=r"<locals>\.Unslotted\.note is not a slot of its own$"):
        tool._slot_setters(Unslotted, "note")

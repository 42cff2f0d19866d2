"""The reference's fast paths, which the labs do not require but the 06 page describes.

A learner's plainer code passes the checkpoint tests without them; these tests keep the
reference honest about what its Performance section says it does.
"""

from __future__ import annotations

import asyncio

from harness.abort import AbortController
from harness.protocol import ToolCall
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

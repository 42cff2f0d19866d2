"""Time one model-proposed tool call: the harness against a hand-written baseline and frameworks.

Every path starts from the same call as a model sends it (a tool name, a call id and the
arguments as JSON text) and ends with the text the model would see. The tool is a trivial
``add(left, right)``, so what is measured is the cost of the tool boundary itself.

Method: each path is warmed up, its output is checked, then it runs N sequential calls in one
asyncio loop; the paths take turns (interleaved, in a rotating order) for R repeats and the
median of the repeats is reported. Ratios are against the baseline measured in the same run,
so they travel between machines better than the microseconds do. The second table times the
harness's output serializer against ``json.dumps(sort_keys=True)`` on one 128-node value.

Benchmarks are reports, not tests: a missed target is printed as MISSED and the exit code
stays 0. Run it with ``nox -s bench`` (or ``python bench/bench_tool_call.py --help``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.metadata
import json
import os
import platform
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

__all__ = ["main"]

TOOL_NAME = "add"
CALL_ID = "call-1"
ARGUMENTS_TEXT = '{"left": 2, "right": 40}'
EXPECTED_TEXT = "42"

# Targets the course sets itself (see docs/checkpoints/06_tool_contract.md).
HARNESS_TARGET_RATIO = 2.5
SERIALIZER_TARGET_RATIO = 2.0

# The value the serializer rows encode: 128 nodes (every container and every scalar counts,
# keys do not), about 1.2 KB of JSON, the size of an ordinary structured tool result.
SERIALIZER_NODE_COUNT = 128
HARNESS_SERIALIZER = "harness.tool_output serializer"  # the label of its row
# The last line of a report that judges targets (the agent-loop benchmark's too).
NOT_A_GATE = "Benchmarks are reports, not tests: a MISSED target is printed, the exit code stays 0."

T = TypeVar("T")
Kind = Literal["reference", "harness", "framework"]
AsyncCall = Callable[[], Awaitable[str]]
SyncCall = Callable[[], str]


@dataclass(frozen=True, slots=True, kw_only=True)
class Contender:
    """One way to turn the call into model-visible text, ready to be timed."""

    kind: Kind
    label: str
    version: str
    invoke: AsyncCall


@dataclass(frozen=True, slots=True, kw_only=True)
class Encoder:
    """One way to turn the 128-node value into text, ready to be timed."""

    kind: Kind
    label: str
    version: str
    encode: SyncCall


@dataclass(frozen=True, slots=True, kw_only=True)
class Unavailable:
    """A path that could not be set up in this environment, and why."""

    kind: Kind
    label: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One line of a result table."""

    kind: Kind
    label: str
    version: str
    micros: float | None  # µs per call; the agent loop's: CPU µs per turn
    ratio: float | None
    wall: float | None = None  # wall time, where a report gives it too (the agent loop's)
    note: str = ""


# --- the tool and the hand-written baseline -------------------------------------------------


async def add(left: int, right: int) -> int:
    """Add two integers."""
    return left + right


class ArgumentsRejectedError(ValueError):
    """The arguments of an ``add`` call are not two integers named left and right."""


def check_add_arguments(arguments: object) -> dict[str, int]:
    """Return the arguments as a fresh dict, or raise when they are not two exact ints."""
    # json.loads gives a plain dict; anything else is refused.
    if type(arguments) is not dict or set(arguments) != {"left", "right"}:
        raise ArgumentsRejectedError("expected exactly the keys left and right")
    left = arguments["left"]
    right = arguments["right"]
    if type(left) is not int or type(right) is not int:
        raise ArgumentsRejectedError("left and right must be integers")
    return {"left": left, "right": right}


async def baseline_call() -> str:
    """Parse, check, run and encode by hand: the least any tool boundary has to do."""
    arguments = check_add_arguments(json.loads(ARGUMENTS_TEXT))
    return json.dumps(await add(**arguments))


def baseline_contender() -> Contender:
    """Return the hand-written baseline every ratio is measured against."""
    return Contender(
        kind="reference",
        label="baseline: json.loads, hand type checks, await add(**a), json.dumps",
        version="-",
        invoke=baseline_call,
    )


# --- the harness ----------------------------------------------------------------------------


async def execute_add(value: dict[str, int], context: object) -> int:
    """Add two integers: ``add`` as the harness asks for it, ``execute(value, context)``."""
    # Each path runs add in the form it asks for: the frameworks wrap the plain add above, and
    # the baseline calls it with its own keyword arguments. Calling add from here would time
    # one more coroutine that no tool written for the harness has.
    del context
    return value["left"] + value["right"]


def harness_registry(execute: Callable[[dict[str, int], object], Awaitable[int]]) -> Any:
    """Return a ToolRegistry with ``add`` as checkpoint 06 registers it, around ``execute``."""
    from harness import tool, validators

    registry = tool.ToolRegistry()
    registry.register(
        tool.define_tool(
            {
                "name": TOOL_NAME,
                "description": "Add two integers.",
                # The validator a learner writes in Lab 6.1.
                "validate": validators.object_schema(
                    {"left": validators.integer(), "right": validators.integer()}
                ),
                "execute": execute,
            }
        )
    )
    return registry


async def harness_contender() -> Contender:
    """Register add with define_tool + ToolRegistry and call it through execute_tool_call."""
    from harness import tool
    from harness.abort import AbortController

    registry = harness_registry(execute_add)
    execute_tool_call = tool.execute_tool_call
    signal = AbortController().signal

    async def invoke() -> str:
        # Parsing the argument text is part of the path, as it is for the baseline.
        call = {"id": CALL_ID, "name": TOOL_NAME, "arguments": json.loads(ARGUMENTS_TEXT)}
        result = await execute_tool_call(registry, call, signal)
        return result.content

    return Contender(
        kind="harness",
        label="harness: json.loads, execute_tool_call (object_schema validator) -> content",
        version=distribution_version("agent-harness-course"),
        invoke=invoke,
    )


# --- the frameworks, each through its own public invocation path ----------------------------


async def openai_agents_contender() -> Contender:
    """Return @function_tool -> on_invoke_tool with a fresh ToolContext -> the output item."""
    from agents import FunctionTool, ItemHelpers, RunContextWrapper, function_tool
    from agents.tool_context import ToolContext
    from openai.types.responses import ResponseFunctionToolCall

    tool: FunctionTool = function_tool(add)
    run_context: RunContextWrapper[None] = RunContextWrapper(context=None)
    # The parsed provider record; the SDK parses its arguments text on every call.
    call = ResponseFunctionToolCall(
        arguments=ARGUMENTS_TEXT, call_id=CALL_ID, name=TOOL_NAME, type="function_call"
    )

    async def invoke() -> str:
        tool_context = ToolContext.from_agent_context(run_context, CALL_ID, tool_call=call)
        output = await tool.on_invoke_tool(tool_context, call.arguments)
        item = ItemHelpers.tool_call_output_item(call, output)
        return text_of(item["output"])

    return Contender(
        kind="framework",
        label="openai-agents: @function_tool, on_invoke_tool, output item",
        version=distribution_version("openai-agents"),
        invoke=invoke,
    )


async def pydantic_ai_contender() -> Contender:
    """Return FunctionToolset -> ToolManager.handle_call -> ToolReturnPart.model_response_str."""
    from pydantic_ai import FunctionToolset, RunContext
    from pydantic_ai.messages import ToolCallPart, ToolReturnPart
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tool_manager import ToolManager
    from pydantic_ai.usage import RunUsage

    toolset: FunctionToolset[None] = FunctionToolset([add])
    run_context = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    manager = await ToolManager[None](toolset=toolset).for_run_step(run_context)
    # The parsed provider record; the arguments stay JSON text, validated from text per call.
    call = ToolCallPart(tool_name=TOOL_NAME, args=ARGUMENTS_TEXT, tool_call_id=CALL_ID)

    async def invoke() -> str:
        output = await manager.handle_call(call)
        part = ToolReturnPart(tool_name=TOOL_NAME, content=output, tool_call_id=CALL_ID)
        return part.model_response_str()

    return Contender(
        kind="framework",
        label="pydantic-ai: FunctionToolset, ToolManager.handle_call, model_response_str",
        version=distribution_version("pydantic-ai-slim"),
        invoke=invoke,
    )


async def mcp_contender() -> Contender:
    """Return json.loads -> MCPServer.call_tool in process -> the text content."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, TextContent

    server = MCPServer("bench")
    server.add_tool(add)

    async def invoke() -> str:
        result = await server.call_tool(TOOL_NAME, json.loads(ARGUMENTS_TEXT))
        if type(result) is not CallToolResult or len(result.content) != 1:
            raise TypeError(f"unexpected MCP result {result!r}")
        block = result.content[0]
        if type(block) is not TextContent:
            raise TypeError(f"unexpected MCP content {block!r}")
        return block.text

    return Contender(
        kind="framework",
        label="MCP SDK: json.loads, MCPServer.call_tool in process",
        version=distribution_version("mcp"),
        invoke=invoke,
    )


async def langchain_contender() -> Contender:
    """Return json.loads -> @tool ainvoke with a ToolCall dict -> ToolMessage.content."""
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import BaseTool, tool

    langchain_tool: BaseTool = tool(add)

    async def invoke() -> str:
        call = {
            "type": "tool_call",
            "id": CALL_ID,
            "name": TOOL_NAME,
            "args": json.loads(ARGUMENTS_TEXT),
        }
        message = await langchain_tool.ainvoke(call)
        if type(message) is not ToolMessage:
            raise TypeError(f"unexpected LangChain result {message!r}")
        return text_of(message.content)

    return Contender(
        kind="framework",
        label="langchain-core: @tool, ainvoke(ToolCall) -> ToolMessage.content",
        version=distribution_version("langchain-core"),
        invoke=invoke,
    )


CALL_PATHS: tuple[tuple[Kind, str, Callable[[], Awaitable[Contender]]], ...] = (
    ("harness", "harness", harness_contender),
    ("framework", "openai-agents", openai_agents_contender),
    ("framework", "pydantic-ai", pydantic_ai_contender),
    ("framework", "MCP SDK", mcp_contender),
    ("framework", "langchain-core", langchain_contender),
)


# --- the serializer -------------------------------------------------------------------------


def serializer_sample() -> dict[str, Any]:
    """Build the 128-node value: fourteen records of nine nodes in a list in a dict."""
    items = [
        {
            "id": index,
            "name": f"item-{index:02d}",
            "tags": ["alpha", "beta"],
            "owner": "team-a",
            "score": index * 1.5,
            "done": index % 2 == 0,
        }
        for index in range(14)
    ]
    value: dict[str, Any] = {"items": items}
    if count_nodes(value) != SERIALIZER_NODE_COUNT:
        raise AssertionError(f"sample has {count_nodes(value)} nodes, not {SERIALIZER_NODE_COUNT}")
    return value


def count_nodes(value: object) -> int:
    """Count every container and scalar of a JSON-like value (keys are not nodes)."""
    if type(value) is dict:
        return 1 + sum(count_nodes(item) for item in value.values())
    if type(value) is list or type(value) is tuple:
        return 1 + sum(count_nodes(item) for item in value)
    return 1


def json_dumps_encoder(value: dict[str, Any]) -> Encoder:
    """Return the standard library's C encoder with sorted keys, the reference speed."""
    return Encoder(
        kind="reference",
        label="json.dumps(sort_keys=True)",
        version="-",
        encode=lambda: json.dumps(value, sort_keys=True),
    )


def harness_encoder(value: dict[str, Any]) -> Encoder:
    """Return harness.tool_output's bounded serializer on the same value."""
    from harness.tool_output import serialize_output

    return Encoder(
        kind="harness",
        label=HARNESS_SERIALIZER,
        version=distribution_version("agent-harness-course"),
        encode=lambda: serialize_output(value),
    )


# --- measuring ------------------------------------------------------------------------------


async def time_async(invoke: AsyncCall, calls: int) -> float:
    """Return the mean microseconds per call over ``calls`` sequential awaits."""
    gc.collect()
    start = time.perf_counter_ns()
    for _ in range(calls):
        await invoke()
    return (time.perf_counter_ns() - start) / calls / 1000


def time_sync(encode: SyncCall, calls: int) -> float:
    """Return the mean microseconds per call over ``calls`` sequential calls."""
    gc.collect()
    start = time.perf_counter_ns()
    for _ in range(calls):
        encode()
    return (time.perf_counter_ns() - start) / calls / 1000


async def warm_up_contender(contender: Contender, calls: int) -> str:
    """Run a few calls so caches are hot, and return the text the path produces."""
    text = await contender.invoke()
    for _ in range(calls):
        await contender.invoke()
    return text


def rotations(entries: list[T], repeats: int) -> Iterator[list[T]]:
    """Yield ``entries`` once per repeat, rotated so no entry always follows the same one."""
    for repeat in range(repeats):
        shift = repeat % len(entries)
        yield entries[shift:] + entries[:shift]


async def measure_contenders(
    contenders: list[Contender], calls: int, repeats: int
) -> dict[str, list[float]]:
    """Return each contender's microseconds per call in every repeat, repeats interleaved."""
    samples: dict[str, list[float]] = {c.label: [] for c in contenders}
    for order in rotations(contenders, repeats):
        for contender in order:
            samples[contender.label].append(await time_async(contender.invoke, calls))
    return samples


def measure_encoders(encoders: list[Encoder], calls: int, repeats: int) -> dict[str, list[float]]:
    """Return each encoder's microseconds per encode in every repeat, repeats interleaved."""
    samples: dict[str, list[float]] = {e.label: [] for e in encoders}
    for order in rotations(encoders, repeats):
        for encoder in order:
            samples[encoder.label].append(time_sync(encoder.encode, calls))
    return samples


# --- setting up -----------------------------------------------------------------------------


async def set_up_call_paths(warmup: int) -> tuple[list[Contender], list[Unavailable]]:
    """Build every call path, warm it up and keep only those that give the expected text."""
    ready = [baseline_contender()]
    missing: list[Unavailable] = []
    for kind, label, factory in CALL_PATHS:
        try:
            contender = await factory()
            text = await warm_up_contender(contender, warmup)
        except Exception as error:  # a framework absent, or its API moved
            missing.append(Unavailable(kind=kind, label=label, reason=describe(error)))
            continue
        if text != EXPECTED_TEXT:
            reason = f"gave {text!r}, not {EXPECTED_TEXT!r}"
            missing.append(Unavailable(kind=kind, label=label, reason=reason))
            continue
        ready.append(contender)
    await warm_up_contender(ready[0], warmup)
    return ready, missing


def set_up_encoders(warmup: int) -> tuple[list[Encoder], list[Unavailable], str]:
    """Build both encoders, check they agree on the value, and say how their texts compare."""
    value = serializer_sample()
    reference = json_dumps_encoder(value)
    encoders = [reference]
    missing: list[Unavailable] = []
    note = ""
    label = HARNESS_SERIALIZER
    expected = reference.encode()
    try:
        harness = harness_encoder(value)
        text = harness.encode()
    except Exception as error:
        missing.append(Unavailable(kind="harness", label=label, reason=describe(error)))
    else:
        if json.loads(text) != json.loads(expected):
            reason = f"its text decodes differently: {text[:60]!r}..."
            missing.append(Unavailable(kind="harness", label=label, reason=reason))
        else:
            encoders.append(harness)
            note = f"{len(text)} chars from the harness, {len(expected)} from json.dumps"
    for encoder in encoders:
        for _ in range(warmup):
            encoder.encode()
    return encoders, missing, note


def describe(error: BaseException) -> str:
    """Return a one-line reason for a path that could not run."""
    if isinstance(error, ModuleNotFoundError):
        return f"cannot import {error.name} here"
    return f"{type(error).__name__}: {error}"


def text_of(content: object) -> str:
    """Return model-visible content as text, refusing anything but a plain string."""
    if type(content) is not str:
        raise TypeError(f"expected text content, got {type(content).__name__}")
    return content


def distribution_version(name: str) -> str:
    """Return the installed version of a distribution, or '?' when it is not installed."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "?"


# --- reporting ------------------------------------------------------------------------------


def build_rows(
    samples: dict[str, list[float]],
    ready: list[Contender] | list[Encoder],
    missing: list[Unavailable],
) -> list[Row]:
    """Turn samples into rows: the median time, and the median ratio to the first entry."""
    # A ratio is taken within each repeat, where both paths ran moments apart, so load
    # from other processes that drifts between repeats cancels out of it.
    reference = samples[ready[0].label]
    rows = [
        Row(
            kind=entry.kind,
            label=entry.label,
            version=entry.version,
            micros=statistics.median(samples[entry.label]),
            ratio=statistics.median(
                mine / theirs for mine, theirs in zip(samples[entry.label], reference, strict=True)
            ),
        )
        for entry in ready
    ]
    rows.extend(
        Row(
            kind=m.kind,
            label=m.label,
            version="-",
            micros=None,
            ratio=None,
            note=f"unavailable: {m.reason}",
        )
        for m in missing
    )
    return rows


def render_table(rows: list[Row], reference_name: str) -> list[str]:
    """Render rows as a Markdown table (readable in a terminal, pasteable into the docs)."""
    lines = [
        f"| path | version | µs/call | x {reference_name} |",
        "| --- | --- | ---: | ---: |",
    ]
    for row in rows:
        if row.micros is None or row.ratio is None:
            lines.append(f"| {row.label} | {row.version} | - | {row.note} |")
        else:
            lines.append(f"| {row.label} | {row.version} | {row.micros:.1f} | {row.ratio:.2f} |")
    return lines


def verdict(met: bool | None) -> str:
    """Return the word printed next to a target."""
    if met is None:
        return "UNKNOWN (a row is unavailable)"
    return "met" if met else "MISSED"


def below_every_framework(rows: list[Row]) -> tuple[bool | None, str]:
    """Say whether the harness took less time than every framework, and note any unavailable."""
    harness = next((r for r in rows if r.kind == "harness"), None)
    frameworks = [r for r in rows if r.kind == "framework"]
    framework_micros = [r.micros for r in frameworks if r.micros is not None]
    partial = "" if len(framework_micros) == len(frameworks) else " (some frameworks unavailable)"
    if harness is None or harness.micros is None or not framework_micros:
        return None, partial
    return harness.micros < min(framework_micros), partial


def render_targets(call_rows: list[Row], encoder_rows: list[Row]) -> list[str]:
    """Say, for each target the course sets, whether this run met it."""
    harness = next((r for r in call_rows if r.kind == "harness"), None)
    serializer = next((r for r in encoder_rows if r.kind == "harness"), None)

    harness_ratio = None if harness is None else harness.ratio
    serializer_ratio = None if serializer is None else serializer.ratio
    within_baseline = None if harness_ratio is None else harness_ratio <= HARNESS_TARGET_RATIO
    below_frameworks, partial = below_every_framework(call_rows)
    serializer_ok = (
        None if serializer_ratio is None else serializer_ratio <= SERIALIZER_TARGET_RATIO
    )
    return [
        "Targets:",
        f"  harness <= {HARNESS_TARGET_RATIO:.1f}x baseline ...... {verdict(within_baseline)}",
        f"  harness below every framework .. {verdict(below_frameworks)}{partial}",
        f"  serializer <= {SERIALIZER_TARGET_RATIO:.1f}x json.dumps .. {verdict(serializer_ok)}",
    ]


def machine_line() -> str:
    """Describe the interpreter and the machine the numbers come from."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{platform.python_implementation()} {platform.python_version()} on "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({cpu})"
    )


# --- entry point ----------------------------------------------------------------------------


async def run(calls: int, repeats: int, warmup: int) -> list[str]:
    """Measure everything in one event loop and return the report's lines."""
    ready, missing = await set_up_call_paths(warmup)
    encoders, encoder_missing, encoder_note = set_up_encoders(warmup)
    # Everything set up so far (four frameworks' modules) moves out of the collector's sight,
    # so the collections the timed calls trigger cost the same for every path.
    gc.collect()
    gc.freeze()
    call_samples = await measure_contenders(ready, calls, repeats)
    encoder_samples = measure_encoders(encoders, calls, repeats)

    call_rows = build_rows(call_samples, ready, missing)
    encoder_rows = build_rows(encoder_samples, encoders, encoder_missing)
    return [
        "Tool call benchmark: one add(left, right) call, arguments as JSON text -> model text",
        f"Machine: {machine_line()}",
        f"Method: {calls} sequential calls per repeat after {warmup} warm-up calls, "
        f"median of {repeats} interleaved repeats (ratios: median of per-repeat ratios), "
        "one asyncio loop",
        "",
        *render_table(call_rows, "baseline"),
        "",
        f"Serializer: one {SERIALIZER_NODE_COUNT}-node value"
        + (f" ({encoder_note})" if encoder_note else ""),
        "",
        *render_table(encoder_rows, "json.dumps"),
        "",
        *render_targets(call_rows, encoder_rows),
        "",
        NOT_A_GATE,
    ]


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    """Read the command line: how many calls, repeats and warm-up calls."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=500, help="calls per repeat (500)")
    parser.add_argument("--repeats", type=int, default=31, help="interleaved repeats (31)")
    parser.add_argument("--warmup", type=int, default=200, help="warm-up calls per path (200)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the tables and return 0 whatever the numbers are."""
    options = parse_arguments(argv)
    lines = asyncio.run(run(options.calls, options.repeats, options.warmup))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

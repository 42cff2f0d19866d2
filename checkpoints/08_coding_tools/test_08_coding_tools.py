"""Checkpoint 08 · Coding tools: the focused tests.

``nox -s new_checkpoint`` wrote this placeholder: one lab test, which passes against the
reference and fails on the lab's stub in a practice folder. Replace it with the checkpoint's
tests, each test of lab code tagged with its lab (CONTRIBUTING.md, Tests).
"""

from __future__ import annotations

import asyncio
import itertools
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkpoints.support import raises_exactly
from harness.abort import AbortController
from harness.coding_tools import placeholder
from harness.commands import (
    OutputBuffer,
    command_tool,
    describe_outcome,
    live_members,
    run_command,
)
from harness.protocol import ToolCall
from harness.tool import ToolRegistry, execute_tool_call


@pytest.mark.lab("8.1")
def test_placeholder_returns_the_checkpoint_slug() -> None:
    assert placeholder() == "coding_tools"


# ---- Labs 8.5, 8.6, 8.8: processes ----
# Processes are outside the harness: the tests look at them through /proc, by pid. A test that
# must know a command has started waits on a FIFO the command writes to, never on the clock.

lab_8_5 = pytest.mark.lab("8.5")


def is_alive(pid: int) -> bool:
    """Return True iff process ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def pids_in(output: str) -> list[int]:
    return [int(word) for word in output.split() if word.isdigit()]


async def started_pid(fifo: Path, task: asyncio.Future[Any]) -> int:
    """Return the pid a command writes to ``fifo`` once it runs; raise what ``task`` raised first.

    Opened without blocking, so that a task failing before the command starts (a lab stub)
    ends the wait instead of leaving a thread blocked on the FIFO for ever.
    """
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    loop = asyncio.get_running_loop()
    written = asyncio.Event()
    loop.add_reader(fd, written.set)  # readable once the command has written and closed it
    try:
        waiting = asyncio.ensure_future(written.wait())
        await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        await asyncio.wait({waiting})
        if task.done():
            task.result()  # the task's own error, if it failed before the command started
        return int(os.read(fd, 64))
    finally:
        loop.remove_reader(fd)
        os.close(fd)


# ---------------------------------------------------------------------------------------------
# Lab 8.5: commands
# ---------------------------------------------------------------------------------------------


@lab_8_5
async def test_a_command_gives_its_exit_code_and_its_output(tmp_path: Path) -> None:
    outcome = await run_command("echo hello; exit 3", root=tmp_path)
    assert (outcome.exit_code, outcome.signal, outcome.timed_out) == (3, None, False)
    assert outcome.output == "hello\n"
    assert describe_outcome(outcome) == "exit code 3\nhello\n"


@lab_8_5
async def test_a_command_runs_in_the_workspace_root(tmp_path: Path) -> None:
    outcome = await run_command("pwd; echo made > made.txt", root=tmp_path)
    assert outcome.output == f"{tmp_path}\n"
    assert (tmp_path / "made.txt").read_text() == "made\n"


@lab_8_5
async def test_stdout_and_stderr_come_back_as_one_stream_in_order(tmp_path: Path) -> None:
    outcome = await run_command("echo a; echo b >&2; echo c", root=tmp_path)
    assert outcome.output == "a\nb\nc\n"


@lab_8_5
async def test_a_command_leads_a_session_and_a_process_group_of_its_own(tmp_path: Path) -> None:
    outcome = await run_command("cat /proc/$$/stat", root=tmp_path)
    stat = outcome.output
    _state, _parent, group, session = stat[stat.rindex(")") + 2 :].split()[:4]
    assert int(group) == int(session) == outcome.pid
    assert int(group) != os.getpgid(0)


@lab_8_5
async def test_a_command_reads_nothing_from_the_harness_stdin(tmp_path: Path) -> None:
    outcome = await run_command("cat; echo end", root=tmp_path)
    assert outcome.output == "end\n"


@lab_8_5
async def test_a_timeout_stops_the_command_and_says_so(tmp_path: Path) -> None:
    outcome = await run_command("sleep 100", root=tmp_path, timeout=0.2)
    assert outcome.timed_out
    assert outcome.exit_code is None
    assert describe_outcome(outcome) == "timed out after 0.2 s; its process group was stopped\n"
    assert live_members(outcome.pid) == ()


@lab_8_5
async def test_a_timeout_stops_the_grandchildren_too(tmp_path: Path) -> None:
    outcome = await run_command("sleep 100 & sleep 100 & echo $!; wait", root=tmp_path, timeout=0.3)
    assert outcome.timed_out
    (grandchild,) = pids_in(outcome.output)
    assert not is_alive(grandchild)
    assert live_members(outcome.pid) == ()


@lab_8_5
async def test_a_background_job_does_not_outlive_its_command(tmp_path: Path) -> None:
    outcome = await run_command("sleep 100 & echo $!", root=tmp_path)
    assert (outcome.exit_code, outcome.timed_out) == (0, False)
    (job,) = pids_in(outcome.output)
    assert not is_alive(job)


@lab_8_5
async def test_a_cancelled_call_stops_the_group_before_the_cancellation_goes_on(
    tmp_path: Path,
) -> None:
    os.mkfifo(tmp_path / "started")
    task = asyncio.create_task(run_command("echo $$ > started; exec sleep 100", root=tmp_path))
    pid = await started_pid(tmp_path / "started", task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert live_members(pid) == ()
    assert not is_alive(pid)


@lab_8_5
async def test_an_abort_of_the_run_stops_the_command_group(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "started")
    registry = ToolRegistry([command_tool(tmp_path)])
    controller = AbortController()
    command = "echo $$ > started; sleep 100 & sleep 100; wait"
    call = ToolCall.create(id="c1", name="run_command", arguments={"command": command})
    task = asyncio.create_task(execute_tool_call(registry, call, controller.signal))
    pid = await started_pid(tmp_path / "started", task)
    controller.abort("user pressed stop")
    with raises_exactly(Exception, "user pressed stop"):
        await task
    assert live_members(pid) == ()


@lab_8_5
async def test_the_tool_reports_exit_and_output_as_its_result(tmp_path: Path) -> None:
    registry = ToolRegistry([command_tool(tmp_path)])
    call = ToolCall.create(id="c1", name="run_command", arguments={"command": "echo hi"})
    result = await execute_tool_call(registry, call, AbortController().signal)
    assert (result.is_error, result.content) == (False, "exit code 0\nhi\n")


@lab_8_5
async def test_the_model_may_shorten_the_timeout_but_never_lengthen_it(tmp_path: Path) -> None:
    registry = ToolRegistry([command_tool(tmp_path, timeout=0.2)])
    arguments = {"command": "sleep 100", "timeout": 1000}
    call = ToolCall.create(id="c1", name="run_command", arguments=arguments)
    result = await execute_tool_call(registry, call, AbortController().signal)
    assert result.content == "timed out after 0.2 s; its process group was stopped\n"


@lab_8_5
@pytest.mark.parametrize(
    ("command", "seconds", "message"),
    [
        ("", 1.0, "command must not be empty"),
        ("  \n", 1.0, "command must not be empty"),
        ("echo a\0b", 1.0, "command must not contain a NUL byte"),
        ("true", 0.0, "timeout must be a positive number of seconds, got 0.0"),
        ("true", float("nan"), "timeout must be a positive number of seconds, got nan"),
    ],
)
async def test_a_bad_command_or_timeout_is_refused(
    tmp_path: Path, command: str, seconds: float, message: str
) -> None:
    with raises_exactly(ValueError, message):
        await run_command(command, root=tmp_path, timeout=seconds)


@lab_8_5
def test_the_buffer_keeps_head_and_tail_and_counts_what_it_left_out() -> None:
    buffer = OutputBuffer(head=2, tail=2)
    for chunk in (b"abc", b"", b"defg"):
        buffer.add(chunk)
    assert buffer.omitted == 3
    assert buffer.text() == "ab\n[... 3 bytes left out ...]\nfg"


@lab_8_5
def test_output_that_is_not_utf8_is_replaced_not_refused() -> None:
    buffer = OutputBuffer()
    buffer.add(b"ok \xff\xfe")
    assert buffer.text() == "ok \ufffd\ufffd"


@lab_8_5
@given(
    data=st.binary(max_size=64),
    cuts=st.lists(st.integers(min_value=0, max_value=64), max_size=6),
    head=st.integers(min_value=0, max_value=8),
    tail=st.integers(min_value=0, max_value=8),
)
def test_the_buffer_keeps_the_same_bytes_however_the_stream_is_cut(
    data: bytes, cuts: list[int], head: int, tail: int
) -> None:
    buffer = OutputBuffer(head=head, tail=tail)
    edges = [0, *sorted(min(cut, len(data)) for cut in cuts), len(data)]
    for start, end in itertools.pairwise(edges):
        buffer.add(data[start:end])
    rest = data[head:]
    kept_tail = rest[len(rest) - tail :] if len(rest) > tail else rest
    omitted = len(rest) - len(kept_tail)
    marker = f"\n[... {omitted} bytes left out ...]\n" if omitted else ""
    expected = data[:head].decode(errors="replace") + marker + kept_tail.decode(errors="replace")
    assert (buffer.omitted, buffer.text()) == (omitted, expected)

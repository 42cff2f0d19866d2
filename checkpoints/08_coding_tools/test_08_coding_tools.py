"""Checkpoint 08 · Coding tools: the focused tests.

``nox -s new_checkpoint`` wrote this placeholder: one lab test, which passes against the
reference and fails on the lab's stub in a practice folder. Replace it with the checkpoint's
tests, each test of lab code tagged with its lab (CONTRIBUTING.md, Tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shutil
import signal
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkpoints.support import raises_exactly
from harness.abort import AbortController
from harness.agent_loop import ToolPolicy, run_agent_loop
from harness.coding_tools import placeholder
from harness.commands import (
    OutputBuffer,
    ProcessOutcome,
    command_tool,
    describe_outcome,
    run_command,
)
from harness.process_groups import kill_group, live_members
from harness.protocol import (
    AssistantMessage,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from harness.sandbox import (
    ExecutionResult,
    Isolation,
    SandboxLimits,
    SandboxUnavailableError,
    describe_execution,
    execute_code,
    execute_code_tool,
    find_isolation,
    launcher_argv,
)
from harness.scripted_model import ScriptedModel, ScriptedResponse
from harness.tool import ToolRegistry, execute_tool_call


@pytest.mark.lab("8.1")
def test_placeholder_returns_the_checkpoint_slug() -> None:
    assert placeholder() == "coding_tools"


# ---- Labs 8.5, 8.6, 8.8: processes ----
# Processes are outside the harness: the tests look at them through /proc, by pid. A test that
# must know a command has started waits on a FIFO the command writes to, never on the clock.

lab_8_5 = pytest.mark.lab("8.5")
lab_8_6 = pytest.mark.lab("8.6")
lab_8_8 = pytest.mark.lab("8.8")


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
async def test_a_timeout_of_the_07_policy_stops_the_command_group_too(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "started")
    started = os.open(tmp_path / "started", os.O_RDONLY | os.O_NONBLOCK)  # keeps what is written
    try:
        command = "echo $$ > started; sleep 100 & sleep 100; wait"
        call = ToolCall.create(id="c1", name="run_command", arguments={"command": command})
        model = ScriptedModel(
            [
                ScriptedResponse.reply(AssistantMessage(content=(call,))),
                ScriptedResponse.reply(AssistantMessage(content=(TextBlock(text="done"),))),
            ]
        )
        run = run_agent_loop(
            model,
            ToolRegistry([command_tool(tmp_path)]),
            [UserMessage(content=(TextBlock(text="go"),))],
            signal=AbortController().signal,
            policies={"run_command": ToolPolicy(timeout=1.0)},
        )
        async for _ in run:
            pass
        transcript = (await run.result()).transcript
        pid = int(os.read(started, 64))
    finally:
        os.close(started)
    (result,) = [m for m in transcript if type(m) is ToolResultMessage]
    assert result.content == (
        '{"error":{"code":"TOOL_TIMED_OUT",'
        '"message":"the tool did not finish within 1.0 s and was stopped"}}'
    )
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


@lab_8_5
async def test_a_command_printing_100_mb_costs_the_harness_bounded_memory(tmp_path: Path) -> None:
    tracemalloc.start()
    try:
        outcome = await run_command("head -c 100000000 /dev/zero | tr '\\0' x", root=tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcome.exit_code == 0
    assert outcome.omitted_bytes == 100_000_000 - 2 * 1536
    assert outcome.output == "x" * 1536 + f"\n[... {100_000_000 - 3072} bytes left out ...]\n" + (
        "x" * 1536
    )
    assert peak < 4 * 2**20


@pytest.mark.parametrize(
    ("exit_code", "signal_name", "omitted", "message"),
    [
        (0, "SIGKILL", 0, "ProcessOutcome needs exactly one of exit_code and signal"),
        (None, None, 0, "ProcessOutcome needs exactly one of exit_code and signal"),
        (0, None, -1, "ProcessOutcome.omitted_bytes must be >= 0, got -1"),
    ],
)
def test_an_outcome_that_cannot_happen_is_refused(
    exit_code: int | None, signal_name: str | None, omitted: int, message: str
) -> None:
    with raises_exactly(ValueError, message):
        ProcessOutcome(
            pid=1,
            exit_code=exit_code,
            signal=signal_name,
            output="",
            omitted_bytes=omitted,
            timed_out=False,
            timeout=1.0,
        )


# ---------------------------------------------------------------------------------------------
# Lab 8.6: sandboxed code
# ---------------------------------------------------------------------------------------------

REFUSED = (
    "this tool must run sandboxed, and no sandbox works here (tried bwrap, unshare); "
    "the code was not run"
)


async def sandboxed(code: str, **limits: Any) -> ExecutionResult:
    """Run ``code`` in the sandbox, or skip the test on a machine where none works."""
    result = await execute_code(code, limits=SandboxLimits(**limits), sandbox_required=False)
    if result.isolation is Isolation.NONE:
        pytest.skip("neither bwrap nor unshare can isolate the network on this machine")
    return result


@lab_8_6
async def test_code_runs_in_its_own_interpreter_and_its_output_comes_back() -> None:
    result = await sandboxed("import os, sys\nprint(6 * 7, sys.flags.isolated, os.getpid() > 0)")
    assert (result.outcome.exit_code, result.outcome.output) == (0, "42 1 True\n")
    assert describe_execution(result) == (
        f"isolation: {result.isolation.value} (no network)\nexit code 0\n42 1 True\n"
    )


@lab_8_6
async def test_code_runs_in_a_fresh_directory_that_is_removed_afterwards() -> None:
    code = "import os\nprint(os.getcwd())\nprint(sorted(os.listdir()))"
    first, second = await sandboxed(code), await sandboxed(code)
    (where, listing), (other, _) = (r.outcome.output.splitlines() for r in (first, second))
    assert listing == "['main.py']"
    assert where != other
    assert Path(where).name not in os.listdir(Path(where).parent)


@lab_8_6
async def test_the_code_sees_none_of_the_harness_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HARNESS_SECRET", "hunter2")
    result = await sandboxed("import os\nprint(dict(os.environ))")
    assert "HARNESS_SECRET" not in result.outcome.output
    assert "hunter2" not in result.outcome.output
    assert "PATH" not in result.outcome.output.replace("PWD", "")


@lab_8_6
async def test_the_limits_are_set_before_the_code_runs() -> None:
    code = (
        "import resource as r\n"
        "for name in ('CPU', 'AS', 'NOFILE', 'NPROC', 'FSIZE', 'CORE'):\n"
        "    print(name, *r.getrlimit(getattr(r, 'RLIMIT_' + name)))"
    )
    result = await sandboxed(
        code, cpu_seconds=3, memory_bytes=256 * 2**20, open_files=32, processes=16, file_bytes=4096
    )
    assert result.outcome.output.splitlines() == [
        "CPU 3 4",
        f"AS {256 * 2**20} {256 * 2**20}",
        "NOFILE 32 32",
        "NPROC 16 16",
        "FSIZE 4096 4096",
        "CORE 0 0",
    ]


@lab_8_6
def test_the_launcher_is_the_interpreter_in_isolated_mode_with_the_limits_as_arguments() -> None:
    argv = launcher_argv(Path("/usr/bin/python3"), SandboxLimits(), "main.py")
    assert argv[:3] == ["/usr/bin/python3", "-I", "-c"]
    assert argv[4:] == ["5", str(512 * 2**20), "64", "64", str(16 * 2**20), "main.py"]


@lab_8_6
async def test_the_wall_clock_stops_code_that_waits_for_ever() -> None:
    result = await sandboxed("import time\ntime.sleep(1000)", wall_seconds=0.5)
    assert result.outcome.timed_out
    assert describe_execution(result).splitlines()[1] == (
        "timed out after 0.5 s; every process was stopped"
    )
    assert live_members(result.outcome.pid) == ()


@lab_8_6
async def test_the_isolation_that_works_here_is_found_and_named() -> None:
    isolation, program = await find_isolation()
    if isolation is Isolation.NONE:
        pytest.skip("neither bwrap nor unshare can isolate the network on this machine")
    assert Path(program).name == isolation.value


@lab_8_6
async def test_without_bwrap_unshare_cuts_the_network_off(tmp_path: Path) -> None:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare (util-linux) is not installed")
    (tmp_path / "unshare").symlink_to(unshare)  # a search path where only unshare is found
    code = "import socket\nsocket.create_connection(('10.255.255.1', 80), timeout=5)"
    result = await execute_code(code, sandbox_required=False, search_path=str(tmp_path))
    if result.isolation is Isolation.NONE:
        pytest.skip("unshare cannot make namespaces on this machine")
    assert result.isolation is Isolation.UNSHARE
    assert "OSError: [Errno 101] Network is unreachable" in result.outcome.output


@lab_8_6
async def test_a_required_sandbox_that_cannot_be_set_up_refuses_to_run_the_code(
    tmp_path: Path,
) -> None:
    ran = tmp_path / "ran"
    code = f"open({str(ran)!r}, 'w').close()"
    with raises_exactly(
        SandboxUnavailableError,
        "this tool must run sandboxed, and no sandbox works here (tried bwrap, unshare); "
        "the code was not run",
    ):
        await execute_code(code, search_path=str(tmp_path))  # no bwrap, no unshare there
    assert not ran.exists()


@lab_8_6
async def test_code_that_need_not_be_sandboxed_runs_bare_and_says_so(tmp_path: Path) -> None:
    result = await execute_code("print('bare')", sandbox_required=False, search_path=str(tmp_path))
    assert result.isolation is Isolation.NONE
    assert describe_execution(result) == (
        "isolation: none (the network was reachable)\nexit code 0\nbare\n"
    )


@lab_8_6
async def test_the_tool_refuses_with_an_error_result_and_never_runs_bare(tmp_path: Path) -> None:
    registry = ToolRegistry([execute_code_tool(search_path=str(tmp_path))])
    call = ToolCall.create(id="c1", name="execute_code", arguments={"code": "print(1)"})
    result = await execute_tool_call(registry, call, AbortController().signal)
    assert result.is_error
    assert result.content == (
        '{"error":{"code":"TOOL_EXECUTION_FAILED","message":"SandboxUnavailableError: '
        + REFUSED
        + '"}}'
    )


@lab_8_6
async def test_code_with_a_nul_byte_is_refused() -> None:
    with raises_exactly(ValueError, "code must not contain a NUL byte"):
        await execute_code("print(1)\0")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("cpu_seconds", 0, "SandboxLimits.cpu_seconds must be a positive int, got 0"),
        ("open_files", 1.5, "SandboxLimits.open_files must be a positive int, got 1.5"),
        ("wall_seconds", 0, "SandboxLimits.wall_seconds must be a positive number, got 0"),
    ],
)
def test_a_limit_that_is_not_positive_is_refused(field: str, value: object, message: str) -> None:
    with raises_exactly(ValueError, message):
        SandboxLimits(**{field: value})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Lab 8.6, continued: hostile code meets the limits and the namespaces
# ---------------------------------------------------------------------------------------------


@lab_8_6
async def test_code_that_allocates_without_bound_gets_memory_error_and_the_harness_goes_on() -> (
    None
):
    code = "blocks = []\nwhile True:\n    blocks.append(bytearray(2**20))"
    result = await sandboxed(code, memory_bytes=128 * 2**20)
    assert result.outcome.exit_code == 1
    assert result.outcome.output.splitlines()[-1] == "MemoryError"
    after = await sandboxed("print('still here')")
    assert after.outcome.output == "still here\n"


@lab_8_6
async def test_code_that_forks_and_waits_is_stopped_whole_by_the_wall_clock() -> None:
    code = (
        "import os, time\n"
        "for _ in range(20):\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(1000)\n"
        "time.sleep(1000)\n"
    )
    result = await sandboxed(code, wall_seconds=1.0)
    assert result.outcome.timed_out
    assert live_members(result.outcome.pid) == ()


@lab_8_6
async def test_forks_past_the_process_limit_are_refused_except_for_root() -> None:
    code = (
        "import os, time\n"
        "made = 0\n"
        "try:\n"
        "    for _ in range(20):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(1000)\n"
        "        made += 1\n"
        "except BlockingIOError:\n"
        "    print('fork refused after', made)\n"
        "else:\n"
        "    print('forked', made)\n"
    )
    result = await sandboxed(code, processes=4)
    if os.geteuid() == 0:  # Linux does not enforce RLIMIT_NPROC for root: the page says so
        assert result.outcome.output == "forked 20\n"
    else:  # the limit counts every process of the user, so the first forks may fail already
        assert result.outcome.output.startswith("fork refused after ")
    assert live_members(result.outcome.pid) == ()


@lab_8_6
async def test_code_that_writes_a_huge_file_is_stopped_at_the_file_size_limit() -> None:
    # Python ignores SIGXFSZ, so the write past the limit fails with EFBIG instead.
    code = "with open('big', 'wb') as f:\n    while True:\n        f.write(bytes(2**16))"
    result = await sandboxed(code, file_bytes=2**20)
    assert result.outcome.output.splitlines()[-1] == "OSError: [Errno 27] File too large"


@lab_8_6
async def test_a_program_killed_at_the_file_size_limit_is_reported_so() -> None:
    code = (
        "import signal\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # as a program other than Python has it\n"
        "with open('big', 'wb') as f:\n"
        "    f.write(bytes(2**21))"
    )
    result = await sandboxed(code, file_bytes=2**20)
    assert describe_execution(result).splitlines()[1] == (
        "stopped by the file size limit (1048576 bytes)"
    )


@lab_8_6
async def test_code_that_loops_for_ever_is_stopped_by_the_cpu_limit() -> None:
    result = await sandboxed("while True:\n    pass", cpu_seconds=1, wall_seconds=30.0)
    assert describe_execution(result).splitlines()[1] == "stopped by the CPU limit (1 s)"


@lab_8_6
async def test_code_cannot_read_the_harness_environment_through_proc(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HARNESS_SECRET", "hunter2")
    code = f"print(open('/proc/{os.getpid()}/environ', 'rb').read())"
    result = await sandboxed(code)
    assert result.outcome.output.splitlines()[-1].startswith("FileNotFoundError: ")
    assert "hunter2" not in result.outcome.output


@lab_8_6
async def test_code_that_opens_a_socket_finds_no_network() -> None:
    code = "import socket\nsocket.create_connection(('10.255.255.1', 80), timeout=5)"
    result = await sandboxed(code)
    assert result.outcome.output.splitlines()[-1] == "OSError: [Errno 101] Network is unreachable"


# ---------------------------------------------------------------------------------------------
# Lab 8.8: hardening, processes
# ---------------------------------------------------------------------------------------------

IGNORES_TERM = "trap '' TERM; exec sleep 100"  # SIG_IGN survives exec: sleep ignores it too


@lab_8_8
async def test_kill_group_kills_every_member_even_those_ignoring_sigterm() -> None:
    process = await asyncio.create_subprocess_exec(
        "/bin/sh", "-c", f"({IGNORES_TERM}) & {IGNORES_TERM}", start_new_session=True
    )
    try:
        await kill_group(process.pid)
        assert live_members(process.pid) == ()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # whatever kill_group did, nothing is left
        await process.wait()
    assert process.returncode == -9


@lab_8_8
async def test_a_grandchild_ignoring_sigterm_is_killed_after_the_grace_period(
    tmp_path: Path,
) -> None:
    command = f"({IGNORES_TERM}) & echo $!; wait"
    outcome = await run_command(command, root=tmp_path, timeout=1.0, grace=0.3)
    (grandchild,) = pids_in(outcome.output)
    assert outcome.timed_out
    assert not is_alive(grandchild)
    assert live_members(outcome.pid) == ()


@lab_8_8
async def test_a_command_ignoring_sigterm_itself_ends_by_sigkill(tmp_path: Path) -> None:
    outcome = await run_command(IGNORES_TERM, root=tmp_path, timeout=1.0, grace=0.3)
    assert (outcome.timed_out, outcome.signal) == (True, "SIGKILL")
    assert live_members(outcome.pid) == ()


@lab_8_8
async def test_unsandboxed_code_that_ignores_sigterm_is_killed_when_its_call_is_cancelled(
    tmp_path: Path,
) -> None:
    os.mkfifo(tmp_path / "started")
    code = (
        "import os, signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"with open({str(tmp_path / 'started')!r}, 'w') as fifo:\n"
        "    fifo.write(str(os.getpid()))\n"
        "time.sleep(1000)\n"
    )
    limits = SandboxLimits(wall_seconds=60.0)
    bare = execute_code(code, limits=limits, sandbox_required=False, search_path=str(tmp_path))
    task = asyncio.ensure_future(bare)
    pid = await started_pid(tmp_path / "started", task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not is_alive(pid)

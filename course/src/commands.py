"""Run a command in the workspace in a process group of its own, and stop all of it on time.

Theory of operation
-------------------
A command is a tree of processes: ``sh -c "make test"`` starts make, which starts compilers,
which may start more. Killing the shell alone leaves the rest running, so the command starts in
a new session (``start_new_session=True``): it leads a process group, its descendants join that
group, and one ``os.killpg`` reaches every one of them::

    start, new session -> write the output to a Projection, wait for the leader to exit
        it exits           -> stop what is left of the group (a background job)  -> outcome
        timeout            -> stop the group: SIGTERM, grace period, SIGKILL      -> "timed out"
        task cancelled     -> the same stop, finished even while cancelled again  -> re-raise

The output is read while the command runs and written to a ``Projection`` (checkpoint 08's own,
from ``harness.projection``): it keeps the first and last bytes and spills the whole output to a
file in the workspace, so of a command printing 100 MB the harness keeps a few kilobytes (and
the chunk being read) and the model can read the middle in pages.

A process group is not a security boundary. A process can leave its group (``setsid``) and
outlive the stop; the page's security section says what does contain one.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_TIMEOUT",
    "GRACE_PERIOD",
    "ProcessOutcome",
    "command_tool",
    "describe_outcome",
    "run_command",
    "run_process",
    "stop_group",
]

import asyncio
import contextlib
import signal
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness.process_groups import kill_group, signal_group, wait_until_gone
from harness.projection import Projection
from harness.tool import ToolContext, ToolDefinition, define_tool
from harness.validators import object_schema, optional, positive_integer, string
from harness.workspace import Workspace

DEFAULT_TIMEOUT: Final = 30.0  # seconds a command may run when the model names no timeout
GRACE_PERIOD: Final = 2.0  # seconds between SIGTERM and SIGKILL


# --8<-- [start:outcome]
@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessOutcome:
    """How one process group ended, and what it printed (bounded)."""

    pid: int  # the leader's pid, which is also the group's id
    exit_code: int | None  # the leader's exit status; None iff a signal ended it
    signal: str | None  # the signal that ended the leader ("SIGKILL"); None iff it exited
    output: str  # stdout and stderr together, projected: whole, or head, marker and tail
    timed_out: bool  # True iff the timeout stopped it
    timeout: float  # the timeout it ran under, in seconds

    def __post_init__(self) -> None:
        if (self.exit_code is None) == (self.signal is None):
            raise ValueError("ProcessOutcome needs exactly one of exit_code and signal")


# --8<-- [end:outcome]


# --8<-- [start:group]
async def stop_group(pgid: int, grace: float) -> None:
    """Stop every process of the group ``pgid``: SIGTERM, then SIGKILL after ``grace`` seconds.

    SIGTERM first, so that programs can clean up. Returns once no live process of the group is
    left, or once kill_group has waited its KILL_WAIT seconds for one stuck in the kernel.
    Idempotent: a group that is already gone is not an error.
    """
    # BEGIN LAB 8.5
    signal_group(pgid, signal.SIGTERM)
    if not await wait_until_gone(pgid, grace):
        await kill_group(pgid)  # Lab 8.8: what ignored SIGTERM
    # END LAB 8.5


# --8<-- [end:group]


# --8<-- [start:finish]
async def _finish_even_if_cancelled(cleanup: Coroutine[Any, Any, None]) -> None:
    """Run ``cleanup`` to its end even if this task is cancelled meanwhile, then re-raise."""
    # BEGIN LAB 8.5
    # Checkpoint 07 cancels a stopped tool again every CANCEL_RETRY seconds. A bare await in a
    # `finally` would be cut short by the next cancellation, and the group would keep running:
    #     finally:
    #         await stop_group(process, grace)   # CancelledError here: SIGKILL never sent
    # So the stop runs in a task of its own, and we wait for it through shield, which a
    # cancellation interrupts without cancelling the task it protects.
    task = asyncio.get_running_loop().create_task(cleanup)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                raise
            cancelled = True
    task.result()  # the cleanup's own error, if it failed
    if cancelled:
        raise asyncio.CancelledError  # the cancellation we held back, now that all is stopped
    # END LAB 8.5


# --8<-- [end:finish]


# --8<-- [start:run-process]
class _Watcher(asyncio.SubprocessProtocol):
    """Feed a command's output to a projection; tell when it exits and when its pipes close."""

    def __init__(self, output: Projection) -> None:
        self.output = output
        # What the projection raised (a spill directory planted as a link, a full disk); None
        # iff every chunk was taken. Raised by run_process once the group is stopped.
        self.failure: Exception | None = None
        self.exited = asyncio.Event()  # set iff the leader has exited and been reaped
        self.closed = asyncio.Event()  # set iff every pipe is closed and the leader reaped

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        """Take a chunk of output as it arrives: the projection keeps memory bounded."""
        # BEGIN LAB 8.5
        assert type(data) is bytes, "the pipes are binary"
        if self.failure is None:  # an error raised here would only reach the loop's log
            try:
                self.output.write(data)
            except Exception as exc:
                self.failure = exc
        # END LAB 8.5

    def process_exited(self) -> None:
        """Note that the leader exited (its children may still hold the pipe)."""
        # BEGIN LAB 8.5
        self.exited.set()
        # END LAB 8.5

    def connection_lost(self, exc: Exception | None) -> None:
        """Note that the transport is done: leader reaped, every pipe closed."""
        # BEGIN LAB 8.5
        self.closed.set()
        # END LAB 8.5


async def run_process(  # noqa: PLR0913  each argument is one fact of the run, all keywords
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None,
    timeout: float,  # noqa: ASYNC109  the child's time limit, which the outcome reports
    output: Projection,
    grace: float = GRACE_PERIOD,
) -> ProcessOutcome:
    """Run ``argv`` in ``cwd`` in a new session; stop its whole group at exit or timeout.

    Its output goes to ``output``, finished once the group is gone. ``env`` None passes this
    process's environment on. Raises OSError if the program cannot be started, and
    CancelledError, once the group is stopped, if the calling task is cancelled; ``output`` is
    then left open, for the caller's ``with`` to remove its spill file.
    """
    # BEGIN LAB 8.5
    # Not create_subprocess_exec: its Process.wait() returns only once the pipes close too, and
    # a background job (`server &`) holds them open. The protocol says when the leader exits.
    loop = asyncio.get_running_loop()
    # The start runs in a task of its own. Cancelled half way, asyncio would kill the leader
    # alone and leave its children running; shielded, the start ends, and the finally stops all.
    starting = loop.create_task(
        loop.subprocess_exec(
            lambda: _Watcher(output),
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,  # one stream, in the order the command wrote it
            start_new_session=True,  # setsid() in the child: a session and a group of its own
        )
    )
    timed_out = False
    try:
        transport, watcher = await asyncio.shield(starting)
        try:
            async with asyncio.timeout(timeout):
                await watcher.exited.wait()
        except TimeoutError:
            timed_out = True
    finally:
        # Whatever happened (exit, timeout, cancellation), nothing of the group outlives it.
        await _finish_even_if_cancelled(_stop_and_close(starting, grace))
    if watcher.failure is not None:
        raise watcher.failure
    code = transport.get_returncode()
    assert code is not None, "the leader was reaped"
    return ProcessOutcome(
        pid=transport.get_pid(),
        exit_code=code if code >= 0 else None,
        signal=signal.Signals(-code).name if code < 0 else None,
        output=output.finish(),
        timed_out=timed_out,
        timeout=timeout,
    )
    # END LAB 8.5


# --8<-- [end:run-process]


# BEGIN LAB 8.5
async def _stop_and_close(
    starting: asyncio.Task[tuple[asyncio.SubprocessTransport, _Watcher]], grace: float
) -> None:
    """Stop the group, wait for the leader, read what is left in the pipe, close the transport."""
    try:
        transport, watcher = await starting
    except OSError:
        return  # it never started, so nothing runs; run_process raises the error
    try:
        await stop_group(transport.get_pid(), grace)
        await watcher.exited.wait()  # asyncio reaps the leader, our child: no zombie is left
        # Every writer of the pipe is dead now, so it closes, unless a process left the group
        # with setsid() and still holds it: then we stop reading after the grace period.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace):
                await watcher.closed.wait()
    finally:
        transport.close()  # idempotent; if the stop failed, it SIGKILLs the leader at least


# END LAB 8.5


# --8<-- [start:run-command]
async def run_command(
    command: str,
    *,
    workspace: Workspace,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109  the command's limit, as in run_process
    grace: float = GRACE_PERIOD,
) -> ProcessOutcome:
    """Run the shell command ``command`` in the root of ``workspace`` (see run_process).

    A long output is projected, and spilled whole to ``.harness/output/`` in the workspace.
    Raises ValueError for an empty command, a command with a NUL byte, or a timeout that is
    not a positive number of seconds.
    """
    # BEGIN LAB 8.5
    if not command.strip():
        raise ValueError("command must not be empty")
    if "\0" in command:
        raise ValueError("command must not contain a NUL byte")
    if not 0 < timeout < float("inf"):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    argv = ["/bin/sh", "-c", command]
    with Projection(workspace) as output:  # if the run fails, the spill file goes with it
        return await run_process(
            argv, cwd=Path(workspace.root), env=None, timeout=timeout, output=output, grace=grace
        )
    # END LAB 8.5


# --8<-- [end:run-command]


# --8<-- [start:describe]
def describe_outcome(outcome: ProcessOutcome) -> str:
    """Return what the model reads: how the command ended, then its output."""
    # BEGIN LAB 8.5
    if outcome.timed_out:
        ending = f"timed out after {outcome.timeout:g} s; its process group was stopped"
    elif outcome.signal is not None:
        ending = f"killed by {outcome.signal}"
    else:
        ending = f"exit code {outcome.exit_code}"
    return f"{ending}\n{outcome.output}"
    # END LAB 8.5


# --8<-- [end:describe]


# --8<-- [start:tool]
def command_tool(
    workspace: Workspace, *, timeout: float = DEFAULT_TIMEOUT, grace: float = GRACE_PERIOD
) -> ToolDefinition:
    """Define the run_command tool: a shell command in ``workspace``, at most ``timeout`` s.

    The model may ask for a shorter timeout, never a longer one.
    """
    # BEGIN LAB 8.5
    validate = object_schema(
        {
            "command": string(description="a shell command, run with /bin/sh -c"),
            "timeout": optional(positive_integer(description="seconds; capped by the host")),
        }
    )

    async def execute(value: dict[str, Any], context: ToolContext) -> str:
        seconds = min(float(value.get("timeout", timeout)), timeout)
        command = value["command"]
        outcome = await run_command(command, workspace=workspace, timeout=seconds, grace=grace)
        return describe_outcome(outcome)

    return define_tool(
        {
            "name": "run_command",
            "description": "Run a shell command in the workspace and return its exit and output.",
            "validate": validate,
            "execute": execute,
        }
    )
    # END LAB 8.5


# --8<-- [end:tool]

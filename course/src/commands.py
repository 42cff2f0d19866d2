"""Run a command in the workspace in a process group of its own, and stop all of it on time.

Theory of operation
-------------------
A command is a tree of processes: ``sh -c "make test"`` starts make, which starts compilers,
which may start more. Killing the shell alone leaves the rest running, so the command starts in
a new session (``start_new_session=True``): it leads a process group, its descendants join that
group, and one ``os.killpg`` reaches every one of them::

    start, new session -> read the output into a bounded buffer, wait for the leader to exit
        it exits           -> stop what is left of the group (a background job)  -> outcome
        timeout            -> stop the group: SIGTERM, grace period, SIGKILL      -> "timed out"
        task cancelled     -> the same stop, finished even while cancelled again  -> re-raise

The output is read while the command runs, into a buffer that keeps its first and last bytes and
counts what it dropped: a command printing 100 MB costs the harness a few kilobytes.

A process group is not a security boundary. A process can leave its group (``setsid``) and
outlive the stop; the page's security section says what does contain one.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_TIMEOUT",
    "GRACE_PERIOD",
    "KEPT_HEAD_BYTES",
    "KEPT_TAIL_BYTES",
    "OutputBuffer",
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
from harness.tool import ToolContext, ToolDefinition, define_tool
from harness.validators import object_schema, optional, positive_integer, string

DEFAULT_TIMEOUT: Final = 30.0  # seconds a command may run when the model names no timeout
GRACE_PERIOD: Final = 2.0  # seconds between SIGTERM and SIGKILL
KEPT_HEAD_BYTES: Final = 1536  # bytes of output kept from the start...
KEPT_TAIL_BYTES: Final = 1536  # ...and from the end: both fit 06's 4,096 code points


# --8<-- [start:outcome]
@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessOutcome:
    """How one process group ended, and what it printed (bounded)."""

    pid: int  # the leader's pid, which is also the group's id
    exit_code: int | None  # the leader's exit status; None iff a signal ended it
    signal: str | None  # the signal that ended the leader ("SIGKILL"); None iff it exited
    output: str  # stdout and stderr together: head, a marker if bytes were dropped, tail
    omitted_bytes: int  # how many bytes of output the marker stands for; 0 if none
    timed_out: bool  # True iff the timeout stopped it
    timeout: float  # the timeout it ran under, in seconds

    def __post_init__(self) -> None:
        if (self.exit_code is None) == (self.signal is None):
            raise ValueError("ProcessOutcome needs exactly one of exit_code and signal")
        if self.omitted_bytes < 0:
            raise ValueError(f"ProcessOutcome.omitted_bytes must be >= 0, got {self.omitted_bytes}")


# --8<-- [end:outcome]


# --8<-- [start:buffer]
class OutputBuffer:
    """Keep the first and last bytes of a stream, and count the bytes in between."""

    __slots__ = ("_head", "_head_size", "_omitted", "_tail", "_tail_size")

    def __init__(self, head: int = KEPT_HEAD_BYTES, tail: int = KEPT_TAIL_BYTES) -> None:
        """Keep at most ``head`` bytes from the start and ``tail`` bytes from the end."""
        self._head_size = head
        self._tail_size = tail
        self._head = bytearray()  # the first bytes, never more than head
        self._tail = bytearray()  # the latest bytes after the head, never more than tail
        self._omitted = 0  # bytes that left the tail: the marker's count

    def add(self, chunk: bytes) -> None:
        """Take the next chunk of the stream; memory stays within head + tail bytes."""
        # BEGIN LAB 8.5
        room = self._head_size - len(self._head)
        self._head += chunk[:room]
        self._tail += chunk[max(room, 0) :]
        overflow = len(self._tail) - self._tail_size
        if overflow > 0:
            del self._tail[:overflow]
            self._omitted += overflow
        # END LAB 8.5

    @property
    def omitted(self) -> int:
        """Return how many bytes were dropped between the head and the tail."""
        return self._omitted

    def text(self) -> str:
        """Return head, marker and tail as text; bytes that are not UTF-8 become U+FFFD."""
        # BEGIN LAB 8.5
        head = self._head.decode(errors="replace")
        tail = self._tail.decode(errors="replace")
        if not self._omitted:
            return head + tail
        return f"{head}\n[... {self._omitted} bytes left out ...]\n{tail}"
        # END LAB 8.5


# --8<-- [end:buffer]


# --8<-- [start:group]
async def stop_group(pgid: int, grace: float) -> None:
    """Stop every process of the group ``pgid``: SIGTERM, then SIGKILL after ``grace`` seconds.

    SIGTERM first, so that programs can clean up. Returns once no live process of the group is
    left. Idempotent: a group that is already gone is not an error.
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
    """Feed a command's output to a buffer; tell when it exits and when its pipes close."""

    def __init__(self, buffer: OutputBuffer) -> None:
        self.buffer = buffer
        self.exited = asyncio.Event()  # set iff the leader has exited and been reaped
        self.closed = asyncio.Event()  # set iff every pipe is closed and the leader reaped

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        """Take a chunk of output as it arrives: the buffer keeps memory bounded."""
        # BEGIN LAB 8.5
        assert type(data) is bytes, "the pipes are binary"
        self.buffer.add(data)
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


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None,
    timeout: float,  # noqa: ASYNC109  the child's time limit, which the outcome reports
    grace: float = GRACE_PERIOD,
) -> ProcessOutcome:
    """Run ``argv`` in ``cwd`` in a new session; stop its whole group at exit or timeout.

    ``env`` None passes this process's environment on. Raises OSError if the program cannot be
    started, and CancelledError, once the group is stopped, if the calling task is cancelled.
    """
    # BEGIN LAB 8.5
    # Not create_subprocess_exec: its Process.wait() returns only once the pipes close too, and
    # a background job (`server &`) holds them open. The protocol says when the leader exits.
    buffer = OutputBuffer()
    loop = asyncio.get_running_loop()
    # The start runs in a task of its own. Cancelled half way, asyncio would kill the leader
    # alone and leave its children running; shielded, the start ends, and the finally stops all.
    starting = loop.create_task(
        loop.subprocess_exec(
            lambda: _Watcher(buffer),
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
    code = transport.get_returncode()
    assert code is not None, "the leader was reaped"
    return ProcessOutcome(
        pid=transport.get_pid(),
        exit_code=code if code >= 0 else None,
        signal=signal.Signals(-code).name if code < 0 else None,
        output=buffer.text(),
        omitted_bytes=buffer.omitted,
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


async def run_command(
    command: str,
    *,
    root: Path,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109  the command's limit, as in run_process
    grace: float = GRACE_PERIOD,
) -> ProcessOutcome:
    """Run the shell command ``command`` in the workspace ``root`` (see run_process).

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
    return await run_process(
        ["/bin/sh", "-c", command], cwd=root, env=None, timeout=timeout, grace=grace
    )
    # END LAB 8.5


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
    root: Path, *, timeout: float = DEFAULT_TIMEOUT, grace: float = GRACE_PERIOD
) -> ToolDefinition:
    """Define the run_command tool: a shell command in ``root``, at most ``timeout`` seconds.

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
        outcome = await run_command(value["command"], root=root, timeout=seconds, grace=grace)
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

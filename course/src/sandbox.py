"""Run a model's Python code in a separate, limited interpreter, without network where possible.

Theory of operation
-------------------
xClaw's ``execute_code`` tool declares ``sandbox.required``: it may run only inside a sandbox.
Here the code runs as a program of its own, never inside the harness::

    find an isolation (bwrap, else unshare, else none)  --none, and required-->  refuse
    fresh temporary directory, code written to main.py
    [isolation ...] python -I -c LAUNCHER limits main.py    (empty environment, new session)
        LAUNCHER: setrlimit on itself, then exec python -I main.py
    wall-clock timeout -> the whole group is stopped (harness.commands)
    the directory is removed; the result names the isolation that was used

``python -I`` ignores the user's site-packages and every ``PYTHON*`` variable; the environment
is empty anyway, so no secret of the harness reaches the code. The limits are set by the
launcher, in the new process, before the model's code exists: limits survive ``exec``, and a
process that has just started has one thread, so ``setrlimit`` there cannot deadlock, which a
``preexec_fn`` (run between fork and exec in a copy of a threaded parent) can.

None of this is a security boundary against a hostile program on a shared kernel; the page's
security section says what each layer stops and what it does not.
"""

from __future__ import annotations

__all__ = [
    "SANDBOX_PROGRAMS",
    "ExecutionResult",
    "Isolation",
    "SandboxLimits",
    "SandboxUnavailableError",
    "describe_execution",
    "execute_code",
    "execute_code_tool",
    "find_isolation",
    "isolation_argv",
    "launcher_argv",
]

import enum
import os
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness.commands import ProcessOutcome, run_process
from harness.projection import Projection
from harness.tool import ToolContext, ToolDefinition, define_tool
from harness.validators import object_schema, string

MIB: Final = 1024 * 1024
# The programs that can isolate the network, in the order they are tried.
SANDBOX_PROGRAMS: Final = ("bwrap", "unshare")


# --8<-- [start:limits]
@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxLimits:
    """The resources one execution may use; every field is a positive int but wall_seconds."""

    cpu_seconds: int = 5  # RLIMIT_CPU: SIGXCPU at this many seconds of CPU time
    memory_bytes: int = 512 * MIB  # RLIMIT_AS: address space; an allocation past it fails
    open_files: int = 64  # RLIMIT_NOFILE: file descriptors
    processes: int = 64  # RLIMIT_NPROC: processes of the user (root is exempt: see the page)
    file_bytes: int = 16 * MIB  # RLIMIT_FSIZE: SIGXFSZ when a file would grow past it
    wall_seconds: float = 10.0  # the wall clock: then the whole group is stopped

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "memory_bytes", "open_files", "processes", "file_bytes"):
            value = getattr(self, name)
            if type(value) is not int or value <= 0:
                raise ValueError(f"SandboxLimits.{name} must be a positive int, got {value!r}")
        wall = self.wall_seconds
        if type(wall) not in (int, float) or not 0 < wall < float("inf"):
            raise ValueError(f"SandboxLimits.wall_seconds must be a positive number, got {wall!r}")


# --8<-- [end:limits]


class Isolation(enum.Enum):
    """How the code was cut off from the network."""

    BWRAP = "bwrap"  # bubblewrap: new namespaces, a minimal read-only file system
    UNSHARE = "unshare"  # util-linux unshare: new network and PID namespaces
    NONE = "none"  # nothing worked: the code can reach the network


class SandboxUnavailableError(Exception):
    """Raised when code that must run sandboxed cannot be, because no isolation works here."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionResult:
    """What one execution did, and under which isolation."""

    isolation: Isolation
    outcome: ProcessOutcome
    limits: SandboxLimits


# --8<-- [start:launcher]
# BEGIN LAB 8.6
# The first program in the sandbox: it limits itself, then becomes the model's program. It
# runs as `python -I -c _LAUNCHER cpu memory files processes file_size main.py`.
_LAUNCHER: Final = """\
import os, resource, sys
cpu, memory, files, processes, file_size = map(int, sys.argv[1:6])
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))
resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
os.execv(sys.executable, [sys.executable, "-I", sys.argv[6]])
"""
# END LAB 8.6


def launcher_argv(interpreter: Path, limits: SandboxLimits, script: str) -> list[str]:
    """Return the command that runs ``script`` under ``limits`` with ``interpreter -I``."""
    # BEGIN LAB 8.6
    # RLIMIT_CPU's hard limit is one second above the soft one: SIGXCPU first, which the code
    # may catch, then SIGKILL, which it cannot. No core files: they would fill the directory.
    numbers = (
        limits.cpu_seconds,
        limits.memory_bytes,
        limits.open_files,
        limits.processes,
        limits.file_bytes,
    )
    return [str(interpreter), "-I", "-c", _LAUNCHER, *map(str, numbers), script]
    # END LAB 8.6


# --8<-- [end:launcher]


# --8<-- [start:isolation]
def isolation_argv(
    isolation: Isolation, program: str, workdir: Path, interpreter: Path
) -> list[str]:
    """Return the prefix that runs a command under ``isolation``; ``program`` is its path."""
    # BEGIN LAB 8.6
    match isolation:
        case Isolation.BWRAP:
            # New namespaces for everything (network, PIDs, IPC, ...), and a file system made
            # of the system's programs and libraries, the interpreter, and the work directory.
            prefix = Path(sys.base_prefix)
            return [
                program,
                "--unshare-all",
                "--die-with-parent",
                "--ro-bind", "/usr", "/usr",
                "--ro-bind-try", "/lib", "/lib",
                "--ro-bind-try", "/lib64", "/lib64",
                "--ro-bind-try", "/bin", "/bin",
                "--ro-bind", str(prefix), str(prefix),
                "--ro-bind", str(interpreter), str(interpreter),
                "--proc", "/proc",
                "--dev", "/dev",
                "--tmpfs", "/tmp",
                "--bind", str(workdir), str(workdir),
                "--chdir", str(workdir),
                "--",
            ]  # fmt: skip
        case Isolation.UNSHARE:
            # A user namespace lets a non-root user make the others; root needs none.
            user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
            # --mount-proc: a /proc of the new PID namespace, where the harness is not listed.
            return [
                program, *user, "--net", "--pid", "--fork", "--kill-child", "--mount-proc", "--",
            ]  # fmt: skip
        case Isolation.NONE:
            return []
    # END LAB 8.6


async def find_isolation(search_path: str | None = None) -> tuple[Isolation, str]:
    """Return the first isolation that works here, and its program's path.

    Each program found on ``search_path`` (None: the PATH) is tried for real on ``true``:
    being installed is not enough (a container may forbid namespaces). Returns
    ``(Isolation.NONE, "")`` when none works.
    """
    # BEGIN LAB 8.6
    true = shutil.which("true")
    with tempfile.TemporaryDirectory(prefix="harness-probe-") as probe:
        for isolation in (Isolation.BWRAP, Isolation.UNSHARE):
            program = shutil.which(isolation.value, path=search_path)
            if program is None or true is None:
                continue
            argv = isolation_argv(isolation, program, Path(probe), Path(true))
            outcome = await run_process(
                [*argv, true], cwd=Path(probe), env={}, timeout=5.0, output=Projection(None)
            )
            if outcome.exit_code == 0:
                return isolation, program
    return Isolation.NONE, ""
    # END LAB 8.6


# --8<-- [end:isolation]


# --8<-- [start:execute]
async def execute_code(
    code: str,
    *,
    limits: SandboxLimits = SandboxLimits(),  # frozen: one shared default is safe
    sandbox_required: bool = True,
    search_path: str | None = None,
) -> ExecutionResult:
    """Run the Python ``code`` in a fresh directory under ``limits``; return what it did.

    Raises SandboxUnavailableError, before anything runs, when ``sandbox_required`` and no
    isolation works here (see find_isolation, which looks on ``search_path``); ValueError for
    code with a NUL byte. The directory is removed afterwards, whatever happened.
    """
    # BEGIN LAB 8.6
    if "\0" in code:
        raise ValueError("code must not contain a NUL byte")
    isolation, program = await find_isolation(search_path)
    if isolation is Isolation.NONE and sandbox_required:
        raise SandboxUnavailableError(
            "this tool must run sandboxed, and no sandbox works here "
            f"(tried {', '.join(SANDBOX_PROGRAMS)}); the code was not run"
        )
    interpreter = _interpreter()
    with tempfile.TemporaryDirectory(prefix="harness-sandbox-") as name:
        workdir = Path(name)
        (workdir / "main.py").write_text(code, encoding="utf-8")
        argv = [
            *isolation_argv(isolation, program, workdir, interpreter),
            *launcher_argv(interpreter, limits, "main.py"),
        ]
        # Projected without a workspace: the sandbox never touches it (which is why it may run
        # beside reads), so a long output keeps its head and tail and no spill file anywhere.
        output = Projection(None)
        outcome = await run_process(
            argv, cwd=workdir, env={}, timeout=limits.wall_seconds, output=output
        )
    return ExecutionResult(isolation=isolation, outcome=outcome, limits=limits)
    # END LAB 8.6


# --8<-- [end:execute]


def _interpreter() -> Path:
    """Return this Python's real executable: a venv's bin/python is a link to it."""
    # Run by its real path, the interpreter finds its standard library beside it and ignores
    # the venv (whose packages the code must not see anyway): one directory to mount.
    return Path(sys.executable).resolve()


def describe_execution(result: ExecutionResult) -> str:
    """Return what the model reads: the isolation, how the code ended, then its output."""
    # BEGIN LAB 8.6
    match result.isolation:
        case Isolation.NONE:
            where = "isolation: none (the network was reachable)"
        case isolation:
            where = f"isolation: {isolation.value} (no network)"
    return f"{where}\n{_ending(result)}\n{result.outcome.output}"
    # END LAB 8.6


def _ending(result: ExecutionResult) -> str:
    """Return how the code ended, naming the limit that stopped it."""
    # BEGIN LAB 8.6
    outcome, limits = result.outcome, result.limits
    if outcome.timed_out:
        return f"timed out after {outcome.timeout:g} s; every process was stopped"
    killed_by = _death_signal(result)
    if killed_by is None:
        return f"exit code {outcome.exit_code}"
    return _stopped_by(killed_by, limits)
    # END LAB 8.6


def _death_signal(result: ExecutionResult) -> str | None:
    """Return the name of the signal that killed the code, or None if it exited."""
    # BEGIN LAB 8.6
    outcome = result.outcome
    if outcome.signal is not None or outcome.exit_code is None:
        return outcome.signal
    # A wrapper (bwrap, unshare) outlives the code and exits as a shell reports a signal death:
    # 128 + the signal's number. (Code could exit with such a number itself; it would only
    # mislead its own report.)
    number = outcome.exit_code - 128
    if result.isolation is Isolation.NONE or number not in signal.valid_signals():
        return None
    return signal.Signals(number).name
    # END LAB 8.6


def _stopped_by(name: str, limits: SandboxLimits) -> str:
    """Return the sentence for a signal death: the limit it means, if it means one."""
    # BEGIN LAB 8.6
    if name == signal.SIGXCPU.name:
        return f"stopped by the CPU limit ({limits.cpu_seconds} s)"
    if name == signal.SIGXFSZ.name:
        return f"stopped by the file size limit ({limits.file_bytes} bytes)"
    return f"killed by {name}"
    # END LAB 8.6


# --8<-- [start:tool]
def execute_code_tool(
    *,
    limits: SandboxLimits = SandboxLimits(),  # frozen: one shared default is safe
    sandbox_required: bool = True,
    search_path: str | None = None,
) -> ToolDefinition:
    """Define xClaw's execute_code for Python; with ``sandbox_required`` it never runs bare."""
    # BEGIN LAB 8.6
    validate = object_schema({"code": string(description="a Python 3 program; print results")})

    async def execute(value: dict[str, Any], context: ToolContext) -> str:
        result = await execute_code(
            value["code"], limits=limits, sandbox_required=sandbox_required, search_path=search_path
        )
        return describe_execution(result)

    return define_tool(
        {
            "name": "execute_code",
            "description": "Run a Python program in a sandbox and return its output.",
            "validate": validate,
            "execute": execute,
        }
    )
    # END LAB 8.6


# --8<-- [end:tool]

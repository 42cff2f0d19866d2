"""Page 08 (coding tools): who runs a model's command or code in each framework, and what
confines it: a timeout, a bound on output, an import allowlist, a path check.

Nothing here runs an escape: the commands are Python functions standing in for a shell, the
code smolagents interprets touches no file, and Pydantic's MCP Run Python is read, never
started (it needs Deno and the network).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import threading
from pathlib import Path
from typing import Any

import mcp_run_python
import mcp_run_python.main as mcp_run_python_main
import pydantic_ai
import pytest
from agents import Agent, Runner
from agents.exceptions import UserError
from agents.items import ToolCallOutputItem
from agents.sandbox.sandboxes.unix_local import UnixLocalSandboxClient
from agents.testing import ScriptedModel, assistant_message
from agents.tool import LocalShellCommandRequest, LocalShellTool, ShellCommandRequest, ShellTool
from openai.types.responses.response_function_shell_tool_call import (
    Action,
    ResponseFunctionShellToolCall,
)
from openai.types.responses.response_output_item import LocalShellCall, LocalShellCallAction
from smolagents import local_python_executor
from smolagents.local_python_executor import (
    ExecutionTimeoutError,
    InterpreterError,
    LocalPythonExecutor,
)
from smolagents.utils import BASE_BUILTIN_MODULES

# Ten times the timeout the model asks for: long enough that a timeout, if there were one,
# would have ended the call first.
OVERRUN = 0.5

# --- OpenAI Agents SDK ----------------------------------------------------------------------


def shell_call(timeout_ms: int, max_output_length: int) -> ResponseFunctionShellToolCall:
    return ResponseFunctionShellToolCall(
        id="s1",
        call_id="s1",
        type="shell_call",
        status="completed",
        action=Action(
            commands=["make test"], timeout_ms=timeout_ms, max_output_length=max_output_length
        ),
    )


async def test_openai_agents_shell_tool_hands_the_limits_to_the_host() -> None:
    """Agents SDK: ShellTool's executor gets timeout_ms, unenforced; output cut to its head."""
    received: list[ShellCommandRequest] = []

    async def executor(request: ShellCommandRequest) -> str:
        received.append(request)
        await asyncio.sleep(OVERRUN)  # 10 times the timeout the model asked for
        return "0123456789" + "x" * 90

    model = ScriptedModel([[shell_call(50, 10)], [assistant_message("done")]])
    agent = Agent(name="probe", model=model, tools=[ShellTool(executor=executor)])
    result = await Runner.run(agent, "go")
    (request,) = received
    assert request.data.action.commands == ["make test"]
    assert request.data.action.timeout_ms == 50
    (item,) = [i for i in result.new_items if isinstance(i, ToolCallOutputItem)]
    assert item.output == "0123456789"  # the head, no marker, after the whole run
    assert item.raw_item["status"] == "completed"


async def test_openai_agents_local_shell_tool_passes_the_command_through() -> None:
    """Agents SDK: LocalShellTool hands the executor the model's command; no bound, no timeout."""
    received: list[LocalShellCommandRequest] = []

    def executor(request: LocalShellCommandRequest) -> str:
        received.append(request)
        return "y" * 100_000

    call = LocalShellCall(
        id="l1",
        call_id="l1",
        type="local_shell_call",
        status="completed",
        action=LocalShellCallAction(
            type="exec",
            command=["cat", "/etc/passwd"],
            env={"HOME": "/root"},
            working_directory="/",
            timeout_ms=50,
        ),
    )
    model = ScriptedModel([[call], [assistant_message("done")]])
    agent = Agent(name="probe", model=model, tools=[LocalShellTool(executor=executor)])
    result = await Runner.run(agent, "go")
    (request,) = received
    action = request.data.action
    assert (action.command, action.working_directory, action.timeout_ms) == (
        ["cat", "/etc/passwd"],
        "/",
        50,
    )
    assert action.env == {"HOME": "/root"}
    (item,) = [i for i in result.new_items if isinstance(i, ToolCallOutputItem)]
    assert item.output == "y" * 100_000


def test_openai_agents_shell_and_computer_actions_have_no_timeout() -> None:
    """Agents SDK: the shell, local shell and computer actions never name a timeout."""
    from agents.run_internal import tool_actions

    for action in (tool_actions.ShellAction, tool_actions.LocalShellAction):
        source = inspect.getsource(action)
        assert "timeout" not in source
        assert "wait_for" not in source
    assert "timeout" not in inspect.getsource(tool_actions.ComputerAction)


def test_openai_agents_unix_local_sandbox_says_it_confines_nothing_on_linux() -> None:
    """Agents SDK: SandboxAgent's UnixLocalSandbox says Linux sessions add no confinement."""
    doc = " ".join((UnixLocalSandboxClient.__doc__ or "").split())
    assert "Linux sessions add no OS-level command confinement." in doc
    assert "do not establish an OS isolation boundary." in doc
    assert "use an appropriately configured Docker or hosted backend" in doc


def test_openai_agents_hosted_shell_takes_no_executor() -> None:
    """Agents SDK: a hosted ShellTool (OpenAI's container) takes no executor and no approval."""
    container: Any = {"type": "container_auto", "network_policy": {"type": "disabled"}}

    def executor(request: ShellCommandRequest) -> str:
        return ""

    assert ShellTool(environment=container).executor is None
    with pytest.raises(UserError, match="hosted environment does not accept an executor"):
        ShellTool(environment=container, executor=executor)
    with pytest.raises(UserError, match="does not support needs_approval or on_approval"):
        ShellTool(environment=container, needs_approval=True)
    with pytest.raises(UserError, match="local environment requires an executor"):
        ShellTool()


# --- smolagents -------------------------------------------------------------------------------


def smol_executor(authorized: list[str] | None = None, **options: Any) -> LocalPythonExecutor:
    executor = LocalPythonExecutor(authorized or [], **options)
    executor.send_tools({})
    return executor


def smol_error(executor: LocalPythonExecutor, code: str) -> str:
    """The message of the InterpreterError that running ``code`` raises."""
    with pytest.raises(InterpreterError) as raised:
        executor(code)
    return str(raised.value)


def test_smolagents_refuses_an_import_outside_its_allowlist() -> None:
    """smolagents: an import outside `authorized_imports` is refused; `random._os` too."""
    executor = smol_executor()
    assert smol_error(executor, "import os").endswith(
        "InterpreterError: Import of os is not allowed. Authorized imports are: "
        f"{executor.authorized_imports}"
    )
    assert (
        sorted(executor.authorized_imports)
        == sorted(BASE_BUILTIN_MODULES)
        == [
            *("collections", "datetime", "itertools", "math", "queue", "random", "re"),
            *("stat", "statistics", "time", "unicodedata"),
        ]
    )
    assert smol_error(executor, "import random\nrandom._os").endswith(
        "InterpreterError: Forbidden access to module: os"
    )
    assert smol_error(executor, "open('notes.txt')").endswith(
        "InterpreterError: Forbidden function evaluation: 'open' is not among the explicitly "
        "allowed tools or defined/imported in the preceding code"
    )
    assert smol_error(executor, "(1).__class__").endswith(
        "InterpreterError: Forbidden access to dunder attribute: __class__"
    )


def test_smolagents_star_authorizes_every_module_in_the_host_process() -> None:
    """smolagents: "not a security sandbox"; with "*", `os` runs in the host; a blocklist unused."""
    doc = " ".join((LocalPythonExecutor.__doc__ or "").split())
    assert "It is not a security sandbox: for isolated execution of untrusted code" in doc
    result = smol_executor(["*"])("import os\nos.getpid()")
    assert result.output == os.getpid()
    source = inspect.getsource(local_python_executor)
    assert source.count("DANGEROUS_MODULES") == 1  # defined, never read
    assert "ctypes" not in local_python_executor.DANGEROUS_MODULES


def test_smolagents_code_shares_the_host_process_objects() -> None:
    """smolagents: the code runs in the host's process: it changes the host's own objects."""
    data: list[int] = []
    executor = smol_executor()
    executor.send_variables({"data": data})
    executor("data.append(42)")
    assert data == [42]


def test_smolagents_counts_operations_and_while_iterations(monkeypatch: pytest.MonkeyPatch) -> None:
    """smolagents: 10,000,000 operations, 1,000,000 while iterations, then an InterpreterError."""
    assert local_python_executor.MAX_OPERATIONS == 10_000_000
    assert local_python_executor.MAX_WHILE_ITERATIONS == 1_000_000
    # The limits are read when the code runs: made small, they show their errors at once.
    monkeypatch.setattr(local_python_executor, "MAX_WHILE_ITERATIONS", 100)
    monkeypatch.setattr(local_python_executor, "MAX_OPERATIONS", 1_000)
    assert smol_error(smol_executor(), "while True:\n    pass").endswith(
        "InterpreterError: Maximum number of 100 iterations in While loop exceeded"
    )
    assert smol_error(smol_executor(), "for i in range(10**9):\n    x = i").endswith(
        "InterpreterError: Reached the max number of operations of 1000. Maybe there is an "
        "infinite loop somewhere in the code, or you're just asking too many calculations."
    )


def test_smolagents_bounds_printed_output_once_the_code_has_run() -> None:
    """smolagents: printed output is cut to its head and tail, once the code has run."""
    assert local_python_executor.DEFAULT_MAX_LEN_OUTPUT == 50_000
    result = smol_executor(max_print_outputs_length=100)("print('a' * 1000)")
    marker = "\n..._This content has been truncated to stay below 100 characters_...\n"
    assert result.logs == "a" * 50 + marker + "a" * 49 + "\n"
    # The cut is made on the whole text, after the last statement: all of it was held first.
    source = inspect.getsource(local_python_executor.evaluate_python_code)
    loop = source.index("for node in expression.body")
    assert source.index("truncate_content", loop) > loop


def test_smolagents_timeout_returns_only_once_the_code_has_finished() -> None:
    """smolagents: past `timeout_seconds`, ExecutionTimeoutError comes only after the code ends."""
    assert local_python_executor.MAX_EXECUTION_TIME_SECONDS == 30
    log: list[str] = []
    never = threading.Event()

    def hold() -> None:
        never.wait(2.0)  # twice the timeout below
        log.append("the code finished")

    executor = LocalPythonExecutor([], additional_functions={"hold": hold}, timeout_seconds=1)
    executor.send_tools({})
    with pytest.raises(ExecutionTimeoutError, match="maximum execution time of 1 seconds"):
        executor("hold()")
    log.append("the timeout was raised")
    assert log == ["the code finished", "the timeout was raised"]


# --- Pydantic's MCP Run Python ----------------------------------------------------------------

MCP_RUN_PYTHON = Path(mcp_run_python.__file__).resolve().parent


def test_mcp_run_python_confines_code_by_deno_permissions() -> None:
    """MCP Run Python: Deno may read ./node_modules only, and reach the network by default."""
    assert mcp_run_python_main._deno_run_args("stdio") == [
        *("run", "--allow-net", "--allow-read=./node_modules", "--node-modules-dir=auto"),
        *("src/main.ts", "stdio", "--return-mode=xml"),
    ]
    assert "--allow-net" not in mcp_run_python_main._deno_run_args("stdio", allow_networking=False)
    # Installing the packages always has the network, and writes ./node_modules.
    assert mcp_run_python_main._deno_install_args() == [
        *("run", "--allow-net", "--allow-read=./node_modules", "--allow-write=./node_modules"),
        *("--node-modules-dir=auto", "src/main.ts", "noop"),
    ]
    parameters = inspect.signature(mcp_run_python.code_sandbox).parameters
    assert parameters["allow_networking"].default is True


def test_mcp_run_python_has_no_timeout_or_memory_limit() -> None:
    """MCP Run Python: neither its Python nor its Deno files name a timeout or a memory limit."""
    files = sorted(MCP_RUN_PYTHON.rglob("*.py")) + sorted(MCP_RUN_PYTHON.rglob("*.ts"))
    assert {path.name for path in files} >= {"main.py", "code_sandbox.py", "main.ts", "runCode.ts"}
    for path in files:
        text = path.read_text(encoding="utf-8").lower()
        assert "timeout" not in text, path
        assert "--v8-flags" not in text, path  # Deno's way to cap the heap
        assert "max-old-space" not in text, path


def test_pydantic_ai_does_not_ship_mcp_run_python() -> None:
    """Pydantic AI 2.68: no file of its package names MCP Run Python; it is a separate package."""
    package = Path(pydantic_ai.__file__).resolve().parent
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "mcp_run_python" not in text, path
        assert "mcp-run-python" not in text, path


# --- Pi coding agent ----------------------------------------------------------------------------


def test_pi_read_and_write_accept_any_path(pi: dict[str, Any]) -> None:
    """Pi: read and write take `../`, absolute paths and links out of the cwd as they are."""
    tools = pi["codingTools"]
    assert tools["version"] == "0.85.0"
    outside = {"ok": "outside the workspace\n"}
    assert tools["readDotDot"] == tools["readAbsolute"] == tools["readLink"] == outside
    assert tools["writeDotDot"] == {
        "ok": "Successfully wrote to ../made/by/write.txt",
        "written": True,
    }


def test_pi_bash_keeps_the_tail_and_spills_to_the_temp_folder(pi: dict[str, Any]) -> None:
    """Pi: bash keeps the last 2,000 lines or 50 KB; the whole output goes to a temp file."""
    tools = pi["codingTools"]
    assert tools["limits"] == {"maxLines": 2000, "maxBytes": 51200}
    assert tools["bashLong"] == {
        "first": "1001",
        "marker": "[Showing lines 1001-3000 of 3000. Full output: SPILL]",
        "spillInTmpdir": True,
        "spillLines": 3000,
    }


def test_pi_bash_runs_with_the_whole_environment(pi: dict[str, Any]) -> None:
    """Pi: a bash command sees every variable of the agent's environment."""
    assert pi["codingTools"]["bashEnv"] == "secret=hunter2\n"


def test_pi_bash_timeout_kills_the_group_without_sigterm(pi: dict[str, Any]) -> None:
    """Pi: bash has no default timeout; one given SIGKILLs the group at once, no SIGTERM first."""
    tools = pi["codingTools"]
    assert tools["bashHasNoDefaultTimeout"] is True
    assert tools["bashTimeout"] == {
        "error": "Command timed out after 0.5 seconds",
        "grandchildAlive": False,
        "termTrapRan": False,
    }

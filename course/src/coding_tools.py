"""Assemble the coding tools of checkpoint 08 into the tool definitions one agent run is given.

This is the one place that turns the plain functions of ``harness.file_tools`` and
``harness.file_search`` into checkpoint 06 tools (``define_tool``, with validators from
``harness.validators``), adds the command and sandbox tools of ``harness.commands`` and
``harness.sandbox``, and says how checkpoint 07's loop may run them (``ToolPolicy``). The file
functions are blocking I/O, so each file tool runs its function in a worker thread: the event
loop keeps serving the other calls meanwhile. A thread cannot be interrupted, so a call
cancelled by a timeout or an abort returns at once while its function finishes the bounded work
it started (a write still ends whole, or not at all).
"""

from __future__ import annotations

__all__ = ["coding_tool_policies", "coding_tools", "file_tools"]

import asyncio
from collections.abc import Callable
from typing import Any

from harness.agent_loop import ToolPolicy
from harness.commands import command_tool
from harness.file_search import grep, list_files
from harness.file_tools import MAX_READ_LINES, edit_file, read_file, write_file
from harness.sandbox import execute_code_tool
from harness.tool import ToolContext, ToolDefinition, define_tool
from harness.validators import boolean, object_schema, optional, positive_integer, string
from harness.workspace import Workspace

Arguments = dict[str, Any]  # a validated value: the fields object_schema accepted


def _tool(
    name: str, description: str, validate: Callable[[object], Any], run: Callable[[Arguments], str]
) -> ToolDefinition:
    """Define a tool whose execute runs ``run(arguments)`` in a worker thread."""

    async def execute(arguments: Arguments, context: ToolContext) -> str:
        return await asyncio.to_thread(run, arguments)

    return define_tool(
        {"name": name, "description": description, "validate": validate, "execute": execute}
    )


# --8<-- [start:file-tools]
def file_tools(workspace: Workspace) -> tuple[ToolDefinition, ...]:
    """Return read_file, write_file, edit_file, list_files and grep, bound to ``workspace``."""
    path = string(description="a path in the workspace, relative to its root")
    lines = optional(positive_integer())
    pattern = optional(string(description="an fnmatch pattern; its * crosses /"))
    ignored = optional(boolean(description="true: also what .gitignore files ignore"))

    def read(a: Arguments) -> str:
        offset, limit = a.get("offset", 1), a.get("limit", MAX_READ_LINES)
        return read_file(workspace, a["path"], offset=offset, limit=limit)

    def write(a: Arguments) -> str:
        return write_file(workspace, a["path"], a["content"])

    def edit(a: Arguments) -> str:
        count = a.get("count", 1)
        return edit_file(workspace, a["path"], a["old_text"], a["new_text"], count=count)

    def list_(a: Arguments) -> str:
        path_, pattern_ = a.get("path", "."), a.get("pattern", "*")
        return list_files(
            workspace, path_, pattern=pattern_, include_ignored=a.get("include_ignored", False)
        )

    def grep_(a: Arguments) -> str:
        path_, pattern_ = a.get("path", "."), a.get("pattern", "*")
        include_ignored = a.get("include_ignored", False)
        return grep(workspace, a["text"], path_, pattern=pattern_, include_ignored=include_ignored)

    return (
        _tool(
            "read_file",
            f"Read a text file's numbered lines from offset (1 if absent), at most limit "
            f"(at most {MAX_READ_LINES}); the result says where to continue.",
            object_schema({"path": path, "offset": lines, "limit": lines}),
            read,
        ),
        _tool(
            "write_file",
            "Replace a file's whole content, or create it and its directories.",
            object_schema({"path": path, "content": string()}),
            write,
        ),
        _tool(
            "edit_file",
            "Replace old_text by new_text; old_text must occur exactly count times (1 if absent).",
            object_schema(
                {"path": path, "old_text": string(), "new_text": string(), "count": lines}
            ),
            edit,
        ),
        _tool(
            "list_files",
            "List what is under a directory (the root if absent), sorted; pattern (fnmatch, "
            "its * crosses /) filters the paths below it. What .gitignore files ignore is left "
            "out unless include_ignored is true.",
            object_schema({"path": optional(path), "pattern": pattern, "include_ignored": ignored}),
            list_,
        ),
        _tool(
            "grep",
            "Find the lines that contain text (plain text, not a regex) in the text files "
            "under a directory; pattern and include_ignored choose the files as for list_files.",
            object_schema(
                {
                    "text": string(),
                    "path": optional(path),
                    "pattern": optional(string()),
                    "include_ignored": ignored,
                }
            ),
            grep_,
        ),
    )


# --8<-- [end:file-tools]


# --8<-- [start:policies]
def coding_tool_policies() -> dict[str, ToolPolicy]:
    """Return how checkpoint 07's loop may run each coding tool (the host's choice)."""
    # Reading never changes the workspace, so reads run side by side; a write or an edit runs
    # alone, so no read sees the workspace half way through a turn's changes.
    safe = ToolPolicy(concurrency_safe=True)
    # The sandbox never touches the workspace; a command may change anything, so it runs alone.
    return {"read_file": safe, "list_files": safe, "grep": safe, "execute_code": safe}


# --8<-- [end:policies]


def coding_tools(workspace: Workspace) -> tuple[ToolDefinition, ...]:
    """Return every coding tool bound to ``workspace``: the file tools, then the others."""
    # run_command works in the workspace's directory; execute_code in a fresh one of its own.
    return (*file_tools(workspace), command_tool(workspace), execute_code_tool())

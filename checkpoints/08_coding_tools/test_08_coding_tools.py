"""Checkpoint 08: coding tools, confined to a workspace, with bounded output.

Each test is tagged with the lab it proves: 8.1 workspace paths, 8.2 bounded reading and the
projection of long output, 8.3 writing and editing, 8.4 listing and searching, 8.5 commands in
a process group of their own, 8.6 sandboxed code, 8.7 the hostile files and paths (NUL bytes,
names that are not UTF-8, FIFOs, an interrupted write), 8.8 process groups that refuse to die.
Every file test works in its own temporary directory: a workspace ``ws`` and, beside it, a
directory ``outside`` holding a secret that no test may ever read or change.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkpoints.support import raises_exactly
from harness.abort import AbortController
from harness.agent_loop import LoopCompleted, ToolPolicy, run_agent_loop
from harness.coding_tools import coding_tool_policies, coding_tools
from harness.commands import (
    ProcessOutcome,
    command_tool,
    describe_outcome,
    run_command,
)
from harness.file_hazards import describe_unusable_path, discard_partial_write
from harness.file_search import grep, list_files
from harness.file_tools import (
    MAX_LINE_BYTES,
    MAX_READ_CHARS,
    FileToolError,
    edit_file,
    read_file,
    write_file,
)
from harness.process_groups import kill_group, live_members
from harness.projection import Projection
from harness.protocol import (
    AssistantMessage,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    thaw_json,
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
from harness.tool import MAX_CONTENT_CODE_POINTS, ToolRegistry, execute_tool_call
from harness.workspace import (
    MAX_LINKS,
    Workspace,
    WorkspaceError,
    workspace_at,
)

SECRET = "the secret outside the workspace\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(SECRET, encoding="utf-8")
    return tmp_path / "ws"


@pytest.fixture
def ws(root: Path) -> Workspace:
    return workspace_at(root)


def read_fd(fd: int) -> str:
    """Read a whole small file through a descriptor the workspace opened, and close it."""
    with os.fdopen(fd, "r", encoding="utf-8") as file:
        return file.read()


def same_file(fd: int, path: Path) -> bool:
    """Return True iff the open descriptor is the file at ``path`` (same device and inode)."""
    opened, expected = os.fstat(fd), os.stat(path)
    return (opened.st_dev, opened.st_ino) == (expected.st_dev, expected.st_ino)


# ---- Lab 8.1: workspace paths ----


@pytest.mark.lab("8.1")
@pytest.mark.parametrize("path", ["a.txt", "./a.txt", "src/../a.txt", "src//./../a.txt"])
def test_a_relative_path_opens_the_file_beneath_the_root(
    root: Path, ws: Workspace, path: str
) -> None:
    (root / "src").mkdir()
    (root / "a.txt").write_text("alpha\n", encoding="utf-8")
    assert read_fd(ws.open_file(path)) == "alpha\n"


@pytest.mark.lab("8.1")
def test_an_absolute_path_inside_the_root_names_the_file_below_it(
    root: Path, ws: Workspace
) -> None:
    (root / "a.txt").write_text("alpha\n", encoding="utf-8")
    assert read_fd(ws.open_file(f"{ws.root}/a.txt")) == "alpha\n"


@pytest.mark.lab("8.1")
@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "../outside/secret.txt",
            "PATH_OUTSIDE_WORKSPACE: '../outside/secret.txt' is outside the workspace",
        ),
        (
            "src/../../outside/secret.txt",
            "PATH_OUTSIDE_WORKSPACE: 'src/../../outside/secret.txt' is outside the workspace",
        ),
        ("..", "PATH_OUTSIDE_WORKSPACE: '..' is outside the workspace"),
        ("/etc/passwd", "PATH_OUTSIDE_WORKSPACE: '/etc/passwd' is outside the workspace"),
    ],
)
def test_a_path_that_leaves_is_refused_naming_the_path_as_given(
    root: Path, ws: Workspace, path: str, message: str
) -> None:
    (root / "src").mkdir()
    with raises_exactly(WorkspaceError, message) as caught:
        ws.open_file(path)
    assert caught.value.code == "PATH_OUTSIDE_WORKSPACE"
    assert caught.value.path == path
    assert str(root) not in str(caught.value)  # never the host's absolute path


@pytest.mark.lab("8.1")
def test_a_sibling_whose_name_starts_like_the_root_is_outside(root: Path, ws: Workspace) -> None:
    sibling = root.parent / "ws-other"
    sibling.mkdir()
    (sibling / "x.txt").write_text(SECRET, encoding="utf-8")
    with raises_exactly(
        WorkspaceError, "PATH_OUTSIDE_WORKSPACE: '../ws-other/x.txt' is outside the workspace"
    ):
        ws.open_file("../ws-other/x.txt")
    with pytest.raises(WorkspaceError) as caught:  # the message repeats the host path it was given
        ws.open_file(f"{ws.root}-other/x.txt")
    assert caught.value.code == "PATH_OUTSIDE_WORKSPACE"


@pytest.mark.lab("8.1")
@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("etc/passwd", "PATH_OUTSIDE_WORKSPACE: 'etc/passwd' is outside the workspace"),
        ("out/secret.txt", "PATH_OUTSIDE_WORKSPACE: 'out/secret.txt' is outside the workspace"),
        ("secret.txt", "PATH_OUTSIDE_WORKSPACE: 'secret.txt' is outside the workspace"),
        ("out", "PATH_OUTSIDE_WORKSPACE: 'out' is outside the workspace"),
    ],
)
def test_a_symlink_to_etc_and_a_symlinked_parent_pointing_outside_are_refused(
    root: Path, ws: Workspace, path: str, message: str
) -> None:
    (root / "etc").symlink_to("/etc")
    (root / "out").symlink_to("../outside")
    (root / "secret.txt").symlink_to(root.parent / "outside" / "secret.txt")
    with raises_exactly(WorkspaceError, message):
        ws.open_file(path)


@pytest.mark.lab("8.1")
def test_a_link_that_stays_inside_is_followed_like_the_file_it_points_to(
    root: Path, ws: Workspace
) -> None:
    (root / "src").mkdir()
    (root / "src" / "a.txt").write_text("alpha\n", encoding="utf-8")
    (root / "code").symlink_to("src")
    (root / "src" / "back").symlink_to("../src/a.txt")
    (root / "absolute").symlink_to(root / "src" / "a.txt")
    for path in ("code/a.txt", "src/back", "code/back", "absolute"):
        assert read_fd(ws.open_file(path)) == "alpha\n", path


@pytest.mark.lab("8.1")
def test_dot_dot_after_a_link_goes_back_from_where_the_link_led(root: Path, ws: Workspace) -> None:
    (root / "deep" / "inner").mkdir(parents=True)
    (root / "deep" / "x.txt").write_text("beside inner\n", encoding="utf-8")
    (root / "in").symlink_to("deep/inner")
    assert read_fd(ws.open_file("in/../x.txt")) == "beside inner\n"


@pytest.mark.lab("8.1")
def test_a_loop_of_links_is_refused(root: Path, ws: Workspace) -> None:
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    with raises_exactly(
        WorkspaceError, "PATH_TOO_MANY_LINKS: 'a' goes through more than 40 symbolic links"
    ):
        ws.open_file("a")
    assert MAX_LINKS == 40


@pytest.mark.lab("8.1")
@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("missing.txt", "PATH_NOT_FOUND: 'missing.txt' does not exist"),
        ("nowhere/a.txt", "PATH_NOT_FOUND: 'nowhere/a.txt' does not exist"),
        (
            "a.txt/b",
            "PATH_NOT_A_DIRECTORY: 'a.txt/b' goes through a file as if it were a directory",
        ),
        ("src", "PATH_NOT_A_FILE: 'src' is a directory, not a file"),
        (".", "PATH_NOT_A_FILE: '.' is a directory, not a file"),
        ("", "PATH_INVALID: the path is empty"),
    ],
)
def test_a_path_that_names_no_file_is_refused_with_its_own_code(
    root: Path, ws: Workspace, path: str, message: str
) -> None:
    (root / "src").mkdir()
    (root / "a.txt").write_text("alpha\n", encoding="utf-8")
    with raises_exactly(WorkspaceError, message):
        ws.open_file(path)


@pytest.mark.lab("8.1")
def test_a_path_longer_than_the_limit_is_refused_before_any_walk(ws: Workspace) -> None:
    with raises_exactly(
        WorkspaceError, "PATH_INVALID: the path is 4097 characters long; the limit is 4096"
    ):
        ws.open_file("a/" * 2048 + "b")


@pytest.mark.lab("8.1")
def test_open_directory_opens_the_root_and_directories_beneath_it(
    root: Path, ws: Workspace
) -> None:
    (root / "src").mkdir()
    for path, expected in ((".", root), ("src", root / "src"), ("src/..", root)):
        fd = ws.open_directory(path)
        try:
            assert same_file(fd, expected), path
        finally:
            os.close(fd)
    with raises_exactly(
        WorkspaceError, "PATH_OUTSIDE_WORKSPACE: 'src/../..' is outside the workspace"
    ):
        ws.open_directory("src/../..")
    fd = ws.open_directory("made/here", make_directories=True)
    try:
        assert same_file(fd, root / "made" / "here")
    finally:
        os.close(fd)


@pytest.mark.lab("8.1")
def test_open_parent_returns_the_directory_and_the_last_name(root: Path, ws: Workspace) -> None:
    (root / "src").mkdir()
    (root / "link.txt").symlink_to("src/real.txt")
    for path, directory, name in (
        ("src/new.txt", "src", b"new.txt"),
        ("link.txt", "src", b"real.txt"),
    ):
        fd, last = ws.open_parent(path)
        try:
            assert same_file(fd, root / directory)
            assert last == name
        finally:
            os.close(fd)
    with raises_exactly(WorkspaceError, "PATH_NOT_FOUND: 'a/b/c.txt' does not exist"):
        ws.open_parent("a/b/c.txt")
    fd, last = ws.open_parent("a/b/c.txt", make_directories=True)
    os.close(fd)
    assert (root / "a" / "b").is_dir()
    assert last == b"c.txt"
    with raises_exactly(WorkspaceError, "PATH_NOT_A_FILE: 'src/..' is a directory, not a file"):
        ws.open_parent("src/..")


@pytest.mark.lab("8.1")
@pytest.mark.parametrize("swapped", ["src", "a.txt"])
def test_a_link_swapped_in_between_the_check_and_the_open_is_refused(
    root: Path, swapped: str
) -> None:
    # The hook runs just before the walk opens each component: the moment a check-then-open
    # implementation would already have approved the path. It swaps the component for a link
    # to the secret's directory (or the secret itself), once.
    (root / "src").mkdir()
    (root / "src" / "a.txt").write_text("alpha\n", encoding="utf-8")
    outside = root.parent / "outside"

    def swap(name: str) -> None:
        if name != swapped or (root / "src").is_symlink():
            return
        if swapped == "src":
            (root / "src" / "a.txt").unlink()
            (root / "src").rmdir()
            (root / "src").symlink_to(outside)
            (outside / "a.txt").write_text(SECRET, encoding="utf-8")
        else:
            (root / "src" / "a.txt").unlink()
            (root / "src" / "a.txt").symlink_to(outside / "secret.txt")

    ws = workspace_at(root, before_open=swap)
    with raises_exactly(
        WorkspaceError,
        "PATH_OUTSIDE_WORKSPACE: 'src/a.txt' changed into a link while it was opened",
    ):
        ws.open_file("src/a.txt")


@pytest.mark.lab("8.1")
def test_a_refusal_carries_its_code_and_message_as_its_one_argument(ws: Workspace) -> None:
    # Checkpoint 06 writes a failed tool's error from the exception's first argument: the code
    # and the path as given reach the model, the host's path does not.
    with raises_exactly(
        WorkspaceError, "PATH_OUTSIDE_WORKSPACE: '../x' is outside the workspace"
    ) as caught:
        ws.open_file("../x")
    assert caught.value.args == ("PATH_OUTSIDE_WORKSPACE: '../x' is outside the workspace",)


# A path made of these parts may go anywhere: down, up, through links that stay or leave.
_PARTS = ["a", "b", "..", ".", "in", "out", "abs_out", "loop", "file.txt", ""]


@pytest.mark.lab("8.1")
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(parts=st.lists(st.sampled_from(_PARTS), min_size=1, max_size=6), leading=st.booleans())
def test_whatever_the_path_what_opens_is_inside_the_workspace(
    root: Path, parts: list[str], leading: bool
) -> None:
    if not (root / "a").exists():
        (root / "a" / "b").mkdir(parents=True)
        (root / "file.txt").write_text("top\n", encoding="utf-8")
        (root / "a" / "file.txt").write_text("in a\n", encoding="utf-8")
        (root / "a" / "b" / "file.txt").write_text("in b\n", encoding="utf-8")
        for directory in (root, root / "a", root / "a" / "b"):
            (directory / "in").symlink_to(".")
            (directory / "out").symlink_to("../../../outside")
            (directory / "abs_out").symlink_to(root.parent / "outside")
            (directory / "loop").symlink_to("loop")
    ws = workspace_at(root)
    path = "/".join(parts)
    if leading:
        path = f"{ws.root}/{path}"
    refusal: str | None = None
    try:
        fd = ws.open_directory(path)
    except WorkspaceError as exc:
        refusal = exc.message
    if refusal is not None:
        assert leading or str(root) not in refusal  # only the path it was given, if any
        return
    try:
        opened = os.fstat(fd)
    finally:
        os.close(fd)
    inside = {(s.st_dev, s.st_ino) for s in map(os.stat, (root, root / "a", root / "a" / "b"))}
    assert (opened.st_dev, opened.st_ino) in inside


@pytest.mark.parametrize("root_kind", ["missing", "file"])
def test_workspace_at_refuses_a_root_that_is_not_a_directory(
    tmp_path: Path, root_kind: str
) -> None:
    root = tmp_path / "r"
    if root_kind == "file":
        root.write_text("", encoding="utf-8")
    with raises_exactly(
        ValueError, f"the workspace root {str(root)!r} is not an existing directory"
    ):
        workspace_at(root)


# ---- Lab 8.2: reading, bounded ----


def numbered_lines(count: int, width: int = 3) -> bytes:
    """Return ``count`` lines ``l001`` ... as bytes, each ending with a line break."""
    return b"".join(f"l{n:0{width}}\n".encode() for n in range(1, count + 1))


@pytest.mark.lab("8.2")
def test_a_short_output_is_kept_whole_and_spills_nothing(root: Path, ws: Workspace) -> None:
    with Projection(ws, head_bytes=20, tail_bytes=20) as projection:
        projection.write(b"one\n")
        projection.write(b"two\n")
        assert projection.finish() == "one\ntwo\n"
    assert projection.spill_path is None
    assert not (root / ".harness").exists()


@pytest.mark.lab("8.2")
def test_a_long_output_keeps_head_and_tail_and_says_what_was_left_out(
    root: Path, ws: Workspace
) -> None:
    # Twenty lines of four bytes: the head keeps lines 1-5, the tail lines 16-20.
    with Projection(ws, head_bytes=20, tail_bytes=20) as projection:
        projection.write(numbered_lines(20, width=2))
        text = projection.finish()
    assert text == (
        "l01\nl02\nl03\nl04\nl05\n"
        "[... 10 lines (40 bytes) left out; the whole output is in .harness/output/output-1.txt:"
        " read it with read_file from line 6]\n"
        "l16\nl17\nl18\nl19\nl20\n"
    )
    assert (root / ".harness" / "output" / "output-1.txt").read_bytes() == numbered_lines(20, 2)


@pytest.mark.lab("8.2")
def test_head_and_tail_are_cut_to_whole_lines(ws: Workspace) -> None:
    with Projection(ws, head_bytes=10, tail_bytes=10) as projection:
        projection.write(b"aaaaaa\nbbbbbb\ncccccc\ndddddd\neeeeee\n")
        text = projection.finish()
    assert text == (
        "aaaaaa\n"
        "[... 3 lines (21 bytes) left out; the whole output is in .harness/output/output-1.txt:"
        " read it with read_file from line 2]\n"
        "eeeeee\n"
    )


@pytest.mark.lab("8.2")
def test_one_long_line_shows_its_two_ends(ws: Workspace) -> None:
    with Projection(ws, head_bytes=4, tail_bytes=4) as projection:
        projection.write(b"0123456789abcdef")
        text = projection.finish()
    assert text == (
        "0123\n[... 0 lines (8 bytes) left out; the whole output is in "
        ".harness/output/output-1.txt: read it with read_file from line 1]\ncdef"
    )


@pytest.mark.lab("8.2")
def test_a_projection_without_a_workspace_keeps_head_and_tail_and_spills_nothing() -> None:
    with Projection(None, head_bytes=20, tail_bytes=20) as projection:
        for n in range(1, 21):
            projection.write(f"l{n:02}\n".encode())
        text = projection.finish()
    assert text == (
        "l01\nl02\nl03\nl04\nl05\n[... 10 lines (40 bytes) left out]\nl16\nl17\nl18\nl19\nl20\n"
    )
    assert projection.spill_path is None


@pytest.mark.lab("8.2")
def test_each_spilled_output_gets_a_file_of_its_own(root: Path, ws: Workspace) -> None:
    for expected in (1, 2):
        with Projection(ws, head_bytes=4, tail_bytes=4) as projection:
            projection.write(b"x" * 100)
            projection.finish()
        assert projection.spill_path == f".harness/output/output-{expected}.txt"
    assert sorted(p.name for p in (root / ".harness" / "output").iterdir()) == [
        "output-1.txt",
        "output-2.txt",
    ]


@pytest.mark.lab("8.2")
def test_a_projection_that_fails_half_way_removes_its_spill_file(root: Path, ws: Workspace) -> None:
    def produce_then_fail() -> None:
        with Projection(ws, head_bytes=4, tail_bytes=4) as projection:
            projection.write(b"x" * 100)
            raise KeyError("the producer failed")

    with pytest.raises(KeyError, match=r"^'the producer failed'$"):
        produce_then_fail()
    assert list((root / ".harness" / "output").iterdir()) == []


@pytest.mark.lab("8.2")
def test_a_spill_directory_planted_as_a_link_outside_is_refused(root: Path, ws: Workspace) -> None:
    (root / ".harness").symlink_to("../outside")
    with (
        raises_exactly(
            WorkspaceError, "PATH_OUTSIDE_WORKSPACE: '.harness/output' is outside the workspace"
        ),
        Projection(ws, head_bytes=4, tail_bytes=4) as projection,
    ):
        projection.write(b"x" * 100)
    assert names_in(root.parent / "outside") == ["secret.txt"]


@pytest.mark.lab("8.2")
def test_a_finished_projection_refuses_more(ws: Workspace) -> None:
    projection = Projection(ws)
    projection.write(b"done\n")
    projection.finish()
    with raises_exactly(RuntimeError, "cannot write: the projection is finished"):
        projection.write(b"late\n")
    with raises_exactly(RuntimeError, "cannot finish: the projection is finished"):
        projection.finish()


@pytest.mark.lab("8.2")
def test_a_huge_output_costs_bounded_memory(ws: Workspace) -> None:
    chunk = b"a line of output that repeats\n" * 2000  # about 60 KB, made before measuring
    tracemalloc.start()
    try:
        with Projection(ws) as projection:
            for _ in range(300):  # about 18 MB
                projection.write(chunk)
            text = projection.finish()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 512 * 1024
    assert len(text) < MAX_CONTENT_CODE_POINTS
    assert "[... " in text


@pytest.mark.lab("8.2")
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    chunks=st.lists(st.text(alphabet="ab\n", max_size=30), max_size=12),
    head=st.integers(1, 25),
    tail=st.integers(1, 25),
)
def test_the_projection_shows_a_prefix_a_suffix_and_exactly_what_it_left_out(
    root: Path, chunks: list[str], head: int, tail: int
) -> None:
    ws = workspace_at(root)
    shutil.rmtree(root / ".harness", ignore_errors=True)
    whole = "".join(chunks)
    with Projection(ws, head_bytes=head, tail_bytes=tail) as projection:
        for chunk in chunks:
            projection.write(chunk.encode())
            assert len(projection.kept) <= head + tail  # bounded, whatever the output
            assert len(projection.tail) <= tail + 1
        text = projection.finish()
    if len(whole) <= head + tail:
        assert projection.spill_path is None
        assert text == whole
        return
    assert (root / ".harness" / "output" / "output-1.txt").read_text() == whole
    shown_head, rest = text.split("[... ", 1)
    marker, shown_tail = rest.split("]\n", 1)
    assert whole.endswith(shown_tail)
    # A head with no line break of its own is shown with one, so that the marker starts a line.
    heads = {shown_head, shown_head.removesuffix("\n")}
    described = set()
    for kept in heads:
        if whole.startswith(kept):
            left_out = whole[len(kept) : len(whole) - len(shown_tail)]
            described.add(
                f"{left_out.count(chr(10)):,} lines ({len(left_out):,} bytes) left out; "
                f"the whole output is in .harness/output/output-1.txt: "
                f"read it with read_file from line {kept.count(chr(10)) + 1}"
            )
    # `described` holds the marker expected for each way the head may have been cut.
    assert marker in described, f"shown marker {marker!r}; expected one of {sorted(described)}"


@pytest.mark.lab("8.2")
def test_read_file_numbers_the_lines(root: Path, ws: Workspace) -> None:
    (root / "a.txt").write_text("alpha\nbeta\r\n\ngamma", encoding="utf-8")
    assert read_file(ws, "a.txt") == "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma"


@pytest.mark.lab("8.2")
def test_offset_and_limit_choose_the_lines_and_say_where_to_go_on(
    root: Path, ws: Workspace
) -> None:
    (root / "n.txt").write_bytes(numbered_lines(10))
    assert read_file(ws, "n.txt", offset=4, limit=2) == (
        "     4\tl004\n     5\tl005\n[more lines follow; continue with offset=6]"
    )
    assert read_file(ws, "n.txt", offset=9, limit=5) == "     9\tl009\n    10\tl010"


@pytest.mark.lab("8.2")
def test_a_read_stops_at_its_character_cap_and_says_where_to_go_on(
    root: Path, ws: Workspace
) -> None:
    # Each line shows as 6 + 1 + 100 characters and a line break: 32 of them fit in 3500.
    (root / "wide.txt").write_text(("x" * 100 + "\n") * 100, encoding="utf-8")
    text = read_file(ws, "wide.txt")
    assert text.endswith("\n[stopped to stay under 3500 characters; continue with offset=33]")
    assert text.count("\t") == 32
    assert MAX_READ_CHARS == 3500


@pytest.mark.lab("8.2")
def test_a_line_longer_than_the_cap_is_cut_and_the_next_line_is_whole(
    root: Path, ws: Workspace
) -> None:
    (root / "long.txt").write_text("y" * 5000 + "\nnext\n", encoding="utf-8")
    assert read_file(ws, "long.txt") == (
        "     1\t" + "y" * MAX_LINE_BYTES + " [line cut at 1000 bytes]\n     2\tnext"
    )


@pytest.mark.lab("8.2")
def test_a_line_cut_inside_a_character_loses_only_that_character(root: Path, ws: Workspace) -> None:
    (root / "wide.txt").write_text("a" + "é" * 1000 + "\n", encoding="utf-8")  # 2001 bytes
    assert read_file(ws, "wide.txt") == "     1\ta" + "é" * 499 + " [line cut at 1000 bytes]"


@pytest.mark.lab("8.2")
@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "img.bin",
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
            "NOT_TEXT: 'img.bin' looks binary (a NUL byte in its first 8192 bytes)",
        ),
        ("latin1.txt", b"plain\ncaf\xe9\n", "NOT_TEXT: 'latin1.txt' is not UTF-8 text (line 2)"),
    ],
)
def test_a_file_that_is_not_text_is_refused(
    root: Path, ws: Workspace, name: str, content: bytes, message: str
) -> None:
    (root / name).write_bytes(content)
    with raises_exactly(FileToolError, message):
        read_file(ws, name)


@pytest.mark.lab("8.2")
def test_an_offset_past_the_end_is_refused_and_an_empty_file_says_so(
    root: Path, ws: Workspace
) -> None:
    (root / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    (root / "empty.txt").write_bytes(b"")
    with raises_exactly(
        FileToolError, "READ_PAST_END: offset 5 is past the end of 'a.txt' (2 lines)"
    ):
        read_file(ws, "a.txt", offset=5)
    assert read_file(ws, "empty.txt") == "['empty.txt' is empty]"


@pytest.mark.lab("8.2")
def test_a_spilled_output_can_be_read_in_pages(root: Path, ws: Workspace) -> None:
    with Projection(ws, head_bytes=10, tail_bytes=10) as projection:
        projection.write(numbered_lines(50))
        projection.finish()
    assert read_file(ws, ".harness/output/output-1.txt", offset=20, limit=2) == (
        "    20\tl020\n    21\tl021\n[more lines follow; continue with offset=22]"
    )


@pytest.mark.lab("8.2")
def test_the_first_lines_of_a_1_gb_file_cost_what_those_of_a_small_one_cost(
    root: Path, ws: Workspace
) -> None:
    # A sparse file: 3,000 lines of text, then zeros up to 1 GB that take no disk space.
    with open(root / "big.log", "wb") as file:
        file.write(numbered_lines(3000, width=4))
        file.truncate(1 << 30)
    (root / "small.log").write_bytes(numbered_lines(3000, width=4))
    tracemalloc.start()
    try:
        big = read_file(ws, "big.log")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert big == read_file(ws, "small.log")
    assert peak < 256 * 1024


def test_read_file_refuses_an_offset_or_limit_the_validator_would_not_pass(
    ws: Workspace,
) -> None:
    with raises_exactly(ValueError, "offset must be a positive int, got 0"):
        read_file(ws, "a.txt", offset=0)
    with raises_exactly(ValueError, "limit must be a positive int, got True"):
        read_file(ws, "a.txt", limit=True)


# ---- Lab 8.3: writing and editing ----


def names_in(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.mark.lab("8.3")
def test_write_file_creates_the_file_and_its_directories(root: Path, ws: Workspace) -> None:
    assert write_file(ws, "src/pkg/new.txt", "hello\n") == "wrote 6 bytes to 'src/pkg/new.txt'"
    assert (root / "src" / "pkg" / "new.txt").read_text(encoding="utf-8") == "hello\n"
    assert names_in(root / "src" / "pkg") == ["new.txt"]  # no temporary file left behind


@pytest.mark.lab("8.3")
def test_write_file_replaces_the_content_and_keeps_the_mode(root: Path, ws: Workspace) -> None:
    script = root / "run.sh"
    script.write_text("echo old\n", encoding="utf-8")
    script.chmod(0o750)
    assert write_file(ws, "run.sh", "echo new\n") == "wrote 9 bytes to 'run.sh'"
    assert script.read_text(encoding="utf-8") == "echo new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750


@pytest.mark.lab("8.3")
def test_a_reader_sees_the_old_content_until_the_rename(root: Path, ws: Workspace) -> None:
    (root / "a.txt").write_text("old\n", encoding="utf-8")
    seen: list[str] = []

    def read_before_the_rename() -> None:  # the new content is on disk, under another name
        seen.append((root / "a.txt").read_text(encoding="utf-8"))

    write_file(ws, "a.txt", "new\n", before_rename=read_before_the_rename)
    assert seen == ["old\n"]
    assert (root / "a.txt").read_text(encoding="utf-8") == "new\n"


@pytest.mark.lab("8.3")
def test_writing_through_a_link_inside_replaces_the_file_it_points_to(
    root: Path, ws: Workspace
) -> None:
    (root / "src").mkdir()
    (root / "src" / "real.txt").write_text("old\n", encoding="utf-8")
    (root / "link.txt").symlink_to("src/real.txt")
    write_file(ws, "link.txt", "new\n")
    assert (root / "link.txt").is_symlink()
    assert (root / "src" / "real.txt").read_text(encoding="utf-8") == "new\n"


@pytest.mark.lab("8.3")
@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "../outside/new.txt",
            "PATH_OUTSIDE_WORKSPACE: '../outside/new.txt' is outside the workspace",
        ),
        ("out/new.txt", "PATH_OUTSIDE_WORKSPACE: 'out/new.txt' is outside the workspace"),
        (
            "out/deeper/new.txt",
            "PATH_OUTSIDE_WORKSPACE: 'out/deeper/new.txt' is outside the workspace",
        ),
        ("escape.txt", "PATH_OUTSIDE_WORKSPACE: 'escape.txt' is outside the workspace"),
        ("src", "PATH_NOT_A_FILE: 'src' is a directory, not a file"),
        (".", "PATH_NOT_A_FILE: '.' is a directory, not a file"),
    ],
)
def test_a_write_that_would_leave_the_workspace_writes_nothing_anywhere(
    root: Path, ws: Workspace, path: str, message: str
) -> None:
    (root / "src").mkdir()
    (root / "out").symlink_to("../outside")
    (root / "escape.txt").symlink_to(root.parent / "outside" / "secret.txt")
    before = names_in(root), names_in(root.parent / "outside")
    with raises_exactly(WorkspaceError, message):
        write_file(ws, path, "pwned\n")
    assert (names_in(root), names_in(root.parent / "outside")) == before
    assert (root.parent / "outside" / "secret.txt").read_text(encoding="utf-8") == SECRET


@pytest.mark.lab("8.3")
def test_a_file_whose_name_has_the_longest_length_allowed_can_be_written(
    root: Path, ws: Workspace
) -> None:
    name = "n" * 255  # the temporary file's name must fit too
    assert write_file(ws, name, "x") == f"wrote 1 byte to {name!r}"
    assert names_in(root) == [name]


@pytest.mark.lab("8.3")
def test_content_that_utf8_cannot_encode_is_refused(root: Path, ws: Workspace) -> None:
    with raises_exactly(FileToolError, "NOT_TEXT: the content is not valid UTF-8 text"):
        write_file(ws, "a.txt", "half a pair \ud800")
    assert names_in(root) == []


@pytest.mark.lab("8.3")
def test_a_write_killed_before_its_rename_leaves_the_old_content(root: Path, ws: Workspace) -> None:
    # A real kill, in a child process: SIGKILL lets no cleanup run. The old content stays
    # whole; what is left is the hidden temporary file, never a half-written a.txt.
    write_file(ws, "a.txt", "old content\n")
    child = (
        "import os, signal, sys\n"
        "from harness.file_tools import write_file\n"
        "from harness.workspace import workspace_at\n"
        "kill = lambda: os.kill(os.getpid(), signal.SIGKILL)\n"
        "write_file(workspace_at(sys.argv[1]), 'a.txt', 'new ' * 100_000, before_rename=kill)\n"
    )
    done = subprocess.run([sys.executable, "-c", child, str(root)], check=False, timeout=20)
    assert done.returncode == -signal.SIGKILL
    assert (root / "a.txt").read_text(encoding="utf-8") == "old content\n"
    left = [name for name in names_in(root) if name != "a.txt"]
    assert len(left) == 1
    assert left[0].startswith(".a.txt.")
    assert left[0].endswith(".tmp")


@pytest.mark.lab("8.3")
def test_edit_replaces_an_exact_string_that_occurs_once(root: Path, ws: Workspace) -> None:
    (root / "a.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    assert edit_file(ws, "a.py", "y = 2", "y = 3") == "replaced 1 match in 'a.py'"
    assert (root / "a.py").read_text(encoding="utf-8") == "x = 1\ny = 3\n"


@pytest.mark.lab("8.3")
def test_edit_replaces_every_match_when_the_model_names_their_count(
    root: Path, ws: Workspace
) -> None:
    (root / "a.py").write_text("n\nn\nn\n", encoding="utf-8")
    assert edit_file(ws, "a.py", "n", "m", count=3) == "replaced 3 matches in 'a.py'"
    assert (root / "a.py").read_text(encoding="utf-8") == "m\nm\nm\n"


@pytest.mark.lab("8.3")
@pytest.mark.parametrize(
    ("old", "count", "message"),
    [
        ("absent", 1, "EDIT_NO_MATCH: 'a.py' has no match for old_text"),
        (
            "n",
            1,
            "EDIT_MATCH_COUNT: 'a.py' has 3 matches for old_text, not 1; "
            "add context to old_text, or pass count=3",
        ),
        (
            "n",
            2,
            "EDIT_MATCH_COUNT: 'a.py' has 3 matches for old_text, not 2; "
            "add context to old_text, or pass count=3",
        ),
        ("", 1, "EDIT_EMPTY_OLD_TEXT: old_text is empty; name the exact text to replace"),
    ],
)
def test_an_edit_that_is_missing_or_ambiguous_says_how_many_matches_and_changes_nothing(
    root: Path, ws: Workspace, old: str, count: int, message: str
) -> None:
    (root / "a.py").write_text("n\nn\nn\n", encoding="utf-8")
    with raises_exactly(FileToolError, message):
        edit_file(ws, "a.py", old, "m", count=count)
    assert (root / "a.py").read_text(encoding="utf-8") == "n\nn\nn\n"


@pytest.mark.lab("8.3")
@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "big.txt",
            b"a" * 1_000_001,
            "EDIT_FILE_TOO_LARGE: 'big.txt' is 1,000,001 bytes; "
            "edit_file changes files of up to 1,000,000 bytes",
        ),
        ("bin.dat", b"caf\xe9 au lait", "NOT_TEXT: 'bin.dat' is not UTF-8 text"),
    ],
)
def test_edit_refuses_a_file_it_cannot_hold_or_read_as_text(
    root: Path, ws: Workspace, name: str, content: bytes, message: str
) -> None:
    (root / name).write_bytes(content)
    with raises_exactly(FileToolError, message):
        edit_file(ws, name, "a", "b")
    assert (root / name).read_bytes() == content


@pytest.mark.lab("8.3")
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.text(alphabet="abc\n", max_size=40),
    old=st.text(alphabet="abc", min_size=1, max_size=3),
    new=st.text(alphabet="xyz", max_size=3),
)
def test_an_edit_changes_exactly_the_matches_or_nothing(
    root: Path, text: str, old: str, new: str
) -> None:
    ws = workspace_at(root)
    (root / "f.txt").write_text(text, encoding="utf-8")
    found = text.count(old)
    try:
        edit_file(ws, "f.txt", old, new)
    except FileToolError as exc:
        refused = exc.message
    else:
        refused = ""
    if found == 1:
        assert refused == ""
        assert (root / "f.txt").read_text(encoding="utf-8") == text.replace(old, new)
    else:
        assert refused.startswith(f"'f.txt' has {found} matches" if found else "'f.txt' has no")
        assert (root / "f.txt").read_text(encoding="utf-8") == text


def test_edit_refuses_a_count_the_validator_would_not_pass(ws: Workspace) -> None:
    with raises_exactly(ValueError, "count must be a positive int, got 0"):
        edit_file(ws, "a.py", "a", "b", count=0)


# ---- Lab 8.4: listing and searching ----


def make_tree(root: Path) -> None:
    (root / "src" / "b").mkdir(parents=True)
    (root / "src" / "a.py").write_text("import os\nneedle = 1\n", encoding="utf-8")
    (root / "src" / "b" / "c.py").write_text("no match\nneedle again\n", encoding="utf-8")
    (root / "README.md").write_text("a needle in the readme\n", encoding="utf-8")
    (root / "logo.png").write_bytes(b"\x89PNG\0needle\0")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("needle\n", encoding="utf-8")
    (root / "out").symlink_to("../outside")


@pytest.mark.lab("8.4")
def test_list_files_walks_depth_first_each_directory_sorted(root: Path, ws: Workspace) -> None:
    make_tree(root)
    assert list_files(ws) == (
        ".git/\nREADME.md\nlogo.png\nout@\nsrc/\nsrc/a.py\nsrc/b/\nsrc/b/c.py\n"
    )


@pytest.mark.lab("8.4")
def test_a_pattern_filters_the_paths_below_the_directory(root: Path, ws: Workspace) -> None:
    make_tree(root)
    assert list_files(ws, pattern="*.py") == "src/a.py\nsrc/b/c.py\n"
    assert list_files(ws, "src") == "src/a.py\nsrc/b/\nsrc/b/c.py\n"
    assert list_files(ws, "src", pattern="b*") == "src/b/\nsrc/b/c.py\n"
    assert list_files(ws, pattern="*.rs") == "[nothing under '.' matches '*.rs']\n"


@pytest.mark.lab("8.4")
def test_listing_never_enters_a_link_nor_reaches_outside(root: Path, ws: Workspace) -> None:
    make_tree(root)
    assert "secret" not in list_files(ws)
    with raises_exactly(WorkspaceError, "PATH_OUTSIDE_WORKSPACE: 'out' is outside the workspace"):
        list_files(ws, "out")
    with raises_exactly(WorkspaceError, "PATH_OUTSIDE_WORKSPACE: '..' is outside the workspace"):
        list_files(ws, "..")


@pytest.mark.lab("8.4")
def test_a_name_that_is_not_utf8_is_listed_with_its_bytes_escaped(
    root: Path, ws: Workspace
) -> None:
    os.close(os.open(os.path.join(os.fsencode(root), b"bad\xff.txt"), os.O_CREAT | os.O_WRONLY))
    assert list_files(ws) == "bad\\xff.txt\n"


@pytest.mark.lab("8.4")
def test_a_listing_stops_at_its_budgets_and_says_so(
    root: Path, ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in "abcde":
        (root / name).write_text("", encoding="utf-8")
    monkeypatch.setattr("harness.file_search.MAX_LISTED", 3)
    assert list_files(ws) == "a\nb\nc\n[stopped after 3 entries; narrow the path or pattern]\n"
    monkeypatch.setattr("harness.file_search.MAX_SCANNED", 2)
    listed = list_files(ws).splitlines()  # which two: the order the file system gave them
    assert len(listed) == 3
    assert listed[-1] == "[stopped looking after 2 entries]"


@pytest.mark.lab("8.4")
def test_a_deep_tree_is_entered_only_to_the_depth_budget(
    root: Path, ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "d1" / "d2" / "d3").mkdir(parents=True)
    (root / "d1" / "d2" / "d3" / "deep.txt").write_text("", encoding="utf-8")
    (root / "e1").mkdir()
    monkeypatch.setattr("harness.file_search.MAX_DEPTH", 2)
    assert list_files(ws) == (
        "d1/\nd1/d2/\nd1/d2/d3/\ne1/\n[not entered: d1/d2/d3/ (deeper than 2 levels)]\n"
    )


@pytest.mark.lab("8.4")
def test_a_long_listing_is_projected_and_spilled_whole(root: Path, ws: Workspace) -> None:
    for n in range(400):
        (root / f"file-{n:03}.txt").write_text("", encoding="utf-8")
    text = list_files(ws)
    assert text.startswith("file-000.txt\n")
    assert "left out; the whole output is in .harness/output/output-1.txt" in text
    assert text.endswith("file-399.txt\n")
    spilled = (root / ".harness" / "output" / "output-1.txt").read_text(encoding="utf-8")
    assert spilled == "".join(f"file-{n:03}.txt\n" for n in range(400))


@pytest.mark.lab("8.4")
def test_grep_finds_a_plain_string_in_text_files_in_listing_order(
    root: Path, ws: Workspace
) -> None:
    make_tree(root)
    # Not in logo.png (binary), not in .git (not entered), not through out (a link).
    assert grep(ws, "needle") == (
        "README.md:1: a needle in the readme\nsrc/a.py:2: needle = 1\nsrc/b/c.py:2: needle again\n"
    )
    assert grep(ws, "needle", "src", pattern="b/*") == "src/b/c.py:2: needle again\n"
    assert grep(ws, "secret") == "[no match for 'secret' under '.']\n"


@pytest.mark.lab("8.4")
def test_grep_text_is_literal_not_a_regular_expression(root: Path, ws: Workspace) -> None:
    (root / "r.txt").write_text("a.*b\naxxb\n", encoding="utf-8")
    assert grep(ws, "a.*b") == "r.txt:1: a.*b\n"


@pytest.mark.lab("8.4")
def test_grep_stops_at_its_match_budget_and_says_so(
    root: Path, ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "a.txt").write_text("hit\nhit\n", encoding="utf-8")
    (root / "b.txt").write_text("miss\n", encoding="utf-8")
    monkeypatch.setattr("harness.file_search.MAX_MATCHES", 2)
    assert grep(ws, "hit") == "a.txt:1: hit\na.txt:2: hit\n"  # exactly the budget: no note
    (root / "c.txt").write_text("one more hit\n", encoding="utf-8")
    assert grep(ws, "hit") == (
        "a.txt:1: hit\na.txt:2: hit\n[stopped after 2 matches; narrow the search]\n"
    )


def make_ignored_tree(root: Path) -> None:
    (root / ".gitignore").write_text("build/\n*.tmp\n", encoding="utf-8")
    (root / "src" / "sub").mkdir(parents=True)
    (root / "src" / ".gitignore").write_text("!keep.tmp\n/local.txt\n", encoding="utf-8")
    for name in ("a.tmp", "local.txt", "src/keep.tmp", "src/other.tmp", "src/local.txt"):
        (root / name).write_text("needle\n", encoding="utf-8")
    (root / "src" / "sub" / "local.txt").write_text("needle\n", encoding="utf-8")
    (root / "build").mkdir()
    (root / "build" / "out.txt").write_text("needle\n", encoding="utf-8")


@pytest.mark.lab("8.4")
def test_what_a_gitignore_ignores_is_neither_listed_nor_searched(root: Path, ws: Workspace) -> None:
    make_ignored_tree(root)
    # The root's *.tmp reaches src; src's own file re-includes keep.tmp and anchors /local.txt
    # to src, so src/sub/local.txt stays; build/ is not entered.
    visible = [
        ".gitignore",
        "local.txt",
        "src/",
        "src/.gitignore",
        "src/keep.tmp",
        "src/sub/",
        "src/sub/local.txt",
    ]
    assert list_files(ws) == "".join(f"{line}\n" for line in visible)
    assert grep(ws, "needle") == (
        "local.txt:1: needle\nsrc/keep.tmp:1: needle\nsrc/sub/local.txt:1: needle\n"
    )


@pytest.mark.lab("8.4")
def test_a_directory_below_the_root_keeps_the_rules_of_the_directories_above_it(
    root: Path, ws: Workspace
) -> None:
    make_ignored_tree(root)
    whole = list_files(ws).splitlines(keepends=True)
    beneath = [line for line in whole if line.startswith("src/") and line != "src/\n"]
    assert list_files(ws, "src") == "".join(beneath)  # the root's listing, from src down
    assert list_files(ws, "src/") == list_files(ws, "src")
    assert grep(ws, "needle", "src/sub") == "src/sub/local.txt:1: needle\n"
    assert list_files(ws, "build") == "[nothing under 'build' matches '*']\n"


@pytest.mark.lab("8.4")
def test_include_ignored_lists_and_searches_everything_but_git(root: Path, ws: Workspace) -> None:
    make_ignored_tree(root)
    (root / ".git").mkdir()
    listed = list_files(ws, include_ignored=True)
    assert ".git/\n" in listed
    assert "a.tmp\n" in listed
    assert "build/out.txt\n" in listed
    assert "src/local.txt\n" in listed
    assert "src/other.tmp\n" in listed
    found = grep(ws, "needle", "build", include_ignored=True)
    assert found == "build/out.txt:1: needle\n"


def test_grep_refuses_empty_text(ws: Workspace) -> None:
    with raises_exactly(ValueError, "text must be a non-empty str"):
        grep(ws, "")


@pytest.mark.lab("8.4")
def test_grep_refuses_a_text_that_utf8_cannot_encode(ws: Workspace) -> None:
    # json.loads turns the escape "\udcff" into a lone surrogate: a model can send one.
    text = json.loads('"needle\\udcff"')
    with raises_exactly(FileToolError, "NOT_TEXT: the text is not valid UTF-8 text"):
        grep(ws, text)


# ---- the tools together: checkpoint 06 definitions, run by checkpoint 07's loop ----


# The toolset holds the command and sandbox tools too, so these tests need Labs 8.5 and 8.6.
@pytest.mark.lab("8.6")
def test_the_coding_tools_are_the_file_tools_with_their_policies(ws: Workspace) -> None:
    list_files(ws)  # the lab's code first, so that a stub fails here
    tools = coding_tools(ws)
    assert [tool.name for tool in tools] == [
        "read_file",
        "write_file",
        "edit_file",
        "list_files",
        "grep",
        "run_command",
        "execute_code",
    ]
    policies = coding_tool_policies()
    assert sorted(name for name, p in policies.items() if p.concurrency_safe) == [
        "execute_code",
        "grep",
        "list_files",
        "read_file",
    ]
    assert thaw_json(tools[0].parameters) == {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "a path in the workspace, relative to its root",
            },
            "offset": {"type": "integer", "minimum": 1},
            "limit": {"type": "integer", "minimum": 1},
        },
        "required": ["path"],
        "additionalProperties": False,
    }


@pytest.mark.lab("8.6")
async def test_a_refusal_reaches_the_model_as_an_error_result(root: Path, ws: Workspace) -> None:
    write_file(ws, "a.txt", "alpha\n")  # the lab's code first, so that a stub fails here
    registry = ToolRegistry(coding_tools(ws))
    signal = AbortController().signal
    outside = await execute_tool_call(
        registry, {"id": "c1", "name": "read_file", "arguments": {"path": "../x"}}, signal
    )
    assert outside.is_error
    assert outside.content == (
        '{"error":{"code":"TOOL_EXECUTION_FAILED","message":'
        "\"WorkspaceError: PATH_OUTSIDE_WORKSPACE: '../x' is outside the workspace\"}}"
    )
    bad = await execute_tool_call(
        registry,
        {"id": "c2", "name": "read_file", "arguments": {"path": "a.txt", "offset": 0}},
        signal,
    )
    assert bad.content == (
        '{"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"offset: must be at least 1"}}'
    )


@pytest.mark.lab("8.6")
async def test_the_model_can_ask_the_listing_tools_for_ignored_files(
    root: Path, ws: Workspace
) -> None:
    (root / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (root / "a.log").write_text("needle\n", encoding="utf-8")
    assert list_files(ws) == ".gitignore\n"  # the lab's code first, so that a stub fails here
    registry = ToolRegistry(coding_tools(ws))
    signal = AbortController().signal
    contents = []
    for name, arguments in [
        ("list_files", {}),
        ("list_files", {"include_ignored": True}),
        ("grep", {"text": "needle", "include_ignored": True}),
    ]:
        call = ToolCall.create(id="c1", name=name, arguments=arguments)
        contents.append((await execute_tool_call(registry, call, signal)).content)
    assert contents == [".gitignore\n", ".gitignore\na.log\n", "a.log:1: needle\n"]


@pytest.mark.lab("8.6")
async def test_an_agent_writes_edits_and_reads_a_file_through_the_loop(
    root: Path, ws: Workspace
) -> None:
    write_file(ws, "notes.txt", "draft\n")  # the lab's code first, so that a stub fails here

    def asks(*calls: tuple[str, str, dict[str, object]]) -> ScriptedResponse:
        made = tuple(ToolCall.create(id=i, name=n, arguments=a) for i, n, a in calls)
        return ScriptedResponse.reply(AssistantMessage(content=made))

    model = ScriptedModel(
        [
            asks(("c1", "write_file", {"path": "src/app.py", "content": "x = 1\n"})),
            asks(("c2", "edit_file", {"path": "src/app.py", "old_text": "1", "new_text": "2"})),
            asks(("c3", "read_file", {"path": "src/app.py"}), ("c4", "grep", {"text": "x ="})),
            ScriptedResponse.reply(AssistantMessage(content=(TextBlock(text="done"),))),
        ]
    )
    run = run_agent_loop(
        model,
        ToolRegistry(coding_tools(ws)),
        [UserMessage(content=(TextBlock(text="make app.py say x = 2"),))],
        signal=AbortController().signal,
        policies=coding_tool_policies(),
    )
    async for _ in run:
        pass
    result = await run.result()
    assert type(result) is LoopCompleted
    results = {m.tool_call_id: m.content for m in result.transcript if type(m) is ToolResultMessage}
    assert results == {
        "c1": "wrote 6 bytes to 'src/app.py'",
        "c2": "replaced 1 match in 'src/app.py'",
        "c3": "     1\tx = 2",
        "c4": "src/app.py:1: x = 2\n",
    }
    assert (root / "src" / "app.py").read_text(encoding="utf-8") == "x = 2\n"


# ---- Lab 8.7: hostile files and paths ----


@pytest.mark.lab("8.7")
@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("a\x00b.txt", "PATH_INVALID: 'a\\x00b.txt' contains a NUL byte"),
        ("src/\x00", "PATH_INVALID: 'src/\\x00' contains a NUL byte"),
        ("bad\udcff.txt", "PATH_INVALID: 'bad\\udcff.txt' is not valid UTF-8 text"),
        (
            "x" * 300,
            "PATH_INVALID: a name in the path is longer than the file system allows (255 bytes)",
        ),
    ],
)
def test_a_path_no_file_can_have_is_refused_as_invalid(
    root: Path, ws: Workspace, path: str, message: str
) -> None:
    (root / "src").mkdir()
    with raises_exactly(WorkspaceError, message):
        ws.open_file(path)


@pytest.mark.lab("8.7")
def test_a_file_whose_name_is_not_utf8_cannot_be_reached_through_its_escaped_name(
    root: Path, ws: Workspace
) -> None:
    # On disk the name is the byte 0xff; Python spells it "\udcff" (surrogateescape), which
    # no UTF-8 text contains. The model's text can only ever name UTF-8 names.
    os.close(os.open(os.path.join(os.fsencode(root), b"bad\xff.txt"), os.O_CREAT | os.O_WRONLY))
    with raises_exactly(WorkspaceError, "PATH_INVALID: 'bad\\udcff.txt' is not valid UTF-8 text"):
        ws.open_file("bad\udcff.txt")


@pytest.mark.lab("8.7")
def test_a_fifo_is_refused_without_blocking_the_open(root: Path, ws: Workspace) -> None:
    # Opening a FIFO for reading waits for a writer, for ever: the open must not block.
    os.mkfifo(root / "pipe")
    with raises_exactly(WorkspaceError, "PATH_NOT_A_FILE: 'pipe' is a FIFO, not a file"):
        ws.open_file("pipe")


@pytest.mark.lab("8.7")
def test_a_socket_is_refused_as_not_a_file(root: Path, ws: Workspace) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(root / "sock"))
        with raises_exactly(WorkspaceError, "PATH_NOT_A_FILE: 'sock' is a socket, not a file"):
            ws.open_file("sock")


@pytest.mark.lab("8.7")
def test_any_other_system_refusal_is_named_with_the_systems_reason() -> None:
    # A directory the walk may not enter gives EACCES; as root nothing does, so the error is
    # made here rather than by chmod.
    error = PermissionError(errno.EACCES, "Permission denied")
    assert describe_unusable_path("locked/a.txt", error) == (
        "'locked/a.txt' cannot be used: Permission denied"
    )


@pytest.mark.lab("8.7")
@pytest.mark.parametrize("interruption", [KeyboardInterrupt, OSError])
def test_a_write_interrupted_before_its_rename_leaves_the_old_content_and_no_trace(
    root: Path, ws: Workspace, interruption: type[BaseException]
) -> None:
    (root / "a.txt").write_text("old content\n", encoding="utf-8")

    def interrupt() -> None:
        raise interruption("interrupted before the rename")

    with pytest.raises(interruption, match=r"^interrupted before the rename$"):
        write_file(ws, "a.txt", "new content\n", before_rename=interrupt)
    assert (root / "a.txt").read_text(encoding="utf-8") == "old content\n"
    assert names_in(root) == ["a.txt"]  # the temporary file is gone too


@pytest.mark.lab("8.7")
def test_discarding_a_partial_write_twice_is_harmless(root: Path) -> None:
    (root / ".a.txt.0.tmp").write_text("half", encoding="utf-8")
    directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        discard_partial_write(directory, b".a.txt.0.tmp")
        discard_partial_write(directory, b".a.txt.0.tmp")
    finally:
        os.close(directory)
    assert names_in(root) == []


@pytest.mark.lab("8.7")
def test_writing_over_a_fifo_is_refused_and_the_fifo_stays(root: Path, ws: Workspace) -> None:
    os.mkfifo(root / "pipe")
    with raises_exactly(WorkspaceError, "PATH_NOT_A_FILE: 'pipe' is a FIFO, not a file"):
        write_file(ws, "pipe", "data\n")
    assert stat.S_ISFIFO((root / "pipe").stat().st_mode)


@pytest.mark.lab("8.7")
@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("new\x00.txt", "PATH_INVALID: 'new\\x00.txt' contains a NUL byte"),
        ("new\udcff.txt", "PATH_INVALID: 'new\\udcff.txt' is not valid UTF-8 text"),
        (
            "src/" + "n" * 300,
            "PATH_INVALID: a name in the path is longer than the file system allows (255 bytes)",
        ),
    ],
)
def test_a_write_to_a_path_no_file_can_have_writes_nothing(
    root: Path, ws: Workspace, path: str, message: str
) -> None:
    (root / "src").mkdir()
    with raises_exactly(WorkspaceError, message):
        write_file(ws, path, "data\n")
    assert names_in(root) == ["src"]
    assert names_in(root / "src") == []


@pytest.mark.lab("8.7")
@pytest.mark.parametrize(
    ("make", "listed", "note"),
    [
        (
            lambda g: g.write_bytes(b"*.log\n" + b"#" * 32_768),
            ".gitignore",
            "[not used: .gitignore (larger than 32,768 bytes)]",
        ),
        (
            lambda g: g.write_bytes(b"*.log\n\0\n"),
            ".gitignore",
            "[not used: .gitignore (not UTF-8 text)]",
        ),
        (
            lambda g: g.write_bytes(b"*.log\n\xff\n"),
            ".gitignore",
            "[not used: .gitignore (not UTF-8 text)]",
        ),
        (
            lambda g: g.symlink_to("../outside/secret.txt"),
            ".gitignore@",
            "[not used: .gitignore (a symbolic link)]",
        ),
        (os.mkfifo, ".gitignore", "[not used: .gitignore (not a regular file)]"),
        (lambda g: g.mkdir(), ".gitignore/", "[not used: .gitignore (not a regular file)]"),
    ],
    ids=["too-large", "nul-byte", "not-utf8", "link", "fifo", "directory"],
)
def test_a_gitignore_that_cannot_be_trusted_is_not_used_and_the_listing_says_so(
    root: Path, ws: Workspace, make: Any, listed: str, note: str
) -> None:
    make(root / ".gitignore")
    (root / "a.log").write_text("", encoding="utf-8")
    assert list_files(ws) == f"{listed}\na.log\n{note}\n"


@pytest.mark.lab("8.7")
def test_a_pattern_that_could_backtrack_for_minutes_or_is_invalid_is_skipped(
    root: Path, ws: Workspace
) -> None:
    # Matched by Python's re, *a*a*a*b takes minutes on this name: the test's timeout would end
    # it, so passing proves the pattern was never matched.
    (root / ".gitignore").write_text("*a*a*a*a*a*a*b\n\\\n*.log\n", encoding="utf-8")
    (root / ("a" * 250)).write_text("", encoding="utf-8")
    (root / "a.log").write_text("", encoding="utf-8")
    assert list_files(ws) == (
        f".gitignore\n{'a' * 250}\n"
        "[pattern skipped: .gitignore line 1 has more than 2 '*' between two slashes]\n"
        "[pattern skipped: .gitignore line 2 is not a valid pattern]\n"
    )


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
    outcome = await run_command("echo hello; exit 3", workspace=workspace_at(tmp_path))
    assert (outcome.exit_code, outcome.signal, outcome.timed_out) == (3, None, False)
    assert outcome.output == "hello\n"
    assert describe_outcome(outcome) == "exit code 3\nhello\n"


@lab_8_5
async def test_a_command_runs_in_the_workspace_root(tmp_path: Path) -> None:
    outcome = await run_command("pwd; echo made > made.txt", workspace=workspace_at(tmp_path))
    assert outcome.output == f"{tmp_path}\n"
    assert (tmp_path / "made.txt").read_text() == "made\n"


@lab_8_5
async def test_stdout_and_stderr_come_back_as_one_stream_in_order(tmp_path: Path) -> None:
    outcome = await run_command("echo a; echo b >&2; echo c", workspace=workspace_at(tmp_path))
    assert outcome.output == "a\nb\nc\n"


@lab_8_5
async def test_a_command_leads_a_session_and_a_process_group_of_its_own(tmp_path: Path) -> None:
    outcome = await run_command("cat /proc/$$/stat", workspace=workspace_at(tmp_path))
    stat = outcome.output
    _state, _parent, group, session = stat[stat.rindex(")") + 2 :].split()[:4]
    assert int(group) == int(session) == outcome.pid
    assert int(group) != os.getpgid(0)


@lab_8_5
async def test_a_command_reads_nothing_from_the_harness_stdin(tmp_path: Path) -> None:
    outcome = await run_command("cat; echo end", workspace=workspace_at(tmp_path))
    assert outcome.output == "end\n"


@lab_8_5
async def test_a_timeout_stops_the_command_and_says_so(tmp_path: Path) -> None:
    outcome = await run_command("sleep 100", workspace=workspace_at(tmp_path), timeout=0.2)
    assert outcome.timed_out
    assert outcome.exit_code is None
    assert describe_outcome(outcome) == "timed out after 0.2 s; its process group was stopped\n"
    assert live_members(outcome.pid) == ()


@lab_8_5
async def test_a_timeout_stops_the_grandchildren_too(tmp_path: Path) -> None:
    outcome = await run_command(
        "sleep 100 & sleep 100 & echo $!; wait", workspace=workspace_at(tmp_path), timeout=0.3
    )
    assert outcome.timed_out
    (grandchild,) = pids_in(outcome.output)
    assert not is_alive(grandchild)
    assert live_members(outcome.pid) == ()


@lab_8_5
async def test_a_background_job_does_not_outlive_its_command(tmp_path: Path) -> None:
    outcome = await run_command("sleep 100 & echo $!", workspace=workspace_at(tmp_path))
    assert (outcome.exit_code, outcome.timed_out) == (0, False)
    (job,) = pids_in(outcome.output)
    assert not is_alive(job)


@lab_8_5
async def test_a_cancelled_call_stops_the_group_before_the_cancellation_goes_on(
    tmp_path: Path,
) -> None:
    os.mkfifo(tmp_path / "started")
    task = asyncio.create_task(
        run_command("echo $$ > started; exec sleep 100", workspace=workspace_at(tmp_path))
    )
    pid = await started_pid(tmp_path / "started", task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert live_members(pid) == ()
    assert not is_alive(pid)


@lab_8_5
async def test_an_abort_of_the_run_stops_the_command_group(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "started")
    registry = ToolRegistry([command_tool(workspace_at(tmp_path))])
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
            ToolRegistry([command_tool(workspace_at(tmp_path))]),
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
    registry = ToolRegistry([command_tool(workspace_at(tmp_path))])
    call = ToolCall.create(id="c1", name="run_command", arguments={"command": "echo hi"})
    result = await execute_tool_call(registry, call, AbortController().signal)
    assert (result.is_error, result.content) == (False, "exit code 0\nhi\n")


@lab_8_5
async def test_the_model_may_shorten_the_timeout_but_never_lengthen_it(tmp_path: Path) -> None:
    registry = ToolRegistry([command_tool(workspace_at(tmp_path), timeout=0.2)])
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
        await run_command(command, workspace=workspace_at(tmp_path), timeout=seconds)


@lab_8_5
async def test_a_long_output_is_projected_and_spilled_whole_to_the_workspace(
    tmp_path: Path,
) -> None:
    outcome = await run_command("seq 1 2000; printf '\\377\\n'", workspace=workspace_at(tmp_path))
    spilled = (tmp_path / ".harness" / "output" / "output-1.txt").read_bytes()
    assert spilled == "".join(f"{n}\n" for n in range(1, 2001)).encode() + b"\xff\n"
    head, marker, tail = outcome.output.partition(
        "[... 1,299 lines (5,898 bytes) left out; the whole output is in "
        ".harness/output/output-1.txt: read it with read_file from line 403]\n"
    )
    assert marker  # the marker is there, and between whole lines
    assert head == "".join(f"{n}\n" for n in range(1, 403))
    assert tail == "".join(f"{n}\n" for n in range(1702, 2001)) + "\ufffd\n"  # not UTF-8: U+FFFD


@lab_8_5
async def test_a_spill_directory_planted_as_a_link_outside_fails_the_command_and_writes_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "ws" / ".harness").symlink_to("../outside")
    ws = workspace_at(tmp_path / "ws")
    with raises_exactly(
        WorkspaceError, "PATH_OUTSIDE_WORKSPACE: '.harness/output' is outside the workspace"
    ):
        await run_command("seq 1 2000", workspace=ws)
    assert list((tmp_path / "outside").iterdir()) == []


@lab_8_5
async def test_a_command_printing_20_mb_costs_the_harness_bounded_memory(tmp_path: Path) -> None:
    tracemalloc.start()
    try:
        command = "head -c 20000000 /dev/zero | tr '\\0' x"
        outcome = await run_command(command, workspace=workspace_at(tmp_path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcome.exit_code == 0
    assert outcome.output == "x" * 1500 + (
        "\n[... 0 lines (19,997,000 bytes) left out; the whole output is in "
        ".harness/output/output-1.txt: read it with read_file from line 1]\n"
    ) + ("x" * 1500)
    assert (tmp_path / ".harness" / "output" / "output-1.txt").stat().st_size == 20_000_000
    assert peak < 4 * 2**20


@pytest.mark.parametrize(
    ("exit_code", "signal_name", "message"),
    [
        (0, "SIGKILL", "ProcessOutcome needs exactly one of exit_code and signal"),
        (None, None, "ProcessOutcome needs exactly one of exit_code and signal"),
    ],
)
def test_an_outcome_that_cannot_happen_is_refused(
    exit_code: int | None, signal_name: str | None, message: str
) -> None:
    with raises_exactly(ValueError, message):
        ProcessOutcome(
            pid=1,
            exit_code=exit_code,
            signal=signal_name,
            output="",
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
    outcome = await run_command(command, workspace=workspace_at(tmp_path), timeout=1.0, grace=0.3)
    (grandchild,) = pids_in(outcome.output)
    assert outcome.timed_out
    assert not is_alive(grandchild)
    assert live_members(outcome.pid) == ()


@lab_8_8
async def test_a_command_ignoring_sigterm_itself_ends_by_sigkill(tmp_path: Path) -> None:
    outcome = await run_command(
        IGNORES_TERM, workspace=workspace_at(tmp_path), timeout=1.0, grace=0.3
    )
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

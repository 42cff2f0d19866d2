"""Checkpoint 08: coding tools, confined to a workspace, with bounded output.

Each test is tagged with the lab it proves: 8.1 workspace paths, 8.2 bounded reading and the
projection of long output, 8.3 writing and editing, 8.4 listing and searching, 8.7 the hostile
files and paths (NUL bytes, names that are not UTF-8, FIFOs, an interrupted write). Every test
works in its own temporary directory: a workspace ``ws`` and, beside it, a directory ``outside``
holding a secret that no test may ever read or change.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkpoints.support import raises_exactly
from harness.abort import AbortController
from harness.agent_loop import LoopCompleted, run_agent_loop
from harness.coding_tools import coding_tool_policies, coding_tools
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
from harness.projection import Projection
from harness.protocol import (
    AssistantMessage,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    thaw_json,
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
    assert marker in described


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


def test_grep_refuses_empty_text(ws: Workspace) -> None:
    with raises_exactly(ValueError, "text must be a non-empty str"):
        grep(ws, "")


# ---- the tools together: checkpoint 06 definitions, run by checkpoint 07's loop ----


@pytest.mark.lab("8.4")
def test_the_coding_tools_are_the_file_tools_with_their_policies(ws: Workspace) -> None:
    list_files(ws)  # the lab's code first, so that a stub fails here
    tools = coding_tools(ws)
    assert [tool.name for tool in tools] == [
        "read_file",
        "write_file",
        "edit_file",
        "list_files",
        "grep",
    ]
    policies = coding_tool_policies()
    assert sorted(name for name, p in policies.items() if p.concurrency_safe) == [
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


@pytest.mark.lab("8.4")
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


@pytest.mark.lab("8.4")
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

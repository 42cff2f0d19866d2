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
import socket
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkpoints.support import raises_exactly
from harness.file_hazards import describe_unusable_path
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

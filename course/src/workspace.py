"""Resolve the paths a model gives against one workspace root, and refuse every way out of it.

Theory of operation
-------------------
A model names files as text: ``src/app.py``, ``../../etc/passwd``, ``/etc/shadow``, or a link
someone planted. The workspace is the one directory the tools may touch. Checking a path as
text (``os.path.realpath`` and a prefix test) and then opening it by name leaves a window: the
name can be swapped for a symbolic link between the check and the open, and the kernel then
follows the link wherever it points.

So nothing here opens a path by name from the root. The walk holds an open file descriptor for
each directory it has entered and opens the next component *relative to it*, with
``O_NOFOLLOW``: the kernel never follows a link on our behalf. When a component turns out to be
a link, the walk reads the link's text and continues with it, exactly as for the model's own
text: ``..`` pops back to the directory it came from, and popping past the root is refused.
Linux's ``openat2(RESOLVE_BENEATH)`` does this in the kernel, but Python's standard library does
not expose it; the walk is that flag written out, and it works on every POSIX system.

A refusal raises ``WorkspaceError`` with a code and a message that names the path as the model
gave it, never the host's absolute path: the host's layout is none of the model's business.
"""

from __future__ import annotations

__all__ = [
    "MAX_LINKS",
    "MAX_PATH_CHARS",
    "PATH_INVALID",
    "PATH_NOT_A_DIRECTORY",
    "PATH_NOT_A_FILE",
    "PATH_NOT_FOUND",
    "PATH_OUTSIDE_WORKSPACE",
    "PATH_TOO_MANY_LINKS",
    "WORKSPACE_CODES",
    "Workspace",
    "WorkspaceError",
    "workspace_at",
]

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from harness.file_hazards import describe_special_file, describe_unusable_path

# --8<-- [start:codes]
# What the model reads when a path is refused: the code, then a message naming its path.
PATH_INVALID: Final = "PATH_INVALID"  # empty, a NUL byte, not UTF-8, too long
PATH_OUTSIDE_WORKSPACE: Final = "PATH_OUTSIDE_WORKSPACE"  # by .., by an absolute path, by a link
PATH_NOT_FOUND: Final = "PATH_NOT_FOUND"
PATH_NOT_A_DIRECTORY: Final = "PATH_NOT_A_DIRECTORY"  # a file where a directory must be
PATH_NOT_A_FILE: Final = "PATH_NOT_A_FILE"  # a directory, a FIFO, a device where a file must be
PATH_TOO_MANY_LINKS: Final = "PATH_TOO_MANY_LINKS"  # a loop of links, or a very long chain
WORKSPACE_CODES: Final = frozenset(
    {
        PATH_INVALID,
        PATH_OUTSIDE_WORKSPACE,
        PATH_NOT_FOUND,
        PATH_NOT_A_DIRECTORY,
        PATH_NOT_A_FILE,
        PATH_TOO_MANY_LINKS,
    }
)
MAX_PATH_CHARS: Final = 4096  # Linux's PATH_MAX, in characters of the model's text
MAX_LINKS: Final = 40  # links followed in one walk, as Linux allows
# --8<-- [end:codes]

_DIRECTORY_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class WorkspaceError(Exception):
    """Raised when a path the model gave cannot be used; ``code`` is one of WORKSPACE_CODES.

    The message names ``path`` as the model gave it, never the host's absolute path. A tool
    that lets it escape becomes checkpoint 06's TOOL_EXECUTION_FAILED result, whose message
    reads ``WorkspaceError: CODE: message``.
    """

    def __init__(self, code: str, path: str, message: str) -> None:
        if code not in WORKSPACE_CODES:
            raise ValueError(f"unknown workspace code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.path = path
        self.message = message


# --8<-- [start:workspace]
@dataclass(frozen=True, slots=True, kw_only=True)
class Workspace:
    """One root directory; every path a tool receives is resolved beneath it.

    Make one with ``workspace_at``. It holds no open descriptor: each operation opens the root
    again, so a Workspace needs no closing and can be shared by concurrent calls.
    """

    root: str  # absolute, with no link in it (os.path.realpath): the host's, never shown
    # A test seam: called with each component's name (a str) just before the walk opens it,
    # the last component's included, so that a test can swap a file for a link at exactly that
    # moment. None in real use.
    before_open: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        if type(self.root) is not str or not os.path.isabs(self.root):
            raise TypeError("Workspace.root must be an absolute path (str); use workspace_at")
        if os.path.realpath(self.root) != self.root or not os.path.isdir(self.root):
            raise ValueError("Workspace.root must be a real directory; use workspace_at")
        if self.before_open is not None and not callable(self.before_open):
            raise TypeError("Workspace.before_open must be callable or None")

    # --8<-- [end:workspace]

    def open_file(self, path: str, flags: int = os.O_RDONLY) -> int:
        """Open the regular file at ``path`` beneath the root; return its descriptor (yours).

        Links inside the workspace are followed; any way out raises WorkspaceError, as does a
        directory, a FIFO or a device. ``flags`` are os.open flags; O_NOFOLLOW, O_CLOEXEC and
        O_NONBLOCK (a FIFO must not block the open) are added, and O_NONBLOCK is cleared again.
        """
        # BEGIN LAB 8.1
        parent, name = self._walk(path)
        try:
            fd = self._open_at(parent, name, path, flags | os.O_NONBLOCK | os.O_CLOEXEC)
        finally:
            os.close(parent)
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                raise WorkspaceError(PATH_NOT_A_FILE, path, f"{path!r} is a directory, not a file")
            if not stat.S_ISREG(mode):
                kind = describe_special_file(mode)
                raise WorkspaceError(PATH_NOT_A_FILE, path, f"{path!r} is {kind}, not a file")
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd
        # END LAB 8.1

    def open_directory(self, path: str, *, make_directories: bool = False) -> int:
        """Open the directory at ``path`` beneath the root (``"."`` is the root); return its fd.

        With ``make_directories``, it and its missing parents are created.
        """
        # BEGIN LAB 8.1
        parent, name = self._walk(path, make_directories=make_directories)
        try:
            if name == b".":
                return os.dup(parent)
            return self._enter(parent, name, path, make_directories)
        finally:
            os.close(parent)
        # END LAB 8.1

    def open_parent(self, path: str, *, make_directories: bool = False) -> tuple[int, bytes]:
        """Return the descriptor of the directory that holds ``path``, and its last name.

        A link in the last component is followed beneath the root, so a write through a link
        replaces the file it points to. With ``make_directories``, missing parents are created.
        The descriptor is yours to close. Raises WorkspaceError, PATH_NOT_A_FILE for the root.
        """
        # BEGIN LAB 8.1
        parent, name = self._walk(path, make_directories=make_directories)
        if name == b".":
            os.close(parent)
            raise WorkspaceError(PATH_NOT_A_FILE, path, f"{path!r} is a directory, not a file")
        return parent, name
        # END LAB 8.1

    # BEGIN LAB 8.1
    def _components(self, path: str) -> list[bytes]:
        """Return the path's components, relative to the root, or refuse its text."""
        if type(path) is not str:
            raise TypeError(f"path must be a str, got {type(path).__name__}")
        if not path:
            raise WorkspaceError(PATH_INVALID, path, "the path is empty")
        if len(path) > MAX_PATH_CHARS:
            raise WorkspaceError(
                PATH_INVALID,
                path[:40],
                f"the path is {len(path)} characters long; the limit is {MAX_PATH_CHARS}",
            )
        # Encoded by us, strictly: os.fsencode would turn a lone surrogate into a raw byte and
        # so reach a file whose name is not UTF-8. A NUL would cut the name short in C.
        try:
            encoded = path.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise WorkspaceError(PATH_INVALID, path, describe_unusable_path(path, exc)) from None
        if b"\0" in encoded:
            nul = ValueError("embedded null byte")  # what os.open itself would raise
            raise WorkspaceError(PATH_INVALID, path, describe_unusable_path(path, nul))
        return self._relative(encoded, path)

    def _relative(self, encoded: bytes, path: str) -> list[bytes]:
        """Split a path, or a link's text, into components below the root."""
        # An absolute path is inside only if it names the root or something under it: then it
        # is the rest after the root. Everything else absolute is outside.
        if encoded.startswith(b"/"):
            root = os.fsencode(self.root)
            if encoded != root and not encoded.startswith(root.rstrip(b"/") + b"/"):
                raise WorkspaceError(
                    PATH_OUTSIDE_WORKSPACE, path, f"{path!r} is outside the workspace"
                )
            encoded = encoded[len(root) :]
        return [part for part in encoded.split(b"/") if part not in (b"", b".")]

    # --8<-- [start:walk]
    def _walk(self, path: str, *, make_directories: bool = False) -> tuple[int, bytes]:
        """Walk ``path`` beneath the root; return the fd of its last directory and its name."""
        # The pending components are a stack, last component at the bottom: a link's text is
        # pushed on top, in place of the link, and walked like the model's own.
        pending = self._components(path)[::-1]
        opened = [os.open(self.root, _DIRECTORY_FLAGS)]  # the directories we are inside of
        links = 0
        try:
            while pending:
                name = pending.pop()
                if name == b"..":
                    if len(opened) == 1:  # popping past the root
                        raise WorkspaceError(
                            PATH_OUTSIDE_WORKSPACE, path, f"{path!r} is outside the workspace"
                        )
                    os.close(opened.pop())
                    continue
                target = self._link_text(opened[-1], name, path)
                if target is not None:
                    links += 1
                    if links > MAX_LINKS:
                        raise WorkspaceError(
                            PATH_TOO_MANY_LINKS,
                            path,
                            f"{path!r} goes through more than {MAX_LINKS} symbolic links",
                        )
                    pending.extend(self._relative(target, path)[::-1])
                    continue
                if not pending:
                    return opened.pop(), name  # the caller opens the last one itself
                opened.append(self._enter(opened[-1], name, path, make_directories))
            return opened.pop(), b"."  # the path named a directory: ".", "a/..", the root
        finally:
            for fd in opened:
                os.close(fd)

    # --8<-- [end:walk]

    def _link_text(self, directory: int, name: bytes, path: str) -> bytes | None:
        """Return what the link ``name`` says, or None if it is not a link (or does not exist)."""
        try:
            return os.readlink(name, dir_fd=directory)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.ENOENT):  # not a link; missing
                return None
            raise self._refusal(exc, path) from None

    def _enter(self, directory: int, name: bytes, path: str, make: bool) -> int:
        """Open the directory ``name`` inside ``directory``, never through a link."""
        if make:
            try:
                os.mkdir(name, dir_fd=directory)
            except FileExistsError:
                pass
            except OSError as exc:
                raise self._refusal(exc, path) from None
        return self._open_at(directory, name, path, _DIRECTORY_FLAGS)

    # --8<-- [start:open-at]
    def _open_at(self, directory: int, name: bytes, path: str, flags: int) -> int:
        """Open ``name`` inside ``directory`` with O_NOFOLLOW, turning failures into refusals."""
        if self.before_open is not None:
            self.before_open(os.fsdecode(name))
        try:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory)
        except OSError as exc:
            # O_NOFOLLOW refused a link that was not there when the walk looked (ELOOP, or
            # ENOTDIR with O_DIRECTORY): someone swapped it in. Refuse; never follow it.
            mode = self._mode_of(directory, name)
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and stat.S_ISLNK(mode):
                raise WorkspaceError(
                    PATH_OUTSIDE_WORKSPACE,
                    path,
                    f"{path!r} changed into a link while it was opened",
                ) from None
            if exc.errno == errno.ENXIO and (stat.S_ISSOCK(mode) or stat.S_ISFIFO(mode)):
                kind = describe_special_file(mode)  # a socket cannot be opened at all
                raise WorkspaceError(
                    PATH_NOT_A_FILE, path, f"{path!r} is {kind}, not a file"
                ) from None
            raise self._refusal(exc, path) from None

    # --8<-- [end:open-at]

    def _mode_of(self, directory: int, name: bytes) -> int:
        """Return the mode of ``name`` inside ``directory``, not following a link; 0 if none."""
        try:
            return os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode
        except OSError:
            return 0

    def _refusal(self, exc: OSError, path: str) -> WorkspaceError:
        """Translate an OSError of the walk into a refusal that names the model's path."""
        if exc.errno == errno.ENOENT:
            return WorkspaceError(PATH_NOT_FOUND, path, f"{path!r} does not exist")
        if exc.errno == errno.ENOTDIR:
            return WorkspaceError(
                PATH_NOT_A_DIRECTORY,
                path,
                f"{path!r} goes through a file as if it were a directory",
            )
        return WorkspaceError(PATH_INVALID, path, describe_unusable_path(path, exc))

    # END LAB 8.1


def workspace_at(
    root: str | os.PathLike[str], *, before_open: Callable[[str], None] | None = None
) -> Workspace:
    """Return the workspace rooted at the existing directory ``root`` (links in it resolved).

    Raises ValueError naming the root if it is not an existing directory. The root is the
    host's choice, so it is trusted: only what is beneath it is checked.
    """
    real = os.path.realpath(root)
    if not os.path.isdir(real):
        raise ValueError(f"the workspace root {os.fspath(root)!r} is not an existing directory")
    return Workspace(root=real, before_open=before_open)

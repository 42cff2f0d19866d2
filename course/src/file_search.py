"""List and search the files of a workspace: one bounded, sorted walk that never enters a link.

``list_files`` and ``grep`` share the walk. It reads each directory from its descriptor, sorts
its names, and enters a subdirectory by opening it relative to its parent with ``O_NOFOLLOW``;
a link is listed, never entered. What the ``.gitignore`` files of the start, of the directories
above it and of those below it ignore is neither listed nor searched, unless the caller asks for
it. Four budgets bound the work whatever the tree, a last line says when one stopped it, and the
output goes through a ``Projection``.
"""

from __future__ import annotations

__all__ = [
    "MAX_DEPTH",
    "MAX_GREP_LINE_CHARS",
    "MAX_LISTED",
    "MAX_MATCHES",
    "MAX_SCANNED",
    "grep",
    "list_files",
]

import contextlib
import fnmatch
import os
import posixpath
import stat
from collections.abc import Generator
from typing import Final

from harness.file_tools import BINARY_PROBE_BYTES, NOT_TEXT, FileToolError, read_lines
from harness.ignore_files import IgnoreRules, is_ignored, read_ignore_file
from harness.projection import Projection
from harness.workspace import Workspace

# --8<-- [start:limits]
MAX_LISTED: Final = 10_000  # entries list_files returns at most
MAX_MATCHES: Final = 1000  # lines grep returns at most
MAX_SCANNED: Final = 50_000  # directory entries one walk looks at, matching or not
MAX_GREP_LINE_CHARS: Final = 200  # of a matching line, shown
MAX_DEPTH: Final = 64  # levels of directories entered below the start
# --8<-- [end:limits]

_SKIPPED_DIRECTORIES: Final = frozenset({".git"})
_SUFFIXES: Final = {"file": "", "directory": "/", "link": "@", "other": ""}  # as ls -F marks
_DIRECTORY_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


# --8<-- [start:list]
def list_files(
    workspace: Workspace, path: str = ".", *, pattern: str = "*", include_ignored: bool = False
) -> str:
    """List what is under the directory ``path``, depth first, each directory's names sorted.

    Each entry is a path the model can pass back (``path`` then the rest). A directory ends
    with ``/``, a link with ``@`` (links are listed, never entered); ``.git`` is not entered.
    ``pattern`` is an fnmatch pattern matched against the path below ``path``, and its ``*``
    crosses ``/``. What a .gitignore ignores is left out (and not entered) unless
    ``include_ignored``. Long output is projected; the walk stops at its budgets.
    """
    # BEGIN LAB 8.4
    walk = _Walk(workspace, path, include_ignored=include_ignored)
    listed = 0
    with Projection(workspace) as output, contextlib.closing(walk.entries()) as entries:
        for relative, kind, _directory, _name in entries:
            if not fnmatch.fnmatchcase(relative, pattern):
                continue
            if listed == MAX_LISTED:
                walk.note(f"[stopped after {MAX_LISTED:,} entries; narrow the path or pattern]")
                break
            listed += 1
            output.write(f"{_shown(walk.prefix + relative)}{_SUFFIXES[kind]}\n".encode())
        if listed == 0:
            output.write(f"[nothing under {path!r} matches {pattern!r}]\n".encode())
        for note in walk.notes:
            output.write(f"{note}\n".encode())
        return output.finish()
    # END LAB 8.4


# --8<-- [end:list]


# --8<-- [start:grep]
def grep(
    workspace: Workspace,
    text: str,
    path: str = ".",
    *,
    pattern: str = "*",
    include_ignored: bool = False,
) -> str:
    """Return ``file:line: text`` for each line holding ``text`` (a plain string, not a regex).

    Files are searched in list_files's order, those whose path below ``path`` matches
    ``pattern`` (ignored files only with ``include_ignored``); binary files are skipped. At most
    MAX_MATCHES lines come back, projected.
    """
    if type(text) is not str or not text:
        raise ValueError("text must be a non-empty str")
    # BEGIN LAB 8.4
    walk = _Walk(workspace, path, include_ignored=include_ignored)
    try:
        needle = text.encode("utf-8")
    except UnicodeEncodeError:
        raise FileToolError(NOT_TEXT, "the text is not valid UTF-8 text") from None
    matches = 0
    full = False  # True once a match past MAX_MATCHES was found: the search stops there
    with Projection(workspace) as output, contextlib.closing(walk.entries()) as entries:
        for relative, kind, directory, name in entries:
            if kind != "file" or not fnmatch.fnmatchcase(relative, pattern):
                continue
            with contextlib.closing(_matching_lines(directory, name, needle)) as lines:
                for number, line in lines:
                    if matches == MAX_MATCHES:
                        walk.note(f"[stopped after {MAX_MATCHES:,} matches; narrow the search]")
                        full = True
                        break
                    matches += 1
                    shown = line.decode("utf-8", errors="replace")[:MAX_GREP_LINE_CHARS]
                    output.write(f"{_shown(walk.prefix + relative)}:{number}: {shown}\n".encode())
            if full:
                break
        if matches == 0:
            output.write(f"[no match for {text!r} under {path!r}]\n".encode())
        for note in walk.notes:
            output.write(f"{note}\n".encode())
        return output.finish()
    # END LAB 8.4


# --8<-- [end:grep]


# BEGIN LAB 8.4
class _Walk:
    """One bounded, sorted walk of a directory of the workspace; ``notes`` say what it skipped."""

    def __init__(self, workspace: Workspace, path: str, *, include_ignored: bool) -> None:
        self.workspace = workspace
        self.path = path
        self.include_ignored = include_ignored
        # What the model reads is a path it can pass back: the start's path, then the rest.
        self.prefix = "" if path in (".", "./") else path.rstrip("/") + "/"
        # What a .gitignore matches is a path from the root: the start's, as written, then the
        # rest ("" or ending in "/"; a path that climbs out by its text keeps only its own rules).
        self.base = _path_from_root(workspace, path)
        self.scanned = 0
        self.notes: list[str] = []

    def note(self, text: str, *, once: bool = False) -> None:
        """Keep a line that says what the walk skipped; with ``once``, only the first time."""
        if not (once and text in self.notes):
            self.notes.append(text)

    def entries(self) -> Generator[tuple[str, str, int, str]]:
        """Yield (path below the start, kind, fd of its directory, its name), depth first."""
        top = self.workspace.open_directory(self.path)
        try:
            rules = () if self.include_ignored else self._rules_above()
            yield from self._entries_of(top, "", rules)
        finally:
            os.close(top)

    def _rules_above(self) -> tuple[IgnoreRules, ...]:
        """Read the .gitignore of each directory from the root down to the start's parent."""
        rules: list[IgnoreRules] = []
        parts = self.base.split("/")[:-1]  # "src/b/" -> ["src", "b"]
        for depth in range(len(parts)):
            above = "".join(part + "/" for part in parts[:depth])
            directory = self.workspace.open_directory(above or ".")
            try:
                found, notes = read_ignore_file(directory, above, _shown(above + ".gitignore"))
            finally:
                os.close(directory)
            for note in notes:
                self.note(note)
            if found is not None:
                rules.append(found)
        return tuple(rules)

    def _entries_of(
        self, directory: int, prefix: str, rules: tuple[IgnoreRules, ...], depth: int = 0
    ) -> Generator[tuple[str, str, int, str]]:
        if not self.include_ignored:
            shown = _shown(self.prefix + prefix + ".gitignore")
            found_rules, notes = read_ignore_file(directory, self.base + prefix, shown)
            for note in notes:
                self.note(note)
            if found_rules is not None:
                rules = (*rules, found_rules)
        found = []
        with os.scandir(directory) as scan:
            for entry in scan:
                if self.scanned == MAX_SCANNED:
                    self.note(f"[stopped looking after {MAX_SCANNED:,} entries]", once=True)
                    break
                self.scanned += 1
                found.append((entry.name, _kind(entry)))
        for name, kind in sorted(found):
            relative = prefix + name
            if rules and is_ignored(rules, self.base + relative, is_directory=kind == "directory"):
                continue  # neither listed nor entered, as git does: nothing under it comes back
            yield relative, kind, directory, name
            if kind != "directory" or name in _SKIPPED_DIRECTORIES:
                continue
            if depth == MAX_DEPTH:  # each level holds a descriptor open while it is walked
                self.note(f"[not entered: {_shown(relative)}/ (deeper than {MAX_DEPTH} levels)]")
                continue
            try:
                inner = os.open(name, _DIRECTORY_FLAGS, dir_fd=directory)
            except OSError as exc:  # gone since the scan, or not ours to enter
                self.note(f"[not entered: {_shown(relative)}/ ({os.strerror(exc.errno or 0)})]")
                continue
            try:
                yield from self._entries_of(inner, relative + "/", rules, depth + 1)
            finally:
                os.close(inner)


def _path_from_root(workspace: Workspace, path: str) -> str:
    """Return the start's path from the root as its text says: "" or ending in "/"."""
    normal = posixpath.normpath(path)
    if posixpath.isabs(normal):  # the workspace let it through: it names the root or below
        normal = posixpath.relpath(normal, workspace.root)
    # ".." at the start: the walk climbed through a link, so its text says nothing of where.
    if normal in (".", "..") or normal.startswith("../"):
        return ""
    return normal + "/"


def _kind(entry: os.DirEntry[str]) -> str:
    """Name what the entry itself is: a link is a link, never what it points to."""
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "directory"
    return "file" if entry.is_file(follow_symlinks=False) else "other"


def _matching_lines(directory: int, name: str, needle: bytes) -> Generator[tuple[int, bytes]]:
    """Yield each line of the text file ``name`` that holds ``needle``; nothing if binary."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=directory)
    except OSError:
        return  # gone, swapped for a link, or not readable: not searched
    with open(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode) or b"\0" in file.read(BINARY_PROBE_BYTES):
            return
        file.seek(0)
        for number, line, _cut in read_lines(file):
            if needle in line:
                yield number, line


def _shown(name: str) -> str:
    """Return a name as the model can read it: bytes that are not UTF-8 as ``\\xff`` escapes."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


# END LAB 8.4

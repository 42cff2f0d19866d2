"""Read the ``.gitignore`` files a walk meets, bounded, and say whether git would ignore a path.

The matching is ``pathspec``'s ``GitIgnoreSpec``, which follows git's own rules (``*``, ``**``,
``!``, a trailing ``/`` for directories, a leading ``/`` to anchor). What this module adds is
what git leaves to trust: the file is read through a directory descriptor without following a
link, at most ``MAX_IGNORE_FILE_BYTES`` of it, and a pattern that could make Python's ``re``
backtrack for minutes is skipped. Every file or pattern not used comes back as a note.
"""

from __future__ import annotations

__all__ = [
    "MAX_IGNORE_FILE_BYTES",
    "MAX_STARS_PER_PART",
    "IgnoreRules",
    "is_ignored",
    "read_ignore_file",
]

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pathspec import GitIgnoreSpec

# --8<-- [start:limits]
MAX_IGNORE_FILE_BYTES: Final = 32_768  # a .gitignore longer than this is not used at all
MAX_STARS_PER_PART: Final = 2  # '*' between two slashes; `**` alone is one part, and cheap
# --8<-- [end:limits]

_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True, slots=True, kw_only=True)
class IgnoreRules:
    """The usable patterns of one .gitignore, and the directory whose entries they judge."""

    directory: str  # the directory's path from the workspace root: "" or ending in "/"
    spec: GitIgnoreSpec

    def __post_init__(self) -> None:
        if self.directory and not self.directory.endswith("/"):
            raise ValueError(f"IgnoreRules.directory must end with '/', got {self.directory!r}")


# --8<-- [start:ignored]
def is_ignored(rules: Sequence[IgnoreRules], path: str, *, is_directory: bool) -> bool:
    """Return True iff git would ignore ``path`` (from the root) under ``rules``, outermost first.

    The deepest .gitignore with a pattern that matches decides, and in it the last such pattern
    (``!`` re-includes): git's order. A directory is matched with a trailing ``/``.
    """
    # BEGIN LAB 8.4
    candidate = path + "/" if is_directory else path
    for rule in reversed(rules):
        assert candidate.startswith(rule.directory), "rules come from the path's own directories"
        verdict = rule.spec.check_file(candidate[len(rule.directory) :]).include
        if verdict is not None:  # None: no pattern of this file matched; ask the one above
            return verdict
    return False
    # END LAB 8.4


# --8<-- [end:ignored]


# --8<-- [start:read]
def read_ignore_file(
    directory_fd: int, directory: str, shown: str
) -> tuple[IgnoreRules | None, list[str]]:
    """Read the .gitignore in the open directory ``directory`` (from the root, "" or "a/").

    Return its rules (None when there is none, or it is not used) and the notes that say what
    was not used; ``shown`` is its path as the model reads it. Never follows a link.
    """
    # BEGIN LAB 8.4
    try:
        fd = os.open(".gitignore", _FILE_FLAGS, dir_fd=directory_fd)
    except FileNotFoundError:
        return None, []
    except OSError as exc:  # git 2.32 and later read no .gitignore through a link either
        reason = "a symbolic link" if exc.errno == errno.ELOOP else os.strerror(exc.errno or 0)
        return None, [f"[not used: {shown} ({reason})]"]
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a directory, a FIFO (opened without waiting)
        os.close(fd)
        return None, [f"[not used: {shown} (not a regular file)]"]
    with open(fd, "rb") as file:
        data = file.read(MAX_IGNORE_FILE_BYTES + 1)  # one byte more tells that it is too large
    if len(data) > MAX_IGNORE_FILE_BYTES:
        return None, [f"[not used: {shown} (larger than {MAX_IGNORE_FILE_BYTES:,} bytes)]"]
    not_text = [f"[not used: {shown} (not UTF-8 text)]"]
    if b"\0" in data:  # binary, as git decides it
        return None, not_text
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, not_text
    patterns, notes = _usable_patterns(text.splitlines(), shown)
    return IgnoreRules(directory=directory, spec=GitIgnoreSpec.from_lines(patterns)), notes
    # END LAB 8.4


# --8<-- [end:read]


# BEGIN LAB 8.4
def _usable_patterns(lines: list[str], shown: str) -> tuple[list[str], list[str]]:
    """Return the lines that are safe, valid patterns, and a note for each other one."""
    usable: list[str] = []
    notes: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.startswith("#") and _too_many_stars(line):
            # pathspec turns each * into [^/]* for Python's re: with three or more of them in
            # one part, a long name of the right letters backtracks for seconds, then minutes.
            notes.append(
                f"[pattern skipped: {shown} line {number} has more than "
                f"{MAX_STARS_PER_PART} '*' between two slashes]"
            )
            continue
        try:
            GitIgnoreSpec.from_lines([line])
        except ValueError:  # git skips a pattern it cannot read, such as a lone backslash
            notes.append(f"[pattern skipped: {shown} line {number} is not a valid pattern]")
            continue
        usable.append(line)
    return usable, notes


def _too_many_stars(line: str) -> bool:
    """Return True iff a part of the pattern between slashes holds too many '*'."""
    return any(part != "**" and part.count("*") > MAX_STARS_PER_PART for part in line.split("/"))


# END LAB 8.4

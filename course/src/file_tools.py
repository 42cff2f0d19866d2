"""The file tools of a coding agent that read and change one file: read, write and edit.

Each is a plain function of a ``Workspace`` and the model's arguments that returns the text the
model reads, or raises ``FileToolError`` (or the workspace's ``WorkspaceError``) with a code and a
message naming the path as the model gave it. ``harness.file_search`` lists and searches, and
``harness.coding_tools`` wraps them all as tools. Each costs bounded memory whatever the size of
the file: lines are read one at a time with a cap, and edit refuses a file it cannot hold.
"""

from __future__ import annotations

__all__ = [
    "BINARY_PROBE_BYTES",
    "EDIT_EMPTY_OLD_TEXT",
    "EDIT_FILE_TOO_LARGE",
    "EDIT_MATCH_COUNT",
    "EDIT_NO_MATCH",
    "FILE_TOOL_CODES",
    "MAX_EDIT_BYTES",
    "MAX_LINE_BYTES",
    "MAX_READ_CHARS",
    "MAX_READ_LINES",
    "NOT_TEXT",
    "READ_PAST_END",
    "FileToolError",
    "edit_file",
    "read_file",
    "read_lines",
    "write_file",
]

import codecs
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from typing import BinaryIO, Final

from harness.file_hazards import describe_special_file, discard_partial_write
from harness.workspace import PATH_NOT_A_FILE, Workspace, WorkspaceError

# --8<-- [start:codes]
NOT_TEXT: Final = "NOT_TEXT"  # a NUL byte near the start, or bytes that are not UTF-8
READ_PAST_END: Final = "READ_PAST_END"  # an offset after the last line
EDIT_EMPTY_OLD_TEXT: Final = "EDIT_EMPTY_OLD_TEXT"
EDIT_NO_MATCH: Final = "EDIT_NO_MATCH"
EDIT_MATCH_COUNT: Final = "EDIT_MATCH_COUNT"  # found, but not as many times as the model said
EDIT_FILE_TOO_LARGE: Final = "EDIT_FILE_TOO_LARGE"
FILE_TOOL_CODES: Final = frozenset(
    {
        NOT_TEXT,
        READ_PAST_END,
        EDIT_EMPTY_OLD_TEXT,
        EDIT_NO_MATCH,
        EDIT_MATCH_COUNT,
        EDIT_FILE_TOO_LARGE,
    }
)
# --8<-- [end:codes]

# --8<-- [start:limits]
MAX_READ_LINES: Final = 2000  # lines one read returns at most (a larger limit is lowered)
MAX_LINE_BYTES: Final = 1000  # longer lines are cut, and the cut is said
MAX_READ_CHARS: Final = 3500  # numbered text one read returns: under 06's 4096 with its note
BINARY_PROBE_BYTES: Final = 8192  # a NUL byte in these means binary, as git decides
MAX_EDIT_BYTES: Final = 1_000_000  # edit reads the whole file: it must be small
# --8<-- [end:limits]


class FileToolError(Exception):
    """Raised when a file tool cannot do what the model asked; ``code`` is in FILE_TOOL_CODES."""

    def __init__(self, code: str, message: str) -> None:
        if code not in FILE_TOOL_CODES:
            raise ValueError(f"unknown file tool code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


# ---------------------------------------------------------------------------------------------
# Lab 8.2: reading, bounded.
# ---------------------------------------------------------------------------------------------


# --8<-- [start:read]
def read_file(
    workspace: Workspace, path: str, *, offset: int = 1, limit: int = MAX_READ_LINES
) -> str:
    """Return lines ``offset`` to ``offset + limit - 1`` of a text file, numbered from 1.

    At most MAX_READ_LINES lines and MAX_READ_CHARS characters come back; when more follow, a
    last line says the offset to continue from. Raises FileToolError (NOT_TEXT, READ_PAST_END)
    or WorkspaceError; ValueError if ``offset`` or ``limit`` is not a positive int.
    """
    for name, value in (("offset", offset), ("limit", limit)):
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    # BEGIN LAB 8.2
    limit = min(limit, MAX_READ_LINES)
    with open(workspace.open_file(path), "rb") as file:
        _refuse_binary(file, path)
        shown: list[str] = []
        size = 0
        number = 0
        for number, line, cut in read_lines(file):
            if number < offset:
                continue  # read and dropped: memory stays one line
            if number == offset + limit:
                return "\n".join([*shown, f"[more lines follow; continue with offset={number}]"])
            entry = f"{number:>6}\t{_text_of(line, number, path, cut=cut)}"
            if cut:
                entry += f" [line cut at {MAX_LINE_BYTES} bytes]"
            if size + len(entry) + 1 > MAX_READ_CHARS:
                note = f"[stopped to stay under {MAX_READ_CHARS} characters; "
                return "\n".join([*shown, f"{note}continue with offset={number}]"])
            shown.append(entry)
            size += len(entry) + 1
    if number == 0:
        return f"[{path!r} is empty]"
    if number < offset:
        raise FileToolError(
            READ_PAST_END, f"offset {offset} is past the end of {path!r} ({number} lines)"
        )
    return "\n".join(shown)
    # END LAB 8.2


# --8<-- [end:read]


# BEGIN LAB 8.2
def _refuse_binary(file: BinaryIO, path: str) -> None:
    """Refuse a file with a NUL byte in its first bytes; leave the file at its start."""
    if b"\0" in file.read(BINARY_PROBE_BYTES):
        raise FileToolError(
            NOT_TEXT, f"{path!r} looks binary (a NUL byte in its first {BINARY_PROBE_BYTES} bytes)"
        )
    file.seek(0)


# END LAB 8.2


# --8<-- [start:read-lines]
def read_lines(file: BinaryIO) -> Iterator[tuple[int, bytes, bool]]:
    """Yield each line's number, its bytes (at most MAX_LINE_BYTES) and whether it was cut.

    The line break is not part of the bytes. Memory stays one capped line, however long the
    lines of the file: the rest of a long line is read and dropped a bounded piece at a time.
    """
    # BEGIN LAB 8.2
    number = 0
    while line := file.readline(MAX_LINE_BYTES + 1):  # never a whole 1 GB line in memory
        number += 1
        cut = len(line) > MAX_LINE_BYTES
        if cut:
            line = line[:MAX_LINE_BYTES]
            while (rest := file.readline(64 * 1024)) and not rest.endswith(b"\n"):
                pass  # skip the rest of the long line, a bounded piece at a time
        yield number, line.removesuffix(b"\n").removesuffix(b"\r"), cut
    # END LAB 8.2


# --8<-- [end:read-lines]


# BEGIN LAB 8.2
def _text_of(line: bytes, number: int, path: str, *, cut: bool) -> str:
    """Decode one line as UTF-8; a line cut inside a character loses only that character."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        return decoder.decode(line, final=not cut)  # not final: an unfinished end is dropped
    except UnicodeDecodeError:
        raise FileToolError(NOT_TEXT, f"{path!r} is not UTF-8 text (line {number})") from None


# END LAB 8.2


# ---------------------------------------------------------------------------------------------
# Lab 8.3: writing and editing, atomically.
# ---------------------------------------------------------------------------------------------


# --8<-- [start:write]
def write_file(
    workspace: Workspace,
    path: str,
    content: str,
    *,
    before_rename: Callable[[], None] | None = None,
) -> str:
    """Replace the file at ``path`` with ``content`` (UTF-8), atomically; create its parents.

    A reader sees the old content or the new, never a mix, and a failure leaves the old one.
    ``before_rename`` is a test seam, called once the new content is on disk. Raises
    WorkspaceError, or FileToolError(NOT_TEXT) for text that UTF-8 cannot encode.
    """
    # BEGIN LAB 8.3
    data = _encoded(content)
    directory, name = workspace.open_parent(path, make_directories=True)
    try:
        _replace(directory, name, data, path, before_rename)
    finally:
        os.close(directory)
    return f"wrote {len(data):,} byte{'' if len(data) == 1 else 's'} to {path!r}"
    # END LAB 8.3


# --8<-- [end:write]


# BEGIN LAB 8.3
def _encoded(text: str) -> bytes:
    """Encode the model's text as UTF-8; JSON can carry a lone surrogate, which it cannot."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise FileToolError(NOT_TEXT, "the content is not valid UTF-8 text") from None


# --8<-- [start:replace]
def _replace(
    directory: int, name: bytes, data: bytes, path: str, before_rename: Callable[[], None] | None
) -> None:
    """Write ``data`` to a new file beside ``name`` and rename it over ``name``."""
    mode = _mode_to_keep(directory, name, path)
    # Hidden, unique, in the same directory: rename is atomic only within one file system.
    # The name is shortened so that the temporary one fits in 255 bytes too.
    temporary = b"." + name[:200] + b"." + secrets.token_hex(4).encode() + b".tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, mode, dir_fd=directory)
    try:
        with open(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fchmod(file.fileno(), mode)  # the umask may have taken bits away
            os.fsync(file.fileno())  # on disk before the name points to it
        if before_rename is not None:
            before_rename()
        os.rename(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        discard_partial_write(directory, temporary)  # Lab 8.7
        raise
    os.fsync(directory)  # and the new name on disk too


# --8<-- [end:replace]


def _mode_to_keep(directory: int, name: bytes, path: str) -> int:
    """Return the permission bits of the file being replaced, or 0o644 for a new one."""
    try:
        mode = os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return 0o644
    if stat.S_ISDIR(mode):
        raise WorkspaceError(PATH_NOT_A_FILE, path, f"{path!r} is a directory, not a file")
    if not stat.S_ISREG(mode):
        kind = describe_special_file(mode)
        raise WorkspaceError(PATH_NOT_A_FILE, path, f"{path!r} is {kind}, not a file")
    return stat.S_IMODE(mode)


# END LAB 8.3


# --8<-- [start:edit]
def edit_file(
    workspace: Workspace,
    path: str,
    old_text: str,
    new_text: str,
    *,
    count: int = 1,
) -> str:
    """Replace ``old_text`` by ``new_text`` where it occurs exactly ``count`` times; atomic.

    Raises FileToolError: EDIT_EMPTY_OLD_TEXT, EDIT_NO_MATCH, EDIT_MATCH_COUNT (saying how many
    matches there are), EDIT_FILE_TOO_LARGE or NOT_TEXT; WorkspaceError for the path;
    ValueError if ``count`` is not a positive int.
    """
    if type(count) is not int or count < 1:
        raise ValueError(f"count must be a positive int, got {count!r}")
    # BEGIN LAB 8.3
    if not old_text:
        raise FileToolError(
            EDIT_EMPTY_OLD_TEXT, "old_text is empty; name the exact text to replace"
        )
    text = _read_whole_text(workspace, path)
    found = text.count(old_text)
    if found == 0:
        raise FileToolError(EDIT_NO_MATCH, f"{path!r} has no match for old_text")
    if found != count:
        raise FileToolError(
            EDIT_MATCH_COUNT,
            f"{path!r} has {found} matches for old_text, not {count}; "
            f"add context to old_text, or pass count={found}",
        )
    data = _encoded(text.replace(old_text, new_text))
    directory, name = workspace.open_parent(path)
    try:
        _replace(directory, name, data, path, None)
    finally:
        os.close(directory)
    return f"replaced {found} match{'es' if found > 1 else ''} in {path!r}"
    # END LAB 8.3


# --8<-- [end:edit]


# BEGIN LAB 8.3
def _read_whole_text(workspace: Workspace, path: str) -> str:
    """Return the whole text of a small UTF-8 file; refuse a large or binary one."""
    with open(workspace.open_file(path), "rb") as file:
        size = os.fstat(file.fileno()).st_size
        if size > MAX_EDIT_BYTES:
            raise FileToolError(
                EDIT_FILE_TOO_LARGE,
                f"{path!r} is {size:,} bytes; edit_file changes files of up to "
                f"{MAX_EDIT_BYTES:,} bytes",
            )
        data = file.read(MAX_EDIT_BYTES + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileToolError(NOT_TEXT, f"{path!r} is not UTF-8 text") from None


# END LAB 8.3

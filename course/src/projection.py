"""Keep a tool's long output short for the model: its head, its tail, and where the rest went.

Theory of operation
-------------------
A tool's output can be any size: a listing of ten thousand files, a command that prints 100 MB.
The model's context cannot take it, and the harness must not hold it either. A ``Projection``
is written to in chunks, as the output arrives, and holds at most ``head_bytes + tail_bytes +
1`` bytes of it (plus the chunk being written; the extra byte tells whether the tail starts a
line). While the output fits, it is kept whole. The first byte
past that opens a *spill file* in the workspace (``.harness/output/output-1.txt``, the next
free number) and from then on every byte goes there, so the whole output stays readable.

``finish()`` returns what the model reads: the output itself if it fitted, or its head, a
marker saying how many lines and bytes were left out and which file holds them all, and its
tail. The head is cut back to a line break and the tail starts after one, so the model sees
whole lines; the marker's line number is where ``read_file`` continues from. A projection made
without a workspace (the sandbox's, which has none) keeps the same head and tail and spills
nothing: its marker only counts what was left out.
"""

from __future__ import annotations

__all__ = [
    "HEAD_BYTES",
    "SPILL_DIRECTORY",
    "TAIL_BYTES",
    "Projection",
    "ProjectionState",
]

import contextlib
import enum
import os
from typing import BinaryIO, Final

from harness.workspace import Workspace

# --8<-- [start:limits]
HEAD_BYTES: Final = 1500  # kept from the start of a long output
TAIL_BYTES: Final = 1500  # kept from its end; with the marker, well under 06's 4096 cap
SPILL_DIRECTORY: Final = ".harness/output"  # in the workspace, where read_file can page it
# --8<-- [end:limits]


class ProjectionState(enum.Enum):
    """Where a Projection is in its life: written to, then finished once."""

    OPEN = "open"  # write() and finish() allowed
    FINISHED = "finished"  # finish() returned the text; the spill file, if any, is closed


class Projection:
    """Receive an output in chunks; keep its head and tail, spill all of it once it is long.

    Use it as a context manager, so that the spill file is closed (and removed, if the output
    never finished) when the producer fails. With ``workspace`` None nothing is ever spilled.
    """

    # --8<-- [start:state]
    def __init__(
        self,
        workspace: Workspace | None,
        *,
        head_bytes: int = HEAD_BYTES,
        tail_bytes: int = TAIL_BYTES,
    ) -> None:
        for name, value in (("head_bytes", head_bytes), ("tail_bytes", tail_bytes)):
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        self.workspace = workspace
        self.head_bytes = head_bytes
        self.tail_bytes = tail_bytes
        self.state = ProjectionState.OPEN
        self.total_bytes = 0  # every byte written so far
        self.line_breaks = 0  # every b"\n" written so far
        self.cut = False  # True iff the output outgrew head_bytes + tail_bytes
        self.kept = bytearray()  # the whole output while it fits (not cut); then only its head
        # After the spill: the last tail_bytes + 1 bytes written. The extra byte, the one before
        # the tail, says whether the tail starts a line.
        self.tail = bytearray()
        # The spill file and its workspace path; None until cut, and always without a workspace.
        self.spill: tuple[BinaryIO, str] | None = None

    # --8<-- [end:state]

    def __enter__(self) -> Projection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.state is ProjectionState.OPEN:
            self._abandon()

    @property
    def spill_path(self) -> str | None:
        """The spill file's path in the workspace, or None while the output fits."""
        return None if self.spill is None else self.spill[1]

    # --8<-- [start:write]
    def write(self, chunk: bytes) -> None:
        """Take the next chunk of output. Raises RuntimeError once finished."""
        self._check_open("write")
        # BEGIN LAB 8.2
        self.total_bytes += len(chunk)
        self.line_breaks += chunk.count(b"\n")
        if not self.cut:
            self.kept += chunk
            if len(self.kept) <= self.head_bytes + self.tail_bytes:
                return  # it still fits whole
            if self.workspace is not None:
                self.spill = self._open_spill_file()
                self.spill[0].write(self.kept)
            self.cut = True
            self.tail = self.kept[self.head_bytes :]
            del self.kept[self.head_bytes :]
        else:
            if self.spill is not None:
                self.spill[0].write(chunk)
            self.tail += chunk
        del self.tail[: -(self.tail_bytes + 1)]  # memory stays bounded, whatever the size
        # END LAB 8.2

    # --8<-- [end:write]

    # --8<-- [start:finish]
    def finish(self) -> str:
        """Return the text the model reads; close the spill file. Raises RuntimeError twice."""
        self._check_open("finish")
        self.state = ProjectionState.FINISHED
        # BEGIN LAB 8.2
        if not self.cut:
            return self.kept.decode("utf-8", errors="replace")
        head = _cut_after_last_line_break(bytes(self.kept))
        tail = _from_first_line_start(bytes(self.tail))
        head_lines = head.count(b"\n")
        left_out = self.total_bytes - len(head) - len(tail)
        lines_left_out = self.line_breaks - head_lines - tail.count(b"\n")
        where = ""
        if self.spill is not None:
            self.spill[0].close()
            where = (
                f"; the whole output is in {self.spill[1]}: "
                f"read it with read_file from line {head_lines + 1}"
            )
        marker = f"[... {lines_left_out:,} lines ({left_out:,} bytes) left out{where}]\n"
        shown_head = head.decode("utf-8", errors="replace")
        if not shown_head.endswith("\n"):  # one long line: the marker still starts a line
            shown_head += "\n"
        return shown_head + marker + tail.decode("utf-8", errors="replace")
        # END LAB 8.2

    # --8<-- [end:finish]

    def _check_open(self, action: str) -> None:
        if self.state is not ProjectionState.OPEN:
            raise RuntimeError(f"cannot {action}: the projection is {self.state.value}")

    def _abandon(self) -> None:
        """Close and remove the spill file of an output that never finished."""
        self.state = ProjectionState.FINISHED
        if self.spill is not None:
            assert self.workspace is not None, "only a projection with a workspace spills"
            self.spill[0].close()
            directory, name = self.workspace.open_parent(self.spill[1])
            try:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=directory)
            finally:
                os.close(directory)

    # BEGIN LAB 8.2
    def _open_spill_file(self) -> tuple[BinaryIO, str]:
        """Create the next free ``output-N.txt`` in the spill directory; return it and its path."""
        assert self.workspace is not None, "only a projection with a workspace spills"
        directory = self.workspace.open_directory(SPILL_DIRECTORY, make_directories=True)
        try:
            number = 1
            while True:
                name = f"output-{number}.txt"
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
                try:
                    # O_EXCL: two projections at once never share a file, and an existing
                    # file (or a link a command planted there) is never written through.
                    fd = os.open(name, flags, 0o644, dir_fd=directory)
                except FileExistsError:
                    number += 1
                    continue
                return open(fd, "wb"), f"{SPILL_DIRECTORY}/{name}"
        finally:
            os.close(directory)

    # END LAB 8.2


# BEGIN LAB 8.2
def _cut_after_last_line_break(head: bytes) -> bytes:
    """Return the head up to its last line break, or all of it if it has none (one long line)."""
    end = head.rfind(b"\n")
    return head if end == -1 else head[: end + 1]


def _from_first_line_start(tail: bytes) -> bytes:
    """Return the tail from the first line that starts inside it (its first byte is the one
    before it); all of it if no line starts there (the end of one long line)."""
    before, tail = tail[:1], tail[1:]
    if before == b"\n":
        return tail
    start = tail.find(b"\n") + 1
    return tail if start in (0, len(tail)) else tail[start:]


# END LAB 8.2

"""Name what is wrong with a file or a path that no careful model would send, in words it can use.

Lab 8.7 lives here, apart from the walk and the tools, because these cases are not the
mechanism: the workspace and the tools call in only when something hostile or broken turns up.
"""

from __future__ import annotations

__all__ = ["describe_special_file", "describe_unusable_path", "discard_partial_write"]

import contextlib
import errno
import os
import stat


def describe_unusable_path(path: str, exc: Exception) -> str:
    """Say why the text of ``path`` cannot name a file, from the error that refused it.

    ``exc`` is the UnicodeEncodeError of a lone surrogate (JSON can carry one, UTF-8 cannot),
    the ValueError of a NUL byte, or the OSError the system raised for the path.
    """
    # BEGIN LAB 8.7
    if type(exc) is UnicodeEncodeError:
        return f"{path!r} is not valid UTF-8 text"
    if type(exc) is ValueError:
        return f"{path!r} contains a NUL byte"
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        # The path itself may be thousands of characters: say what is wrong, not all of it.
        return "a name in the path is longer than the file system allows (255 bytes)"
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{path!r} cannot be used: {os.strerror(exc.errno)}"
    return f"{path!r} cannot be used"
    # END LAB 8.7


def describe_special_file(mode: int) -> str:
    """Name the kind of a file that is neither a regular file nor a directory: ``a FIFO``."""
    # BEGIN LAB 8.7
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a special file"
    # END LAB 8.7


def discard_partial_write(directory: int, name: bytes) -> None:
    """Remove the temporary file of a write that did not reach its rename; idempotent."""
    # BEGIN LAB 8.7
    # It may never have been made, or been removed already: either way it is gone.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=directory)
    # END LAB 8.7

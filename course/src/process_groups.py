"""Find, signal and wait for the living members of a process group; kill what ignores SIGTERM.

A command started in a new session leads a process group, and everything it starts joins it
(``harness.commands``). This module holds what the harness knows about such a group from the
outside: which of its members are still alive, how to signal them all, how to wait until none
is left, and, for Lab 8.8, how to kill the ones that would not stop when asked.
"""

from __future__ import annotations

__all__ = ["KILL_WAIT", "POLL", "kill_group", "live_members", "signal_group", "wait_until_gone"]

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Final

POLL: Final = 0.01  # seconds between two looks at a process group (see wait_until_gone)
KILL_WAIT: Final = 5.0  # seconds to wait for SIGKILL to take effect before giving up


# --8<-- [start:members]
def live_members(pgid: int) -> tuple[int, ...]:
    """Return the sorted pids of the group's processes that are still alive (not zombies).

    Linux only: it reads /proc. Returns () when no process of the group is left.
    """
    try:
        os.killpg(pgid, 0)  # signal 0 sends nothing: it only asks whether the group exists
    except ProcessLookupError:
        return ()
    # killpg counts zombies too. A dead process stays in the table until its parent reaps it,
    # and an orphan's new parent, PID 1, may never do so (some containers run no init), so ask
    # /proc which members are still alive.
    alive = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path("/proc", name, "stat").read_text()
        except OSError:  # it ended while we looked
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces or ")", so split after the last.
        state, _parent, group = stat[stat.rindex(")") + 2 :].split(" ", 3)[:3]
        if int(group) == pgid and state not in ("Z", "X"):
            alive.append(int(name))
    return tuple(sorted(alive))


def signal_group(pgid: int, signum: signal.Signals) -> None:
    """Send ``signum`` to every process of the group; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)


async def wait_until_gone(pgid: int, seconds: float) -> bool:
    """Return True as soon as no live process of the group is left, False after ``seconds``."""
    # The kernel sends no event when the last member of a group dies (we are not the parent of
    # a grandchild, so we cannot wait for it): look again every POLL seconds, up to a deadline.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while live_members(pgid):
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(POLL)
    return True


# --8<-- [end:members]


# --8<-- [start:kill]
async def kill_group(pgid: int) -> None:
    """SIGKILL every process of the group, and return once none is left alive.

    For what ignored SIGTERM. Waits at most KILL_WAIT seconds: a process stuck in the kernel
    dies when it leaves it. Idempotent: a group that is already gone is not an error.
    """
    # BEGIN LAB 8.8
    # SIGKILL cannot be caught or ignored, but the kernel delivers it when the process next
    # runs; one stuck in an uninterruptible disk wait dies when the wait ends.
    signal_group(pgid, signal.SIGKILL)
    await wait_until_gone(pgid, KILL_WAIT)
    # END LAB 8.8


# --8<-- [end:kill]

"""What the learner's nox sessions say: lab hints, the practice folder's checkpoint selection,
and their usage texts.

The course's noxfile (for hints) and every practice folder's noxfile use this module; the
generator copies it unchanged into each practice folder (``practice/commands.py``). It needs
only the standard library and ``checkpoints.catalog``, because nox imports it before any
environment exists.
"""

from __future__ import annotations

__all__ = [
    "CommandError",
    "checkpoint_named",
    "checkpoint_usage",
    "checkpoints_through",
    "find_lab",
    "hint_text",
]

import re
from collections.abc import Sequence

from checkpoints.catalog import Checkpoint, Lab, find_checkpoint

_LAB_ARGUMENT = re.compile(r"^0*(?P<checkpoint>\d{1,2})\.(?P<step>\d{1,2})$")


class CommandError(ValueError):
    """Raised when a learner command gets arguments it cannot use.

    ``problem`` is one line, such as "no lab 9.9", that ends nox's abort line; ``usage`` is the
    command's usage with the list to choose from, printed above it. ``str()`` gives both.
    """

    def __init__(self, problem: str, usage: str) -> None:
        super().__init__(f"{problem}\n\n{usage}")
        self.problem = problem
        self.usage = usage


def _got(args: Sequence[str]) -> str:
    return f"; got {' '.join(args)}" if args else ""


def find_lab(catalog: Sequence[Checkpoint], lab_id: str) -> tuple[Checkpoint, Lab] | None:
    """Return the checkpoint and lab named ``lab_id`` ("6.2" or "06.2"), or None."""
    match = _LAB_ARGUMENT.match(lab_id.strip())
    if match is None:
        return None
    wanted = f"{int(match['checkpoint'])}.{int(match['step'])}"
    for checkpoint in catalog:
        for lab in checkpoint.labs:
            if lab.id == wanted:
                return checkpoint, lab
    return None


def hint_text(catalog: Sequence[Checkpoint], args: Sequence[str]) -> str:
    """Return the hint of the one lab named in ``args``; raise CommandError with the labs."""
    if len(args) != 1:
        raise CommandError(f"expected one lab id, such as 6.2{_got(args)}", _hint_usage(catalog))
    found = find_lab(catalog, args[0])
    if found is None:
        raise CommandError(f"no lab {args[0]}", _hint_usage(catalog))
    checkpoint, lab = found
    return "\n".join(
        [
            f"Lab {lab.id} ({checkpoint.number} {checkpoint.title}): {lab.summary}",
            "",
            f"Hint: {lab.hint}",
            "",
            f"The lesson page: docs/{checkpoint.page} (section 'Build it').",
        ]
    )


def checkpoint_named(
    catalog: Sequence[Checkpoint], args: Sequence[str], usage: str
) -> Checkpoint | None:
    """Return the one checkpoint ``args`` names, or None for ``all``.

    Raises CommandError with ``usage`` when ``args`` name no checkpoint.
    """
    if list(args) == ["all"] and catalog:
        return None
    if len(args) != 1:
        raise CommandError(f"expected one checkpoint number, such as 06, or all{_got(args)}", usage)
    found = find_checkpoint(catalog, args[0])
    if found is None:
        raise CommandError(f"no checkpoint {args[0]}", usage)
    return found


def checkpoints_through(
    catalog: Sequence[Checkpoint], args: Sequence[str]
) -> tuple[Checkpoint, ...]:
    """Return checkpoints 00 up to the one named in ``args`` (a number, or ``all``)."""
    found = checkpoint_named(catalog, args, checkpoint_usage(catalog, practice_folder=True))
    if found is None:
        return tuple(catalog)
    return tuple(catalog[: list(catalog).index(found) + 1])


def checkpoint_usage(catalog: Sequence[Checkpoint], *, practice_folder: bool) -> str:
    """Return the usage of ``nox -s checkpoint``, in the course or in a practice folder."""
    if practice_folder:
        runs = "runs the focused tests of checkpoints 00 up to NN against your code in course/src"
    else:
        runs = "runs checkpoint NN's focused tests (all: every checkpoint, in order)"
    return "\n".join(
        [
            "usage: nox -s checkpoint -- NN [pytest options]    (or: -- all)",
            "",
            runs,
            "pytest options may follow: nox -s checkpoint -- 06 --lab 6.2 -x",
            "",
            "checkpoints:",
            *(f"  {c.number}  {c.title}" for c in catalog),
        ]
    )


def _hint_usage(catalog: Sequence[Checkpoint]) -> str:
    lines = ["usage: nox -s hint -- N.M", "", "labs:"]
    for checkpoint in catalog:
        lines.extend(f"  {lab.id:<5} {lab.summary}" for lab in checkpoint.labs)
    return "\n".join(lines)

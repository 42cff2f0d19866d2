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
    "checkpoints_through",
    "find_lab",
    "hint_text",
    "run_usage",
]

import re
from collections.abc import Sequence

from checkpoints.catalog import Checkpoint, Lab, find_checkpoint

_LAB_ARGUMENT = re.compile(r"^0*(?P<checkpoint>\d{1,2})\.(?P<step>\d{1,2})$")


class CommandError(ValueError):
    """Raised when a learner command gets arguments it cannot use; the message is the usage."""


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
    """Return the hint of the one lab named in ``args``; raise CommandError with the usage."""
    found = find_lab(catalog, args[0]) if len(args) == 1 else None
    if found is None:
        raise CommandError(_hint_usage(catalog, args))
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


def checkpoints_through(
    catalog: Sequence[Checkpoint], args: Sequence[str]
) -> tuple[Checkpoint, ...]:
    """Return checkpoints 00 up to the one named in ``args`` (a number, or ``all``)."""
    if list(args) == ["all"] and catalog:
        return tuple(catalog)
    found = find_checkpoint(catalog, args[0]) if len(args) == 1 else None
    if found is None:
        raise CommandError(run_usage(catalog))
    return tuple(catalog[: list(catalog).index(found) + 1])


def run_usage(catalog: Sequence[Checkpoint]) -> str:
    """Return the usage of ``nox -s checkpoint`` in a practice folder."""
    return "\n".join(
        [
            "usage: nox -s checkpoint -- NN [pytest arguments]    (or: -- all)",
            "",
            "runs the focused tests of checkpoints 00 up to NN against your code in course/src",
            "",
            "checkpoints in this folder:",
            *(f"  {c.number}  {c.title}" for c in catalog),
        ]
    )


def _hint_usage(catalog: Sequence[Checkpoint], args: Sequence[str]) -> str:
    given = " ".join(args) if args else "nothing"
    lines = [
        f"expected one lab id, like 6.2; got {given}",
        "",
        "usage: nox -s hint -- N.M",
        "",
        "labs:",
    ]
    for checkpoint in catalog:
        lines.extend(f"  {lab.id:<5} {lab.summary}" for lab in checkpoint.labs)
    return "\n".join(lines)

"""Run the generator from the command line: ``nox -s practice -- 06 DIR`` calls ``main``."""

from __future__ import annotations

__all__ = ["main"]

import sys
from collections.abc import Sequence
from pathlib import Path

from practice.regions import LabMarkerError
from practice.scaffold import CourseTree, PracticeError, make_practice_folder, practice_usage

COURSE_ROOT = Path(__file__).resolve().parent.parent


def main(args: Sequence[str], *, invoked_from: Path, course_root: Path = COURSE_ROOT) -> int:
    """Make the practice folder ``args`` name; return the exit status, 0 on success.

    A relative DIR is taken from ``invoked_from``, the folder the learner typed the command in.
    Messages go to stderr; the success message to stdout.
    """
    try:
        catalog = CourseTree(root=course_root).catalog()
        if len(args) != 2:
            got = f"; got {' '.join(args)}" if args else ""
            raise PracticeError(
                f"expected a checkpoint number and a folder, such as 06 /tmp/p06{got}\n\n"
                + practice_usage(catalog)
            )
        number, folder = args
        made = make_practice_folder(course_root, number, invoked_from / Path(folder).expanduser())
    except PracticeError as exc:
        print(f"practice: {exc}", file=sys.stderr)
        return 2
    except LabMarkerError as exc:
        print(f"practice: a lab marker of the course is wrong: {exc}", file=sys.stderr)
        return 1
    checkpoint = number.zfill(2)
    print(
        f"Made {made} for checkpoint {checkpoint}. Next:\n\n"
        f"    cd {made}\n    nox -s checkpoint -- {checkpoint}\n\n"
        "LEARNING.md in that folder says what to do."
    )
    return 0

"""Read the checkpoint manifests: the one list of checkpoints that every tool uses.

Each folder ``checkpoints/NN_slug/`` holds a ``checkpoint.toml`` and one focused test file,
``test_NN_slug.py``. The noxfile, the docs checks, the practice generator and the meta-tests
all read the manifests through this module, so a checkpoint exists exactly when its folder
does. Only the standard library is used: nox imports this file before any environment exists.
"""

from __future__ import annotations

import difflib
import itertools
import re
import sys
import tomllib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "Checkpoint",
    "Lab",
    "ManifestError",
    "checkpoint_map",
    "file_problems",
    "find_checkpoint",
    "load_catalog",
    "read_page",
]

CHECKPOINTS_DIR = Path(__file__).resolve().parent
MANIFEST_NAME = "checkpoint.toml"

_FOLDER = re.compile(r"^(?P<number>\d{2})_(?P<slug>[a-z][a-z0-9_]*)$")
_LAB_ID = re.compile(r"^(?P<checkpoint>[1-9]\d?|0)\.(?P<step>[1-9]\d?)$")
_MANIFEST_KEYS = frozenset({"number", "title", "slug", "mode", "prerequisite", "modules", "labs"})
_LAB_KEYS = frozenset({"id", "summary", "hint"})


class ManifestError(ValueError):
    """Raised when a checkpoint folder or manifest is malformed; the message names the file."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Lab:
    """One numbered exercise of a checkpoint, such as ``6.2``."""

    id: str
    summary: str
    hint: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    """One checkpoint as its manifest describes it."""

    number: str  # two digits, "06"; also the sort key
    title: str
    slug: str  # "tool_contract"; the folder is f"{number}_{slug}"
    mode: Literal["observe", "build"]  # observe: nothing to implement, the scaffold copies it
    prerequisite: str | None  # the number of the checkpoint this one builds on
    modules: tuple[str, ...]  # file names under course/src, e.g. ("tool.py",)
    labs: tuple[Lab, ...]
    folder: Path

    @property
    def name(self) -> str:
        """The folder name, ``06_tool_contract``; tests and pages are named after it."""
        return f"{self.number}_{self.slug}"

    @property
    def test_file(self) -> Path:
        """The focused test file of this checkpoint."""
        return self.folder / f"test_{self.name}.py"

    @property
    def page(self) -> str:
        """The lesson page, relative to ``docs/``."""
        return f"checkpoints/{self.name}.md"


def load_catalog(root: Path = CHECKPOINTS_DIR) -> tuple[Checkpoint, ...]:
    """Return every checkpoint under ``root`` in order; raise ManifestError on a bad one."""
    checkpoints = tuple(
        _read_checkpoint(folder)
        for folder in sorted(root.iterdir())
        if folder.is_dir() and (folder / MANIFEST_NAME).exists()
    )
    _check_sequence(checkpoints)
    return checkpoints


def find_checkpoint(catalog: Sequence[Checkpoint], number: str) -> Checkpoint | None:
    """Return the checkpoint numbered ``number`` ("6" or "06"), or None if there is none."""
    if not number.isdigit():
        return None
    wanted = number.zfill(2)
    return next((c for c in catalog if c.number == wanted), None)


def _read_checkpoint(folder: Path) -> Checkpoint:
    manifest = folder / MANIFEST_NAME
    match = _FOLDER.match(folder.name)
    if match is None:
        raise ManifestError(
            f"{folder}: a checkpoint folder is named NN_slug, like 06_tool_contract"
        )
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{manifest}: not valid TOML: {exc}") from exc

    unknown = set(data) - _MANIFEST_KEYS
    missing = _MANIFEST_KEYS - {"prerequisite"} - set(data)
    if unknown or missing:
        raise ManifestError(
            f"{manifest}: unknown keys {sorted(unknown)}, missing keys {sorted(missing)}"
        )
    number = _text(manifest, data, "number")
    slug = _text(manifest, data, "slug")
    if (number, slug) != (match["number"], match["slug"]):
        raise ManifestError(
            f"{manifest}: number {number!r} and slug {slug!r} must match the folder name"
        )
    mode = data["mode"]
    if mode not in ("observe", "build"):
        raise ManifestError(f"{manifest}: mode must be 'observe' or 'build', got {mode!r}")
    prerequisite = data.get("prerequisite")
    if prerequisite is not None and not isinstance(prerequisite, str):
        raise ManifestError(f"{manifest}: prerequisite must be a checkpoint number string")
    modules = data["modules"]
    if (
        not isinstance(modules, list)
        or not modules
        or not all(isinstance(m, str) and m.endswith(".py") and "/" not in m for m in modules)
    ):
        raise ManifestError(
            f"{manifest}: modules must be a non-empty list of file names like 'tool.py'"
        )
    labs = tuple(_read_lab(manifest, number, entry) for entry in data["labs"])
    if mode == "build" and not labs:
        raise ManifestError(f"{manifest}: a build checkpoint needs at least one [[labs]] entry")
    if mode == "observe" and labs:
        raise ManifestError(f"{manifest}: an observe checkpoint has no labs")
    return Checkpoint(
        number=number,
        title=_text(manifest, data, "title"),
        slug=slug,
        mode=mode,
        prerequisite=prerequisite,
        modules=tuple(modules),
        labs=labs,
        folder=folder,
    )


def _read_lab(manifest: Path, number: str, entry: object) -> Lab:
    if not isinstance(entry, dict) or set(entry) != _LAB_KEYS:
        raise ManifestError(f"{manifest}: each [[labs]] entry has exactly id, summary and hint")
    lab = Lab(
        id=_text(manifest, entry, "id"),
        summary=_text(manifest, entry, "summary"),
        hint=_text(manifest, entry, "hint"),
    )
    match = _LAB_ID.match(lab.id)
    if match is None or int(match["checkpoint"]) != int(number):
        raise ManifestError(f"{manifest}: lab id {lab.id!r} must look like '{int(number)}.1'")
    return lab


def _text(manifest: Path, data: dict[str, object], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ManifestError(f"{manifest}: {key!r} must be a non-empty string")
    return value


def _check_sequence(checkpoints: tuple[Checkpoint, ...]) -> None:
    numbers = [c.number for c in checkpoints]
    if numbers != [f"{i:02d}" for i in range(len(numbers))]:
        raise ManifestError(f"checkpoints must be numbered 00, 01, 02… without gaps: {numbers}")
    for previous, current in itertools.pairwise(checkpoints):
        if current.prerequisite != previous.number:
            raise ManifestError(
                f"{current.folder / MANIFEST_NAME}: prerequisite must be {previous.number!r}"
            )
    owners = Counter(m for c in checkpoints for m in c.modules)
    for module in (m for m, count in owners.items() if count > 1):
        listed_by = [c.number for c in checkpoints if module in c.modules]
        raise ManifestError(
            f"a module belongs to one checkpoint only: {module} is listed by checkpoints "
            f"{' and '.join(listed_by)}; give the later one a module of its own"
        )


# The files a checkpoint names must exist under the names the catalog derives. Checked apart
# from load_catalog, which reads manifests alone (a practice folder or a test may have no pages).

_PAGE_HELP = (
    "write it with the ## sections of the lesson skeleton (CONTRIBUTING.md), or start every "
    'file of a new checkpoint with `nox -s new_checkpoint -- NN slug "Title"`'
)


def read_page(checkpoint: Checkpoint, docs: Path) -> str:
    """Return the text of a checkpoint's lesson page; raise ManifestError if it is missing."""
    page = docs / checkpoint.page
    if not page.is_file():
        raise ManifestError(
            f"checkpoint {checkpoint.number} has no lesson page docs/{checkpoint.page}: "
            + _PAGE_HELP
        )
    return page.read_text(encoding="utf-8")


def file_problems(checkpoints: Sequence[Checkpoint], repo: Path) -> list[str]:
    """Return each file a checkpoint names that is missing, with the name the catalog expected."""
    problems: list[str] = []
    src = repo / "course" / "src"
    present = sorted(p.name for p in src.glob("*.py")) if src.is_dir() else []
    for c in checkpoints:
        found = sorted(p.name for p in c.folder.glob("test_*.py"))
        if found != [c.test_file.name]:
            problems.append(
                f"checkpoints/{c.name}: the focused test file must be named "
                f"{c.test_file.name!r} (found {found}); one file per checkpoint"
            )
        for module in c.modules:
            if module not in present:
                close = difflib.get_close_matches(module, present, n=1)
                guess = f"; did you mean {close[0]!r}?" if close else ""
                problems.append(
                    f"checkpoints/{c.name}/{MANIFEST_NAME} lists module {module!r}, but "
                    f"course/src/{module} does not exist{guess}"
                )
        if not (repo / "docs" / c.page).is_file():
            problems.append(
                f"checkpoint {c.number} has no lesson page docs/{c.page}: " + _PAGE_HELP
            )
    return problems


def checkpoint_map(checkpoints: tuple[Checkpoint, ...]) -> str:
    """Return README's checkpoint map, a Markdown table, as the manifests describe it."""
    rows = [
        "| # | checkpoint | modules (`course/src/`) | labs | focused test |",
        "| --- | --- | --- | --- | --- |",
    ]
    for c in checkpoints:
        modules = ", ".join(f"`{m}`" for m in c.modules)
        labs = ", ".join(lab.id for lab in c.labs) or "observe"
        rows.append(
            f"| {c.number} | [{c.title}](docs/{c.page}) | {modules} | {labs} "
            f"| `nox -s checkpoint -- {c.number}` |"
        )
    return "\n".join(rows)


def main(argv: Sequence[str]) -> int:
    """Print README's checkpoint map; ``--write`` rewrites every derived list, ``--check`` lists
    the stale ones (both in the course repository only)."""
    if not argv:
        print(checkpoint_map(load_catalog()))
        return 0
    if list(argv) not in (["--write"], ["--check"]):
        print("usage: python checkpoints/catalog.py [--write | --check]", file=sys.stderr)
        return 2
    root = CHECKPOINTS_DIR.parent
    if str(root) not in sys.path:  # run as a script, the repository root is not importable yet
        sys.path.insert(0, str(root))
    try:
        from authoring.derived import WRITE_COMMAND, stale_files, write_derived
    except ModuleNotFoundError:
        print("--write and --check work in the course repository only", file=sys.stderr)
        return 2
    problems = file_problems(load_catalog(), root)
    for problem in problems:
        print(problem, file=sys.stderr)
    if argv[0] == "--write":
        for path in write_derived(root):
            print(f"wrote {path}")
        return 1 if problems else 0
    stale = stale_files(root)
    for path in stale:
        print(f"{path} is out of step with the manifests: run `{WRITE_COMMAND}`", file=sys.stderr)
    return 1 if stale or problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

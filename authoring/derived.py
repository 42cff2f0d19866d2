"""Write what the manifests already say into the files that repeat it; never keep it by hand.

Four places repeat the list of checkpoints, and each is regenerated from the manifests
(``checkpoints/NN_slug/checkpoint.toml``) and the roadmap of the checkpoints still to come
(``checkpoints/roadmap.toml``) by one command, ``python checkpoints/catalog.py --write``
(``nox -s catalog``):

1. README's checkpoint map, between ``<!-- checkpoint-map:start -->`` and ``…:end -->``;
2. README's sentence on the checkpoints not written yet, between ``<!-- roadmap:start -->`` and
   ``<!-- roadmap:end -->``;
3. the ``Checkpoints:`` part of the ``mkdocs.yml`` nav (one ``NN Title: page`` line each; the
   Vietnamese titles under ``nav_translations`` are written by hand, and the docs check names
   a missing one);
4. forward references on the lesson pages: ``Checkpoint 07 (not yet published)`` (Vietnamese
   ``(chưa phát hành)``) becomes a link to checkpoint 07's page once its manifest exists.

``stale_files`` says which files differ from what the command would write; the docs check and
``course/tests/test_catalog.py`` fail on them with the command to run.
"""

from __future__ import annotations

import os
import re
import tempfile
import textwrap
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from checkpoints.catalog import Checkpoint, ManifestError, checkpoint_map, load_catalog
from docs_tools.translations import stamp, up_to_date_translations

__all__ = [
    "WRITE_COMMAND",
    "DerivedFileError",
    "PlannedCheckpoint",
    "derived_texts",
    "forward_references",
    "load_roadmap",
    "nav_lines",
    "roadmap_sentence",
    "stale_files",
    "write_atomically",
    "write_derived",
]

ROOT = Path(__file__).resolve().parents[1]
WRITE_COMMAND = "python checkpoints/catalog.py --write"
ROADMAP = Path("checkpoints") / "roadmap.toml"
_WIDTH = 100
_ROADMAP_KEYS = frozenset({"number", "slug", "title", "title_vi", "adds", "adds_vi"})
# "Checkpoint 07 (not yet published)" and its Vietnamese twin; group 1 keeps the word's case.
_FORWARD = re.compile(r"(?<!\[)\b([Cc]heckpoint) (\d{2}) \((not yet published|chưa phát hành)\)")
_NAV_SECTION = re.compile(r"^(?P<indent>[ ]*)- Checkpoints:[ \t]*$")


class DerivedFileError(ValueError):
    """Raised when a file lost the markers that say where its derived part goes."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedCheckpoint:
    """A checkpoint of the roadmap: named and described, not written yet."""

    number: str
    slug: str
    title: str
    title_vi: str
    adds: str  # what it adds to the trace, one line, as checkpoint 00's table says
    adds_vi: str


def load_roadmap(root: Path = ROOT) -> tuple[PlannedCheckpoint, ...]:
    """Return the roadmap's checkpoints in order; raise ManifestError on a malformed entry."""
    path = root / ROADMAP
    if not path.is_file():
        return ()
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8")).get("checkpoint", [])
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{ROADMAP}: not valid TOML: {exc}") from exc
    planned = []
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != _ROADMAP_KEYS:
            raise ManifestError(
                f"{ROADMAP}: each [[checkpoint]] has exactly {sorted(_ROADMAP_KEYS)}"
            )
        if not all(isinstance(value, str) and value.strip() for value in entry.values()):
            raise ManifestError(f"{ROADMAP}: every value of {entry} must be a non-empty string")
        planned.append(PlannedCheckpoint(**entry))
    return tuple(planned)


def roadmap_sentence(catalog: Sequence[Checkpoint], roadmap: Sequence[PlannedCheckpoint]) -> str:
    """Return README's sentence on the checkpoints still to come, wrapped to 100 columns."""
    written = {c.number for c in catalog}
    left = [p for p in roadmap if p.number not in written]
    if not left:
        return "Every checkpoint of the roadmap (`checkpoints/roadmap.toml`) is written."
    titles = ", ".join(p.title[0].lower() + p.title[1:] for p in left)
    if len(left) == 1:
        sentence = (
            f"Checkpoint {left[0].number} ({titles}) follows the same shape and is not written yet."
        )
    else:
        sentence = (
            f"Checkpoints {left[0].number}\N{EN DASH}{left[-1].number} ({titles}) follow the "
            "same shape and are not written yet."
        )
    return textwrap.fill(sentence, width=_WIDTH, break_on_hyphens=False)


def nav_lines(catalog: Sequence[Checkpoint], indent: str) -> list[str]:
    """Return the nav entries of the checkpoints, under a ``- Checkpoints:`` at ``indent``."""
    return [f"{indent}    - {c.number} {c.title}: {c.page}" for c in catalog]


def forward_references(text: str, page: Path, catalog: Sequence[Checkpoint], docs: Path) -> str:
    """Turn each "Checkpoint NN (not yet published)" of a written checkpoint into a link."""
    written = {c.number: c for c in catalog}

    def link(match: re.Match[str]) -> str:
        checkpoint = written.get(match[2])
        if checkpoint is None:
            return match[0]
        target = Path(os.path.relpath(docs / checkpoint.page, page.parent)).as_posix()
        return f"[{match[1]} {match[2]}]({target})"

    return _FORWARD.sub(link, text)


def derived_texts(root: Path = ROOT) -> dict[Path, tuple[str, str]]:
    """Return, for each file with a derived part, its text now and the text it should have."""
    catalog = load_catalog(root / "checkpoints")
    roadmap = load_roadmap(root)
    results: dict[Path, tuple[str, str]] = {}

    def derive(path: Path, change: Callable[[str], str]) -> None:
        if path.is_file():
            now = path.read_text(encoding="utf-8")
            results[path] = (now, change(now))

    def readme(text: str) -> str:
        text = _replace_region(text, "checkpoint-map", checkpoint_map(catalog), "README.md")
        return _replace_region(text, "roadmap", roadmap_sentence(catalog, roadmap), "README.md")

    derive(root / "README.md", readme)
    derive(root / "mkdocs.yml", lambda text: _replace_nav(text, catalog))
    docs = root / "docs"
    for page in sorted(docs.rglob("*.md")):
        derive(page, _linker(page, catalog, docs))
    return results


def _linker(page: Path, catalog: Sequence[Checkpoint], docs: Path) -> Callable[[str], str]:
    return lambda text: forward_references(text, page, catalog, docs)


def stale_files(root: Path = ROOT) -> list[str]:
    """Return the files (relative to ``root``) whose derived part is out of step."""
    return [
        path.relative_to(root).as_posix()
        for path, (now, wanted) in derived_texts(root).items()
        if now != wanted
    ]


def write_derived(root: Path = ROOT) -> list[str]:
    """Rewrite every stale file, each atomically; return the ones written.

    The derived lists are written in both languages alike, so a translation that was up to date
    before is stamped again after (``docs_tools/translations.py``). With nothing stale, nothing
    is written, not even a stamp.
    """
    stale = {path: wanted for path, (now, wanted) in derived_texts(root).items() if now != wanted}
    current = up_to_date_translations(root) if stale else []
    for path, wanted in stale.items():
        write_atomically(path, wanted)
    for translation in current:
        stamp(translation)
    return [path.relative_to(root).as_posix() for path in stale]


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it into place."""
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o777)
        else:
            os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _replace_region(text: str, name: str, body: str, where: str) -> str:
    start, end = f"<!-- {name}:start -->\n", f"\n<!-- {name}:end -->"
    before, found_start, rest = text.partition(start)
    old, found_end, after = rest.partition(end)
    if not found_start or not found_end:
        raise DerivedFileError(
            f"{where}: the markers {start.strip()} and {end.strip()} are missing; put them back, "
            f"each alone on its line, around the part that `{WRITE_COMMAND}` writes"
        )
    del old
    return f"{before}{start}{body}{end}{after}"


def _replace_nav(text: str, catalog: Sequence[Checkpoint]) -> str:
    lines = text.splitlines(keepends=True)
    in_nav = False
    for index, line in enumerate(lines):
        if line and not line[0].isspace() and not line.startswith("#"):
            in_nav = line.startswith("nav:")
        section = _NAV_SECTION.match(line.rstrip("\n")) if in_nav else None
        if section is None:
            continue
        depth = len(section["indent"])
        end = index + 1
        while end < len(lines) and _deeper(lines[end], depth):
            end += 1
        entries = [f"{entry}\n" for entry in nav_lines(catalog, section["indent"])]
        return "".join([*lines[: index + 1], *entries, *lines[end:]])
    raise DerivedFileError(
        "mkdocs.yml: the nav has no '- Checkpoints:' section; add one (an empty line list under "
        f"it is enough) and run `{WRITE_COMMAND}`"
    )


def _deeper(line: str, depth: int) -> bool:
    """Return whether ``line`` belongs under a nav entry indented by ``depth`` spaces."""
    stripped = line.strip()
    if not stripped:
        return False
    return len(line) - len(line.lstrip(" ")) > depth

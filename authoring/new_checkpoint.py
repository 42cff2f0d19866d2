"""Start a checkpoint: ``nox -s new_checkpoint -- 07 agent_loop "Agent loop"``.

It writes, from the templates beside this file, everything a checkpoint is made of, so the
instructor starts from green and fills in:

- ``checkpoints/NN_slug/checkpoint.toml``, a build checkpoint with one placeholder lab ``N.1``;
- ``course/src/<module>.py`` (the slug, or ``--module NAME``) with that lab's region;
- ``checkpoints/NN_slug/test_NN_slug.py``, one test tagged with the lab, which passes against
  the reference and fails on the lab's stub in a practice folder;
- ``docs/checkpoints/NN_slug.md`` with every section of the lesson skeleton and a "Draft" box,
  and ``NN_slug.vi.md``, a Vietnamese placeholder that says it is not translated yet;

and it adds the checkpoint's row to each home page's table and its Vietnamese nav title (from
``checkpoints/roadmap.toml`` when the roadmap names it), then regenerates the derived lists
(``authoring/derived.py``: README's map, the nav, forward links on earlier pages).

It refuses a number that is not the next one, a slug, module or file that exists, and a
malformed number, slug or title, before writing anything. Every file is written to a temporary
file and renamed into place; if anything fails half way, the files it made are removed and the
ones it changed are put back.
"""

from __future__ import annotations

import json
import keyword
import re
import string
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from authoring.derived import (
    DerivedFileError,
    PlannedCheckpoint,
    load_roadmap,
    write_atomically,
    write_derived,
)
from checkpoints.catalog import Checkpoint, ManifestError, load_catalog
from docs_tools.promises import load_promises
from docs_tools.translations import stamp, up_to_date_translations

__all__ = ["NewCheckpointError", "Plan", "create_checkpoint", "main", "plan_checkpoint"]

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = Path(__file__).resolve().parent / "templates"
USAGE = 'usage: nox -s new_checkpoint -- NN slug ["Title"] [--module NAME]'
_NUMBER = re.compile(r"^\d{2}$")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
# A title goes into TOML, YAML (the nav), Markdown tables and headings: letters, digits,
# spaces and a little punctuation, nothing any of them would read as syntax.
_TITLE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ,.'()/&+-]{0,59}$")


class NewCheckpointError(ValueError):
    """Raised when the checkpoint cannot be started; the message says why and what to do."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """Everything the command will write, worked out before anything is written."""

    created: dict[Path, str]  # new files and their text
    changed: dict[Path, str]  # existing files and their new text (before the derived lists)
    notes: tuple[str, ...]  # what the instructor should know, printed at the end


def plan_checkpoint(
    root: Path, number: str, slug: str, title: str | None, module: str | None = None
) -> Plan:
    """Check the arguments against the course at ``root`` and return what to write."""
    try:
        catalog = load_catalog(root / "checkpoints")
    except ManifestError as exc:
        raise NewCheckpointError(f"fix the existing catalog first: {exc}") from exc
    _check_number(number, catalog)
    planned = next((p for p in load_roadmap(root) if p.number == number), None)
    title = _check_title(title, planned)
    module = module or slug
    _check_names(root, catalog, slug, module)
    previous = catalog[-1]
    name = f"{number}_{slug}"
    following = next((p for p in load_roadmap(root) if int(p.number) == int(number) + 1), None)
    notes: list[str] = []
    title_vi = planned.title_vi if planned is not None and planned.title == title else title
    if title_vi == title:
        notes.append(
            f"mkdocs.yml: the Vietnamese nav title of {number} is the English one for now; "
            "translate it under nav_translations"
        )
    values = {
        "number": number,
        "slug": slug,
        "module": module,
        "lab": f"{int(number)}.1",
        "title_plain": title,
        "title_toml": json.dumps(title, ensure_ascii=False),
        "title_vi": title_vi,
        "prerequisite": previous.number,
        "sections_vi": _untranslated_sections(),
        "prerequisite_title": previous.title,
        "prerequisite_page": f"{previous.name}.md",
        "next_en": _next_line(following, vietnamese=False),
        "next_vi": _next_line(following, vietnamese=True),
    }
    created = {
        root / "checkpoints" / name / "checkpoint.toml": _render("checkpoint.toml.tmpl", values),
        root / "checkpoints" / name / f"test_{name}.py": _render("test.py.tmpl", values),
        root / "course" / "src" / f"{module}.py": _render("module.py.tmpl", values),
        root / "docs" / "checkpoints" / f"{name}.md": _render("page.md.tmpl", values),
        root / "docs" / "checkpoints" / f"{name}.vi.md": _render("page.vi.md.tmpl", values),
    }
    adds = planned.adds if planned is not None else "to be written"
    adds_vi = planned.adds_vi if planned is not None else "chưa viết"
    docs = root / "docs"
    page = f"checkpoints/{name}.md"
    changed = {
        docs / "index.md": _home_row(docs / "index.md", previous, page, title, adds),
        docs / "index.vi.md": _home_row(docs / "index.vi.md", previous, page, title_vi, adds_vi),
        root / "mkdocs.yml": _nav_translation(
            root / "mkdocs.yml", previous, number, title, title_vi
        ),
    }
    promised = [p for p in load_promises(root) if p.checkpoint == number and not p.reviewed]
    if promised:
        notes.append(
            f"earlier pages promise {len(promised)} things of checkpoint {number} "
            "(checkpoints/promises.toml); `nox -s docs` lists them while the page is a draft"
        )
    return Plan(created=created, changed=changed, notes=tuple(notes))


def create_checkpoint(
    root: Path, number: str, slug: str, title: str | None, module: str | None = None
) -> tuple[list[str], tuple[str, ...]]:
    """Write a new checkpoint into ``root``; return the files written and the notes."""
    plan = plan_checkpoint(root, number, slug, title, module)
    folder = next(iter(plan.created)).parent
    for path in [folder, *plan.created]:
        if path.exists():  # checked just before writing: nothing is ever overwritten
            raise NewCheckpointError(
                f"{path.relative_to(root).as_posix()} exists already; remove it or choose "
                "another slug (nothing was written)"
            )
    # The derived lists may touch README, the nav and any page: keep each one to put it back.
    kept = {
        path: path.read_text(encoding="utf-8")
        for path in [root / "README.md", root / "mkdocs.yml", *(root / "docs").rglob("*.md")]
        if path.is_file()
    }
    # The home pages get their row in both languages: a translation up to date now stays so.
    current = up_to_date_translations(root)
    made: list[Path] = []
    try:
        folder.mkdir()
        for path, text in plan.created.items():
            write_atomically(path, text)
            made.append(path)
        for path, text in plan.changed.items():
            write_atomically(path, text)
        for translation in current:
            stamp(translation)
        derived = write_derived(root)
    except BaseException:
        for path in made:
            path.unlink(missing_ok=True)
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
        for path, text in kept.items():
            if path.read_text(encoding="utf-8") != text:
                write_atomically(path, text)
        raise
    written = [p.relative_to(root).as_posix() for p in [*plan.created, *plan.changed]]
    return sorted({*written, *derived}), plan.notes


def main(argv: Sequence[str], root: Path = ROOT) -> int:
    """Run the command; print what was written, or why nothing was; return the exit status."""
    try:
        number, slug, title, module = _parse(list(argv))
        written, notes = create_checkpoint(root, number, slug, title, module)
    except (NewCheckpointError, ManifestError, DerivedFileError) as exc:
        print(f"{exc}\n{USAGE}", file=sys.stderr)
        return 2
    print(f"checkpoint {number} started; written:")
    print("".join(f"  {path}\n" for path in written), end="")
    for note in notes:
        print(f"note: {note}")
    print(
        f"next: nox -s verify -- {number}   (focused tests, practice folder, pages), "
        "then replace the placeholders"
    )
    return 0


def _parse(args: list[str]) -> tuple[str, str, str | None, str | None]:
    module = None
    if "--module" in args:
        at = args.index("--module")
        if at + 1 >= len(args):
            raise NewCheckpointError("--module needs a name, like --module agent_loop")
        module = args[at + 1]
        del args[at : at + 2]
    if len(args) not in (2, 3) or any(arg.startswith("-") for arg in args):
        raise NewCheckpointError(f"expected a number, a slug and a title, got {args}")
    return args[0], args[1], args[2] if len(args) == 3 else None, module


def _check_number(number: str, catalog: tuple[Checkpoint, ...]) -> None:
    if not _NUMBER.match(number):
        raise NewCheckpointError(f"the number is two digits, like 07; got {number!r}")
    existing = next((c for c in catalog if c.number == number), None)
    if existing is not None:
        raise NewCheckpointError(
            f"checkpoint {number} exists already (checkpoints/{existing.name}); "
            f"the next number is {len(catalog):02d}"
        )
    if int(number) != len(catalog):
        raise NewCheckpointError(
            f"checkpoints are numbered without gaps: the next one is {len(catalog):02d}, "
            f"not {number}"
        )


def _check_title(title: str | None, planned: PlannedCheckpoint | None) -> str:
    if title is None:
        if planned is None:
            raise NewCheckpointError("give a title: the roadmap names no checkpoint this number")
        return planned.title
    if not _TITLE.match(title):
        raise NewCheckpointError(
            f"the title {title!r} must start with a letter or digit and hold at most 60 letters, "
            "digits, spaces and , . ' ( ) / & + - (no colon, #, quote or bracket)"
        )
    return title


def _check_names(root: Path, catalog: tuple[Checkpoint, ...], slug: str, module: str) -> None:
    for kind, value in (("slug", slug), ("module name", module)):
        if not _NAME.match(value) or keyword.iskeyword(value):
            raise NewCheckpointError(
                f"the {kind} {value!r} must be a lowercase Python name of at most 40 "
                "characters: a letter, then letters, digits and underscores (agent_loop)"
            )
    taken = next((c for c in catalog if c.slug == slug), None)
    if taken is not None:
        raise NewCheckpointError(f"the slug {slug!r} is taken by checkpoint {taken.number}")
    owner = next((c for c in catalog if f"{module}.py" in c.modules), None)
    if owner is not None or (root / "course" / "src" / f"{module}.py").exists():
        whose = f" (checkpoint {owner.number}'s)" if owner is not None else ""
        raise NewCheckpointError(
            f"course/src/{module}.py exists already{whose}: a module belongs to one checkpoint; "
            "choose another slug or pass --module NAME"
        )


def _untranslated_sections() -> str:
    """The Vietnamese page's sections before Next checkpoint, titled as the glossary says."""
    # The glossary is the one list of the Vietnamese section titles (docs_tools/translations.py
    # holds every page to it); the placeholder records no source hash, so the site shows its
    # "not translated yet" notice until a translation is stamped.
    from docs_tools.translations import load_glossary

    sections = [s for s in load_glossary().sections if s.anchor != "next-checkpoint"]
    return "".join(f"## {s.vi} {{ #{s.anchor} }}\n\n*Chưa dịch.*\n\n" for s in sections)


def _render(template: str, values: dict[str, str]) -> str:
    text = (TEMPLATES / template).read_text(encoding="utf-8")
    return string.Template(text).substitute(values)


def _next_line(following: PlannedCheckpoint | None, *, vietnamese: bool) -> str:
    if following is None:
        return (
            "Đây là checkpoint cuối cùng cho đến nay."
            if vietnamese
            else ("This is the last checkpoint so far.")
        )
    if vietnamese:
        return (
            f"Checkpoint {following.number} (chưa phát hành), *{following.title_vi}*: "
            f"{following.adds_vi}."
        )
    return (
        f"Checkpoint {following.number} (not yet published), *{following.title}*: {following.adds}."
    )


def _home_row(page: Path, previous: Checkpoint, new_page: str, title: str, adds: str) -> str:
    """Return the home page with the new checkpoint's row after the previous one's."""
    text = page.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    row = re.compile(rf"^\| {previous.number} \| \[.*\]\({re.escape(previous.page)}\) \|")
    at = next((i for i, line in enumerate(lines) if row.match(line)), None)
    if at is None:
        raise NewCheckpointError(
            f"docs/{page.name}: no table row for checkpoint {previous.number} "
            f"('| {previous.number} | [title]({previous.page}) | … |') to add the new one after"
        )
    number = f"{int(previous.number) + 1:02d}"
    lines.insert(at + 1, f"| {number} | [{title}]({new_page}) | {adds} |\n")
    return "".join(lines)


def _nav_translation(
    config: Path, previous: Checkpoint, number: str, title: str, title_vi: str
) -> str:
    """Return mkdocs.yml with the new nav title's translation after the previous one's."""
    text = config.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    entry = re.compile(rf"^(?P<indent>[ ]+){re.escape(f'{previous.number} {previous.title}')}:")
    at = next((i for i, line in enumerate(lines) if entry.match(line)), None)
    if at is None:
        raise NewCheckpointError(
            f"mkdocs.yml: nav_translations has no entry '{previous.number} {previous.title}: …' "
            "to add the new one after"
        )
    match = entry.match(lines[at])
    assert match is not None
    lines.insert(at + 1, f"{match['indent']}{number} {title}: {number} {title_vi}\n")
    return "".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``nox -s new_checkpoint`` on a copy of the repository: what it writes passes every check.

The generator runs once, on a copy of this repository in a temporary folder, and the copy is
then checked as an instructor's clone would be, unedited: the catalog and the derived lists,
the docs checks, the catalog tests, the focused test against the reference, and a practice
folder, where the placeholder lab must fail on its stub. Everything runs with this
interpreter (no nox, no environment, no network); ``mkdocs build --strict`` is left to
``nox -s docs`` (CONTRIBUTING.md says how to try it on a copy).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from authoring import new_checkpoint
from authoring.derived import PlannedCheckpoint, load_roadmap, stale_files
from authoring.new_checkpoint import NewCheckpointError, create_checkpoint, main
from checkpoints.catalog import file_problems, load_catalog
from docs_tools.promises import load_promises, promise_report
from docs_tools.translations import up_to_date_translations
from practice.scaffold import make_practice_folder
from practice.tests.scaffold_runs import FolderRunner

ROOT = Path(__file__).resolve().parents[2]
_NOT_COPIED = shutil.ignore_patterns(
    ".git", ".nox", "site", "__pycache__", ".pytest_cache", ".hypothesis", "*_cache", "*.pyc"
)


def _planned(number: str) -> PlannedCheckpoint:
    """The roadmap's entry for ``number``; the tests need the next two checkpoints named there."""
    planned = next((p for p in load_roadmap(ROOT) if p.number == number), None)
    assert planned is not None, (
        f"checkpoints/roadmap.toml names no checkpoint {number}: these tests start the next "
        "checkpoint of the roadmap and need it and the one after it there"
    )
    return planned


# The tests start the next checkpoint of the roadmap, whichever that is now (08 when they were
# moved from 07), so they keep working as checkpoints are written.
_CATALOG = load_catalog(ROOT / "checkpoints")
PREVIOUS = _CATALOG[-1]
NEXT = _planned(f"{len(_CATALOG):02d}")
AFTER = _planned(f"{len(_CATALOG) + 1:02d}")
NAME = f"{NEXT.number}_{NEXT.slug}"
LAB = f"{int(NEXT.number)}.1"
FOCUSED = f"checkpoints/{NAME}/test_{NAME}.py"

pytestmark = [pytest.mark.repo_copy, pytest.mark.timeout(300)]


def snapshot(root: Path) -> dict[str, str]:
    """Return a digest of every file under ``root``, caches left out."""
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and ".pytest_cache" not in path.parts
    }


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of the repository in which the next checkpoint was started with the command."""
    copy = tmp_path_factory.mktemp("course") / "repo"
    shutil.copytree(ROOT, copy, ignore=_NOT_COPIED)
    assert main([NEXT.number, NEXT.slug, NEXT.title], root=copy) == 0
    yield copy
    shutil.rmtree(copy.parent, ignore_errors=True)


def test_the_new_checkpoint_is_the_catalog_s_last_with_its_files(course: Path) -> None:
    catalog = load_catalog(course / "checkpoints")
    last = catalog[-1]
    labs = [lab.id for lab in last.labs]
    assert (last.name, last.title, last.prerequisite, last.modules, labs) == (
        NAME,
        NEXT.title,
        PREVIOUS.number,
        (f"{NEXT.slug}.py",),
        [LAB],
    )
    assert file_problems(catalog, course) == []
    assert sorted(p.name for p in (course / "docs/checkpoints").glob(f"{NEXT.number}_*")) == [
        f"{NAME}.md",
        f"{NAME}.vi.md",
    ]


def _roadmap_after_the_new_one() -> str:
    """The start of README's sentence on the checkpoints the roadmap still names."""
    left = [p for p in load_roadmap(ROOT) if int(p.number) > int(NEXT.number)]
    first = AFTER.title[0].lower() + AFTER.title[1:]
    if len(left) == 1:
        return f"Checkpoint {AFTER.number} ({first}) follows the same shape"
    return f"Checkpoints {AFTER.number}\N{EN DASH}{left[-1].number} ({first},"


def test_readme_nav_and_forward_links_are_regenerated(course: Path) -> None:
    assert stale_files(course) == []
    readme = (course / "README.md").read_text(encoding="utf-8")
    assert (
        f"| {NEXT.number} | [{NEXT.title}](docs/checkpoints/{NAME}.md) | `{NEXT.slug}.py` "
        f"| {LAB} | `nox -s checkpoint -- {NEXT.number}` |\n"
    ) in readme
    assert f"\n{_roadmap_after_the_new_one()}" in readme
    config = (course / "mkdocs.yml").read_text(encoding="utf-8")
    assert f"      - {NEXT.number} {NEXT.title}: checkpoints/{NAME}.md\n" in config
    assert f"            {NEXT.number} {NEXT.title}: {NEXT.number} {NEXT.title_vi}\n" in config
    page = (course / "docs" / PREVIOUS.page).read_text(encoding="utf-8")
    assert f"[Checkpoint {NEXT.number}]({NAME}.md)" in page
    assert "not yet published" not in page


def test_a_translation_up_to_date_before_stays_up_to_date(course: Path) -> None:
    # The home pages' rows and the forward links are written in both languages alike, so the
    # command stamps again what was current, and no finished page starts saying it is older.
    before = [p.relative_to(ROOT) for p in up_to_date_translations(ROOT)]
    after = [p.relative_to(course) for p in up_to_date_translations(course)]
    assert Path("docs/index.vi.md") in before
    assert before == after


def _promises_of_the_new_checkpoint(root: Path) -> list[str]:
    """The pages (one per promise) that promise something of the new checkpoint, unreviewed."""
    return [
        p.page
        for p in load_promises(root)
        if p.checkpoint == NEXT.number and not p.reviewed and (root / p.page).is_file()
    ]


def test_the_docs_check_passes_and_lists_the_promises_to_review(course: Path) -> None:
    # The script itself, as `nox -s docs` runs it before building, on the copy.
    completed = subprocess.run(
        [sys.executable, "docs_tools/check_docs.py"],
        cwd=course,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (completed.returncode, completed.stderr) == (0, "")
    *notes, summary = completed.stdout.splitlines()
    pages = len(list((ROOT / "docs").rglob("*.md"))) + 2  # the original's and the new two
    assert summary == f"check_docs: {pages} pages checked, 0 problems"
    # The review list is the original's (drafts of earlier checkpoints) and, added to it, what
    # the earlier pages promise of the new checkpoint; each quoted after "promises".
    prefix = "to review (the page is a draft): "
    review = [line for line in notes if line.startswith(prefix)]
    new = f"{prefix}checkpoint {NEXT.number}: "
    assert [line for line in review if not line.startswith(new)] == [
        f"{prefix}{line}" for line in promise_report(ROOT, _CATALOG).to_review
    ]
    assert [line.split(" '", 1)[0] for line in review if line.startswith(new)] == [
        f"{new}{page} promises" for page in _promises_of_the_new_checkpoint(course)
    ]
    # The Vietnamese page is a placeholder: the site says it is not translated yet.
    assert f"translation: docs/checkpoints/{NAME}.md: no vi translation (the site says so)" in notes


def test_once_the_draft_box_is_gone_each_promise_must_be_reviewed(course: Path) -> None:
    # Whether or not the earlier pages promise anything of the new checkpoint, the previous
    # page makes one promise here, so that there is always one to review.
    page = course / "docs" / PREVIOUS.page
    promises = course / "checkpoints/promises.toml"
    new_page = course / "docs/checkpoints" / f"{NAME}.md"
    kept = {path: path.read_text(encoding="utf-8") for path in (page, promises, new_page)}
    sentence = f"Checkpoint {NEXT.number} will keep the promise this test adds."
    page.write_text(f"{kept[page]}\n{sentence}\n", encoding="utf-8")
    promises.write_text(
        f'{kept[promises]}\n[[promise]]\npage = "docs/{PREVIOUS.page}"\n'
        f'checkpoint = "{NEXT.number}"\ntext = "{sentence}"\nreviewed = false\n',
        encoding="utf-8",
    )
    try:
        draft = promise_report(course, load_catalog(course / "checkpoints"))
        new_page.write_text(
            kept[new_page].replace('!!! warning "Draft"', '!!! note "Written"'), encoding="utf-8"
        )
        written = promise_report(course, load_catalog(course / "checkpoints"))
    finally:
        for path, text in kept.items():
            path.write_text(text, encoding="utf-8")
    count = len(_promises_of_the_new_checkpoint(course)) + 1
    new = f"checkpoint {NEXT.number}"
    assert draft.problems == ()
    assert [r for r in draft.to_review if r.startswith(f"{new}: ")][-1:] == [
        f"{new}: docs/{PREVIOUS.page} promises '{sentence}'"
    ]
    assert len([r for r in draft.to_review if r.startswith(f"{new}: ")]) == count
    assert len(written.problems) == count
    assert written.problems[-1] == (
        f"{new} is written: check that it keeps the promise of docs/{PREVIOUS.page}, "
        f"'{sentence}' (or change that page), then set reviewed = true for it in "
        "checkpoints/promises.toml"
    )


def test_the_catalog_tests_pass_on_the_copy(course: Path, tmp_path: Path) -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            f"{NAME} or files_the_manifests or derived_from",
            "course/tests/test_catalog.py",
        ],
        cwd=course,
        env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]


@pytest.fixture(scope="module")
def folder_runner() -> Iterator[FolderRunner]:
    """One warm fork server for the two runs below (practice/tests' fixture is not seen here)."""
    with FolderRunner() as runner:
        yield runner


def test_the_placeholder_lab_test_passes_against_the_reference(
    folder_runner: FolderRunner, course: Path, tmp_path: Path
) -> None:
    run = folder_runner.run(course, [FOCUSED], tmp_path / "run", ["-v"])
    assert run.returncode == 0, run.output
    assert [
        (o.nodeid.split("::")[1], o.lab, o.outcome) for o in run.outcomes if o.when == "call"
    ] == [("test_placeholder_returns_the_checkpoint_slug", LAB, "passed")]


def test_a_practice_folder_fails_the_placeholder_lab_on_its_stub(
    folder_runner: FolderRunner, course: Path, tmp_path: Path
) -> None:
    folder = make_practice_folder(course, NEXT.number, tmp_path / f"practice-{NEXT.number}")
    skeleton = (folder / f"course/src/{NEXT.slug}.py").read_text(encoding="utf-8")
    assert [line for line in skeleton.splitlines() if len(line) > 100] == []
    run = folder_runner.run(folder, [FOCUSED], tmp_path / "run")
    assert run.returncode == 1
    (outcome,) = [o for o in run.outcomes if o.outcome == "failed"]
    assert outcome.leaves == (
        (
            "NotImplementedError",
            f"Lab {LAB}: Replace this placeholder with the first lab of {NEXT.title} — "
            f"see docs/checkpoints/{NAME}.md",
        ),
    )
    assert f"Lab {LAB}   not started  (1 of 1 test fails)" in run.output


_GAP = f"{int(AFTER.number) + 1:02d}"  # one number past the next free one


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [NEXT.number, NEXT.slug, NEXT.title],
            f"checkpoint {NEXT.number} exists already (checkpoints/{NAME}); "
            f"the next number is {AFTER.number}",
        ),
        (
            [AFTER.number, NEXT.slug, "Again"],
            f"the slug '{NEXT.slug}' is taken by checkpoint {NEXT.number}",
        ),
        (
            [_GAP, "later", "Later"],
            f"checkpoints are numbered without gaps: the next one is {AFTER.number}, not {_GAP}",
        ),
        (["8", "tools", "Tools"], "the number is two digits, like 07; got '8'"),
        (
            [AFTER.number, "Coding-Tools", "Tools"],
            "the slug 'Coding-Tools' must be a lowercase Python name",
        ),
        ([AFTER.number, "class", "Tools"], "the slug 'class' must be a lowercase Python name"),
        (
            [AFTER.number, "tools", "Tools: real"],
            "the title 'Tools: real' must start with a letter or digit",
        ),
        (
            [AFTER.number, "tools", "Tools", "--module", "tool"],
            "course/src/tool.py exists already (checkpoint 06's)",
        ),
        (
            [AFTER.number],
            f"expected a number, a slug and a title, got ['{AFTER.number}']",
        ),
    ],
)
def test_a_bad_request_is_refused_with_a_message_and_writes_nothing(
    course: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(course)
    assert main(args, root=course) == 2
    error = capsys.readouterr().err
    assert error.startswith(message), error
    assert error.endswith('usage: nox -s new_checkpoint -- NN slug ["Title"] [--module NAME]\n')
    assert snapshot(course) == before


def test_a_leftover_folder_is_refused_and_kept(
    course: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    leftover = course / "checkpoints" / f"{AFTER.number}_{AFTER.slug}"
    leftover.mkdir()
    try:
        before = snapshot(course)
        assert main([AFTER.number, AFTER.slug], root=course) == 2
        assert snapshot(course) == before
    finally:
        leftover.rmdir()
    assert capsys.readouterr().err.startswith(
        f"checkpoints/{AFTER.number}_{AFTER.slug} exists already; remove it or choose another slug"
    )


def test_a_failure_half_way_puts_every_file_back(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(course)

    def fail(root: Path) -> list[str]:
        raise OSError("disk full")

    monkeypatch.setattr(new_checkpoint, "write_derived", fail)
    with pytest.raises(OSError, match=r"^disk full$"):
        create_checkpoint(course, AFTER.number, AFTER.slug, None)
    assert snapshot(course) == before


def test_a_title_left_out_comes_from_the_roadmap(course: Path) -> None:
    plan = new_checkpoint.plan_checkpoint(course, AFTER.number, AFTER.slug, None)
    manifest = plan.created[course / "checkpoints" / f"{AFTER.number}_{AFTER.slug}/checkpoint.toml"]
    assert f'title = "{AFTER.title}"\n' in manifest


def test_a_title_left_out_is_refused_when_the_roadmap_names_none(course: Path) -> None:
    roadmap = course / "checkpoints/roadmap.toml"
    text = roadmap.read_text(encoding="utf-8")
    roadmap.unlink()
    try:
        with pytest.raises(NewCheckpointError, match=r"^give a title: the roadmap names no "):
            new_checkpoint.plan_checkpoint(course, AFTER.number, AFTER.slug, None)
    finally:
        roadmap.write_text(text, encoding="utf-8")

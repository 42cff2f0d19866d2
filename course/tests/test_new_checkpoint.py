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
from authoring.derived import stale_files
from authoring.new_checkpoint import NewCheckpointError, create_checkpoint, main
from checkpoints.catalog import file_problems, load_catalog
from docs_tools.promises import promise_report
from practice.scaffold import make_practice_folder
from practice.tests.scaffold_runs import run_focused_tests

ROOT = Path(__file__).resolve().parents[2]
FOCUSED = "checkpoints/07_agent_loop/test_07_agent_loop.py"
_NOT_COPIED = shutil.ignore_patterns(
    ".git", ".nox", "site", "__pycache__", ".pytest_cache", ".hypothesis", "*_cache", "*.pyc"
)

pytestmark = [
    pytest.mark.repo_copy,
    pytest.mark.timeout(300),
    # Written while 06 was the last checkpoint: these tests start 07 in the copy. On a branch
    # where 07 exists they must start the next one (08, coding_tools) instead; until they do,
    # they say so here rather than fail on "checkpoint 07 exists already".
    pytest.mark.skipif(
        (ROOT / "checkpoints/07_agent_loop").exists(),
        reason="checkpoint 07 exists: these tests must move to starting checkpoint 08",
    ),
]


def snapshot(root: Path) -> dict[str, str]:
    """Return a digest of every file under ``root``, caches left out."""
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and ".pytest_cache" not in path.parts
    }


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of the repository in which checkpoint 07 was started with the command."""
    copy = tmp_path_factory.mktemp("course") / "repo"
    shutil.copytree(ROOT, copy, ignore=_NOT_COPIED)
    assert main(["07", "agent_loop", "Agent loop"], root=copy) == 0
    yield copy
    shutil.rmtree(copy.parent, ignore_errors=True)


def test_the_new_checkpoint_is_the_catalog_s_last_with_its_files(course: Path) -> None:
    catalog = load_catalog(course / "checkpoints")
    last = catalog[-1]
    assert (last.name, last.title, last.modules, [lab.id for lab in last.labs]) == (
        "07_agent_loop",
        "Agent loop",
        ("agent_loop.py",),
        ["7.1"],
    )
    assert file_problems(catalog, course) == []
    assert sorted(p.name for p in (course / "docs/checkpoints").glob("07_*")) == [
        "07_agent_loop.md",
        "07_agent_loop.vi.md",
    ]


def test_readme_nav_and_forward_links_are_regenerated(course: Path) -> None:
    assert stale_files(course) == []
    readme = (course / "README.md").read_text(encoding="utf-8")
    assert (
        "| 07 | [Agent loop](docs/checkpoints/07_agent_loop.md) | `agent_loop.py` | 7.1 |" in readme
    )
    assert "Checkpoints 08\N{EN DASH}14 (coding tools," in readme
    config = (course / "mkdocs.yml").read_text(encoding="utf-8")
    assert "      - 07 Agent loop: checkpoints/07_agent_loop.md\n" in config
    assert "            07 Agent loop: 07 Vòng lặp agent\n" in config
    page = (course / "docs/checkpoints/06_tool_contract.md").read_text(encoding="utf-8")
    assert "[Checkpoint 07](07_agent_loop.md) joins the model" in page
    assert "not yet published" not in page


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
    lines = completed.stdout.splitlines()
    assert lines[-1] == "check_docs: 15 pages checked, 0 problems"
    assert len(lines) == 12
    assert lines[0].startswith(
        "to review (the page is a draft): checkpoint 07: docs/checkpoints/01_protocol.md promises"
    )


def test_once_the_draft_box_is_gone_each_promise_must_be_reviewed(course: Path) -> None:
    page = course / "docs/checkpoints/07_agent_loop.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace('!!! warning "Draft"', '!!! note "Written"'), encoding="utf-8")
    try:
        report = promise_report(course, load_catalog(course / "checkpoints"))
    finally:
        page.write_text(text, encoding="utf-8")
    assert len(report.problems) == 11
    assert report.problems[0].startswith(
        "checkpoint 07 is written: check that it keeps the promise of "
        "docs/checkpoints/01_protocol.md, 'when checkpoint 07 adds"
    )
    assert report.problems[0].endswith(
        "then set reviewed = true for it in checkpoints/promises.toml"
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
            "07_agent_loop or files_the_manifests or derived_from",
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


def test_the_placeholder_lab_test_passes_against_the_reference(
    course: Path, tmp_path: Path
) -> None:
    run = run_focused_tests(course, [FOCUSED], tmp_path / "run", ["-v"])
    assert run.returncode == 0, run.output
    assert [
        (o.nodeid.split("::")[1], o.lab, o.outcome) for o in run.outcomes if o.when == "call"
    ] == [("test_placeholder_returns_the_checkpoint_slug", "7.1", "passed")]


def test_a_practice_folder_fails_the_placeholder_lab_on_its_stub(
    course: Path, tmp_path: Path
) -> None:
    folder = make_practice_folder(course, "07", tmp_path / "practice-07")
    skeleton = (folder / "course/src/agent_loop.py").read_text(encoding="utf-8")
    assert [line for line in skeleton.splitlines() if len(line) > 100] == []
    run = run_focused_tests(folder, [FOCUSED], tmp_path / "run")
    assert run.returncode == 1
    (outcome,) = [o for o in run.outcomes if o.outcome == "failed"]
    assert outcome.leaves == (
        (
            "NotImplementedError",
            "Lab 7.1: Replace this placeholder with the first lab of Agent loop — "
            "see docs/checkpoints/07_agent_loop.md",
        ),
    )
    assert "Lab 7.1   not started  (1 of 1 test fails)" in run.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["07", "agent_loop", "Agent loop"],
            "checkpoint 07 exists already (checkpoints/07_agent_loop); the next number is 08",
        ),
        (["08", "agent_loop", "Again"], "the slug 'agent_loop' is taken by checkpoint 07"),
        (
            ["09", "later", "Later"],
            "checkpoints are numbered without gaps: the next one is 08, not 09",
        ),
        (["8", "tools", "Tools"], "the number is two digits, like 07; got '8'"),
        (
            ["08", "Coding-Tools", "Tools"],
            "the slug 'Coding-Tools' must be a lowercase Python name",
        ),
        (["08", "class", "Tools"], "the slug 'class' must be a lowercase Python name"),
        (
            ["08", "tools", "Tools: real"],
            "the title 'Tools: real' must start with a letter or digit",
        ),
        (
            ["08", "tools", "Tools", "--module", "tool"],
            "course/src/tool.py exists already (checkpoint 06's)",
        ),
        (["08"], "expected a number, a slug and a title, got ['08']"),
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
    leftover = course / "checkpoints/08_coding_tools"
    leftover.mkdir()
    try:
        before = snapshot(course)
        assert main(["08", "coding_tools"], root=course) == 2
        assert snapshot(course) == before
    finally:
        leftover.rmdir()
    assert capsys.readouterr().err.startswith(
        "checkpoints/08_coding_tools exists already; remove it or choose another slug"
    )


def test_a_failure_half_way_puts_every_file_back(
    course: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(course)

    def fail(root: Path) -> list[str]:
        raise OSError("disk full")

    monkeypatch.setattr(new_checkpoint, "write_derived", fail)
    with pytest.raises(OSError, match=r"^disk full$"):
        create_checkpoint(course, "08", "coding_tools", None)
    assert snapshot(course) == before


def test_a_title_left_out_comes_from_the_roadmap(course: Path) -> None:
    plan = new_checkpoint.plan_checkpoint(course, "08", "coding_tools", None)
    manifest = plan.created[course / "checkpoints/08_coding_tools/checkpoint.toml"]
    assert 'title = "Coding tools"\n' in manifest


def test_a_title_left_out_is_refused_when_the_roadmap_names_none(course: Path) -> None:
    roadmap = course / "checkpoints/roadmap.toml"
    text = roadmap.read_text(encoding="utf-8")
    roadmap.unlink()
    try:
        with pytest.raises(NewCheckpointError, match=r"^give a title: the roadmap names no "):
            new_checkpoint.plan_checkpoint(course, "08", "coding_tools", None)
    finally:
        roadmap.write_text(text, encoding="utf-8")

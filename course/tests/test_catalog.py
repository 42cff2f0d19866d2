"""The manifests, focused tests, modules, lesson pages and README agree with each other."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from authoring.derived import WRITE_COMMAND, stale_files
from checkpoints.catalog import (
    MANIFEST_NAME,
    Checkpoint,
    ManifestError,
    file_problems,
    load_catalog,
    read_page,
)

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()
SKELETON = (
    "Outcome",
    "Prerequisites",
    "Mechanism",
    "Trace",
    "Build it",
    "Run the focused test",
    "Failure experiment",
    "Acceptance criteria",
    "Compare with real frameworks",
    "Next checkpoint",
)


def ids(checkpoint: Checkpoint) -> str:
    return checkpoint.name


def lab_tags(test_file: Path) -> set[str]:
    """Return every lab id named by a ``pytest.mark.lab("…")`` in the file."""
    tree = ast.parse(test_file.read_text(encoding="utf-8"))
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "lab"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    }


def test_the_first_checkpoint_only_observes() -> None:
    # The numbering (00, 01, … without gaps) is load_catalog's own rule, tested below.
    assert CATALOG[0].mode == "observe"


@pytest.mark.parametrize("checkpoint", CATALOG, ids=ids)
def test_checkpoint_has_its_focused_test_file_and_nothing_else(checkpoint: Checkpoint) -> None:
    tests = sorted(p.name for p in checkpoint.folder.glob("test_*.py"))
    assert tests == [checkpoint.test_file.name]


@pytest.mark.parametrize("checkpoint", CATALOG, ids=ids)
def test_checkpoint_modules_exist_in_course_src(checkpoint: Checkpoint) -> None:
    missing = [m for m in checkpoint.modules if not (ROOT / "course" / "src" / m).is_file()]
    assert missing == []


@pytest.mark.parametrize("checkpoint", CATALOG, ids=ids)
def test_every_lab_is_tagged_in_the_focused_tests(checkpoint: Checkpoint) -> None:
    assert lab_tags(checkpoint.test_file) == {lab.id for lab in checkpoint.labs}


@pytest.mark.parametrize("checkpoint", CATALOG, ids=ids)
def test_lesson_page_follows_the_skeleton(checkpoint: Checkpoint) -> None:
    page = read_page(checkpoint, ROOT / "docs")
    headings = tuple(re.findall(r"^## (.+?)\s*$", page, flags=re.MULTILINE))
    assert headings == SKELETON
    run_this = page.split("\n## ", 1)[0]  # the box stands above the first section
    assert '!!! example "Run this"' in run_this
    assert f"nox -s checkpoint -- {checkpoint.number}" in run_this


@pytest.mark.parametrize("checkpoint", CATALOG, ids=ids)
def test_lesson_page_names_every_lab(checkpoint: Checkpoint) -> None:
    page = read_page(checkpoint, ROOT / "docs")
    named = [lab.id for lab in checkpoint.labs if re.search(rf"\bLab {re.escape(lab.id)}\b", page)]
    assert named == [lab.id for lab in checkpoint.labs]


def test_files_the_manifests_name_exist() -> None:
    assert file_problems(CATALOG, ROOT) == []


def test_readme_map_nav_and_forward_references_are_derived_from_the_manifests() -> None:
    stale = stale_files(ROOT)
    assert stale == [], f"{stale} out of step with the manifests: run `{WRITE_COMMAND}`"


# Malformed catalogs: each mistake an instructor can make is refused with a message naming it.


def write_manifest(root: Path, folder: str, text: str) -> None:
    (root / folder).mkdir(parents=True)
    (root / folder / MANIFEST_NAME).write_text(text, encoding="utf-8")


OBSERVE_00 = (
    'number = "00"\ntitle = "T"\nslug = "start"\nmode = "observe"\nmodules = ["a.py"]\nlabs = []\n'
)


def build_manifest(number: str, slug: str, module: str, prerequisite: str = "00") -> str:
    return (
        f'number = "{number}"\ntitle = "T"\nslug = "{slug}"\nmode = "build"\n'
        f'prerequisite = "{prerequisite}"\nmodules = ["{module}"]\n'
        f'[[labs]]\nid = "{int(number)}.1"\nsummary = "s"\nhint = "h"\n'
    )


def test_wellformed_catalog_loads(tmp_path: Path) -> None:
    write_manifest(tmp_path, "00_start", OBSERVE_00)
    write_manifest(tmp_path, "01_next", build_manifest("01", "next", "b.py"))
    loaded = load_catalog(tmp_path)
    assert [(c.name, c.labs[0].id if c.labs else None) for c in loaded] == [
        ("00_start", None),
        ("01_next", "1.1"),
    ]


@pytest.mark.parametrize(
    ("folder", "text", "message"),
    [
        ("01_next", build_manifest("01", "other", "b.py"), "must match the folder name"),
        ("01_next", build_manifest("01", "next", "b.py", prerequisite="07"), "prerequisite must"),
        (
            "01_next",
            build_manifest("01", "next", "a.py"),
            "a module belongs to one checkpoint only: a.py is listed by checkpoints 00 and 01; "
            "give the later one a module of its own",
        ),
        ("02_next", build_manifest("02", "next", "b.py"), "without gaps"),
        ("01_next", build_manifest("01", "next", "b.py").replace('"1.1"', '"6.1"'), "lab id"),
        ("01_next", "extra = 1\n" + build_manifest("01", "next", "b.py"), "unknown keys"),
        ("01_next", "number = ", "not valid TOML"),
        ("1_next", build_manifest("01", "next", "b.py"), "named NN_slug"),
    ],
)
def test_malformed_catalog_is_refused_with_a_named_reason(
    tmp_path: Path, folder: str, text: str, message: str
) -> None:
    write_manifest(tmp_path, "00_start", OBSERVE_00)
    write_manifest(tmp_path, folder, text)
    with pytest.raises(ManifestError, match=re.escape(message)):
        load_catalog(tmp_path)


# The files a manifest names: a missing or misspelled one is named with what was expected.


def write_course(root: Path) -> tuple[Checkpoint, ...]:
    """Write a two-checkpoint course with every file in place; return its catalog."""
    write_manifest(root / "checkpoints", "00_start", OBSERVE_00)
    write_manifest(root / "checkpoints", "01_next", build_manifest("01", "next", "b.py"))
    (root / "course/src").mkdir(parents=True)
    (root / "docs/checkpoints").mkdir(parents=True)
    for name, module in (("00_start", "a.py"), ("01_next", "b.py")):
        (root / "checkpoints" / name / f"test_{name}.py").write_text("", encoding="utf-8")
        (root / "course/src" / module).write_text("", encoding="utf-8")
        (root / "docs/checkpoints" / f"{name}.md").write_text("# page\n", encoding="utf-8")
    return load_catalog(root / "checkpoints")


def test_a_course_with_every_file_in_place_has_no_file_problem(tmp_path: Path) -> None:
    assert file_problems(write_course(tmp_path), tmp_path) == []


def test_a_misspelled_module_is_named_with_the_file_it_resembles(tmp_path: Path) -> None:
    catalog = write_course(tmp_path)
    (tmp_path / "course/src/b.py").rename(tmp_path / "course/src/b_.py")
    assert file_problems(catalog, tmp_path) == [
        "checkpoints/01_next/checkpoint.toml lists module 'b.py', but course/src/b.py does not "
        "exist; did you mean 'b_.py'?"
    ]


def test_a_misspelled_focused_test_file_is_named_with_the_expected_name(tmp_path: Path) -> None:
    catalog = write_course(tmp_path)
    folder = tmp_path / "checkpoints/01_next"
    (folder / "test_01_next.py").rename(folder / "test_01_nxt.py")
    assert file_problems(catalog, tmp_path) == [
        "checkpoints/01_next: the focused test file must be named 'test_01_next.py' "
        "(found ['test_01_nxt.py']); one file per checkpoint"
    ]


def test_a_missing_lesson_page_says_to_write_it_and_how(tmp_path: Path) -> None:
    catalog = write_course(tmp_path)
    (tmp_path / "docs/checkpoints/01_next.md").unlink()
    expected = (
        "checkpoint 01 has no lesson page docs/checkpoints/01_next.md: write it with the ## "
        "sections of the lesson skeleton (CONTRIBUTING.md), or start every file of a new "
        'checkpoint with `nox -s new_checkpoint -- NN slug "Title"`'
    )
    assert file_problems(catalog, tmp_path) == [expected]
    with pytest.raises(ManifestError, match=f"^{re.escape(expected)}$"):
        read_page(catalog[1], tmp_path / "docs")

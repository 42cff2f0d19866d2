"""The practice folder, made from a small synthetic course: layout, refusals, atomicity, runs."""

from __future__ import annotations

import filecmp
import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from xml.etree import ElementTree

import pytest

from checkpoints.catalog import load_catalog
from practice.cli import main
from practice.commands import CommandError, checkpoints_through, find_lab, hint_text
from practice.regions import LabMarkerError
from practice.scaffold import PracticeError, make_practice_folder
from practice.tests.fake_course import write_fake_course
from practice.tests.lab_outcomes_plugin import PROOF_EXAMPLES
from practice.tests.scaffold_runs import FolderRunner, ScaffoldRun, focused_test_paths

PRACTICE = Path(__file__).resolve().parents[1]


@pytest.fixture
def course(tmp_path: Path) -> Path:
    return write_fake_course(tmp_path / "course")


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_folder_holds_earlier_code_skeletons_tests_and_commands(
    course: Path, tmp_path: Path
) -> None:
    made = make_practice_folder(course, "02", tmp_path / "p02")
    assert made == (tmp_path / "p02").resolve()
    assert files_under(made) == {
        ".gitignore",
        "LEARNING.md",
        "noxfile.py",
        "pyproject.toml",
        "practice/commands.py",
        "practice/failure_summary.py",
        "course/src/__init__.py",
        "course/src/py.typed",
        "course/src/intro.py",
        "course/src/counter.py",
        "course/src/greeter.py",
        "checkpoints/catalog.py",
        "checkpoints/conftest.py",
        "checkpoints/support.py",
        "checkpoints/00_intro/checkpoint.toml",
        "checkpoints/00_intro/test_00_intro.py",
        "checkpoints/01_counter/checkpoint.toml",
        "checkpoints/01_counter/test_01_counter.py",
        "checkpoints/02_greeter/checkpoint.toml",
        "checkpoints/02_greeter/test_02_greeter.py",
    }


def test_earlier_modules_tests_and_machinery_are_copied_unchanged(
    course: Path, tmp_path: Path
) -> None:
    made = make_practice_folder(course, "02", tmp_path / "p02")
    same = [
        "course/src/__init__.py",
        "course/src/py.typed",
        "course/src/intro.py",
        "course/src/counter.py",  # verbatim: its markers and snippet comments stay
        "checkpoints/catalog.py",
        "checkpoints/conftest.py",
        "checkpoints/support.py",
        "checkpoints/01_counter/test_01_counter.py",
        "checkpoints/02_greeter/test_02_greeter.py",
        "checkpoints/02_greeter/checkpoint.toml",
    ]
    for name in same:
        assert filecmp.cmp(course / name, made / name, shallow=False), name
    assert filecmp.cmp(PRACTICE / "commands.py", made / "practice/commands.py", shallow=False)
    assert filecmp.cmp(PRACTICE / "templates/noxfile.py", made / "noxfile.py", shallow=False)


def test_target_modules_are_skeletons_without_markers_or_reference_code(
    course: Path, tmp_path: Path
) -> None:
    made = make_practice_folder(course, "01", tmp_path / "p01")
    text = (made / "course/src/counter.py").read_text(encoding="utf-8")
    assert "LAB" not in text.replace("TODO(Lab", "").replace('"Lab ', "")
    assert "--8<--" not in text
    assert "_words_of" not in text
    assert "new_value" not in text
    assert text.count("raise NotImplementedError(") == 2
    assert (
        '"Lab 1.1: Increment the counter up to LIMIT — see docs/checkpoints/01_counter.md"' in text
    )
    assert "class CounterError(ValueError):" in text
    assert 'LIMIT = 10\n_WORD = re.compile(r"\\w+")' in text


def test_observe_checkpoint_is_copied_as_it_is(course: Path, tmp_path: Path) -> None:
    made = make_practice_folder(course, "0", tmp_path / "p00")
    assert filecmp.cmp(course / "course/src/intro.py", made / "course/src/intro.py", shallow=False)
    assert not (made / "course/src/counter.py").exists()
    guide = (made / "LEARNING.md").read_text(encoding="utf-8")
    assert "observe checkpoint: there is nothing to implement" in guide
    assert (
        "- `course/src/intro.py`: the code of this checkpoint, to read and experiment with.\n"
        in (guide)
    )


def give_checkpoint_01_modules(course: Path, given: dict[str, str]) -> None:
    """Add modules without lab regions to the fake checkpoint 01, listed before counter.py."""
    manifest = course / "checkpoints/01_counter/checkpoint.toml"
    names = ", ".join(f'"{name}"' for name in [*given, "counter.py"])
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace('modules = ["counter.py"]', f"modules = [{names}]"), encoding="utf-8"
    )
    for name, source in given.items():
        (course / "course/src" / name).write_text(source, encoding="utf-8")


SHOUT = 'def shout(text: str) -> str:\n    """Return it in capitals."""\n    return text.upper()\n'


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (
            {"helpers.py": SHOUT},
            "`course/src/helpers.py`: given whole (no lab in it); your code uses it.",
        ),
        (
            {"a.py": '"""Given."""\n', "b.py": '"""Given."""\n'},
            "`course/src/a.py`, `course/src/b.py`: given whole (no lab in them); "
            "your code uses them.",
        ),
    ],
    ids=["one", "several"],
)
def test_modules_without_labs_are_given_whole_and_named_as_given(
    course: Path, tmp_path: Path, given: dict[str, str], named: str
) -> None:
    give_checkpoint_01_modules(course, given)
    made = make_practice_folder(course, "01", tmp_path / "p01")
    for name, source in given.items():
        assert (made / "course/src" / name).read_text(encoding="utf-8") == source
    guide = (made / "LEARNING.md").read_text(encoding="utf-8")
    assert f"- `course/src/counter.py`: the modules you write. {named}\n" in guide


def test_the_guide_names_a_place_once_even_when_a_module_has_it_twice(
    course: Path, tmp_path: Path
) -> None:
    counter = course / "course/src/counter.py"
    text = counter.read_text(encoding="utf-8")
    second_helpers = (
        "\n\n# BEGIN LAB 1.2\n"
        "def _spaces_of(text: str) -> int:\n"
        '    """Return how many spaces ``text`` holds."""\n'
        '    return text.count(" ")\n'
        "\n\n# END LAB 1.2\n"
    )
    counter.write_text(text + second_helpers, encoding="utf-8")
    made = make_practice_folder(course, "01", tmp_path / "p01")
    guide = (made / "LEARNING.md").read_text(encoding="utf-8")
    assert "  where: `course/src/counter.py`: `count_words()`, private helpers\n" in guide


def test_pyproject_maps_the_source_folder_to_harness_with_the_course_test_tools(
    course: Path, tmp_path: Path
) -> None:
    made = make_practice_folder(course, "02", tmp_path / "p02")
    practice = tomllib.loads((made / "pyproject.toml").read_text(encoding="utf-8"))
    reference = tomllib.loads((course / "pyproject.toml").read_text(encoding="utf-8"))
    assert practice["tool"]["setuptools"]["package-dir"] == {"harness": "course/src"}
    # The harness's own dependencies (pathspec) reach the folder, pinned as in the course.
    assert practice["project"]["dependencies"] == reference["project"]["dependencies"]
    assert practice["dependency-groups"] == {"test": reference["dependency-groups"]["test"]}
    assert practice["build-system"] == reference["build-system"]
    expected_pytest = {**reference["tool"]["pytest"]["ini_options"], "testpaths": ["checkpoints"]}
    assert practice["tool"]["pytest"]["ini_options"] == expected_pytest
    assert practice["project"]["name"] == "harness-practice-02"


def test_learning_guide_names_labs_command_page_and_hints(course: Path, tmp_path: Path) -> None:
    made = make_practice_folder(course, "02", tmp_path / "p02")
    guide = (made / "LEARNING.md").read_text(encoding="utf-8")
    assert guide.startswith("# Practice: checkpoint 02 — Greeter\n")
    assert (
        "- **Lab 2.1** — Greet a person by name.  \n  where: `course/src/greeter.py`: `greet()`"
        in guide
    )
    assert "- **Lab 2.2** — Spell a name, one letter at a time." in guide
    assert "nox -s checkpoint -- 02\n" in guide
    assert "`docs/checkpoints/02_greeter.md`" in guide
    assert "nox -s hint -- 2.1\n" in guide
    assert "nox -s progress" in guide
    assert "$" not in guide


def test_learning_guide_of_an_observe_checkpoint_promises_no_labs(
    course: Path, tmp_path: Path
) -> None:
    guide = (make_practice_folder(course, "00", tmp_path / "p00") / "LEARNING.md").read_text(
        encoding="utf-8"
    )
    assert "the focused tests of checkpoint 00, unchanged" in guide
    assert "00 to 00" not in guide
    assert "00\N{EN DASH}00" not in guide
    assert "no earlier code" not in guide
    assert "*Build it*" not in guide
    assert "labs section" not in guide
    assert "This checkpoint has no labs" in guide
    assert "nox -s hint" not in guide
    assert "$" not in guide


def test_learning_guide_names_one_earlier_checkpoint_without_a_range(
    course: Path, tmp_path: Path
) -> None:
    guide = (make_practice_folder(course, "01", tmp_path / "p01") / "LEARNING.md").read_text(
        encoding="utf-8"
    )
    assert "The code of checkpoint 00 is the course's reference" in guide
    assert "00 to 00" not in guide


def test_learning_guide_names_the_range_of_tests_and_the_earlier_code(
    course: Path, tmp_path: Path
) -> None:
    guide = (make_practice_folder(course, "02", tmp_path / "p02") / "LEARNING.md").read_text(
        encoding="utf-8"
    )
    assert "the focused tests of checkpoints 00 to 02, unchanged" in guide
    assert "The code of checkpoints 00 to 01 is the course's reference" in guide
    assert "`course/src/intro.py`, `course/src/counter.py`" in guide
    assert "--full" in guide


def test_learning_guide_says_how_to_undo_the_failure_experiment_without_git(
    course: Path, tmp_path: Path
) -> None:
    # The pages undo their experiment with `git checkout`, which a practice folder cannot run.
    guide = (make_practice_folder(course, "02", tmp_path / "p02") / "LEARNING.md").read_text(
        encoding="utf-8"
    )
    assert "this folder is not under git, so copy the file it edits aside first" in " ".join(
        guide.split()
    )


PAGE = """# 01 · Counter

## Mechanism

```python
--8<-- "course/src/counter.py:counter"
```

!!! example "The tests"

    ```python
    --8<-- "checkpoints/01_counter/test_01_counter.py"
    ```
"""


def test_pages_fill_in_given_code_and_leave_out_a_labs_answer(course: Path, tmp_path: Path) -> None:
    (course / "docs/checkpoints").mkdir(parents=True)
    (course / "docs/checkpoints/01_counter.md").write_text(PAGE, encoding="utf-8")
    tests = (course / "checkpoints/01_counter/test_01_counter.py").read_text(encoding="utf-8")

    page = make_practice_folder(course, "01", tmp_path / "p01") / "docs/checkpoints/01_counter.md"
    text = page.read_text(encoding="utf-8")
    assert "--8<--" not in text
    assert "new_value = self._value + by" not in text  # Lab 1.1's answer
    assert "class Counter:" not in text  # the whole listing goes, not only the lab's lines
    assert (
        "# Left out of this practice folder: this listing (course/src/counter.py, section "
        "counter) is the answer to Lab 1.1.\n"
    ) in text
    # A given file is filled in, indented like its include.
    first_test_line = next(line for line in tests.splitlines() if line.startswith("def "))
    assert f"    {first_test_line}\n" in text
    assert text.startswith("# 01 · Counter\n\n> This copy of the lesson page belongs")

    # In a later checkpoint's folder, 01's code is given whole, and so is its listing.
    later = make_practice_folder(course, "02", tmp_path / "p02") / "docs/checkpoints/01_counter.md"
    shown = later.read_text(encoding="utf-8")
    assert "LIMIT" in shown
    assert "        new_value = self._value + by\n" in shown
    assert "# BEGIN LAB" not in shown
    assert "Left out" not in shown


def test_a_page_naming_a_missing_section_is_refused(course: Path, tmp_path: Path) -> None:
    (course / "docs/checkpoints").mkdir(parents=True)
    (course / "docs/checkpoints/01_counter.md").write_text(
        '--8<-- "course/src/counter.py:nowhere"\n', encoding="utf-8"
    )
    with pytest.raises(PracticeError, match=r"^docs/checkpoints/01_counter.md: course/src/counter"):
        make_practice_folder(course, "01", tmp_path / "p01")
    assert not (tmp_path / "p01").exists()


def test_fixtures_are_copied_when_a_copied_file_reads_them(course: Path, tmp_path: Path) -> None:
    (course / "course/fixtures").mkdir()
    (course / "course/fixtures/records.jsonl").write_text("{}\n", encoding="utf-8")
    assert not (make_practice_folder(course, "02", tmp_path / "a") / "course/fixtures").exists()
    test = course / "checkpoints/02_greeter/test_02_greeter.py"
    test.write_text(
        test.read_text(encoding="utf-8") + "\nFIXTURES = 'course/fixtures'\n", encoding="utf-8"
    )
    made = make_practice_folder(course, "02", tmp_path / "b")
    assert (made / "course/fixtures/records.jsonl").read_text(encoding="utf-8") == "{}\n"


def test_an_empty_existing_folder_is_used(course: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    made = make_practice_folder(course, "01", tmp_path / "empty")
    assert (made / "LEARNING.md").exists()


def siblings(tmp_path: Path) -> set[str]:
    return {p.name for p in tmp_path.iterdir()}


def test_a_folder_that_is_not_empty_is_refused_and_left_alone(course: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "mine.py").write_text("keep me\n", encoding="utf-8")
    before = siblings(tmp_path)
    with pytest.raises(PracticeError, match=r"/work exists and is not empty: nothing was written"):
        make_practice_folder(course, "02", work)
    assert files_under(work) == {"mine.py"}
    assert (work / "mine.py").read_text(encoding="utf-8") == "keep me\n"
    assert siblings(tmp_path) == before


def test_a_file_is_refused(course: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(
        PracticeError, match=r"/file exists and is not a folder: nothing was written$"
    ):
        make_practice_folder(course, "02", tmp_path / "file")


@pytest.mark.parametrize("inside", [".", "checkpoints/new", "course/src/p02"])
def test_a_folder_inside_the_course_is_refused(course: Path, inside: str) -> None:
    before = files_under(course)
    with pytest.raises(PracticeError, match=r"is inside the course repository"):
        make_practice_folder(course, "02", course / inside)
    assert files_under(course) == before


def test_a_missing_parent_is_refused(course: Path, tmp_path: Path) -> None:
    with pytest.raises(PracticeError, match=r"/missing does not exist: create it first$"):
        make_practice_folder(course, "02", tmp_path / "missing" / "p02")


@pytest.mark.parametrize("number", ["7", "x", "", "-1"])
def test_an_unknown_checkpoint_is_refused_with_the_list(
    course: Path, tmp_path: Path, number: str
) -> None:
    with pytest.raises(PracticeError) as caught:
        make_practice_folder(course, number, tmp_path / "p")
    shown = number or "''"
    assert str(caught.value).startswith(
        f"no checkpoint {shown}\n\nusage: nox -s practice -- NN DIR"
    )
    assert "  00  Intro (observe: nothing to implement)\n  01  Counter\n  02  Greeter" in str(
        caught.value
    )
    assert not (tmp_path / "p").exists()


def test_a_failure_half_way_leaves_nothing(course: Path, tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    parent.mkdir()
    seen: list[Path] = []

    def fail(staging: Path) -> None:
        seen.append(staging)
        assert (staging / "LEARNING.md").exists()
        raise OSError("disk full")

    with pytest.raises(OSError, match=r"^disk full$"):
        make_practice_folder(course, "02", parent / "p02", before_publish=fail)
    assert seen
    assert seen[0].parent == parent
    assert list(parent.iterdir()) == []


def test_a_broken_marker_in_the_target_is_an_error_naming_file_and_line(
    course: Path, tmp_path: Path
) -> None:
    module = course / "course/src/greeter.py"
    module.write_text(
        module.read_text(encoding="utf-8").replace("    # END LAB 2.1\n", ""), encoding="utf-8"
    )
    with pytest.raises(LabMarkerError) as caught:
        make_practice_folder(course, "02", tmp_path / "p02")
    assert str(caught.value) == (
        "course/src/greeter.py:20: BEGIN LAB 2.2 inside the region of LAB 2.1 opened at "
        "line 14: regions do not nest"
    )
    assert list(tmp_path.iterdir()) == [course]


def test_a_lab_without_a_region_is_an_error(course: Path, tmp_path: Path) -> None:
    module = course / "course/src/greeter.py"
    text = module.read_text(encoding="utf-8")
    module.write_text(re.sub(r"(?m)^ *# (BEGIN|END) LAB 2\.2\n", "", text), encoding="utf-8")
    with pytest.raises(LabMarkerError, match=r"lab 2\.2 of checkpoint 02 has no marked region$"):
        make_practice_folder(course, "02", tmp_path / "p02")
    assert list(tmp_path.iterdir()) == [course]


def test_command_line_takes_a_relative_folder_from_where_it_was_invoked(
    course: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["2", "p02"], invoked_from=tmp_path, course_root=course) == 0
    assert (tmp_path / "p02" / "LEARNING.md").exists()
    out = capsys.readouterr().out
    assert f"cd {(tmp_path / 'p02').resolve()}\n    nox -s checkpoint -- 02\n" in out


@pytest.mark.parametrize("args", [[], ["02"], ["02", "a", "b"], ["two", "p"], ["09", "p"]])
def test_command_line_answers_bad_arguments_with_the_usage(
    course: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    assert main(args, invoked_from=tmp_path, course_root=course) == 2
    error = capsys.readouterr().err
    assert error.startswith("practice: ")
    assert "usage: nox -s practice -- NN DIR" in error
    assert "  01  Counter\n" in error
    assert list(tmp_path.iterdir()) == [course]


def test_command_line_reports_a_marker_error(
    course: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = course / "course/src/counter.py"
    module.write_text(module.read_text(encoding="utf-8") + "# END LAB 1.1\n", encoding="utf-8")
    assert main(["01", "p"], invoked_from=tmp_path, course_root=course) == 1
    assert capsys.readouterr().err.startswith(
        "practice: a lab marker of the course is wrong: course/src/counter.py:"
    )


def test_hint_names_the_lab_its_hint_and_its_page(course: Path) -> None:
    catalog = load_catalog(course / "checkpoints")
    expected = (
        "Lab 1.2 (01 Counter): Count the words of a text.\n\n"
        "Hint: A regular expression finds the words.\n\n"
        "The lesson page: docs/checkpoints/01_counter.md (section 'Build it')."
    )
    assert hint_text(catalog, ["1.2"]) == expected
    assert hint_text(catalog, ["01.2"]) == expected
    assert find_lab(catalog, "1.3") is None


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ([], "expected one lab id, such as 6.2"),
        (["1.9"], "no lab 1.9"),
        (["1"], "no lab 1"),
        (["x.y"], "no lab x.y"),
        (["1.1", "1.2"], "expected one lab id, such as 6.2; got 1.1 1.2"),
    ],
)
def test_hint_with_bad_arguments_names_the_problem_and_lists_the_labs(
    course: Path, args: list[str], problem: str
) -> None:
    with pytest.raises(CommandError) as caught:
        hint_text(load_catalog(course / "checkpoints"), args)
    assert caught.value.problem == problem
    assert caught.value.usage.startswith("usage: nox -s hint -- N.M\n\nlabs:\n")
    assert "  2.2   Spell a name, one letter at a time." in caught.value.usage
    assert str(caught.value) == f"{problem}\n\n{caught.value.usage}"


def test_checkpoint_command_in_a_practice_folder_runs_prerequisites_too(course: Path) -> None:
    catalog = load_catalog(course / "checkpoints")
    assert [c.number for c in checkpoints_through(catalog, ["01"])] == ["00", "01"]
    assert [c.number for c in checkpoints_through(catalog, ["2"])] == ["00", "01", "02"]
    assert [c.number for c in checkpoints_through(catalog, ["all"])] == ["00", "01", "02"]
    for bad, problem in [
        ([], "expected one checkpoint number, such as 06, or all"),
        (["03"], "no checkpoint 03"),
        (["x"], "no checkpoint x"),
        (["1", "2"], "expected one checkpoint number, such as 06, or all; got 1 2"),
    ]:
        with pytest.raises(CommandError) as caught:
            checkpoints_through(catalog, bad)
        assert caught.value.problem == problem
        assert caught.value.usage.startswith("usage: nox -s checkpoint -- NN [pytest options]")
        assert "against your code in course/src" in caught.value.usage
        assert caught.value.usage.endswith(
            "checkpoints:\n  00  Intro\n  01  Counter\n  02  Greeter"
        )


def test_fresh_folder_passes_earlier_checkpoints_and_reports_each_lab_not_started(
    folder_runner: FolderRunner, course: Path, tmp_path: Path
) -> None:
    made = make_practice_folder(course, "02", tmp_path / "p02")
    catalog = load_catalog(made / "checkpoints")
    run = folder_runner.run(made, focused_test_paths(catalog), tmp_path / "run")
    # The run imported the folder's own harness, not the course's installed reference.
    files = [Path(file).resolve() for file in run.harness_files]
    assert made / "course/src/__init__.py" in files
    assert [file for file in files if file.parent != made / "course/src"] == []
    assert run.collect_errors == ()
    assert [(o.lab, o.outcome) for o in run.outcomes] == [
        (None, "passed"),
        ("1.1", "passed"),
        ("1.1", "passed"),
        ("1.2", "passed"),
        ("2.1", "failed"),
        ("2.2", "failed"),
    ]
    assert all(o.exception == "NotImplementedError" for o in run.failed())
    assert [o.message for o in run.failed()] == [
        "Lab 2.1: Greet a person by name — see docs/checkpoints/02_greeter.md",
        "Lab 2.2: Spell a name, one letter at a time — see docs/checkpoints/02_greeter.md",
    ]
    assert "Lab 2.1   not started  (1 of 1 test fails)" in run.output
    assert "Lab 2.2   not started  (1 of 1 test fails)" in run.output
    assert "Lab 1.1   passing      (2 tests)" in run.output
    assert "FAILURES" in run.output  # without the folder's summary plugin: pytest's own output

    # The learner's work, here the reference, copied back in.
    shutil.copyfile(course / "course/src/greeter.py", made / "course/src/greeter.py")
    run = folder_runner.run(made, focused_test_paths(catalog), tmp_path / "run")
    assert run.returncode == 0, run.output
    assert [o.outcome for o in run.outcomes] == ["passed"] * 6
    assert "Lab 2.2   passing      (1 test)" in run.output


def run_extra_test_file(
    folder_runner: FolderRunner,
    course: Path,
    tmp_path: Path,
    source: str,
    options: Sequence[str] = (),
) -> ScaffoldRun:
    """Run one more test file, written into a fresh practice folder, with its conftest."""
    made = make_practice_folder(course, "02", tmp_path / "p02")
    (made / "checkpoints" / "test_extra.py").write_text(source, encoding="utf-8")
    return folder_runner.run(made, ["checkpoints/test_extra.py"], tmp_path / "run", options)


LAB_TESTS = (
    "import pytest\n\n\n"
    "@pytest.mark.lab('2.1')\n"
    "def test_of_lab_2_1() -> None:\n    pass\n\n\n"
    "@pytest.mark.lab('2.2')\n"
    "def test_of_lab_2_2() -> None:\n    pass\n\n\n"
    "def test_of_no_lab() -> None:\n    pass\n"
)


def test_the_lab_option_runs_only_that_labs_tests(
    folder_runner: FolderRunner, course: Path, tmp_path: Path
) -> None:
    run = run_extra_test_file(folder_runner, course, tmp_path, LAB_TESTS, ["--lab", "2.2"])
    assert [o.nodeid.split("::")[-1] for o in run.outcomes] == ["test_of_lab_2_2"]
    assert "Lab 2.2   passing      (1 test)" in run.output
    assert "Lab 2.1" not in run.output


@pytest.mark.parametrize(
    ("lab", "refused"),
    [
        ("9.9", "no test here is tagged with lab 9.9; the labs here: 2.1, 2.2"),
        ("abc", "--lab takes a lab id such as 6.2, got 'abc'"),
    ],
)
def test_the_lab_option_refuses_a_lab_it_cannot_run(
    folder_runner: FolderRunner, course: Path, tmp_path: Path, lab: str, refused: str
) -> None:
    run = run_extra_test_file(folder_runner, course, tmp_path, LAB_TESTS, ["--lab", lab])
    assert run.returncode == 4  # pytest's usage error
    assert refused in run.output


def test_a_test_ended_by_a_stray_cancellation_is_explained(
    folder_runner: FolderRunner, course: Path, tmp_path: Path
) -> None:
    run = run_extra_test_file(
        folder_runner,
        course,
        tmp_path,
        "import asyncio\n\n\n"
        "async def test_cancelled_from_inside() -> None:\n"
        "    task = asyncio.current_task()\n"
        "    assert task is not None\n"
        "    task.cancel()  # as a listener that cancels the running task directly would\n"
        "    await asyncio.sleep(0)\n",
    )
    assert [o.outcome for o in run.outcomes] == ["failed"]
    assert "why CancelledError?" in run.output
    assert "The test's own task was cancelled" in run.output


@pytest.mark.parametrize(
    ("body", "line"),
    [
        # NotImplementedError is a RuntimeError: pytest.raises catches the stub and fails with
        # "Regex pattern did not match"; the stub is still what ended the test.
        (
            "    with pytest.raises(RuntimeError, match='no running event loop'):\n"
            "        raise NotImplementedError('Lab 2.2: a stub')\n",
            "Lab 2.2   not started  (1 of 1 test fails)",
        ),
        # Another lab's stub: this lab's code may well be done.
        (
            "    raise NotImplementedError('Lab 2.1: a stub the test calls')\n",
            "Lab 2.2   blocked      (1 of 1 test fails, on the stub of Lab 2.1)",
        ),
    ],
    ids=["own-stub-caught-by-pytest-raises", "another-labs-stub"],
)
def test_a_lab_test_that_a_stub_ended_reads_as_that_stub(
    folder_runner: FolderRunner, course: Path, tmp_path: Path, body: str, line: str
) -> None:
    source = "import pytest\n\n\n@pytest.mark.lab('2.2')\ndef test_of_lab_2_2() -> None:\n"
    run = run_extra_test_file(folder_runner, course, tmp_path, source + body)
    assert [o.outcome for o in run.outcomes] == ["failed"]
    assert line in run.output


def test_skipped_and_expected_failures_do_not_count_against_a_lab(
    folder_runner: FolderRunner, course: Path, tmp_path: Path
) -> None:
    run = run_extra_test_file(
        folder_runner,
        course,
        tmp_path,
        "import pytest\n\n"
        "pytestmark = pytest.mark.lab('1.1')\n\n\n"
        "def test_passes() -> None:\n    pass\n\n\n"
        "def test_skipped() -> None:\n    pytest.skip('not here')\n\n\n"
        "@pytest.mark.xfail(strict=True)\n"
        "def test_expected_to_fail() -> None:\n    raise AssertionError\n",
    )
    assert sorted(o.outcome for o in run.outcomes) == ["passed", "skipped", "skipped"]
    assert "Lab 1.1   passing      (1 test)" in run.output


@pytest.mark.skipif(importlib.util.find_spec("nox") is None, reason="nox is not installed here")
def test_the_folder_noxfile_prints_a_hint(course: Path, tmp_path: Path) -> None:
    made = make_practice_folder(course, "02", tmp_path / "p02")
    completed = subprocess.run(
        [sys.executable, "-m", "nox", "--no-color", "-s", "hint", "--", "2.2"],
        cwd=made,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "Hint: An async generator: async def with a yield in a loop." in completed.stdout


FAILING_TESTS = (
    "import pytest\n\n\n"
    "@pytest.mark.lab('2.1')\n"
    "def test_first_of_2_1() -> None:\n    assert 'first' == 'FIRST-IN-FULL'\n\n\n"
    "@pytest.mark.lab('2.1')\n"
    "def test_second_of_2_1() -> None:\n    assert 'second' == 'SECOND-IN-FULL'\n\n\n"
    "@pytest.mark.lab('2.1')\n"
    "def test_third_of_2_1() -> None:\n    raise ValueError('third went wrong')\n\n\n"
    "@pytest.mark.lab('2.2')\n"
    "def test_only_of_2_2() -> None:\n    assert 2 + 2 == 'ONLY-IN-FULL'\n\n\n"
    "def test_without_a_lab() -> None:\n    assert 'none' == 'NONE-IN-FULL'\n\n\n"
    "def test_that_passes() -> None:\n    pass\n"
)


def test_the_failure_summary_shows_each_labs_first_failure_in_full_and_the_rest_in_a_line(
    folder_runner: FolderRunner, course: Path, tmp_path: Path
) -> None:
    junit = tmp_path / "junit.xml"
    run = run_extra_test_file(
        folder_runner,
        course,
        tmp_path,
        FAILING_TESTS,
        ["-p", "practice.failure_summary", f"--junitxml={junit}"],
    )
    out = run.output
    assert "= failures: the first of each lab in full (--full shows all) =" in out
    assert "FAILURES" not in out  # pytest's own section would repeat every traceback
    assert "FAILED " not in out  # and so would its one-line list
    assert "    assert 'first' == 'FIRST-IN-FULL'" in out  # the first, in full: its source
    assert out.count("SECOND-IN-FULL") == 1  # the second, one line
    assert "_ Lab 2.1: test_first_of_2_1 (3 failures) _" in out
    assert "the other 2 of Lab 2.1, one line each:" in out
    assert "  test_second_of_2_1 - AssertionError: assert 'second' == 'SECOND-IN-FULL'" in out
    assert "  test_third_of_2_1 - ValueError: third went wrong" in out
    assert "raise ValueError" not in out  # the third is one line only
    assert "_ Lab 2.2: test_only_of_2_2 (1 failure) _" in out
    assert "_ a test without a lab: test_without_a_lab (1 failure) _" in out
    # The order: no lab first, then the labs in order, then the labs report, then the count.
    order = [
        out.index("a test without a lab:"),
        out.index("_ Lab 2.1:"),
        out.index("_ Lab 2.2:"),
        out.index("= labs ="),
        out.index("5 failed, 1 passed"),
    ]
    assert order == sorted(order)
    # A failure shown on one line is formatted without its source, which pytest would read
    # and parse for each frame (most of a fresh 06 folder's run); the report file shows it.
    formatted = {
        case.get("name"): failure.text or ""
        for case in ElementTree.parse(junit).getroot().iter("testcase")
        if (failure := case.find("failure")) is not None
    }
    assert "    raise ValueError('third went wrong')" not in formatted["test_third_of_2_1"]
    assert "ValueError: third went wrong" in formatted["test_third_of_2_1"]
    assert "    assert 'first' == 'FIRST-IN-FULL'" in formatted["test_first_of_2_1"]


@pytest.mark.parametrize("option", ["--full", "-vv"])
def test_full_or_verbose_prints_every_failure_in_full(
    folder_runner: FolderRunner, course: Path, tmp_path: Path, option: str
) -> None:
    # The runs here pass -q, so -vv is the learner's -v.
    run = run_extra_test_file(
        folder_runner, course, tmp_path, FAILING_TESTS, ["-p", "practice.failure_summary", option]
    )
    assert "failures: the first of each lab" not in run.output
    assert "FAILURES" in run.output
    assert "raise ValueError('third went wrong')" in run.output
    assert "SECOND-IN-FULL" in run.output
    assert "Lab 2.1   failing      (3 of 3 tests fail)" in run.output


def test_a_run_imports_the_folders_own_packages_not_the_servers(
    folder_runner: FolderRunner, course: Path, tmp_path: Path
) -> None:
    # The runs are forked from one server; it must not hand them the course's `practice` or
    # `checkpoints` (or `harness`), or a folder would be proved with the course's copies.
    run = run_extra_test_file(
        folder_runner,
        course,
        tmp_path,
        "from pathlib import Path\n\n"
        "import checkpoints\nimport harness\nimport practice\n\n\n"
        "def test_each_package_is_the_folders() -> None:\n"
        "    here = Path.cwd().resolve()\n"
        "    for package in (checkpoints, harness, practice):\n"
        "        places = [Path(place).resolve() for place in package.__path__]\n"
        "        assert places, package\n"
        "        assert all(place.is_relative_to(here) for place in places), places\n",
    )
    assert [o.outcome for o in run.outcomes] == ["passed"], run.output


def test_a_run_past_its_limit_is_killed_and_the_next_run_still_works(
    course: Path, tmp_path: Path
) -> None:
    hang = "import time\n\n\ndef test_hangs() -> None:\n    time.sleep(20)\n"
    (tmp_path / "hung").mkdir()
    (tmp_path / "after").mkdir()
    with FolderRunner(limit=1.0) as runner:
        hung = run_extra_test_file(runner, course, tmp_path / "hung", hang)
        after = run_extra_test_file(
            runner, course, tmp_path / "after", "def test_passes() -> None:\n    pass\n"
        )
    assert hung.returncode == -9
    assert hung.outcomes == ()
    assert after.returncode == 0, after.output
    assert [o.outcome for o in after.outcomes] == ["passed"]


def test_a_property_test_runs_at_most_the_proof_examples_in_a_folder_run(
    folder_runner: FolderRunner, course: Path, tmp_path: Path
) -> None:
    calls = tmp_path / "calls.txt"
    run = run_extra_test_file(
        folder_runner,
        course,
        tmp_path,
        "from hypothesis import given, settings, strategies as st\n\n\n"
        "@settings(max_examples=500, deadline=None)\n"
        "@given(st.integers())\n"
        "def test_counted(number: int) -> None:\n"
        f"    with open({str(calls)!r}, 'a') as file:\n"
        "        file.write('x')\n",
    )
    assert [o.outcome for o in run.outcomes] == ["passed"], run.output
    assert 1 <= len(calls.read_text()) <= PROOF_EXAMPLES


def test_a_failing_property_test_stops_unshrunk_in_a_folder_run(
    folder_runner: FolderRunner, course: Path, tmp_path: Path
) -> None:
    # Every input but all zeros fails: shrinking would try dozens toward the smallest one (33
    # calls in plain pytest); unshrunk, the run stops at its first failure and replays it once.
    calls = tmp_path / "calls.txt"
    run = run_extra_test_file(
        folder_runner,
        course,
        tmp_path,
        "from hypothesis import given, settings, strategies as st\n\n\n"
        "@settings(max_examples=500, deadline=None, derandomize=True)\n"
        "@given(st.binary(min_size=20, max_size=20))\n"
        "def test_counted(data: bytes) -> None:\n"
        f"    with open({str(calls)!r}, 'a') as file:\n"
        "        file.write('x')\n"
        "    assert data == bytes(20)\n",
    )
    assert [o.outcome for o in run.outcomes] == ["failed"], run.output
    assert 1 <= len(calls.read_text()) <= PROOF_EXAMPLES + 1

"""Each lab's part of a lesson page states, in full, every message the lab's tests pin.

The check is ``docs_tools/pinned_messages.py``; ``nox -s docs`` runs it through ``check_docs.py``
(skipping the numbers in ``PENDING``), and this file runs it for every checkpoint, expecting the
pending ones to fail. The rest proves the checker on small test files and pages of its own.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from checkpoints.catalog import load_catalog
from docs_tools.pinned_messages import (
    PENDING,
    checkpoint_problems,
    code_spans,
    lab_sections,
    page_problems,
    pinned_message_problems,
    regex_literal,
    scan_tests,
)

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()


def pending(number: str) -> list[pytest.MarkDecorator]:
    if number not in PENDING:
        return []
    reason = f"issue 15: the {number} page states its pinned messages on branch i15-reference"
    return [pytest.mark.xfail(strict=True, reason=reason)]


@pytest.mark.parametrize(
    "number", [pytest.param(c.number, marks=pending(c.number)) for c in CATALOG]
)
def test_every_lab_section_states_the_messages_its_tests_pin(number: str) -> None:
    assert checkpoint_problems(number) == []


def test_nox_docs_skips_only_the_pending_checkpoints() -> None:
    # check_docs.py calls pinned_message_problems() with its default: PENDING is skipped.
    assert pinned_message_problems() == []
    assert {c.number for c in CATALOG} >= PENDING


def test_removing_one_message_from_a_real_page_fails_naming_lab_message_and_test(
    tmp_path: Path,
) -> None:
    checkpoint = next(c for c in CATALOG if c.number == "02")
    test_file = tmp_path / checkpoint.test_file.name
    shutil.copyfile(checkpoint.test_file, test_file)
    page = tmp_path / "page.md"
    text = (ROOT / "docs" / checkpoint.page).read_text(encoding="utf-8")
    message = "cannot push to an ended stream"
    assert message in lab_sections(text)["2.2"]
    page.write_text(text.replace(message, "cannot push to an ended …"), encoding="utf-8")

    (problem,) = page_problems(test_file, page, tmp_path)

    assert problem.startswith(f"page.md: Lab 2.2: the message {message!r}, pinned by ")
    assert "test_02_event_stream.py::test_push_after_end_is_refused_and_changes_nothing" in problem


# ---------------------------------------------------------------------------------------------
# The checker on a test file and a page of its own
# ---------------------------------------------------------------------------------------------

TESTS = """
import pytest
from checkpoints.support import raises_ending_with, raises_exactly, raises_starting_with

lab_9_1 = pytest.mark.lab("9.1")


@lab_9_1
def test_alias() -> None:
    with raises_exactly(ValueError, "budget must be positive, got -1"):
        pass


@pytest.mark.lab("9.2")
@pytest.mark.parametrize(
    ("value", "message"),
    [(1, "too big: 1"), pytest.param(2, "too big: 2", id="two")],
)
def test_parametrized(value: int, message: str) -> None:
    with raises_exactly(ValueError, message):
        pass


@pytest.mark.lab("9.2")
def test_looped() -> None:
    cases = [("a", "no a here"), ("b", "no b here")]
    for name, message in cases:
        with raises_starting_with(KeyError, message):
            pass
    with raises_ending_with(KeyError, ": nested deeper than 2 containers"):
        pass


class TestInClass:
    pytestmark = pytest.mark.lab("9.2")

    def test_in_class(self) -> None:
        with pytest.raises(TypeError, match=r"^\\$\\.x: expected str, got \\w+$"):
            pass


def test_given_code_has_no_lab() -> None:
    with raises_exactly(ValueError, "given code: not stated on any lab"):
        pass
"""

PAGE = """
# Checkpoint 09

## Mechanism

The message `budget must be positive, got -1` is explained here, outside the labs.

## Build it

### Lab 9.1 — Budgets

| When | Message |
| --- | --- |
| a negative budget | `budget must be positive, got -1` |

### Lab 9.2 — Limits

- `too big: 1` and `too big: 2`;
- a message starting `no a here`, or `no b
  here` (the tests check only the start);
- a path, then `: nested deeper than 2 containers`;
- `$.x: expected str, got ` and the type's name.

## Run the focused test
"""


def write(tmp_path: Path, tests: str, page: str) -> tuple[Path, Path]:
    test_file = tmp_path / "test_09.py"
    test_file.write_text(textwrap.dedent(tests), encoding="utf-8")
    page_file = tmp_path / "09.md"
    page_file.write_text(page, encoding="utf-8")
    return test_file, page_file


def test_scan_reads_each_pin_with_its_lab_test_and_part() -> None:
    scan = scan_tests(TESTS, "test_09.py")
    assert scan.problems == ()
    assert [(p.lab, p.test, p.text, p.part) for p in scan.pins] == [
        ("9.1", "test_alias", "budget must be positive, got -1", "whole"),
        ("9.2", "test_parametrized", "too big: 1", "whole"),
        ("9.2", "test_parametrized", "too big: 2", "whole"),
        ("9.2", "test_looped", "no a here", "start"),
        ("9.2", "test_looped", "no b here", "start"),
        ("9.2", "test_looped", ": nested deeper than 2 containers", "end"),
        ("9.2", "TestInClass::test_in_class", "$.x: expected str, got ", "start"),
    ]


def test_a_page_that_states_every_pin_in_its_lab_section_passes(tmp_path: Path) -> None:
    assert page_problems(*write(tmp_path, TESTS, PAGE), tmp_path) == []


def test_a_message_cut_short_on_the_page_names_lab_message_test_and_line(tmp_path: Path) -> None:
    page = PAGE.replace("`budget must be positive, got -1` |", "`budget must be positive, …` |")
    (problem,) = page_problems(*write(tmp_path, TESTS, page), tmp_path)
    assert problem == (
        "09.md: Lab 9.1: the message 'budget must be positive, got -1', pinned by "
        "test_09.py::test_alias (line 10), is not stated in full in the lab's section (as inline "
        "code)"
    )


def test_a_message_in_prose_outside_inline_code_does_not_count(tmp_path: Path) -> None:
    page = PAGE.replace("`too big: 1` and `too big: 2`", "`too big: 1` and too big: 2")
    (problem,) = page_problems(*write(tmp_path, TESTS, page), tmp_path)
    assert problem.startswith("09.md: Lab 9.2: the message 'too big: 2', pinned by ")


def test_code_spans_follow_markdowns_backtick_runs() -> None:
    section = 'Raises ``a `quoted` b`` or `RuntimeError("x\n  y")`, not ``` or text.'
    assert code_spans(section) == ["a `quoted` b", 'RuntimeError("x y")']


def test_a_message_stated_in_another_lab_or_outside_build_it_does_not_count(
    tmp_path: Path,
) -> None:
    # The 9.1 message stays in Mechanism; moved from Lab 9.1 to Lab 9.2 it is in the wrong lab.
    page = PAGE.replace("| a negative budget | `budget must be positive, got -1` |\n", "")
    page = page.replace("- `too big: 1`", "- `budget must be positive, got -1`, `too big: 1`")
    (problem,) = page_problems(*write(tmp_path, TESTS, page), tmp_path)
    assert problem.startswith("09.md: Lab 9.1: the message 'budget must be positive, got -1'")


def test_a_missing_lab_section_is_one_problem(tmp_path: Path) -> None:
    page = PAGE.split("### Lab 9.2", maxsplit=1)[0] + "## Run the focused test\n"
    (problem,) = page_problems(*write(tmp_path, TESTS, page), tmp_path)
    assert problem.startswith(
        "09.md: Lab 9.2: no '### Lab 9.2 — …' section under '## Build it' states the messages "
        "its tests pin (test_09.py::test_parametrized, line 20)"
    )


def test_a_pipe_escaped_in_a_table_cell_still_counts(tmp_path: Path) -> None:
    tests = TESTS.replace("budget must be positive, got -1", "a | b")
    page = PAGE.replace("budget must be positive, got -1", "a \\| b")
    assert page_problems(*write(tmp_path, tests, page), tmp_path) == []


@pytest.mark.parametrize(
    "message",
    [
        "f'too big: {value}'",  # an f-string hides the text it pins
        "TOO_BIG",  # a module constant the scan does not follow
        "'too ' + 'big'",
    ],
)
def test_a_pin_the_scan_cannot_read_is_a_problem_of_its_own(message: str) -> None:
    source = f"""
import pytest

@pytest.mark.lab("9.1")
def test_unreadable(value: int) -> None:
    with raises_exactly(ValueError, {message}):
        pass
"""
    scan = scan_tests(source, "test_09.py")
    assert scan.pins == ()
    (problem,) = scan.problems
    assert problem.startswith(
        f"test_09.py:6: test_unreadable (Lab 9.1) pins a message the check cannot read ({message})"
    )


def test_a_parametrized_message_that_is_not_literal_is_a_problem() -> None:
    source = """
import pytest

@pytest.mark.lab("9.1")
@pytest.mark.parametrize("message", ["ok", "x" * 3])
def test_partly_readable(message: str) -> None:
    with raises_exactly(ValueError, message):
        pass
"""
    (problem,) = scan_tests(source, "t.py").problems
    assert "cannot read (message)" in problem


def test_a_message_computed_by_the_code_pins_nothing() -> None:
    source = """
import pytest

@pytest.mark.lab("9.1")
def test_same_refusal_both_ways(refusal: Exception) -> None:
    with raises_exactly(ValueError, str(refusal)):
        pass
"""
    assert scan_tests(source) == scan_tests("")


def test_the_module_pytestmark_gives_the_lab_and_a_test_mark_overrides_it() -> None:
    source = """
import pytest
from checkpoints import support

pytestmark = [pytest.mark.slow, pytest.mark.lab("9.1")]

def test_module_lab() -> None:
    with support.raises_exactly(ValueError, "one"):
        pass

@pytest.mark.lab("9.3")
def test_own_lab() -> None:
    with pytest.raises(ValueError, match="two"):
        pass
"""
    pins = scan_tests(source).pins
    assert [(p.lab, p.text, p.part) for p in pins] == [
        ("9.1", "one", "whole"),
        ("9.3", "two", "part"),
    ]


def test_a_pattern_with_no_literal_start_is_a_problem() -> None:
    source = """
import pytest

@pytest.mark.lab("9.1")
def test_any_message() -> None:
    with pytest.raises(ValueError, match=r"^\\w+ is wrong$"):
        pass
"""
    (problem,) = scan_tests(source, "t.py").problems
    assert "matches a pattern with no literal text at its start" in problem


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"^\$\.x\[1\]: NaN is not a JSON number$", ("$.x[1]: NaN is not a JSON number", "whole")),
        (r"^abort listeners raised", ("abort listeners raised", "start")),
        (r"nested deeper than 64 containers$", ("nested deeper than 64 containers", "end")),
        (r"deeper than", ("deeper than", "part")),
        (r"^listener must be callable, got \w+$", ("listener must be callable, got ", "start")),
        (r"^\$(\[[01]\])*: more than", ("$", "start")),
        (r"^unexpected field 'x{40}'$", ("unexpected field '", "start")),  # x is repeated
        (r"^one (or two)$", ("one ", "start")),
    ],
)
def test_a_match_pattern_pins_its_literal_start(pattern: str, expected: tuple[str, str]) -> None:
    assert regex_literal(pattern) == expected


def test_lab_sections_are_read_under_build_it_only_in_either_language() -> None:
    page = (
        "## Mechanism\n\n### Lab 9.1 — not a lab here\nearly\n\n"
        "## Tự xây { #build-it }\n\n### Lab 9.1 — Một\none\n\n### Lab 9.2 — Hai\ntwo\n"
        "### Not a lab\nthree\n\n## Next\n### Lab 9.3 — after\nfour\n"
    )
    assert lab_sections(page) == {"9.1": "one\n", "9.2": "two"}

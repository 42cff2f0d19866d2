"""The labs section's arithmetic: one outcome per test, the worst of its phases, counted."""

from __future__ import annotations

import gc
from types import SimpleNamespace
from typing import Any

import pytest

from checkpoints import conftest
from checkpoints.conftest import LabReport


def test_a_lab_whose_tests_all_pass_counts_its_tests() -> None:
    report = LabReport()
    report.record("6.1", "test_a", "passing")
    report.record("6.1", "test_b", "passing")
    assert report.summary_of("6.1") == "Lab 6.1   passing      (2 tests)"


def test_one_test_is_singular() -> None:
    report = LabReport()
    report.record("2.2", "test_a", "passing")
    assert report.summary_of("2.2") == "Lab 2.2   passing      (1 test)"
    report.record("2.3", "test_b", "not started")
    assert report.summary_of("2.3") == "Lab 2.3   not started  (1 of 1 test fails)"


def test_a_failing_lab_says_how_many_of_its_tests_fail() -> None:
    report = LabReport()
    for name in ("test_a", "test_b", "test_c"):
        report.record("6.4", name, "passing")
    report.record("6.4", "test_d", "failing")
    report.record("6.4", "test_e", "failing")
    assert report.status_of("6.4") == "failing"
    assert report.summary_of("6.4") == "Lab 6.4   failing      (2 of 5 tests fail)"


def test_a_stub_outranks_other_failures() -> None:
    report = LabReport()
    report.record("6.2", "test_a", "failing")
    report.record("6.2", "test_b", "not started")
    assert report.summary_of("6.2") == "Lab 6.2   not started  (2 of 2 tests fail)"


def test_a_test_that_passes_then_fails_in_teardown_counts_once_as_failing() -> None:
    report = LabReport()
    report.record("6.3", "test_a", "passing")  # the call
    report.record("6.3", "test_a", "failing")  # its teardown
    report.record("6.3", "test_b", "passing")
    assert report.summary_of("6.3") == "Lab 6.3   failing      (1 of 2 tests fails)"


def test_a_later_pass_does_not_hide_an_earlier_failure() -> None:
    report = LabReport()
    report.record("6.3", "test_a", "failing")  # its setup failed...
    report.record("6.3", "test_a", "passing")  # ...a later phase cannot take that back
    assert report.status_of("6.3") == "failing"


def test_a_lab_stopped_only_by_another_labs_stub_is_blocked_and_says_which() -> None:
    report = LabReport()
    report.record("6.2", "test_a", "passing")
    report.record("6.2", "test_b", "blocked", stub_of="6.1")
    report.record("6.2", "test_c", "blocked", stub_of="6.1")
    assert report.summary_of("6.2") == (
        "Lab 6.2   blocked      (2 of 3 tests fail, on the stub of Lab 6.1)"
    )
    report.record("6.2", "test_d", "failing")  # a failure of its own outranks waiting
    assert report.summary_of("6.2") == "Lab 6.2   failing      (3 of 4 tests fail)"


def test_no_garbage_collection_starts_while_pytest_makes_a_report() -> None:
    # pytest may format a failure then, parsing source with ast; on CPython 3.11 a collection
    # inside that parse, finalizing a failed task that logs its traceback, crashed a run.
    item: Any = SimpleNamespace(get_closest_marker=lambda name: None)
    call: Any = SimpleNamespace(excinfo=None)
    passed: Any = SimpleNamespace(failed=False, skipped=False, passed=True, when="call")
    try:
        making = conftest.pytest_runtest_makereport(item, call)
        next(making)  # here pytest makes the report
        assert not gc.isenabled()
        with pytest.raises(StopIteration):
            making.send(passed)
        assert gc.isenabled()

        failing = conftest.pytest_runtest_makereport(item, call)
        next(failing)
        with pytest.raises(RuntimeError):
            failing.throw(RuntimeError("making the report failed"))
        assert gc.isenabled()  # back on, whatever happened
    finally:
        gc.enable()


def test_finding_the_stub_in_a_chain_runs_no_code_of_the_tests_exceptions() -> None:
    ran: list[str] = []

    class LoudError(Exception):
        @property
        def args(self) -> Any:  # type: ignore[override]
            ran.append("args")
            return ("Lab 6.1: not a stub",)

        @property
        def __cause__(self) -> Any:  # type: ignore[override]
            ran.append("__cause__")
            return None

    assert conftest.stub_in_chain(LoudError()) is None
    ended = LoudError()
    ended.__context__ = NotImplementedError("Lab 6.2: a stub")  # as if raised while handling it
    assert conftest.stub_in_chain(ended) == "6.2"
    assert ran == []

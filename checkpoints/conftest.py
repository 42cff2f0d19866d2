"""Tag focused tests with their lab and report, after the run, where each lab stands.

A test says which lab it proves with ``@pytest.mark.lab("6.2")`` (or a module-level
``pytestmark``). After the run, every lab seen is reported as one of:

- ``not started``: some test of the lab failed on the lab's own stub, a
  ``NotImplementedError("Lab 6.2: …")`` raised by the practice scaffold (also when the test
  turned it into another failure, as a ``pytest.raises(RuntimeError, match=…)`` does);
- ``failing``: some test of the lab failed for any other reason;
- ``blocked``: its tests fail only on the stub of another lab they use (the line names it);
- ``passing``: every test of the lab passed.

Skipped and expected-to-fail tests say nothing about a lab and are left out of its count.

So a learner never reads a bare "all passed" while a lab is still a stub.

It also gives every focused test the ``tasks`` fixture (``checkpoints.support.StartedTasks``).
This file is copied unchanged into every practice folder.
"""

from __future__ import annotations

import asyncio
import gc
import re
from collections.abc import AsyncIterator, Generator
from dataclasses import dataclass, field
from typing import Literal

import pytest

from checkpoints.support import StartedTasks

# A stub's message starts "Lab 6.2: …"; in a formatted failure it follows the exception's name.
STUB_MESSAGE = re.compile(r"Lab (?P<lab>\d+\.\d+):")
LAB_STUB = re.compile("NotImplementedError: " + STUB_MESSAGE.pattern)

Status = Literal["not started", "failing", "blocked", "passing"]


def _lab_order(lab: str) -> tuple[int, ...]:
    return tuple(map(int, lab.split(".")))


# A test's outcome is the worst of its phases (setup, call, teardown), in this order.
_SEVERITY: dict[Status, int] = {"passing": 0, "blocked": 1, "failing": 2, "not started": 3}


@dataclass(slots=True)
class LabReport:
    """What the run saw of each lab: each test's outcome, keyed by lab id, then by test id."""

    outcomes: dict[str, dict[str, Status]] = field(default_factory=dict)
    waiting_on: dict[str, set[str]] = field(default_factory=dict)  # the labs whose stubs block

    def record(self, lab: str, test: str, status: Status, *, stub_of: str | None = None) -> None:
        tests = self.outcomes.setdefault(lab, {})
        if _SEVERITY[status] >= _SEVERITY[tests.get(test, "passing")]:
            tests[test] = status
        if status == "blocked" and stub_of is not None:
            self.waiting_on.setdefault(lab, set()).add(stub_of)

    def status_of(self, lab: str) -> Status:
        return max(self.outcomes[lab].values(), key=_SEVERITY.__getitem__)

    def summary_of(self, lab: str) -> str:
        """Return the lab's line: ``Lab 6.4   failing      (3 of 81 tests fail)``."""
        outcomes = self.outcomes[lab].values()
        total = len(outcomes)
        failed = sum(status != "passing" for status in outcomes)
        counted = f"{total} test{'' if total == 1 else 's'}"
        if failed:
            counted = f"{failed} of {counted} fail{'s' if failed == 1 else ''}"
        status = self.status_of(lab)
        if status == "blocked":
            labs = sorted(self.waiting_on.get(lab, ()), key=_lab_order)
            counted += ", on the stub of Lab " + ", ".join(labs)
        return f"Lab {lab:<5} {status:<12} ({counted})"


_REPORT_KEY = pytest.StashKey[LabReport]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--lab",
        action="append",
        default=[],
        metavar="N.M",
        help="run only the tests tagged with this lab, such as 6.2 (may be given again)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "lab(id): the lab this test proves, such as '6.2'")
    config.stash[_REPORT_KEY] = LabReport()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # `-m` selects by a marker's name, not by its argument, so --lab does the selecting.
    wanted: list[str] = config.getoption("--lab")
    if not wanted:
        return
    for lab in wanted:
        if not re.fullmatch(r"\d+\.\d+", lab):
            raise pytest.UsageError(f"--lab takes a lab id such as 6.2, got {lab!r}")
    tagged = {item: _lab_of(item) for item in items}
    unknown = sorted(set(wanted) - set(tagged.values()), key=_lab_order)
    if unknown:
        known = sorted({lab for lab in tagged.values() if lab is not None}, key=_lab_order)
        there = f"the labs here: {', '.join(known)}" if known else "no test here has a lab"
        raise pytest.UsageError(f"no test here is tagged with lab {', '.join(unknown)}; {there}")
    dropped = [item for item, lab in tagged.items() if lab not in wanted]
    config.hook.pytest_deselected(items=dropped)
    items[:] = [item for item, lab in tagged.items() if lab in wanted]


def _lab_of(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("lab")
    return None if marker is None else str(marker.args[0])


# Shown under a test that failed with CancelledError: its traceback ends in pytest-asyncio's
# runner, and nothing in it points at the code that cancelled.
CANCELLED_TEST_HINT = (
    "The test's own task was cancelled: something called cancel() on the task that runs the "
    "test, and the CancelledError struck at a later await. A usual cause is an abort listener "
    "that cancels the running task directly instead of from a loop callback "
    "(loop.call_soon), so the cancellation outlives the call; see the Cancellation section "
    "of checkpoint 06."
)


# A test's exception is the test's code: its chain is read through BaseException's own
# descriptors, so that no property of an exception class runs inside pytest's reporting.
_cause_of = BaseException.__dict__["__cause__"].__get__
_context_of = BaseException.__dict__["__context__"].__get__


def stub_in_chain(error: BaseException) -> str | None:
    """Return the lab of a stub's NotImplementedError in the chain of ``error``, or None."""
    # A stub raised inside `pytest.raises(RuntimeError, match=...)` (NotImplementedError is a
    # RuntimeError) fails as "Regex pattern did not match", with the stub as its context.
    seen: set[int] = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if type(link) is NotImplementedError and link.args and type(link.args[0]) is str:
            stub = STUB_MESSAGE.match(link.args[0])  # the exact type's own args: runs nothing
            if stub:
                return stub["lab"]
        link = _cause_of(link) or _context_of(link)
    return None


def stub_that_ended(report: pytest.TestReport, call: pytest.CallInfo[None]) -> str | None:
    """Return the lab whose stub ended this failed phase, or None."""
    if call.excinfo is not None and (lab := stub_in_chain(call.excinfo.value)):
        return lab
    stub = LAB_STUB.search(str(report.longrepr))
    return stub["lab"] if stub else None


def phase_status(
    report: pytest.TestReport, call: pytest.CallInfo[None], lab: str
) -> tuple[Status, str | None]:
    """Return what one phase of a test says of its lab, and the lab whose stub ended it."""
    if report.passed:
        return "passing", None
    stub = stub_that_ended(report, call)
    if stub == lab:
        return "not started", stub
    if stub is not None:
        return "blocked", stub  # this lab's code may be done; another lab's stub ended the test
    return "failing", None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    # While pytest makes the report it may format a failure, parsing the test's source with
    # ast. On CPython 3.11, a garbage collection inside that parse can finalize a failed task of
    # an earlier test, whose logged traceback parses source too, and the nested parse crashes
    # the run ("SystemError: AST constructor recursion depth mismatch"). So no collection may
    # start meanwhile; the garbage waits for the next one.
    collecting = gc.isenabled()
    gc.disable()
    try:
        report = yield
    finally:
        if collecting:
            gc.enable()
    if report.failed and call.excinfo is not None and call.excinfo.type is asyncio.CancelledError:
        report.sections.append(("why CancelledError?", CANCELLED_TEST_HINT))
    lab = _lab_of(item)
    if lab is None or report.skipped or (report.when != "call" and not report.failed):
        return report  # a skipped or expected-to-fail test says nothing about its lab
    status, stub = phase_status(report, call, lab)
    item.config.stash[_REPORT_KEY].record(lab, item.nodeid, status, stub_of=stub)
    return report


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> Generator[None]:
    # Outermost wrapper: the labs come after the tracebacks and the list of failures, right
    # above the final count, where a learner's eye lands.
    yield
    report = terminalreporter.config.stash[_REPORT_KEY]
    if not report.outcomes:
        return
    terminalreporter.section("labs")
    for lab in sorted(report.outcomes, key=_lab_order):
        terminalreporter.line(report.summary_of(lab))


@pytest.fixture
async def tasks() -> AsyncIterator[StartedTasks]:
    """Start tasks for one test; they are cancelled and awaited when it ends."""
    started = StartedTasks()
    yield started
    await started.close()

"""A pytest plugin for practice folders: a short failure summary instead of every traceback.

A fresh practice folder fails every test of its labs at once, and pytest would print each
traceback (thousands of lines) before the labs report. With this plugin the run ends with the
first failure of each lab in full, every other failure as one line, then the labs report.
``--full`` (or ``-v``) gives pytest's usual output, every failure in full.

Only the failure printed in full is formatted in full: pytest reads and parses the test file's
source for each frame of a traceback it formats, and on a fresh folder of checkpoint 06 (about
two hundred failures, a test file of three thousand lines) that took most of the run.

The practice folder's ``nox -s checkpoint`` loads it with ``-p practice.failure_summary``; the
generator copies this file unchanged into every practice folder.
"""

from __future__ import annotations

import re
from collections.abc import Generator

import pytest

Report = pytest.TestReport | pytest.CollectReport

# Failures outside any lab (a test without a lab tag, an import error of a test file).
NO_LAB = "no lab"

# The title of the summary section; the tests look for it.
TITLE = "failures: the first of each lab in full (--full shows all)"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full",
        action="store_true",
        default=False,
        help="print every failure in full, not the first of each lab (as -v does)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--full") or config.getoption("verbose") > 0:
        return  # pytest's own output, unchanged
    config.pluginmanager.register(FailureSummary(), "practice-failure-summary")


def _lab_order(lab: str) -> tuple[int, ...]:
    return (-1,) if lab == NO_LAB else tuple(map(int, lab.split(".")))


class FailureSummary:
    """Remember each test's lab, then write the summary in place of pytest's failure sections."""

    def __init__(self) -> None:
        self.lab_of: dict[str, str] = {}
        self.in_full: dict[str, tuple[str, str]] = {}  # lab -> (nodeid, phase) of its first

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            marker = item.get_closest_marker("lab")
            if marker is not None:
                self.lab_of[item.nodeid] = str(marker.args[0])

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        lab = self.lab_of.get(item.nodeid, NO_LAB)
        option = item.config.option
        chosen = option.tbstyle
        if lab in self.in_full:
            # Its lab's first failure is shown in full already, so this one is shown on one
            # line: pytest formats it with the exception alone, reading no source.
            option.tbstyle = "line"
        try:
            report = yield
        finally:
            option.tbstyle = chosen
        if report.failed and lab not in self.in_full:
            self.in_full[lab] = (report.nodeid, report.when)
        return report

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> Generator[None]:
        reporter = terminalreporter
        failures = [*reporter.stats.get("error", []), *reporter.stats.get("failed", [])]
        if failures:
            self._write(reporter, failures)
            # pytest's own sections would repeat every failure: its FAILURES and ERRORS
            # sections print nothing with --tb=no, and its one-line list drops f and E.
            reporter.config.option.tbstyle = "no"
            reporter.reportchars = re.sub("[fE]", "", reporter.reportchars)
        return (yield)

    def _write(self, reporter: pytest.TerminalReporter, failures: list[Report]) -> None:
        by_lab: dict[str, list[Report]] = {}
        for report in failures:
            by_lab.setdefault(self.lab_of.get(report.nodeid, NO_LAB), []).append(report)
        reporter.write_sep("=", TITLE)
        for lab in sorted(by_lab, key=_lab_order):
            first, *rest = _in_full_first(by_lab[lab], self.in_full.get(lab))
            name = "a test without a lab" if lab == NO_LAB else f"Lab {lab}"
            count = len(by_lab[lab])
            reporter.write_sep(
                "_",
                f"{name}: {first.head_line or first.nodeid} "
                f"({count} failure{'' if count == 1 else 's'})",
                red=True,
                bold=True,
            )
            for line in first.longreprtext.splitlines():
                reporter.write_line(line)
            for title, content in first.sections:  # captured output, "why CancelledError?"
                reporter.write_sep("-", title)
                reporter.write_line(content)
            if rest:
                reporter.write_line("")
                reporter.write_line(f"the other {len(rest)} of {name}, one line each:")
                for report in rest:
                    reporter.write_line(f"  {_one_line(report)}")


def _in_full_first(reports: list[Report], in_full: tuple[str, str] | None) -> list[Report]:
    """Return ``reports`` with the one formatted in full first, the others in their order."""
    return sorted(reports, key=lambda report: (report.nodeid, report.when) != in_full)


def _one_line(report: Report) -> str:
    """Return ``test_name - Error: first line of its message``."""
    crash = getattr(report.longrepr, "reprcrash", None)
    message = crash.message if crash is not None else report.longreprtext
    lines = message.strip().splitlines()
    first = lines[0] if lines else ""
    name = report.nodeid.rsplit("::", 1)[-1]
    text = f"{name} - {first}"
    return text if len(text) <= 160 else text[:157] + "..."

"""A pytest plugin for the scaffold runs: write each test's outcome and lab as JSON lines.

Loaded with ``-p lab_outcomes_plugin`` in the subprocess that runs a practice folder's tests;
the file named by ``PRACTICE_OUTCOMES`` receives one JSON object per line.

It also makes property tests cheap in these runs only. A property test stops at its first
failing example, unshrunk, and no example database is written into the folder: a stub fails on
every input, so shrinking its failure proves nothing, and it cost most of a fresh run's time.
And a property test runs at most ``PROOF_EXAMPLES`` examples: these runs prove that the folder
works (its layout, its stubs, its labs); the properties themselves are proved at full strength
by the course's own run of the same tests against the same reference.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Generator

import pytest
from hypothesis import Phase, settings

PROFILE = "practice-proofs"
PROOF_EXAMPLES = 10  # examples a property test runs at most in a scaffold run


def _leaves(error: BaseException) -> list[list[str]]:
    """Return [type name, message] of each exception an exception group holds, or of ``error``."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [[type(error).__name__, str(error)]]


def _write(record: dict[str, object]) -> None:
    with open(os.environ["PRACTICE_OUTCOMES"], "a", encoding="utf-8") as stream:
        stream.write(json.dumps(record) + "\n")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call" or report.failed:
        marker = item.get_closest_marker("lab")
        excinfo = call.excinfo
        _write(
            {
                "kind": "test",
                "nodeid": item.nodeid,
                "when": report.when,
                "outcome": report.outcome,
                "lab": None if marker is None else str(marker.args[0]),
                "exception": None if excinfo is None else excinfo.typename,
                "message": None if excinfo is None else str(excinfo.value),
                "leaves": [] if excinfo is None else _leaves(excinfo.value),
            }
        )
    return report


def pytest_configure() -> None:
    # Before any test module is imported: a test's own @settings inherits what it leaves out.
    unshrunk = tuple(phase for phase in Phase if phase not in {Phase.shrink, Phase.explain})
    settings.register_profile(PROFILE, phases=unshrunk, database=None)
    settings.load_profile(PROFILE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A test's own @settings(max_examples=...) outranks any profile, so the cap goes on the
    # settings that @settings left on the test function, as hypothesis's own @seed edits them.
    for item in items:
        obj = getattr(item, "obj", None)
        test = getattr(obj, "__func__", obj)  # a bound method takes no attribute: its function
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if isinstance(own, settings) and own.max_examples > PROOF_EXAMPLES:
            test._hypothesis_internal_use_settings = settings(own, max_examples=PROOF_EXAMPLES)  # type: ignore[union-attr]


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _write({"kind": "collect_error", "nodeid": report.nodeid, "message": str(report.longrepr)})


def pytest_sessionfinish() -> None:
    # Every module of the package, not only its __init__: a submodule missing from the folder
    # would otherwise be found by the course's editable install, and the run would look fine.
    files = sorted(
        str(module.__file__)
        for name, module in list(sys.modules.items())
        if (name == "harness" or name.startswith("harness.")) and module.__file__
    )
    _write({"kind": "harness", "files": files})

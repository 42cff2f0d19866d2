"""Prove, for every checkpoint N of the real catalog, that its practice folder works.

(a)+(c) the reference, copied back into N's fresh folder, passes the focused tests of 00..N
        there (the round trip; the course's own test run proves the reference in place);
(b)     the fresh folder passes 00..N-1; every lab test of N fails, each on the
        NotImplementedError of a stub of N's labs (not an import, syntax or assertion error; the
        stub met first may be another lab's of N, since a lab builds on the ones before it);
        N's untagged tests, which check code the folder gives (declarations, constants), pass;
        and the labs section reports each lab of N as not started;
(d)     no line of a lab's reference body appears in the folder;
(e)     every lab has tests tagged with it that really run, and no test names a foreign lab (the
        catalog refuses a lab without a hint; course/tests/test_catalog.py checks that each lab
        is named on its lesson page);
(f)     when N's last lab has modules of its own, a copy with every other module of N copied
        back fails exactly the last lab's tests of N's file, on its stub, and reports the others
        passing (the earlier checkpoints' files are proven by the fresh run and the round trip);
        with one lab, that copy is the fresh folder itself, and the proof still runs.

Each folder is made once and all of its runs happen in one session fixture, a few subprocesses
at a time; each test below only reads what they saw. Nothing here names a checkpoint: a new
checkpoint is covered by adding its manifest. ``PRACTICE_CHECKPOINTS=06`` (numbers separated
by commas) limits the proofs to those checkpoints, and ``PRACTICE_ROUND_TRIP=own`` runs only
N's own file in the round trip (the fresh run still proves 00..N-1 beside N's stubs);
``nox -s verify -- 06`` sets both, to answer in about a minute.
"""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from checkpoints.catalog import Checkpoint, find_checkpoint, load_catalog
from practice.regions import find_regions
from practice.scaffold import make_practice_folder
from practice.tests.scaffold_runs import ScaffoldRun, focused_test_paths, run_focused_tests

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()


def _selected(catalog: tuple[Checkpoint, ...], numbers: str) -> tuple[Checkpoint, ...]:
    """Return the checkpoints named in ``numbers`` ("06" or "05,06"); all of them when empty."""
    if not numbers.strip():
        return catalog
    chosen = [(number, find_checkpoint(catalog, number.strip())) for number in numbers.split(",")]
    unknown = [number for number, checkpoint in chosen if checkpoint is None]
    if unknown:
        known = ", ".join(c.number for c in catalog)
        raise ValueError(f"PRACTICE_CHECKPOINTS names no checkpoint {unknown}; known: {known}")
    return tuple(checkpoint for _, checkpoint in chosen if checkpoint is not None)


BY_NAME = {c.name: c for c in _selected(CATALOG, os.environ.get("PRACTICE_CHECKPOINTS", ""))}
ROUND_TRIP_OWN_FILE_ONLY = os.environ.get("PRACTICE_ROUND_TRIP", "all") == "own"

# The session fixture pays for every folder's runs inside the first test that asks for it.
pytestmark = pytest.mark.timeout(900)

# Lines too plain to betray a lab's answer, which may well appear elsewhere in the folder.
_TRIVIAL = re.compile(
    r"^(return|pass|continue|break|raise|yield|else:|try:|finally:|return None|return True"
    r"|return False|\.\.\.|[\]\)\}]+[,:]?|\"\"\"|'''|#.*)?$"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """What one checkpoint's practice folder looked like and what its two runs saw."""

    checkpoint: Checkpoint
    folder: Path  # the fresh folder, untouched after generation
    fresh: ScaffoldRun
    round_trip: ScaffoldRun  # a copy of the folder with N's reference modules copied back
    # A copy with every lab done but the last (its modules are the only stubs left), when the
    # last lab has modules of its own: the state of a learner about to start it.
    last_lab_left: ScaffoldRun | None


def _make(checkpoint: Checkpoint, base: Path) -> Path | Exception:
    """Make one checkpoint's folder; an error is kept for that checkpoint's tests."""
    try:
        return make_practice_folder(ROOT, checkpoint.number, base / checkpoint.name)
    except Exception as exc:  # reported by each test of this checkpoint, not by all of them
        return exc


def _modules_free_of_the_last_lab(checkpoint: Checkpoint) -> tuple[str, ...] | None:
    """Return the modules of N that hold no region of N's last lab, or None if none can be.

    With one lab, no module is done before the last lab starts: the answer is ``()``.
    """
    if not checkpoint.labs:
        return None
    labs = [lab.id for lab in checkpoint.labs]
    if len(labs) == 1:
        return ()

    def holds_the_last_lab(module: str) -> bool:
        source = (ROOT / "course/src" / module).read_text(encoding="utf-8")
        return any(region.lab == labs[-1] for region in find_regions(source, module, labs))

    free = tuple(module for module in checkpoint.modules if not holds_the_last_lab(module))
    return free if len(free) < len(checkpoint.modules) and free else None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Job:
    """One subprocess run of a folder's focused tests."""

    checkpoint: Checkpoint
    kind: str  # "fresh", "round_trip" or "last_lab_left"
    folder: Path
    files: tuple[str, ...]
    work: Path


def _prepare(
    checkpoint: Checkpoint, folder: Path | Exception, base: Path, done: tuple[str, ...] | None
) -> list[_Job] | Exception:
    """Make the copies one checkpoint's runs need and return those runs, not yet started."""
    if isinstance(folder, Exception):
        return folder
    files = tuple(focused_test_paths(CATALOG[: CATALOG.index(checkpoint) + 1]))

    def job(kind: str, where: Path, files: tuple[str, ...]) -> _Job:
        work = base / f"{checkpoint.name}-{kind}-run"
        return _Job(checkpoint=checkpoint, kind=kind, folder=where, files=files, work=work)

    def copy_with_reference(kind: str, modules: tuple[str, ...]) -> Path:
        copy = base / f"{checkpoint.name}-{kind}"
        shutil.copytree(folder, copy)
        for module in modules:
            shutil.copyfile(ROOT / "course/src" / module, copy / "course/src" / module)
        return copy

    try:
        jobs = [
            job("fresh", folder, files),
            job(
                "round_trip",
                copy_with_reference("round_trip", checkpoint.modules),
                files[-1:] if ROUND_TRIP_OWN_FILE_ONLY else files,
            ),
        ]
        if done is not None:  # only N's own file: the runs above prove the earlier ones
            jobs.append(
                job("last_lab_left", copy_with_reference("last_lab_left", done), files[-1:])
            )
    except Exception as exc:
        return exc
    return jobs


def _run(job: _Job) -> ScaffoldRun | Exception:
    try:
        return run_focused_tests(job.folder, job.files, job.work)
    except Exception as exc:
        return exc


def _evidence(
    checkpoint: Checkpoint,
    folder: Path | Exception,
    prepared: list[_Job] | Exception,
    runs: dict[tuple[str, str], ScaffoldRun | Exception],
) -> Evidence | Exception:
    """Put one checkpoint's runs together; the first error, if any, stands for them all."""
    if isinstance(folder, Exception):
        return folder
    if isinstance(prepared, Exception):
        return prepared
    seen = {job.kind: runs[(checkpoint.name, job.kind)] for job in prepared}
    for run in seen.values():
        if isinstance(run, Exception):
            return run
    fresh, trip = seen["fresh"], seen["round_trip"]
    last = seen.get("last_lab_left")
    assert isinstance(fresh, ScaffoldRun)
    assert isinstance(trip, ScaffoldRun)
    return Evidence(
        checkpoint=checkpoint,
        folder=folder,
        fresh=fresh,
        round_trip=trip,
        last_lab_left=last if isinstance(last, ScaffoldRun) else None,
    )


@pytest.fixture(scope="session")
def gathered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Evidence | Exception]]:
    base = tmp_path_factory.mktemp("practice-folders")
    chosen = list(BY_NAME.values())
    # Folders are made one after another, in this thread: CPython 3.11's ast module keeps its
    # recursion counter per interpreter, not per thread, so two ast.parse calls in threads can
    # fail with "AST constructor recursion depth mismatch". Only the test runs are parallel.
    folders = {c.name: _make(c, base) for c in chosen}
    done = {c.name: _modules_free_of_the_last_lab(c) for c in chosen}  # parses: this thread
    prepared = {c.name: _prepare(c, folders[c.name], base, done[c.name]) for c in chosen}
    # Every run of every folder is one job, the largest checkpoints' first, so that one
    # checkpoint's three runs (nox -s verify) take two workers too.
    jobs = [job for result in prepared.values() if isinstance(result, list) for job in result]
    jobs.sort(key=lambda job: job.checkpoint.number, reverse=True)
    workers = max(1, min(4, os.cpu_count() or 2))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        runs = dict(
            zip(((j.checkpoint.name, j.kind) for j in jobs), pool.map(_run, jobs), strict=True)
        )
    results = {c.name: _evidence(c, folders[c.name], prepared[c.name], runs) for c in chosen}
    yield results
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def proof(name: str, gathered: dict[str, Evidence | Exception]) -> Evidence:
    result = gathered[name]
    if isinstance(result, Exception):
        raise AssertionError(f"no practice folder for {name}: {result}") from result
    return result


def _own_outcomes(run: ScaffoldRun, checkpoint: Checkpoint) -> list[tuple[str, str | None, str]]:
    prefix = f"checkpoints/{checkpoint.name}/"
    return [(o.nodeid, o.lab, o.outcome) for o in run.outcomes if o.nodeid.startswith(prefix)]


checkpoint_names = pytest.mark.parametrize("name", list(BY_NAME))


@checkpoint_names
def test_reference_copied_back_passes_every_focused_test_through_the_checkpoint(
    name: str, proof: Evidence
) -> None:
    run = proof.round_trip
    assert run.returncode == 0, run.output
    assert run.collect_errors == ()
    assert run.outcomes
    assert run.failed() == []
    index = CATALOG.index(proof.checkpoint)
    for checkpoint in CATALOG[index if ROUND_TRIP_OWN_FILE_ONLY else 0 : index + 1]:
        assert _own_outcomes(run, checkpoint), f"no test of {checkpoint.name} ran"


@checkpoint_names
def test_fresh_folder_imports_its_own_harness(name: str, proof: Evidence) -> None:
    src = proof.folder / "course/src"
    files = [Path(file).resolve() for file in proof.fresh.harness_files]
    assert src / "__init__.py" in files, proof.fresh.output
    assert [file for file in files if file.parent != src] == []


@checkpoint_names
def test_fresh_folder_passes_the_earlier_checkpoints(name: str, proof: Evidence) -> None:
    assert proof.fresh.collect_errors == (), proof.fresh.output
    for earlier in CATALOG[: CATALOG.index(proof.checkpoint)]:
        outcomes = _own_outcomes(proof.fresh, earlier)
        assert outcomes, f"no test of {earlier.name} ran"
        assert [o for o in outcomes if o[2] != "passed"] == [], proof.fresh.output


@checkpoint_names
def test_fresh_folder_fails_every_lab_test_on_a_lab_stub(name: str, proof: Evidence) -> None:
    checkpoint = proof.checkpoint
    prefix = f"checkpoints/{checkpoint.name}/"
    own = [o for o in proof.fresh.outcomes if o.nodeid.startswith(prefix)]
    assert own, proof.fresh.output
    if checkpoint.mode == "observe":
        assert [o for o in own if o.outcome != "passed"] == []
        return
    stub = re.compile(rf"^Lab ({'|'.join(re.escape(lab.id) for lab in checkpoint.labs)}): ")
    # A lab's tests fail on a stub; an untagged test checks code the folder gives the learner
    # (record declarations, constants) and so passes from the start.
    wrong = [
        (o.nodeid.split("::")[-1], o.outcome, o.exception, (o.message or "")[:80])
        for o in own
        if o.lab is not None
        and (
            o.outcome != "failed"
            or not o.leaves
            or not all(
                kind == "NotImplementedError" and stub.match(text) for kind, text in o.leaves
            )
        )
    ]
    assert wrong == [], "these lab tests did not fail on a stub of this checkpoint's labs"
    given = [o.nodeid.split("::")[-1] for o in own if o.lab is None and o.outcome != "passed"]
    assert given == [], "these untagged tests check given code, so they must pass"
    for lab in checkpoint.labs:
        assert re.search(rf"^Lab {re.escape(lab.id)} +not started ", proof.fresh.output, re.M), (
            f"Lab {lab.id} is not reported as not started"
        )


@checkpoint_names
def test_with_only_the_last_lab_left_it_alone_reads_not_started(name: str, proof: Evidence) -> None:
    # A learner who finished every lab but the last runs this after each change: every test of
    # the last lab fails on its stub, the rest pass, and the report is there. (A learner met
    # an INTERNALERROR in this state on CPython 3.11; test_scaffold covers its cause.)
    run = proof.last_lab_left
    if run is None:
        # Said in the report (-rs): an observe checkpoint has no lab, and a last lab whose
        # modules all hold other labs' regions too cannot be left alone by copying modules.
        pytest.skip("no labs, or the last lab shares every module with the others")
    labs = [lab.id for lab in proof.checkpoint.labs]
    assert "INTERNALERROR" not in run.output
    assert run.returncode == 1, run.output[-3000:]
    last = [o for o in run.outcomes if o.lab == labs[-1]]
    assert last, f"no test of Lab {labs[-1]} ran"
    stub = re.compile(rf"^Lab {re.escape(labs[-1])}: ")
    # Each fails on the stub itself: not an assertion about something else, nor a timeout.
    not_on_the_stub = [
        (o.nodeid.split("::")[-1], o.outcome, (o.message or "")[:80])
        for o in last
        if o.outcome != "failed"
        or not o.leaves
        or not all(kind == "NotImplementedError" and stub.match(text) for kind, text in o.leaves)
    ]
    assert not_on_the_stub == []
    assert [o.nodeid for o in run.failed() if o.lab != labs[-1]] == []
    count = len({o.nodeid for o in last})
    tests = f"{count} of {count} tests fail" if count > 1 else "1 of 1 test fails"
    assert f"Lab {labs[-1]:<5} not started  ({tests})" in run.output
    for lab in labs[:-1]:
        assert re.search(rf"^Lab {re.escape(lab)} +passing ", run.output, re.M), lab


@checkpoint_names
def test_no_line_of_a_lab_body_appears_in_the_folder(name: str, proof: Evidence) -> None:
    checkpoint = proof.checkpoint
    if checkpoint.mode == "observe":
        return
    labs = [lab.id for lab in checkpoint.labs]
    for module in checkpoint.modules:
        source = (ROOT / "course/src" / module).read_text(encoding="utf-8")
        lines = [line.strip() for line in source.splitlines()]
        inside: set[int] = set()
        for region in find_regions(source, module, labs):
            inside.update(range(region.begin - 1, region.end))
        outside = Counter(line for i, line in enumerate(lines) if i not in inside)
        folder_lines = Counter(
            line.strip()
            for line in (proof.folder / "course/src" / module).read_text("utf-8").splitlines()
        )
        leaked = sorted(
            {
                lines[i]
                for i in inside
                if not _TRIVIAL.match(lines[i]) and folder_lines[lines[i]] > outside[lines[i]]
            }
        )
        assert leaked == [], f"course/src/{module}: lab lines left in the skeleton"
        text = (proof.folder / "course/src" / module).read_text("utf-8")
        assert not re.search(r"(?m)^\s*# (BEGIN|END) LAB ", text)
        assert "--8<--" not in text


@checkpoint_names
def test_every_lab_has_tagged_tests_that_run(name: str, proof: Evidence) -> None:
    checkpoint = proof.checkpoint
    tagged = Counter(lab for _, lab, _ in _own_outcomes(proof.round_trip, checkpoint))
    labs = {lab.id for lab in checkpoint.labs}
    for lab in checkpoint.labs:
        assert tagged[lab.id] > 0, f"no test of {checkpoint.name} is tagged Lab {lab.id}"
    if checkpoint.mode == "build":
        # Untagged tests (lab None) check given code; every tag names a lab of this checkpoint.
        assert set(tagged) - {None} <= labs, f"tests of {checkpoint.name} tagged with other labs"

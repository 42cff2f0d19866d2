"""Prove, for every checkpoint N of the real catalog, that its practice folder works.

(a)+(c) the reference, copied back into N's fresh folder, passes N's focused tests there (the
        round trip; the course's own test run proves the reference in place);
(b)     the fresh folder passes the earlier checkpoints' tests that can reach one of its
        skeletons (see below); every lab test of N fails, each on the
        NotImplementedError of a stub of N's labs (not an import, syntax or assertion error; the
        stub met first may be another lab's of N, since a lab builds on the ones before it);
        N's untagged tests, which check code the folder gives (declarations, constants), pass;
        and the labs section reports each lab of N as not started;
(d)     no line of a lab's reference body appears in the folder;
(e)     every lab has tests tagged with it that really run, and no test names a foreign lab (the
        catalog refuses a lab without a hint; course/tests/test_catalog.py checks that each lab
        is named on its lesson page);
(f)     a copy in which every lab of N is done but the last (N's modules are the reference with
        only the last lab's regions stubbed) passes every earlier lab, fails some of the last
        lab's tests, each on its stub, and reports it not started; with one lab, that copy is
        the fresh folder itself, and the proof reads the fresh run;
(g)     the fresh run ends with the folder's failure summary: the first failure of each lab in
        full, the others one line each, then the labs report.

Which earlier tests run in N's folder. The folder gives every earlier checkpoint's module byte
for byte; only N's modules (and a later module an earlier one imports, such as 01's records in
00's folder) are skeletons. An earlier test file whose imports never reach a skeleton runs, in
the folder, exactly the code the course's own run passes, with the same test file, conftest and
settings; and the folder's layout is proved for that file by its own checkpoint's round trip.
So the fresh run holds N's tests and only the earlier files that reach a skeleton (00's in 01's
folder): each folder costs about the same however many checkpoints come before it, where
running 00..N-1 in every folder grew with the square of the catalog. The reach is read from the
import statements (``import_reach``) and checked against what each round trip really imported.
The round trip and the last-lab copy run N's file alone: the fresh run covers the rest. When
there is a last-lab copy, every test but the last lab's passes in it, with the reference of every
module but the last lab's; so the round trip, which differs from it by those modules alone, runs
only the last lab's tests (``--lab``), and (a) is the two runs together. Where a copy would hold
the same files as a run already made (an observe checkpoint's round trip, a one-lab checkpoint's
last-lab copy), the proof reads that run.

Every run loads ``lab_outcomes_plugin``, which also makes hypothesis stop at a property test's
first failure (no shrinking, no example database): a stub fails on any input, so shrinking its
failure proves nothing. It also runs at most ten examples of a property test: these runs prove
the folder, and the course's own run proves the properties with all of their examples. A
learner's own ``nox -s checkpoint`` never loads the plugin.

Each folder is made once and all of its runs happen in one fixture, one after another, each a
fresh pytest forked from a warm one (``scaffold_runs.FolderRunner``); each test below only reads
what they saw. Nothing here names a checkpoint: a new
checkpoint is covered by adding its manifest.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from checkpoints.catalog import Checkpoint, load_catalog
from practice.failure_summary import TITLE
from practice.pages import LEFT_OUT
from practice.regions import find_regions
from practice.scaffold import make_practice_folder
from practice.skeleton import make_skeleton
from practice.tests.import_reach import harness_reach
from practice.tests.scaffold_runs import FolderRunner, ScaffoldRun, focused_test_paths

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()
BY_NAME = {c.name: c for c in CATALOG}

# The first test of a checkpoint pays for its folder's runs. Under pytest-xdist (--dist
# loadgroup) all tests of one checkpoint go to one worker (conftest.py), so each folder is made
# once.
# `nox -s proofs` runs them (the `proof` mark); `nox -s tests` leaves them out.
pytestmark = [pytest.mark.timeout(900), pytest.mark.proof]

# The plugins a practice folder's `nox -s checkpoint` loads.
FOLDER_PLUGINS = ("-p", "practice.failure_summary")

# Lines too plain to betray a lab's answer, which may well appear elsewhere in the folder.
_TRIVIAL = re.compile(
    r"^(return|pass|continue|break|raise|yield|else:|try:|finally:|return None|return True"
    r"|return False|while True:|\.\.\.|[\]\)\}]+[,:]?|\"\"\"|'''|#.*)?$"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """What one checkpoint's practice folder looked like and what its two runs saw."""

    checkpoint: Checkpoint
    folder: Path  # the fresh folder, untouched after generation
    skeletons: frozenset[str]  # the folder's course/src modules that are not the course's
    earlier_run: tuple[Checkpoint, ...]  # the earlier checkpoints whose tests reach a skeleton
    reach: frozenset[str]  # what N's test file reaches by imports in the round-trip copy
    fresh: ScaffoldRun
    round_trip: ScaffoldRun  # a copy of the folder with N's reference modules copied back
    # (only the last lab's tests when last_lab_left ran: it passes all the others)
    # A copy with every lab done but the last (its regions are the only stubs left): the state
    # of a learner about to start it. None for a checkpoint without labs.
    last_lab_left: ScaffoldRun | None


def _make(checkpoint: Checkpoint, base: Path) -> Path | Exception:
    """Make one checkpoint's folder; an error is kept for that checkpoint's tests."""
    try:
        return make_practice_folder(ROOT, checkpoint.number, base / checkpoint.name)
    except Exception as exc:  # reported by each test of this checkpoint, not by all of them
        return exc


def _with_only_the_last_lab_left(checkpoint: Checkpoint) -> dict[str, str] | None:
    """Return N's modules as a learner has them before the last lab, or None without labs.

    Each module is the reference with the markers of every other lab dropped, so their code
    stays, and only the last lab's regions made into stubs, as the generator makes them.
    """
    if not checkpoint.labs:
        return None
    ids = [lab.id for lab in checkpoint.labs]
    last = checkpoint.labs[-1]
    modules = {}
    for module in checkpoint.modules:
        path = f"course/src/{module}"
        source = (ROOT / path).read_text(encoding="utf-8")
        others = {
            line
            for region in find_regions(source, path, ids)
            if region.lab != last.id
            for line in (region.begin, region.end)
        }
        lines = source.splitlines(keepends=True)
        kept = "".join(line for number, line in enumerate(lines, 1) if number not in others)
        modules[module] = make_skeleton(
            kept, path, summaries={last.id: last.summary}, page=checkpoint.page
        ).text
    return modules


def _skeletons(folder: Path) -> frozenset[str]:
    """Return the modules of ``folder``'s course/src that are not the course's, byte for byte."""
    reference = ROOT / "course" / "src"
    return frozenset(
        module.name
        for module in (folder / "course" / "src").glob("*.py")
        if not (reference / module.name).is_file()
        or module.read_bytes() != (reference / module.name).read_bytes()
    )


def _reach(folder: Path, checkpoint: Checkpoint) -> frozenset[str]:
    """Return the harness modules that ``checkpoint``'s tests reach in ``folder``, by imports."""
    tests = folder / "checkpoints"
    # The conftest and support modules are loaded with every test file.
    starts = [tests / checkpoint.name / checkpoint.test_file.name, *sorted(tests.glob("*.py"))]
    return harness_reach(starts, folder / "course" / "src")


def _run(
    runner: FolderRunner,
    checkpoint: Checkpoint,
    folder: Path | Exception,
    base: Path,
    left: dict[str, str] | None,
) -> Evidence | Exception:
    """Run one folder fresh, with the reference copied back in, and with ``left`` written in."""
    if isinstance(folder, Exception):
        return folder
    try:
        skeletons = _skeletons(folder)
        earlier = tuple(
            c for c in CATALOG[: CATALOG.index(checkpoint)] if _reach(folder, c) & skeletons
        )
        own = focused_test_paths([checkpoint])
        files = [*focused_test_paths(earlier), *own]
        # An observe checkpoint's folder holds its modules as they are: the round trip's copy
        # would be the fresh folder again.
        given_whole = not skeletons & set(checkpoint.modules)
        trip = folder if given_whole else base / f"{checkpoint.name}-round-trip"
        if not given_whole:
            shutil.copytree(folder, trip)
            for module in checkpoint.modules:
                shutil.copyfile(ROOT / "course/src" / module, trip / "course/src" / module)
        reach = _reach(trip, checkpoint)
        # With one lab, nothing is done before it: that copy would be the fresh folder again.
        one_lab = len(checkpoint.labs) == 1
        partial = folder if one_lab else base / f"{checkpoint.name}-last-lab-left"
        if left is not None and not one_lab:
            shutil.copytree(folder, partial)
            for module, text in left.items():
                (partial / "course/src" / module).write_text(text, encoding="utf-8")
        fresh = runner.run(folder, files, base / f"{folder.name}-run", FOLDER_PLUGINS)
        only_the_last = () if left is None else ("--lab", checkpoint.labs[-1].id)
        round_trip = (
            fresh
            if given_whole
            else runner.run(trip, own, base / f"{trip.name}-run", only_the_last)
        )
        last_lab_left = None
        if one_lab:
            last_lab_left = fresh  # the same folder and tests: the fresh run shows it
        elif left is not None:
            last_lab_left = runner.run(partial, own, base / f"{partial.name}-run")
        return Evidence(
            checkpoint=checkpoint,
            folder=folder,
            skeletons=skeletons,
            earlier_run=earlier,
            reach=reach,
            fresh=fresh,
            round_trip=round_trip,
            last_lab_left=last_lab_left,
        )
    except Exception as exc:
        return exc


@pytest.fixture(scope="session")
def folders_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    base = tmp_path_factory.mktemp("practice-folders")
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def gathered() -> dict[str, Evidence | Exception]:
    """What each checkpoint's folder showed, filled in by ``proof`` one checkpoint at a time."""
    return {}


@pytest.fixture
def proof(
    name: str,
    gathered: dict[str, Evidence | Exception],
    folders_base: Path,
    folder_runner: FolderRunner,
) -> Evidence:
    # One checkpoint at a time, so the progress line moves as each folder is done, and
    # pytest-xdist can give two checkpoints to two workers (each checkpoint is one unit of work).
    if name not in gathered:
        checkpoint = BY_NAME[name]
        folder = _make(checkpoint, folders_base)
        left = _with_only_the_last_lab_left(checkpoint)
        gathered[name] = _run(folder_runner, checkpoint, folder, folders_base, left)
    result = gathered[name]
    if isinstance(result, Exception):
        raise AssertionError(f"no practice folder for {name}: {result}") from result
    return result


def _imported_later_modules(proof: Evidence) -> set[str]:
    """Return the modules of later checkpoints that the folder holds (given as skeletons)."""
    later = CATALOG[CATALOG.index(proof.checkpoint) + 1 :]
    return {m for c in later for m in c.modules if (proof.folder / "course/src" / m).is_file()}


def _own(name: str) -> str:
    """Return the start of the ids of checkpoint ``name``'s own tests."""
    return f"checkpoints/{name}/"


def _own_outcomes(run: ScaffoldRun, checkpoint: Checkpoint) -> list[tuple[str, str | None, str]]:
    prefix = _own(checkpoint.name)
    return [(o.nodeid, o.lab, o.outcome) for o in run.outcomes if o.nodeid.startswith(prefix)]


# The parameter is the checkpoint's name: conftest.py keeps the tests of one name on one worker.
# The latest checkpoint first: its folder costs the most, and pytest-xdist deals out units of
# work of one size in the order they were collected, so the longest starts first and the short
# ones fill in around it, instead of the longest starting last and running on alone.
checkpoint_names = pytest.mark.parametrize("name", list(reversed(BY_NAME)))


@checkpoint_names
def test_reference_copied_back_passes_the_checkpoints_focused_tests(
    name: str, proof: Evidence
) -> None:
    run = proof.round_trip
    assert run.returncode == 0, run.output
    assert run.collect_errors == ()
    assert run.outcomes
    assert run.failed() == []
    assert _own_outcomes(run, proof.checkpoint), f"no test of {name} ran"
    if proof.last_lab_left is not None:
        # The rest of N's tests passed in the last-lab copy (tested below): together, all.
        last = proof.checkpoint.labs[-1].id
        assert {o.lab for o in run.outcomes} == {last}
        both = (*run.outcomes, *proof.last_lab_left.outcomes)
        ran = {o.nodeid for o in both if o.nodeid.startswith(_own(name))}
        assert ran == {o.nodeid for o in proof.fresh.outcomes if o.nodeid.startswith(_own(name))}


@checkpoint_names
def test_fresh_folder_imports_its_own_harness(name: str, proof: Evidence) -> None:
    src = proof.folder / "course/src"
    files = [Path(file).resolve() for file in proof.fresh.harness_files]
    assert src / "__init__.py" in files, proof.fresh.output
    assert [file for file in files if file.parent != src] == []


@checkpoint_names
def test_fresh_folder_passes_the_earlier_tests_that_reach_its_skeletons(
    name: str, proof: Evidence
) -> None:
    assert proof.fresh.collect_errors == (), proof.fresh.output
    # Every skeleton is one of N's modules or one an earlier module imports; the rest is given.
    assert proof.skeletons <= {*proof.checkpoint.modules, *_imported_later_modules(proof)}
    for earlier in CATALOG[: CATALOG.index(proof.checkpoint)]:
        outcomes = _own_outcomes(proof.fresh, earlier)
        if earlier not in proof.earlier_run:
            # Not run here: it reaches no skeleton, so it ran this very code in the course's run.
            assert not _reach(proof.folder, earlier) & proof.skeletons
            assert outcomes == []
            continue
        assert outcomes, f"no test of {earlier.name} ran"
        assert [o for o in outcomes if o[2] != "passed"] == [], proof.fresh.output


@checkpoint_names
def test_the_import_scan_finds_every_harness_module_the_tests_load(
    name: str, proof: Evidence
) -> None:
    # The reach decides which earlier tests a folder runs; here a real run checks it.
    loaded = {Path(file).name for file in proof.round_trip.harness_files}
    assert loaded, proof.round_trip.output
    assert loaded - proof.reach == set(), "loaded by the tests, missed by the import scan"


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
    # A learner who finished every lab but the last runs this after each change: the earlier
    # labs pass, the last lab's tests that fail fail on its stub, and the report is there. (A
    # learner met an INTERNALERROR in this state on CPython 3.11; test_scaffold covers its
    # cause.) A hardening lab may have tests that already pass here: they hold the earlier
    # labs' code to its promises under hostile conditions, and need none of the last lab's.
    run = proof.last_lab_left
    if run is None:
        pytest.skip("a checkpoint without labs")
    labs = [lab.id for lab in proof.checkpoint.labs]
    assert "INTERNALERROR" not in run.output
    assert run.returncode == 1, run.output[-3000:]
    last = [o for o in run.outcomes if o.lab == labs[-1]]
    assert last, f"no test of Lab {labs[-1]} ran"
    stub = re.compile(rf"^Lab {re.escape(labs[-1])}: ")
    failing = [o for o in last if o.outcome != "passed"]
    assert failing, f"every test of Lab {labs[-1]} passes without its code"
    # Each failure is on the stub itself: not an assertion about something else, nor a timeout.
    not_on_the_stub = [
        (o.nodeid.split("::")[-1], o.outcome, (o.message or "")[:80])
        for o in failing
        if o.outcome != "failed"
        or not o.leaves
        or not all(kind == "NotImplementedError" and stub.match(text) for kind, text in o.leaves)
    ]
    assert not_on_the_stub == []
    assert [o.nodeid for o in run.failed() if o.lab != labs[-1]] == []
    count = len({o.nodeid for o in last})
    fail = len({o.nodeid for o in failing})
    tests = f"{fail} of {count} tests fail" if count > 1 else "1 of 1 test fails"
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
    # The last-lab copy, when there is one, runs every test of N (the round trip, the last lab's).
    run = proof.round_trip if proof.last_lab_left is None else proof.last_lab_left
    tagged = Counter(lab for _, lab, _ in _own_outcomes(run, checkpoint))
    labs = {lab.id for lab in checkpoint.labs}
    for lab in checkpoint.labs:
        assert tagged[lab.id] > 0, f"no test of {checkpoint.name} is tagged Lab {lab.id}"
    if checkpoint.mode == "build":
        # Untagged tests (lab None) check given code; every tag names a lab of this checkpoint.
        assert set(tagged) - {None} <= labs, f"tests of {checkpoint.name} tagged with other labs"


@checkpoint_names
def test_fresh_run_ends_with_a_short_failure_summary_then_the_labs(
    name: str, proof: Evidence
) -> None:
    out = proof.fresh.output
    assert "FAILURES" not in out  # no traceback of every failure
    failed_labs = sorted({o.lab for o in proof.fresh.failed() if o.lab is not None})
    if not proof.fresh.failed():
        assert TITLE not in out
        return
    assert TITLE in out
    # One traceback header per failing lab, then each other failure on one line of its own.
    for lab in failed_labs:
        assert len(re.findall(rf"^_* ?Lab {re.escape(lab)}: ", out, re.M)) == 1, lab
    assert out.index(TITLE) < out.index("= labs =")
    summary = out[out.index(TITLE) : out.index("= labs =")]
    assert len(summary.splitlines()) < 60 * len(failed_labs) + len(proof.fresh.failed())


def _lab_lines(checkpoint: Checkpoint) -> set[str]:
    """Return the non-trivial lines of every lab region of ``checkpoint``'s modules."""
    labs = [lab.id for lab in checkpoint.labs]
    found: set[str] = set()
    for module in checkpoint.modules:
        source = (ROOT / "course/src" / module).read_text(encoding="utf-8")
        lines = source.splitlines()
        for region in find_regions(source, module, labs):
            found.update(line.strip() for line in lines[region.begin : region.end - 1])
    return {line for line in found if not _TRIVIAL.match(line)}


@checkpoint_names
def test_the_folder_has_its_lesson_pages_and_no_lab_answer_leaks_through_them(
    name: str, proof: Evidence
) -> None:
    included = CATALOG[: CATALOG.index(proof.checkpoint) + 1]
    pages = {c.page: proof.folder / "docs" / c.page for c in included}
    for page, path in pages.items():
        assert path.is_file(), f"docs/{page} is missing from the folder"
        text = path.read_text(encoding="utf-8")
        assert "--8<--" not in text, f"docs/{page} kept an include"
    # The stub messages and hints name the page by this path, from the folder's root.
    assert (proof.folder / "docs" / proof.checkpoint.page).is_file()
    # A lab line may show on a page only where the folder's code shows it too.
    given = {
        line.strip()
        for path in proof.folder.rglob("*")
        if path.is_file() and path.suffix in {".py", ".json", ".jsonl"}
        for line in path.read_text(encoding="utf-8").splitlines()
    }
    shown = {
        line.strip()
        for path in pages.values()
        for line in path.read_text(encoding="utf-8").splitlines()
    }
    leaked = sorted((_lab_lines(proof.checkpoint) & shown) - given)
    assert leaked == [], f"lab lines shown on the folder's pages: {leaked[:5]}"
    if proof.checkpoint.labs:
        page = pages[proof.checkpoint.page].read_text(encoding="utf-8")
        assert LEFT_OUT in page


@checkpoint_names
def test_learning_guide_describes_this_folder(name: str, proof: Evidence) -> None:
    checkpoint = proof.checkpoint
    guide = (proof.folder / "LEARNING.md").read_text(encoding="utf-8")
    assert "$" not in guide
    assert not re.search(r"checkpoints (\d\d) (to|\N{EN DASH}) \1\b", guide)
    assert "no earlier code" not in guide
    # Every module in the folder is named, and said to be what it is.
    for module in sorted((proof.folder / "course/src").glob("*.py")):
        if module.name != "__init__.py":
            assert f"`course/src/{module.name}`" in guide, module.name
    if checkpoint.mode == "observe":
        assert "*Build it*" not in guide
        assert "labs section" not in guide
        assert "nox -s hint" not in guide
    else:
        assert "*Build it* sections explain each lab" in guide
        for lab in checkpoint.labs:
            assert f"**Lab {lab.id}**" in guide

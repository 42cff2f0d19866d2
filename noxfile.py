"""The course's commands: what learners and instructors run, and what CI runs.

Learners:    nox -s checkpoint -- 06        the focused tests of one checkpoint
             nox -s practice -- 06 DIR      a practice folder to rebuild checkpoint 06 in
             nox -s hint -- 6.2             the hint of one lab
Everyone:    nox -s tests | proofs | lint | docs | docs_check | bench
Instructors: nox -s new_checkpoint -- 07 agent_loop "Agent loop" | verify -- 07 | catalog
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import nox

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from checkpoints.catalog import Checkpoint, find_checkpoint, load_catalog  # noqa: E402
from practice.commands import CommandError, checkpoint_named  # noqa: E402
from practice.commands import checkpoint_usage as usage_of_checkpoint  # noqa: E402

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["tests", "lint", "docs"]

PYPROJECT = nox.project.load_toml("pyproject.toml")


def install_course(session: nox.Session) -> None:
    """Install the test tools and the course itself, editable, so edits show without reinstall."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "test"))
    session.install("-e", ".")


def split_options(args: list[str]) -> tuple[list[str], list[str]]:
    """Split ``args`` into the checkpoint arguments and the pytest options from the first ``-``."""
    first = next((i for i, arg in enumerate(args) if arg.startswith("-")), len(args))
    return args[:first], args[first:]


def checkpoint_usage(catalog: tuple[Checkpoint, ...]) -> str:
    """Return the usage of ``nox -s checkpoint`` in the course, listing the checkpoints."""
    return usage_of_checkpoint(catalog, practice_folder=False)


def chosen_checkpoints(args: list[str], catalog: tuple[Checkpoint, ...]) -> tuple[Checkpoint, ...]:
    """Return the checkpoints named by ``args``: exactly one number, or ``all``.

    Raises CommandError, whose problem says what was wrong ("no checkpoint 99"), when ``args``
    name none.
    """
    found = checkpoint_named(catalog, args, checkpoint_usage(catalog))
    return catalog if found is None else (found,)


def verify_usage(catalog: tuple[Checkpoint, ...]) -> str:
    """Return the usage of ``nox -s verify``, listing the checkpoints."""
    return "\n".join(
        [
            "usage: nox -s verify -- NN [pytest options]",
            "",
            "checks all of checkpoint NN: its focused tests, practice-folder proofs and pages",
            "",
            "checkpoints:",
            *(f"  {c.number}  {c.title}" for c in catalog),
        ]
    )


def checkpoint_to_verify(args: list[str], catalog: tuple[Checkpoint, ...]) -> Checkpoint:
    """Return the one checkpoint ``args`` names (verify checks one, so ``all`` names none).

    Raises CommandError, whose problem says what was wrong ("no checkpoint 99"), when ``args``
    name none.
    """
    usage = verify_usage(catalog)
    if len(args) != 1:
        got = f"; got {' '.join(args)}" if args else ""
        raise CommandError(f"expected one checkpoint number, such as 06{got}", usage)
    found = find_checkpoint(catalog, args[0])
    if found is None:
        raise CommandError(f"no checkpoint {args[0]}", usage)
    return found


def usage_error(session: nox.Session, error: CommandError) -> NoReturn:
    """Print a command's usage, then stop the session with the one-line problem."""
    # The usage goes out as it is; nox's abort line gets only the problem ("no lab 9.9").
    print(error.usage, file=sys.stderr)
    session.error(error.problem)


@nox.session(default=False, tags=["learner"])
def checkpoint(session: nox.Session) -> None:
    """Run exactly one checkpoint's focused tests: nox -s checkpoint -- 06 (or -- all)."""
    catalog = load_catalog()
    names, options = split_options(session.posargs)
    try:
        chosen = chosen_checkpoints(names, catalog)
    except CommandError as exc:
        usage_error(session, exc)
    install_course(session)
    files: list[str] = []
    for selected in chosen:
        files.append(str(selected.test_file.relative_to(ROOT)))
        session.log(f"checkpoint {selected.number} ({selected.title}): {files[-1]}")
    # One run, so that an option such as --lab 6.2 applies to the files together.
    session.run("pytest", *files, *options)


@nox.session
def tests(session: nox.Session) -> None:
    """Run every checkpoint's focused tests and the repository's own tests, but the proofs."""
    install_course(session)
    # The practice-folder proofs (marked `proof`) are `nox -s proofs`: they build and run a
    # folder for every checkpoint, and would more than double this session's time.
    run_on_every_core(session, "-m", "not proof", *session.posargs)


@nox.session
def proofs(session: nox.Session) -> None:
    """Prove every checkpoint's practice folder (practice/tests/test_course_scaffolds.py)."""
    install_course(session)
    run_on_every_core(session, "-m", "proof", "practice/tests", *session.posargs)


def run_on_every_core(session: nox.Session, *arguments: str) -> None:
    """Run pytest on as many workers as cores (pytest-xdist): two on a 2-core machine.

    Each checkpoint's practice-folder proofs stay on one worker (--dist loadgroup, with the
    units of work of practice/tests/conftest.py: xdist's own groups fail under pytest 9).
    `-- -n 0` after the session's name runs in one process, as plain pytest does.
    """
    # pytest rewrites the asserts of every module of a plugin's package (all of hypothesis) and
    # caches the result beside it, unless PYTHONDONTWRITEBYTECODE is set, as some machines set
    # it; then each worker rewrites them again. Unset (None) for this run, the first process
    # writes the cache and the others read it.
    session.run(
        "pytest",
        "-n",
        "auto",
        "--dist",
        "loadgroup",
        *arguments,
        env={"PYTHONDONTWRITEBYTECODE": None},
    )


@nox.session
def lint(session: nox.Session) -> None:
    """Check style, formatting and types (mypy --strict) of the course, tests and generator."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "lint"))
    session.install(*PYPROJECT["project"]["dependencies"])  # mypy reads the imports of harness
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    # mypy cannot follow setuptools' editable import finder, so it reads the package through
    # a folder that holds one link, `harness` -> course/src, made here and never committed.
    typing_root = Path(session.create_tmp()) / "mypy_path"
    typing_root.mkdir(exist_ok=True)
    link = typing_root / "harness"
    if not link.is_symlink():
        link.symlink_to(ROOT / "course" / "src", target_is_directory=True)
    session.run(
        "mypy",
        "-p",
        "harness",
        env={"MYPYPATH": str(typing_root)},
    )
    session.run(
        "mypy",
        "checkpoints",
        "practice",
        "course/tests",
        "authoring",
        "noxfile.py",
        env={"MYPYPATH": str(typing_root)},
    )


@nox.session
def docs(session: nox.Session) -> None:
    """Build the site strictly: a broken link, anchor or include fails the build."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "docs"))
    # Pasted code, a missing or empty snippet section, a translation whose sections differ from
    # its English page, or a nav out of step with the manifests.
    session.run("python", "docs_tools/check_docs.py")
    session.run("mkdocs", "build", "--strict", *session.posargs, env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Time a tool call and an agent loop's turn against baselines and frameworks (a report)."""
    # The frameworks are installed here only, never in the course's own environments.
    session.install(*nox.project.dependency_groups(PYPROJECT, "bench"))
    session.install("-e", ".")
    session.run("python", "bench/run.py", *session.posargs)


@nox.session(python=False, default=False, tags=["learner"])
def practice(session: nox.Session) -> None:
    """Make a practice folder to rebuild one checkpoint in: nox -s practice -- 06 DIR."""
    # Standard library only, in nox's own interpreter: no environment, nothing downloaded.
    from practice.cli import main

    status = main(session.posargs, invoked_from=Path(session.invoked_from))
    if status != 0:
        session.error("no practice folder was made (see the message above)")


@nox.session(python=False, default=False, tags=["learner"])
def hint(session: nox.Session) -> None:
    """Print the hint of one lab from its manifest: nox -s hint -- 6.2."""
    from practice.commands import hint_text

    try:
        text = hint_text(load_catalog(), session.posargs)
    except CommandError as exc:
        usage_error(session, exc)
    print(text)


@nox.session(default=False)
def docs_check(session: nox.Session) -> None:
    """Open the built site in headless Chromium with the network off: diagrams, search, requests."""
    import os
    import shutil

    # Debian's Chromium, driven by the playwright package: `playwright install` is never run.
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium")
    if chromium is None:
        session.error("needs Chromium on PATH (Debian: apt-get install chromium) or $CHROMIUM")
    session.install(*nox.project.dependency_groups(PYPROJECT, "docs_check"))
    session.install(*nox.project.dependency_groups(PYPROJECT, "test"))
    session.run("python", "docs_tools/vendor_mermaid.py", "check")
    # The check's own measurements, each on a small broken page (skipped in `nox -s tests`).
    session.run("pytest", "course/tests/test_site.py", "-q", "-p", "no:cacheprovider")
    site = Path(session.create_tmp()) / "site"
    session.run(
        "mkdocs", "build", "--strict", "--site-dir", str(site), env={"NO_MKDOCS_2_WARNING": "1"}
    )
    session.run(
        "python", "docs_tools/site_check.py", str(site), "--chromium", chromium, *session.posargs
    )


def install_pi_packages(session: nox.Session, folder: Path) -> bool:
    """`npm ci` the pinned Pi SDK into folder/node_modules when the lock changed; False: no Node."""
    import shutil

    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        session.warn("Node.js and npm are not on PATH: the Pi SDK claims are skipped")
        return False
    installed = folder / "node_modules" / ".package-lock.json"
    lock = folder / "package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return True
    # --ignore-scripts: the probes need no package's install script (nor a binary it downloads).
    session.run(
        npm,
        "ci",
        "--prefix",
        str(folder),
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        external=True,
    )
    return True


@nox.session(default=False)
def compare(session: nox.Session) -> None:
    """Check the pages' claims about real frameworks against the pinned releases (compare/)."""
    # The frameworks are installed here only, each at the release pinned in the `compare` group
    # (Python) or compare/pi/package.json (the Pi SDK, through npm; skipped without Node).
    session.install(*nox.project.dependency_groups(PYPROJECT, "compare"))
    install_pi_packages(session, ROOT / "compare" / "pi")
    # One line per claim at the end: HOLDS, DOES NOT HOLD or SKIPPED, with the probe to open.
    # A probe file or test named in the arguments runs alone; otherwise every probe runs.
    named = any(arg.startswith("compare/") for arg in session.posargs)
    session.run(
        "pytest", "-c", "compare/pytest.ini", *([] if named else ["compare"]), *session.posargs
    )


@nox.session(python=False, default=False)
def catalog(session: nox.Session) -> None:
    """Rewrite README's map and roadmap sentence, the nav and forward links from the manifests."""
    # Standard library only, in nox's own interpreter: the same as python checkpoints/catalog.py.
    from checkpoints.catalog import main

    if main(["--check" if session.posargs == ["--check"] else "--write"]) != 0:
        session.error("the catalog has problems (see the messages above)")


@nox.session(default=False)
def verify(session: nox.Session) -> None:
    """Check all of one checkpoint: nox -s verify -- 06 (tests, practice folder, pages)."""
    from checkpoints.catalog import file_problems

    catalog = load_catalog()
    names, options = split_options(session.posargs)
    try:
        selected = checkpoint_to_verify(names, catalog)
    except CommandError as exc:
        usage_error(session, exc)
    problems = file_problems(catalog, ROOT)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        session.error("the checkpoints name files that do not exist (see above)")
    install_course(session)
    # The page checks first, they take a second: snippets, translations, nav, derived lists and
    # the promises earlier pages make (listed for review while this page is a draft).
    session.run("python", "docs_tools/check_docs.py")
    # Then, in one pytest run (-k keeps what names this checkpoint): its focused tests, its
    # catalog and page tests, and the practice-folder proofs of this checkpoint alone.
    session.run(
        "pytest",
        str(selected.test_file.relative_to(ROOT)),
        "course/tests/test_catalog.py",
        "course/tests/test_docs.py",
        "practice/tests/test_course_scaffolds.py",
        "-k",
        selected.name,
        *options,
    )


@nox.session(python=False, default=False)
def new_checkpoint(session: nox.Session) -> None:
    """Start a checkpoint: nox -s new_checkpoint -- 07 agent_loop "Agent loop"."""
    # Standard library only, in nox's own interpreter: no environment, nothing downloaded.
    from authoring.new_checkpoint import main

    if main(session.posargs) != 0:
        session.error("no checkpoint was started (see the message above)")


@nox.session(default=False, tags=["learner"])
def serve(session: nox.Session) -> None:
    """Preview the site as you edit it, on this machine only: nox -s serve (or -- PORT)."""
    port = session.posargs[0] if session.posargs else "8000"
    if len(session.posargs) > 1 or not port.isdigit() or not 0 < int(port) < 65536:
        given = " ".join(session.posargs)
        session.error(f"expected nothing or one port number, such as 8001; got {given}")
    session.install(*nox.project.dependency_groups(PYPROJECT, "docs"))
    # 127.0.0.1, never every interface: a preview is for the person at this machine.
    address = f"127.0.0.1:{port}"
    session.log(f"the site is at http://{address}/ (it rebuilds when a page changes; Ctrl+C stops)")
    # mkdocs serve answers under site_url's path; the preview's own address puts it at the root.
    env = {"NO_MKDOCS_2_WARNING": "1", "SITE_URL": f"http://{address}/"}
    session.run("mkdocs", "serve", "--dev-addr", address, env=env)

"""Write a practice folder for one checkpoint, all at once or not at all.

Theory of operation
-------------------
``make_practice_folder(course, "06", DIR)`` reads the catalog, refuses a bad destination before
writing anything, then builds the whole folder in a staging directory beside ``DIR`` and renames
it into place, so a failure half way leaves nothing behind. The folder mirrors the course's
layout, so the same relative paths and the same command work in it:

- ``course/src/``: ``__init__.py``, ``py.typed`` and the modules of checkpoints before the target
  verbatim; the target's modules as skeletons (``practice.skeleton``), or verbatim when the
  target is an observe checkpoint; the module of a later checkpoint that one of these imports,
  as a skeleton (00's prologue shows 01's records); ``course/fixtures/`` when a copied file
  mentions it;
- ``checkpoints/``: its top-level modules (``catalog.py``, ``conftest.py``, ``support.py``)
  and the folders of checkpoints 00 up to the target (manifest and focused test), unchanged;
- ``pyproject.toml`` (``course/src`` is the package ``harness``, the course's test tools and
  pytest settings), ``noxfile.py``, ``practice/commands.py`` and ``practice/failure_summary.py``,
  ``LEARNING.md``, ``.gitignore``;
- ``docs/checkpoints/``: the lesson pages of 00 up to the target, their listings filled in
  from the given code only (``practice.pages``).

Nothing here knows any particular checkpoint: everything comes from the manifests and markers.
"""

from __future__ import annotations

__all__ = [
    "CourseTree",
    "PracticeError",
    "make_practice_folder",
    "practice_usage",
    "render_pyproject",
]

import ast
import secrets
import shutil
import string
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from checkpoints.catalog import Checkpoint, ManifestError, find_checkpoint, load_catalog
from practice.pages import render_page
from practice.regions import LabMarkerError, LabRegion
from practice.skeleton import make_skeleton

TEMPLATES = Path(__file__).resolve().parent / "templates"
PACKAGE_FILES = ("__init__.py", "py.typed")
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")
_GITIGNORE = ".nox/\n__pycache__/\n.pytest_cache/\n.hypothesis/\n*.egg-info/\n"


class PracticeError(Exception):
    """Raised when a practice folder cannot be made; nothing was written."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CourseTree:
    """Where the course's parts live, relative to its root."""

    root: Path

    @property
    def src(self) -> Path:
        """The reference package, imported as ``harness``."""
        return self.root / "course" / "src"

    @property
    def fixtures(self) -> Path:
        """Recorded data that modules and tests read."""
        return self.root / "course" / "fixtures"

    @property
    def checkpoints(self) -> Path:
        """The manifests, focused tests, catalog and conftest."""
        return self.root / "checkpoints"

    def catalog(self) -> tuple[Checkpoint, ...]:
        """Return the course's checkpoints; raise PracticeError if a manifest is broken."""
        try:
            return load_catalog(self.checkpoints)
        except ManifestError as exc:
            raise PracticeError(f"the course's manifests are broken: {exc}") from exc


def practice_usage(catalog: Sequence[Checkpoint]) -> str:
    """Return the usage of ``nox -s practice``, listing the checkpoints."""
    return "\n".join(
        [
            "usage: nox -s practice -- NN DIR",
            "",
            "makes DIR, a folder (outside this repository, new or empty) in which you rebuild",
            "checkpoint NN: the code of the earlier checkpoints, NN's modules as skeletons whose",
            "labs raise NotImplementedError, and the focused tests of 00 up to NN",
            "",
            "checkpoints:",
            *(
                f"  {c.number}  {c.title}"
                + (" (observe: nothing to implement)" if c.mode == "observe" else "")
                for c in catalog
            ),
        ]
    )


def make_practice_folder(
    course_root: Path,
    number: str,
    destination: Path,
    *,
    before_publish: Callable[[Path], None] | None = None,
) -> Path:
    """Write the practice folder of checkpoint ``number`` at ``destination``; return its path.

    Raises PracticeError, before touching anything, when the checkpoint is unknown or the
    destination is inside the course, not a folder, or not empty; and LabMarkerError when a
    module's markers break the rules. ``before_publish`` is called with the staging folder just
    before it is renamed into place (tests use it to fail half way).
    """
    tree = CourseTree(root=course_root.resolve())
    catalog = tree.catalog()
    target = find_checkpoint(catalog, number)
    if target is None:
        raise PracticeError(f"no checkpoint {number or repr(number)}\n\n{practice_usage(catalog)}")
    destination = _check_destination(tree, destination)
    staging = destination.parent / f".{destination.name}.partial-{secrets.token_hex(4)}"
    staging.mkdir()
    try:
        _write_folder(tree, catalog, target, staging)
        if before_publish is not None:
            before_publish(staging)
        _publish(staging, destination)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return destination


def _publish(staging: Path, destination: Path) -> None:
    """Rename the finished folder into place; an empty destination folder is replaced."""
    try:
        staging.replace(destination)  # POSIX replaces an empty folder in one step
    except OSError:
        if not destination.is_dir():
            raise
        destination.rmdir()  # still empty, or this raises and nothing is lost
        staging.rename(destination)


def _check_destination(tree: CourseTree, destination: Path) -> Path:
    destination = destination.expanduser().absolute()
    resolved = destination.resolve()
    if resolved == tree.root or resolved.is_relative_to(tree.root):
        raise PracticeError(
            f"{destination} is inside the course repository ({tree.root}): "
            "choose a folder outside it, such as /tmp/practice"
        )
    if destination.exists() or destination.is_symlink():
        if not destination.is_dir() or destination.is_symlink():
            raise PracticeError(f"{destination} exists and is not a folder: nothing was written")
        if any(destination.iterdir()):
            raise PracticeError(
                f"{destination} exists and is not empty: nothing was written; "
                "choose a new folder (or empty this one) to start over"
            )
    if not destination.parent.is_dir():
        raise PracticeError(f"{destination.parent} does not exist: create it first")
    return resolved


def _write_folder(
    tree: CourseTree, catalog: Sequence[Checkpoint], target: Checkpoint, out: Path
) -> None:
    included = catalog[: catalog.index(target) + 1]
    for checkpoint in included:
        if not checkpoint.test_file.exists():
            raise PracticeError(f"{checkpoint.test_file} does not exist: the course is incomplete")
    src = out / "course" / "src"
    src.mkdir(parents=True)
    for name in PACKAGE_FILES:
        if (tree.src / name).exists():
            shutil.copyfile(tree.src / name, src / name)
    copied_text: list[str] = []
    for checkpoint in included[:-1]:
        for module in checkpoint.modules:
            copied_text.append(_copy_text(tree.src / module, src / module))
    regions: dict[str, tuple[LabRegion, ...]] = {}
    for module in target.modules:
        if target.mode == "observe":
            copied_text.append(_copy_text(tree.src / module, src / module))
            continue
        source = _read(tree.src / module)
        skeleton = make_skeleton(
            source,
            f"course/src/{module}",
            summaries={lab.id: lab.summary for lab in target.labs},
            page=target.page,
        )
        (src / module).write_text(skeleton.text, encoding="utf-8")
        copied_text.append(skeleton.text)
        regions[module] = skeleton.regions
    _check_every_lab_has_a_region(target, regions)
    later = _add_later_modules_in_use(tree, catalog, src)

    checkpoints = out / "checkpoints"
    checkpoints.mkdir()
    for shared in sorted(tree.checkpoints.glob("*.py")):  # catalog, conftest, test support
        shutil.copyfile(shared, checkpoints / shared.name)
    for checkpoint in included:
        shutil.copytree(checkpoint.folder, checkpoints / checkpoint.folder.name, ignore=_IGNORED)
        copied_text.extend(_read(path) for path in sorted(checkpoint.folder.glob("*.py")))
    if tree.fixtures.is_dir() and any("fixtures" in text for text in copied_text):
        shutil.copytree(tree.fixtures, out / "course" / "fixtures", ignore=_IGNORED)

    (out / "practice").mkdir()
    for name in ("commands.py", "failure_summary.py"):  # the folder's commands use them
        shutil.copyfile(Path(__file__).with_name(name), out / "practice" / name)
    shutil.copyfile(TEMPLATES / "noxfile.py", out / "noxfile.py")
    pyproject = render_pyproject(_read_toml(tree.root / "pyproject.toml"), target)
    (out / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    stubbed = {f"course/src/{m}": found for m, found in regions.items()}
    stubbed.update({f"course/src/{m}": found for m, (_, found) in later.items()})
    _write_pages(tree, included, stubbed, out)
    learning = _render_learning(target, included, regions, later)
    (out / "LEARNING.md").write_text(learning, encoding="utf-8")
    (out / ".gitignore").write_text(_GITIGNORE, encoding="utf-8")


def _add_later_modules_in_use(
    tree: CourseTree, catalog: Sequence[Checkpoint], src: Path
) -> dict[str, tuple[Checkpoint, tuple[LabRegion, ...]]]:
    """Add, as skeletons, the later checkpoints' modules that the folder's modules import.

    Returns each module added, with the checkpoint it belongs to and its lab regions.
    """
    # Checkpoint 00 shows records that checkpoint 01 defines. Its folder needs protocol.py, and
    # a skeleton is enough: an earlier checkpoint uses only a later one's given code.
    owners = {module: checkpoint for checkpoint in catalog for module in checkpoint.modules}
    added: dict[str, tuple[Checkpoint, tuple[LabRegion, ...]]] = {}
    pending = list(src.glob("*.py"))
    while pending:
        for module in sorted(_harness_imports(_read(pending.pop())) - {"__init__.py"}):
            if (src / module).exists() or module not in owners:
                continue
            owner = owners[module]
            skeleton = make_skeleton(
                _read(tree.src / module),
                f"course/src/{module}",
                summaries={lab.id: lab.summary for lab in owner.labs},
                page=owner.page,
            )
            (src / module).write_text(skeleton.text, encoding="utf-8")
            added[module] = (owner, skeleton.regions)
            pending.append(src / module)
    return added


def _write_pages(
    tree: CourseTree,
    included: Sequence[Checkpoint],
    stubbed: Mapping[str, tuple[LabRegion, ...]],
    out: Path,
) -> None:
    """Copy the lesson pages of ``included``, listings filled in with the given code only."""
    for checkpoint in included:
        page = tree.root / "docs" / checkpoint.page
        if not page.is_file():
            continue  # a course without pages (the tests' small one) still makes a folder
        try:
            text = render_page(_read(page), lambda path: _read(tree.root / path), stubbed)
        except ValueError as exc:
            raise PracticeError(f"docs/{checkpoint.page}: {exc}") from exc
        (out / "docs" / checkpoint.page).parent.mkdir(parents=True, exist_ok=True)
        (out / "docs" / checkpoint.page).write_text(text, encoding="utf-8")


def _harness_imports(source: str) -> set[str]:
    """Return the file names of the ``harness`` modules that ``source`` imports."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if type(node) is ast.Import:
            names.update(alias.name for alias in node.names)
        elif type(node) is ast.ImportFrom and node.module == "harness":
            names.update(f"harness.{alias.name}" for alias in node.names)
        elif type(node) is ast.ImportFrom and node.module is not None:
            names.add(node.module)
    return {f"{name.split('.')[1]}.py" for name in names if name.startswith("harness.")}


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise PracticeError(f"{path} is listed in a manifest but does not exist") from exc


def _copy_text(source: Path, destination: Path) -> str:
    text = _read(source)
    shutil.copyfile(source, destination)
    return text


def _check_every_lab_has_a_region(
    target: Checkpoint, regions: Mapping[str, tuple[LabRegion, ...]]
) -> None:
    marked = {region.lab for found in regions.values() for region in found}
    for lab in target.labs:
        if lab.id not in marked:
            modules = ", ".join(f"course/src/{m}" for m in target.modules)
            raise LabMarkerError(
                modules, 1, f"lab {lab.id} of checkpoint {target.number} has no marked region"
            )


# --- pyproject.toml ---------------------------------------------------------------------------


def _read_toml(path: Path) -> dict[str, object]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def render_pyproject(course: Mapping[str, object], target: Checkpoint) -> str:
    """Return the practice folder's pyproject.toml, taken from the course's ``course`` table.

    It keeps what running the focused tests needs: the build system, ``course/src`` mapped to
    the package ``harness`` with the course's runtime dependencies, the ``test`` dependency
    group (same pins) and pytest's settings, with the test paths narrowed to ``checkpoints``.
    """
    project = _table(course, "project")
    tool = _table(course, "tool")
    setuptools = _table(tool, "setuptools")
    pytest_options = dict(_table(_table(tool, "pytest"), "ini_options"))
    pytest_options["testpaths"] = ["checkpoints"]
    tables: list[tuple[str, Mapping[str, object]]] = [
        ("build-system", _table(course, "build-system")),
        (
            "project",
            {
                "name": f"harness-practice-{target.number}",
                "version": "0.1.0",
                "description": f"Practice folder: rebuild checkpoint {target.number}, "
                f"{target.title}.",
                "requires-python": project["requires-python"],
                # The harness's runtime dependencies (pathspec, for 08's .gitignore), same pins.
                "dependencies": project.get("dependencies", []),
            },
        ),
        ("tool.setuptools", {k: v for k, v in setuptools.items() if k != "package-data"}),
        ("tool.setuptools.package-data", _table(setuptools, "package-data")),
        ("dependency-groups", {"test": _table(course, "dependency-groups")["test"]}),
        ("tool.pytest.ini_options", pytest_options),
    ]
    text = (
        f"# Generated by the course's `nox -s practice -- {target.number} DIR`.\n"
        "# course/src is the package `harness`, as in the course; test tools pinned alike.\n"
    )
    text += "\n".join(
        f"\n[{name}]\n" + "".join(f"{_toml_key(k)} = {_toml_value(v)}\n" for k, v in values.items())
        for name, values in tables
    )
    expected: dict[str, object] = {}
    for name, values in tables:
        node = expected
        for part in name.split("."):
            node = node.setdefault(part, {})  # type: ignore[assignment]
        node.update(values)
    if tomllib.loads(text) != expected:  # the writer below is small: prove it wrote what we meant
        raise PracticeError("the generated pyproject.toml does not read back as written")
    return text


def _table(data: object, key: str) -> Mapping[str, object]:
    value = data.get(key) if type(data) is dict else None
    if type(value) is not dict:
        raise PracticeError(f"the course's pyproject.toml has no [{key}] table")
    return value


def _toml_key(key: str) -> str:
    return key if key.replace("-", "").replace("_", "").isalnum() else _toml_value(key)


def _toml_value(value: object) -> str:
    if type(value) is bool:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    if type(value) is str:
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    if type(value) is list:
        items = [_toml_value(item) for item in value]
        if len(items) <= 2:
            return "[" + ", ".join(items) + "]"
        return "[\n" + "".join(f"  {item},\n" for item in items) + "]"
    if type(value) is dict:
        pairs = ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + pairs + " }"
    raise PracticeError(f"pyproject.toml: cannot write a {type(value).__name__} value")


# --- LEARNING.md ------------------------------------------------------------------------------


def _render_learning(
    target: Checkpoint,
    included: Sequence[Checkpoint],
    regions: Mapping[str, tuple[LabRegion, ...]],
    later: Mapping[str, tuple[Checkpoint, tuple[LabRegion, ...]]],
) -> str:
    template = string.Template((TEMPLATES / "LEARNING.md").read_text(encoding="utf-8"))
    observe = target.mode == "observe"
    if target.labs:
        stuck = f"```bash\nnox -s hint -- {target.labs[0].id}\n```\n\nprints the hint of one lab."
    else:  # an observe checkpoint has no labs, so no hints either
        stuck = "This checkpoint has no labs: read its page and run its tests."
    first, last = included[0].number, included[-1].number
    tests_range = f"checkpoint {first}" if first == last else f"checkpoints {first} to {last}"
    contents = [_modules_text(target, regions), _earlier_text(included[:-1]), _later_text(later)]
    return template.substitute(
        number=target.number,
        title=target.title,
        page=f"docs/{target.page}",
        purpose=(
            f"read and run checkpoint {target.number}'s code and change it to see what breaks"
            if observe
            else f"rebuild checkpoint {target.number} yourself"
        ),
        contents="\n".join(f"- {text}" for text in contents if text),
        tests_range=tests_range,
        pages_plural="" if first == last else "s",
        work=_work_text(target, regions),
        read_first=_read_first_text(target),
        run=_run_text(target, tests_range),
        stuck=stuck,
    )


def _read_first_text(target: Checkpoint) -> str:
    if target.mode == "observe":
        return (
            f"It walks through the code in {_paths(target.modules)}, which is all here to read; "
            "this checkpoint has no labs."
        )
    return (
        "Its *Mechanism* and *Build it* sections explain each lab. A listing that is a lab's "
        "answer is left out of this copy: read the prose and *Build it*, write the lab, and "
        "compare with the course's listings once it passes."
    )


def _run_text(target: Checkpoint, tests_range: str) -> str:
    number = target.number
    if target.mode == "observe":
        return (
            f"This runs the focused tests of {tests_range} against the code in `course/src`, and "
            "they all pass. Change one line (the page's *Failure experiment*), run again and "
            "read which test turns red; this folder is not under git, so change the line back "
            "by hand (or make a new folder). Further arguments go to pytest: "
            f"`nox -s checkpoint -- {number} -x` stops at the first failure."
        )
    return f"""\
This runs the focused tests of {tests_range} against your `course/src` (in the course,
`checkpoint -- {number}` runs only {number}'s own tests; here the earlier ones run too, because
your code must keep them green). The output ends with a short failure summary and the `labs`
section, which says where each lab stands:

- `not started`: its stub still raises `NotImplementedError("Lab N.M: …")`;
- `failing`: some of its tests fail for another reason;
- `blocked`: its tests fail only because they call another lab's stub (the line names that
  lab): finish that one first;
- `passing`: all its tests pass.

Each line ends with the number of the lab's tests that ran, and how many of them fail, such as
`Lab 6.4   failing      (3 of 81 tests fail)`. With `-k WORD`, only the tests that ran count.
The summary shows the first failure of each lab in full and every other failure as one line;
`nox -s checkpoint -- {number} --full` (or `-v`) prints every failure in full.

`nox -s progress` prints only the labs section. Further arguments go to pytest:
`nox -s checkpoint -- {number} -x` stops at the first failure, `--lab N.M` runs only the tests
of one lab (give it again for more), and `-k WORD` runs only the tests whose names contain
WORD. When every lab is `passing`, the checkpoint is done: compare your code with the
reference in the course's `course/src`. Then try the page's *Failure experiment*: this folder
is not under git, so copy the file it edits aside first and copy it back afterwards, instead of
the page's `git checkout`."""


def _later_text(later: Mapping[str, tuple[Checkpoint, tuple[LabRegion, ...]]]) -> str:
    """Say why a later checkpoint's module is here, as a skeleton (00 shows 01's records)."""
    if not later:
        return ""
    owners = ", ".join(dict.fromkeys(owner.number for owner, _ in later.values()))
    return (
        f"{_paths(later)}: from checkpoint{'s' if ',' in owners else ''} {owners}, as a "
        "skeleton, because the code above uses its records; its labs are stubs that nothing "
        "here calls, and you need not touch it."
    )


def _paths(modules: Iterable[str]) -> str:
    """Name modules as the guide shows them: `course/src/a.py`, `course/src/b.py`."""
    return ", ".join(f"`course/src/{m}`" for m in modules)


def _modules_text(target: Checkpoint, regions: Mapping[str, tuple[LabRegion, ...]]) -> str:
    """Say which of the checkpoint's modules the learner writes, and which come whole."""
    if target.mode == "observe":
        return (
            f"{_paths(target.modules)}: the code of this checkpoint, to read and experiment with."
        )
    written = [m for m in target.modules if regions.get(m)]
    given = [m for m in target.modules if not regions.get(m)]
    parts = [f"{_paths(written)}: the modules you write."] if written else []
    if len(given) == 1:
        parts.append(f"{_paths(given)}: given whole (no lab in it); your code uses it.")
    elif given:
        parts.append(f"{_paths(given)}: given whole (no lab in them); your code uses them.")
    return " ".join(parts)


def _earlier_text(earlier: Sequence[Checkpoint]) -> str:
    if not earlier:
        return ""  # the first checkpoint: no earlier code
    names = _paths(m for c in earlier for m in c.modules)
    which = (
        f"checkpoint {earlier[0].number}"
        if len(earlier) == 1
        else f"checkpoints {earlier[0].number} to {earlier[-1].number}"
    )
    return (
        f"The code of {which} is the course's "
        f"reference, copied as it is: {names}. Your work builds on it; you should not need to "
        "change it."
    )


def _work_text(target: Checkpoint, regions: Mapping[str, tuple[LabRegion, ...]]) -> str:
    if target.mode == "observe":
        return (
            "This is an observe checkpoint: there is nothing to implement. Read the code in "
            + _paths(target.modules)
            + " beside the lesson page, run the focused test, then change one line to see "
            "which test turns red (the page's *Failure experiment*)."
        )
    lines = [
        "Each lab's code was replaced by a stub that raises "
        '`NotImplementedError("Lab N.M: …")` under a `# TODO(Lab N.M)` comment. '
        "Replace the stubs with your code; keep the names, signatures and docstrings.",
        "",
    ]
    for lab in target.labs:
        places = [
            f"`course/src/{module}`: "
            # dict.fromkeys: "private helpers" once, however many regions of helpers the module has
            + ", ".join(dict.fromkeys(_place_name(r) for r in found if r.lab == lab.id))
            for module, found in regions.items()
            if any(region.lab == lab.id for region in found)
        ]
        lines.append(f"- **Lab {lab.id}** — {lab.summary}  ")
        lines.append(f"  where: {'; '.join(places)}")
    return "\n".join(lines)


def _place_name(region: LabRegion) -> str:
    if region.kind == "function":
        return f"`{region.owner}()`"
    return f"private helpers in `{region.owner}`" if region.owner else "private helpers"

"""The lists that repeat the manifests are written by one command, and pages' promises are kept.

Each test writes a small course into a temporary folder: two manifests, a README with its
markers, a nav, and pages, then checks what ``authoring.derived`` and ``docs_tools.promises``
make of it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from authoring.derived import (
    ROOT,
    DerivedFileError,
    PlannedCheckpoint,
    load_roadmap,
    roadmap_sentence,
    stale_files,
    write_derived,
)
from checkpoints.catalog import load_catalog, main
from docs_tools.promises import promise_report
from docs_tools.translations import glossary_problems, load_glossary, stamp

MANIFEST = """\
number = "{number}"
title = "{title}"
slug = "{slug}"
mode = "observe"
{prerequisite}modules = ["{slug}.py"]
labs = []
"""
README = """\
# Course

<!-- checkpoint-map:start -->
stale
<!-- checkpoint-map:end -->

<!-- roadmap:start -->
stale
<!-- roadmap:end -->
"""
CONFIG = """\
site_name: x
nav:
  - Home: index.md
  - Checkpoints:
      - 00 Old title: checkpoints/00_start.md
  - Guide: guide.md
"""
ROADMAP = """\
[[checkpoint]]
number = "01"
slug = "next"
title = "Next step"
title_vi = "Bước sau"
adds = "more"
adds_vi = "thêm"

[[checkpoint]]
number = "02"
slug = "last"
title = "Last step"
title_vi = "Bước cuối"
adds = "the end"
adds_vi = "hết"
"""


def planned(number: str, title: str) -> PlannedCheckpoint:
    return PlannedCheckpoint(
        number=number, slug="s", title=title, title_vi="t", adds="a", adds_vi="b"
    )


def write_course(root: Path, *, second: bool = False) -> None:
    folders = [("00", "start", "Start", "")]
    if second:
        folders.append(("01", "next", "Next step", 'prerequisite = "00"\n'))
    for number, slug, title, prerequisite in folders:
        folder = root / "checkpoints" / f"{number}_{slug}"
        folder.mkdir(parents=True)
        text = MANIFEST.format(number=number, title=title, slug=slug, prerequisite=prerequisite)
        (folder / "checkpoint.toml").write_text(text, encoding="utf-8")
    (root / "checkpoints/roadmap.toml").write_text(ROADMAP, encoding="utf-8")
    (root / "README.md").write_text(README, encoding="utf-8")
    (root / "mkdocs.yml").write_text(CONFIG, encoding="utf-8")
    (root / "docs/checkpoints").mkdir(parents=True, exist_ok=True)
    (root / "docs/checkpoints/00_start.md").write_text(
        "Checkpoint 01 (not yet published) comes next.\n", encoding="utf-8"
    )
    (root / "docs/guide.md").write_text(
        "See checkpoint 01 (not yet published).\n", encoding="utf-8"
    )


def test_stale_files_are_listed_and_one_write_brings_them_in_step(tmp_path: Path) -> None:
    write_course(tmp_path, second=True)
    stale = ["README.md", "mkdocs.yml", "docs/checkpoints/00_start.md", "docs/guide.md"]
    assert stale_files(tmp_path) == stale
    assert write_derived(tmp_path) == stale
    assert stale_files(tmp_path) == []
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "| 01 | [Next step](docs/checkpoints/01_next.md) | `next.py` | observe |" in readme
    assert "Checkpoint 02 (last step) follows the same shape and is not written yet." in readme
    assert (tmp_path / "mkdocs.yml").read_text(encoding="utf-8") == CONFIG.replace(
        "      - 00 Old title: checkpoints/00_start.md\n",
        "      - 00 Start: checkpoints/00_start.md\n      - 01 Next step: checkpoints/01_next.md\n",
    )
    page = (tmp_path / "docs/checkpoints/00_start.md").read_text(encoding="utf-8")
    assert page == "[Checkpoint 01](01_next.md) comes next.\n"
    guide = (tmp_path / "docs/guide.md").read_text(encoding="utf-8")
    assert guide == "See [checkpoint 01](checkpoints/01_next.md).\n"
    assert write_derived(tmp_path) == []


def test_a_write_with_nothing_stale_replaces_no_file_not_even_a_stamp(tmp_path: Path) -> None:
    write_course(tmp_path, second=True)
    write_derived(tmp_path)
    translation = tmp_path / "docs/guide.vi.md"
    translation.write_text("Xem checkpoint 01.\n", encoding="utf-8")
    stamp(translation)
    before = translation.stat().st_ino  # a stamp replaces the file: a new inode
    assert write_derived(tmp_path) == []
    assert translation.stat().st_ino == before


def test_a_forward_reference_to_an_unwritten_checkpoint_stays(tmp_path: Path) -> None:
    write_course(tmp_path)
    write_derived(tmp_path)
    page = (tmp_path / "docs/checkpoints/00_start.md").read_text(encoding="utf-8")
    assert page == "Checkpoint 01 (not yet published) comes next.\n"


def test_the_catalog_command_checks_and_refuses_an_unknown_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # main() works on the real repository, which is in step: --check finds nothing stale.
    assert main(["--check"]) == 0
    assert main(["--bogus"]) == 2
    assert capsys.readouterr().err == "usage: python checkpoints/catalog.py [--write | --check]\n"


def test_lost_markers_are_named_with_what_to_do(tmp_path: Path) -> None:
    write_course(tmp_path)
    (tmp_path / "README.md").write_text("# Course\n", encoding="utf-8")
    with pytest.raises(DerivedFileError, match=r"^README\.md: the markers <!-- checkpoint-map"):
        stale_files(tmp_path)


@pytest.mark.parametrize(
    ("left", "sentence"),
    [
        ([], "Every checkpoint of the roadmap (`checkpoints/roadmap.toml`) is written."),
        (
            ["Agent loop"],
            "Checkpoint 07 (agent loop) follows the same shape and is not written yet.",
        ),
        (
            ["Agent loop", "Coding tools"],
            "Checkpoints 07\N{EN DASH}08 (agent loop, coding tools) follow the same shape and "
            "are not written yet.",
        ),
    ],
)
def test_roadmap_sentence_names_what_is_left(left: list[str], sentence: str) -> None:
    roadmap = [planned(f"{7 + i:02d}", title) for i, title in enumerate(left)]
    assert roadmap_sentence([], roadmap) == sentence


# Promises: a page that speaks of a checkpoint not written yet.


def write_promises(root: Path, text: str) -> None:
    (root / "checkpoints/promises.toml").write_text(text, encoding="utf-8")


def test_an_unrecorded_mention_of_a_later_checkpoint_is_a_problem(tmp_path: Path) -> None:
    write_course(tmp_path)
    page = tmp_path / "docs/checkpoints/00_start.md"
    page.write_text("Later, checkpoint 02 will\ncheck this.\n", encoding="utf-8")
    (problem,) = promise_report(tmp_path, load_catalog(tmp_path / "checkpoints")).problems
    assert problem.startswith(
        "docs/checkpoints/00_start.md: 'Later, checkpoint 02 will check this.' speaks of "
        "checkpoint 02, which is not written yet: record the sentence in "
        "checkpoints/promises.toml"
    )
    write_promises(
        tmp_path,
        '[[promise]]\npage = "docs/checkpoints/00_start.md"\ncheckpoint = "02"\n'
        'text = "checkpoint 02 will check this."\nreviewed = false\n',
    )
    report = promise_report(tmp_path, load_catalog(tmp_path / "checkpoints"))
    assert (report.problems, report.to_review) == ((), ())


def test_a_promise_no_longer_on_its_page_is_a_problem(tmp_path: Path) -> None:
    write_course(tmp_path)
    write_promises(
        tmp_path,
        '[[promise]]\npage = "docs/checkpoints/00_start.md"\ncheckpoint = "01"\n'
        'text = "a sentence that was edited away"\nreviewed = false\n',
    )
    (problem,) = promise_report(tmp_path, load_catalog(tmp_path / "checkpoints")).problems
    assert re.fullmatch(
        r"checkpoints/promises\.toml: the promise 'a sentence that was edited away' is no "
        r"longer on docs/checkpoints/00_start\.md: update its text to the page's, or delete "
        r"the entry",
        problem,
    )


def test_the_roadmap_s_vietnamese_words_keep_the_glossary(tmp_path: Path) -> None:
    # `nox -s new_checkpoint` writes these into the Vietnamese home page and the new page's
    # "next checkpoint" line, where the docs check holds them to the glossary: check them here,
    # before a checkpoint that needs them is started.
    glossary = load_glossary()
    page = tmp_path / "docs" / "roadmap.vi.md"
    page.parent.mkdir()
    lines = [f"{p.number} {p.title_vi}: {p.adds_vi}" for p in load_roadmap(ROOT)]
    page.write_text("# roadmap\n\n" + "\n\n".join(lines) + "\n", encoding="utf-8")
    assert glossary_problems(page, glossary, root=tmp_path) == []

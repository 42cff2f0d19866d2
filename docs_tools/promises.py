"""Check what lesson pages promise that later checkpoints will do (``checkpoints/promises.toml``).

A page may say what a checkpoint not written yet will do ("checkpoint 07's loop must never
build such a transcript"). Such a sentence is a promise its future author has to keep, so:

- every mention of a checkpoint that is not written yet, on a lesson page, must be recorded as a
  promise, or be a forward reference ``Checkpoint NN (not yet published)``, which
  ``nox -s catalog`` turns into a link once the checkpoint exists;
- every recorded promise must still be on its page (whitespace does not matter);
- once its checkpoint exists, a promise not yet ``reviewed`` is listed for review while that
  checkpoint's page is still a draft (it carries the ``DRAFT_NOTICE`` that
  ``nox -s new_checkpoint`` writes), and is a problem once the page is no longer one.

Only the standard library is used.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from checkpoints.catalog import Checkpoint

__all__ = [
    "DRAFT_NOTICE",
    "PROMISES",
    "Promise",
    "PromiseReport",
    "load_promises",
    "promise_report",
]

PROMISES = Path("checkpoints") / "promises.toml"
# The first line of the admonition a generated lesson page starts with; deleting it says the
# page is written, and from then on the promises made to its checkpoint must be reviewed.
DRAFT_NOTICE = '!!! warning "Draft"'
_KEYS = frozenset({"page", "checkpoint", "text", "reviewed"})
_MENTION = re.compile(r"\b[Cc]heckpoints? (?P<number>\d{2})\b")
_FORWARD = re.compile(r"\b[Cc]heckpoint \d{2} \((?:not yet published|chưa phát hành)\)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Promise:
    """One sentence of a page about what a later checkpoint will do."""

    page: str  # relative to the repository, "docs/checkpoints/03_messages.md"
    checkpoint: str
    text: str
    reviewed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class PromiseReport:
    """What is wrong (fails the check) and what waits for a review (listed only)."""

    problems: tuple[str, ...]
    to_review: tuple[str, ...]


def load_promises(root: Path) -> tuple[Promise, ...]:
    """Return the recorded promises; a malformed entry is a ValueError naming the file."""
    path = root / PROMISES
    if not path.is_file():
        return ()
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8")).get("promise", [])
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{PROMISES}: not valid TOML: {exc}") from exc
    promises = []
    for entry in entries:
        if (
            not isinstance(entry, dict)
            or set(entry) != _KEYS
            or not all(isinstance(entry[key], str) for key in ("page", "checkpoint", "text"))
            or not isinstance(entry["reviewed"], bool)
        ):
            raise ValueError(
                f"{PROMISES}: each [[promise]] has exactly page, checkpoint, text (strings) "
                f"and reviewed (true or false): {entry}"
            )
        promises.append(Promise(**entry))
    return tuple(promises)


def promise_report(root: Path, catalog: Sequence[Checkpoint]) -> PromiseReport:
    """Check the promises of ``root``'s lesson pages against its catalog."""
    promises = load_promises(root)
    written = {c.number: c for c in catalog}
    problems: list[str] = []
    to_review: list[str] = []
    texts = {
        page.relative_to(root).as_posix(): _flat(page.read_text(encoding="utf-8"))
        for page in sorted((root / "docs" / "checkpoints").glob("*.md"))
    }
    for page, text in texts.items():
        covered = [m.span() for m in _FORWARD.finditer(text)]
        covered += [
            (start, start + len(_flat(p.text)))
            for p in promises
            if p.page == page
            for start in _starts(text, _flat(p.text))
        ]
        for mention in _MENTION.finditer(text):
            number = mention["number"]
            inside = any(start <= mention.start() < end for start, end in covered)
            if number in written or inside:
                continue
            problems.append(
                f"{page}: '{_around(text, mention.start())}' speaks of checkpoint {number}, which "
                f"is not written yet: record the sentence in {PROMISES} (page, checkpoint, "
                f"text, reviewed = false) so that checkpoint's author reviews it, or write "
                f"'Checkpoint {number} (not yet published)'"
            )
    for promise in promises:
        quoted = _short(promise.text)
        if promise.page not in texts and _is_translation(promise.page):
            continue  # a translation not written yet: its entries wait for it
        if _flat(promise.text) not in texts.get(promise.page, ""):
            problems.append(
                f"{PROMISES}: the promise '{quoted}' is no longer on {promise.page}: "
                "update its text to the page's, or delete the entry"
            )
            continue
        checkpoint = written.get(promise.checkpoint)
        if checkpoint is None or promise.reviewed:
            continue
        if _is_draft(root / "docs" / checkpoint.page):
            to_review.append(f"checkpoint {checkpoint.number}: {promise.page} promises '{quoted}'")
        else:
            problems.append(
                f"checkpoint {checkpoint.number} is written: check that it keeps the promise of "
                f"{promise.page}, '{quoted}' (or change that page), then set reviewed = true "
                f"for it in {PROMISES}"
            )
    return PromiseReport(problems=tuple(problems), to_review=tuple(to_review))


def _is_translation(page: str) -> bool:
    return bool(re.search(r"\.[a-z]{2}\.md$", page))


def _is_draft(page: Path) -> bool:
    return page.is_file() and DRAFT_NOTICE in page.read_text(encoding="utf-8")


def _flat(text: str) -> str:
    """Collapse every run of whitespace to one space, so line breaks do not matter."""
    return " ".join(text.split())


def _starts(text: str, part: str) -> list[int]:
    return [match.start() for match in re.finditer(re.escape(part), text)] if part else []


def _around(text: str, index: int) -> str:
    return _short(text[max(0, index - 30) : index + 50].strip())


def _short(text: str) -> str:
    flat = _flat(text)
    return flat if len(flat) <= 70 else f"{flat[:69]}…"

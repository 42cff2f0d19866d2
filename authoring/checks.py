"""The docs check's rule on what the manifests imply: files, derived lists, promises.

``docs_tools/check_docs.py`` calls ``derived_problems`` (rule 4) and prints
``promises_to_review``; ``nox -s verify`` and ``nox -s docs`` run it.
"""

from __future__ import annotations

from pathlib import Path

from authoring.derived import WRITE_COMMAND, stale_files
from checkpoints.catalog import file_problems, load_catalog
from docs_tools.promises import promise_report

__all__ = ["derived_problems", "promises_to_review"]


def derived_problems(root: Path) -> list[str]:
    """Return each file a manifest names but lacks, each stale derived list, each broken promise."""
    catalog = load_catalog(root / "checkpoints")
    problems = file_problems(catalog, root)
    problems.extend(
        f"{path} is out of step with the manifests: run `{WRITE_COMMAND}` (nox -s catalog)"
        for path in stale_files(root)
    )
    problems.extend(promise_report(root, catalog).problems)
    return problems


def promises_to_review(root: Path) -> tuple[str, ...]:
    """Return the promises made to a written checkpoint whose page is still a draft."""
    return promise_report(root, load_catalog(root / "checkpoints")).to_review

"""Vendor Mermaid into the site, so diagrams render with no network, and prove the copy is intact.

mkdocs-material loads Mermaid from a CDN unless a global ``mermaid`` already exists; the site
ships the npm package's browser bundle as ``extra_javascript`` instead. This script is the only
way that file changes:

    python docs_tools/vendor_mermaid.py check   # offline: the vendored files match the pins below
    python docs_tools/vendor_mermaid.py fetch   # `npm pack mermaid@VERSION`, verify, copy in

To move to another version, change ``VERSION`` and run ``fetch``: it refuses the tarball while the
pinned hashes disagree and prints the ones it saw (compare the tarball's with
``npm view mermaid@VERSION dist.integrity``), so a new pin is always a deliberate edit.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["VERSION", "VendorError", "check_vendored", "fetch_vendored"]

VERSION = "11.17.2"
# npm's own integrity string for mermaid-VERSION.tgz (`npm view mermaid@VERSION dist.integrity`).
TARBALL_INTEGRITY = (
    "sha512-"
    "V6K3C8EBdEsPFZXSKMJe6ppQOENxuHARr9GvHX4hh47lAbhMRD9qf4oEK7LoaRQxULMa80/qt5gHO73aCleBBg=="
)
ROOT = Path(__file__).resolve().parents[1]
VENDOR_DIR = ROOT / "docs" / "assets" / "vendor" / "mermaid"


@dataclass(frozen=True, slots=True, kw_only=True)
class VendoredFile:
    """One file taken from the npm tarball, where it lands, and the hash it must have."""

    member: str  # path inside the tarball
    name: str  # file name under VENDOR_DIR
    sha256: str


FILES = (
    VendoredFile(
        member="package/dist/mermaid.min.js",
        name="mermaid.min.js",
        sha256="581ed7d74bd9048d0e3a91363927d72ef22942d7722546b27f7cc29e35390eb8",
    ),
    VendoredFile(
        member="package/LICENSE",
        name="LICENSE",
        sha256="ec9fb67dcb25eccc416ed56e1aab819222c805a2a4bfe4cb19e7556bf2ffde80",
    ),
)
VERSION_FILE = "VERSION"


class VendorError(RuntimeError):
    """Raised when a vendored file is missing or its hash differs from the pin."""


def check_vendored(directory: Path = VENDOR_DIR) -> None:
    """Raise VendorError unless every vendored file exists with its pinned hash and version."""
    version_file = directory / VERSION_FILE
    if not version_file.is_file() or version_file.read_text(encoding="utf-8").strip() != VERSION:
        raise VendorError(f"{version_file}: expected mermaid version {VERSION}")
    for vendored in FILES:
        path = directory / vendored.name
        if not path.is_file():
            raise VendorError(f"{path}: missing; run: python docs_tools/vendor_mermaid.py fetch")
        seen = hashlib.sha256(path.read_bytes()).hexdigest()
        if seen != vendored.sha256:
            raise VendorError(f"{path}: sha256 {seen}, pinned {vendored.sha256}")


def fetch_vendored(directory: Path = VENDOR_DIR) -> None:
    """Download mermaid@VERSION with npm, verify the tarball and files, and copy them in."""
    npm = shutil.which("npm")
    if npm is None:
        raise VendorError("npm is not on PATH; it is the client that fetches the package")
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(
            [npm, "pack", f"mermaid@{VERSION}", "--pack-destination", scratch, "--silent"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        tarball = Path(scratch) / f"mermaid-{VERSION}.tgz"
        _verify_integrity(tarball)
        staged = Path(scratch) / "staged"
        staged.mkdir()
        with tarfile.open(tarball, "r:gz") as archive:
            for vendored in FILES:
                source = archive.extractfile(vendored.member)
                if source is None:
                    raise VendorError(f"{tarball.name}: no file {vendored.member}")
                (staged / vendored.name).write_bytes(source.read())
        (staged / VERSION_FILE).write_text(f"{VERSION}\n", encoding="utf-8")
        # Verify the staged copy before touching the site, so a bad fetch changes nothing.
        check_vendored(staged)
        directory.mkdir(parents=True, exist_ok=True)
        for staged_file in staged.iterdir():
            shutil.copyfile(staged_file, directory / staged_file.name)


def _verify_integrity(tarball: Path) -> None:
    digest = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode("ascii")
    seen = f"sha512-{digest}"
    if seen != TARBALL_INTEGRITY:
        raise VendorError(f"{tarball.name}: integrity {seen}, pinned {TARBALL_INTEGRITY}")


def main(argv: list[str] | None = None) -> int:
    """Run ``check`` or ``fetch``; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("action", choices=["check", "fetch"])
    action = parser.parse_args(argv).action
    try:
        if action == "fetch":
            fetch_vendored()
        check_vendored()
    except VendorError as exc:
        print(f"vendor_mermaid: {exc}", file=sys.stderr)
        return 1
    print(f"vendor_mermaid: mermaid {VERSION} vendored in {VENDOR_DIR.relative_to(ROOT)} is intact")
    return 0


if __name__ == "__main__":
    sys.exit(main())

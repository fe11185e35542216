"""Installed size each document library adds: a fresh venv per library, `du` of site-packages minus an empty venv.

    python bench/documents_install_size.py [--packages pypdfium2,python-pptx,...] [--json OUT]

Uses pip's cache (no download when the wheels are cached). Prints one row per package: the size it adds
with its own dependencies, and which distributions came along. The last row installs all of them together
(shared dependencies such as lxml count once), which is what `pip install 'noteseek[documents]'` adds;
`--no-extra` leaves it out (the smoke run measures one small package).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

DEFAULT = (
    "pypdfium2",
    "python-pptx",
    "python-docx",
    "python-calamine",
    "openpyxl",
    "charset-normalizer",
    "chardet",
    "selectolax",
    "lxml",
    "pypdf",
)
DOCUMENTS_EXTRA = (
    "pypdfium2",
    "python-pptx",
    "python-docx",
    "python-calamine",
    "openpyxl",
    "chardet",
    "selectolax",
)


def _site_packages(root: Path) -> Path:
    return next(root.glob("lib/python*/site-packages"))


def _du(path: Path) -> int:
    out = subprocess.run(
        ["du", "-sb", str(path)], check=True, capture_output=True, text=True
    ).stdout
    return int(out.split()[0])


def _dists(site: Path) -> set[str]:
    return {p.name.split("-")[0] for p in site.glob("*.dist-info")}


def measure(packages: tuple[str, ...], work: Path) -> tuple[int, set[str]]:
    root = work / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    site = _site_packages(root)
    base, base_dists = _du(site), _dists(site)
    subprocess.run(
        [str(root / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", *packages],
        check=True,
        capture_output=True,
    )
    return _du(site) - base, _dists(site) - base_dists


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--packages", default=",".join(DEFAULT))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-extra", action="store_true", help="not the whole documents extra")
    args = parser.parse_args(argv)
    rows: list[dict[str, object]] = []
    sets: list[tuple[str, ...]] = [(p,) for p in args.packages.split(",") if p]
    if not args.no_extra:
        sets.append(DOCUMENTS_EXTRA)
    for pkgs in sets:
        with tempfile.TemporaryDirectory() as tmp:
            size, dists = measure(pkgs, Path(tmp))
        name = (
            pkgs[0] if len(pkgs) == 1 else "noteseek[documents] (all of: " + ", ".join(pkgs) + ")"
        )
        rows.append({"packages": list(pkgs), "bytes": size, "dists": sorted(dists)})
        print(f"{name:40} {size / 1e6:7.1f} MB  {', '.join(sorted(dists))}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

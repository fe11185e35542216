"""Real documents for the document benchmarks, from Debian packages (apt-get download + dpkg-deb -x).

    python bench/documents_fetch.py            # prints the cache folder; downloads once
    python bench/documents_fetch.py --packages python3-docx --dest /tmp/docs   # one, elsewhere

Packages: gnuplot-doc (the 311-page gnuplot 5.4 manual as PDF, 652 HTML pages), asymptote-doc (PDF
manuals, CSV examples), r-cran-readxl (xlsx/xls samples), r-cran-readr (CSV samples); for the
mixed vault of bench/documents_index.py also r-doc-pdf (the R manuals, the 3,700-page reference
manual among them), r-cran-openxlsx (xlsx test files), r-cran-vroom and r-cran-data.table (CSV/TSV
examples), r-cran-rio (ods/xls/csv), r-cran-officer (docx/pptx/xlsx templates) and python3-docx
(its default template). Needs `apt-get update` to have run once; exits with status 2 when apt-get
cannot fetch them.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache" / "documents"
PACKAGES = ("gnuplot-doc", "asymptote-doc", "r-cran-readxl", "r-cran-readr")
# More real files of every kind for the mixed vault (bench/documents_index.py).
MORE_PACKAGES = (
    "r-doc-pdf",
    "r-cran-openxlsx",
    "r-cran-vroom",
    "r-cran-data.table",
    "r-cran-rio",
    "r-cran-officer",
    "python3-docx",
)
MANUAL = "gnuplot-doc/usr/share/doc/gnuplot/gnuplot.pdf"  # the long text PDF (311 pages)


def ensure_packages(packages: tuple[str, ...] = PACKAGES, cache: Path = CACHE) -> Path:
    """Download and unpack the packages into bench/.cache/documents/ (once); return that folder."""
    cache.mkdir(parents=True, exist_ok=True)
    for package in packages:
        root = cache / package
        if root.exists():
            continue
        if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
            sys.exit("documents benchmark: needs apt-get and dpkg-deb (Debian) to fetch its files")
        done = subprocess.run(
            ["apt-get", "download", package], cwd=cache, capture_output=True, text=True
        )
        debs = sorted(cache.glob(f"{package}_*.deb"))
        if done.returncode != 0 or not debs:
            print(done.stderr.strip(), file=sys.stderr)
            print(f"could not download {package}; run 'apt-get update' first", file=sys.stderr)
            sys.exit(2)
        tmp = cache / f".{package}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(tmp)], check=True)
        tmp.rename(root)
    return cache


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--packages", default=",".join(PACKAGES + MORE_PACKAGES))
    parser.add_argument("--dest", type=Path, default=CACHE, help="where they are unpacked")
    args = parser.parse_args()
    print(ensure_packages(tuple(p for p in args.packages.split(",") if p), args.dest))

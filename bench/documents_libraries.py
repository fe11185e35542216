"""The figures behind noteseek.documents' library picks, measured side by side on real files.

    pip install -e '.[bench]'                 # adds pypdf, chardet (the libraries we did not pick)
    python bench/documents_libraries.py [--json OUT]

1. PDF: pypdfium2 vs pypdf on the 311-page gnuplot manual: median time, words, and words glued
   together (tokens of 30+ letters, the symptom of dropped word spaces) and words cut at a line-end
   hyphen ("isosur-" + "face").
2. HTML: selectolax (Lexbor) vs lxml.html vs the standard library's html.parser on gnuplot's 652
   HTML pages: MB/s and words.
3. Encoding detection: charset-normalizer vs chardet on real text in legacy encodings (German
   XQuAD paragraphs from ../shared/data in cp1252 and UTF-16 without BOM, the same sentences as
   rows of a semicolon CSV in cp1252; the multilingual pypdf sample's lines in cp1251, cp1256,
   gb18030, shift_jis, cp874): exact decodes per encoding and ms per sample.
4. Spreadsheets: python-calamine vs openpyxl (read-only, reset_dimensions) on a generated
   50,000 x 10 sheet and the real readxl files: median seconds.
5. Splitting: noteseek's `split_text` vs semantic-text-splitter (when installed) on the manual's
   text: seconds, chunks, words lost.
Libraries that are not installed are skipped with a note; ../shared/data absent skips the German set.
`--smoke` reads the repository's samples (tests/data/documents) instead of the Debian packages and
generates a 2,000-row sheet.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datasets import DATA_DIR, REPO
from documents_fetch import MANUAL, ensure_packages
from noteseek.documents import split_text

SAMPLES = REPO / "tests" / "data" / "documents"
_GLUED = re.compile(r"[A-Za-z]{30,}")
_CUT = re.compile(r"[A-Za-z]{2,}-\n[a-z]{2,}")


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _median(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def pdf(path: Path) -> dict[str, Any]:
    rows: dict[str, Any] = {}

    def pdfium() -> str:
        import pypdfium2

        doc = pypdfium2.PdfDocument(str(path))
        pages = []
        for i in range(len(doc)):
            page = doc[i]
            textpage = page.get_textpage()
            pages.append(textpage.get_text_range().replace("\r\n", "\n"))
            textpage.close()
            page.close()
        doc.close()
        return "\n".join(pages)

    def pypdf() -> str:
        import pypdf as lib

        return "\n".join(p.extract_text() or "" for p in lib.PdfReader(str(path)).pages)

    for name, fn, module, runs in (
        ("pypdfium2", pdfium, "pypdfium2", 3),
        ("pypdf", pypdf, "pypdf", 1),
    ):
        if not _have(module):
            print(f"  {name}: not installed, skipped")
            continue
        seconds, text = _median(fn, runs)
        rows[name] = {
            "seconds": seconds,
            "runs": runs,
            "words": len(text.split()),
            "glued_tokens": len(_GLUED.findall(text)),
            "hyphen_cut_words": len(_CUT.findall(text)),
            "soft_hyphen_marks": text.count("\ufffe"),  # PDFium: noteseek removes them
        }
        r = rows[name]
        print(
            f"  {name:10} {seconds:6.2f} s (median of {runs})  words {r['words']:,}  glued "
            f"{r['glued_tokens']}  cut at hyphen {r['hyphen_cut_words']}  U+FFFE {r['soft_hyphen_marks']}"
        )
    return rows


def html(folder: Path) -> dict[str, Any]:
    pages = [p.read_bytes() for p in sorted(folder.glob("*.html"))]
    size = sum(map(len, pages)) / 1e6
    rows: dict[str, Any] = {}

    def with_selectolax() -> int:
        from selectolax.lexbor import LexborHTMLParser

        words = 0
        for data in pages:
            tree = LexborHTMLParser(data.decode("utf-8", "replace"))
            for node in tree.css("script,style,noscript,template"):
                node.decompose()
            words += len((tree.body.text(separator=" ") if tree.body else "").split())
        return words

    def with_lxml() -> int:
        import lxml.html

        words = 0
        for data in pages:
            doc = lxml.html.document_fromstring(data)
            for node in doc.xpath("//script|//style|//noscript|//template|//head"):
                node.drop_tree()
            words += len(" ".join(doc.itertext()).split())
        return words

    def with_stdlib() -> int:
        from html.parser import HTMLParser

        class Text(HTMLParser):
            def __init__(self) -> None:
                super().__init__()
                self.out: list[str] = []
                self.skip = 0

            def handle_starttag(self, tag: str, attrs: Any) -> None:
                self.skip += tag in ("script", "style", "head")

            def handle_endtag(self, tag: str) -> None:
                self.skip -= tag in ("script", "style", "head")

            def handle_data(self, data: str) -> None:
                if self.skip <= 0:
                    self.out.append(data)

        words = 0
        for data in pages:
            parser = Text()
            parser.feed(data.decode("utf-8", "replace"))
            words += len(" ".join(parser.out).split())
        return words

    for name, fn, module in (
        ("selectolax", with_selectolax, "selectolax"),
        ("lxml.html", with_lxml, "lxml"),
        ("html.parser", with_stdlib, "html"),
    ):
        if not _have(module):
            print(f"  {name}: not installed, skipped")
            continue
        seconds, words = _median(fn, 3)
        rows[name] = {"seconds": seconds, "mb_per_s": size / seconds, "words": words}
        print(
            f"  {name:12} {size / seconds:6.1f} MB/s  ({len(pages)} pages, {size:.1f} MB)  words {words:,}"
        )
    return rows


def encodings(data_dir: Path) -> dict[str, Any]:
    samples: list[tuple[str, str, str]] = []  # text, encoding, label
    corpus = data_dir / "xquad-retrieval" / "de" / "corpus.jsonl"
    if corpus.exists():
        paras = [json.loads(line)["text"] for line in corpus.open(encoding="utf-8")][:200]
        for text in paras:
            for enc in ("cp1252", "utf-16-le"):
                try:
                    text.encode(enc)
                except UnicodeEncodeError:
                    continue
                samples.append((text, enc, f"de prose {enc}"))
        # The same real sentences as a German Excel's CSV export: one per row, with amounts in euro.
        for text in paras:
            sentences = re.split(r"(?<=[.!?]) ", text)
            csv_rows = ["Nr;Satz;Betrag"] + [f'{j};"{t}";{j * 3},50 €' for j, t in enumerate(sentences)]
            csv_text = "\r\n".join(csv_rows)
            try:
                csv_text.encode("cp1252")
            except UnicodeEncodeError:
                continue
            samples.append((csv_text, "cp1252", "de csv cp1252"))
    else:
        print(f"  {corpus} absent: German set skipped (pass --data-dir)")
    import pypdfium2

    doc = pypdfium2.PdfDocument(str(REPO / "tests" / "data" / "documents" / "multilang.pdf"))
    lines = doc[0].get_textpage().get_text_range().replace("\r\n", "\n").split("\n")
    by_script = {
        "Russian": "cp1251",
        "Arabic": "cp1256",
        "Chinese": "gb18030",
        "Japanese": "shift_jis",
        "Thai": "cp874",
    }
    for label, line in zip(lines[::2], lines[1::2]):
        for key, enc in by_script.items():
            if label.startswith(key):
                samples.append(((line + " ") * 20, enc, f"{key} {enc}"))
    rows: dict[str, Any] = {}

    def detect_cn(data: bytes) -> str | None:
        import charset_normalizer

        best = charset_normalizer.from_bytes(data).best()
        return best.encoding if best else None

    def detect_chardet(data: bytes) -> str | None:
        import chardet

        return chardet.detect(data)["encoding"]

    for name, fn, module in (
        ("charset-normalizer", detect_cn, "charset_normalizer"),
        ("chardet", detect_chardet, "chardet"),
    ):
        if not _have(module):
            print(f"  {name}: not installed, skipped")
            continue
        right = 0
        wrong: dict[str, int] = {}
        t = time.perf_counter()
        totals: dict[str, int] = {}
        for text, enc, label in samples:
            totals[label] = totals.get(label, 0) + 1
            data = text.encode(enc)
            guess = fn(data)
            try:
                ok = guess is not None and data.decode(guess) == text
            except (LookupError, UnicodeDecodeError):
                ok = False
            right += ok
            if not ok:
                wrong[label] = wrong.get(label, 0) + 1
        ms = (time.perf_counter() - t) / max(len(samples), 1) * 1000
        rows[name] = {
            "exact": right,
            "samples": len(samples),
            "ms_per_sample": ms,
            "misses": wrong,
            "samples_by_label": totals,
        }
        print(f"  {name:18} {right}/{len(samples)} decoded exactly, {ms:.2f} ms/sample")
        print(f"  {'':18} misses {wrong} of {totals}")
    return rows


def spreadsheets(readxl: Path, rows_generated: int = 50_000) -> dict[str, Any]:
    import openpyxl

    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.xlsx"
        workbook = openpyxl.Workbook(write_only=True)
        sheet = workbook.create_sheet("data")
        sheet.append([f"col{i}" for i in range(10)])
        for r in range(rows_generated):
            sheet.append([r, f"item {r}", r * 0.5, "x" * (r % 7), r % 3 == 0, r, r, r, r, f"t{r}"])
        workbook.save(big)
        files = [big, *sorted(readxl.glob("*.xlsx"))]

        def with_calamine(path: Path) -> int:
            from python_calamine import CalamineWorkbook

            book = CalamineWorkbook.from_path(str(path))
            return sum(
                sum(1 for _ in book.get_sheet_by_name(n).iter_rows()) for n in book.sheet_names
            )

        def with_openpyxl(path: Path) -> int:
            book = openpyxl.load_workbook(str(path), read_only=True, data_only=True)
            total = 0
            for ws in book.worksheets:
                ws.reset_dimensions()
                total += sum(1 for _ in ws.iter_rows(values_only=True))
            return total

        for path in files:
            row: dict[str, Any] = {}
            for name, fn in (("python-calamine", with_calamine), ("openpyxl", with_openpyxl)):
                try:
                    seconds, count = _median(functools.partial(fn, path), 3)
                    row[name] = {"seconds": seconds, "rows": count}
                except Exception as exc:  # calamine fails on one real readxl file
                    row[name] = {"error": f"{type(exc).__name__}: {exc}"[:120]}
            rows[path.name] = row
            shown = "  ".join(
                f"{n} {v['seconds']:.3f} s ({v['rows']} rows)"
                if "seconds" in v
                else f"{n} {v['error']}"
                for n, v in row.items()
            )
            print(f"  {path.name:16} {shown}")
    return rows


def splitting(text: str) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    words = set(text.split())

    def ours() -> list[str]:
        return split_text(text, max_chars=1000, overlap=100, min_chars=100)

    candidates: list[tuple[str, Callable[[], list[str]]]] = [("noteseek split_text", ours)]
    if _have("semantic_text_splitter"):
        from semantic_text_splitter import TextSplitter

        splitter = TextSplitter((100, 1000), overlap=99)
        candidates.append(("semantic-text-splitter", lambda: list(splitter.chunks(text))))
    else:
        print("  semantic-text-splitter: not installed, skipped")
    for name, fn in candidates:
        seconds, chunks = _median(fn, 3)
        out = {w for c in chunks for w in c.split()}
        sizes = [len(c) for c in chunks]
        rows[name] = {
            "seconds": seconds,
            "chunks": len(chunks),
            "mean_chars": statistics.mean(sizes),
            "max_chars": max(sizes),
            "words_lost": len(words - out),
        }
        print(
            f"  {name:24} {seconds:6.3f} s  {len(chunks)} chunks, mean {statistics.mean(sizes):.0f} / max "
            f"{max(sizes)} chars, words lost {len(words - out)}"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="the shared data folder")
    parser.add_argument("--smoke", action="store_true", help="the repository's samples, seconds")
    args = parser.parse_args(argv)
    if args.smoke:
        manual, htmldocs, readxl = SAMPLES / "pdflatex-outline.pdf", SAMPLES, SAMPLES
    else:
        cache = ensure_packages()
        manual = cache / MANUAL
        htmldocs = cache / "gnuplot-doc/usr/share/doc/gnuplot/htmldocs"
        readxl = cache / "r-cran-readxl/usr/lib/R/site-library/readxl/extdata"
    out: dict[str, Any] = {}
    print(f"1. PDF text, {manual.name}")
    out["pdf"] = pdf(manual)
    print(f"2. HTML to text, {htmldocs.name}")
    out["html"] = html(htmldocs)
    print("3. Encoding detection")
    out["encoding"] = encodings(args.data_dir)
    print("4. Spreadsheets")
    out["spreadsheets"] = spreadsheets(readxl, 2_000 if args.smoke else 50_000)
    print("5. Splitting the manual's text")
    from noteseek.documents import extract_file

    doc = extract_file(manual).document
    assert doc is not None
    out["splitting"] = splitting("\n\n".join(u.text for u in doc.units))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

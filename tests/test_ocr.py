"""OCR end to end, through `noteseek index` and `noteseek search --json` processes.

One vault of generated images (tests/ocr_images.py: Pillow, DejaVu TTF) is indexed once per module:
screenshots, a whiteboard-like photo (rotated, blurred, coloured, JPEG), a two-page image-only
PDF, a German screenshot, a screenshot holding a credential, a transparent drawing export and a
textless noise image. Each image costs a fraction of a CPU-second, so the set stays small.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO
from .ocr_images import (
    font_path,
    german_screenshot,
    image_only_pdf,
    noise_image,
    screenshot,
    whiteboard_photo,
)

pytest.importorskip("tesserocr", reason="the ocr extra is not installed (pip install -e '.[ocr]')")

# A random secret each run, so no rule can know it in advance; AWS's variable name is the keyword
# the scrubber's rule needs, as in a real screenshot of a shell or an .env file.
_ALPHABET = string.ascii_letters + string.digits
CREDENTIAL = "".join(secrets.choice(_ALPHABET) for _ in range(40))


def _cli(
    *args: str, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "noteseek", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env=env,
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def _hits(db: Path, query: str) -> list[dict[str, Any]]:
    out = _cli("search", query, "--db", str(db), "--json", "-n", "5")
    hits: list[dict[str, Any]] = json.loads(out.stdout)["hits"]
    return hits


def _transparent_export(path: Path) -> None:
    """Black text on a transparent background, as Excalidraw and canvas PNG exports are."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGBA", (700, 120), (0, 0, 0, 0))
    font = ImageFont.truetype(str(font_path()), 30)
    ImageDraw.Draw(image).text(
        (20, 40), "Sketch of the gondola timetable", font=font, fill=(0, 0, 0, 255)
    )
    image.save(path)


@pytest.fixture(scope="module")
def ocr_vault(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("ocr")
    vault = root / "vault"
    (vault / "shots").mkdir(parents=True)
    (vault / "scans").mkdir()
    (vault / "notes.md").write_text("# Notes\n\nA note about the lighthouse keeper's tea.\n")
    screenshot(
        vault / "shots" / "planning.png",
        [
            "Quarterly planning for the lighthouse project",
            "Move the billing export to the new queue",
        ],
    )
    whiteboard_photo(
        vault / "shots" / "whiteboard.jpg", ["Retro: flaky checkout tests", "owner Marta by Friday"]
    )
    image_only_pdf(
        vault / "scans" / "letter.pdf",
        [["Invoice number 4471 for harbour cranes"], ["The turbine warranty ends in March"]],
    )
    german_screenshot(vault / "shots" / "protokoll.png")
    screenshot(
        vault / "shots" / "staging.png",
        ["Staging credentials for the deploy bot", f"AWS_SECRET_ACCESS_KEY={CREDENTIAL}"],
        mono_from=1,
    )
    noise_image(vault / "shots" / "noise.png")
    _transparent_export(vault / "shots" / "sketch.excalidraw.png")
    db = root / "index.db"
    first = _cli("index", str(vault), "--db", str(db), "-q")
    return {"vault": vault, "db": db, "first": first, "root": root}


@pytest.mark.parametrize(
    ("query", "path", "page"),
    [
        ("quarterly planning billing export", "shots/planning.png", None),
        ("flaky checkout tests Marta", "shots/whiteboard.jpg", None),
        ("invoice harbour cranes", "scans/letter.pdf", 1),
        ("turbine warranty", "scans/letter.pdf", 2),
        ("Lieferkette Rechnungen Einkauf", "shots/protokoll.png", None),
        ("gondola timetable sketch", "shots/sketch.excalidraw.png", None),
    ],
)
def test_each_planted_phrase_finds_its_file_first(
    ocr_vault: dict[str, Any], query: str, path: str, page: int | None
) -> None:
    hits = _hits(ocr_vault["db"], query)
    assert hits and hits[0]["path"] == path, [h["path"] for h in hits]
    assert hits[0]["page"] == page
    assert hits[0]["kind"] == ("pdf" if path.endswith(".pdf") else "image")


def test_the_run_exits_0_names_the_textless_image_and_says_what_ocr_read(
    ocr_vault: dict[str, Any],
) -> None:
    first = ocr_vault["first"]
    assert "shots/noise.png: no text found: has no text that OCR could read" in first.stderr
    assert "OCR read 7 page(s) or image(s) in 6 file(s)" in first.stdout, first.stdout
    status = _cli("status", "--db", str(ocr_vault["db"])).stdout
    # The same counts as the run's line: 7 files went through OCR, 6 of them gave 7 pages' text.
    ocr_line = re.search(r"^ocr +7 files read by OCR in the update at [-\d]+ [:\d]+: (.*)$", status, re.M)
    assert ocr_line and ocr_line.group(1) == "6 with text (7 pages), 1 without", status
    assert "1 no text found" in status and "image 6" in status


def test_the_photographed_credential_never_reaches_the_database(ocr_vault: dict[str, Any]) -> None:
    hits = _hits(ocr_vault["db"], "staging credentials deploy bot")
    assert hits[0]["path"] == "shots/staging.png"
    assert "[REDACTED:" in hits[0]["text"] and CREDENTIAL not in hits[0]["text"]
    for file in ocr_vault["root"].glob("index.db*"):  # the WAL and its index too
        data = file.read_bytes()
        assert CREDENTIAL.encode() not in data and CREDENTIAL[:20].encode() not in data, file


def test_unchanged_images_are_not_read_again_and_a_moved_one_keeps_its_text(
    ocr_vault: dict[str, Any],
) -> None:
    vault, db = ocr_vault["vault"], str(ocr_vault["db"])
    status = _cli("status", "--db", db).stdout
    again = _cli("index", str(vault), "--db", db)
    assert "OCR read" not in again.stdout and "0 added, 0 changed" in again.stdout, again.stdout
    # A run that read nothing by OCR leaves the line of the one that did, with its date.
    ocr_line = next(line for line in status.splitlines() if line.startswith("ocr "))
    assert "in the update at" in ocr_line
    assert ocr_line in _cli("status", "--db", db).stdout.splitlines()
    (vault / "archive").mkdir()
    shutil.move(vault / "shots" / "planning.png", vault / "archive" / "planning-old.png")
    moved = _cli("index", str(vault), "--db", db)
    assert "1 image(s) moved or copied, not read again" in moved.stdout, moved.stdout
    assert "OCR read 0 page(s)" in moved.stdout
    hits = _hits(ocr_vault["db"], "quarterly planning billing export")
    assert hits[0]["path"] == "archive/planning-old.png"


def test_no_ocr_names_images_and_a_later_run_reads_them(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n\nplain words\n")
    screenshot(vault / "shot.png", ["Saffron delivery schedule for Tuesday"])
    db = str(tmp_path / "i.db")
    off = _cli("index", str(vault), "--db", db, "-q", "--no-ocr")
    assert "shot.png: unsupported: is an image, and OCR is turned off" in off.stderr
    assert all(h["path"] != "shot.png" for h in _hits(tmp_path / "i.db", "saffron delivery"))
    env = {**os.environ, "NOTESEEK_OCR": "0"}
    still = _cli("index", str(vault), "--db", db, "-q", env=env)
    assert "OCR read" not in still.stdout
    on = _cli("index", str(vault), "--db", db, "-q")
    assert "OCR read 1 page(s) or image(s) in 1 file(s)" in on.stdout, on.stdout
    assert _hits(tmp_path / "i.db", "saffron delivery")[0]["path"] == "shot.png"


def test_without_the_ocr_extra_images_are_named_with_the_extra(tmp_path: Path) -> None:
    # The import of tesserocr fails (a package of that name that raises, first on the path of
    # the indexer and of its workers), through the same require() as a missing package.
    shim = tmp_path / "shim" / "tesserocr"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('simulated: not installed')\n")
    vault = tmp_path / "v"
    vault.mkdir()
    screenshot(vault / "shot.png", ["Saffron delivery schedule for Tuesday"])
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        "PYTHONPATH": str(tmp_path / "shim"),
    }
    db = str(tmp_path / "i.db")
    done = _cli("index", str(vault), "--db", db, "-q", env=env)
    assert "shot.png: unsupported: needs the Python package 'tesserocr'" in done.stderr
    assert "pip install 'noteseek[ocr]'" in done.stderr
    status = _cli("status", "--db", db, env=env).stdout
    assert "install   pip install 'noteseek[ocr]'" in status, status


def test_the_web_preview_serves_an_image_beside_its_text_through_the_path_checks(
    ocr_vault: dict[str, Any],
) -> None:
    pytest.importorskip("fastapi", reason="the web extra is not installed")
    import httpx

    from noteseek.web.app import create_app

    from .web_support import LOOPBACK_HOSTS, make_pool, serve

    vault = ocr_vault["vault"]
    (vault / "shots" / "later.png").write_bytes((vault / "shots" / "noise.png").read_bytes())
    pool = make_pool(ocr_vault["db"])
    try:
        with (
            serve(create_app(pool, hosts=LOOPBACK_HOSTS)) as base,
            httpx.Client(base_url=base) as http,
        ):
            hit = http.get("/api/search", params={"q": "flaky checkout Marta"}).json()["hits"][0]
            assert hit["path"] == "shots/whiteboard.jpg" and hit["kind"] == "image"
            text = http.get("/api/notes/shots/whiteboard.jpg").json()
            assert text["kind"] == "image" and "Marta" in text["text"]
            image = http.get("/api/notes/shots/whiteboard.jpg", params={"image": "true"})
            assert image.status_code == 200 and image.headers["content-type"] == "image/jpeg"
            assert image.content == (vault / "shots" / "whiteboard.jpg").read_bytes()
            assert image.headers["x-content-type-options"] == "nosniff"
            # A note is no image; a file the index does not hold and traversal are refused.
            for path in (
                "/api/notes/notes.md",
                "/api/notes/shots/later.png",
                "/api/notes/..%2f..%2fetc%2fpasswd",
                "/api/notes/%2e%2e/%2e%2e/etc/hostname",
            ):
                refused = http.get(path, params={"image": "true"})
                assert refused.status_code == 404, (path, refused.text)
                assert refused.headers["content-type"].startswith("application/json")
    finally:
        pool.close()
        (vault / "shots" / "later.png").unlink()


def test_rejoin_tokens_glues_a_cut_key_and_leaves_prose_alone() -> None:
    from noteseek.documents.ocr import rejoin_tokens

    assert rejoin_tokens("KEY=cHGgMXGWV rARUdyRhYGcg5eK fOD9w8eKqiNu") == (
        "KEY=cHGgMXGWVrARUdyRhYGcg5eKfOD9w8eKqiNu"
    )
    for prose in (
        "Quarterly planning for the lighthouse project",
        "Invoice number 4471 for harbour cranes",
        "my iPhone and the MacBook",
    ):
        assert rejoin_tokens(prose) == prose


def test_image_outcomes_too_large_corrupt_and_timed_out(tmp_path: Path) -> None:
    from noteseek.documents import ExtractionLimits, ExtractionPool, Outcome, extract_file

    shot = screenshot(tmp_path / "shot.png", ["A short line of text"]).path
    big = extract_file(shot, limits=ExtractionLimits(max_image_pixels=1000))
    assert big.outcome is Outcome.TOO_LARGE and "pixels (the limit is 1,000 pixels)" in big.reason
    fake = tmp_path / "fake.jpg"
    fake.write_text("<html>not an image</html>")
    bad = extract_file(fake)
    assert bad.outcome is Outcome.CORRUPT and "its content looks like HTML" in bad.reason
    off = extract_file(shot, limits=ExtractionLimits(ocr=False))
    assert off.outcome is Outcome.UNSUPPORTED and "OCR is turned off" in off.reason
    with ExtractionPool(limits=ExtractionLimits(timeout_seconds=0.05)) as pool:
        slow = pool.extract(shot)  # a worker's start and the model load alone take longer
    assert slow.outcome is Outcome.TIMED_OUT and "was stopped" in slow.reason


def test_mcp_get_note_returns_an_images_text_with_its_path(ocr_vault: dict[str, Any]) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    import anyio
    from mcp import Client

    from noteseek.mcp.server import VaultService, build_server

    service = VaultService(db=str(ocr_vault["db"]))

    async def body(client: Client) -> str:
        reply = await client.call_tool("get_note", {"path": "shots/whiteboard.jpg"})
        assert not reply.is_error
        return "\n".join(block.text for block in reply.content)

    async def main() -> str:
        async with Client(build_server(service), mode="legacy") as client:
            return await body(client)

    try:
        text = anyio.run(main)
    finally:
        service.close()
    assert "shots/whiteboard.jpg" in text and "Marta" in text


def test_the_watcher_reads_a_new_screenshot(tmp_path: Path) -> None:
    import signal

    from .test_watch_cli import body, found, wait_until, watching

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "notes.md").write_text(body("zqnote"))
    db = tmp_path / "i.db"
    with watching(vault, db, tmp_path) as watch:
        assert found(db, "zqnote") == ["notes.md"]
        runs = len(watch.runs())
        # Saved the way a screenshot tool does: a temporary name, then renamed into place.
        screenshot(tmp_path / "tmp.png", ["Cardamom shipment arrives on Thursday"])
        os.replace(tmp_path / "tmp.png", vault / "Screenshot 2026-12-01.png")
        wait_until(
            lambda: found(db, "cardamom shipment") == ["Screenshot 2026-12-01.png"],
            what="new screenshot",
        )
        watch.wait_for_run(runs, ": 1 added,")
        assert watch.stop(signal.SIGTERM) == 0

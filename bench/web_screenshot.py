"""Write the README's screenshot of `noteseek web` (docs/img/web.png) from the sample vault.

    python bench/web_screenshot.py [--out docs/img/web.png]

Not a benchmark: it indexes examples/sample-vault into a temporary folder, serves it on an
ephemeral loopback port, drives Debian's Chromium with Playwright (apt-get install chromium;
never `playwright install`), types a query, moves down one result, opens it in the preview and
saves the page.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.test_web_browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.web_support import build_index, make_pool, serve  # noqa: E402

from noteseek.web.app import create_app  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "img" / "web.png")
    parser.add_argument("--query", default="how do I undo a rebase")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        db = build_index(REPO / "examples" / "sample-vault", Path(tmp) / "index.db")
        pool = make_pool(db, workers=1)
        with serve(create_app(pool)) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            page.goto(url + "/")
            page.wait_for_selector("#folder option[value='howto']", state="attached")
            page.locator("#q").press_sequentially(args.query, delay=30)
            page.wait_for_selector("#results li")
            page.wait_for_timeout(400)
            page.keyboard.press("Enter")
            page.wait_for_function("() => document.getElementById('preview-crumb').textContent")
            page.wait_for_timeout(300)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out))
            browser.close()
        pool.close()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

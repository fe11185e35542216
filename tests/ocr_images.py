"""Images with known text for the OCR tests and bench/ocr_engines.py, drawn with Pillow and a real TTF.

The font is DejaVu: Debian's `fonts-dejavu-core` when installed, else the copy inside matplotlib
(the `eval` extra, which the `test` extra pulls in), so the images are the same on every machine.
Each maker returns the words it drew, for word-recall figures.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

__all__ = [
    "Drawn",
    "font_path",
    "german_screenshot",
    "image_only_pdf",
    "noise_image",
    "screenshot",
    "whiteboard_photo",
    "words",
]

_DEBIAN = Path("/usr/share/fonts/truetype/dejavu")


@dataclass(frozen=True)
class Drawn:
    """A generated image file and the text drawn on it."""

    path: Path
    lines: tuple[str, ...]

    @property
    def words(self) -> list[str]:
        """The drawn words, lower case, punctuation stripped."""
        return [w for line in self.lines for w in words(line)]


def words(text: str) -> list[str]:
    out = []
    for raw in text.split():
        word = raw.strip(".,:;!?()[]\"'").lower()
        if word:
            out.append(word)
    return out


def font_path(*, mono: bool = False, bold: bool = False) -> Path:
    """A DejaVu TTF: the system's, else matplotlib's bundled copy."""
    name = "DejaVuSansMono" if mono else "DejaVuSans"
    name += "-Bold" if bold else ""
    candidate = _DEBIAN / f"{name}.ttf"
    if candidate.is_file():
        return candidate
    import matplotlib

    bundled = Path(matplotlib.__file__).parent / "mpl-data" / "fonts" / "ttf" / f"{name}.ttf"
    if bundled.is_file():
        return bundled
    raise FileNotFoundError(
        f"no {name}.ttf: apt-get install fonts-dejavu-core, or pip install matplotlib"
    )


def _font(size: int, *, mono: bool = False, bold: bool = False) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(font_path(mono=mono, bold=bold)), size)


def _render(
    lines: Sequence[str],
    *,
    size: int = 20,
    width: int = 900,
    mono_from: int | None = None,
    title: str | None = None,
) -> Image.Image:
    """A UI-like screenshot: a coloured title bar, then the lines on white."""
    font = _font(size)
    line_height = int(size * 1.6)
    top = 50 if title else 20
    height = top + line_height * len(lines) + 30
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    if title:
        draw.rectangle((0, 0, width, 36), fill=(45, 62, 90))
        draw.text((14, 8), title, font=_font(16, bold=True), fill=(235, 240, 250))
    for i, line in enumerate(lines):
        use = _font(size, mono=True) if mono_from is not None and i >= mono_from else font
        draw.text((24, top + i * line_height), line, font=use, fill=(30, 30, 30))
    return image


def screenshot(
    path: Path, lines: Sequence[str], *, title: str | None = "Notes", mono_from: int | None = None
) -> Drawn:
    """A PNG screenshot of `lines` (from `mono_from` on in a monospace font, like code)."""
    _render(lines, title=title, mono_from=mono_from).save(path)
    return Drawn(path, tuple(lines) + ((title,) if title else ()))


def german_screenshot(path: Path) -> Drawn:
    """A German screenshot with umlauts and ß."""
    lines = (
        "Besprechung über die Lieferkette im Frühjahr",
        "Die Prüfung der Rechnungen dauert länger als geplant.",
        "Bitte schicken Sie die Übersicht bis Donnerstag.",
        "Größere Bestellungen gehen über den Einkauf.",
    )
    return screenshot(path, lines, title="Protokoll")


def whiteboard_photo(path: Path, lines: Sequence[str]) -> Drawn:
    """A photo-like whiteboard: off-white, marker colours, large letters, rotated, blurred, noisy, JPEG."""
    font = _font(44, bold=True)
    width, height = 1400, 140 + 90 * len(lines)
    board = Image.new("RGB", (width, height), (236, 238, 230))
    draw = ImageDraw.Draw(board)
    colours = [(20, 60, 170), (180, 30, 30), (20, 120, 50)]
    for i, line in enumerate(lines):
        draw.text((70, 70 + 90 * i), line, font=font, fill=colours[i % len(colours)])
    # Uneven light: a darker band along one edge.
    shade = Image.linear_gradient("L").resize((width, height)).point(lambda v: 255 - v // 6)
    board = Image.composite(board, Image.new("RGB", board.size, (150, 150, 140)), shade)
    board = board.rotate(4, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=(90, 80, 70))
    board = board.filter(ImageFilter.GaussianBlur(1.3))
    noise = Image.effect_noise(board.size, 18).convert("RGB")
    board = Image.blend(board, noise, 0.08)
    board.save(path, quality=80)
    return Drawn(path, tuple(lines))


def noise_image(path: Path) -> Drawn:
    """Random coloured noise and blobs: no text at all."""
    rng = random.Random(3)
    image = Image.effect_noise((640, 480), 60).convert("RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(25):
        x, y = rng.randrange(600), rng.randrange(440)
        r = rng.randrange(10, 60)
        colour = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
        draw.ellipse((x, y, x + r, y + r), fill=colour)
    image.save(path)
    return Drawn(path, ())


def image_only_pdf(path: Path, pages: Sequence[Sequence[str]]) -> list[Drawn]:
    """A PDF whose pages are scans: each page an image of its lines, no text layer (Pillow's PDF writer)."""
    images = []
    for lines in pages:
        page = Image.new("L", (1240, 1754), 250)  # A4 at 150 dpi, slightly grey paper
        draw = ImageDraw.Draw(page)
        font = _font(30)
        for i, line in enumerate(lines):
            draw.text((120, 160 + 56 * i), line, font=font, fill=20)
        images.append(page.filter(ImageFilter.GaussianBlur(0.6)).convert("RGB"))
    images[0].save(path, "PDF", resolution=150.0, save_all=True, append_images=images[1:])
    return [Drawn(path, tuple(lines)) for lines in pages]

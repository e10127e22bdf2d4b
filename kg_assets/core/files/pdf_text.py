"""PDF to text with pypdf: the text layer of every page, the title from the metadata, and an outline.

An encrypted PDF that opens with an empty user password (the usual "protected" PDF that anyone may
read) is read: pypdf tries the empty password itself, and AES needs `cryptography`. One that needs a
real password gets a clear error.

Outline (headings become Markdown heading lines in the text, so chunking finds sections as for md/html):
* the PDF's bookmarks, their nesting as levels; a bookmark's title marks the first line of its page
  that reads the same (case and spacing aside), else it is put as a heading line at its page's start;
* without bookmarks, headings found from the fonts: a short line (at most 12 words, no final full stop)
  set larger than the body text (the font size that carries most characters) is a heading, the largest
  size level 1, the next level 2 ...; a short numbered line in a bold font at body size ("2.1 Data")
  is a heading one level below the smallest larger size.

Figures (images and their captions, `files.pdf_figures`) are listed with the page they are on. The image
of an image-only (scanned) page is a figure too; a PDF with no text layer at all is an error, unless a
vision model is configured to describe its page images.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from dataclasses import dataclass

from pypdf import PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

from kg_assets.core.files import DocumentError
from kg_assets.core.files.pdf_figures import Figure, page_figures

MAX_HEADING_WORDS = 12
_NUMBERED = re.compile(r"^(?:\d{1,2}\.)*\d{1,2}\.?\s+\S")


@dataclass(frozen=True)
class PdfText:
    text: str
    title: str | None
    headings: list[str]
    figures: list[Figure]


def _fold(line: str) -> str:
    return " ".join(line.split()).casefold()


def _bookmarks(reader: PdfReader) -> list[tuple[int, int, str]]:
    """(page index, level, title) of every bookmark, in outline order."""
    out: list[tuple[int, int, str]] = []

    def walk(items, level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            title = " ".join(str(getattr(item, "title", "") or "").split())
            try:
                page = reader.get_destination_page_number(item)
            except (PyPdfError, KeyError, TypeError, ValueError, AttributeError):
                page = None
            if title and page is not None and page >= 0:
                out.append((page, level, title))

    walk(reader.outline or [], 1)
    return out


def _read_page(page) -> tuple[str, list[tuple[str, float, str]]]:
    """A page's text and the (text, font size, font name) of each of its text runs, in one pass."""
    runs: list[tuple[str, float, str]] = []

    def visit(text, cm, tm, font, size) -> None:
        if text and text.strip():
            scale = abs(tm[0]) if tm and tm[0] else 1.0
            runs.append((text, round(float(size) * scale, 1), str((font or {}).get("/BaseFont", ""))))

    return page.extract_text(visitor_text=visit) or "", runs


def _font_headings(page_runs: list[list[tuple[str, float, str]]]) -> dict[tuple[int, str], int]:
    """(page index, folded line) -> level, from the font sizes of short lines."""
    runs = [(p, " ".join(text.split()), size, font) for p, page in enumerate(page_runs) for text, size, font in page]
    weight: Counter = Counter()
    for _, text, size, _ in runs:
        weight[size] += len(text)
    if not weight:
        return {}
    body = weight.most_common(1)[0][0]
    short = [(p, text, size, font) for p, text, size, font in runs
             if text and len(text.split()) <= MAX_HEADING_WORDS and not text.endswith(".")]
    sizes = sorted({size for _, _, size, _ in short if size > body}, reverse=True)
    levels = {size: i + 1 for i, size in enumerate(sizes)}
    found: dict[tuple[int, str], int] = {}
    for p, text, size, font in short:
        if size in levels:
            found.setdefault((p, _fold(text)), levels[size])
        elif size == body and "bold" in font.lower() and _NUMBERED.match(text):
            found.setdefault((p, _fold(text)), len(sizes) + 1)
    return found


def pdf_to_text(raw: bytes, scanned_pages: bool = False) -> PdfText:
    """The text, title, outline and figures of a PDF; DocumentError when it cannot be read, or when it has
    no text layer, unless `scanned_pages` (a vision model will describe its page images) and it has images."""
    try:
        reader = PdfReader(io.BytesIO(raw))
        read = [_read_page(page) for page in reader.pages]
        pages = [text for text, _ in read]
        title = reader.metadata.get("/Title") if reader.metadata else None
        bookmarks = _bookmarks(reader)
        fonts = {} if bookmarks else _font_headings([runs for _, runs in read])
        figures = page_figures(reader.pages, pages)
    except FileNotDecryptedError as exc:
        raise DocumentError("encrypted PDF: a password is needed to read it (save a copy without one)") from exc
    except (PyPdfError, DependencyError, ValueError, KeyError, TypeError) as exc:
        raise DocumentError(f"unreadable PDF: {exc}") from exc
    headings: list[str] = []
    marked: list[str] = []
    for p, page_text in enumerate(pages):
        lines = page_text.strip().split("\n") if page_text.strip() else []
        if bookmarks:
            for _, level, heading in (b for b in bookmarks if b[0] == p):
                at = next((i for i, line in enumerate(lines) if _fold(line) == _fold(heading)), None)
                if at is None:
                    lines.insert(0, heading)
                    at = 0
                lines[at] = f"{'#' * min(level, 6)} {heading}"
                headings.append(heading)
        else:
            for i, line in enumerate(lines):
                level = fonts.get((p, _fold(line)))
                if level is not None:
                    heading = " ".join(line.split())
                    lines[i] = f"{'#' * min(level, 6)} {heading}"
                    headings.append(heading)
        if lines:
            marked.append("\n".join(lines))
    text = "\n\n".join(marked)
    if not text and not (scanned_pages and any(f.image for f in figures)):
        raise DocumentError(f"PDF has no text layer ({len(pages)} pages; scanned images need OCR first, "
                            "or a vision model: KG_VISION_MODEL)")
    return PdfText(text, str(title) if title else None, headings, figures)

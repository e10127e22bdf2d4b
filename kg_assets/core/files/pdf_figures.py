"""The figures of a PDF: the images of each page, with the caption set near them (seed 000, multimodal).

A caption is a line of the page's text layer that starts "Figure 3:", "Figure 3." or "Fig. 3." (case
aside). A page's images are paired with its captions in order: its first image with its first caption,
and so on. A figure's number is its caption's; an image without a caption is numbered by its place in
the document (the nth image of the document is figure n). An image that pypdf cannot decode keeps its
place, with the reason in `error`, and the other figures go on.
"""

from __future__ import annotations

import hashlib
import io
import mimetypes
import re
from dataclasses import dataclass

from pypdf import PdfReader
from pypdf.errors import PyPdfError

CAPTION = re.compile(r"^\s*(?:figure|fig\.)\s*(\d{1,4})\s*[:.]\s*(.*)$", re.I)


@dataclass(frozen=True)
class Figure:
    page: int  # 1-based page number
    figure_number: int
    caption: str | None  # the caption line without its "Figure 3:" label
    image_sha256: str | None
    error: str | None = None
    image: bytes | None = None  # the image file (PNG, JPEG ...) as pypdf extracts it; not stored
    media_type: str | None = None  # of `image`: image/png, image/jpeg ...


def _page_images(page) -> list[tuple[bytes | None, str | None, str | None]]:
    """(image bytes, media type, error) of each image of one page; a corrupt image gives (None, None, reason)."""
    try:
        names = list(page.images.keys())
    except (PyPdfError, KeyError, TypeError, ValueError, AttributeError, OSError) as exc:
        return [(None, None, f"cannot list the page's images: {type(exc).__name__}: {exc}"[:300])]
    out: list[tuple[bytes | None, str | None, str | None]] = []
    for name in names:
        try:
            image = page.images[name]
            image.image.load()  # decode it, so a corrupt image is found here and not by the model
            out.append((image.data, mimetypes.guess_type(image.name)[0] or "image/png", None))
        except Exception as exc:  # noqa: BLE001  pypdf and Pillow raise many kinds for a corrupt image
            out.append((None, None, f"image {name} cannot be decoded: {type(exc).__name__}: {exc}"[:300]))
    return out


def page_figures(pages: list, page_texts: list[str]) -> list[Figure]:
    """The figures of every page (pypdf pages and their extracted text), in document order."""
    figures: list[Figure] = []
    for p, (page, text) in enumerate(zip(pages, page_texts), start=1):
        captions = [(int(m.group(1)), " ".join(m.group(2).split()) or None)
                    for m in (CAPTION.match(line) for line in text.split("\n")) if m]
        for i, (data, media_type, error) in enumerate(_page_images(page)):
            number, caption = captions[i] if i < len(captions) else (len(figures) + 1, None)
            figures.append(Figure(p, number, caption, hashlib.sha256(data).hexdigest() if data else None, error, data,
                                  media_type))
    return figures


def pdf_figures(raw: bytes) -> list[Figure]:
    """Every figure of a PDF with its image bytes, in document order (as `pdf_text` lists them)."""
    reader = PdfReader(io.BytesIO(raw))
    return page_figures(list(reader.pages), [p.extract_text() or "" for p in reader.pages])

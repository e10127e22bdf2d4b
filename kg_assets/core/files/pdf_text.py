"""PDF to text with pypdf: the text layer of every page, and the title from the metadata.

An encrypted PDF that opens with an empty user password (the usual "protected" PDF that anyone may
read) is read: pypdf tries the empty password itself, and AES needs `cryptography`. One that needs a
real password gets a clear error.
"""

from __future__ import annotations

import io

from pypdf import PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

from kg_assets.core.files import DocumentError


def pdf_to_text(raw: bytes) -> tuple[str, str | None]:
    try:
        reader = PdfReader(io.BytesIO(raw))
        pages = [page.extract_text() or "" for page in reader.pages]
        title = reader.metadata.get("/Title") if reader.metadata else None
    except FileNotDecryptedError as exc:
        raise DocumentError("encrypted PDF: a password is needed to read it (save a copy without one)") from exc
    except (PyPdfError, DependencyError, ValueError, KeyError, TypeError) as exc:
        raise DocumentError(f"unreadable PDF: {exc}") from exc
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        raise DocumentError(f"PDF has no text layer ({len(pages)} pages; scanned images need OCR first)")
    return text, str(title) if title else None

"""Turn one inbox file into a `documents` row: text, title, headings, date, hash — or a clear error.

Every format is reduced to plain text in which section headings stay as Markdown heading lines
("# Title", "## Section"), so chunking finds sections the same way for md, html and txt.
"""

from __future__ import annotations

import hashlib
import io
import re
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath

from kg_assets.core.chat import ChatLogError, parse_chat

SUPPORTED_SUFFIXES = {".txt": "txt", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".pdf": "pdf", ".jsonl": "chat"}
DEFAULT_MAX_BYTES = 20 * 1024 * 1024
_DATE_LINE = re.compile(r"^\s*(?:\*\*)?(?:date|published|updated)(?:\*\*)?\s*:\s*(?:\*\*)?\s*(\d{4}-\d{2}-\d{2})", re.I | re.M)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)


class DocumentError(ValueError):
    """A document that cannot become text; the message is recorded on its row."""


def document_key(path: Path, inbox: Path) -> str:
    """Partition key: the path relative to the inbox, '/'-separated, so keys are stable across OSes."""
    return PurePosixPath(path.resolve().relative_to(inbox.resolve())).as_posix()


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES and not path.name.startswith(".")


def _decode(raw: bytes) -> tuple[str, str]:
    if b"\x00" in raw[:8192] and not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DocumentError("binary content (NUL bytes) in a text document")
    try:
        return raw.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError as exc:
        from charset_normalizer import from_bytes

        best = from_bytes(raw).best()
        # Only accept a guess that is confident; a wrong guess would poison every downstream row.
        if best is None or best.chaos > 0.2 or best.coherence < 0.3:
            raise DocumentError(
                f"not valid UTF-8 (byte {exc.start}: {raw[exc.start:exc.start + 4]!r}) and no confident encoding guess"
            ) from exc
        return str(best), best.encoding


def _markdown(text: str) -> tuple[str | None, list[str]]:
    headings = [m.group(2) for m in _HEADING.finditer(text)]
    title = next((m.group(2) for m in _HEADING.finditer(text) if len(m.group(1)) == 1), None)
    return title, headings


def _html(text: str) -> tuple[str, str | None, list[str], str | None]:
    # lexbor (C) parses hostile markup (deep nesting, unclosed tags) in linear time.
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(text)
    meta_date = next(
        (m.attributes.get("content") for m in tree.css("meta")
         if (m.attributes.get("name") or m.attributes.get("property") or "").lower()
         in {"date", "article:published_time", "dc.date"}),
        None,
    )
    title_node = tree.css_first("title")
    title = " ".join(title_node.text().split()) if title_node else None
    tree.strip_tags(["script", "style", "nav", "noscript", "template", "head", "footer", "svg", "iframe"])
    headings: list[str] = []
    for node in tree.css("h1, h2, h3, h4, h5, h6"):
        heading = " ".join(node.text(separator=" ").split())
        headings.append(heading)
        node.replace_with(f"\n\n{'#' * int(node.tag[1])} {heading}\n\n")
    for node in tree.css("p, li, div, br, tr, section, article, blockquote, pre"):
        node.insert_after("\n")
    root = tree.body or tree.root
    lines = [" ".join(line.split()) for line in (root.text(separator="") if root else "").splitlines()]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return body, title or (headings[0] if headings else None), headings, meta_date


def _pdf(raw: bytes) -> tuple[str, str | None]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(raw))
        pages = [page.extract_text() or "" for page in reader.pages]
        title = (reader.metadata or {}).get("/Title") if reader.metadata else None
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise DocumentError(f"unreadable PDF: {exc}") from exc
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        raise DocumentError(f"PDF has no text layer ({len(pages)} pages; scanned images need OCR first)")
    return text, str(title) if title else None


def _chat(text: str) -> tuple[str, datetime | None]:
    try:
        chat = parse_chat(text)
    except ChatLogError as exc:
        raise DocumentError(str(exc)) from exc
    return chat.text, chat.first_timestamp


def _parse_ts(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(value.strip()[:10]), datetime.min.time())
        except ValueError:
            return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def extract_text(raw: bytes, source_type: str, stem: str) -> dict:
    """Text, title, headings, encoding and date of one file's bytes; raises DocumentError."""
    if not raw.strip():
        raise DocumentError("empty document")
    doc_date: datetime | None = None
    encoding = "utf-8"
    headings: list[str] = []
    title: str | None = None
    if source_type == "pdf":
        text, title = _pdf(raw)
    else:
        text, encoding = _decode(raw)
        if source_type == "html":
            text, title, headings, meta_date = _html(text)
            doc_date = _parse_ts(meta_date)
        elif source_type == "chat":
            text, doc_date = _chat(text)
        elif source_type == "md":
            title, headings = _markdown(text)
    if not text.strip():
        raise DocumentError("document has no text after extraction")
    if doc_date is None and (match := _DATE_LINE.search(text[:2000])):
        doc_date = _parse_ts(match.group(1))
    if title is None:
        first_line = text.strip().splitlines()[0].lstrip("# ").strip()
        title = first_line[:120] if 0 < len(first_line) <= 120 else stem
    return {"text": text, "title": title, "headings": headings, "encoding": encoding, "document_date": doc_date}


def content_hash(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def read_document(path: Path, key: str, max_bytes: int = DEFAULT_MAX_BYTES) -> dict:
    """A `documents` row for the file at `path`: status 'ok' with text, or 'error' with the reason."""
    row: dict = {"document_id": key, "path": str(path), "source_type": SUPPORTED_SUFFIXES.get(path.suffix.lower()),
                 "ingested_at": datetime.now(UTC), "status": "ok", "error": None}
    try:
        size = path.stat().st_size
        row["byte_size"] = size
        if size > max_bytes:
            raise DocumentError(f"document is {size:,} bytes, over the {max_bytes:,}-byte limit (KG_MAX_DOCUMENT_BYTES)")
        raw = path.read_bytes()
        row["content_hash"] = content_hash(raw)
        if row["source_type"] is None:
            raise DocumentError(f"unsupported file type {path.suffix!r}")
        row.update(extract_text(raw, row["source_type"], path.stem))
    except DocumentError as exc:
        row.update(status="error", error=str(exc))
    except OSError as exc:
        row.update(status="error", error=f"cannot read file: {exc.strerror or exc}")
    return row


def scan_inbox(inbox: Path) -> dict[str, str]:
    """Every supported file under the inbox: partition key -> 'size:mtime_ns' signature."""
    found: dict[str, str] = {}
    if not inbox.is_dir():
        return found
    for path in sorted(inbox.rglob("*")):
        if path.is_file() and is_supported(path) and not any(p.startswith(".") for p in path.relative_to(inbox).parts):
            stat = path.stat()
            found[document_key(path, inbox)] = f"{stat.st_size}:{stat.st_mtime_ns}"
    return found

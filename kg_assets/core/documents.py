"""Turn one inbox file into a `documents` row: text, title, headings, date, hash — or a clear error.

Every format is reduced to plain text in which section headings stay as Markdown heading lines
("# Title", "## Section"), so chunking finds sections the same way for md, html, txt and pdf. `headings`
is the document's structural anchor (seed 003), which the extraction prompt gives as its outline:
Markdown and HTML headings, plain-text headings (`files.plain_text`: numbered, underlined, all-caps and
title-case lines standing alone), PDF bookmarks or headings found from font sizes (`files.pdf_text`), and
for a chat its participants and time span.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path, PurePosixPath

import polars as pl

from kg_assets.core.chat import ChatLog, ChatLogError, messages_frame, parse_chat
from kg_assets.core.files import DocumentError
from kg_assets.core.files.decoding import decode
from kg_assets.core.files.html_text import html_to_text
from kg_assets.core.files.inbox import entry_hash, file_content_hash, resolve_key, source_type_of
from kg_assets.core.files.plain_text import plain_text_outline
from kg_assets.core.isolation import DocumentFailure

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
_DATE_LINE = re.compile(r"^\s*(?:\*\*)?(?:date|published|updated)(?:\*\*)?\s*:\s*(?:\*\*)?\s*(\d{4}-\d{2}-\d{2})", re.I | re.M)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)


def _markdown(text: str) -> tuple[str | None, list[str]]:
    headings = [m.group(2) for m in _HEADING.finditer(text)]
    title = next((m.group(2) for m in _HEADING.finditer(text) if len(m.group(1)) == 1), None)
    return title, headings


def _chat_log(text: str, forgotten_users: frozenset[str]) -> ChatLog:
    try:
        return parse_chat(text, forgotten_users)
    except ChatLogError as exc:
        raise DocumentError(str(exc)) from exc


def _chat(text: str, forgotten_users: frozenset[str]) -> tuple[str, datetime | None, list[str]]:
    """The attributed text (without the messages of forgotten users), the first message's time and the
    chat's anchor: its participants (display name and user id, in order of their first message) and its
    time span."""
    chat = _chat_log(text, forgotten_users)
    speakers: dict[str, str] = {}
    for message in chat.messages:
        name = message["display_name"]
        speakers.setdefault(message["user_id"], f"{name} ({message['user_id']})" if name else message["user_id"])
    times = [m["sent_at"] for m in chat.messages]
    anchor = [f"Participants: {', '.join(speakers.values())}"] if speakers else []
    if times:
        anchor.append(f"Messages: {len(times)} from {_iso(min(times))} to {_iso(max(times))}")
    return chat.text, chat.first_timestamp, anchor


def _iso(ts: datetime) -> str:
    return ts.astimezone(UTC).isoformat().replace("+00:00", "Z")


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


def extract_text(raw: bytes, source_type: str, stem: str, forgotten_users: frozenset[str] = frozenset(),
                 scanned_pages: bool = False) -> dict:
    """Text, title, headings, encoding, date, warning and figures of one file's bytes; raises DocumentError.

    A chat log leaves out the messages of `forgotten_users`. With `scanned_pages` (a vision model is
    configured), a PDF without a text layer is read when it has page images: its text is empty and its
    figures are what is extracted from."""
    if not raw.strip():
        raise DocumentError("empty document")
    doc_date: datetime | None = None
    encoding = "utf-8"
    headings: list[str] = []
    title: str | None = None
    warnings: list[str | None] = []
    figures: list[dict] = []
    if source_type == "pdf":
        # imported here: pypdf and its crypto are 0.1 s of every process's start-up, and most inboxes have no PDF
        from kg_assets.core.files.pdf_text import pdf_to_text

        pdf = pdf_to_text(raw, scanned_pages)
        text, title, headings = pdf.text, pdf.title, pdf.headings
        figures = [{"page": f.page, "figure_number": f.figure_number, "caption": f.caption,
                    "image_sha256": f.image_sha256, "error": f.error} for f in pdf.figures]
    else:
        decoded = decode(raw)
        text, encoding = decoded.text, decoded.encoding
        warnings.append(decoded.warning)
        if source_type == "html":
            page = html_to_text(text)
            text, title, headings, doc_date = page.body, page.title, page.headings, _parse_ts(page.date)
            warnings.append(page.warning)
        elif source_type == "chat":
            text, doc_date, headings = _chat(text, forgotten_users)
        elif source_type == "md":
            title, headings = _markdown(text)
        elif source_type == "txt":
            text, headings = plain_text_outline(text)
    warning = "; ".join(w for w in warnings if w) or None
    if not text.strip() and not figures:
        raise DocumentError("document has no text after extraction" + (f": {warning}" if warning else ""))
    if doc_date is None and (match := _DATE_LINE.search(text[:2000])):
        doc_date = _parse_ts(match.group(1))
    if title is None and text.strip():
        first_line = text.strip().splitlines()[0].lstrip("# ").strip()
        title = first_line[:120] if 0 < len(first_line) <= 120 else stem
    title = title or stem
    return {"text": text, "title": title, "headings": headings, "encoding": encoding, "document_date": doc_date,
            "warning": warning, "figures": figures}


def read_document(inbox: Path, key: str, max_bytes: int = DEFAULT_MAX_BYTES,
                  forgotten_users: frozenset[str] = frozenset(), scanned_pages: bool = False) -> dict:
    """The `documents` row of one partition key: status 'ok' with text, or 'error' with the reason.

    The key is resolved inside the inbox before anything is read (see `files.inbox`). The content hash
    is taken even when the file is refused for its size, so an unchanged file is never redone. A chat
    log's text leaves out the messages of `forgotten_users`; `scanned_pages` reads a PDF without a text
    layer by its page images (see `extract_text`).
    """
    name = PurePosixPath(key).name
    row: dict = {"document_id": key, "path": str(inbox / key), "source_type": source_type_of(name),
                 "ingested_at": datetime.now(UTC), "status": "ok", "error": None, "warning": None}
    try:
        try:
            path = resolve_key(inbox, key)
        except DocumentError:
            row["content_hash"] = entry_hash(inbox, key)  # a refused symlink's is its target text's
            raise
        row["content_hash"] = file_content_hash(path)
        size = path.stat().st_size
        row["byte_size"] = size
        if size > max_bytes:
            raise DocumentError(f"document is {size:,} bytes, over the {max_bytes:,}-byte limit (KG_MAX_DOCUMENT_BYTES)")
        if row["source_type"] is None:
            raise DocumentError(f"unsupported file type {PurePosixPath(name).suffix!r}")
        row.update(extract_text(path.read_bytes(), row["source_type"], PurePosixPath(name).stem, forgotten_users,
                                scanned_pages))
    except DocumentError as exc:
        row.update(status="error", error=str(exc))
    except OSError as exc:
        row.update(status="error", error=f"cannot read file: {exc.strerror or exc}")
    except Exception as exc:  # noqa: BLE001 - a reader's (or figure reader's) bug on this content: its error row
        row.update(status="error", error=DocumentFailure.of(key, "documents", exc).error)
    return row


def read_chat_messages(inbox: Path, key: str, content_hash: str, forgotten_users: frozenset[str] = frozenset()) -> pl.DataFrame:
    """MESSAGES rows of the chat log `key`, read again from the inbox as the documents row read it.

    Raises DocumentError when the file is no longer the one whose text the documents row holds (another
    content hash): the message offsets would not match the chunks, and the next run reads both again.
    """
    if entry_hash(inbox, key) != content_hash:
        raise DocumentError("the file changed after its documents row was read; the next run reads it again")
    return messages_frame(key, _chat_log(decode(resolve_key(inbox, key).read_bytes()).text, forgotten_users))

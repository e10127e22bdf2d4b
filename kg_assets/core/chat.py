"""Chat logs (`.jsonl`, one message object a line) -> message rows and the document text chunks are cut from.

Each line is one JSON object with
    ``user_id``, ``message_id``   strings or integers (Discord/Slack ids are numbers), not empty
    ``timestamp``                 ISO 8601 date-time (``Z`` or an offset; naive means UTC), or Unix seconds
    ``content``                   string (may be empty or span several lines)
and optionally
    display name                  ``display_name``, else ``user_name``, ``username`` or ``name`` (a string)
    reply-to                      ``reply_to``, else ``reply_to_message_id`` or ``in_reply_to`` (a message id)
Other fields are ignored. Blank lines are skipped. Any other line (not JSON, JSON that is not an object, a
missing or ill-typed field, an unreadable timestamp, a message id seen earlier in the file) makes the whole
file a `ChatLogError` naming the line, so a chat is either read completely or not at all.

The document text has one line per line of content, each prefixed with the message's time and speaker:
``[2025-10-20T08:02:11Z] Lena Ortiz (u-lena): ...`` (``[...] u-lena: ...`` without a display name). Every
chunk therefore carries who said what and when, and a line break inside a message cannot forge another
speaker. ``char_start``/``char_end`` of a message row delimit its lines in that text.

Messages of a forgotten user (`kg facts forget`) are checked like any other line and then left out of both
the text and the rows, so nothing they wrote reaches chunks, mentions or facts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from kg_assets.core import schemas

REQUIRED_FIELDS = ("user_id", "message_id", "timestamp", "content")
DISPLAY_NAME_FIELDS = ("display_name", "user_name", "username", "name")
REPLY_TO_FIELDS = ("reply_to", "reply_to_message_id", "in_reply_to")


# The prefix `parse_chat` writes on every line of the document text (see `_format_time` and `speaker`).
_LINE_PREFIX = re.compile(r"^\[(?P<time>\d{4}-\d{2}-\d{2}T[0-9:.]+(?:Z|[+-]\d{2}:\d{2}))\] (?P<speaker>[^\n]+?):(?: |$)", re.M)
_SPEAKER = re.compile(r"(?P<display>.+) \((?P<user>[^()]+)\)")


@dataclass(frozen=True)
class ChatLine:
    """One attributed line of chat document text: offsets into the text, who spoke and when."""

    start: int  # the line's first character (the "[" of its prefix)
    content_start: int  # the first character after the prefix
    end: int  # the line's end (its "\n" or the end of the text)
    sent_at: str
    user_id: str
    display_name: str | None
    name_start: int | None  # offsets of the display name in the text, when there is one
    name_end: int | None


def chat_lines(text: str) -> list[ChatLine]:
    """The attributed lines of a chat document's text (or of a chunk of it); [] for any other text."""
    out = []
    for m in _LINE_PREFIX.finditer(text):
        speaker = _SPEAKER.fullmatch(m.group("speaker"))
        end = text.find("\n", m.end())
        end = len(text) if end < 0 else end
        if speaker:
            name_start = m.start("speaker")
            out.append(ChatLine(m.start(), m.end(), end, m.group("time"), speaker.group("user"), speaker.group("display"),
                                name_start, name_start + len(speaker.group("display"))))
        else:
            out.append(ChatLine(m.start(), m.end(), end, m.group("time"), m.group("speaker"), None, None, None))
    return out


class ChatLogError(ValueError):
    """A chat log that cannot be read; the message names the offending line."""


@dataclass(frozen=True)
class ChatLog:
    text: str  # the document text: one attributed, timed line per content line
    messages: list[dict]  # MESSAGES rows without document_id / valid_from / valid_until
    first_timestamp: datetime | None


def _identifier(message: dict, field: str, number: int) -> str:
    value = message[field]
    if isinstance(value, bool) or not isinstance(value, str | int):
        kind = type(value).__name__
        raise ChatLogError(f"chat log line {number}: {field} must be a string or an integer, not {kind}")
    text = " ".join(str(value).split())  # a line break in an id must not break the one-line prefix
    if not text:
        raise ChatLogError(f"chat log line {number}: {field} is empty")
    return text


def _timestamp(value: object, number: int) -> datetime:
    if isinstance(value, bool):
        raise ChatLogError(f"chat log line {number}: timestamp must be ISO 8601 text or Unix seconds, not a boolean")
    try:
        if isinstance(value, int | float):
            return datetime.fromtimestamp(value, UTC)
        if isinstance(value, str):
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        pass
    raise ChatLogError(f"chat log line {number}: timestamp {value!r} is neither an ISO 8601 date-time nor Unix seconds")


def _optional_text(message: dict, fields: tuple[str, ...], number: int, label: str) -> str | None:
    for field in fields:
        value = message.get(field)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int):
            kind = type(value).__name__
            raise ChatLogError(f"chat log line {number}: {label} ({field}) must be a string, not {kind}")
        text = " ".join(str(value).split())
        if text:
            return text
    return None


def _format_time(ts: datetime) -> str:
    text = ts.astimezone(UTC).isoformat()
    return text.replace("+00:00", "Z")


def parse_chat(text: str, forgotten_users: frozenset[str] = frozenset()) -> ChatLog:
    """Parse the decoded text of a chat `.jsonl` file; raises ChatLogError on the first bad line.

    Messages whose user_id is in `forgotten_users` are validated, then left out."""
    messages: list[dict] = []
    out_lines: list[str] = []
    seen: dict[str, int] = {}
    offset = 0
    # "\n" only: JSON strings may hold U+2028 and other characters str.splitlines() would cut at.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ChatLogError(f"chat log line {number} is not JSON: {exc.msg}") from exc
        if not isinstance(message, dict):
            raise ChatLogError(f"chat log line {number} is JSON {type(message).__name__}, not an object with "
                               f"{', '.join(REQUIRED_FIELDS)}")
        missing = [f for f in REQUIRED_FIELDS if f not in message]
        if missing:
            raise ChatLogError(f"chat log line {number} lacks {', '.join(missing)}")
        user_id = _identifier(message, "user_id", number)
        message_id = _identifier(message, "message_id", number)
        if message_id in seen:
            raise ChatLogError(f"chat log line {number}: message_id {message_id!r} repeats line {seen[message_id]}")
        seen[message_id] = number
        content = message["content"]
        if not isinstance(content, str):
            raise ChatLogError(f"chat log line {number}: content must be a string, not {type(content).__name__}")
        sent_at = _timestamp(message["timestamp"], number)
        display_name = _optional_text(message, DISPLAY_NAME_FIELDS, number, "display name")
        reply_to = _optional_text(message, REPLY_TO_FIELDS, number, "reply-to")
        if user_id in forgotten_users:
            continue
        speaker = f"{display_name} ({user_id})" if display_name else user_id
        prefix = f"[{_format_time(sent_at)}] {speaker}:"
        content_lines = [c.strip() for c in content.splitlines() if c.strip()] or [""]
        rendered = [f"{prefix} {c}".rstrip() for c in content_lines]
        start = offset
        for piece in rendered:
            out_lines.append(piece)
            offset += len(piece) + 1
        messages.append({
            "message_id": message_id,
            "user_id": user_id,
            "display_name": display_name,
            "sent_at": sent_at,
            "content": content,
            "reply_to": reply_to,
            "line_number": number,
            "char_start": start,
            "char_end": offset - 1,
        })
    first = min((m["sent_at"] for m in messages), default=None)
    return ChatLog("\n".join(out_lines), messages, first)


def messages_frame(document_id: str, chat: ChatLog) -> pl.DataFrame:
    """MESSAGES rows of one parsed chat; valid_from / valid_until are left to the storage layer."""
    if not chat.messages:
        return schemas.empty(schemas.MESSAGES)
    frame = pl.DataFrame(chat.messages, infer_schema_length=None).with_columns(pl.lit(document_id).alias("document_id"))
    return schemas.conform(frame, schemas.MESSAGES)


def messages_at(messages: pl.DataFrame, spans: pl.DataFrame) -> pl.DataFrame:
    """Attach to each span (document_id, char_start) the message whose lines contain that offset.

    Spans are chunks or mentions in chat document text; they get message_id, user_id and sent_at, so
    what is learned from a chat line carries that message's time. Offsets outside any message get nulls.
    """
    lookup = messages.select(
        "document_id", pl.col("char_start").alias("_message_start"), pl.col("char_end").alias("_message_end"),
        "message_id", "user_id", "sent_at",
    ).sort("document_id", "_message_start")
    # both sides are sorted by offset within each document, which Polars cannot check when joining by group
    joined = spans.with_row_index("_order").sort("document_id", "char_start").join_asof(
        lookup, left_on="char_start", right_on="_message_start", by="document_id", strategy="backward",
        check_sortedness=False,
    )
    inside = pl.col("char_start") < pl.col("_message_end")
    return (
        joined.with_columns([pl.when(inside).then(pl.col(c)).otherwise(None).alias(c)
                             for c in ("message_id", "user_id", "sent_at")])
        .sort("_order").drop("_order", "_message_start", "_message_end")
    )


def observation_message_times(observations: pl.DataFrame, chunks: pl.DataFrame, messages: pl.DataFrame) -> pl.DataFrame:
    """observation_id -> observed_at: the time of the chat message an attribute observation was read from.

    An observation knows its chunk, not its sentence. Its message is, among the messages whose lines overlap
    the chunk, the earliest one whose content holds the observed value (case folded), preferring one that
    also names the entity. Observations outside chat documents, or with no such message, get no row (they
    keep their document's time).
    """
    if observations.height == 0 or messages.height == 0:
        return pl.DataFrame(schema={"observation_id": pl.String, "observed_at": schemas.TS})
    spans = chunks.select("chunk_id", pl.col("char_start").alias("_chunk_start"), pl.col("char_end").alias("_chunk_end"))
    candidates = (
        observations.select("observation_id", "chunk_id", "document_id",
                            pl.col("value").str.to_lowercase().alias("_value"),
                            pl.col("entity_name").str.to_lowercase().alias("_entity"))
        .join(spans, on="chunk_id")
        .join(messages.select("document_id", "sent_at", "char_start", "char_end",
                              pl.col("content").str.to_lowercase().alias("_content")), on="document_id")
        .filter((pl.col("char_start") < pl.col("_chunk_end")) & (pl.col("char_end") > pl.col("_chunk_start"))
                & pl.col("_content").str.contains(pl.col("_value"), literal=True))
        .with_columns(pl.col("_content").str.contains(pl.col("_entity"), literal=True).fill_null(False).alias("_names"))
    )
    return (
        candidates.sort(["observation_id", "_names", "sent_at"], descending=[False, True, False])
        .group_by("observation_id", maintain_order=True).first()
        .select("observation_id", pl.col("sent_at").alias("observed_at"))
    )

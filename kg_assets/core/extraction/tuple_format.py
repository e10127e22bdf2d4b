"""The tuple answer format, defined once: the prompt renders its template and worked example from the
definitions below, and the parser reads answers with the same definitions.

One record per line, fields separated by ``<|#|>``, the answer ends with ``<|COMPLETE|>`` (or
``<|CONTINUE|>`` when records remain unlisted)::

    entity<|#|>NAME<|#|>TYPE<|#|>DESCRIPTION
    relation<|#|>SOURCE<|#|>TARGET<|#|>KEYWORDS<|#|>DESCRIPTION<|#|>STRENGTH
    attribute<|#|>ENTITY<|#|>KEY<|#|>VALUE<|#|>CONFIDENCE

Line-oriented, so a truncated or partly malformed answer still yields its good lines. The field names of
a kind are the attribute names of its record class (:mod:`kg_assets.core.extraction.records`), so one
table says what a record holds, in which order, and which fields may be left out.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from kg_assets.core.extraction.records import Attribute, Entity, ParsedOutput, Relation

DELIMITER = "<|#|>"
DELIMITER_VARIANTS = ("<|>", "|#|")  # written by models trained on other prompts; accepted when parsing
_COMPLETE_WORD, _CONTINUE_WORD = "COMPLETE", "CONTINUE"
COMPLETE = f"<|{_COMPLETE_WORD}|>"
CONTINUE = f"<|{_CONTINUE_WORD}|>"
RECORD_SEPARATOR = "##"  # LightRAG-style answers put several records on one line


@dataclass(frozen=True)
class RecordKind:
    """One kind of record line: its name, its fields in order and how they are read."""

    name: str
    record: type
    fields: tuple[str, ...]  # after the kind; the record class's attribute names
    required: int  # the leading fields every line must have; the others are optional
    nonempty: frozenset[str]  # fields whose empty value makes the line malformed
    numeric: frozenset[str] = frozenset()  # read as numbers ("0.8", "80%")
    aliases: tuple[str, ...] = ()  # other spellings of the name accepted when parsing

    @property
    def template(self) -> str:
        """The line shown to the model: ``entity<|#|>NAME<|#|>TYPE<|#|>DESCRIPTION``."""
        return DELIMITER.join((self.name, *(f.upper() for f in self.fields)))


ENTITY = RecordKind("entity", Entity, ("name", "type", "description"), 3, frozenset({"name", "type"}))
RELATION = RecordKind(
    "relation", Relation, ("source", "target", "keywords", "description", "strength"), 4,
    frozenset({"source", "target"}), numeric=frozenset({"strength"}), aliases=("relationship",),
)
ATTRIBUTE = RecordKind(
    "attribute", Attribute, ("entity", "key", "value", "confidence"), 3,
    frozenset({"entity", "key", "value"}), numeric=frozenset({"confidence"}),
)
KINDS = (ENTITY, RELATION, ATTRIBUTE)
_KIND_BY_NAME = {n: k for k in KINDS for n in (k.name, *k.aliases)}
_BUCKET = {ENTITY.name: "entities", RELATION.name: "relations", ATTRIBUTE.name: "attributes"}


# --------------------------------------------------------------------------------------------------
# Rendering


def _render_record(kind: RecordKind, record: Entity | Relation | Attribute) -> str:
    """One record as its line; trailing optional fields that are unset (None) are left out."""
    values = [getattr(record, f) for f in kind.fields]
    while len(values) > kind.required and values[-1] is None:
        values.pop()
    return DELIMITER.join((kind.name, *map(str, values)))


def render(parsed: ParsedOutput) -> str:
    """A whole answer: entities, relations, attributes, then the terminator."""
    lines = [_render_record(kind, r) for kind in KINDS for r in getattr(parsed, _BUCKET[kind.name])]
    return "\n".join([*lines, COMPLETE])


def templates() -> str:
    """The template line of every kind, one a line, for the prompt."""
    return "\n".join(kind.template for kind in KINDS)


# --------------------------------------------------------------------------------------------------
# Parsing

_KIND_NAMES = "|".join(re.escape(n) for n in sorted(_KIND_BY_NAME, key=len, reverse=True))
_DELIM_RE = re.compile("|".join(re.escape(d) for d in (DELIMITER, *DELIMITER_VARIANTS)))
_TERMINATOR_RE = re.compile(rf"<\|\s*({_COMPLETE_WORD}|{_CONTINUE_WORD})\s*\|>", re.IGNORECASE)
_KIND_START = rf"\(?\s*[\"'`]?\s*(?:{_KIND_NAMES})\b"
_RECORD_SPLIT_RE = re.compile(
    re.escape(RECORD_SEPARATOR) + rf"(?=\s*(?:{_KIND_START}|<\|\s*{_COMPLETE_WORD}|$))", re.IGNORECASE
)
_LINE_PREFIX_RE = re.compile(r"^\s*(?:(?:\d{1,4}\s*[.):]|[-*•>])\s*|#{1,6}\s+)")
_KIND_RE = re.compile(  # a record kind followed by some field separator: a failed record, not prose
    rf"^\s*\(?\s*[\"'`]?(?:{_KIND_NAMES})[\"'`]?\s*(?:<|\||\t|,)", re.IGNORECASE
)
_PIPE_RE = re.compile(rf"^\s*[\"'`]?(?:{_KIND_NAMES})[\"'`]?\s*\|", re.IGNORECASE)
_TEMPLATES = frozenset(kind.template.casefold() for kind in KINDS)
_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "«": "»"}


def unquote(s: str) -> str:
    """Strip whitespace and any matching quotes around a field ("'Acme'", “Acme”)."""
    s = s.strip()
    while len(s) >= 2 and _QUOTES.get(s[0]) == s[-1]:
        s = s[1:-1].strip()
    return s


def _number(s: str) -> float | None:
    s = s.strip().rstrip(".")
    pct = s.endswith("%")
    try:
        v = float(s[:-1] if pct else s)
    except ValueError:
        return None
    if not math.isfinite(v):
        return None
    return v / 100 if pct else v


def _parse_record(line: str, gleaning_pass: int) -> tuple[RecordKind, Entity | Relation | Attribute, bool] | None:
    """One record line to (kind, record, has every optional field), or None when it is malformed."""
    s = line.strip()
    if s.startswith("(") and s.endswith(")"):
        s = s[1:-1]
    parts = _DELIM_RE.split(s)
    if len(parts) == 1 and _PIPE_RE.match(s):
        parts = s.split("|")
    parts = [unquote(p) for p in parts]
    while len(parts) > 1 and not parts[-1]:
        parts.pop()  # a trailing delimiter
    kind = _KIND_BY_NAME.get(parts[0].lower())
    if kind is None:
        return None
    given = parts[1:]
    if not kind.required <= len(given) <= len(kind.fields):
        return None
    values: dict[str, object] = {}
    for name, text in zip(kind.fields, given):
        if name in kind.numeric:
            number = _number(text)
            if number is None:
                return None
            values[name] = number
        elif not text and name in kind.nonempty:
            return None
        else:
            values[name] = text
    return kind, kind.record(**values, gleaning_pass=gleaning_pass), len(given) == len(kind.fields)


def _is_placeholder(kind: RecordKind, record: Entity | Relation | Attribute) -> bool:
    """The record is the format's template line copied (``entity<|#|>NAME<|#|>TYPE…``): an echo of the prompt."""
    required = kind.fields[: kind.required]
    return all(str(getattr(record, f)).strip().upper() == f.upper() for f in required[:2])


def _terminator(raw: str) -> re.Match | None:
    """The first terminator that ends the answer: on a line of its own, or ending a record line. One inside
    prose ("… nothing else, then <|COMPLETE|> (<|CONTINUE|> if …", an echoed instruction) ends nothing."""
    for m in _TERMINATOR_RE.finditer(raw):
        start = raw.rfind("\n", 0, m.start()) + 1
        end = raw.find("\n", m.end())
        before, after = raw[start: m.start()], raw[m.end(): len(raw) if end < 0 else end]
        if after.strip().strip("`").strip():
            continue
        head = _LINE_PREFIX_RE.sub("", before, count=1).strip().strip("`").strip()
        if not head or (_DELIM_RE.search(head) is not None and _KIND_RE.match(head) is not None) or head.endswith(
                RECORD_SEPARATOR):
            return m
    return None


LOOP_LINE_REPEATS = 3  # a line given this many times in an unfinished answer: the model is looping
_LOOP_TAIL_CHARS = 1200
_PHRASE_LOOP_RE = re.compile(r"(\S.{1,79}?)(?:\s*\1){7,}\s*$", re.S)  # a phrase 8+ times in a row ending the answer


def repetition(raw: str) -> str | None:
    """Why an answer looks like a loop (a line repeated, or a phrase repeating up to the end), or None."""
    counts: dict[str, int] = {}
    for line in raw.splitlines():
        key = " ".join(line.split()).casefold()
        if len(key) >= 3 and _TERMINATOR_RE.fullmatch(key) is None:
            counts[key] = counts.get(key, 0) + 1
            if counts[key] >= LOOP_LINE_REPEATS:
                return f"a line repeated {LOOP_LINE_REPEATS} times: {line.strip()[:80]!r}"
    loop = _PHRASE_LOOP_RE.search(raw[-_LOOP_TAIL_CHARS:])
    if loop and len(loop.group(0)) >= 120:  # not a rule of dashes ending a cut answer
        return "a phrase repeating to the end of the answer"
    return None


def parse_tuples(raw: str, *, gleaning_pass: int = 0, truncated: bool = False) -> ParsedOutput:
    """Parse a tuple-format answer line by line, keeping every valid record.

    Tolerated: surrounding whitespace, list numbering or bullets, Markdown code fences, quotes or
    parentheses around fields/records, ``<|>`` and ``|#|`` delimiter variants, records separated by
    ``##`` on one line, the terminator on the last record's line. Malformed record lines (wrong field
    count, unknown kind, empty name, unparseable strength/confidence) go to ``bad_lines``; prose lines
    without any delimiter are ignored. Without a terminator, a relation/attribute on a last line that
    does not end with a newline and lacks its optional trailing field (strength, confidence) is treated
    as cut off (bad): the answer was probably truncated by the token limit. A valid last entity line is
    kept (its name and type are whole). Parsing stops at ``<|COMPLETE|>`` on a line of its own or ending a
    record line; one inside prose (an echoed instruction) is no terminator.

    ``truncated`` (the server's finish_reason was "length"): the answer was cut by the token cap, so it is
    not complete whatever it holds. A record that is the template line (``entity<|#|>NAME<|#|>TYPE…``) is an
    echo of the prompt: counted in ``echoed_lines``, neither a record nor a bad line. ``degenerate`` says why
    an unfinished answer looks like a loop (:func:`repetition`).
    """
    out = ParsedOutput()
    if not raw:
        return out
    m = _terminator(raw)
    body = raw[: m.start()] if m else raw
    out.complete = m is not None and not truncated
    out.more_requested = m is not None and m.group(1).upper() == _CONTINUE_WORD
    if not out.complete:
        out.degenerate = repetition(body)
    lines = body.splitlines()
    cut_off = m is None and bool(lines) and (truncated or not raw.endswith(("\n", "\r")))
    for li, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("```"):
            continue
        line = _LINE_PREFIX_RE.sub("", line, count=1)
        pieces = [p for p in _RECORD_SPLIT_RE.split(line) if p.strip()]
        for pi, piece in enumerate(pieces):
            piece = piece.strip()
            is_record_like = _DELIM_RE.search(piece) is not None or _KIND_RE.match(piece) is not None
            if not is_record_like:
                continue  # prose ("Here are the entities:") is not a failed record
            if piece.casefold() in _TEMPLATES:  # the prompt's template line, copied
                out.echoed_lines += 1
                continue
            parsed = _parse_record(piece, gleaning_pass)
            if parsed is not None and not parsed[2] and cut_off and li == len(lines) - 1 and pi == len(pieces) - 1:
                parsed = None  # the answer stopped inside this record: a field may be cut
            if parsed is None:
                out.bad_lines.append(piece)
                continue
            kind, record, _ = parsed
            if _is_placeholder(kind, record):
                out.echoed_lines += 1
                continue
            getattr(out, _BUCKET[kind.name]).append(record)
    out.nothing_missing = (out.complete and out.record_count == 0 and not out.bad_lines and not out.more_requested
                           and not out.echoed_lines)
    return out

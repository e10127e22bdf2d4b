"""Headings of plain text, rewritten as Markdown heading lines so chunking finds sections as for md/html.

A line is a heading when it stands alone and looks like one (nothing else in the text is changed):

* the first line, short (at most 120 characters) and without a final full stop, followed by a blank
  line or an underline: the title, level 1;
* a line underlined by a line of ``===`` (level 1) or ``---`` (level 2) at least three long and at least
  half its length; the underline line becomes empty;
* after a blank line (or the start of the text), at most 12 words, not ending in ``. , ; : ! ?`` and not
  a list item:
  - numbered, ``2. Methods``, ``2.1 Data``, ``IV. Results``, unless the next line is numbered too (a
    list): level 1 + the depth of the number;
  - ALL CAPITALS with at least four letters: level 2;
  - with a blank line after it too, title case (every word capitalised but the small connectors) without
    a colon: level 2 ("People I Met", "Next Steps"; "Date: 2025-04-22" is not).
"""

from __future__ import annotations

import re

MAX_TITLE_CHARS = 120
MAX_HEADING_WORDS = 12
_UNDERLINE = re.compile(r"^\s*(=+|-+)\s*$")
_NUMBERED = re.compile(r"^((?:\d{1,2}\.)*\d{1,2}|[IVXLC]{1,5})\.?\s+(\S.*)$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•>|#]|\d{1,3}[.)]\s+\S.*[.!?:;,]$)")
_SMALL_WORDS = {"a", "an", "and", "at", "by", "de", "for", "in", "of", "on", "or", "the", "to", "vs", "with"}
_END_PUNCT = tuple(".,;:!?")


def _blank(lines: list[str], i: int) -> bool:
    return i < 0 or i >= len(lines) or not lines[i].strip()


def _title_case(line: str) -> bool:
    words = line.split()
    return (":" not in line and bool(words) and words[0][:1].isupper()
            and all(w[:1].isupper() or w[:1].isdigit() or w.lower() in _SMALL_WORDS for w in words))


def _level(line: str, standalone: bool, next_numbered: bool) -> int | None:
    """The heading level of a line after a blank line, or None when it reads as prose or a list item."""
    words = line.split()
    if len(words) > MAX_HEADING_WORDS or line.endswith(_END_PUNCT) or _LIST_ITEM.match(line):
        return None
    numbered = _NUMBERED.match(line)
    if numbered:
        # "1. Ask Lena" followed by "2. Send the notes" is a list
        return 1 + numbered.group(1).count(".") + 1 if numbered.group(2)[:1].isupper() and not next_numbered else None
    letters = [c for c in line if c.isalpha()]
    if len(letters) >= 4 and all(c.isupper() for c in letters):
        return 2
    if standalone and _title_case(line):
        return 2
    return None


def plain_text_outline(text: str) -> tuple[str, list[str]]:
    """(text with its heading lines as "#"-lines, the headings in order)."""
    lines = text.split("\n")
    out = list(lines)
    headings: list[str] = []
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        underline = _UNDERLINE.match(lines[i + 1]) if i + 1 < len(lines) else None
        level = None
        if underline and len(underline.group(1)) >= max(3, len(stripped) // 2) and not _UNDERLINE.match(line):
            level = 1 if underline.group(1)[0] == "=" else 2
            out[i + 1] = ""
        elif i == first and len(stripped) <= MAX_TITLE_CHARS and not stripped.endswith(".") and _blank(lines, i + 1):
            level = 1
        elif _blank(lines, i - 1) and i != first:
            level = _level(stripped, standalone=_blank(lines, i + 1),
                           next_numbered=i + 1 < len(lines) and bool(_NUMBERED.match(lines[i + 1].strip())))
        if level is not None:
            out[i] = f"{'#' * min(level, 6)} {stripped}"
            headings.append(stripped)
    return "\n".join(out), headings

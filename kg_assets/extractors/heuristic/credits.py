"""A credit line names who wrote, edited or photographed the story and which agencies it draws on, not what it is
about: "Author: Jane Roe, Lisbon / Editor: John Doe", "Reporting by Jane Roe" and an agency credit ("... the minister
said. ab / cd (AFP, Reuters)", "AP, Reuters (ab / cd)") where they close the text, and a line "By Jane Roe". Names
in such a line make no node; the same names written in the story's sentences still do. A label counts only where a
line or a sentence begins with it, so "the editor: ..." inside a sentence is prose, and only at the end of the text:
an "Author:" line at the head of a note says who wrote the note, a person of its story."""

from __future__ import annotations

import re
from dataclasses import replace

from kg_assets.core.extraction.rows import MentionRecord

# the labels of a credit, capitalised, then a colon or "by" ("Author:", "Editors:", "Reporting by")
_ROLES = r"Authors?|Editors?|Writers?|Reporters?|Reporting|Correspondents?|Photographers?|Photos?|Pictures?|Images?" \
         r"|Credits?|Translat(?:ors?|ion)|Text"
_LABEL_RE = re.compile(
    rf"(?:{_ROLES})[ \t]*:|(?:Additional[ \t]+reporting|Reporting|Written|Edited|Compiled|Translated|Photos?|Text)"
    rf"[ \t]+by[ \t]+(?=[A-Z])")
# a whole line "By Jane Roe" or "By Jane Roe and John Doe, Lisbon"
_BYLINE_RE = re.compile(r"^[ \t]*By[ \t]+[A-Z][\w.'’-]*(?:(?:[ \t]+|,[ \t]*)(?:[A-Z][\w.'’-]*|and))*[ \t]*$", re.M)
# editors' initials and the agencies drawn on, at the end of a line: "ab / cd (AFP, dpa)", "AP, AFP (ab / cd)"
_INITIALS = r"[a-z]{1,4}(?:[ \t]*/[ \t]*[a-z]{1,4})+"
_AGENCIES = r"[A-Z][\w.&'’-]*(?:[ \t]+[A-Z][\w.&'’-]*)*(?:[ \t]*,[ \t]*[a-z]*[A-Z][\w.&'’-]*(?:[ \t]+[A-Z][\w.&'’-]*)*)*"
_AGENCY_CREDIT_RE = re.compile(
    rf"(?:(?:{_INITIALS})[ \t]*)?\([ \t]*(?:{_AGENCIES}|[a-z]{{2,4}})(?:[ \t]*,[ \t]*\w[\w.&'’-]*)*[ \t]*\)[ \t]*$"
    rf"|(?:{_AGENCIES})[ \t]*\([ \t]*{_INITIALS}[ \t]*\)[ \t]*$", re.M)
_SENTENCE_END = ".!?\"”’')]"


def _opens(text: str, at: int) -> bool:
    """`at` begins a line or a sentence (after a full stop, a closing quote or bracket, and a space)."""
    k = at
    while k > 0 and text[k - 1] in " \t":
        k -= 1
    return k == 0 or text[k - 1] == "\n" or (k < at and text[k - 1] in _SENTENCE_END)


def _agency_credits(text: str):
    """The agency credits' matches: the pattern is tried only on the lines that end in a bracket (trying it at every
    capital of every chunk cost the extractor a tenth of its time)."""
    for line in re.finditer(r"^.*\)[ \t]*$", text, re.M):
        yield from _AGENCY_CREDIT_RE.finditer(text, line.start(), line.end())


def credit_regions(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of the credit lines of a chunk: a byline, and the credits that close the text (from a
    label to the end of its line, or an agency credit that ends a line, with nothing but other credits after it). A
    label in a note's header ("Author: Jordan Reyes" above the note) names someone the note is by and about."""
    closing = []
    for m in _LABEL_RE.finditer(text):
        if _opens(text, m.start()):
            end = text.find("\n", m.end())
            closing.append((m.start(), len(text) if end < 0 else end))
    closing += [m.span() for m in _agency_credits(text) if _opens(text, m.start())]
    regions = [m.span() for m in _BYLINE_RE.finditer(text)]
    tail = len(text.rstrip())
    for start, end in sorted(closing, key=lambda r: -r[1]):
        if end >= tail:
            regions.append((start, end))
            tail = min(tail, len(text[:start].rstrip()))
    return regions


def without_credits(text: str, mentions: list[MentionRecord]) -> list[MentionRecord]:
    """The mentions, those inside a credit line emptied (no row); the list keeps its length and order (relations
    and observations point at mentions by index)."""
    regions = credit_regions(text)
    if not regions:
        return mentions
    return [replace(m, name="") if m.name and m.char_start is not None
            and any(s <= m.char_start < e for s, e in regions) else m for m in mentions]

"""In a line written in Title Case a capital says nothing: "Netherlands Opens Up Labor Market", "Mzoudi Verdict
Postponed Amid New Testimony", a Markdown heading "## Budget Review Next Steps". There a span is a name only
as far as the text names it outside such lines: "Netherlands Opens Up Labor Market" is "Netherlands" when the
article names the Netherlands, and nothing when it does not.

A Title-Case line (:func:`title_case_lines`) has at least two words, at least 70% of its words capitalised,
no word in lower case but function words ("of", "in", "on": prose has others, "joined", "market"), and
among its capitalised words one that is normally lower case: a function word, or a word the chunk writes in lower case
elsewhere ("Verdict" beside "the verdict"). A Markdown heading (a line opening with "#", as HTML headings are
written too) needs no such word: a heading is written in Title Case whatever it says ("## Northwind Responds",
"# QDL and ETH Zurich Paper Accepted at NeurIPS 2025" in a chunk with nothing else to go by). A line of names
only ("Sarah Chen", "Angela Merkel, Berlin") is no such line. A mention in such a line becomes the longest run of its words that a mention outside those
lines has in its name ("Mzoudi" of "Abdelghani Mzoudi"), with the type of that name (untyped for a part of
one: the linker's type vote joins it to the typed name); with none it gets an empty name (no row). A mention
typed by a title or the gazetteer (confidence 0.85 and more) stays as it is.
"""

from __future__ import annotations

import re
from dataclasses import replace

from kg_assets.core.extraction.rows import MentionRecord
from kg_assets.extractors.heuristic.lexicon import FUNCTION_WORDS, STOPWORDS, VERB_FORMS

MIN_CAPITALISED = 0.7
MAX_WORDS = 25  # longer lines are prose, however capitalised
SURE = 0.85  # a type from a title or the gazetteer
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_LOWER = re.compile(r"(?<![\w'’-])[a-z][a-z'’-]*")


def title_case_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of the lines of `text` written in Title Case (module docstring)."""
    lower_words = set(_LOWER.findall(text))
    small = FUNCTION_WORDS | STOPWORDS
    common = small | VERB_FORMS
    out = []
    pos = 0
    for line in text.split("\n"):
        start, pos = pos, pos + len(line) + 1
        words = _WORD.findall(line)
        if not 2 <= len(words) <= MAX_WORDS:
            continue
        capitalised = [w for w in words if w[:1].isupper()]
        if len(capitalised) < MIN_CAPITALISED * len(words):
            continue
        if any(not w[:1].isupper() and w.lower() not in small for w in words):
            continue  # Title Case leaves only small words in lower case ("of", "in", "on"); prose has others
        if line.lstrip().startswith("#") or any(w[1:].islower() or len(w) == 1 for w in capitalised
                                                 if w.lower() in common or w.lower() in lower_words):
            out.append((start, start + len(line)))
    return out


def _runs(words: list[str]) -> list[tuple[int, int]]:
    """Every contiguous run (i, j) of the words, longest first."""
    n = len(words)
    return [(i, i + k) for k in range(n, 0, -1) for i in range(n - k + 1)]


def names_in_headlines(text: str, mentions: list[MentionRecord]) -> list[MentionRecord]:
    """The mentions, those in Title-Case lines cut to what the text names elsewhere (module docstring); the list
    keeps its length and order (relations and observations point at mentions by index)."""
    lines = title_case_lines(text)
    if not lines:
        return mentions

    def in_line(m: MentionRecord) -> bool:
        return m.char_start is not None and any(s <= m.char_start < e for s, e in lines)

    # every run of words of a name written outside the Title-Case lines, with the type it takes: that of a
    # mention of exactly that name, else untyped (the linker's type vote then joins it to the typed name)
    named: dict[str, str] = {}
    for m in mentions:
        if m.name and not in_line(m):
            named[m.name] = m.entity_type
    for m in mentions:
        if m.name and not in_line(m):
            words = m.name.split()
            if len(words) <= 8:
                for i, j in _runs(words):
                    named.setdefault(" ".join(words[i:j]), "OTHER")
    out = []
    for m in mentions:
        if not m.name or not in_line(m) or (m.confidence or 0.0) >= SURE or m.name in named:
            out.append(m)
            continue
        words = m.name.split()
        best = next(((i, j) for i, j in _runs(words) if " ".join(words[i:j]) in named), None)
        if best is None:
            out.append(replace(m, name=""))
            continue
        name = " ".join(words[best[0]:best[1]])
        offset = m.name.find(name) if name in m.name else 0
        start = m.char_start + offset if m.char_start is not None else None
        out.append(MentionRecord(name, named[name], m.description, m.confidence, start,
                                 None if start is None else start + len(name), m.gleaning_pass))
    return out

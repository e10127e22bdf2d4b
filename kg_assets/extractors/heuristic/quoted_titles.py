"""A title in quotes is one name: the film "Away from Her", the talk "Simulating Error Correction on a Laptop",
the book "Peace and Punishment: The Secret Wars of Politics and International Justice". Its capitalised words
are no names of their own ("Away", "Laptop", "Politics"). A quote is a title when it is written in Title Case:
two words or more, the first capitalised, every other word capitalised or one of the small words titles keep
in lower case; quoted speech has lower-case words and is left alone."""

from __future__ import annotations

import re
from dataclasses import replace

from kg_assets.core.extraction.rows import MentionRecord

_QUOTE_RE = re.compile(r"[\"“]([^\"“”\n]{3,160})[\"”]")
_TOKEN_RE = re.compile(r"[^\s]+")
_EDGE_PUNCT = ",.;:!?'’()"
# the words a title writes in lower case (articles, conjunctions, short prepositions)
SMALL_WORDS = frozenset("""
a an the and or nor but of in on at to for from with by as into onto over under about toward towards vs via upon
off out up per than
""".split())
CONF_QUOTED_TITLE = 0.5


def title_case_quotes(text: str) -> list[tuple[int, int]]:
    """(start, end) of each quoted title's words in `text`, without the quotes and trailing punctuation."""
    found = []
    for m in _QUOTE_RE.finditer(text):
        inner = m.group(1)
        stripped = inner.rstrip(_EDGE_PUNCT + " ")
        words = [w.strip(_EDGE_PUNCT) for w in _TOKEN_RE.findall(stripped)]
        words = [w for w in words if w]
        if len(words) < 2 or not words[0][:1].isupper():
            continue
        capitalised = [w for w in words if w[:1].isupper() or w[:1].isdigit()]
        if len(capitalised) >= 2 and all(w in capitalised or w.casefold() in SMALL_WORDS for w in words):
            start = m.start(1) + (len(inner) - len(inner.lstrip()))
            found.append((start, m.start(1) + len(stripped)))
    return found


def quoted_titles(text: str, mentions: list[MentionRecord]) -> list[MentionRecord]:
    """The mentions, those inside a quoted title emptied (no row) and the whole title added at the end as one
    untyped mention; the list keeps the order and index of every mention (relations and observations point at
    mentions by index). A title that one mention already covers whole ("Boston Globe") stays that mention."""
    titles = title_case_quotes(text)
    if not titles:
        return mentions
    out = list(mentions)
    for start, end in titles:
        inside = [i for i, m in enumerate(out) if m.name and m.char_start is not None
                  and start <= m.char_start and (m.char_end or m.char_start) <= end]
        if not inside or any(out[i].char_start == start and out[i].char_end == end for i in inside):
            continue
        first = out[inside[0]]
        for i in inside:
            out[i] = replace(out[i], name="")
        out.append(MentionRecord(text[start:end], "OTHER", first.description, CONF_QUOTED_TITLE, start, end,
                                 first.gleaning_pass))
    return out

"""Sentence splitting for the heuristic extractor.

Sentences
    Split on ``. ! ? …`` followed by whitespace, on blank lines and before Markdown headings, list
    items, quotes and table rows. No split after honorifics/abbreviations (``Dr.``, ``Prof.``, ``Mr.``,
    ``St.``, ``e.g.``, ``vs.``), after single-letter initials (``John F. Kennedy``), or when the next word
    starts lowercase. After ``Inc.``/``Corp.``/``Ltd.``/``Co.``/``etc.`` and dotted acronyms (``U.S.``) the
    split happens only when the next word is a typical sentence opener (``The``, ``He``, ``However`` ...).
"""

from __future__ import annotations

import re

from kg_assets.extractors.heuristic.lexicon import NO_BREAK_ABBR, SOFT_ABBR, STOPWORDS, WORD_RE

_NEXT_LOWER_RE = re.compile(r"\s+[a-z]")
_SENT_END_RE = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)")
_BLOCK_MARK_RE = re.compile(r"[ \t]*(?:#{1,6}\s|[-*+•>|]\s?|\d{1,3}[.)]\s)")


def _blocks(text: str) -> list[tuple[int, int]]:
    """Paragraph-like blocks: split at blank lines, headings, list items, quotes and table rows."""
    blocks: list[tuple[int, int]] = []
    start = -1
    end = 0
    pos = 0
    prev_was_marker = False
    for line in text.split("\n"):
        ls, le = pos, pos + len(line)
        pos = le + 1
        if not line.strip():
            if start >= 0:
                blocks.append((start, end))
                start = -1
            prev_was_marker = False
            continue
        marker = _BLOCK_MARK_RE.match(line) is not None
        if start >= 0 and (marker or prev_was_marker):
            blocks.append((start, end))
            start = -1
        if start < 0:
            start = ls
        end = le
        stripped = line.lstrip()
        prev_was_marker = stripped.startswith(("#", "|"))
    if start >= 0:
        blocks.append((start, end))
    return blocks


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence (start, end) offsets into ``text``, trimmed of surrounding whitespace."""
    out: list[tuple[int, int]] = []
    for bs, be in _blocks(text):
        s = bs
        for m in _SENT_END_RE.finditer(text, bs, be):
            p = m.start()
            if text[p] == "." and m.group().count(".") == 1:
                j = p
                while j > bs and (text[j - 1].isalnum() or text[j - 1] == "."):
                    j -= 1
                word = text[j:p]
                key = word.lower()
                if _NEXT_LOWER_RE.match(text, m.end(), be) is not None:
                    continue  # a lowercase word never starts a sentence
                if key in NO_BREAK_ABBR or (len(word) == 1 and word.isupper()):
                    continue
                if key in SOFT_ABBR or ("." in word and word[:1].isalpha()):
                    rest = m.end()
                    while rest < be and text[rest].isspace():
                        rest += 1
                    after = WORD_RE.match(text, rest, be)
                    if after is None or after.group().lower() not in STOPWORDS:
                        continue
            e = m.end()
            if text[s:e].strip():
                out.append((s, e))
            s = e
        if s < be and text[s:be].strip():
            out.append((s, be))
    trimmed = []
    for s, e in out:
        seg = text[s:e]
        ls = len(seg) - len(seg.lstrip())
        rs = len(seg) - len(seg.rstrip())
        trimmed.append((s + ls, e - rs))
    return trimmed

"""Two names joined by a hyphen before a noun name a relation between them, not a third thing: the "Japan-Russia"
of "Japan-Russia talks", "the EU-Libya deal", "the Putin-Aso meeting" make no node. Only where each half is a
name in its own right (the gazetteer's, or named on its own in the chunk) and the pair itself is no name the
gazetteer knows ("Guinea-Bissau"); a state named with a hyphen stands as a noun ("in Saxony-Anhalt,") and stays."""

from __future__ import annotations

import re
from dataclasses import replace

from kg_assets.core.extraction.rows import MentionRecord
from kg_assets.extractors.heuristic.lexicon import word_key

_PAIR_RE = re.compile(r"(\w[\w.]*)-(\w[\w.]*)")
_NOUN_AFTER_RE = re.compile(r"[ \t]+[a-z]")


def without_name_pairs(text: str, mentions: list[MentionRecord], gazetteer: dict[str, str]) -> list[MentionRecord]:
    """The mentions, a hyphenated pair of names used before a noun emptied (no row); the list keeps its length and
    order (relations and observations point at mentions by index)."""
    pairs = {i: p.groups() for i, m in enumerate(mentions) if m.name and (p := _PAIR_RE.fullmatch(m.name))}
    before_noun = [i for i in pairs if mentions[i].char_end is not None and mentions[i].name[0].isupper()
                   and word_key(mentions[i].name) not in gazetteer and _NOUN_AFTER_RE.match(text, mentions[i].char_end)]
    if not before_noun:
        return mentions
    named = {word for i, m in enumerate(mentions) if m.name and i not in pairs for word in (m.name, m.name.split()[-1])}
    out = list(mentions)
    for i in before_noun:
        if all(half[:1].isupper() and (word_key(half) in gazetteer or half in named) for half in pairs[i]):
            out[i] = replace(out[i], name="")
    return out

"""A verb that opens a sentence is no part of a name: "Went" and "Comes" alone are no entities, "Ask Sarah
Chen" is Sarah Chen and "Confirm October" nothing; nor is a quantity before "of": "Two of QDL's arms" names
QDL. The capital of a sentence's first word says nothing, so a mention that starts a sentence (or a line,
after a bullet) with a verb form or an imperative loses that word; a given name never counts as a verb ("Will
Smith", "Grace Hopper"). An inflected verb alone is no name wherever it stands (a heading's "What Went Well")."""

from __future__ import annotations

import re
from dataclasses import replace

from kg_assets.core.extraction.rows import MentionRecord
from kg_assets.extractors.heuristic.lexicon import GIVEN_NAMES, MONTHS, VERB_BASES, VERB_FORMS

# imperatives of notes and agendas, beside the relation verbs of the lexicon
IMPERATIVES = frozenset("""
ask confirm review prepare check schedule update follow discuss draft plan reduce understand add remove
fix submit send book arrange verify clarify circulate collect set order request remind finalize finalise
""".split())
# quantities that open a sentence before "of" ("Fourteen of QDL's staff"), capitalised only by their place
QUANTITIES = frozenset("""
one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen
eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred hundreds thousand thousands
dozens millions some many most all both none each several half few
""".split())
_WORD = re.compile(r"\S+")
_BULLET = re.compile(r"^[\s\-*•>#]*(?:\d+[.)])?\s*$")


def starts_sentence(text: str, start: int) -> bool:
    """Nothing but a bullet before the mention on its line, or the end of a sentence just before it."""
    before = text[text.rfind("\n", 0, start) + 1:start]
    return bool(_BULLET.match(before)) or before.rstrip(" \t").endswith((".", "!", "?", ":", ";")) and before[-1:].isspace()


def _is_verb(word: str) -> bool:
    w = word.casefold()
    return w not in GIVEN_NAMES and (w in VERB_FORMS or w in VERB_BASES or w in IMPERATIVES)


def without_leading_verbs(text: str, mentions: list[MentionRecord]) -> list[MentionRecord]:
    """The mentions with a sentence-initial verb dropped from the name (the span moved past it); a mention
    that is nothing else, or is left with a month alone ("Confirm October"), gets an empty name, which makes
    no row (relations and observations pointing at it neither)."""
    out = []
    for m in mentions:
        words = _WORD.findall(m.name)
        if len(words) == 1 and words[0].casefold() in VERB_FORMS and words[0].casefold() not in GIVEN_NAMES:
            # an inflected verb alone is no name wherever it stands ("What Went Well", "What Comes Next")
            out.append(replace(m, name=""))
            continue
        if (len(words) > 2 and words[0].casefold() in QUANTITIES and words[1] == "of" and m.char_start is not None
                and starts_sentence(text, m.char_start)):
            rest = m.name[m.name.index(" of ") + 4:].lstrip()
            start = m.char_start + (len(m.name) - len(rest))
            out.append(replace(m, name=rest, char_start=start))
            continue
        if m.char_start is None or not words or not _is_verb(words[0]) or not starts_sentence(text, m.char_start):
            out.append(m)
            continue
        rest = m.name[len(words[0]):].lstrip()
        if not rest or rest.casefold() in MONTHS:
            out.append(replace(m, name=""))
            continue
        start = m.char_start + (len(m.name) - len(rest))
        out.append(replace(m, name=rest, char_start=start))
    return out

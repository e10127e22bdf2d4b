"""A common word that opens a sentence is capitalised for that reason alone, and so it joins the name after it:
"Stable Libya ...", "Former CIA station chief ...", "Defending Bundesliga champions ..." name Libya, the CIA and
the Bundesliga. The word is a common one where the chunk also writes it in lower case ("a stable government",
"the former minister"); the name after it must be a name in its own right (the gazetteer's, or named on its own
in the chunk), and the whole must be no name the gazetteer knows nor one the chunk writes inside a sentence, so
"White House" keeps its first word. Never a common word: a given name ("Will Smith"), a particle of a name ("Al
Qaeda", "Bin Laden", "Van Gogh"), or a word that makes place names ("New Mexico", "North Korea", "Upper Austria",
"Great Britain"). Verbs and quantities that open a sentence are `leading_verbs`' rule.

A nationality or religious adjective before a name describes it wherever it stands (heuristic-13): "Shiite Iran",
"the French Socialist Party", name Iran and the Socialist Party where the chunk also names them alone, and the rest
is a place the gazetteer knows or a name of two words or more ("European Commission" stays beside "the Commission",
"Latin America" where the chunk never writes "America" alone); the whole is no name the gazetteer knows ("French
Guiana" stays)."""

from __future__ import annotations

import re
from dataclasses import replace

from kg_assets.core.extraction.demonyms import is_demonym
from kg_assets.core.extraction.rows import MentionRecord
from kg_assets.extractors.heuristic.common_words import lower_case_words
from kg_assets.extractors.heuristic.leading_verbs import starts_sentence
from kg_assets.extractors.heuristic.lexicon import GIVEN_NAMES, PARTICLES, word_key

# words that begin names as a part of them, whatever their case elsewhere
_NAME_WORDS = PARTICLES | frozenset("""al el bin ibn abu bint ben san santa saint new old north south east west
northern southern eastern western central upper lower great greater little middle united""".split())
_NEVER_COMMON = GIVEN_NAMES | _NAME_WORDS
_CAPITALISED = re.compile(r"[A-Z][a-z]+\Z")


def without_leading_common_words(text: str, mentions: list[MentionRecord], gazetteer: dict[str, str]) -> list[MentionRecord]:
    """The mentions with a sentence-initial common word dropped from the name (the span moved past it) where the
    rest is a name in its own right; the list keeps its length and order (relations point at mentions by index)."""
    openers = [i for i, m in enumerate(mentions)
               if m.name and m.char_start is not None and " " in m.name and _CAPITALISED.match(m.name.split()[0])
               and m.name.split()[0].casefold() not in _NEVER_COMMON
               and (starts_sentence(text, m.char_start) or is_demonym(m.name.split()[0]))]
    if not openers:
        return mentions
    lower = lower_case_words(text)
    named = {m.name for m in mentions if m.name}
    inside = {m.name for m in mentions if m.name and m.char_start is not None and not starts_sentence(text, m.char_start)}
    out = list(mentions)
    for i in openers:
        m = mentions[i]
        first = m.name.split()[0]
        rest = m.name[len(first):].lstrip()
        if is_demonym(first):  # the rest named alone in the chunk, and a place or a name of two words or more
            cut = rest in named and (word_key(rest) in gazetteer or " " in rest)
        else:
            cut = first.casefold() in lower and m.name not in inside and (word_key(rest) in gazetteer or rest in named)
        if cut and word_key(m.name) not in gazetteer:
            out[i] = replace(m, name=rest, char_start=m.char_start + len(m.name) - len(rest))
    return out

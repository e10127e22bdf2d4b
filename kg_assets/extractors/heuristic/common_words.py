"""A capitalised common word is no name: "Officials", "Politics", "Experts", "Two" are capitalised only because
they open a line, a heading, a caption or a quote, and the same text writes them in lower case elsewhere
("officials said", "in politics"). A name is not written in lower case by the text that names it.

A word that opens a line is capitalised for that reason alone, like the first word of a sentence
(:func:`opens_line`: "Officials say ..." under a headline with no full stop), and so is a word after a colon
(:func:`follows_colon`: "DWTV: Hopefully ..."), so the sentence-initial rule of `mentions.py` applies to them too. (Not after an opening quote or bracket: there stand the titles of works and
the acronyms of names, "Troy", "(AfD)".)

A one-word mention with no cue of its own (typed by nothing, or only by a preposition before it: "in
Group A", "to History"), written with one capital and the rest lower case, is dropped when its chunk also has
the word in lower case. Acronyms ("US" beside "us", "IT" beside "it") and words with inner capitals
("iPhone") are not concerned, nor a word typed by a cue (a title, the gazetteer, the same name typed
strongly elsewhere, a surname). Nor is the plural of an acronym a name ("NGOs", "CEOs", "MEPs": a class of
things), nor such a word with the suffix of an English adverb or adjective ("Personally", "Literally",
"Expensive", "Possible": -ally, -ously, -ive, -able, -ous, -less ...; "Social", "Environmental": -ial, -ional,
-ental, -ical) or an abstract noun ("Journalism", "Modernization": -ism, -ization, -isation), whatever the chunk
writes in lower case.
"""

from __future__ import annotations

import re
from typing import Protocol, TypeVar


class _Mention(Protocol):  # a `mentions.Span` (not imported: mentions imports this module)
    name: str
    words: tuple[str, ...]
    cue: str


M = TypeVar("M", bound=_Mention)

_LOWER_WORD = re.compile(r"(?<![\w'’-])[a-z][a-z'’-]*")


def lower_case_words(text: str) -> set[str]:
    """The words `text` writes in lower case (a capitalised one among them is capitalised only by its place)."""
    return set(_LOWER_WORD.findall(text))
_WEAK_CUES = ("fallback", "preposition")
_ACRONYM_PLURAL = re.compile(r"[A-Z]{2,}s\Z")
# English adverbs and adjectives by their suffix ("Personally", "Expensive", "Possible"): alone, no name
_ADVERB_OR_ADJECTIVE = re.compile(r"[A-Z][a-z]{3,}(?:ally|fully|ously|ively|ably|ibly|ingly|ive|able|ible|ous|less|ful)\Z"
                                  # and by the suffixes of adjectives in -al and of abstract nouns ("Social",
                                  # "Environmental", "Journalism", "Modernization"; heuristic-13)
                                  r"|[A-Z][a-z]{2,}(?:ial|ional|ental|ical|ism|ization|isation)\Z")


_LINE_START = re.compile(r"[\s\"'“‘(\[]*\Z")


def opens_line(text: str, start: int) -> bool:
    """Only blanks and opening quotes or brackets stand between the start of its line and `start`."""
    return _LINE_START.match(text, text.rfind("\n", 0, start) + 1, start) is not None


_AFTER_COLON = re.compile(r":[\s\"'“‘]*\Z")


def follows_colon(text: str, start: int) -> bool:
    """A colon, then only blanks and opening quotes, before `start`: a capital there opens a sentence ("DWTV:
    Hopefully you ...", "in recent weeks: Two months before ...", a quote after "said:")."""
    return _AFTER_COLON.search(text, max(0, start - 8), start) is not None


def _bare(name: str) -> str:
    return re.sub(r"['’]s?$", "", name)


def without_common_words(text: str, spans: list[M]) -> list[M]:
    """The spans without the one-word, uncued mentions that the chunk also writes in lower case, nor plurals of
    acronyms."""
    single = [sp for sp in spans if len(sp.words) == 1 and sp.cue in _WEAK_CUES and " " not in sp.name]
    # the plural of an acronym is a class of things, not a name: "NGOs", "CEOs", "MEPs", "IDs"; nor is an adverb
    # or adjective, capitalised after a quote or in a heading
    drop = {id(sp) for sp in single if _ACRONYM_PLURAL.match(sp.name) or _ADVERB_OR_ADJECTIVE.match(sp.name)}
    candidates = [sp for sp in single if _bare(sp.name)[1:].islower()]
    if candidates:
        lower = lower_case_words(text)
        drop.update(id(sp) for sp in candidates if _bare(sp.name).lower() in lower)
    return [sp for sp in spans if id(sp) not in drop] if drop else spans

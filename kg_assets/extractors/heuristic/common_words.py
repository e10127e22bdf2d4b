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

heuristic-15 adds closed classes. A proper adjective by its suffix (-ic, -ine: "the Alpine country", "the Baltic
nation", "at Olympic stadium") alone, after a determiner or a preposition and before a common noun for a place or a
polity (`PLACE_NOUNS`), is no name where its chunk never writes the word alone (every time before such a noun or
inside a longer name): it describes the place the text speaks of ("across the Baltic." names the sea and stays; "the
Napoleonic era" is no place and stays). A genre or section label of a news story (`SECTION_LABELS`: "Interview",
"Opinion", "Analysis") alone, or last before a colon ("China Opinion: ..."), is no name, nor the plural of a noun
for people (`lexicon.PERSON_NOUNS`: "Lawmakers", "Journalists") alone. And the name of a religion ("Islam",
"Christianity") after "in" is no place: it stays untyped.
"""

from __future__ import annotations

import re
from typing import Protocol, TypeVar

from kg_assets.extractors.heuristic.lexicon import PERSON_NOUNS, PLACE_HEADS


class _Mention(Protocol):  # a `mentions.Span` (not imported: mentions imports this module)
    name: str
    words: tuple[str, ...]
    cue: str
    etype: str
    conf: float
    start: int
    end: int
    modifier: bool
    prev1: str | None


M = TypeVar("M", bound=_Mention)

_LOWER_WORD = re.compile(r"(?<![\w'’-])[a-z][a-z'’-]*")


def lower_case_words(text: str) -> set[str]:
    """The words `text` writes in lower case (a capitalised one among them is capitalised only by its place)."""
    return set(_LOWER_WORD.findall(text))
_WEAK_CUES = ("fallback", "preposition")
_CONF_FALLBACK = 0.4  # `mentions.CONF_FALLBACK`, the confidence of an untyped mention
_ACRONYM_PLURAL = re.compile(r"[A-Z]{2,}s\Z")
# English adverbs and adjectives by their suffix ("Personally", "Expensive", "Possible"): alone, no name
_ADVERB_OR_ADJECTIVE = re.compile(r"[A-Z][a-z]{3,}(?:ally|fully|ously|ively|ably|ibly|ingly|ive|able|ible|ous|less|ful)\Z"
                                  # and by the suffixes of adjectives in -al and of abstract nouns ("Social",
                                  # "Environmental", "Journalism", "Modernization"; heuristic-13)
                                  r"|[A-Z][a-z]{2,}(?:ial|ional|ental|ical|ism|ization|isation)\Z")


# proper adjectives by their suffix ("Alpine", "Baltic", "Olympic", "Arctic"; heuristic-15)
_PROPER_ADJECTIVE = re.compile(r"[A-Z][a-z]{2,}(?:ic|ine)\Z")
_BEFORE_ADJECTIVE = frozenset(
    "the a an this that these those its his her their our my your whose "
    "in at from near to into across throughout outside inside toward towards around within of".split())
# the religions whose names do not end in -ism (those are abstract nouns above); heuristic-15
RELIGIONS = frozenset("islam christianity christendom shinto voodoo vodou wicca santeria".split())


# common nouns for a place or a polity, which such an adjective describes ("the Alpine country" is a country)
PLACE_NOUNS = PLACE_HEADS | frozenset(
    """country countries nation nations state states land lands town towns village villages capital cities
    regions provinces coasts stadium arena""".split())
_NAME_AFTER = re.compile(r" [A-Z]")
_NOUN_AFTER = re.compile(r" ([a-z]+)(?:['’]s?)?(?![\w'’-])")


def _place_noun_after(text: str, end: int) -> bool:
    m = _NOUN_AFTER.match(text, end)
    return m is not None and m.group(1) in PLACE_NOUNS


# the labels of a news story's genre or section, alone ("Interview", "Opinion") or before a colon ("China Opinion:")
SECTION_LABELS = frozenset(
    "opinion analysis commentary comment editorial interview review obituary factbox explainer".split())
# plurals of the nouns for people ("Lawmakers", "Journalists"): a group of people, capitalised by a heading
_PEOPLE_PLURALS = frozenset({w + "s" for w in PERSON_NOUNS} | {w + "es" for w in PERSON_NOUNS if w.endswith(("s", "ch", "sh"))}
                            | {w[:-2] + "en" for w in PERSON_NOUNS if w.endswith("man")} | {"wives"})


def _only_attributive(text: str, word: str) -> bool:
    """The chunk never writes `word` alone: every time, a noun for a place ("the Baltic nation", "Baltic states") or a
    capitalised word of a longer name ("Olympic Stadium") follows it."""
    pat = re.compile(r"(?<![\w'’-])" + re.escape(word) + r"(?![\w'’-])")
    return all(_place_noun_after(text, m.end()) or _NAME_AFTER.match(text, m.end()) for m in pat.finditer(text))


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
    # a proper adjective before a noun for a place: "the Alpine country", "at Olympic stadium" (heuristic-15)
    drop.update(id(sp) for sp in single
                if _PROPER_ADJECTIVE.match(sp.name) and sp.prev1 in _BEFORE_ADJECTIVE
                and _place_noun_after(text, sp.end) and _only_attributive(text, sp.name))
    # a section label alone or before a colon, a plural noun for people alone (heuristic-15)
    drop.update(id(sp) for sp in spans if sp.cue in _WEAK_CUES and sp.words and sp.words[-1] in SECTION_LABELS
                and (len(sp.words) == 1 or text[sp.end:sp.end + 1] == ":"))
    drop.update(id(sp) for sp in single if sp.words[0] in _PEOPLE_PLURALS)
    for sp in single:  # "in Islam" names no place (heuristic-15)
        if sp.cue == "preposition" and sp.name.lower() in RELIGIONS:
            sp.etype, sp.conf, sp.cue = "OTHER", _CONF_FALLBACK, "fallback"
    candidates = [sp for sp in single if _bare(sp.name)[1:].islower()]
    if candidates:
        lower = lower_case_words(text)
        drop.update(id(sp) for sp in candidates if _bare(sp.name).lower() in lower)
    return [sp for sp in spans if id(sp) not in drop] if drop else spans

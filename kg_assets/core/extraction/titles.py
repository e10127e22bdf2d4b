"""People, not their titles: "US President Barack Obama" is Barack Obama, whose role is "US President";
a name made only of role words ("Editor", "Prime Minister") or of nationality words is no entity.

One rule, used by the row builder for every extractor: :func:`split_title`.
"""

from __future__ import annotations

import functools
import re

from kg_assets.core.extraction.demonyms import NAME_CACHE, is_demonym
from kg_assets.core.title_words import TITLE_HEADS, TITLE_MODIFIERS

# heads that, alone before one word, name a person by title ("President Obama", "Rapper XXXTentacion"); other
# heads alone before one word are part of a name ("Queen Elizabeth", "General Motors", "Head Office")
SINGLE_HEADS = frozenset("""
president chancellor minister premier governor mayor senator ambassador rapper singer actor actress coach
striker midfielder defender goalkeeper editor reporter correspondent journalist novelist dictator
mr mrs ms dr frau herr monsieur madame mp mep dj archaeologist economist analyst historian scientist researcher
activist lawyer producer comedian musician painter photographer filmmaker composer poet
""".split())
# heads that may follow a name in a byline or caption ("Kyle James Editor", "Reuters Correspondent"): titles
# that are no surnames (unlike "King", "Bishop", "Major" of "Stephen King", "John Major")
TRAILING_HEADS = frozenset("""
editor correspondent reporter journalist spokesman spokeswoman spokesperson ceo cfo cto coo chairman chairwoman
""".split())
_ACRONYM = re.compile(r"[A-Z]{2,3}\Z")  # "US Secretary", "UN High Commissioner": a body before a title
_CONNECTORS = frozenset({"of", "the", "and", "for", "de"})
# lower-case particles inside a person's name ("Ard van der Steur", "Thomas de Maiziere")
_PARTICLES = frozenset("van von der den de da di del du la le bin al ten ter".split())
_TOKEN = re.compile(r"\S+")


def _is_title_word(word: str) -> bool:
    w = word.casefold().strip(".,")
    return w in TITLE_HEADS or w in TITLE_MODIFIERS


def _is_role_word(word: str) -> bool:
    w = word.casefold().strip(".,")
    return _is_title_word(word) or w in _CONNECTORS or is_demonym(word) or all(
        is_demonym(p) for p in w.split("-") if p)


# the heads of an office written out ("Research Engineer"), beside the title heads; alone they stay descriptions
# ("the engineer" is one of the document's people)
OFFICE_HEADS = TITLE_HEADS | {"engineer", "developer", "designer", "architect", "consultant"}


def _is_role_phrase(words: list[str]) -> bool:
    """Two or three capitalised words from a title word to a title head name an office, not its holder: "Chief
    Technology Officer", "Research Engineer", "Managing Director" (not "Stephen King", "Kyle James Editor")."""
    return (2 <= len(words) <= 3 and _is_title_word(words[0]) and words[-1].casefold().strip(".,") in OFFICE_HEADS
            and all(w[:1].isupper() and w.casefold() not in _CONNECTORS for w in words))


@functools.lru_cache(maxsize=NAME_CACHE)
def split_title(name: str) -> tuple[str, int, str] | None:
    """(the name, its offset in `name`, the role) for a title before a name, ("", 0, "") for a name made only
    of role or nationality words (no entity), None when `name` is no titled name (kept as it is).

    A title is a run of capitalised words (a place, an office: "German", "Immigration", "US", "S African")
    ending in a title head ("President", "Minister", "Rapper"); what follows must be one to four
    capitalised words that are no title words: "Chinese President Xi Jinping" -> "Xi Jinping" (role
    "Chinese President"), "Rapper XXXTentacion" -> "XXXTentacion"."""
    tokens = [(m.group(), m.start()) for m in _TOKEN.finditer(name)]
    if not tokens:
        return None
    if all(_is_role_word(t) or (_ACRONYM.match(t) and i < len(tokens) - 1) for i, (t, _) in enumerate(tokens)) \
            and any(_is_title_word(t) for t, _ in tokens):
        return "", 0, ""
    if _is_role_phrase([t for t, _ in tokens]):
        return "", 0, ""
    last_head = max((i for i, (t, _) in enumerate(tokens) if t.casefold().strip(".,") in TITLE_HEADS), default=-1)
    if last_head < 0 or last_head == len(tokens) - 1:
        return None
    # the title goes on through "of" and title words after its head ("Secretary of State John Kerry")
    end = last_head + 1
    while end < len(tokens) - 1 and (tokens[end][0] in _CONNECTORS or _is_title_word(tokens[end][0])):
        end += 1
    prefix, rest = tokens[:end], tokens[end:]
    if not all(t[:1].isupper() or t.casefold() in _CONNECTORS for t, _ in prefix):
        return None
    if len(rest) > 4 or not all((t[:1].isupper() and not _is_title_word(t)) or (0 < i < len(rest) - 1 and t in _PARTICLES)
                                for i, (t, _) in enumerate(rest)):
        return None
    if len(prefix) == 1 and len(rest) == 1 and prefix[0][0].casefold() not in SINGLE_HEADS:
        return None
    start = rest[0][1]
    return name[start:], start, name[:prefix[-1][1] + len(prefix[-1][0])]


@functools.lru_cache(maxsize=NAME_CACHE)
def split_trailing_title(name: str) -> tuple[str, str] | None:
    """(the name, the title) for a name followed by a title that is no surname, as bylines and captions write
    them ("Kyle James Editor" -> "Kyle James", "Editor"); None otherwise. What precedes must be one to four
    capitalised words that are no title words."""
    tokens = name.split()
    if len(tokens) < 2 or tokens[-1].casefold().strip(".,:") not in TRAILING_HEADS:
        return None
    rest = tokens[:-1]
    if len(rest) > 4 or not all(t[:1].isupper() and not _is_title_word(t) for t in rest):
        return None
    return name[:name.rstrip().rfind(tokens[-1])].rstrip(), tokens[-1]

"""People, not their titles: "US President Barack Obama" is Barack Obama, whose role is "US President";
a name made only of role words ("Editor", "Prime Minister") or of nationality words is no entity.

One rule, used by the row builder for every extractor: :func:`split_title`.
"""

from __future__ import annotations

import re

from kg_assets.core.extraction.demonyms import is_demonym

# words that head a person's title or role
TITLE_HEADS = frozenset("""
president president-elect vice-president chancellor vice-chancellor minister secretary premier governor mayor
senator congressman congresswoman representative ambassador envoy king queen prince princess pope emperor
chairman chairwoman chairperson chair ceo cto cfo coo director editor editor-in-chief spokesman spokeswoman
spokesperson commissioner general colonel captain lieutenant admiral marshal sergeant major commander sheikh
emir sultan ayatollah imam cardinal archbishop bishop rabbi pastor rapper singer actor actress coach striker
midfielder defender goalkeeper chief judge prosecutor founder co-founder executive professor dr mr mrs ms
lawmaker mp correspondent reporter journalist author novelist candidate frau herr monsieur madame dictator
leader head boss manager officer
""".split())
# words that may stand before a head inside a title ("Prime Minister", "Foreign Secretary") and alone are no name
TITLE_MODIFIERS = frozenset("""
prime foreign interior defense defence finance economy economics justice deputy vice former acting state
federal national chief executive senior junior assistant general managing opposition party supreme
""".split())
# heads that, alone before one word, name a person by title ("President Obama", "Rapper XXXTentacion"); other
# heads alone before one word are part of a name ("Queen Elizabeth", "General Motors", "Head Office")
SINGLE_HEADS = frozenset("""
president chancellor minister premier governor mayor senator ambassador rapper singer actor actress coach
striker midfielder defender goalkeeper editor reporter correspondent journalist novelist dictator
""".split())
_CONNECTORS = frozenset({"of", "the", "and", "for", "de"})
_TOKEN = re.compile(r"\S+")


def _is_title_word(word: str) -> bool:
    w = word.casefold().strip(".,")
    return w in TITLE_HEADS or w in TITLE_MODIFIERS


def _is_role_word(word: str) -> bool:
    w = word.casefold().strip(".,")
    return _is_title_word(word) or w in _CONNECTORS or is_demonym(word) or all(
        is_demonym(p) for p in w.split("-") if p)


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
    if all(_is_role_word(t) for t, _ in tokens) and any(
            _is_title_word(t) for t, _ in tokens):
        return "", 0, ""
    last_head = max((i for i, (t, _) in enumerate(tokens) if t.casefold().strip(".,") in TITLE_HEADS), default=-1)
    if last_head < 0 or last_head == len(tokens) - 1:
        return None
    prefix, rest = tokens[:last_head + 1], tokens[last_head + 1:]
    if not all(t[:1].isupper() or t.casefold() in _CONNECTORS for t, _ in prefix):
        return None
    if len(rest) > 4 or not all(t[:1].isupper() and not _is_title_word(t) for t, _ in rest):
        return None
    if len(prefix) == 1 and len(rest) == 1 and prefix[0][0].casefold() not in SINGLE_HEADS:
        return None
    start = rest[0][1]
    return name[start:], start, name[:prefix[-1][1] + len(prefix[-1][0])]

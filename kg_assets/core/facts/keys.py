"""Fact keys: what a fact is about, so that a newer fact about the same thing replaces the older one.

Slots hold one current value per user. A fact takes a slot when its wording says so and its tense allows:
    location/residence       lives in, is based in, resides in (present); moved / relocated to (also when
                             tagged past: "moved to Lisbon" says where they live now)
    location/next_residence  a future fact: is moving to, will move to, plans to move to
    location/origin          is from, comes from, grew up in, was born in (any tense but future)
    work/employer            works at / for, is employed by (present); joined, started (working) at, got a
                             job at, was hired by (also past)
    work/occupation          works as, is a <...> (present work facts without an employer)
    relationship/partner     is married to / engaged to / dating / single / divorced, has a girlfriend,
                             boyfriend, partner, fiancé(e), wife or husband (present); got married /
                             engaged / divorced (also past)
    general/name             is called, is named, goes by, their name is; "is" + a capitalised name
    general/age              is N (years old), turned N
"lived in Boston for six years" or "used to work at X" are history and take no slot. Every other fact is
keyed by its type and its own content words, liking verbs and negations left out, so that "likes cats" and
"does not like cats" share ``preference/cat``. A hobby is keyed by what it is: its first content word
after verbs such as plays, goes, started, learning ("loves hiking on weekends" and "stopped hiking" share
``hobby/hik``). Keys use the stemmed words of words.py.
"""

from __future__ import annotations

import re

from kg_assets.core.facts.dedup import LIGHT_WORDS, NEGATIONS
from kg_assets.core.facts.words import content_word_list, stem, tokens

_LEAD = r"^(?:(?:now|currently|recently|just|still|also|finally|happily|has|have|had|originally)\s+)*"
_PRESENT = frozenset({"present", "timeless"})
_NOT_FUTURE = frozenset({"past", "present", "timeless"})
_SLOTS: tuple[tuple[str, frozenset[str], re.Pattern[str]], ...] = (
    ("location/residence", _NOT_FUTURE, re.compile(_LEAD + r"(?:moved|relocated)(?: back)? (?:to|into)\b")),
    ("location/residence", _PRESENT, re.compile(
        _LEAD + r"(?:lives|is living|resides|is based|is settled|settled) (?:in|at|near|on)\b")),
    ("location/origin", _NOT_FUTURE, re.compile(
        _LEAD + r"(?:is (?:originally )?from|comes from|(?:grew up|was born|was raised) (?:in|on|near))\b")),
    ("work/employer", _PRESENT, re.compile(
        _LEAD + r"(?:(?:works|is working)(?: as [^,;]+?)? (?:at|for)|is employed (?:at|by)|is an? [^,;]+? at)\b")),
    ("work/employer", _NOT_FUTURE, re.compile(
        _LEAD + r"(?:joined(?! (?:a|the) (?:gym|club|team|band|choir|league|class))|started(?: a new job| working)? "
        r"(?:at|for)|got a (?:new )?job (?:at|with)|(?:was|got) hired by)\b")),
    ("work/occupation", _PRESENT, re.compile(_LEAD + r"(?:(?:works|is working) as|is an?)\b")),
    ("relationship/partner", _PRESENT, re.compile(
        _LEAD + r"(?:is (?:married|engaged) to|is dating|is (?:single|divorced|widowed|separated)"
        r"|has an? (?:girlfriend|boyfriend|partner|fianc[eé]e?|wife|husband))\b")),
    ("relationship/partner", _NOT_FUTURE, re.compile(_LEAD + r"got (?:married|engaged|divorced)\b")),
    ("general/name", _NOT_FUTURE, re.compile(_LEAD + r"(?:is called|is named|goes by|their name is)\b")),
    ("general/age", _PRESENT, re.compile(_LEAD + r"(?:is|just turned|turned) \d{1,3}(?: years? old)?$")),
)
_NEXT_RESIDENCE = re.compile(
    _LEAD + r"(?:is moving|will (?:be )?mov(?:e|ing)|plans to move|is going to move|is relocating|will relocate)"
    r"(?: back)? to\b")
# Keys that hold what is true now (one value per user), as opposed to keys made of a fact's own words.
SLOT_KEYS = frozenset({key for key, _, _ in _SLOTS} | {"location/next_residence"})
HOBBY_VERBS = frozenset(stem(w) for w in (
    "plays play goes go does do started start learning learn takes take practices practice stopped quit"
).split())
MAX_KEY_WORDS = 6


_SELF_INTRODUCTION = re.compile(r"^is (?:[A-Z][\w'-]+)(?: [A-Z][\w'-]+){0,3}$")


def slot(fact_type: str, content: str, temporal: str) -> str | None:
    """The slot a fact fills, or None."""
    if temporal != "future" and _SELF_INTRODUCTION.match(content.strip()):
        return "general/name"  # "is Lena Ortiz"
    text = " ".join(tokens(content))
    if temporal == "future":
        return "location/next_residence" if _NEXT_RESIDENCE.search(text) else None
    for key, tenses, pattern in _SLOTS:
        if temporal not in tenses or (key == "work/occupation" and fact_type != "work"):
            continue  # "is a big fan of jazz" is no occupation
        if pattern.search(text):
            return key
    return None


def fact_key(fact_type: str, content: str, temporal: str) -> str:
    """`type/slot` for slot facts, else `type/` + the fact's content words (the activity, for hobbies)."""
    found = slot(fact_type, content, temporal)
    if found:
        return found
    words = [w for w in content_word_list(content) if w not in LIGHT_WORDS and w not in NEGATIONS]
    if fact_type == "hobby":
        activity = next((w for w in words if w not in HOBBY_VERBS), None)
        if activity:
            return f"hobby/{activity}"
    return f"{fact_type}/{'-'.join(sorted(set(words))[:MAX_KEY_WORDS]) or 'unspecified'}"

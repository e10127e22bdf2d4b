"""The cues of the offline fact extractor: a statement's type, tense, confidence and importance.

``type``: the first cue class that fires: life events, work (also "runs / leads ... at <Name>"), relationship,
family, location, hobby, preference, then event time words, else general. ``temporal``: future (will, going
to, plan to, next ...), timeless (born, from), past (used to, ago, last ..., before that, a past-tense main
verb), else present. ``confidence``: 0.6 when hedged (maybe, probably, kind of) or said of "we", 1.0 for plain
"I am / I have / I work / I live / my ... is" statements, else 0.8. ``importance``: 1.0 for major life facts
(marriage, children, job, where they live, health, death), 0.8 for family, relationships, places, school and
events, 0.5 for hobbies and general facts, 0.3 for other likes and dislikes (0.8 for allergies and diets).
"""

from __future__ import annotations

import re

from kg_assets.core.facts.person import IRREGULAR_PAST


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_HEDGE = re.compile(r"\b(?:maybe|probably|perhaps|kind of|kinda|sort of|pretty sure|possibly|might|i think)\b", re.I)
_FUTURE = re.compile(
    r"\b(?:will|going to|gonna|plan(?:ning)? to|about to|hope to|hoping to|want to|wants to|intend to|"
    r"next (?:week|month|year|summer|winter|spring|fall|weekend|semester)|soon|someday|one day)\b"
    r"|\b(?:is|am|'m) (?:moving|starting|getting married|having a baby|graduating|retiring|relocating)\b",
    re.I,
)
_TIMELESS = re.compile(r"\b(?:was born|born in|(?:is|am|'m) (?:originally )?from|come from|comes from)\b", re.I)
_PAST = re.compile(
    r"\b(?:used to|ago|last (?:week|month|year|summer|winter|spring|fall|night|weekend|time)|yesterday|"
    r"when (?:i|we) (?:was|were)|as a (?:kid|child)|growing up|grew up|back then|before that|in the past|once)\b",
    re.I,
)
_ADVERBS = frozenset("just also really recently finally never once actually only still already".split())
_EXPLICIT = re.compile(
    r"^(?:i am|i'm|im|i have|i've|i work|i live|i own|my \w+ (?:is|are))\b",
    re.I,
)

# Cue classes, checked in this order; a clause gets the first class with a cue (whole words, lowercase).
_LIFE_EVENT = re.compile(
    r"\b(?:got (?:married|engaged|divorced|promoted|fired|laid off|hired|accepted)|graduated|had (?:a|my|our) "
    r"(?:baby|son|daughter|first)|gave birth|passed away|died|retired|was promoted|got a new job|"
    r"(?:had|have had) (?:surgery|an accident)|broke (?:my|his|her) \w+|adopted|won (?:a|the|first))\b",
    re.I,
)
_WORK = _words(
    "job jobs work works worked working career employer employed boss office company coworker coworkers colleague "
    "colleagues shift shifts nurse teacher teaching engineer doctor lawyer manager developer programmer accountant "
    "chef waiter waitress cashier retail sales salesman mechanic farmer firefighter police officer soldier army navy "
    "military marine marines retired retire retirement promotion promoted hired fired intern internship business "
    "clients customers paycheck salary unemployed profession professor student students school college university "
    "degree major studying study class classes graduate graduated semester homework phd masters teach "
    "hospital restaurant store shop factory startup contractor freelance freelancer"
)
_WORK_AT = re.compile(r"\b(?:run|runs|lead|leads|manage|manages|head|heads|teach|teaches|handle|handles)\b[^,.;]*"
                      r"\b(?:at|for) (?:the )?[A-Z]")
_RELATIONSHIP = _words(
    "girlfriend boyfriend partner fiance fiancee married marriage wedding divorced divorce dating date single "
    "engaged friend friends bestie roommate roommates neighbor neighbors ex relationship"
)
_FAMILY = _words(
    "mom mother mum dad father parent parents son sons daughter daughters kid kids child children baby babies "
    "brother brothers sister sisters sibling siblings wife husband grandma grandmother grandpa grandfather "
    "grandparents grandkids grandchildren grandson granddaughter aunt uncle cousin cousins niece nephew family "
    "pregnant twins stepson stepdaughter stepmom stepdad"
)
_LOCATION = re.compile(
    r"\b(?:live|lives|lived|living|moved|move to|moving to|relocated|from|grew up|born in|hometown|"
    r"visit|visited|visiting|travel(?:ed|led)? to|trip to|vacation in|stay(?:ed)? in|city|town|state|country|"
    r"neighborhood|apartment|house|farm|beach|mountains)\b",
    re.I,
)
_HOBBY = _words(
    "hobby hobbies play plays playing played game games gaming soccer football basketball baseball softball tennis "
    "golf hockey volleyball running run jog jogging swim swimming yoga gym workout exercise lifting hike hiking "
    "camping camp fishing fish hunting hunt surfing surf skiing ski biking bike cycling climbing dance dancing "
    "guitar piano drums violin cello flute sing singing band choir paint painting draw drawing knit knitting "
    "crochet sew sewing photography photos write writing poetry poems craft crafts read reading books book novels "
    "garden gardening cook cooking bake baking collect collecting volunteer volunteering chess puzzles anime "
    "comics travel traveling travelling movies films shows tv music concerts video videogames sports team"
)
_PREFERENCE = re.compile(
    r"\b(?:like|likes|liked|love|loves|loved|enjoy|enjoys|enjoyed|prefer|prefers|favorite|favourite|hate|hates|"
    r"dislike|dislikes|can't stand|fan of|into|allergic|vegetarian|vegan|obsessed)\b",
    re.I,
)
_EVENT_TIME = re.compile(
    r"\b(?:recently|just|last (?:week|month|year|weekend|night)|yesterday|ago|this (?:week|weekend|month|year)|"
    r"next (?:week|month|year|weekend)|birthday|anniversary|wedding|funeral|tomorrow|tonight)\b",
    re.I,
)
_MAJOR = re.compile(
    r"\b(?:married|divorc\w*|engaged|pregnant|baby|babies|kids|children|son|sons|daughter|daughters|born|died|"
    r"passed away|cancer|disease|disabled|disability|diabetes|job|career|work(?:s|ed)? (?:at|as|for|in)|"
    r"retired|live[sd]? in|moved|graduated|degree|wife|husband)\b",
    re.I,
)
_STRONG_PREFERENCE = re.compile(r"\b(?:allergic|vegetarian|vegan|religio\w*|church|faith|sober)\b", re.I)


def fact_type(clause: str, words: frozenset[str]) -> str:
    """The type of a statement (`words`: its lowercase words)."""
    if _LIFE_EVENT.search(clause):
        return "event"
    if words & _WORK or _WORK_AT.search(clause):
        return "work"
    if words & _RELATIONSHIP:
        return "relationship"
    if words & _FAMILY:
        return "family"
    if _LOCATION.search(clause):
        return "location"
    if words & _HOBBY:
        return "hobby"
    if _PREFERENCE.search(clause):
        return "preference"
    if _EVENT_TIME.search(clause):
        return "event"
    return "general"


def _main_verb(clause: str) -> str:
    """The first word after the subject ("I", "we", "my sister") and any adverbs, lowercase."""
    words = re.findall(r"[\w']+", clause.lower())
    k = 2 if words[:1] in (["my"], ["our"]) else 1
    while k < len(words) and words[k] in _ADVERBS:
        k += 1
    return words[k] if k < len(words) else ""


def temporal(clause: str, main_clause: str) -> str:
    """The tense of a statement: `clause` with any leading time adverbial, `main_clause` without it."""
    if _FUTURE.search(clause):
        return "future"
    if _TIMELESS.search(clause):
        return "timeless"
    if _PAST.search(clause):
        return "past"
    verb = _main_verb(main_clause)
    if verb in IRREGULAR_PAST or (verb.endswith("ed") and verb not in {"need", "feed", "seed", "breed", "bleed"}):
        return "past"
    return "present"


def confidence(clause: str) -> float:
    if _HEDGE.search(clause) or re.match(r"^(?:we|we're|we've|our)\b", clause, re.I):
        return 0.6
    return 1.0 if _EXPLICIT.match(clause) else 0.8


def importance(fact_type: str, clause: str) -> float:
    if _MAJOR.search(clause):
        return 1.0
    if fact_type in {"family", "relationship", "location", "event", "work"}:
        return 0.8
    if fact_type == "preference":
        return 0.8 if _STRONG_PREFERENCE.search(clause) else 0.3
    return 0.5

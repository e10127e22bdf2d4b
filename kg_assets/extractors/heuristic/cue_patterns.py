"""The patterns that attribute cues are read with (see :mod:`kg_assets.extractors.heuristic.attributes`).

A cue pattern matches the words right before its object mention (``CUE_RE``, one named group per kind
of cue) or the whole gap between two mentions (the ``*_GAP_RE`` patterns, used with ``fullmatch``).
"""

from __future__ import annotations

import re

from kg_assets.extractors.heuristic.lexicon import ROLE_WORDS, UPPER

_ROLE_WORD = "(?:" + "|".join(re.escape(w) for w in sorted(ROLE_WORDS, key=len, reverse=True)) + r")(?![\w-])"
_ROLE_ONE = (
    rf"(?:[A-Za-z][\w-]*\s+){{0,3}}{_ROLE_WORD}"
    r"(?:\s+(?:of|for)\s+(?:the\s+)?[A-Za-z][\w-]*(?:\s+[a-z][\w-]*)?)?"
)
_ROLE_PHRASE = rf"(?i:{_ROLE_ONE}(?:\s+and\s+(?:(?:a|an|the)\s+)?{_ROLE_ONE})?)"
_TITLE_OPT = r"(?:(?:Dr|Prof|Mr|Mrs|Ms|Mx|Sir|Dame)\.?\s+)?"
_UPSTART = rf"(?=[{UPPER}]|[a-z]{{1,3}}[{UPPER}])"
_ACRONYM_OPT = r"(?:\s*\([^()]{1,20}\))?"
# Cues read right before their object mention (one finditer over the chunk); see AttributeReader.
CUE_RE = re.compile(
    r"\b(?=[jwehrisbmlcfCFH])(?:"  # the first-letter lookahead halves the scan time
    r"(?P<join>joined|joins|rejoined|rejoins)"
    r"|(?P<work>(?:works|working|worked)\s+(?:at|for))"
    r"|(?P<hired>(?:employed|hired|recruited)\s+by)"
    r"|(?P<copula>(?:is|serves\s+as|works\s+as|remains|became|has\s+become|was\s+named|was\s+appointed"
    r"|has\s+been\s+named|has\s+been\s+appointed)\s+(?:now\s+)?(?:(?:a|an|the|its|their)\s+)?"
    rf"(?P<crole>{_ROLE_PHRASE})\s+(?:at|of|for|with))"
    r"|(?P<hqmove>(?:moved|relocated)\s+(?:its|their)\s+(?:headquarters|HQ|head\s+office)"
    r"(?:\s+from\s+[^,.;]{1,40}?)?\s+to)"
    r"|(?P<move>(?:moved|relocated)(?:\s+back)?(?:\s+from\s+[^,.;]{1,40}?)?\s+to)"
    r"|(?P<hq>(?:headquartered|(?:headquarters|HQ|head\s+office)(?:\s+(?:is|are))?(?:\s+now)?)\s+in)"
    r"|(?P<based>based\s+in)"
    r"|(?P<lives>(?:lives|living|resides|residing)\s+in)"
    r"|(?P<founded>co-?founded|cofounded|founded)"
    r"|(?P<foundedby>(?:[Cc]o-?founded|[Cc]ofounded|[Ff]ounded)(?:\s+(?:in|on)\s+[^,.;]{1,30}?)?\s+by)"
    r"|(?P<foundedin>[Ff]ounded\s+in)"
    rf")\s+(?:the\s+)?{_TITLE_OPT}{_UPSTART}"
)
# Gaps between two mentions (fullmatch on the text between them).
APPOS_GAP_RE = re.compile(  # PERSON, a senior engineer at ORG
    r",\s+(?:who\s+is\s+(?:now\s+|currently\s+)?)?(?:(?:a|an|the|its|their|our|his|her)\s+)?"
    rf"(?P<role>{_ROLE_PHRASE})\s+(?:at|of|for|with)\s+(?:the\s+)?"
)
APPOS_AND_GAP_RE = re.compile(  # ... and a professor of physics at ORG2
    rf"{_ACRONYM_OPT}\s+and\s+(?:(?:a|an|the)\s+)?(?P<role>{_ROLE_PHRASE})\s+(?:at|of|for|with)\s+(?:the\s+)?"
)
COMMA_GAP_RE = re.compile(r",\s+(?:the\s+)?")
_POSS_ROLE = (
    r"['’]s\s+(?:(?:new|current|longtime|long-time)\s+)?"
    rf"(?P<role>(?i:(?:[A-Za-z][\w-]*\s+){{0,3}}{_ROLE_WORD}))"
)
POSS_ROLE_RE = re.compile(rf"{_POSS_ROLE}(?=\s*(?:[,;:.)—–]|$))")  # PERSON, ORG's chief technology officer,
POSS_TO_PERSON_RE = re.compile(rf"{_POSS_ROLE}\s*,?\s+{_TITLE_OPT}")  # ORG's CTO, PERSON
ORG_ROLE_PERSON_RE = re.compile(  # Northwind chief executive Diane Holloway / Google CEO Sundar Pichai
    rf"\s+(?P<role>(?:[a-z][\w-]*\s+){{0,2}}(?:{_ROLE_WORD}|CEO|CTO|CFO|COO|CIO))\s+{_TITLE_OPT}"
)
OF_GAP_RE = re.compile(r"\s+of\s+(?:the\s+)?")
COORD_GAP_RE = re.compile(rf"\s*(?:,\s*(?:and\s+)?|and\s+){_TITLE_OPT}")
RELATIVE_RE = re.compile(r"\s*,?\s*(?:who|which|that)\b")
WHO_RE = re.compile(r"\s*,\s*who\b")
# "who" with a plural verb speaks of a team, a party or a crowd ("Velmora United, who have won twice";
# heuristic-14), not of one person
WHO_PLURAL_RE = re.compile(r"\s*,\s*who\s+(?:have|are|were|do|haven't|aren't|weren't|don't)\b")
AS_ROLE_RE = re.compile(
    rf"{_ACRONYM_OPT},?\s+as\s+(?:(?:a|an|the|its|their|our|his|her)\s+)?"
    rf"(?P<role>[{UPPER}][\w&-]*(?:\s+(?:(?:of|for|and|&)\s+)?[{UPPER}][\w&-]*){{0,5}}|(?i:{_ROLE_ONE}))"
)
IN_AFTER_RE = re.compile(r",?\s+in\s+(?:the\s+)?")
BASED_GAP_RE = re.compile(
    rf"{_ACRONYM_OPT}\s*(?:,\s*(?:(?:who|which)\s+)?)?(?:(?:is|are|remains|has\s+been)\s+)?"
    r"(?:(?:now|currently|still|also)\s+)?"
)
FOUNDED_GAP_RE = re.compile(
    rf"{_ACRONYM_OPT}(?:\s*,\s*(?:a|an|the)\s+[^,;()]{{1,60}}?\s+|\s*,?\s*(?:(?:which|that)\s+)?"
    r"(?:(?:was|were|is|had\s+been|has\s+been)\s+)?(?:(?:originally|initially|jointly|first)\s+)?)"
)
LAST_TOKEN_RE = re.compile(r"([\w.'’-]+)\s*\Z")
NAME_TOKEN_RE = re.compile(rf"[{UPPER}][a-z\u00df-\u00ff]+(?:['’-][{UPPER}]?[a-z\u00df-\u00ff]+)?")

"""Relations between the mentions of a sentence, for the heuristic extractor.

Relations
    Per sentence, mentions in order of appearance, skipping attributive ones (``the AI team``: after a
    determiner and before a lowercase noun, or before ``-based``-like compounds). Each adjacent pair of
    distinct entities gives one relation, at most 3 per sentence (no cliques). Keywords are the words
    between the two mentions without function words and titles (up to 5, lowercase). The type is the
    first verb-like word between them plus a directly following preposition, in UPPER_SNAKE (``works
    at`` -> WORKS_AT, ``was founded by`` -> FOUNDED_BY, ``acquired`` -> ACQUIRED) with strength 1.0,
    unless the verb's object is a phrase of its own that a preposition then ties to the second name
    (``maintains the project at QDL``, ``leads the AI team at QDL``): the verb acts on the project and
    the team, not on QDL (heuristic-11). Verb-like: an inflected form (-s, -ed, -ing, irregular past) of a ~200-verb list, any lowercase
    word of 5+ letters ending in -ed, or a bare listed verb right after an auxiliary or "to" ("will
    acquire"); auxiliaries themselves are skipped. Without a verb (or when more than 12 words separate
    the two) it is RELATED_TO with strength 0.5 (co-occurrence). Direction is textual order (source
    before target). A pair repeated in a chunk with the same type is one relation (same relation_id).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kg_assets.core.extraction.rows import RelationRecord
from kg_assets.extractors.heuristic.lexicon import (
    BASE_AFTER,
    DETERMINERS,
    FUNCTION_WORDS,
    HONORIFICS,
    RELATION_PREPOSITIONS,
    VERB_BASES,
    WORD_RE,
    is_verb_form,
)
from kg_assets.extractors.heuristic.mentions import Span

MAX_PAIRS_PER_SENTENCE = 3
MAX_KEYWORDS = 5
MAX_VERB_GAP = 12  # words; farther apart than this is co-occurrence only
STRENGTH_VERB = 1.0
STRENGTH_COOCCURRENCE = 0.5
_UPPER_SNAKE_RE = re.compile(r"[^0-9A-Za-z]+")


def relations(text: str, spans: list[Span], sentence_text: Callable[[int], str]) -> list[RelationRecord]:
    """Relations of one chunk's mentions (rules above); ``sentence_text(i)`` is the i-th sentence, as description."""
    out: list[RelationRecord] = []
    k = 0
    n = len(spans)
    while k < n:
        sent = spans[k].sent
        endpoints: list[int] = []
        while k < n and spans[k].sent == sent:
            if not spans[k].modifier:
                endpoints.append(k)
            k += 1
        pairs = 0
        for a, b in zip(endpoints, endpoints[1:]):
            if pairs >= MAX_PAIRS_PER_SENTENCE:
                break
            sa, sb = spans[a], spans[b]
            if sa.etype == sb.etype and sa.name == sb.name:
                continue
            words = WORD_RE.findall(text, sa.end, sb.start)
            lowered = [w.lower() for w in words]
            rtype = None
            if len(words) <= MAX_VERB_GAP:
                for i, w in enumerate(words):
                    if w[0].isupper():
                        continue
                    lw = w.lower()
                    if lw in FUNCTION_WORDS:
                        continue
                    if is_verb_form(lw) or (lw in VERB_BASES and i > 0 and lowered[i - 1] in BASE_AFTER):
                        rtype = lw
                        after = i + 1
                        if after < len(words) and lowered[after] in RELATION_PREPOSITIONS:
                            rtype += "_" + lowered[after]
                            after += 1
                        if _acts_on_its_own_object(lowered[after:]):
                            rtype = None
                        break
            kws = [lw for lw in lowered if lw not in FUNCTION_WORDS and lw not in HONORIFICS]
            kws = kws[:MAX_KEYWORDS]
            keywords = " ".join(kws) if kws else None
            if rtype is None:
                relation_type, strength = "RELATED_TO", STRENGTH_COOCCURRENCE
            else:
                relation_type = _UPPER_SNAKE_RE.sub("_", rtype).strip("_").upper()
                strength = STRENGTH_VERB
            out.append(RelationRecord(a, b, relation_type, keywords, sentence_text(sent), strength))
            pairs += 1
    return out


def _acts_on_its_own_object(after_verb: list[str]) -> bool:
    """The words between a verb and the second name open with the verb's own object, a phrase begun by a
    determiner, and a preposition after it ties the name to that phrase: "maintains | the project at"."""
    if len(after_verb) < 3 or after_verb[0] not in DETERMINERS:
        return False
    return any(w in RELATION_PREPOSITIONS for w in after_verb[2:])

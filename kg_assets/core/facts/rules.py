"""The seed's rules for learning facts from chat messages, each in one named place.

* Switch and rate: ``FACT_EXTRACTION_ENABLED`` (default on) and ``FACT_EXTRACTION_RATE`` (default 0.3; 0.0
  never, 1.0 every message). The choice is a function of the message id (sha256 -> a number in [0, 1)),
  so a rerun samples the same messages and a higher rate samples a superset.
* Extractability, exactly as the seed states it, in its order: at least 20 characters, at least 50% letters,
  no ``! / ? .`` command prefix, not one of the seed's short phrases (the length rule already excludes them;
  kept so the list stays the seed's). One exception: a short yes or no answer ("Yes, I do!", "Nope.") to the
  other speaker's yes/no question (the message's context, answers.py) passes the length, letter and
  short-phrase rules, since it states the question's content.
* Answers: at most 3 facts per message (the first 3 valid ones), content under 100 characters, third person
  (a first-person fact is rewritten, see person.py), one of the 8 types (else ``general``), one of the 4
  temporal values (else ``present``). Confidence snaps to 0.6 / 0.8 / 1.0 and importance to 0.3 / 0.5 / 0.8 /
  1.0: values outside [0, 1] are clamped first, the nearest level wins and an exact tie goes to the lower
  level; a missing or non-numeric value takes the middle level (0.8 stated, 0.5 normal). Every change is
  returned as a note, so the caller can log it.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

from kg_assets.core.facts.answers import answered_statement
from kg_assets.core.facts.person import is_first_person, to_third_person
from kg_assets.core.facts.records import RawFact

FACT_TYPES = ("hobby", "work", "family", "preference", "location", "event", "relationship", "general")
TEMPORAL_VALUES = ("past", "present", "future", "timeless")
SOURCES = ("auto_extraction", "manual", "admin")
CONFIDENCE_LEVELS = (0.6, 0.8, 1.0)  # implied, stated, explicit
IMPORTANCE_LEVELS = (0.3, 0.5, 0.8, 1.0)  # trivial, normal, significant, very important
DEFAULT_CONFIDENCE = 0.8
DEFAULT_IMPORTANCE = 0.5
DEFAULT_TEMPORAL = "present"

DEFAULT_ENABLED = True
DEFAULT_RATE = 0.3
MIN_MESSAGE_LENGTH = 20
MIN_ALPHA_RATIO = 0.5
COMMAND_PREFIXES = ("!", "/", "?", ".")
SHORT_PHRASES = frozenset({
    "hi", "hello", "hey", "yo", "sup", "bye", "goodbye", "thanks", "thank you", "ok", "okay", "yes", "no",
    "yeah", "nah", "lol", "lmao", "haha", "hehe", "nice", "cool", "wow",
})
MAX_FACTS_PER_MESSAGE = 3
MAX_FACT_CHARS = 100  # content must be shorter than this
CONTEXT_CHARS = 200  # extraction_context: the first 200 characters of the message


def check_rate(rate: float) -> float:
    if not (isinstance(rate, int | float) and 0.0 <= rate <= 1.0):
        raise ValueError(f"FACT_EXTRACTION_RATE must be between 0.0 and 1.0, got {rate!r}")
    return float(rate)


def sample_point(message_id: str) -> float:
    """The message's fixed point in [0, 1): it is sampled when this is below the rate."""
    digest = hashlib.sha256(message_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def is_sampled(message_id: str, rate: float = DEFAULT_RATE, enabled: bool = DEFAULT_ENABLED) -> bool:
    return enabled and sample_point(message_id) < check_rate(rate)


def extractability_problem(content: str, context: str | None = None) -> str | None:
    """None when the seed would send the message to extraction, else the rule it fails; `context`: the other
    speaker's question the message answers, if any (a yes or no to a yes/no question is always extractable)."""
    if content.startswith(COMMAND_PREFIXES[:2]) or not context or answered_statement(context, content) is None:
        return _seed_problem(content)
    return None


def _seed_problem(content: str) -> str | None:
    if len(content) < MIN_MESSAGE_LENGTH:
        return f"shorter than {MIN_MESSAGE_LENGTH} characters"
    if sum(c.isalpha() for c in content) / len(content) < MIN_ALPHA_RATIO:
        return f"less than {MIN_ALPHA_RATIO:.0%} letters"
    if content.startswith(COMMAND_PREFIXES):
        return "starts like a command (! / ? .)"
    if content.lower().strip() in SHORT_PHRASES:
        return "a short phrase"
    return None


def snap(value: object, levels: Sequence[float], default: float) -> tuple[float, str | None]:
    """(level, note): the nearest level; note is None only when `value` already was that level."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return default, f"{value!r} is not a number; took {default}"
    clamped = min(max(float(value), 0.0), 1.0)
    # Compare in thousandths so 0.7 is exactly between 0.6 and 0.8; a tie goes to the lower level.
    scaled = round(clamped * 1000)
    level = min(levels, key=lambda lv: (abs(round(lv * 1000) - scaled), lv))
    return level, None if float(value) == level else f"{value} snapped to {level}"


@dataclass(frozen=True, slots=True)
class ValidFact:
    fact_type: str
    content: str
    confidence: float
    importance: float
    temporal: str


def _clean_content(value: object) -> str:
    return " ".join(str(value).split()).strip().rstrip(".").strip() if isinstance(value, str) else ""


def validate_answer(facts: Sequence[RawFact]) -> tuple[list[ValidFact], list[str]]:
    """The valid facts of one answer (at most 3) and a note for every change or drop."""
    kept: list[ValidFact] = []
    notes: list[str] = []
    for n, raw in enumerate(facts, start=1):
        content = _clean_content(raw.content)
        if not content:
            notes.append(f"fact {n}: empty content dropped")
            continue
        if is_first_person(content):
            rewritten = to_third_person(content)
            notes.append(f"fact {n}: first person rewritten as {rewritten!r}")
            content = rewritten
        if len(content) >= MAX_FACT_CHARS:
            notes.append(f"fact {n}: {len(content)} characters (limit {MAX_FACT_CHARS - 1}) dropped")
            continue
        if len(kept) == MAX_FACTS_PER_MESSAGE:
            notes.append(f"fact {n}: over {MAX_FACTS_PER_MESSAGE} facts per message dropped")
            continue
        fact_type = str(raw.fact_type).strip().lower() if raw.fact_type is not None else ""
        if fact_type not in FACT_TYPES:
            notes.append(f"fact {n}: type {raw.fact_type!r} unknown; took general")
            fact_type = "general"
        temporal = str(raw.temporal).strip().lower() if raw.temporal is not None else ""
        if temporal not in TEMPORAL_VALUES:
            notes.append(f"fact {n}: temporal {raw.temporal!r} unknown; took {DEFAULT_TEMPORAL}")
            temporal = DEFAULT_TEMPORAL
        confidence, note = snap(raw.confidence, CONFIDENCE_LEVELS, DEFAULT_CONFIDENCE)
        if note:
            notes.append(f"fact {n}: confidence {note}")
        importance, note = snap(raw.importance, IMPORTANCE_LEVELS, DEFAULT_IMPORTANCE)
        if note:
            notes.append(f"fact {n}: importance {note}")
        kept.append(ValidFact(fact_type, content, confidence, importance, temporal))
    return kept, notes

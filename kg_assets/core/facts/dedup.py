"""Duplicate facts: the seed's three rules, plus guards so that no distinct fact is merged away.

Seed rules (compared with each active fact of the same user, in this order of strength):
    exact         same text, case and whitespace folded                                   score 1.0
    substring     one contains the other, both longer than 10 characters                  score 1.0
    word_overlap  both have more than 2 distinct words (lowercased, split on whitespace)
                  and shared words / words of the shorter fact > 0.7                      score = that share
Guards (not in the seed) keep a matched fact anyway, and say why:
    content_word  each fact has a content word the other lacks: a substitution such as
                  sisters/brothers, Paris/Rome or two/three, not an added detail; liking verbs
                  (likes/loves/enjoys ...) do not count as content
    polarity      one fact is negated (not, never, no longer, hates, stopped ...) and the other is not
The best unguarded match wins (strongest rule, then highest score, then earliest fact); a fact with only
guarded matches is kept and records the best of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kg_assets.core.facts.words import content_words, stem, tokens

RULES = ("exact", "substring", "word_overlap")
_EXACT = ("exact", 1.0)
_SUBSTRING = ("substring", 1.0)
MIN_SUBSTRING_CHARS = 10  # both facts must be longer
MIN_OVERLAP_WORDS = 2  # both facts must have more distinct words
OVERLAP_SHARE = 0.7  # shared / words of the shorter fact must exceed this

LIGHT_WORDS = frozenset(stem(w) for w in (
    "like likes liked love loves loved enjoy enjoys enjoyed adore adores prefer prefers preferred fond fan big "
    "huge favorite favourite really"
).split())
NEGATIONS = frozenset(
    "not never no nor cannot can't don't doesn't didn't isn't wasn't aren't weren't won't hasn't haven't hadn't "
    "hate hates hated dislike dislikes disliked stopped quit quitting longer".split()
)


@dataclass(frozen=True, slots=True)
class Comparable:
    """A fact's text in the forms the rules compare."""

    folded: str  # lowercase, whitespace collapsed
    words: frozenset[str]  # the seed's words: lowercase, split on whitespace
    content: frozenset[str]  # stemmed content words without liking verbs
    negated: bool

    @classmethod
    def of(cls, text: str) -> Comparable:
        folded = " ".join(text.lower().split())
        raw = tokens(folded)
        return cls(folded, frozenset(folded.split()), content_words(folded) - LIGHT_WORDS,
                   any(t in NEGATIONS for t in raw))


@dataclass(frozen=True, slots=True)
class Match:
    rule: str
    score: float
    guard: str | None  # None: a duplicate; else why both are kept


def seed_rule(new: Comparable, old: Comparable) -> tuple[str, float] | None:
    """The first seed rule that calls `new` a duplicate of `old`, with its score."""
    a, b = new.folded, old.folded
    if a == b:
        return _EXACT
    if len(a) > MIN_SUBSTRING_CHARS and len(b) > MIN_SUBSTRING_CHARS and (a in b or b in a):
        return _SUBSTRING
    shorter = min(len(new.words), len(old.words))
    if shorter > MIN_OVERLAP_WORDS:
        share = len(new.words & old.words) / shorter
        if share > OVERLAP_SHARE:
            return "word_overlap", round(share, 4)
    return None


def guard(new: Comparable, old: Comparable) -> str | None:
    """Why two facts a seed rule matched are both kept, or None."""
    if new.negated != old.negated:
        return "polarity"
    if new.content - old.content and old.content - new.content:
        return "content_word"
    return None


def compare(new: Comparable, old: Comparable) -> Match | None:
    found = seed_rule(new, old)
    if found is None:
        return None
    rule, score = found
    return Match(rule, score, None if rule == "exact" else guard(new, old))


def rank(match: Match) -> tuple[int, float]:
    """Sort key of matches: unguarded first, then the stronger rule, then the higher score."""
    return (match.guard is not None, RULES.index(match.rule), -match.score)

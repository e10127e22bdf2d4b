"""A user's fact memory: dedup against the active facts, then supersession by fact key, in time order.

`build_user_facts` replays every fact of every user (automatic ones and manual ones alike) in the order
(valid_from, document_id, message id, fact_index, fact_id) through `UserMemory.add`, so the result is a pure
function of the set of facts: the same rows in any order, or delivered in several batches, give the same frame.

Rules of `UserMemory.add` (dedup.py and keys.py hold the comparisons):
1. Compare the new fact with each active fact of the user. An unguarded match makes it a duplicate: the row is
   kept with ``duplicate_of``, ``dedup_rule``, ``dedup_score`` and ``dedup_match``, and it is not active.
   Exception: a manual or admin fact is never set aside for an automatic one; it closes the automatic fact
   it matched instead (``dedup_guard`` = manual).
2. A fact kept with only guarded matches records the best one (``dedup_match``, ``dedup_guard``).
3. If an active fact has the same ``fact_key``, the new fact closes it: old ``valid_until`` = new
   ``valid_from``, ``superseded_by`` / ``supersedes`` link the two, and the old row stays as history.
   So there is at most one active fact per (user_id, fact_key), and A, B, A gives three rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.facts.dedup import Comparable, Match, compare, rank
from kg_assets.core.facts.keys import fact_key
from kg_assets.core.facts.records import KnownFact, RawFact
from kg_assets.core.facts.rules import CONTEXT_CHARS, ValidFact, validate_answer
from kg_assets.core.normalize import stable_hash

MANUAL_SOURCES = frozenset({"manual", "admin"})
MANUAL_CONFIDENCE = 1.0  # the user said it directly
MANUAL_IMPORTANCE = 0.8  # and wanted it remembered
_ORDER = ["valid_from", "document_id", "extracted_from_message_id", "fact_index", "fact_id"]
# Columns the memory decides (derived on every replay, never taken from the input).
_DECISIONS = schemas.FACT_DECISIONS


def fact_row(
    user_id: str,
    fact: ValidFact,
    *,
    valid_from: datetime,
    learned_at: datetime,
    source: str = "auto_extraction",
    document_id: str | None = None,
    message_id: str | None = None,
    fact_index: int = 0,
    message_content: str | None = None,
    extractor: str | None = None,
    extractor_version: str | None = None,
    taught_by: str | None = None,
) -> dict:
    """One USER_FACTS row before the memory's decisions (the only place such rows are built)."""
    origin = (document_id or source, message_id or valid_from.astimezone(UTC).isoformat())
    return {
        "fact_id": "fact_" + stable_hash(user_id, *origin, str(fact_index), fact.content),
        "user_id": user_id,
        "fact_type": fact.fact_type,
        "fact_key": None,  # set by UserMemory.add, so keys always follow the current rules
        "content": fact.content,
        "confidence": fact.confidence,
        "importance": fact.importance,
        "temporal": fact.temporal,
        "source": source,
        "taught_by": taught_by,
        "learned_at": learned_at,
        "valid_from": valid_from,
        "document_id": document_id,
        "extracted_from_message_id": message_id,
        "fact_index": fact_index,
        "extraction_context": message_content[:CONTEXT_CHARS] if message_content is not None else None,
        "extractor": extractor,
        "extractor_version": extractor_version,
    }


def manual_fact(user_id: str, text: str, *, at: datetime, source: str = "manual", taught_by: str | None = None,
                fact_type: str = "general", temporal: str = "present") -> tuple[dict, list[str]]:
    """The row of `kg facts remember` (source manual) or `teach --by ADMIN` (source admin), with notes.

    Confidence 1.0 and importance 0.8 as in the seed; the text goes through the same validation as an
    extractor's answer (third person, under 100 characters), which raises ValueError when nothing is left.
    """
    if source not in MANUAL_SOURCES:
        raise ValueError(f"source must be manual or admin, not {source!r}")
    if source == "admin" and not taught_by:
        raise ValueError("an admin fact needs taught_by")
    facts, notes = validate_answer([RawFact(fact_type, text, MANUAL_CONFIDENCE, MANUAL_IMPORTANCE, temporal)])
    if not facts:
        raise ValueError(f"not a storable fact: {'; '.join(notes)}")
    row = fact_row(user_id, facts[0], valid_from=at, learned_at=at, source=source, taught_by=taught_by)
    return row, notes


@dataclass(slots=True)
class _Active:
    row: dict
    text: Comparable
    rank: tuple[float, float]  # prompt order: most important, then most recent first
    known: KnownFact


class UserMemory:
    """One user's facts as they are added in time order; `rows` holds every fact with its decisions."""

    __slots__ = ("rows", "_active", "_by_key", "_known")

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self._active: dict[str, _Active] = {}  # fact_id -> active fact, in insertion order
        self._by_key: dict[str, str] = {}  # fact_key -> active fact_id
        self._known: dict[int, tuple[KnownFact, ...]] = {}  # limit -> known facts, until the next change

    def known(self, limit: int) -> tuple[KnownFact, ...]:
        """Active facts for a prompt: most important, then most recent first, at most `limit`."""
        if limit not in self._known:
            active = sorted(self._active.values(), key=lambda a: a.rank)
            self._known[limit] = tuple(a.known for a in active[:limit])
        return self._known[limit]

    def _close(self, old_id: str, by: dict) -> None:
        old = self._active.pop(old_id).row
        old.update(valid_until=by["valid_from"], superseded_by=by["fact_id"], is_active=False)
        if self._by_key.get(old["fact_key"]) == old_id:
            del self._by_key[old["fact_key"]]

    def add(self, fact: dict) -> dict:
        """Decide one new fact (a `fact_row` dict, taken over and completed) and return it."""
        row = fact
        self._known.clear()
        row.update({k: None for k in _DECISIONS})  # a replay decides afresh
        row["fact_key"] = fact_key(row["fact_type"], row["content"], row["temporal"])
        text = Comparable.of(row["content"])
        manual = row["source"] in MANUAL_SOURCES
        best: tuple[Match, str] | None = None
        replaced: list[str] = []
        for fact_id, active in self._active.items():
            match = compare(text, active.text)
            if match is None:
                continue
            if manual and active.row["source"] not in MANUAL_SOURCES:
                match = Match(match.rule, match.score, "manual")
                replaced.append(fact_id)
            if best is None or rank(match) < rank(best[0]):
                best = (match, fact_id)
        if best is not None:
            match, fact_id = best
            row.update(dedup_rule=match.rule, dedup_score=match.score, dedup_match=fact_id, dedup_guard=match.guard)
            if match.guard is None:
                row.update(duplicate_of=fact_id, is_active=False)
                self.rows.append(row)
                return row
        for fact_id in replaced:
            self._close(fact_id, row)
        previous = self._by_key.get(row["fact_key"])
        if previous is not None:
            self._close(previous, row)
            row["supersedes"] = previous
        row["is_active"] = True
        self._active[row["fact_id"]] = _Active(row, text, (-row["importance"], -row["valid_from"].timestamp()),
                                               KnownFact(row["fact_type"], row["content"]))
        self._by_key[row["fact_key"]] = row["fact_id"]
        self.rows.append(row)
        return row


def replay_order(rows: Iterable[dict]) -> list[dict]:
    """Facts in the order the memory takes them (nulls first, so manual facts precede chat facts at one time)."""
    def key(r: dict) -> tuple:
        return tuple((r.get(c) is not None, r.get(c) if r.get(c) is not None else "") for c in _ORDER)
    return sorted(rows, key=key)


def build_user_facts(facts: pl.DataFrame) -> pl.DataFrame:
    """USER_FACTS with every decision made afresh from the undecided facts of all users (see module rules)."""
    if facts.height == 0:
        return schemas.empty(schemas.USER_FACTS)
    memories: dict[str, UserMemory] = {}
    columns = [c for c in schemas.USER_FACTS if c not in _DECISIONS]
    rows = schemas.conform(facts, schemas.USER_FACTS).select(columns).unique("fact_id", keep="first").to_dicts()
    for row in replay_order(rows):
        memories.setdefault(row["user_id"], UserMemory()).add(row)
    decided = [row for user in sorted(memories) for row in memories[user].rows]
    return schemas.conform(pl.DataFrame(decided, schema=schemas.USER_FACTS), schemas.USER_FACTS)


def rebuild_memory(fact_inputs: pl.DataFrame, forgotten_users: frozenset[str]) -> pl.DataFrame:
    """kg.user_facts from every fact input (learned and manual), leaving out forgotten users."""
    return build_user_facts(fact_inputs.filter(~pl.col("user_id").is_in(list(forgotten_users))))


def active_facts(user_facts: pl.DataFrame) -> pl.DataFrame:
    """The current facts: neither set aside as duplicates nor superseded."""
    return user_facts.filter(pl.col("is_active"))

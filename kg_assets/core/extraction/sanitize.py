"""Sanitizing one chunk's parsed answer: types, names, endpoints, duplicates, bounds and caps.

Pure functions over the records of :mod:`kg_assets.core.extraction.records`. The LLM engine runs
:func:`sanitize` once per chunk on its merged passes, then :func:`row_records` resolves the names the
model wrote to the chunk's entities and finds them in the text, for the row builder
(:mod:`kg_assets.core.extraction.rows`).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

from kg_assets.core.extraction.records import Attribute, Entity, ParsedOutput, Relation
from kg_assets.core.extraction.rows import MentionRecord, ObservationRecord, RelationRecord
from kg_assets.core.extraction.tuple_format import unquote
from kg_assets.core.normalize import fold_marks, normalize_name, parse_keywords, word_separated

MAX_CHUNK_DESCRIPTION_CHARS = 500  # one chunk's descriptions of an entity or relation, joined up to this length
MAX_KEYWORDS = 8
MAX_NAME_CHARS = 120  # longer "names" are sentences, not entities

TYPE_ALIASES: dict[str, str] = {
    "ORG": "ORGANIZATION",
    "ORGANISATION": "ORGANIZATION",
    "COMPANY": "ORGANIZATION",
    "CORPORATION": "ORGANIZATION",
    "INSTITUTION": "ORGANIZATION",
    "AGENCY": "ORGANIZATION",
    "BUSINESS": "ORGANIZATION",
    "NORP": "ORGANIZATION",
    "LOC": "LOCATION",
    "GPE": "LOCATION",
    "PLACE": "LOCATION",
    "CITY": "LOCATION",
    "COUNTRY": "LOCATION",
    "GEO": "LOCATION",
    "FAC": "LOCATION",
    "FACILITY": "LOCATION",
    "PER": "PERSON",
    "PERS": "PERSON",
    "PEOPLE": "PERSON",
    "INDIVIDUAL": "PERSON",
    "HUMAN": "PERSON",
    "TECH": "TECHNOLOGY",
    "SOFTWARE": "TECHNOLOGY",
    "TOOL": "TECHNOLOGY",
    "PLATFORM": "TECHNOLOGY",
    "PROD": "PRODUCT",
    "EVT": "EVENT",
    "IDEA": "CONCEPT",
    "TOPIC": "CONCEPT",
    "MISC": "OTHER",
    "UNKNOWN": "OTHER",
}

PRONOUNS = frozenset(
    """i me my mine myself you your yours yourself yourselves he him his himself she her hers herself it
    its itself we us our ours ourselves they them their theirs themselves this that these those who whom
    whose which what someone somebody something anyone anybody anything everyone everybody everything
    one ones""".split()
)

_normalized = lru_cache(maxsize=100_000)(normalize_name)  # names repeat across passes, records and chunks
_SNAKE_RE = re.compile(r"[^0-9a-z]+")


def _fold(s: str) -> str:
    s = unicodedata.normalize("NFKD", s)
    return "".join(ch for ch in s if not unicodedata.combining(ch))


def attr_key(key: str) -> str:
    """snake_case attribute key: "Founded Year" -> founded_year, "HQ-location" -> hq_location, "国籍" -> 国籍."""
    k = fold_marks(key).strip()
    k = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", k)  # camelCase
    return word_separated(k.lower())  # any script's letters ("国籍"), as normalize_name keeps them


def relation_type_from_keywords(keywords: str | Sequence[str] | None) -> str:
    """UPPER_SNAKE of the first keyword (:func:`~kg_assets.core.normalize.parse_keywords`: "works at, employment"
    -> WORKS_AT); RELATED_TO when empty."""
    for kw in parse_keywords(keywords):
        t = _SNAKE_RE.sub("_", _fold(kw).lower()).strip("_").upper()
        if t:
            return t
    return "RELATED_TO"


def _clean_name(name: str) -> str:
    return " ".join(unquote(name).split())


def _name_key(name: str) -> str | None:
    """Normalized key of a usable entity name, None for empty, pronoun or overlong names."""
    if not name or len(name) > MAX_NAME_CHARS or name.casefold() in PRONOUNS:
        return None
    return _normalized(name) or None


def _join_text(current: str, new: str, limit: int = MAX_CHUNK_DESCRIPTION_CHARS) -> str:
    new = new.strip()
    if not new:
        return current
    if not current:
        return new[:limit]
    c, n = current.casefold().rstrip(" .;,"), new.casefold().rstrip(" .;,")
    if n in c:
        return current
    if c in n:
        return new[:limit]
    joined = f"{current} {new}"
    return joined if len(joined) <= limit else current


def _union_keywords(a: str, b: str) -> str:
    """The keywords of both (parse_keywords), at most MAX_KEYWORDS, joined by ", " (the row builder reads them
    into the list it stores with the same rule)."""
    return ", ".join(parse_keywords([a, b])[:MAX_KEYWORDS])


def _unit(value: float | None, default: float, stats: dict[str, int]) -> float:
    if value is None:
        stats["confidence_defaulted"] += 1
        return default
    if not math.isfinite(value):
        stats["clamped"] += 1
        return default
    if value < 0.0 or value > 1.0:
        stats["clamped"] += 1
        return min(1.0, max(0.0, value))
    return value


SANITIZE_STATS = (
    "unknown_type",
    "aliased_type",
    "dropped_entities",
    "merged_entities",
    "type_conflicts",
    "orphan_relations_dropped",
    "orphan_attributes_dropped",
    "entities_added",
    "self_relations_dropped",
    "merged_relations",
    "dropped_attributes",
    "merged_attributes",
    "clamped",
    "confidence_defaulted",
    "capped_entities",
    "capped_relations",
    "capped_attributes",
)


def _resolve_type(raw: str, allowed: set[str], unknown_types: str, stats: dict[str, int]) -> str | None:
    t = re.sub(r"[\s\-]+", "_", unquote(raw).strip().upper()).strip("_")
    if t in allowed:
        return t
    for cand in (TYPE_ALIASES.get(t), t[:-1] if t.endswith("S") else None, TYPE_ALIASES.get(t[:-1])):
        if cand and cand in allowed:
            stats["aliased_type"] += 1
            return cand
    stats["unknown_type"] += 1
    if unknown_types == "other" and "OTHER" in allowed:
        return "OTHER"
    return None


def sanitize(
    parsed: ParsedOutput,
    *,
    entity_types: Sequence[str],
    unknown_types: Literal["other", "drop"] = "other",
    orphan_relations: Literal["drop", "add"] = "drop",
    max_entities: int = 60,
    max_relations: int = 80,
    max_attributes: int = 30,
    default_confidence: float = 0.8,
) -> tuple[ParsedOutput, dict[str, int]]:
    """Clean one chunk's (merged) output; returns the clean output and counts of every change.

    Entities: types uppercased, aliases mapped (ORG -> ORGANIZATION, GPE -> LOCATION, plurals ...) when
    the target is allowed, unknown types -> OTHER (or dropped with ``unknown_types="drop"`` or when
    OTHER is not allowed); empty, pronoun and overlong names dropped; duplicates by normalized name
    merged (first name, type and pass kept, distinct descriptions joined up to 500 chars); a name seen
    with another type keeps its first type. Relations: endpoints matched by normalized name and
    rewritten to the entity's name; an unknown endpoint drops the relation, or with
    ``orphan_relations="add"`` adds the endpoint as an OTHER entity (when OTHER is allowed); the same
    policy applies to attributes of unknown entities. Self-relations dropped; duplicates by (source,
    target, relation type) merged (max strength, keywords union). Strength/confidence clamped to
    [0, 1], missing confidence -> ``default_confidence``. Caps: entities (in order), then relations
    whose endpoints survived, then attributes.
    """
    allowed = {t.strip().upper() for t in entity_types}
    stats = dict.fromkeys(SANITIZE_STATS, 0)
    by_key = _merge_entities(parsed.entities, allowed, unknown_types, stats)
    endpoints = _Endpoints(by_key, orphan_relations == "add" and "OTHER" in allowed, stats)
    # orphan endpoints may add entities, so relations and attributes resolve before the entity cap
    relations = _merge_relations(parsed.relations, endpoints, stats)
    attributes = _merge_attributes(parsed.attributes, endpoints, default_confidence, stats)

    entities = list(by_key.items())
    if len(entities) > max_entities:
        stats["capped_entities"] = len(entities) - max_entities
        entities = entities[:max_entities]
    kept_keys = {k for k, _ in entities}
    clean = ParsedOutput(
        bad_lines=list(parsed.bad_lines), complete=parsed.complete, nothing_missing=parsed.nothing_missing
    )
    clean.entities = [e for _, e in entities]
    clean.relations, stats["capped_relations"] = _capped(
        [r for r, s, t in relations if s in kept_keys and t in kept_keys], len(relations), max_relations)
    clean.attributes, stats["capped_attributes"] = _capped(
        [a for a, e in attributes if e in kept_keys], len(attributes), max_attributes)
    return clean, stats


def _merge_entities(entities: Sequence[Entity], allowed: set[str], unknown_types: str,
                    stats: dict[str, int]) -> dict[str, Entity]:
    """The usable entities by normalized name, duplicates merged into the first (its name, type and pass)."""
    by_key: dict[str, Entity] = {}
    for e in entities:
        name = _clean_name(e.name)
        key = _name_key(name)
        if key is None:
            stats["dropped_entities"] += 1
            continue
        etype = _resolve_type(e.type, allowed, unknown_types, stats)
        if etype is None:
            stats["dropped_entities"] += 1
            continue
        kept = by_key.get(key)
        if kept is None:
            by_key[key] = Entity(name, etype, " ".join(e.description.split()), e.gleaning_pass)
            continue
        stats["merged_entities"] += 1
        if kept.type != etype:
            stats["type_conflicts"] += 1
        kept.description = _join_text(kept.description, " ".join(e.description.split()))
    return by_key


class _Endpoints:
    """The entity a relation endpoint or an attribute names: found by normalized name, or added as an OTHER
    entity when orphans are added (`add_orphans`)."""

    def __init__(self, by_key: dict[str, Entity], add_orphans: bool, stats: dict[str, int]) -> None:
        self.by_key, self.add_orphans, self.stats = by_key, add_orphans, stats

    def find(self, name: str, gleaning_pass: int) -> Entity | None:
        name = _clean_name(name)
        key = _name_key(name)
        if key is None:
            return None
        hit = self.by_key.get(key)
        if hit is None and self.add_orphans:
            hit = self.by_key[key] = Entity(name, "OTHER", "", gleaning_pass)
            self.stats["entities_added"] += 1
        return hit


def _merge_relations(relations: Sequence[Relation], endpoints: _Endpoints,
                     stats: dict[str, int]) -> list[tuple[Relation, str, str]]:
    """(relation, source key, target key) of the relations between two known, different entities, duplicates
    by (source, target, relation type) merged into the first."""
    by_key: dict[tuple[str, str, str], tuple[Relation, str, str]] = {}
    for r in relations:
        src, tgt = endpoints.find(r.source, r.gleaning_pass), endpoints.find(r.target, r.gleaning_pass)
        if src is None or tgt is None:
            stats["orphan_relations_dropped"] += 1
            continue
        if src is tgt:
            stats["self_relations_dropped"] += 1
            continue
        strength = _unit(r.strength, 1.0, stats)
        kws = _union_keywords(r.keywords, "")
        skey, tkey = _normalized(src.name), _normalized(tgt.name)
        rkey = (skey, tkey, relation_type_from_keywords(kws))
        kept = by_key.get(rkey)
        if kept is None:
            rec = Relation(src.name, tgt.name, kws, " ".join(r.description.split()), strength, r.gleaning_pass)
            by_key[rkey] = (rec, skey, tkey)
            continue
        stats["merged_relations"] += 1
        rec = kept[0]
        rec.strength = max(rec.strength, strength)
        rec.keywords = _union_keywords(rec.keywords, kws)
        rec.description = _join_text(rec.description, " ".join(r.description.split()))
    return list(by_key.values())


def _merge_attributes(attributes: Sequence[Attribute], endpoints: _Endpoints, default_confidence: float,
                      stats: dict[str, int]) -> list[tuple[Attribute, str]]:
    """(attribute, entity key) of the attributes of known entities with a key and a value, duplicates by
    (entity, key, value) merged into the first (highest confidence)."""
    by_key: dict[tuple[str, str, str], tuple[Attribute, str]] = {}
    for a in attributes:
        key_name = attr_key(a.key)
        value = " ".join(unquote(a.value).split())
        if not key_name or not value:
            stats["dropped_attributes"] += 1
            continue
        ent = endpoints.find(a.entity, a.gleaning_pass)
        if ent is None:
            stats["orphan_attributes_dropped"] += 1
            continue
        conf = _unit(a.confidence, default_confidence, stats)
        ekey = _normalized(ent.name)
        akey = (ekey, key_name, value.casefold())
        kept = by_key.get(akey)
        if kept is None:
            by_key[akey] = (Attribute(ent.name, key_name, value, conf, a.gleaning_pass), ekey)
            continue
        stats["merged_attributes"] += 1
        kept[0].confidence = max(kept[0].confidence or 0.0, conf)
    return list(by_key.values())


def _capped(kept: list, before: int, limit: int) -> tuple[list, int]:
    """The first `limit` of the records whose entities survived the cap, and how many of `before` records
    were left out (for a lost entity or over the limit)."""
    return kept[:limit], before - min(len(kept), limit)


# --------------------------------------------------------------------------------------------------
# Records for the row builder


def _find_span(text: str, name: str) -> tuple[int, int] | None:
    """First occurrence of ``name`` in ``text``: written exactly so, else case-insensitive (whitespace-flexible,
    whole words first). The exact form first, so "Apple" is found as "Apple", not in an earlier "apple pie"."""
    tokens = name.split()
    if not tokens or not text:
        return None
    # Fast path (no regex compile per name): a whole-word occurrence, exact and then case-insensitive.
    for haystack, needle in ((text, " ".join(tokens)), (text.lower(), " ".join(tokens).lower())):
        at = haystack.find(needle)
        while at != -1:
            end = at + len(needle)
            if (at == 0 or not haystack[at - 1].isalnum()) and (end == len(haystack) or not haystack[end].isalnum()):
                return at, end
            at = haystack.find(needle, at + 1)
    body = r"\s+".join(re.escape(t) for t in tokens)
    m = re.search(r"(?<!\w)" + body + r"(?!\w)", text, re.IGNORECASE) or re.search(body, text, re.IGNORECASE)
    return (m.start(), m.end()) if m else None


def row_records(
    parsed: ParsedOutput, chunk_text: str | None
) -> tuple[list[MentionRecord], list[RelationRecord], list[ObservationRecord]]:
    """One chunk's (sanitized) answer as records for the row builder.

    Each entity is a mention spanning the first case-insensitive occurrence of its name in the chunk
    text; models give no confidence for entities. A name that does not occur in the text, not even
    once its diacritics, punctuation and possessives are folded (a whole-token match of normalized
    names, then without a span), is not an extraction of this chunk: the model made it up or was told
    to by the text, and it is dropped with its relations and attributes. Relation endpoints and
    attribute entities are resolved by normalized name to the first entity with that name; unresolved
    ones are skipped. Relation types come from the keywords
    (:func:`relation_type_from_keywords`), attribute keys are snake_cased (:func:`attr_key`).
    """
    text = chunk_text or ""
    folded_text: str | None = None  # the text's normalized tokens, "_A_B_", made when first needed
    mentions: list[MentionRecord] = []
    index: dict[str, int] = {}  # normalized name -> first entity with it
    for e in parsed.entities:
        # "SARAH_CHEN" is found as "Sarah Chen": a model's identifier spelling with its underscores read as spaces
        span = _find_span(text, e.name) or ("_" in e.name and _find_span(text, e.name.replace("_", " "))) or None
        key = _normalized(e.name)
        if span is None:
            if folded_text is None:
                folded_text = f"_{normalize_name(text)}_"
            if not key or f"_{key}_" not in folded_text:
                continue
        # The name as the chunk writes it, not as the model spelled it: display names follow the source text.
        name = " ".join(text[span[0]:span[1]].split()) if span else e.name
        index.setdefault(key, len(mentions))
        mentions.append(MentionRecord(
            name, e.type, e.description, None, span[0] if span else None, span[1] if span else None, e.gleaning_pass,
        ))
    relations = []
    for r in parsed.relations:
        src, tgt = index.get(_normalized(r.source)), index.get(_normalized(r.target))
        if src is not None and tgt is not None:
            relations.append(RelationRecord(src, tgt, relation_type_from_keywords(r.keywords), r.keywords,
                                            r.description, r.strength, r.gleaning_pass))
    observations = []
    for a in parsed.attributes:
        subject = index.get(_normalized(a.entity))
        if subject is not None:
            observations.append(ObservationRecord(subject, attr_key(a.key), a.value, a.confidence, a.gleaning_pass))
    return mentions, relations, observations

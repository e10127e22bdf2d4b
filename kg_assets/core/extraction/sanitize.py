"""LLM extraction output: pydantic models, tuple parsing with partial recovery, sanitizing, frames.

Flow for one chunk (the LLM extractor drives it; everything here is pure)::

    passes = [parse_tuples(raw0)]                      # or from_structured(out0)
    passes.append(parse_tuples(raw1, gleaning_pass=1))  # unless passes[-1] said nothing_missing
    clean, stats = sanitize(merge_passes(passes), entity_types=types)
    mentions, relations, attributes = to_frames([ChunkParse(cid, did, text, clean)], extractor=..., ...)

The pydantic models (``ExtractionOut``) are only the structured-output schema and its lenient validation;
everything after the answer works on plain slotted records (``Entity``, ``Relation``, ``Attribute``),
which cost a fraction of a validated model per record. Every record remembers the pass that produced it
(``record.gleaning_pass``, not part of the tool schema); set it when parsing (``gleaning_pass=``) or
later with ``parsed.at_pass(k)``; merging, sanitizing and ``to_frames`` keep it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, Field, field_validator

from kg_assets.core import schemas
from kg_assets.core.normalize import normalize_name, normalize_name_expr, stable_hash, with_entity_ids

__all__ = [
    "TYPE_ALIASES",
    "Attribute",
    "AttributeOut",
    "ChunkParse",
    "Entity",
    "EntityOut",
    "ExtractionOut",
    "ParsedOutput",
    "Relation",
    "RelationOut",
    "attr_key",
    "from_structured",
    "merge_passes",
    "parse_tuples",
    "relation_type_from_keywords",
    "sanitize",
    "to_frames",
]

MAX_DESCRIPTION_CHARS = 500  # merged descriptions are joined up to this length
MAX_KEYWORDS = 8
MAX_NAME_CHARS = 120  # longer "names" are sentences, not entities


# --------------------------------------------------------------------------------------------------
# Models (instructor response model)


def _text(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, list):
        return ", ".join(str(x) for x in v if x is not None)
    return v


class EntityOut(BaseModel):
    name: str = Field(description="As written in the text")
    type: str = Field(description="One of the entity types")
    description: str = Field("", description="One sentence")

    @field_validator("name", "type", "description", mode="before")
    @classmethod
    def _coerce_text(cls, v: Any) -> Any:
        return _text(v)


class RelationOut(BaseModel):
    source: str = Field(description="Entity name")
    target: str = Field(description="Entity name")
    keywords: str = Field("", description="Short phrases, main first")
    description: str = ""
    strength: float = Field(1.0, description="0-1")

    @field_validator("source", "target", "keywords", "description", mode="before")
    @classmethod
    def _coerce_text(cls, v: Any) -> Any:
        return _text(v)

    @field_validator("strength", mode="before")
    @classmethod
    def _strength(cls, v: Any) -> Any:
        return 1.0 if v is None or v == "" else v


class AttributeOut(BaseModel):
    entity: str = Field(description="Entity name")
    key: str = Field(description="snake_case, e.g. employer")
    value: str
    confidence: float | None = Field(None, description="0-1")

    @field_validator("entity", "key", "value", mode="before")
    @classmethod
    def _coerce_text(cls, v: Any) -> Any:
        return _text(v)

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, v: Any) -> Any:
        return None if v == "" else v


class ExtractionOut(BaseModel):
    """Entities, relations and attribute facts of one text."""

    entities: list[EntityOut] = Field(default_factory=list)
    relations: list[RelationOut] = Field(default_factory=list)
    attributes: list[AttributeOut] = Field(default_factory=list)
    more: bool = Field(False, description="true if records remain unlisted")


# Records as parsed from an answer. ``gleaning_pass``: 0 for the first pass, k for the k-th gleaning pass.


@dataclass(slots=True)
class Entity:
    name: str
    type: str
    description: str = ""
    gleaning_pass: int = 0


@dataclass(slots=True)
class Relation:
    source: str
    target: str
    keywords: str = ""
    description: str = ""
    strength: float = 1.0
    gleaning_pass: int = 0


@dataclass(slots=True)
class Attribute:
    entity: str
    key: str
    value: str
    confidence: float | None = None
    gleaning_pass: int = 0


@dataclass
class ParsedOutput:
    entities: list[Entity] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    attributes: list[Attribute] = field(default_factory=list)
    bad_lines: list[str] = field(default_factory=list)
    complete: bool = False  # the terminator was seen (tuple) / the response validated (structured)
    nothing_missing: bool = False  # terminator and no record at all: a gleaning pass may stop
    more_requested: bool = False  # the model said records remain (<|CONTINUE|> / more=true)

    @property
    def needs_gleaning(self) -> bool:
        """A follow-up pass is needed: the answer was cut, had unparseable records, or said more remain."""
        return self.more_requested or not self.complete or bool(self.bad_lines)

    @property
    def record_count(self) -> int:
        return len(self.entities) + len(self.relations) + len(self.attributes)

    def at_pass(self, gleaning_pass: int) -> ParsedOutput:
        """A copy whose records are all tagged with ``gleaning_pass`` (e.g. for an answer parsed earlier)."""
        return ParsedOutput(
            entities=[replace(e, gleaning_pass=gleaning_pass) for e in self.entities],
            relations=[replace(r, gleaning_pass=gleaning_pass) for r in self.relations],
            attributes=[replace(a, gleaning_pass=gleaning_pass) for a in self.attributes],
            bad_lines=list(self.bad_lines),
            complete=self.complete,
            nothing_missing=self.nothing_missing,
            more_requested=self.more_requested,
        )


# --------------------------------------------------------------------------------------------------
# Tuple parsing

_DELIM_RE = re.compile(r"<\|#\|>|<\|>|\|#\|")
_COMPLETE_RE = re.compile(r"<\|\s*(COMPLETE|CONTINUE)\s*\|>", re.IGNORECASE)
_KIND_START = r"\(?\s*[\"'`]?\s*(?:entity|relation(?:ship)?|attribute)\b"
_RECORD_SPLIT_RE = re.compile(r"##(?=\s*(?:" + _KIND_START + r"|<\|\s*COMPLETE|$))", re.IGNORECASE)
_LINE_PREFIX_RE = re.compile(r"^\s*(?:(?:\d{1,4}\s*[.):]|[-*•>])\s*|#{1,6}\s+)")
_KIND_RE = re.compile(  # a record kind followed by some field separator: a failed record, not prose
    r"^\s*\(?\s*[\"'`]?(?:entity|relation(?:ship)?|attribute)[\"'`]?\s*(?:<|\||\t|,)", re.IGNORECASE
)
_PIPE_RE = re.compile(r"^\s*[\"'`]?(?:entity|relation(?:ship)?|attribute)[\"'`]?\s*\|", re.IGNORECASE)
_QUOTES = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "«": "»"}
_KINDS = {"entity": "entity", "relation": "relation", "relationship": "relation", "attribute": "attribute"}
# field counts after the kind: (required, maximum)
_ARITY = {"entity": (3, 3), "relation": (4, 5), "attribute": (3, 4)}
_BUCKET = {
    "entity": lambda p: p.entities,
    "relation": lambda p: p.relations,
    "attribute": lambda p: p.attributes,
}


def _unquote(s: str) -> str:
    s = s.strip()
    while len(s) >= 2 and _QUOTES.get(s[0]) == s[-1]:
        s = s[1:-1].strip()
    return s


def _number(s: str) -> float | None:
    s = s.strip().rstrip(".")
    pct = s.endswith("%")
    try:
        v = float(s[:-1] if pct else s)
    except ValueError:
        return None
    if not math.isfinite(v):
        return None
    return v / 100 if pct else v


def _parse_record(line: str, gleaning_pass: int) -> tuple[str, Entity | Relation | Attribute, bool] | None:
    """One record line to (kind, model, has every optional field), or None when it is malformed."""
    s = line.strip()
    if s.startswith("(") and s.endswith(")"):
        s = s[1:-1]
    parts = _DELIM_RE.split(s)
    if len(parts) == 1 and _PIPE_RE.match(s):
        parts = s.split("|")
    parts = [_unquote(p) for p in parts]
    while len(parts) > 1 and not parts[-1]:
        parts.pop()  # a trailing delimiter
    kind = _KINDS.get(parts[0].lower())
    if kind is None:
        return None
    fields = parts[1:]
    lo, hi = _ARITY[kind]
    if not lo <= len(fields) <= hi:
        return None
    if kind == "entity":
        name, etype, desc = fields
        if not name or not etype:
            return None
        rec: Entity | Relation | Attribute = Entity(name, etype, desc, gleaning_pass)
    elif kind == "relation":
        src, tgt, kw, desc = fields[:4]
        strength = 1.0
        if len(fields) == 5:
            parsed = _number(fields[4])
            if parsed is None:
                return None
            strength = parsed
        if not src or not tgt:
            return None
        rec = Relation(src, tgt, kw, desc, strength, gleaning_pass)
    else:
        ent, key, value = fields[:3]
        conf = None
        if len(fields) == 4:
            conf = _number(fields[3])
            if conf is None:
                return None
        if not ent or not key or not value:
            return None
        rec = Attribute(ent, key, value, conf, gleaning_pass)
    return kind, rec, len(fields) == hi


def parse_tuples(raw: str, *, gleaning_pass: int = 0) -> ParsedOutput:
    """Parse a tuple-format answer line by line, keeping every valid record.

    Tolerated: surrounding whitespace, list numbering or bullets, Markdown code fences, quotes or
    parentheses around fields/records, ``<|>`` and ``|#|`` delimiter variants, records separated by
    ``##`` on one line, the terminator on the last record's line. Malformed record lines (wrong field
    count, unknown kind, empty name, unparseable strength/confidence) go to ``bad_lines``; prose lines
    without any delimiter are ignored. Without a terminator, a relation/attribute on a last line that
    does not end with a newline and lacks its optional trailing field (strength, confidence) is treated
    as cut off (bad): the answer was probably truncated by the token limit. A valid last entity line is
    kept (its name and type are whole). Parsing stops at ``<|COMPLETE|>``.
    """
    out = ParsedOutput()
    if not raw:
        return out
    m = _COMPLETE_RE.search(raw)
    body = raw[: m.start()] if m else raw
    out.complete = m is not None
    out.more_requested = m is not None and m.group(1).upper() == "CONTINUE"
    lines = body.splitlines()
    cut_off = not out.complete and bool(lines) and not raw.endswith(("\n", "\r"))
    for li, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("```"):
            continue
        line = _LINE_PREFIX_RE.sub("", line, count=1)
        pieces = [p for p in _RECORD_SPLIT_RE.split(line) if p.strip()]
        for pi, piece in enumerate(pieces):
            piece = piece.strip()
            is_record_like = _DELIM_RE.search(piece) is not None or _KIND_RE.match(piece) is not None
            if not is_record_like:
                continue  # prose ("Here are the entities:") is not a failed record
            parsed = _parse_record(piece, gleaning_pass)
            if parsed is not None and not parsed[2] and cut_off and li == len(lines) - 1 and pi == len(pieces) - 1:
                parsed = None  # the answer stopped inside this record: a field may be cut
            if parsed is None:
                out.bad_lines.append(piece)
                continue
            kind, rec, _ = parsed
            _BUCKET[kind](out).append(rec)
    out.nothing_missing = out.complete and out.record_count == 0 and not out.bad_lines and not out.more_requested
    return out


def from_structured(out: ExtractionOut, *, gleaning_pass: int = 0) -> ParsedOutput:
    """A validated instructor response as a ParsedOutput (always complete)."""
    parsed = ParsedOutput(
        entities=[Entity(e.name, e.type, e.description, gleaning_pass) for e in out.entities],
        relations=[Relation(r.source, r.target, r.keywords, r.description, r.strength, gleaning_pass)
                   for r in out.relations],
        attributes=[Attribute(a.entity, a.key, a.value, a.confidence, gleaning_pass) for a in out.attributes],
        complete=True,
        more_requested=out.more,
    )
    parsed.nothing_missing = parsed.record_count == 0 and not out.more
    return parsed


def merge_passes(outputs: Sequence[ParsedOutput]) -> ParsedOutput:
    """Concatenate the passes of one chunk in order (records keep their own gleaning_pass).

    ``complete`` is whether every pass was complete; ``nothing_missing`` is the last pass's flag.
    """
    merged = ParsedOutput(complete=bool(outputs) and all(o.complete for o in outputs))
    for o in outputs:
        merged.entities.extend(o.entities)
        merged.relations.extend(o.relations)
        merged.attributes.extend(o.attributes)
        merged.bad_lines.extend(o.bad_lines)
    merged.nothing_missing = bool(outputs) and outputs[-1].nothing_missing
    return merged


# --------------------------------------------------------------------------------------------------
# Sanitizing

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

_normalize = lru_cache(maxsize=100_000)(normalize_name)  # names repeat across passes and records
_SNAKE_RE = re.compile(r"[^0-9a-z]+")
_KW_SPLIT_RE = re.compile(r"[,;|/]")


def _fold(s: str) -> str:
    s = unicodedata.normalize("NFKD", s)
    return "".join(ch for ch in s if not unicodedata.combining(ch))


def attr_key(key: str) -> str:
    """snake_case attribute key: "Founded Year" -> founded_year, "HQ-location" -> hq_location."""
    k = _fold(key).strip()
    k = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", k)  # camelCase
    return _SNAKE_RE.sub("_", k.lower()).strip("_")


def relation_type_from_keywords(keywords: str | None) -> str:
    """UPPER_SNAKE of the first keyword ("works at, employment" -> WORKS_AT); RELATED_TO when empty."""
    for kw in _KW_SPLIT_RE.split(keywords or ""):
        t = _SNAKE_RE.sub("_", _fold(kw).lower()).strip("_").upper()
        if t:
            return t
    return "RELATED_TO"


def _clean_name(name: str) -> str:
    return " ".join(_unquote(name).split())


def _name_key(name: str) -> str | None:
    """Normalized key of a usable entity name, None for empty, pronoun or overlong names."""
    if not name or len(name) > MAX_NAME_CHARS or name.casefold() in PRONOUNS:
        return None
    return _normalize(name) or None


def _join_text(current: str, new: str, limit: int = MAX_DESCRIPTION_CHARS) -> str:
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
    seen: dict[str, str] = {}
    for kw in _KW_SPLIT_RE.split(a) + _KW_SPLIT_RE.split(b):
        kw = " ".join(kw.split())
        if kw and kw.casefold() not in seen and len(seen) < MAX_KEYWORDS:
            seen[kw.casefold()] = kw
    return ", ".join(seen.values())


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
    t = re.sub(r"[\s\-]+", "_", _unquote(raw).strip().upper()).strip("_")
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
    clean = ParsedOutput(
        bad_lines=list(parsed.bad_lines), complete=parsed.complete, nothing_missing=parsed.nothing_missing
    )

    # entities
    by_key: dict[str, Entity] = {}
    for e in parsed.entities:
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

    def endpoint(name: str, gleaning_pass: int) -> Entity | None:
        name = _clean_name(name)
        key = _name_key(name)
        if key is None:
            return None
        hit = by_key.get(key)
        if hit is None and orphan_relations == "add" and "OTHER" in allowed:
            hit = by_key[key] = Entity(name, "OTHER", "", gleaning_pass)
            stats["entities_added"] += 1
        return hit

    # relations (orphans may add entities, so they resolve before the entity cap)
    rel_by_key: dict[tuple[str, str, str], tuple[Relation, str, str]] = {}
    for r in parsed.relations:
        src, tgt = endpoint(r.source, r.gleaning_pass), endpoint(r.target, r.gleaning_pass)
        if src is None or tgt is None:
            stats["orphan_relations_dropped"] += 1
            continue
        if src is tgt:
            stats["self_relations_dropped"] += 1
            continue
        strength = _unit(r.strength, 1.0, stats)
        kws = _union_keywords(r.keywords, "")
        skey, tkey = _normalize(src.name), _normalize(tgt.name)
        rkey = (skey, tkey, relation_type_from_keywords(kws))
        kept_r = rel_by_key.get(rkey)
        if kept_r is None:
            rec_r = Relation(src.name, tgt.name, kws, " ".join(r.description.split()), strength, r.gleaning_pass)
            rel_by_key[rkey] = (rec_r, skey, tkey)
            continue
        stats["merged_relations"] += 1
        rec_r = kept_r[0]
        rec_r.strength = max(rec_r.strength, strength)
        rec_r.keywords = _union_keywords(rec_r.keywords, kws)
        rec_r.description = _join_text(rec_r.description, " ".join(r.description.split()))

    # attributes
    att_by_key: dict[tuple[str, str, str], tuple[Attribute, str]] = {}
    for a in parsed.attributes:
        key_name = attr_key(a.key)
        value = " ".join(_unquote(a.value).split())
        if not key_name or not value:
            stats["dropped_attributes"] += 1
            continue
        ent = endpoint(a.entity, a.gleaning_pass)
        if ent is None:
            stats["orphan_attributes_dropped"] += 1
            continue
        conf = _unit(a.confidence, default_confidence, stats)
        ekey = _normalize(ent.name)
        akey = (ekey, key_name, value.casefold())
        kept_a = att_by_key.get(akey)
        if kept_a is None:
            att_by_key[akey] = (Attribute(ent.name, key_name, value, conf, a.gleaning_pass), ekey)
            continue
        stats["merged_attributes"] += 1
        kept_a[0].confidence = max(kept_a[0].confidence or 0.0, conf)

    # caps
    entities = list(by_key.items())
    if len(entities) > max_entities:
        stats["capped_entities"] = len(entities) - max_entities
        entities = entities[:max_entities]
    kept_keys = {k for k, _ in entities}
    clean.entities = [e for _, e in entities]
    relations = [r for r, s, t in rel_by_key.values() if s in kept_keys and t in kept_keys]
    stats["capped_relations"] = len(rel_by_key) - len(relations)
    if len(relations) > max_relations:
        stats["capped_relations"] += len(relations) - max_relations
        relations = relations[:max_relations]
    clean.relations = relations
    attributes = [a for a, e in att_by_key.values() if e in kept_keys]
    stats["capped_attributes"] = len(att_by_key) - len(attributes)
    if len(attributes) > max_attributes:
        stats["capped_attributes"] += len(attributes) - max_attributes
        attributes = attributes[:max_attributes]
    clean.attributes = attributes
    return clean, stats


# --------------------------------------------------------------------------------------------------
# Frames


@dataclass(frozen=True)
class ChunkParse:
    """One chunk's (sanitized) output with the chunk it came from; records carry their gleaning pass."""

    chunk_id: str
    document_id: str
    chunk_text: str
    parsed: ParsedOutput


def _find_span(text: str, name: str) -> tuple[int, int] | None:
    """First case-insensitive occurrence of ``name`` in ``text`` (whitespace-flexible, whole words first)."""
    tokens = name.split()
    if not tokens or not text:
        return None
    # Fast path (no regex compile per name): a whole-word, case-insensitive exact occurrence.
    lowered, needle = text.lower(), " ".join(tokens).lower()
    at = lowered.find(needle)
    while at != -1:
        end = at + len(needle)
        if (at == 0 or not lowered[at - 1].isalnum()) and (end == len(lowered) or not lowered[end].isalnum()):
            return at, end
        at = lowered.find(needle, at + 1)
    body = r"\s+".join(re.escape(t) for t in tokens)
    m = re.search(r"(?<!\w)" + body + r"(?!\w)", text, re.IGNORECASE) or re.search(body, text, re.IGNORECASE)
    return (m.start(), m.end()) if m else None


def _frame(cols: dict[str, list], schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(cols, schema={k: schema[k] for k in cols})


def to_frames(
    results: Sequence[ChunkParse],
    *,
    extractor: str,
    extractor_version: str,
    mention_confidence: float | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Mentions (ENTITY_MENTIONS), local relations (LOCAL_RELATIONS), attribute observations.

    Ids: entity_id = entity_id(type, normalize_name(name)) hashed once per distinct pair;
    mention_id = "mention_" + stable_hash(chunk_id, entity_id) (one mention per entity and chunk, the
    first wins); relation_id = "relation_" + stable_hash(chunk_id, source_id, target_id, relation_type);
    observation_id = "observation_" + stable_hash(chunk_id, entity_id, attr_key, value). Relation
    endpoints and attribute entities resolve by normalized name to the chunk's own entities (first
    entity with that name); unresolved ones and self-relations are skipped. Offsets are the first
    case-insensitive occurrence of the name in the chunk text, else null. LLM entities carry no
    confidence: mentions get ``mention_confidence`` (null by default).
    """
    # one normalization of every distinct surface string
    surface: set[str] = set()
    for res in results:
        p = res.parsed
        surface.update(e.name for e in p.entities)
        surface.update(r.source for r in p.relations)
        surface.update(r.target for r in p.relations)
        surface.update(a.entity for a in p.attributes)
    names = sorted(surface)
    norm_frame = pl.DataFrame({"name": names}, schema={"name": pl.String}).with_columns(
        normalize_name_expr(pl.col("name")).alias("normalized_name")
    )
    norm = dict(zip(names, norm_frame["normalized_name"].to_list(), strict=True))

    pairs = {(e.type, norm[e.name]) for res in results for e in res.parsed.entities if norm[e.name]}
    ids: dict[tuple[str, str], str] = {}
    if pairs:
        pf = pl.DataFrame(
            {"entity_type": [t for t, _ in pairs], "normalized_name": [n for _, n in pairs]},
            schema={"entity_type": pl.String, "normalized_name": pl.String},
        )
        pf = with_entity_ids(pf, "entity_type", "normalized_name", "entity_id")
        ids = {(t, n): eid for t, n, eid in pf.select("entity_type", "normalized_name", "entity_id").iter_rows()}

    m_cols: dict[str, list] = {k: [] for k in (
        "mention_id", "chunk_id", "document_id", "entity_id", "name", "normalized_name", "entity_type",
        "description", "char_start", "char_end", "confidence", "gleaning_pass",
    )}
    r_cols: dict[str, list] = {k: [] for k in (
        "relation_id", "chunk_id", "document_id", "source_id", "target_id", "source_name", "target_name",
        "relation_type", "keywords", "description", "strength", "gleaning_pass",
    )}
    a_cols: dict[str, list] = {k: [] for k in (
        "observation_id", "chunk_id", "document_id", "entity_id", "entity_name", "attr_key", "value",
        "confidence", "gleaning_pass",
    )}
    for res in results:
        cid, did, text = res.chunk_id, res.document_id, res.chunk_text or ""
        by_norm: dict[str, tuple[str, str]] = {}  # normalized name -> (entity_id, surface name)
        seen_ids: set[str] = set()
        for e in res.parsed.entities:
            n = norm[e.name]
            if not n:
                continue
            eid = ids[(e.type, n)]
            by_norm.setdefault(n, (eid, e.name))
            if eid in seen_ids:
                continue
            seen_ids.add(eid)
            span = _find_span(text, e.name)
            m_cols["mention_id"].append("mention_" + stable_hash(cid, eid))
            m_cols["chunk_id"].append(cid)
            m_cols["document_id"].append(did)
            m_cols["entity_id"].append(eid)
            m_cols["name"].append(e.name)
            m_cols["normalized_name"].append(n)
            m_cols["entity_type"].append(e.type)
            m_cols["description"].append(e.description or None)
            m_cols["char_start"].append(span[0] if span else None)
            m_cols["char_end"].append(span[1] if span else None)
            m_cols["confidence"].append(mention_confidence)
            m_cols["gleaning_pass"].append(e.gleaning_pass)

        seen_rel: set[str] = set()
        for r in res.parsed.relations:
            src, tgt = by_norm.get(norm[r.source]), by_norm.get(norm[r.target])
            if src is None or tgt is None or src[0] == tgt[0]:
                continue
            rtype = relation_type_from_keywords(r.keywords)
            rid = "relation_" + stable_hash(cid, src[0], tgt[0], rtype)
            if rid in seen_rel:
                continue
            seen_rel.add(rid)
            r_cols["relation_id"].append(rid)
            r_cols["chunk_id"].append(cid)
            r_cols["document_id"].append(did)
            r_cols["source_id"].append(src[0])
            r_cols["target_id"].append(tgt[0])
            r_cols["source_name"].append(src[1])
            r_cols["target_name"].append(tgt[1])
            r_cols["relation_type"].append(rtype)
            r_cols["keywords"].append(r.keywords or None)
            r_cols["description"].append(r.description or None)
            r_cols["strength"].append(r.strength)
            r_cols["gleaning_pass"].append(r.gleaning_pass)

        seen_obs: set[str] = set()
        for a in res.parsed.attributes:
            ent = by_norm.get(norm[a.entity])
            key = attr_key(a.key)
            value = a.value.strip()
            if ent is None or not key or not value:
                continue
            oid = "observation_" + stable_hash(cid, ent[0], key, value)
            if oid in seen_obs:
                continue
            seen_obs.add(oid)
            a_cols["observation_id"].append(oid)
            a_cols["chunk_id"].append(cid)
            a_cols["document_id"].append(did)
            a_cols["entity_id"].append(ent[0])
            a_cols["entity_name"].append(ent[1])
            a_cols["attr_key"].append(key)
            a_cols["value"].append(value)
            a_cols["confidence"].append(a.confidence)
            a_cols["gleaning_pass"].append(a.gleaning_pass)

    tags = (
        pl.lit(extractor, pl.String).alias("extractor"),
        pl.lit(extractor_version, pl.String).alias("extractor_version"),
    )
    mentions = _frame(m_cols, schemas.ENTITY_MENTIONS).with_columns(*tags)
    relations = _frame(r_cols, schemas.LOCAL_RELATIONS).with_columns(*tags)
    attributes = _frame(a_cols, schemas.ATTRIBUTE_OBSERVATIONS).with_columns(*tags)
    return (
        schemas.conform(mentions, schemas.ENTITY_MENTIONS),
        schemas.conform(relations, schemas.LOCAL_RELATIONS),
        schemas.conform(attributes, schemas.ATTRIBUTE_OBSERVATIONS),
    )

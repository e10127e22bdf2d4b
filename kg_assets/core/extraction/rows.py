"""The one row builder: every extractor feeds it records, and it makes the rows of the
ENTITY_MENTIONS, LOCAL_RELATIONS, ATTRIBUTE_OBSERVATIONS and CHUNK_EXTRACTIONS contracts.

An extractor describes each chunk as a :class:`ChunkRecords`: its mentions (a name and a type, with
the character span in the chunk text when the extractor knows it), the relations and attribute
observations it read, which point at mentions by their index in that list, and how the extraction of
the chunk went. :func:`build_rows` turns a batch of them into frames, with one id rule per table:

``entity_id``
    ``entity_id(entity_type, normalize_name(name))`` (:mod:`kg_assets.core.normalize`), hashed once per
    distinct (type, name) of the batch; a description written in lower case ("people", "the sect") also
    carries its document (``id_scope_expr``), so it is one entity per document, not per corpus, unless
    its chunk writes the same name with capitals (:func:`with_mention_entity_ids`, which ``kg eval
    linking`` uses too, with the document as the unit). A mention whose name
    normalizes to nothing, or is a nationality, regional or religious adjective or demonym ("Syrian",
    "Germans", "Muslim": :mod:`kg_assets.core.extraction.demonyms`) or a phrase describing people by one ("Six
    Israelis", "Franco-German", "German MPs"), makes no row, and neither does a
    relation or observation that points at it. First, people are kept apart from their titles
    (:func:`_without_titles`): "US President Barack Obama" is the PERSON "Barack Obama" with a ``role``
    observation "US President", and a name made only of role words ("Editor") makes no row.
``mention_id``
    ``"mention_" + stable_hash(chunk_id, entity_id, char_start)``, with ``""`` for an unknown span: one
    row per entity and position in a chunk. A repeat (the same entity at the same position, or again
    without a span) is dropped; the first wins.
``relation_id``
    ``"relation_" + stable_hash(chunk_id, source_id, target_id, relation_type)``: the first wins. A
    relation whose ends are the same entity makes no row.
``observation_id``
    ``"observation_" + stable_hash(chunk_id, entity_id, attr_key, casefolded value)``, the value with
    its whitespace collapsed (that is also the value stored); an empty key or value makes no row. A
    repeat keeps the highest confidence (an unknown confidence is the lowest).

Relation and observation rows carry the names of the mentions they point at. A relation's ``keywords`` are
a list (:func:`~kg_assets.core.normalize.parse_keywords`: split at commas and semicolons, trimmed, repeats
dropped case-insensitively; ``[]`` for none), whether the extractor gives one string or a list.
``CHUNK_EXTRACTIONS`` gets one row per chunk, whose counts are the rows made for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.extraction.demonyms import is_demonym, is_group_phrase
from kg_assets.core.extraction.titles import split_title, split_trailing_title
from kg_assets.core.normalize import (
    id_scope_expr,
    is_description_expr,
    normalize_name,
    normalize_name_expr,
    parse_keywords,
    stable_hash,
    with_entity_ids,
)


@dataclass(frozen=True)
class ExtractionResult:
    """Frames conforming to ENTITY_MENTIONS, LOCAL_RELATIONS, CHUNK_EXTRACTIONS, ATTRIBUTE_OBSERVATIONS."""

    mentions: pl.DataFrame
    relations: pl.DataFrame
    chunk_status: pl.DataFrame
    attributes: pl.DataFrame = field(default_factory=lambda: schemas.empty(schemas.ATTRIBUTE_OBSERVATIONS))
    calls: pl.DataFrame = field(default_factory=lambda: schemas.empty(schemas.LLM_CALLS))  # LLM requests and cache hits

    @classmethod
    def empty(cls) -> ExtractionResult:
        return cls(
            schemas.empty(schemas.ENTITY_MENTIONS),
            schemas.empty(schemas.LOCAL_RELATIONS),
            schemas.empty(schemas.CHUNK_EXTRACTIONS),
        )


@dataclass(slots=True)
class MentionRecord:
    name: str  # as written
    entity_type: str
    description: str | None = None
    confidence: float | None = None
    char_start: int | None = None  # offsets in the chunk text, when the extractor knows them
    char_end: int | None = None
    gleaning_pass: int = 0


@dataclass(slots=True)
class RelationRecord:
    source: int  # index of a mention of the same chunk
    target: int
    relation_type: str
    keywords: str | Sequence[str] | None = None  # as written ("works at; leads") or a list: parse_keywords reads it
    description: str | None = None
    strength: float = 1.0
    gleaning_pass: int = 0


@dataclass(slots=True)
class ObservationRecord:
    subject: int  # index of a mention of the same chunk
    attr_key: str
    value: str
    confidence: float | None = None
    gleaning_pass: int = 0


@dataclass
class ChunkRecords:
    """What one extractor found in one chunk, and how the extraction went."""

    chunk_id: str
    document_id: str
    chunk_hash: str | None = None
    mentions: list[MentionRecord] = field(default_factory=list)
    relations: list[RelationRecord] = field(default_factory=list)
    observations: list[ObservationRecord] = field(default_factory=list)
    error: str | None = None  # the chunk failed (its partial records, if any, still make rows)
    passes: int = 0  # model requests made; 0 without a model
    bad_lines: int = 0  # answer records that could not be parsed
    complete: bool | None = None  # the model ended its answers properly; None without a model


_MENTION_COLUMNS = ("mention_id", "chunk_id", "document_id", "entity_id", "name", "normalized_name", "entity_type",
                    "description", "char_start", "char_end", "confidence", "gleaning_pass")
_RELATION_COLUMNS = ("relation_id", "chunk_id", "document_id", "source_id", "target_id", "source_name", "target_name",
                     "relation_type", "keywords", "description", "strength", "gleaning_pass")
_OBSERVATION_COLUMNS = ("observation_id", "chunk_id", "document_id", "entity_id", "entity_name", "attr_key", "value",
                        "confidence", "gleaning_pass")
_STATUS_COLUMNS = ("chunk_id", "document_id", "chunk_hash", "status", "error", "mention_count", "relation_count",
                   "attribute_count", "passes", "bad_lines", "complete")


def with_mention_entity_ids(frame: pl.DataFrame, unit: str = "document_id") -> pl.DataFrame:
    """Add normalized_name and entity_id to mention rows (name, entity_type, document_id, `unit`): the id rule.

    A lower-case mention is a description (`normalize.is_description_expr`; a concept such as "machine learning"
    is none), scoped to its document, unless its (type, normalized name) is
    written as a name in the same `unit` (the chunk in the pipeline, the document for `kg eval linking`):
    then it is that name lower-cased ("sarah chen" in a gleaning pass after "Sarah Chen") and takes its id."""
    frame = frame.with_columns(normalize_name_expr(pl.col("name")).alias("normalized_name"))
    named = (~is_description_expr(pl.col("name"), pl.col("entity_type"))).any().over(unit, "entity_type",
                                                                                     "normalized_name")
    frame = frame.with_columns(pl.when(named).then(pl.lit(None, pl.String))
                               .otherwise(id_scope_expr(pl.col("name"), pl.col("entity_type"), pl.col("document_id")))
                               .alias("_scope"))
    return with_entity_ids(frame, "entity_type", "normalized_name", "entity_id", scope_col="_scope").drop("_scope")


def _entity_ids(chunks: Sequence[ChunkRecords]) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(entity_type, name, chunk_id) -> (normalized_name, entity_id) for every distinct triple of the batch."""
    rows = {(m.entity_type, m.name, c.document_id, c.chunk_id) for c in chunks for m in c.mentions}
    if not rows:
        return {}
    frame = with_mention_entity_ids(pl.DataFrame(
        list(rows), schema={"entity_type": pl.String, "name": pl.String, "document_id": pl.String,
                            "chunk_id": pl.String}, orient="row"), unit="chunk_id")
    ids = frame.select("entity_type", "name", "chunk_id", "normalized_name", "entity_id").iter_rows()
    return {(t, n, c): (norm if _is_entity(n, norm) else "", eid) for t, n, c, norm, eid in ids}


def _is_entity(name: str, normalized: str) -> bool:
    """A mention makes a row: its name normalizes to something and is no nationality or religion word
    ("Syrian", "Germans", "Muslim") nor a phrase that describes people by one ("Six Israelis", "Franco-German",
    "German MPs")."""
    return bool(normalized) and not is_demonym(name) and not is_group_phrase(name)


def row_names(chunk: ChunkRecords) -> list[tuple[str, str]]:
    """(name, entity_type) of the chunk's mentions that make rows, in order, as :func:`build_rows` writes them:
    "US President Barack Obama" is ("Barack Obama", "PERSON"); a role word or a demonym is left out. What
    the LLM engine shows the model of its earlier answers (working memory, gleaning) is this list."""
    return [(m.name, m.entity_type) for m in _without_titles(chunk).mentions
            if _is_entity(m.name, normalize_name(m.name))]


def _confidence_rank(value: float | None) -> float:
    return float("-inf") if value is None else value


PERSON_OR_UNTYPED = ("PERSON", "OTHER")


def _without_titles(chunk: ChunkRecords) -> ChunkRecords:
    """The chunk's records with people, not their titles (`titles.split_title`): a person or untyped mention
    "US President Barack Obama" becomes the PERSON "Barack Obama" with a role observation "US President" (a
    place or organisation too behind a title of two words or more: "Prime Minister Silvio Berlusconi"), a name
    made only of role or nationality words ("Editor", "Prime Minister", "US Secretary") an empty name (no
    row), and a byline's "Kyle James Editor" the name "Kyle James" (its type kept) with the role "Editor"."""
    mentions: list[MentionRecord] = []
    observations = list(chunk.observations)
    for i, m in enumerate(chunk.mentions):
        split = split_title(m.name)
        # a mention typed a place or an organisation is read as a titled person only behind a title of two words
        # or more ("Prime Minister Silvio Berlusconi"; "President Kennedy Airport" stays the airport)
        if split is not None and split[0] and m.entity_type not in PERSON_OR_UNTYPED and \
                len(m.name[:len(split[2])].split()) < 2:
            split = None
        if split is None:
            trailing = split_trailing_title(m.name)
            if trailing is not None:  # "Kyle James Editor": the name keeps its type, the title is its role
                name, role = trailing
                mentions.append(MentionRecord(name, m.entity_type, m.description, m.confidence, m.char_start,
                                              None if m.char_start is None else m.char_start + len(name),
                                              m.gleaning_pass))
                observations.append(ObservationRecord(i, "role", role, m.confidence, m.gleaning_pass))
            else:
                mentions.append(m)
            continue
        name, offset, role = split
        start = None if m.char_start is None else m.char_start + offset
        mentions.append(MentionRecord(name, "PERSON" if name else m.entity_type, m.description, m.confidence, start,
                                      m.char_end, m.gleaning_pass))
        if name and role:
            observations.append(ObservationRecord(i, "role", role, m.confidence, m.gleaning_pass))
    return ChunkRecords(chunk.chunk_id, chunk.document_id, chunk.chunk_hash, mentions, list(chunk.relations),
                        observations, chunk.error, chunk.passes, chunk.bad_lines, chunk.complete)


def build_rows(chunks: Sequence[ChunkRecords], *, extractor: str, extractor_version: str) -> ExtractionResult:
    """The rows of a batch of chunks; the module docstring states the id rules."""
    chunks = [_without_titles(c) for c in chunks]
    ids = _entity_ids(chunks)
    mentions: list[tuple] = []  # rows in the order of the *_COLUMNS above
    relations: list[tuple] = []
    observations: list[list] = []  # lists: a repeat may raise the confidence
    status: list[tuple] = []
    confidence = _OBSERVATION_COLUMNS.index("confidence")
    for chunk in chunks:
        cid, did = chunk.chunk_id, chunk.document_id
        counts = [len(mentions), len(relations), len(observations)]
        entity_of: list[str | None] = []  # per mention index
        seen: set[str] = set()  # mention and relation ids of the chunk (prefixed, so never equal)
        for m in chunk.mentions:
            norm, eid = ids[(m.entity_type, m.name, cid)]
            entity_of.append(eid if norm else None)
            if not norm:
                continue
            mid = "mention_" + stable_hash(cid, eid, "" if m.char_start is None else str(m.char_start))
            if mid not in seen:
                seen.add(mid)
                mentions.append((mid, cid, did, eid, m.name, norm, m.entity_type, m.description or None, m.char_start,
                                 m.char_end, m.confidence, m.gleaning_pass))

        for r in chunk.relations:
            src, tgt = entity_of[r.source], entity_of[r.target]
            if src is None or tgt is None or src == tgt:
                continue
            rid = "relation_" + stable_hash(cid, src, tgt, r.relation_type)
            if rid not in seen:
                seen.add(rid)
                relations.append((rid, cid, did, src, tgt, chunk.mentions[r.source].name, chunk.mentions[r.target].name,
                                  r.relation_type, parse_keywords(r.keywords), r.description or None, r.strength,
                                  r.gleaning_pass))

        first_row: dict[str, list] = {}
        for o in chunk.observations:
            eid = entity_of[o.subject]
            value = " ".join(o.value.split())
            if eid is None or not o.attr_key or not value:
                continue
            oid = "observation_" + stable_hash(cid, eid, o.attr_key, value.casefold())
            row = first_row.get(oid)
            if row is None:
                row = first_row[oid] = [oid, cid, did, eid, chunk.mentions[o.subject].name, o.attr_key, value,
                                        o.confidence, o.gleaning_pass]
                observations.append(row)
            elif _confidence_rank(o.confidence) > _confidence_rank(row[confidence]):
                row[confidence] = o.confidence

        counts = [len(mentions) - counts[0], len(relations) - counts[1], len(observations) - counts[2]]
        status.append((cid, did, chunk.chunk_hash, "error" if chunk.error else "ok", chunk.error, *counts,
                       chunk.passes, chunk.bad_lines, chunk.complete))

    tags = (pl.lit(extractor, pl.String).alias("extractor"),
            pl.lit(extractor_version, pl.String).alias("extractor_version"))

    def frame(rows: list, columns: tuple[str, ...], schema: dict[str, pl.DataType], *extra: pl.Expr) -> pl.DataFrame:
        built = pl.DataFrame(rows, schema={k: schema[k] for k in columns}, orient="row")
        return schemas.conform(built.with_columns(*tags, *extra), schema)

    return ExtractionResult(
        mentions=frame(mentions, _MENTION_COLUMNS, schemas.ENTITY_MENTIONS),
        relations=frame(relations, _RELATION_COLUMNS, schemas.LOCAL_RELATIONS),
        chunk_status=frame(status, _STATUS_COLUMNS, schemas.CHUNK_EXTRACTIONS,
                           pl.lit(datetime.now(UTC), schemas.TS).alias("extracted_at")),
        attributes=frame(observations, _OBSERVATION_COLUMNS, schemas.ATTRIBUTE_OBSERVATIONS),
    )

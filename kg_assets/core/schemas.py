"""Column contracts of every `kg` table, as Polars schemas.

The storage layer creates the DuckDB tables from these, and every core function returns frames that
conform (`conform` fills missing optional columns with nulls and orders them), so a column is added in
exactly one place.
"""

from __future__ import annotations

import polars as pl

TS = pl.Datetime("us", "UTC")
STRS = pl.List(pl.String)
# The figures of a PDF (core/files/pdf_figures.py): page, number, caption, image hash, or why it is unreadable.
FIGURES = pl.List(pl.Struct({"page": pl.Int32, "figure_number": pl.Int32, "caption": pl.String,
                             "image_sha256": pl.String, "error": pl.String}))

DOCUMENTS = {
    "document_id": pl.String,  # path relative to the inbox, '/'-separated (its partition is arrival_day)
    "path": pl.String,
    "source_type": pl.String,  # txt | md | html | pdf | chat
    "title": pl.String,
    "headings": STRS,
    "text": pl.String,
    "content_hash": pl.String,  # sha256 of the file's bytes (of the target text for a symlink not followed)
    "byte_size": pl.Int64,
    "encoding": pl.String,
    "document_date": TS,
    "status": pl.String,  # ok | error | deleted
    "error": pl.String,
    "warning": pl.String,  # the text is usable but partial or guessed: a cut HTML file, a guessed encoding
    "ingested_at": TS,
    "arrival_day": pl.String,  # YYYY-MM-DD (UTC) the pipeline first saw the file: its Dagster partition key
    "file_signature": pl.String,  # size:mtime_ns when read; a matching signature lets the planner skip hashing
    "figures": FIGURES,  # a PDF's images with their captions, in document order
    "valid_from": TS,
    "valid_until": TS,
}

CHUNKS = {
    "chunk_id": pl.String,
    "document_id": pl.String,
    "chunk_index": pl.Int32,
    "text": pl.String,
    "token_count": pl.Int32,
    "char_start": pl.Int64,
    "char_end": pl.Int64,
    "section_path": pl.String,
    "content_hash": pl.String,
    "chunker_version": pl.String,
    "kind": pl.String,  # text | figure (a PDF figure: its caption, or what the vision model saw)
    "page": pl.Int32,  # a figure's page (1-based)
    "figure_number": pl.Int32,
}

ENTITY_MENTIONS = {
    "mention_id": pl.String,
    "chunk_id": pl.String,
    "document_id": pl.String,
    "entity_id": pl.String,
    "name": pl.String,  # surface form as written
    "normalized_name": pl.String,
    "entity_type": pl.String,
    "description": pl.String,
    "char_start": pl.Int64,  # offsets in the chunk text when the extractor knows them
    "char_end": pl.Int64,
    "confidence": pl.Float64,
    "gleaning_pass": pl.Int32,
    "extractor": pl.String,
    "extractor_version": pl.String,
}

LOCAL_RELATIONS = {
    "relation_id": pl.String,
    "chunk_id": pl.String,
    "document_id": pl.String,
    "source_id": pl.String,
    "target_id": pl.String,
    "source_name": pl.String,
    "target_name": pl.String,
    "relation_type": pl.String,  # UPPER_SNAKE, RELATED_TO when unknown
    "keywords": pl.String,
    "description": pl.String,
    "strength": pl.Float64,
    "gleaning_pass": pl.Int32,
    "extractor": pl.String,
    "extractor_version": pl.String,
}

# Facts about an entity seen in one chunk (employer, role, headquarters ...): the input of temporal attributes.
ATTRIBUTE_OBSERVATIONS = {
    "observation_id": pl.String,
    "chunk_id": pl.String,
    "document_id": pl.String,
    "entity_id": pl.String,
    "entity_name": pl.String,
    "attr_key": pl.String,
    "value": pl.String,
    "confidence": pl.Float64,
    "gleaning_pass": pl.Int32,
    "extractor": pl.String,
    "extractor_version": pl.String,
}

# One row per chunk and extraction attempt outcome: what makes reruns resume exactly what failed.
CHUNK_EXTRACTIONS = {
    "chunk_id": pl.String,
    "document_id": pl.String,
    "chunk_hash": pl.String,
    "extractor": pl.String,
    "extractor_version": pl.String,
    "status": pl.String,  # ok | error
    "error": pl.String,
    "mention_count": pl.Int32,
    "relation_count": pl.Int32,
    "attribute_count": pl.Int32,
    "passes": pl.Int32,  # LLM passes made (1 + gleanings actually needed); 0 for the heuristic
    "bad_lines": pl.Int32,  # output records that could not be parsed
    "complete": pl.Boolean,  # the model ended its answer properly (terminator seen / valid object)
    "extracted_at": TS,
}

# One row per LLM request or cache hit: what was asked, what it cost, how it went.
LLM_CALLS = {
    "call_id": pl.String,
    "run_id": pl.String,
    "chunk_id": pl.String,
    "document_id": pl.String,
    "message_id": pl.String,  # the chat message of a user-fact request
    "gleaning_pass": pl.Int32,
    "model": pl.String,
    "prompt_version": pl.String,
    "prompt_hash": pl.String,
    "output_format": pl.String,  # tuple | structured
    "status": pl.String,  # ok | cache_hit | parse_error | empty | degenerate | error | sent (sent; no answer
    # recorded: the run died). empty: no record and no "nothing here" (blank, `{ }`); degenerate: a loop
    # or an echo of the prompt (failed without records; with records they are kept and the status says so)
    "error": pl.String,
    "prompt_tokens": pl.Int64,
    "completion_tokens": pl.Int64,
    "latency_ms": pl.Float64,
    "cost_usd": pl.Float64,
    "created_at": TS,
}

ENTITIES = {
    "entity_id": pl.String,
    "name": pl.String,  # most frequent surface form
    "normalized_name": pl.String,
    "entity_type": pl.String,
    "description": pl.String,
    "aliases": STRS,
    "mention_count": pl.Int64,
    "document_count": pl.Int64,
    "first_seen": TS,
    "last_seen": TS,
    "source_chunk_ids": STRS,
    "valid_from": TS,
    "valid_until": TS,
}

# LLM condensations of entities with many description fragments (asset entity_summaries); graph nodes show them.
ENTITY_SUMMARIES = {
    "entity_id": pl.String,
    "summary": pl.String,  # the model's plain-text summary, bounded like a merged description
    "fragment_count": pl.Int32,  # distinct description fragments it condensed
    "model": pl.String,
    "summarized_at": TS,
}

# Versioned in domain time: valid_from = when a document said it; one current row per (entity_id, attr_key).
ENTITY_ATTRIBUTES = {
    "attribute_id": pl.String,
    "entity_id": pl.String,
    "attr_key": pl.String,
    "value": pl.String,  # displayed: most frequent surface form of normalized_value
    "normalized_value": pl.String,
    "confidence": pl.Float64,  # max over the row's observations
    "valid_from": TS,
    "valid_until": TS,  # NULL = current
    "source_document_ids": STRS,
    "source_chunk_ids": STRS,
    "observation_count": pl.Int64,
    "supersedes_value": pl.String,  # previous row's value, NULL for the first
    "superseded_by_value": pl.String,  # next row's value, NULL for the current row
}

ATTRIBUTE_SUPERSESSIONS = {
    "supersession_id": pl.String,
    "entity_id": pl.String,
    "attr_key": pl.String,
    "old_value": pl.String,
    "new_value": pl.String,
    "superseded_at": TS,  # = the new row's valid_from
    "old_attribute_id": pl.String,
    "new_attribute_id": pl.String,
    "relation_type": pl.String,  # always SUPERSEDES
}

# Manual linking decisions (`kg link split|merge`): applied on every consolidation, undone by removal.
LINK_OVERRIDES = {
    "from_id": pl.String,
    "to_id": pl.String,
    "action": pl.String,  # split: never in one entity | merge: from_id -> to_id
    "note": pl.String,
    "created_at": TS,
}

ENTITY_ALIASES = {
    "from_id": pl.String,
    "to_id": pl.String,
    "method": pl.String,
    "score": pl.Float64,
    "evidence": pl.String,
    "created_at": TS,
}

GRAPH_NODES = {
    "node_id": pl.String,
    "label": pl.String,
    "entity_type": pl.String,
    "description": pl.String,
    "aliases": STRS,
    "mention_count": pl.Int64,
    "first_seen": TS,
    "last_seen": TS,
    "degree": pl.Int64,
    "source_chunk_ids": STRS,
    "valid_from": TS,
    "valid_until": TS,
}

GRAPH_EDGES = {
    "edge_id": pl.String,
    "source_id": pl.String,
    "target_id": pl.String,
    "relation_type": pl.String,
    "weight": pl.Int64,  # supporting mentions
    "keywords": STRS,
    "description": pl.String,
    "source_chunk_ids": STRS,
    "document_ids": STRS,
    "valid_from": TS,
    "valid_until": TS,
}

# One row per chat message (kg_assets/core/chat.py); versioned like documents: an edited chat file closes them.
MESSAGES = {
    "document_id": pl.String,  # the conversation: the chat file's partition key
    "message_id": pl.String,
    "user_id": pl.String,
    "display_name": pl.String,
    "sent_at": TS,  # this message's own timestamp
    "content": pl.String,
    "reply_to": pl.String,  # message_id it answers, when the log says so
    "line_number": pl.Int32,  # line in the .jsonl file
    "char_start": pl.Int64,  # the message's lines in the document text: text[char_start:char_end]
    "char_end": pl.Int64,
    "valid_from": TS,
    "valid_until": TS,
}

# The seed's UserFact plus time and provenance (kg_assets/core/facts). valid_from/valid_until are domain time
# (the message's time); one active row per (user_id, fact_key). Duplicates stay as rows pointing at what they
# duplicate, so every dedup decision can be audited and undone.
USER_FACTS = {
    "fact_id": pl.String,
    "user_id": pl.String,
    "fact_type": pl.String,  # hobby | work | family | preference | location | event | relationship | general
    "fact_key": pl.String,  # what the fact is about, e.g. location/residence, work/employer, hobby/hik
    "content": pl.String,  # third person, under 100 characters
    "confidence": pl.Float64,  # 0.6 implied | 0.8 stated | 1.0 explicit
    "importance": pl.Float64,  # 0.3 | 0.5 | 0.8 | 1.0
    "temporal": pl.String,  # past | present | future | timeless
    "source": pl.String,  # auto_extraction | manual | admin
    "taught_by": pl.String,  # the admin, for source admin
    "is_active": pl.Boolean,  # neither a duplicate nor superseded
    "learned_at": TS,  # when kg_assets learned it (extraction or command time)
    "valid_from": TS,
    "valid_until": TS,  # set when a newer fact of the same key (or a manual restatement) replaced it
    "document_id": pl.String,  # conversation of the message; NULL for manual and admin facts
    "extracted_from_message_id": pl.String,
    "fact_index": pl.Int32,  # position in the extractor's answer for that message
    "extraction_context": pl.String,  # first 200 characters of the message
    "duplicate_of": pl.String,  # fact_id this fact duplicates (set aside, not active)
    "dedup_rule": pl.String,  # exact | substring | word_overlap: the seed rule that matched
    "dedup_score": pl.Float64,  # 1.0 for exact and substring, the overlap share for word_overlap
    "dedup_match": pl.String,  # fact_id the rule matched, also when a guard kept both
    "dedup_guard": pl.String,  # content_word | polarity | manual: why a matched fact was kept anyway
    "supersedes": pl.String,  # fact_id this fact closed
    "superseded_by": pl.String,  # fact_id that closed this fact
    "extractor": pl.String,
    "extractor_version": pl.String,
}

# What the memory decides about a fact (kg_assets/core/facts/memory.py); the rest of a USER_FACTS row is its input.
FACT_DECISIONS = ("fact_key", "is_active", "valid_until", "duplicate_of", "dedup_rule", "dedup_score", "dedup_match",
                  "dedup_guard", "supersedes", "superseded_by")
# Facts before the memory's decisions: kg.message_facts (learned per chat document) and kg.manual_facts
# (`kg facts remember` / `teach`). kg.user_facts is rebuilt from both.
FACT_INPUTS = {name: dtype for name, dtype in USER_FACTS.items() if name not in FACT_DECISIONS}

# One row per chat message offered to fact extraction: what happened to it and why.
FACT_EXTRACTIONS = {
    "document_id": pl.String,
    "message_id": pl.String,
    "user_id": pl.String,
    "message_hash": pl.String,  # of the message's user, time and content: an edited message is extracted again
    "outcome": pl.String,  # disabled | not_sampled | not_extractable | ok | error
    "reason": pl.String,  # the extractability rule that failed, or the error
    "fact_count": pl.Int32,  # facts kept after validation (before dedup)
    "notes": STRS,  # snapped levels, dropped or rewritten facts
    "extractor": pl.String,
    "extractor_version": pl.String,
    "extracted_at": TS,
}

# One row per chat user: the name they go by and the person entity it names (written with user_facts).
CHAT_USERS = {
    "user_id": pl.String,
    "name": pl.String,  # display name, else the name they introduced themselves with, else NULL
    "name_source": pl.String,  # display_name | self_introduction
    "display_name": pl.String,  # latest display name in their messages
    "entity_id": pl.String,  # the current PERSON entity whose name is `name`
    "entity_name": pl.String,
    "message_count": pl.Int64,
    "document_count": pl.Int64,
    "first_message_at": TS,
    "last_message_at": TS,
}

# Tombstones of `kg facts forget`: ingestion leaves these users' messages out until `kg facts unforget`.
FORGOTTEN_USERS = {
    "user_id": pl.String,
    "forgotten_at": TS,
}

TABLES: dict[str, dict[str, pl.DataType]] = {
    "documents": DOCUMENTS,
    "chunks": CHUNKS,
    "entity_mentions": ENTITY_MENTIONS,
    "local_relations": LOCAL_RELATIONS,
    "attribute_observations": ATTRIBUTE_OBSERVATIONS,
    "chunk_extractions": CHUNK_EXTRACTIONS,
    "llm_calls": LLM_CALLS,
    "entities": ENTITIES,
    "entity_summaries": ENTITY_SUMMARIES,
    "entity_aliases": ENTITY_ALIASES,
    "link_overrides": LINK_OVERRIDES,
    "graph_nodes": GRAPH_NODES,
    "graph_edges": GRAPH_EDGES,
    "entity_attributes": ENTITY_ATTRIBUTES,
    "attribute_supersessions": ATTRIBUTE_SUPERSESSIONS,
    "messages": MESSAGES,
    "fact_extractions": FACT_EXTRACTIONS,
    "message_facts": FACT_INPUTS,
    "manual_facts": FACT_INPUTS,
    "user_facts": USER_FACTS,
    "chat_users": CHAT_USERS,
    "forgotten_users": FORGOTTEN_USERS,
}


def empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.DataFrame(schema=schema)


def conform(frame: pl.DataFrame, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """Cast to the contract: known columns in contract order, missing ones as nulls, extras dropped."""
    return frame.select(
        [
            (pl.col(name) if name in frame.columns else pl.lit(None)).cast(dtype).alias(name)
            for name, dtype in schema.items()
        ]
    )

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
    "path": pl.String,  # absolute path of the file when it was read
    "source_type": pl.String,  # txt | md | html | pdf | chat
    "title": pl.String,  # first heading, HTML <title> or file name
    "headings": STRS,  # section headings in document order
    "text": pl.String,  # extracted plain text (NULL for an error row)
    "content_hash": pl.String,  # sha256 of the file's bytes (of the target text for a symlink not followed)
    "byte_size": pl.Int64,  # size of the file in bytes
    "encoding": pl.String,  # text encoding the bytes were decoded with
    "document_date": TS,  # date the document states (front matter, meta tag, first date line); NULL when none
    "status": pl.String,  # ok | error | deleted
    "error": pl.String,  # why the file could not be read (status error)
    "warning": pl.String,  # the text is usable but partial or guessed: a cut HTML file, a guessed encoding
    "ingested_at": TS,  # when this version of the row was read
    "arrival_day": pl.String,  # YYYY-MM-DD (UTC) the pipeline first saw the file: its Dagster partition key
    "file_signature": pl.String,  # size:mtime_ns when read; a matching signature lets the planner skip hashing
    "figures": FIGURES,  # a PDF's images with their captions, in document order
    "valid_from": TS,  # when this version became current
    "valid_until": TS,  # when a newer version replaced it or the file left the inbox; NULL = current
}

CHUNKS = {
    "chunk_id": pl.String,  # stable id of the chunk (a hash: the same text at the same place keeps it)
    "document_id": pl.String,  # the document it was cut from
    "chunk_index": pl.Int32,  # position in the document, from 0
    "text": pl.String,  # the chunk's text
    "token_count": pl.Int32,  # o200k tokens in the text
    "char_start": pl.Int64,  # offset of its first character in the document text
    "char_end": pl.Int64,  # offset after its last character
    "section_path": pl.String,  # headings above it, ' > '-separated
    "content_hash": pl.String,  # sha256 of the chunk text: unchanged chunks are not extracted again
    "chunker_version": pl.String,  # version of the chunker that cut it
    "kind": pl.String,  # text | figure (a PDF figure: its caption, or what the vision model saw)
    "page": pl.Int32,  # a figure's page (1-based)
    "figure_number": pl.Int32,  # a figure's number on its page (kind figure)
}

ENTITY_MENTIONS = {
    "mention_id": pl.String,  # stable id of the mention
    "chunk_id": pl.String,  # the chunk it was extracted from
    "document_id": pl.String,  # the chunk's document
    "entity_id": pl.String,  # extracted entity id (before linking): 'entity_' + hash of type and normalized name
    "name": pl.String,  # surface form as written
    "normalized_name": pl.String,  # lower-cased, accent- and punctuation-folded name
    "entity_type": pl.String,  # PERSON | ORGANIZATION | LOCATION | ... (OTHER when unknown)
    "description": pl.String,  # what the text says about the entity
    "char_start": pl.Int64,  # offsets in the chunk text when the extractor knows them
    "char_end": pl.Int64,  # end offset in the chunk text
    "confidence": pl.Float64,  # extractor's confidence, 0..1
    "gleaning_pass": pl.Int32,  # LLM pass that found it (0 = first pass)
    "extractor": pl.String,  # extractor name
    "extractor_version": pl.String,  # extractor version (its code, prompt and model)
}

LOCAL_RELATIONS = {
    "relation_id": pl.String,  # stable id of the relation
    "chunk_id": pl.String,  # the chunk it was extracted from
    "document_id": pl.String,  # the chunk's document
    "source_id": pl.String,  # extracted entity id at the source end
    "target_id": pl.String,  # extracted entity id at the target end
    "source_name": pl.String,  # source name as written
    "target_name": pl.String,  # target name as written
    "relation_type": pl.String,  # UPPER_SNAKE, RELATED_TO when unknown
    "keywords": STRS,  # normalize.parse_keywords; [] for none (a VARCHAR before llm-5: create_schema converts it)
    "description": pl.String,  # what the text says about the relation
    "strength": pl.Float64,  # extractor's strength of the relation
    "gleaning_pass": pl.Int32,  # LLM pass that found it (0 = first pass)
    "extractor": pl.String,  # extractor name
    "extractor_version": pl.String,  # extractor version (its code, prompt and model)
}

# Facts about an entity seen in one chunk (employer, role, headquarters ...): the input of temporal attributes.
ATTRIBUTE_OBSERVATIONS = {
    "observation_id": pl.String,  # stable id of the observation
    "chunk_id": pl.String,  # the chunk it was read in
    "document_id": pl.String,  # the chunk's document
    "entity_id": pl.String,  # extracted entity id it is about (before linking)
    "entity_name": pl.String,  # the entity's name as written
    "attr_key": pl.String,  # attribute name: employer, role, headquarters, ...
    "value": pl.String,  # the value as written
    "confidence": pl.Float64,  # extractor's confidence, 0..1
    "gleaning_pass": pl.Int32,  # LLM pass that found it (0 = first pass)
    "extractor": pl.String,  # extractor name
    "extractor_version": pl.String,  # extractor version (its code, prompt and model)
}

# One row per chunk and extraction attempt outcome: what makes reruns resume exactly what failed.
CHUNK_EXTRACTIONS = {
    "chunk_id": pl.String,  # the chunk extracted
    "document_id": pl.String,  # the chunk's document
    "chunk_hash": pl.String,  # content hash of the chunk when extracted
    "extractor": pl.String,  # extractor name
    "extractor_version": pl.String,  # extractor version: another version extracts the chunk again
    "status": pl.String,  # ok | error
    "error": pl.String,  # why the attempt failed (status error)
    "mention_count": pl.Int32,  # entity mentions extracted
    "relation_count": pl.Int32,  # relations extracted
    "attribute_count": pl.Int32,  # attribute observations extracted
    "passes": pl.Int32,  # LLM passes made (1 + gleanings actually needed); 0 for the heuristic
    "bad_lines": pl.Int32,  # output records that could not be parsed
    "complete": pl.Boolean,  # the model ended its answer properly (terminator seen / valid object)
    "extracted_at": TS,  # when the attempt ended
}

# One row per LLM request or cache hit: what was asked, what it cost, how it went.
LLM_CALLS = {
    "call_id": pl.String,  # id of the request (or cache hit)
    "run_id": pl.String,  # Dagster run that made it
    "chunk_id": pl.String,  # the chunk of an extraction request
    "document_id": pl.String,  # the document of the chunk or message
    "message_id": pl.String,  # the chat message of a user-fact request
    "gleaning_pass": pl.Int32,  # extraction pass (0 = first)
    "model": pl.String,  # model name sent
    "prompt_version": pl.String,  # version of the prompt template
    "prompt_hash": pl.String,  # sha256 of the whole request: the cache key
    "output_format": pl.String,  # tuple | structured
    # empty: no record and no "nothing here" (blank, `{ }`); degenerate: a loop or an echo of the prompt (failed
    # without records; with records they are kept and the status says so)
    "status": pl.String,  # ok | cache_hit | parse_error | empty | degenerate | error | sent (no answer recorded: the run died)
    "error": pl.String,  # the error of a failed call
    "prompt_tokens": pl.Int64,  # input tokens the server reported
    "completion_tokens": pl.Int64,  # output tokens the server reported
    "latency_ms": pl.Float64,  # time to the answer in milliseconds
    "cost_usd": pl.Float64,  # estimated cost from the configured prices
    "created_at": TS,  # when the request was sent
}

ENTITIES = {
    "entity_id": pl.String,  # canonical entity id ('entity_' + hash of type and normalized name)
    "name": pl.String,  # most frequent surface form
    "normalized_name": pl.String,  # folded name, the linking key
    "entity_type": pl.String,  # PERSON | ORGANIZATION | LOCATION | ... (OTHER when unknown)
    "description": pl.String,  # merged description fragments of its mentions
    "aliases": STRS,  # every surface form of its mentions, merged ids included
    "mention_count": pl.Int64,  # mentions over all current documents
    "document_count": pl.Int64,  # documents that mention it
    "first_seen": TS,  # earliest document time of a mention (document date, else ingestion time)
    "last_seen": TS,  # latest document time of a mention
    "source_chunk_ids": STRS,  # chunks whose mentions make the entity (provenance)
    "valid_from": TS,  # when this version became current
    "valid_until": TS,  # when a consolidation changed or dropped it; NULL = current
}

# LLM condensations of entities with many description fragments (asset entity_summaries); graph nodes show them.
ENTITY_SUMMARIES = {
    "entity_id": pl.String,  # the canonical entity summarized
    "summary": pl.String,  # the model's plain-text summary, bounded like a merged description
    "fragment_count": pl.Int32,  # distinct description fragments it condensed
    "model": pl.String,  # model that wrote the summary
    "summarized_at": TS,  # when it was written
}

# Versioned in domain time: valid_from = when a document said it; one current row per (entity_id, attr_key).
ENTITY_ATTRIBUTES = {
    "attribute_id": pl.String,  # stable id of this value version
    "entity_id": pl.String,  # canonical entity it describes
    "attr_key": pl.String,  # attribute name: employer, role, headquarters, ...
    "value": pl.String,  # displayed: most frequent surface form of normalized_value
    "normalized_value": pl.String,  # folded value: what is compared to detect a change
    "confidence": pl.Float64,  # max over the row's observations
    "valid_from": TS,  # domain time the value was first stated (document date or chat message time)
    "valid_until": TS,  # NULL = current
    "source_document_ids": STRS,  # documents that state it
    "source_chunk_ids": STRS,  # chunks that state it
    "observation_count": pl.Int64,  # observations merged into this row
    "supersedes_value": pl.String,  # previous row's value, NULL for the first
    "superseded_by_value": pl.String,  # next row's value, NULL for the current row
}

ATTRIBUTE_SUPERSESSIONS = {
    "supersession_id": pl.String,  # 'sup_' + hash of the old and new attribute ids
    "entity_id": pl.String,  # canonical entity whose attribute changed
    "attr_key": pl.String,  # attribute name
    "old_value": pl.String,  # value before the change
    "new_value": pl.String,  # value after the change
    "superseded_at": TS,  # = the new row's valid_from
    "old_attribute_id": pl.String,  # entity_attributes row closed
    "new_attribute_id": pl.String,  # entity_attributes row opened
    "relation_type": pl.String,  # always SUPERSEDES
}

# Manual linking decisions (`kg link split|merge`): applied on every consolidation, undone by removal.
LINK_OVERRIDES = {
    "from_id": pl.String,  # entity id the decision is about
    "to_id": pl.String,  # the other entity id (for merge: the one kept)
    "action": pl.String,  # split: never in one entity | merge: from_id -> to_id
    "note": pl.String,  # why, as given on the command line
    "created_at": TS,  # when the decision was made
}

ENTITY_ALIASES = {
    "from_id": pl.String,  # extracted entity id that redirects
    "to_id": pl.String,  # canonical entity id it redirects to
    "method": pl.String,  # linker rule that merged them (or override)
    "score": pl.Float64,  # the rule's score, 0..1
    "evidence": pl.String,  # the names or override that justified the merge
    "created_at": TS,  # when the redirect was first made
}

GRAPH_NODES = {
    "node_id": pl.String,  # canonical entity id
    "label": pl.String,  # display name (the entity's name)
    "entity_type": pl.String,  # PERSON | ORGANIZATION | LOCATION | ... (OTHER when unknown)
    "description": pl.String,  # LLM summary where one exists, else the merged description
    "aliases": STRS,  # every surface form of the entity
    "mention_count": pl.Int64,  # mentions over all current documents
    "first_seen": TS,  # earliest document time of a mention
    "last_seen": TS,  # latest document time of a mention
    "degree": pl.Int64,  # current edges at this node, both directions
    "source_chunk_ids": STRS,  # chunks the entity was extracted from (provenance)
    "valid_from": TS,  # when this version became current
    "valid_until": TS,  # when a consolidation changed or dropped it; NULL = current
}

GRAPH_EDGES = {
    "edge_id": pl.String,  # stable id of the edge (one per source, target and relation type)
    "source_id": pl.String,  # node at the source end
    "target_id": pl.String,  # node at the target end
    "relation_type": pl.String,  # UPPER_SNAKE relation type, RELATED_TO when unknown
    "weight": pl.Int64,  # supporting mentions
    "keywords": STRS,  # keywords of its relations, distinct
    "description": pl.String,  # merged descriptions of its relations
    "source_chunk_ids": STRS,  # chunks its relations were extracted from (provenance)
    "document_ids": STRS,  # documents its relations were found in
    "valid_from": TS,  # when this version became current
    "valid_until": TS,  # when a consolidation changed or dropped it; NULL = current
}

# One row per chat message (kg_assets/core/chat.py); versioned like documents: an edited chat file closes them.
MESSAGES = {
    "document_id": pl.String,  # the conversation: the chat file's partition key
    "message_id": pl.String,  # the message's id in the chat log
    "user_id": pl.String,  # who wrote it
    "display_name": pl.String,  # the name shown for the user in this message
    "sent_at": TS,  # this message's own timestamp
    "content": pl.String,  # the message text
    "reply_to": pl.String,  # message_id it answers, when the log says so
    "line_number": pl.Int32,  # line in the .jsonl file
    "char_start": pl.Int64,  # the message's lines in the document text: text[char_start:char_end]
    "char_end": pl.Int64,  # end offset in the document text
    "valid_from": TS,  # when this version became current
    "valid_until": TS,  # when an edit of the chat file changed or removed it; NULL = current
}

# The seed's UserFact plus time and provenance (kg_assets/core/facts). valid_from/valid_until are domain time
# (the message's time); one active row per (user_id, fact_key). Duplicates stay as rows pointing at what they
# duplicate, so every dedup decision can be audited and undone.
USER_FACTS = {
    "fact_id": pl.String,  # stable id of the fact (a hash of its user, origin, position and content)
    "user_id": pl.String,  # the chat user it is about
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
    "valid_from": TS,  # domain time the fact holds from (the message's time)
    "valid_until": TS,  # set when a newer fact of the same key (or a manual restatement) replaced it
    "document_id": pl.String,  # conversation of the message; NULL for manual and admin facts
    "extracted_from_message_id": pl.String,  # chat message it was learned from
    "fact_index": pl.Int32,  # position in the extractor's answer for that message
    "extraction_context": pl.String,  # first 200 characters of the message
    "duplicate_of": pl.String,  # fact_id this fact duplicates (set aside, not active)
    "dedup_rule": pl.String,  # exact | substring | word_overlap: the seed rule that matched
    "dedup_score": pl.Float64,  # 1.0 for exact and substring, the overlap share for word_overlap
    "dedup_match": pl.String,  # fact_id the rule matched, also when a guard kept both
    "dedup_guard": pl.String,  # content_word | polarity | manual: why a matched fact was kept anyway
    "supersedes": pl.String,  # fact_id this fact closed
    "superseded_by": pl.String,  # fact_id that closed this fact
    "extractor": pl.String,  # fact extractor name (manual / admin for taught facts)
    "extractor_version": pl.String,  # fact extractor version
}

# What the memory decides about a fact (kg_assets/core/facts/memory.py); the rest of a USER_FACTS row is its input.
FACT_DECISIONS = ("fact_key", "is_active", "valid_until", "duplicate_of", "dedup_rule", "dedup_score", "dedup_match",
                  "dedup_guard", "supersedes", "superseded_by")
# Facts before the memory's decisions: kg.message_facts (learned per chat document) and kg.manual_facts
# (`kg facts remember` / `teach`). kg.user_facts is rebuilt from both.
FACT_INPUTS = {name: dtype for name, dtype in USER_FACTS.items() if name not in FACT_DECISIONS}

# One row per chat message offered to fact extraction: what happened to it and why.
FACT_EXTRACTIONS = {
    "document_id": pl.String,  # the conversation (chat file)
    "message_id": pl.String,  # the message offered
    "user_id": pl.String,  # its author
    "message_hash": pl.String,  # of the message's user, time, content and context (the question it answers): an edited message is extracted again
    "outcome": pl.String,  # disabled | not_sampled | not_extractable | ok | error
    "reason": pl.String,  # the extractability rule that failed, or the error
    "fact_count": pl.Int32,  # facts kept after validation (before dedup)
    "notes": STRS,  # snapped levels, dropped or rewritten facts
    "extractor": pl.String,  # fact extractor name
    "extractor_version": pl.String,  # fact extractor version: another version extracts the message again
    "extracted_at": TS,  # when it was decided
}

# One row per chat user: the name they go by and the person entity it names (written with user_facts).
CHAT_USERS = {
    "user_id": pl.String,  # the user's id in the chat logs
    "name": pl.String,  # display name, else the name they introduced themselves with, else NULL
    "name_source": pl.String,  # display_name | self_introduction
    "display_name": pl.String,  # latest display name in their messages
    "entity_id": pl.String,  # the current PERSON entity whose name is `name`
    "entity_name": pl.String,  # that entity's name
    "message_count": pl.Int64,  # current messages they wrote
    "document_count": pl.Int64,  # conversations they wrote in
    "first_message_at": TS,  # time of their first message
    "last_message_at": TS,  # time of their last message
}

# Tombstones of `kg facts forget`: ingestion leaves these users' messages out until `kg facts unforget`.
FORGOTTEN_USERS = {
    "user_id": pl.String,  # the user forgotten
    "forgotten_at": TS,  # when `kg facts forget` ran
}

# What each consolidated row was last built from (storage/consolidation.py): a consolidation rebuilds the keys
# whose digest changed. Bookkeeping, not graph data: deleting every row makes the next consolidation a full one.
CONSOLIDATION_DIGESTS = {
    "table_name": pl.String,  # entities | graph_edges | graph_nodes
    "key": pl.String,  # the row's key (an edge's three columns joined by U+001F)
    "digest": pl.String,  # rows and summed hash of its inputs
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
    "consolidation_digests": CONSOLIDATION_DIGESTS,
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

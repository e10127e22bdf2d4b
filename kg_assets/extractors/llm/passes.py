"""A chunk's passes (the first request and its gleanings): the merged answer sanitized, the names the model is shown of
it again, the keys that tell whether a gleaning pass found anything new; and, for `kg estimate`, which chunks a rerun
would answer wholly from the cache, replaying those passes by the engine's own stopping rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kg_assets.core.extraction.records import ParsedOutput, merge_passes
from kg_assets.core.extraction.rows import ChunkRecords, MentionRecord, row_names
from kg_assets.core.extraction.sanitize import row_records, sanitize
from kg_assets.core.extraction.prompts import prompt_hash
from kg_assets.core.extraction.working_memory import WorkingMemory
from kg_assets.extractors.llm.answers import ParseFailure
from kg_assets.extractors.llm.order import by_document
from kg_assets.settings import LLMSettings
from kg_assets.storage.llm_cache import LLMCache



class Engine(Protocol):
    """What these need of the LLM engine (`LLMExtractor`, which imports this module)."""

    settings: LLMSettings
    entity_types: tuple[str, ...]

    def chunk_params(self, row: dict) -> dict[str, object]: ...

    def parse(self, content: str, gleaning_pass: int, truncated: bool, messages: Sequence[dict] = ()) -> ParsedOutput: ...

    def first_pass_messages(self, row: dict, known: Sequence[tuple[str, str]] = ()) -> list[dict]: ...

    def gleaning_messages(self, row: dict, found: Sequence[tuple[str, str]], failed: Sequence[str] = (),
                          known: Sequence[tuple[str, str]] = ()) -> list[dict]: ...


def sanitized(parsed: ParsedOutput, engine: Engine) -> ParsedOutput:
    s = engine.settings
    merged, _ = sanitize(parsed, entity_types=engine.entity_types, unknown_types=s.unknown_types,
                         orphan_relations=s.orphan_relations, max_entities=s.max_entities,
                         max_relations=s.max_relations, max_attributes=s.max_attributes)
    return merged


def shown_names(records: tuple[Sequence[MentionRecord], ...], row: dict) -> list[tuple[str, str]]:
    """(name, type) of the entities one chunk's records make rows of: all the model is shown of its answers
    (working memory, gleaning), so a name the sanitizer or the row builder dropped is never suggested again."""
    return row_names(ChunkRecords(row["chunk_id"], row["document_id"], mentions=list(records[0])))


def record_keys(passes: Sequence[tuple[int, ParsedOutput]]) -> set[tuple]:
    keys: set[tuple] = set()
    for _, p in passes:
        keys.update(("e", e.name.lower(), e.type.upper()) for e in p.entities)
        keys.update(("r", r.source.lower(), r.target.lower()) for r in p.relations)
        keys.update(("a", a.entity.lower(), a.key.lower(), a.value.lower()) for a in p.attributes)
    return keys


def cached_first_passes(engine: Engine, rows: Sequence[dict], cache: LLMCache) -> list[bool]:
    """Which rows a rerun would answer wholly from the cache: the first request and every gleaning request
    the rerun would make (the same stopping rules as `LLMExtractor._chunk`, on cached answers). With working memory a
    request depends on the answers to the document's earlier chunks (all their passes), so those are
    replayed from the cache in order; past the first request the cache lacks, the document's later
    requests are unknown, hence not cached."""
    s, answered = engine.settings, [False] * len(rows)
    for positions in by_document(list(range(len(rows))), lambda i: rows[i]):
        memory = WorkingMemory(s.working_memory_tokens)
        for i in positions:
            memory.enter(rows[i].get("section_path"))
            passes = _cached_passes(engine, rows[i], memory.known(), cache)
            if passes is None:
                break
            answered[i] = True
            if s.working_memory_tokens:
                merged = sanitized(merge_passes([p for _, p in passes]), engine)
                memory.remember(shown_names(row_records(merged, rows[i]["text"]), rows[i]))
    return answered


def _cached_passes(engine: Engine, row: dict, remembered: Sequence[tuple[str, str]], cache: LLMCache) -> list | None:
    """The passes `_chunk` would take for this row, each answered from the cache; None when one is missing
    or does not parse."""
    s = engine.settings

    def cached(messages: list[dict], gleaning_pass: int):
        hit = cache.get(prompt_hash(messages, s.model, engine.chunk_params(row)))
        return None if hit is None else engine.parse(hit["content"], gleaning_pass, False, messages)

    try:
        first = cached(engine.first_pass_messages(row, remembered), 0)
        if first is None:
            return None
        passes = [(0, first)]
        for gleaning in range(1, s.max_gleanings + 1):
            if s.gleaning == "auto" and not passes[-1][1].needs_gleaning:
                break
            if passes[-1][1].degenerate:  # `_chunk` never gleans after a loop or an echo
                break
            so_far = sanitized(merge_passes([p for _, p in passes]), engine)
            found = shown_names(row_records(so_far, row["text"]), row)  # as `_chunk` shows them
            failed = [line for _, p in passes[-1:] for line in p.bad_lines]
            known = record_keys(passes)
            more = cached(engine.gleaning_messages(row, found, failed, remembered), gleaning)
            if more is None:
                return None
            passes.append((gleaning, more))
            if more.nothing_missing or record_keys([(gleaning, more)]) <= known:
                break
    except ParseFailure:
        return None
    return passes

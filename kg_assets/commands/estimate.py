"""`kg estimate`: a dry run of LLM extraction over the inbox (calls, tokens, cost); nothing is sent.

It counts the entity-extraction requests (first passes, gleaning, figures), the user-fact requests of the chat
logs and the entity-summary requests, and states the worst case under the completion cap."""

from __future__ import annotations

import argparse
from pathlib import Path

from kg_assets.commands.common import add_db_option, add_inbox_option, load_settings
from kg_assets.settings import IngestSettings


def register(subparsers) -> None:
    estimate = subparsers.add_parser("estimate", help="dry-run estimate of LLM calls, tokens and cost for the inbox")
    add_inbox_option(estimate)
    estimate.add_argument("--model", help="model to price (env KG_LLM_MODEL)")
    estimate.add_argument("--prompt-price", type=float, help="USD per 1M prompt tokens (env KG_LLM_PROMPT_PRICE)")
    estimate.add_argument("--completion-price", type=float, help="USD per 1M completion tokens (env KG_LLM_COMPLETION_PRICE)")
    estimate.add_argument("--completion-ratio", type=float, default=0.5,
                          help="expected completion tokens per chunk token on the first pass (default 0.5)")
    add_db_option(estimate, "DuckDB file, to find the LLM cache beside it")
    estimate.set_defaults(func=estimate_command)


def read_inbox(ingest: IngestSettings, scanned_pages: bool = False):
    """Documents of the inbox as a frame, read and parsed exactly as the documents asset does."""
    import polars as pl

    from kg_assets.core import schemas
    from kg_assets.core.documents import read_document
    from kg_assets.core.files.inbox import scan_inbox

    inbox = Path(ingest.inbox_dir)
    rows = [read_document(inbox, key, ingest.max_document_bytes, scanned_pages=scanned_pages) for key in scan_inbox(inbox)]
    return schemas.conform(pl.DataFrame(rows, infer_schema_length=None), schemas.DOCUMENTS) if rows else schemas.empty(schemas.DOCUMENTS)


def fact_requests(settings, docs) -> tuple[int, int, int, int]:
    """(chat messages, messages offered to fact extraction, of those the ones whose earlier answer a run reuses,
    prompt tokens of the rest's requests) of the inbox's chat logs: offered as the pipeline offers them
    (FACT_EXTRACTION_ENABLED, the rate by message id, extractability); reused when the warehouse holds an 'ok'
    extraction of the same message by the same fact-extractor version. Each request is counted without known
    facts (the prompt grows by the author's facts known so far)."""
    import polars as pl

    from kg_assets.core.documents import DocumentError, read_chat_messages
    from kg_assets.core.extraction.prompts import count_message_tokens
    from kg_assets.core.facts.answers import previous_questions
    from kg_assets.core.facts.pipeline import message_hash
    from kg_assets.core.facts.records import FactRequest
    from kg_assets.core.facts.rules import extractability_problem, is_sampled
    from kg_assets.extractors.facts.prompt import build_fact_messages
    from kg_assets.extractors.llm.facts import LLMFactExtractor
    from kg_assets.storage.warehouse import Warehouse

    facts = settings.facts
    chats = docs.filter((pl.col("source_type") == "chat") & (pl.col("status") == "ok"))
    done: dict[tuple[str, str], str] = {}
    warehouse = Warehouse.from_settings(settings.warehouse)
    if chats.height and warehouse.exists():
        version = LLMFactExtractor(settings.extractor).version
        earlier = warehouse.read_partitions("fact_extractions", chats["document_id"].to_list())
        done = {(d, m): h for d, m, h in earlier.filter((pl.col("outcome") == "ok") & (pl.col("extractor_version") == version))
                .select("document_id", "message_id", "message_hash").iter_rows()}
    total = offered = reused = tokens = 0
    for key, content_hash in chats.select("document_id", "content_hash").iter_rows():
        try:
            messages = read_chat_messages(Path(settings.ingest.inbox_dir), key, content_hash)
        except (DocumentError, OSError):
            continue
        total += messages.height
        rows = messages.to_dicts()
        contexts = previous_questions(rows)  # the other speaker's question a message answers, as the pipeline
        for m in rows:
            m["context"] = contexts.get((m["document_id"], m["message_id"]))
            if (not is_sampled(m["message_id"], facts.rate, facts.enabled)
                    or extractability_problem(m["content"], m["context"])):
                continue
            offered += 1
            if done.get((m["document_id"], m["message_id"])) == message_hash(m):
                reused += 1
                continue
            tokens += count_message_tokens(build_fact_messages(FactRequest(
                m["document_id"], m["message_id"], m["user_id"], m["content"], m["sent_at"], m["display_name"],
                context=m["context"])))
    return total, offered, reused, tokens


def summary_requests(settings, engine, cache_path: str) -> tuple[int | None, int, int]:
    """(entities whose fragments earn an LLM summary, how many of those requests the cache answers, the prompt
    tokens of the others) from the warehouse's mentions, as `entity_summaries` builds them; None before a first extraction."""
    from kg_assets.core.consolidate import summary_candidates
    from kg_assets.core.extraction.prompts import build_summary_messages, count_message_tokens, prompt_hash
    from kg_assets.core.linking import apply_redirects
    from kg_assets.storage.llm_cache import LLMCache
    from kg_assets.storage.warehouse import Warehouse

    warehouse = Warehouse.from_settings(settings.warehouse)
    if not warehouse.exists() or settings.extractor.summary_min_fragments <= 0:
        return None, 0, 0
    mentions = apply_redirects(warehouse.entity_mentions(["entity_id", "description"]), warehouse.redirects(), ["entity_id"])
    if mentions.height == 0:
        return None, 0, 0
    candidates = summary_candidates(mentions, settings.extractor.summary_min_fragments)
    heads = candidates.join(warehouse.current_entities(["entity_id", "name", "entity_type"]), on="entity_id")
    requests = [build_summary_messages(name, entity_type, fragments)
                for fragments, name, entity_type in heads.select("fragments", "name", "entity_type").iter_rows()]
    todo = requests
    if requests and Path(cache_path).exists():
        with LLMCache(cache_path) as cache:
            todo = [m for m in requests if cache.get(prompt_hash(m, engine.settings.model, engine.settings.params)) is None]
    return len(requests), len(requests) - len(todo), sum(count_message_tokens(m) for m in todo)


def estimate_command(args: argparse.Namespace) -> int:
    """Dry run: what extracting the inbox with the configured LLM would send, before anything is spent."""
    settings = load_settings(args)
    import polars as pl

    from kg_assets.core.chunking import chunk_documents
    from kg_assets.core.extraction.figures import DESCRIPTION_TOKENS, IMAGE_TOKENS
    from kg_assets.extractors.factory import build_extractor

    extractor = settings.extractor.model_copy(update={"engine": "llm", **({"model": args.model} if args.model else {})})
    engine = build_extractor(extractor)
    s = engine.settings
    prompt_price = args.prompt_price if args.prompt_price is not None else s.prompt_price_per_1m
    completion_price = args.completion_price if args.completion_price is not None else s.completion_price_per_1m
    docs = read_inbox(settings.ingest, extractor.describes_images)
    chunks = chunk_documents(docs, settings.ingest.chunking()).join(
        docs.select("document_id", "headings"), on="document_id", how="left")
    rows = list(chunks.iter_rows(named=True))
    todo, figures, calls, prompt, completion = chunk_requests(engine, rows, chunks["token_count"].to_list(),
                                                             args.completion_ratio, extractor.describes_images)
    cost = tuple((p * prompt_price + c * completion_price) / 1e6 for p, c in zip(prompt, completion))
    failed = docs.filter(pl.col("status") == "error").height
    if not extractor.entity_extraction_enabled:
        calls, prompt, completion, cost = (0, 0), (0, 0), (0, 0), (0.0, 0.0)
    messages, offered, reused, fact_prompt = fact_requests(settings, docs)
    fact_calls = offered - reused
    summaries, summaries_cached, summary_prompt = summary_requests(settings, engine, s.cache_path)
    summary_calls = (summaries or 0) - summaries_cached
    # Worst case: every request taken (gleaning passes, figures, facts, summaries) and every answer as long as
    # the completion cap allows.
    worst_calls = calls[1] + fact_calls + summary_calls
    worst_prompt = prompt[1] + fact_prompt + summary_prompt
    worst_completion = worst_calls * s.max_completion_tokens
    worst_cost = (worst_prompt * prompt_price + worst_completion * completion_price) / 1e6
    print(f"kg estimate: {s.model} ({s.output_format} format, gleaning {s.gleaning}, {s.max_gleanings} pass(es) at most)")
    for label, value in [
        ("documents", f"{docs.height:,} ({failed:,} unreadable)"),
        ("chunks", f"{len(rows):,} ({len(rows) - len(todo):,} already cached)" if extractor.entity_extraction_enabled
         else f"{len(rows):,} (entity extraction off: KG_ENTITY_EXTRACTION_ENABLED=false)"),
        ("LLM calls", f"{calls[0]:,} to {calls[1]:,}"),
        ("fact calls", f"{fact_calls:,} ({offered:,} of {messages:,} chat messages offered: FACT_EXTRACTION_RATE "
                       f"{settings.facts.rate}, extractable; {reused:,} already answered)"
         if settings.facts.enabled else f"off (FACT_EXTRACTION_ENABLED=false; {messages:,} chat messages)"),
        ("summary calls", _summary_line(settings.extractor.summary_min_fragments, summaries, summaries_cached)),
        ("figure calls", f"{len(figures):,} to {s.vision_model} (about {IMAGE_TOKENS} prompt tokens per image, "
                         f"{DESCRIPTION_TOKENS} per description)" if extractor.describes_images else "off (no KG_VISION_MODEL)"),
        ("prompt tokens", f"{prompt[0]:,} to {prompt[1]:,}"),
        ("completion tokens", f"~{completion[0]:,} to {completion[1]:,} (estimated at {args.completion_ratio:.2f} x chunk tokens)"),
        ("working memory", f"at most {s.working_memory_tokens:,} prompt tokens per request after a document's first chunk"
                           if s.working_memory_tokens else "off"),
        ("prompt tokens / chunk", f"{prompt[0] / len(todo):,.0f} to {prompt[1] / len(todo):,.0f}" if todo else "0"),
        ("estimated cost", f"${cost[0]:,.4f} to ${cost[1]:,.4f} at ${prompt_price}/1M prompt, ${completion_price}/1M completion tokens"),
        ("worst case", f"{worst_calls:,} calls (extraction, facts, summaries), {worst_prompt:,} prompt tokens, "
                       f"{worst_completion:,} completion tokens (each answer at the {s.max_completion_tokens:,}-token "
                       f"cap): ${worst_cost:,.4f}"),
    ]:
        print(f"  {label:<22} {value}")
    return 0


def chunk_requests(engine, rows: list[dict], chunk_tokens: list[int], completion_ratio: float, describes_images: bool):
    """What extracting `rows` would send: the rows not answered from the cache (`todo`), the figure rows among
    them, and (low, high) calls, prompt tokens and completion tokens."""
    from kg_assets.core.extraction.figures import DESCRIPTION_TOKENS, vision_prompt_tokens
    from kg_assets.core.extraction.prompts import count_message_tokens
    from kg_assets.extractors.llm.passes import cached_first_passes
    from kg_assets.storage.llm_cache import LLMCache

    s = engine.settings
    first = [engine.first_pass_messages(r) for r in rows]
    first_tokens = [count_message_tokens(m) for m in first]
    # A gleaning request repeats the text and lists what was found (about 12 entities per chunk assumed).
    found = [("ENTITY NAME", "TYPE")] * 12
    glean_tokens = [count_message_tokens(engine.gleaning_messages(r, found)) for r in rows]
    cached = [False] * len(rows)
    if Path(s.cache_path).exists():
        with LLMCache(s.cache_path) as cache:
            cached = cached_first_passes(engine, rows, cache)
    todo = [i for i in range(len(rows)) if not cached[i]]
    # Working memory adds at most its budget to every request after a document's first chunk.
    first_chunk = {i for i, r in enumerate(rows) if i == 0 or rows[i - 1]["document_id"] != r["document_id"]}
    memory = [0 if i in first_chunk else s.working_memory_tokens for i in range(len(rows))]
    # Low: one call per chunk (gleaning "auto" when first answers are complete); high: every pass taken.
    calls = (len(todo), len(todo) * (1 + s.max_gleanings))
    if s.gleaning == "always":
        calls = (calls[1], calls[1])
    first = sum(first_tokens[i] for i in todo)
    glean = sum(s.max_gleanings * glean_tokens[i] for i in todo)
    remembered = sum(memory[i] * (1 + s.max_gleanings) for i in todo)
    prompt = (first if calls[0] == len(todo) else first + glean, first + glean + remembered)
    completion_first = int(sum(completion_ratio * chunk_tokens[i] for i in todo))
    completion = (completion_first if calls[0] == len(todo) else int(completion_first * (1 + 0.3 * s.max_gleanings)),
                  int(completion_first * (1 + 0.3 * s.max_gleanings)))
    # With a vision model, every figure chunk not cached first gets a description request (one image each).
    figures = [i for i in todo if rows[i]["kind"] == "figure"] if describes_images else []
    vision_prompt = sum(vision_prompt_tokens(rows[i]["text"]) for i in figures)
    calls = (calls[0] + len(figures), calls[1] + len(figures))
    prompt = (prompt[0] + vision_prompt, prompt[1] + vision_prompt)
    completion = tuple(c + DESCRIPTION_TOKENS * len(figures) for c in completion)
    return todo, figures, calls, prompt, completion


def _summary_line(min_fragments: int, summaries: int | None, cached: int) -> str:
    if min_fragments <= 0:
        return "off (KG_SUMMARY_MIN_FRAGMENTS=0)"
    if summaries is None:
        return f"unknown before a first extraction: one per entity with at least {min_fragments} description fragments"
    return (f"{summaries - cached:,} ({summaries:,} entities with at least {min_fragments} description fragments in the "
            f"warehouse, {cached:,} already cached)")

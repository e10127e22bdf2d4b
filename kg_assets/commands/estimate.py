"""`kg estimate`: a dry run of LLM extraction over the inbox (calls, tokens, cost); nothing is sent."""

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


def estimate_command(args: argparse.Namespace) -> int:
    """Dry run: what extracting the inbox with the configured LLM would send, before anything is spent."""
    settings = load_settings(args)
    import polars as pl

    from kg_assets.core.chunking import chunk_documents
    from kg_assets.core.extraction.figures import DESCRIPTION_TOKENS, IMAGE_TOKENS, vision_prompt_tokens
    from kg_assets.core.extraction.prompts import count_message_tokens
    from kg_assets.extractors.factory import build_extractor
    from kg_assets.storage.llm_cache import LLMCache

    extractor = settings.extractor.model_copy(update={"engine": "llm", **({"model": args.model} if args.model else {})})
    engine = build_extractor(extractor)
    s = engine.settings
    prompt_price = args.prompt_price if args.prompt_price is not None else s.prompt_price_per_1m
    completion_price = args.completion_price if args.completion_price is not None else s.completion_price_per_1m
    docs = read_inbox(settings.ingest, extractor.describes_images)
    chunks = chunk_documents(docs, settings.ingest.chunking()).join(
        docs.select("document_id", "headings"), on="document_id", how="left")
    rows = list(chunks.iter_rows(named=True))
    first = [engine.first_pass_messages(r) for r in rows]
    first_tokens = [count_message_tokens(m) for m in first]
    # A gleaning request repeats the text and lists what was found (about 12 entities per chunk assumed).
    found = [("ENTITY NAME", "TYPE")] * 12
    glean_tokens = [count_message_tokens(engine.gleaning_messages(r, found)) for r in rows]
    cached = [False] * len(rows)
    if Path(s.cache_path).exists():
        with LLMCache(s.cache_path) as cache:
            cached = engine.cached_first_passes(rows, cache)
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
    chunk_tokens = chunks["token_count"].to_list()
    completion_first = int(sum(args.completion_ratio * chunk_tokens[i] for i in todo))
    completion = (completion_first if calls[0] == len(todo) else int(completion_first * (1 + 0.3 * s.max_gleanings)),
                  int(completion_first * (1 + 0.3 * s.max_gleanings)))
    # With a vision model, every figure chunk not cached first gets a description request (one image each).
    figures = [i for i in todo if rows[i]["kind"] == "figure"] if extractor.describes_images else []
    vision_prompt = sum(vision_prompt_tokens(rows[i]["text"]) for i in figures)
    calls = (calls[0] + len(figures), calls[1] + len(figures))
    prompt = (prompt[0] + vision_prompt, prompt[1] + vision_prompt)
    completion = tuple(c + DESCRIPTION_TOKENS * len(figures) for c in completion)
    cost = tuple((p * prompt_price + c * completion_price) / 1e6 for p, c in zip(prompt, completion))
    failed = docs.filter(pl.col("status") == "error").height
    print(f"kg estimate: {s.model} ({s.output_format} format, gleaning {s.gleaning}, {s.max_gleanings} pass(es) at most)")
    for label, value in [
        ("documents", f"{docs.height:,} ({failed:,} unreadable)"),
        ("chunks", f"{len(rows):,} ({len(rows) - len(todo):,} already cached)"),
        ("LLM calls", f"{calls[0]:,} to {calls[1]:,}"),
        ("figure calls", f"{len(figures):,} to {s.vision_model} (about {IMAGE_TOKENS} prompt tokens per image, "
                         f"{DESCRIPTION_TOKENS} per description)" if extractor.describes_images else "off (no KG_VISION_MODEL)"),
        ("prompt tokens", f"{prompt[0]:,} to {prompt[1]:,}"),
        ("completion tokens", f"~{completion[0]:,} to {completion[1]:,} (estimated at {args.completion_ratio:.2f} x chunk tokens)"),
 ("working memory", f"at most {s.working_memory_tokens:,} prompt tokens per request after a document's first chunk"
                           if s.working_memory_tokens else "off"),
        ("prompt tokens / chunk", f"{prompt[0] / len(todo):,.0f} to {prompt[1] / len(todo):,.0f}" if todo else "0"),
        ("estimated cost", f"${cost[0]:,.4f} to ${cost[1]:,.4f} at ${prompt_price}/1M prompt, ${completion_price}/1M completion tokens"),
    ]:
        print(f"  {label:<22} {value}")
    return 0

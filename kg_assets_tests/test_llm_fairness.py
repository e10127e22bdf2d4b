"""The LLM engine schedules chunks fairly across documents: the server sees them round-robin."""

import polars as pl

from kg_assets.extractors.llm.engine import LLMExtractor
from kg_assets.settings import LLMSettings
from kg_assets.testing.scripted_llm import chunk_text, extraction_responder


def test_a_long_document_does_not_hold_every_slot_while_a_short_one_waits(tmp_path, openai_server):
    long = [f"Part {i}: Sarah Chen wrote chapter {i} in Boston." for i in range(8)]
    short = ["Marcus Webb joined Northwind Robotics.", "Marcus Webb moved to Pittsburgh."]
    texts = {("long.md", i): t for i, t in enumerate(long)} | {("short.md", i): t for i, t in enumerate(short)}
    chunks = pl.DataFrame([{"chunk_id": f"{d}#{i}", "document_id": d, "chunk_index": i, "text": t, "content_hash": t,
                            "section_path": None, "headings": []} for (d, i), t in texts.items()])
    openai_server.set_responder(extraction_responder())
    settings = LLMSettings(base_url=openai_server.base_url, api_key="test", concurrency=2,
                           cache_path=str(tmp_path / "cache.sqlite"))
    result = LLMExtractor(settings).extract(chunks)
    order = [next(d for (d, _), t in texts.items() if t == chunk_text(r)) for r in openai_server.requests]
    assert order[:4] == ["long.md", "short.md", "long.md", "short.md"], order
    assert result.chunk_status["chunk_id"].to_list() == chunks["chunk_id"].to_list(), "rows keep the chunks' order"
    assert set(result.chunk_status["status"]) == {"ok"}

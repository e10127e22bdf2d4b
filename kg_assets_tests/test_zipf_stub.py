"""The peer benchmark's stub (benchmarks/peers.py): the same 3 entities and 2 relations per chunk text in each format."""

from __future__ import annotations

from collections import Counter

import polars as pl

from kg_assets.extractors import zipf_stub
from kg_assets.extractors.stub import ZipfStubExtractor

TEXTS = [f"Chunk number {i}: Ada Brandt joined Lumen Labs in Oslo." for i in range(400)]


def test_the_draw_is_seeded_by_the_chunk_text_and_zipf_like():
    entities, relations = zipf_stub.draw(TEXTS[0])
    assert (entities, relations) == zipf_stub.draw(TEXTS[0])
    assert len(entities) == 3 and len({e.name for e in entities}) == 3
    assert [(r.source, r.target) for r in relations] == [(0, 1), (1, 2)]
    assert {e.name for e in entities} <= {name for name, _ in zipf_stub.POOL}
    counts = Counter(e.name for text in TEXTS for e in zipf_stub.draw(text)[0])
    top = counts.most_common(1)[0][1]
    assert top >= 40  # the head recurs across many chunks ...
    assert len(counts) > 300  # ... and the long tail is long
    assert sum(zipf_stub.draw(t)[0] != entities for t in TEXTS[1:]) > 390


def test_each_peer_format_carries_three_entities_and_two_relations():
    entities, relations = zipf_stub.draw(TEXTS[1])
    nano = zipf_stub.tuple_answer(TEXTS[1], style="nano-graphrag", tuple_delimiter="<|>", record_delimiter="##",
                                  completion_delimiter="<|COMPLETE|>")
    assert nano.endswith("<|COMPLETE|>")
    records = [r.strip() for r in nano.removesuffix("<|COMPLETE|>").split("##")]
    assert [r.split("<|>")[0] for r in records] == ['("entity"'] * 3 + ['("relationship"'] * 2
    assert [r.split("<|>")[1].strip('"') for r in records[:3]] == [e.name for e in entities]
    light = zipf_stub.tuple_answer(TEXTS[1], style="lightrag", tuple_delimiter="<|#|>", record_delimiter="\n",
                                   completion_delimiter="<|COMPLETE|>")
    lines = light.splitlines()
    assert lines[-1] == "<|COMPLETE|>"
    assert [len(line.split("<|#|>")) for line in lines[:-1]] == [4, 4, 4, 5, 5]
    assert lines[3].split("<|#|>")[1:3] == [entities[0].name, entities[1].name]


def test_kg_assets_stub_extractor_gives_the_same_entities():
    chunks = pl.DataFrame({"chunk_id": ["c1", "c2"], "document_id": ["d1", "d1"], "text": TEXTS[:2],
                           "section_path": [None, None], "content_hash": ["h1", "h2"]})
    result = ZipfStubExtractor().extract(chunks)
    mentions = result.mentions.sort("chunk_id")
    for chunk_id, text in (("c1", TEXTS[0]), ("c2", TEXTS[1])):
        names = mentions.filter(pl.col("chunk_id") == chunk_id)["name"].to_list()
        assert sorted(names) == sorted(e.name for e in zipf_stub.draw(text)[0])
    assert result.relations.height == 4

import polars as pl
import pytest
from bpe_openai import get_encoding as encoding

from kg_assets.core.chunking import ChunkingConfig, _segments, chunk_documents, chunk_text
from kg_assets.core.tokens import count_tokens

TEXT = (
    "# Annual Report\n\nDate: 2025-12-10\n\n## Research\n\n"
    + " ".join(f"In {2000 + i} Dr. Sarah Chen of the U.S. lab published paper {i} with Marcus Webb." for i in range(40))
    + "\n\n### Quantum\n\nQubitline ships.\n\n## Finance\n\nRevenue grew in Boston."
)
CONFIG = ChunkingConfig(max_tokens=120, overlap_tokens=30)


def test_chunks_respect_the_token_budget_and_index_the_text_exactly():
    chunks = chunk_text(TEXT, CONFIG)
    assert len(chunks) > 4
    enc = encoding(CONFIG.encoding)
    for chunk in chunks:
        body = TEXT[chunk["char_start"] : chunk["char_end"]]
        assert body == body.strip() and body
        assert chunk["token_count"] <= CONFIG.max_tokens
        # Segment counts add up to within a few tokens of encoding the chunk whole.
        assert abs(len(enc.encode(body)) - chunk["token_count"]) <= 0.1 * chunk["token_count"] + 3
    assert [c["chunk_index"] for c in chunks] == list(range(len(chunks)))


def test_consecutive_chunks_of_a_section_overlap_and_cover_all_text():
    chunks = [c for c in chunk_text(TEXT, CONFIG) if c["section_path"] == "Annual Report > Research"]
    assert len(chunks) >= 3
    for before, after in zip(chunks, chunks[1:]):
        assert after["char_start"] < before["char_end"], "expected overlap"
        assert after["char_start"] > before["char_start"]


def test_sections_start_new_chunks_and_carry_their_heading_path():
    paths = [c["section_path"] for c in chunk_text(TEXT, CONFIG)]
    assert paths[0] == "Annual Report"
    assert "Annual Report > Research > Quantum" in paths
    assert paths[-1] == "Annual Report > Finance"
    finance = chunk_text(TEXT, CONFIG)[-1]
    assert TEXT[finance["char_start"] : finance["char_end"]] == "## Finance\n\nRevenue grew in Boston."


def test_sentences_do_not_break_after_abbreviations():
    text = "Dr. Sarah Chen met Prof. Okafor in the U.S. yesterday. " * 30
    for chunk in chunk_text(text, ChunkingConfig(max_tokens=40, overlap_tokens=0)):
        assert text[chunk["char_start"] :].startswith("Dr. Sarah Chen")


def test_a_sentence_ends_at_a_mark_before_whitespace_unless_it_closes_an_abbreviation():
    text = "Dr. Lee met Mrs. Ito. They talked! Why? Acme Inc. grew vs. rivals in St. Paul. J. R. Smith left.\nNext line"
    assert [text[start:end] for start, end, _, _ in _segments(text)] == [
        "Dr. Lee met Mrs. Ito.", "They talked!", "Why?", "Acme Inc. grew vs. rivals in St. Paul.", "J. R. Smith left.",
        "Next line"]


def test_a_segment_longer_than_the_budget_is_split_on_word_boundaries():
    text = " ".join(f"token{i}" for i in range(2000))  # no sentence ends at all
    chunks = chunk_text(text, ChunkingConfig(max_tokens=100, overlap_tokens=0))
    assert len(chunks) >= 10
    assert chunks[0]["char_start"] == 0 and chunks[-1]["char_end"] == len(text)
    for chunk in chunks:
        assert not text[chunk["char_start"] : chunk["char_end"]].startswith(" ")


def test_chunk_ids_are_stable_and_change_only_with_content():
    docs = pl.DataFrame({"document_id": ["d1", "d2"], "text": [TEXT, "Short text."], "status": ["ok", "ok"]})
    first = chunk_documents(docs, CONFIG)
    again = chunk_documents(docs.reverse(), CONFIG)
    assert sorted(first["chunk_id"].to_list()) == sorted(again["chunk_id"].to_list())
    edited = chunk_documents(docs.with_columns(pl.col("text").str.replace("Boston", "Pittsburgh")), CONFIG)
    changed = set(edited["chunk_id"]) ^ set(first["chunk_id"])
    assert len(changed) == 2  # only the last chunk of d1, before and after
    assert first["chunk_id"].n_unique() == first.height


def test_failed_and_empty_documents_produce_no_chunks():
    docs = pl.DataFrame({"document_id": ["bad", "ok"], "text": [None, "One sentence."], "status": ["error", "ok"]})
    out = chunk_documents(docs, CONFIG)
    assert out["document_id"].to_list() == ["ok"]
    assert chunk_text("", CONFIG) == []


def test_invalid_configuration_is_refused():
    with pytest.raises(ValueError):
        ChunkingConfig(max_tokens=100, overlap_tokens=60)


def test_a_lone_surrogate_is_counted_as_bpe_openai_counts_it():
    # text decoded with errors="surrogateescape" keeps lone surrogates, which UTF-8 cannot encode
    text = "Ada Lovelace \udcff visited Paris."
    assert count_tokens(text) == len(encoding(CONFIG.encoding).encode_ordinary(text)) > 0

"""Hostile texts (no punctuation, one endless token, millions of newlines, mixed scripts, control characters)
through reading, chunking, the offline entity extractor and the heuristic fact rules: each terminates within a
bound per megabyte, raises nothing, and gives rows that pass the checks.

The time bound (`SECONDS_PER_MB`, CPU time of this process) is there to catch runaway behaviour (quadratic
scans, backtracking regexes), not to assert speed: it is many times what the code needs on a loaded machine.
Long texts are built by repeating generated pieces, so generating them stays fast.
"""

import time
from pathlib import Path

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg_assets.core.chunking import ChunkingConfig, chunk_document, chunks_frame
from kg_assets.core.documents import read_document
from kg_assets.core.facts.rules import extractability_problem, validate_answer
from kg_assets.core.tokens import count_tokens
from kg_assets.extractors.facts.heuristic import heuristic_facts
from kg_assets.extractors.heuristic import HeuristicExtractor

SECONDS_PER_MB = 20.0  # a bound for runaway behaviour, not a speed assertion
SECONDS_MIN = 2.0  # loading the tokenizer, the lexicon, a loaded machine: small texts get this much
CONFIG = ChunkingConfig(max_tokens=120, overlap_tokens=20)

# Pieces a hostile text is made of: scripts, combining marks, emoji, RTL, control characters, separators,
# sentence ends, heading marks, long runs of one character.
_ALPHABET = st.characters(codec="utf-8", exclude_categories=("Cs",))
_SPECIAL = st.sampled_from([
    "\n", "\n\n", "\r\n", "\r", "\t", " ", ".", ". ", "?! ", "#", "# ", "## Heading\n", "\x00", "\x0b", "\x0c", "\u2028",
    "\u200b", "\ufeff", "\u0301", "中文", "שלום", "مرحبا", "😀", "Ada Lovelace ", "Dr. ", "U.S. ", "I work at Acme. ",
    "My name is Sam and I live in Paris. ", "x" * 50, "9" * 40, "-" * 30, "=" * 30,
])
_PIECE = st.one_of(st.text(_ALPHABET, max_size=30), _SPECIAL)


@st.composite
def hostile_texts(draw, longest: int, shortest: int = 1) -> str:
    """A text of some generated pieces repeated until it is `shortest` to `longest` characters long."""
    unit = "".join(draw(st.lists(_PIECE, min_size=1, max_size=8)))
    if not unit:
        unit = "x"
    length = draw(st.integers(min_value=shortest, max_value=longest))
    return (unit * (length // len(unit) + 1))[:length]


def _budget(text: str) -> float:
    return SECONDS_MIN + SECONDS_PER_MB * len(text.encode("utf-8", "surrogatepass")) / 1_000_000


def _timed(work, text: str):
    started = time.process_time()
    out = work()
    spent = time.process_time() - started
    assert spent <= _budget(text), f"{spent:.1f}s CPU on {len(text):,} characters: runaway behaviour"
    return out


def _check_chunks(text: str, rows: list[dict]) -> None:
    for index, row in enumerate(rows):
        assert row["chunk_index"] == index
        if row["kind"] == "text":
            assert 0 <= row["char_start"] < row["char_end"] <= len(text)
            assert row["text"] == text[row["char_start"] : row["char_end"]]
            assert 1 <= row["token_count"] <= CONFIG.max_tokens


def _read_and_chunk(tmp_path: Path, text: str, suffix: str) -> tuple[dict, list[dict]]:
    inbox = tmp_path / "inbox"
    inbox.mkdir(exist_ok=True)
    (inbox / f"doc.{suffix}").write_bytes(text.encode("utf-8"))
    row = _timed(lambda: read_document(inbox, f"doc.{suffix}"), text)
    assert row["status"] in ("ok", "error") and (row["status"] == "ok") == (row["error"] is None)
    if row["status"] != "ok":
        return row, []
    rows = _timed(lambda: chunk_document(row["document_id"], row["text"], row.get("figures"), CONFIG), row["text"])
    _check_chunks(row["text"], rows)
    return row, rows


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=hostile_texts(longest=3_000), suffix=st.sampled_from(["txt", "md", "html"]))
def test_any_short_text_is_read_and_chunked_into_valid_rows(tmp_path, text, suffix):
    _read_and_chunk(tmp_path, text, suffix)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=hostile_texts(longest=1_200_000, shortest=200_000))
def test_any_long_text_is_read_and_chunked_in_bounded_time(tmp_path, text):
    """Up to 1.2 million characters: past the tokenizer's own limit for one call (1,000,000 characters)."""
    _read_and_chunk(tmp_path, text, "txt")


@settings(max_examples=4, deadline=None)
@given(unit=st.sampled_from(["x", "lorem ipsum dolor sit amet ", "\n", "a\n", "中", "😀", "\x00", ". "]))
def test_the_worst_runs_are_counted_and_chunked_linearly(unit):
    """A million characters of one repeated unit: one endless token, no punctuation, only newlines."""
    text = unit * (1_000_000 // len(unit) + 7)
    assert _timed(lambda: count_tokens(text), text) > 0
    _check_chunks(text, _timed(lambda: chunk_document("doc", text, None, CONFIG), text))


@settings(max_examples=25, deadline=None)
@given(text=hostile_texts(longest=30_000, shortest=2_000))
def test_the_offline_entity_extractor_takes_any_text(text):
    rows = chunk_document("doc", text, None, CONFIG)
    if not rows:
        return
    chunks = chunks_frame(rows).with_columns(headings=pl.lit([], dtype=pl.List(pl.String)))
    result = _timed(lambda: HeuristicExtractor().extract(chunks), text)
    assert set(result.chunk_status["chunk_id"]) == set(chunks["chunk_id"])
    by_chunk = dict(chunks.select("chunk_id", "text").iter_rows())
    for chunk_id, start, end in result.mentions.select("chunk_id", "char_start", "char_end").iter_rows():
        assert chunk_id in by_chunk
        if start is not None:
            assert 0 <= start <= end <= len(by_chunk[chunk_id])


@settings(max_examples=40, deadline=None)
@given(text=hostile_texts(longest=5_000, shortest=20))
def test_the_heuristic_fact_rules_take_any_message(text):
    def learn():
        extractability_problem(text)
        return heuristic_facts(text)

    facts = _timed(learn, text)
    valid, _notes = validate_answer(facts)
    assert all(0 < len(f.content) < 100 for f in valid)


@settings(max_examples=3, deadline=None)
@given(text=hostile_texts(longest=1_000_000, shortest=100_000))
def test_the_offline_extractors_take_a_long_text(text):
    chunks = chunks_frame(chunk_document("doc", text, None, CONFIG)).with_columns(
        headings=pl.lit([], dtype=pl.List(pl.String)))
    result = _timed(lambda: HeuristicExtractor().extract(chunks), text)
    assert result.chunk_status.height == chunks.height
    _timed(lambda: heuristic_facts(text), text)


# -- the isolation of the steps that call an engine on many documents at once --------------------------------

class _Raising:
    """The offline extractor, raising on any chunk of text containing "BOOM" (a content-triggered bug)."""
    name, version = "heuristic", "test"

    def extract(self, chunks: pl.DataFrame):
        if chunks["text"].str.contains("BOOM").any():
            raise RuntimeError("extractor bug")
        return HeuristicExtractor().extract(chunks)


def test_an_extractor_raising_on_one_document_fails_only_its_chunks():
    from kg_assets.extractors.workers import extract_isolated

    rows = [*chunk_document("good.txt", "Ada Lovelace met Charles Babbage in London.", None, CONFIG),
            *chunk_document("bad.txt", "Grace Hopper said BOOM in Cambridge.", None, CONFIG)]
    chunks = chunks_frame(rows).with_columns(headings=pl.lit([], dtype=pl.List(pl.String)))
    result, failures = extract_isolated(_Raising(), chunks)
    assert [(f.document_id, f.step, f.error) for f in failures] == [
        ("bad.txt", "extraction", "extraction: RuntimeError: extractor bug")]
    status = dict(result.chunk_status.select("document_id", "status").iter_rows())
    assert status == {"good.txt": "ok", "bad.txt": "error"}
    assert set(result.mentions["document_id"]) == {"good.txt"}
    errors = result.chunk_status.filter(pl.col("status") == "error")
    assert errors["error"].to_list() == ["extraction: RuntimeError: extractor bug"] and errors["extractor_version"][0] == "test"


def test_fact_learning_raising_on_one_chat_fails_only_its_messages(monkeypatch):
    import json
    from datetime import UTC, datetime

    from kg_assets.core.chat import messages_frame, parse_chat
    from kg_assets.core.facts import pipeline
    from kg_assets.defs import facts
    from kg_assets.extractors.facts.heuristic import HeuristicFactExtractor

    def chat(document_id: str, content: str) -> pl.DataFrame:
        line = json.dumps({"user_id": "u1", "message_id": "m-1", "content": content,
                           "timestamp": datetime(2025, 1, 1, tzinfo=UTC).isoformat()})
        return messages_frame(document_id, parse_chat(line))

    def learn(messages, engine, **options):
        if messages["content"].str.contains("BOOM").any():
            raise ValueError("rule bug")
        return pipeline.learn_facts(messages, engine, **options)

    monkeypatch.setattr(facts, "learn_facts", learn)
    messages = pl.concat([chat("a.jsonl", "I work as a nurse at the children's hospital."),
                          chat("b.jsonl", "I live in Denver BOOM.")])
    learned, failures = facts._learn_isolated(messages, HeuristicFactExtractor(), rate=1.0)
    assert [(f.document_id, f.error) for f in failures] == [("b.jsonl", "message_facts: ValueError: rule bug")]
    outcomes = dict(learned.extractions.select("document_id", "outcome").iter_rows())
    assert outcomes == {"a.jsonl": "ok", "b.jsonl": "error"}
    assert set(learned.message_facts["document_id"]) == {"a.jsonl"}

"""The offline heuristic extractor: real behaviour on small texts (no Dagster, no DuckDB)."""

from __future__ import annotations

import polars as pl
import pytest

from kg_assets.core import schemas
from kg_assets.core.normalize import entity_id
from kg_assets.llm.heuristic import MAX_PAIRS_PER_SENTENCE, HeuristicExtractor, split_sentences

LEAD = "Dr. Sarah Chen leads the AI team at Quantum Dynamics Lab in Boston."


def chunks(*texts: str | None) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "chunk_id": [f"chunk_{i}" for i in range(len(texts))],
            "document_id": [f"doc_{i}.md" for i in range(len(texts))],
            "text": list(texts),
            "section_path": ["Intro"] * len(texts),
            "content_hash": [f"hash_{i}" for i in range(len(texts))],
        },
        schema={
            "chunk_id": pl.String,
            "document_id": pl.String,
            "text": pl.String,
            "section_path": pl.String,
            "content_hash": pl.String,
        },
    )


def extract(*texts: str | None):
    return HeuristicExtractor().extract(chunks(*texts))


def types_by_name(mentions: pl.DataFrame) -> dict[str, str]:
    return dict(mentions.select("normalized_name", "entity_type").iter_rows())


def test_lead_sentence_entities_and_relation():
    result = extract(LEAD)
    types = types_by_name(result.mentions)
    assert types["SARAH_CHEN"] == "PERSON"
    assert types["QUANTUM_DYNAMICS_LAB"] == "ORGANIZATION"
    assert types["BOSTON"] == "LOCATION"
    # the honorific is a cue, not part of the name
    assert "Dr. Sarah Chen" not in result.mentions["name"].to_list()

    rel = result.relations.filter(
        (pl.col("source_name") == "Sarah Chen") & (pl.col("target_name") == "Quantum Dynamics Lab")
    )
    assert rel.height == 1
    row = rel.row(0, named=True)
    assert row["relation_type"] == "LEADS"
    assert row["strength"] == 1.0
    assert row["keywords"].startswith("leads")
    assert row["source_id"] == entity_id("PERSON", "SARAH_CHEN")
    assert row["target_id"] == entity_id("ORGANIZATION", "QUANTUM_DYNAMICS_LAB")
    assert row["description"] == LEAD
    assert row["relation_id"].startswith("relation_")


def test_offsets_slice_back_and_ids_match_normalize():
    text = "Intro line.\n\n" + LEAD + " Chen joined Northwind Robotics Inc. in 2019."
    mentions = extract(text).mentions
    assert mentions.height >= 5
    for row in mentions.iter_rows(named=True):
        assert text[row["char_start"] : row["char_end"]] == row["name"]
        assert row["entity_id"] == entity_id(row["entity_type"], row["normalized_name"])
        assert row["mention_id"].startswith("mention_")
        assert row["gleaning_pass"] == 0
        assert row["extractor"] == "heuristic"
        assert row["extractor_version"] == "heuristic-1"
        assert 0 < row["confidence"] <= 1
        assert row["name"] in row["description"] or len(row["description"]) == 300
    assert mentions["mention_id"].n_unique() == mentions.height


def test_surname_after_full_person_name_is_person():
    text = "Sarah Chen founded the company in 2019. Later, Chen moved to Berlin."
    mentions = extract(text).mentions
    chen = mentions.filter(pl.col("name") == "Chen")
    assert chen.height == 1
    assert chen["entity_type"][0] == "PERSON"
    assert chen["normalized_name"][0] == "CHEN"  # keeps its own name


def test_surname_before_any_person_is_not_forced_to_person():
    text = "Berlin welcomed Chen last year. Sarah Chen founded the company."
    types = dict(extract(text).mentions.select("name", "entity_type").iter_rows())
    assert types["Chen"] == "OTHER"  # the rule only looks back
    assert types["Sarah Chen"] == "PERSON"


def test_corporate_suffix_is_organization_and_keeps_the_dot():
    text = "She later joined Northwind Robotics Inc. as its first engineer."
    mentions = extract(text).mentions
    row = mentions.filter(pl.col("normalized_name") == "NORTHWIND_ROBOTICS_INC").row(0, named=True)
    assert row["entity_type"] == "ORGANIZATION"
    assert row["name"] == "Northwind Robotics Inc."


def test_sentence_split_keeps_us_and_abbreviations():
    text = "She moved to the U.S. in 2010 with Dr. Lee. Then she joined Google Inc. The rest is history."
    sentences = [text[s:e] for s, e in split_sentences(text)]
    assert sentences == [
        "She moved to the U.S. in 2010 with Dr. Lee.",
        "Then she joined Google Inc.",
        "The rest is history.",
    ]
    names = extract(text).mentions["name"].to_list()
    assert "U.S." in names


def test_sentence_initial_function_words_are_not_entities():
    text = "The report was late. However, Google shipped it. This worked. In Paris, They met."
    names = set(extract(text).mentions["name"].to_list())
    assert names == {"Google", "Paris"}


def test_leading_the_is_stripped_from_spans():
    text = "We visited The Quantum Dynamics Lab yesterday."
    names = extract(text).mentions["name"].to_list()
    assert names == ["Quantum Dynamics Lab"]


def test_acronym_in_parentheses_takes_the_span_type():
    text = "Quantum Dynamics Lab (QDL) hired Sarah Chen. QDL is growing."
    mentions = extract(text).mentions
    qdl = mentions.filter(pl.col("name") == "QDL")
    assert qdl.height == 2
    assert set(qdl["entity_type"].to_list()) == {"ORGANIZATION"}


def test_gazetteer_event_and_location_cues():
    text = "Engineers from Northwind presented PyTorch results at NeurIPS 2025 near Lisbon."
    types = dict(extract(text).mentions.select("name", "entity_type").iter_rows())
    assert types["PyTorch"] == "TECHNOLOGY"
    assert types["NeurIPS 2025"] == "EVENT"
    assert types["Lisbon"] == "LOCATION"  # preposition cue, not in the gazetteer
    assert types["Northwind"] == "LOCATION"  # documented limit: "from X" reads as a place
    assert "Engineers" not in types  # sentence-initial common word with no support


def test_custom_gazetteer_and_entity_types():
    ex = HeuristicExtractor(
        entity_types=("PERSON", "ORGANIZATION", "OTHER"), gazetteer={"Northwind": "ORGANIZATION"}
    )
    result = ex.extract(chunks("Engineers at Northwind use DuckDB in Boston."))
    types = dict(result.mentions.select("name", "entity_type").iter_rows())
    assert types == {"Northwind": "ORGANIZATION", "DuckDB": "OTHER", "Boston": "OTHER"}


def test_verb_with_preposition_and_cooccurrence():
    result = extract("Maria Lopez works at Acme Analytics and Beta Systems.")
    rels = {(r["source_name"], r["target_name"]): r for r in result.relations.iter_rows(named=True)}
    assert rels[("Maria Lopez", "Acme Analytics")]["relation_type"] == "WORKS_AT"
    co = rels[("Acme Analytics", "Beta Systems")]
    assert co["relation_type"] == "RELATED_TO"
    assert co["strength"] == 0.5


def test_relations_per_sentence_are_bounded_and_distinct():
    text = (
        "Alice Smith, Bob Jones, Carol White, Dan Brown, Eve Black and Frank Green met in Paris. "
        "Google, Google and Google met Microsoft."
    )
    result = extract(text)
    per_sentence = result.relations.group_by("description").len()
    assert MAX_PAIRS_PER_SENTENCE == 3
    assert per_sentence["len"].max() == 3  # seven entities in the first sentence, capped at three pairs
    assert result.relations.filter(pl.col("source_id") == pl.col("target_id")).height == 0
    assert result.relations["relation_id"].n_unique() == result.relations.height
    assert result.mentions.filter(pl.col("name") == "Google").height == 3  # every mention kept


def test_empty_and_whitespace_chunks_are_ok_with_no_mentions():
    result = extract("", "   \n\t ")
    assert result.mentions.height == 0
    assert result.relations.height == 0
    status = result.chunk_status
    assert status["status"].to_list() == ["ok", "ok"]
    assert status["mention_count"].to_list() == [0, 0]


def test_bad_chunk_is_an_error_row_and_the_batch_goes_on():
    result = extract(LEAD, None, "Sarah Chen moved to Berlin.")
    status = {r["chunk_id"]: r for r in result.chunk_status.iter_rows(named=True)}
    assert status["chunk_1"]["status"] == "error"
    assert "NoneType" in status["chunk_1"]["error"]
    assert status["chunk_1"]["mention_count"] == 0
    for cid in ("chunk_0", "chunk_2"):
        assert status[cid]["status"] == "ok"
        assert status[cid]["error"] is None
        assert status[cid]["mention_count"] > 0
    assert status["chunk_0"]["chunk_hash"] == "hash_0"
    chunk_0_relations = result.relations.filter(pl.col("chunk_id") == "chunk_0")
    assert status["chunk_0"]["relation_count"] == chunk_0_relations.height
    assert set(result.mentions["chunk_id"].unique()) == {"chunk_0", "chunk_2"}
    assert result.chunk_status["extracted_at"].null_count() == 0


@pytest.mark.parametrize(
    ("attr", "schema"),
    [
        ("mentions", schemas.ENTITY_MENTIONS),
        ("relations", schemas.LOCAL_RELATIONS),
        ("chunk_status", schemas.CHUNK_EXTRACTIONS),
    ],
)
@pytest.mark.parametrize("texts", [(LEAD,), ()])
def test_output_columns_match_contracts(attr, schema, texts):
    frame = getattr(extract(*texts), attr)
    assert frame.schema == pl.Schema(schema)


def test_deterministic_ids_across_runs():
    a = extract(LEAD)
    b = extract(LEAD)
    assert a.mentions["mention_id"].to_list() == b.mentions["mention_id"].to_list()
    assert a.relations["relation_id"].to_list() == b.relations["relation_id"].to_list()


def test_attributive_mentions_are_not_relation_endpoints():
    result = extract("The Boston-based startup Acme Analytics acquired Beta Systems.")
    assert "Boston" in result.mentions["name"].to_list()  # still a mention
    rows = result.relations.select("source_name", "target_name", "relation_type").iter_rows()
    pairs = set(rows)
    assert pairs == {("Acme Analytics", "Beta Systems", "ACQUIRED")}

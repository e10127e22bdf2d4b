"""The one row builder: one id rule per table, whichever extractor feeds it."""

from __future__ import annotations

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.extraction.records import Attribute, Entity, ParsedOutput, Relation
from kg_assets.core.extraction.rows import (
    ChunkRecords,
    MentionRecord,
    ObservationRecord,
    RelationRecord,
    build_rows,
    row_names,
)
from kg_assets.core.extraction.sanitize import row_records
from kg_assets.core.normalize import entity_id, stable_hash
from kg_assets.extractors.heuristic import HeuristicExtractor

SARAH = entity_id("PERSON", "SARAH_CHEN")
ACME = entity_id("ORGANIZATION", "ACME_LABS")


def rows(*chunks: ChunkRecords):
    return build_rows(chunks, extractor="test", extractor_version="t1")


def test_one_mention_per_entity_and_position():
    chunk = ChunkRecords("c1", "d1", "h1", mentions=[
        MentionRecord("Sarah Chen", "PERSON", "first", 0.9, 0, 10),
        MentionRecord("Sarah Chen", "PERSON", "again", 0.9, 40, 50),  # another position: another mention
        MentionRecord("SARAH CHEN", "PERSON", "same place", 0.5, 0, 10),  # same entity, same position
        MentionRecord("Sarah Chen", "PERSON", "no span"),
        MentionRecord("Sarah Chen", "PERSON", "no span again"),
        MentionRecord("Sarah Chen", "ORGANIZATION", "other type", None, 0, 10),  # another entity
    ])
    mentions = rows(chunk).mentions
    assert mentions.select("description", "char_start").rows() == [
        ("first", 0), ("again", 40), ("no span", None), ("other type", 0)
    ]
    expected = [
        "mention_" + stable_hash("c1", SARAH, "0"), "mention_" + stable_hash("c1", SARAH, "40"),
        "mention_" + stable_hash("c1", SARAH, ""), "mention_" + stable_hash("c1", entity_id("ORGANIZATION", "SARAH_CHEN"), "0"),
    ]
    assert mentions["mention_id"].to_list() == expected
    assert mentions["entity_id"].to_list()[:3] == [SARAH] * 3


def test_a_lower_case_description_is_one_entity_per_document_and_a_name_one_per_corpus():
    chunks = [ChunkRecords(f"c{d}", d, "h", mentions=[MentionRecord("the engineer", "PERSON"),
                                                      MentionRecord("Sarah Chen", "PERSON")]) for d in ("d1", "d2")]
    chunks.append(ChunkRecords("c3", "d1", "h", mentions=[MentionRecord("engineer", "PERSON")]))
    ids = dict(((d, n), e) for d, n, e in rows(*chunks).mentions.select("document_id", "name", "entity_id").iter_rows())
    assert ids[("d1", "Sarah Chen")] == ids[("d2", "Sarah Chen")] == SARAH
    # "the engineer" of one document is not the engineer of another; in one document, two chunks agree
    assert ids[("d1", "the engineer")] == ids[("d1", "engineer")] == entity_id("PERSON", "ENGINEER", "d1")
    assert ids[("d2", "the engineer")] == entity_id("PERSON", "ENGINEER", "d2")


def test_a_lower_case_name_beside_its_capitalised_form_in_the_chunk_is_that_name():
    chunks = [ChunkRecords("c1", "d1", "h", mentions=[MentionRecord("Sarah Chen", "PERSON", "", 0.9, 0, 10),
                                                      MentionRecord("sarah chen", "PERSON", "again", 0.9, 40, 50)]),
              ChunkRecords("c2", "d1", "h", mentions=[MentionRecord("sarah chen", "PERSON")])]
    ids = dict(((c, n), e) for c, n, e in rows(*chunks).mentions.select("chunk_id", "name", "entity_id").iter_rows())
    assert ids[("c1", "sarah chen")] == ids[("c1", "Sarah Chen")] == SARAH
    # alone in its chunk, the lower-case form is a description of its document
    assert ids[("c2", "sarah chen")] == entity_id("PERSON", "SARAH_CHEN", "d1")


def test_a_name_that_normalizes_to_nothing_makes_no_rows():
    chunk = ChunkRecords(
        "c1", "d1",
        mentions=[MentionRecord("!!!", "OTHER"), MentionRecord("Acme Labs", "ORGANIZATION")],
        relations=[RelationRecord(0, 1, "OWNS"), RelationRecord(1, 0, "OWNED_BY")],
        observations=[ObservationRecord(0, "role", "x"), ObservationRecord(1, "founded_year", "2015")],
    )
    result = rows(chunk)
    assert result.mentions["name"].to_list() == ["Acme Labs"]
    assert result.relations.height == 0
    assert result.attributes["attr_key"].to_list() == ["founded_year"]
    assert result.chunk_status.select("mention_count", "relation_count", "attribute_count").row(0) == (1, 0, 1)


def test_row_names_are_the_names_and_types_of_the_mention_rows():
    chunk = ChunkRecords("c1", "d1", "h1", mentions=[
        MentionRecord("US President Barack Obama", "PERSON"),  # the person, not the title
        MentionRecord("Syrian", "ORGANIZATION"),  # a nationality word: no row
        MentionRecord("Editor", "PERSON"),  # a role word alone: no row
        MentionRecord("!!!", "OTHER"),  # normalizes to nothing: no row
        MentionRecord("Lisbon", "LOCATION"),
    ])
    assert row_names(chunk) == rows(chunk).mentions.select("name", "entity_type").rows() == [
        ("Barack Obama", "PERSON"), ("Lisbon", "LOCATION")]


def test_relations_first_wins_and_no_self_relations():
    chunk = ChunkRecords(
        "c1", "d1",
        mentions=[MentionRecord("Sarah Chen", "PERSON", None, None, 0, 10),
                  MentionRecord("Acme Labs", "ORGANIZATION", None, None, 20, 29),
                  MentionRecord("SARAH CHEN", "PERSON", None, None, 40, 50)],  # the first entity again
        relations=[RelationRecord(0, 1, "WORKS_AT", "works at;  Works At, employment", "first", 0.7, 0),
                   RelationRecord(0, 1, "WORKS_AT", "works at", "second", 1.0, 1),
                   RelationRecord(0, 1, "LEADS", "", ""),
                   RelationRecord(0, 2, "IS"),  # the same entity at both ends
                   RelationRecord(1, 0, "EMPLOYS", ["employs", " hires ", "EMPLOYS"])],
    )
    relations = rows(chunk).relations
    assert relations.select("source_name", "target_name", "relation_type", "description", "strength").rows() == [
        ("Sarah Chen", "Acme Labs", "WORKS_AT", "first", 0.7),
        ("Sarah Chen", "Acme Labs", "LEADS", None, 1.0),
        ("Acme Labs", "Sarah Chen", "EMPLOYS", None, 1.0),
    ]
    # keywords are a list, whether written as one string or given as a list: trimmed, repeats dropped
    assert relations["keywords"].to_list() == [["works at", "employment"], [], ["employs", "hires"]]
    assert relations["relation_id"][0] == "relation_" + stable_hash("c1", SARAH, ACME, "WORKS_AT")


def test_observations_casefold_the_value_and_keep_the_best_confidence():
    chunk = ChunkRecords(
        "c1", "d1",
        mentions=[MentionRecord("Sarah Chen", "PERSON"), MentionRecord("Acme Labs", "ORGANIZATION")],
        observations=[
            ObservationRecord(0, "employer", "Acme  Labs", None),
            ObservationRecord(0, "employer", "ACME LABS", 0.6),
            ObservationRecord(0, "employer", "acme labs", 0.9),
            ObservationRecord(0, "employer", "acme labs", 0.5),
            ObservationRecord(0, "", "Acme Labs", 0.9),  # no key
            ObservationRecord(1, "headquarters", "  ", 0.9),  # no value
        ],
    )
    attributes = rows(chunk).attributes
    assert attributes.select("entity_name", "attr_key", "value", "confidence").rows() == [
        ("Sarah Chen", "employer", "Acme Labs", 0.9)  # the first surface form, whitespace collapsed
    ]
    assert attributes["observation_id"][0] == "observation_" + stable_hash("c1", SARAH, "employer", "acme labs")


def test_status_rows_count_the_rows_and_carry_the_outcome():
    ok = ChunkRecords("c1", "d1", "h1", mentions=[MentionRecord("Sarah Chen", "PERSON")], passes=2, bad_lines=1,
                      complete=False)
    failed = ChunkRecords("c2", "d1", "h2", mentions=[MentionRecord("Acme Labs", "ORGANIZATION")],
                          error="pass 1: APITimeoutError", passes=1, complete=True)
    empty = ChunkRecords("c3", "d2", "h3")
    result = rows(ok, failed, empty)
    assert result.chunk_status.schema == pl.Schema(schemas.CHUNK_EXTRACTIONS)
    assert result.chunk_status.select(
        "chunk_id", "chunk_hash", "status", "error", "mention_count", "passes", "bad_lines", "complete"
    ).rows() == [
        ("c1", "h1", "ok", None, 1, 2, 1, False),
        ("c2", "h2", "error", "pass 1: APITimeoutError", 1, 1, 0, True),  # partial records are kept
        ("c3", "h3", "ok", None, 0, 0, 0, None),
    ]
    for frame, schema in ((result.mentions, schemas.ENTITY_MENTIONS), (result.relations, schemas.LOCAL_RELATIONS),
                          (result.attributes, schemas.ATTRIBUTE_OBSERVATIONS)):
        assert frame.schema == pl.Schema(schema)
    assert set(result.mentions["extractor"]) == {"test"} and set(result.chunk_status["extractor_version"]) == {"t1"}
    assert rows().mentions.height == 0 and rows().chunk_status.height == 0


def test_the_heuristic_and_an_llm_answer_give_the_same_ids_for_the_same_facts():
    text = "Dr. Sarah Chen joined Acme Labs as CTO."
    chunks = pl.DataFrame({"chunk_id": ["c1"], "document_id": ["d1"], "text": [text], "content_hash": ["h1"]})
    heuristic = HeuristicExtractor().extract(chunks)
    answer = ParsedOutput(
        entities=[Entity("Sarah Chen", "PERSON", "CTO."), Entity("Acme Labs", "ORGANIZATION", "A lab.")],
        relations=[Relation("Sarah Chen", "Acme Labs", "joined")],
        attributes=[Attribute("Sarah Chen", "employer", "ACME LABS", 0.9)],
    )
    llm = rows(ChunkRecords("c1", "d1", "h1", *row_records(answer, text)))
    assert set(llm.mentions["mention_id"]) <= set(heuristic.mentions["mention_id"])
    assert llm.relations["relation_id"].to_list() == heuristic.relations["relation_id"].to_list()
    employer = heuristic.attributes.filter(pl.col("attr_key") == "employer")
    assert llm.attributes["observation_id"].to_list() == employer["observation_id"].to_list()


def test_an_llm_mention_is_named_as_the_chunk_writes_it():
    text = "An apple a day. Dr. Sarah Chen joined Apple in Cupertino."
    answer = ParsedOutput(entities=[Entity("SARAH_CHEN", "PERSON", "A scientist."), Entity("sarah chen", "PERSON", ""),
                                    Entity("Apple", "ORGANIZATION", "A company."), Entity("cupertino", "LOCATION", "")],
                          relations=[Relation("SARAH_CHEN", "Apple", "joined")], attributes=[])
    mentions, relations, _ = row_records(answer, text)
    assert [(m.name, text[m.char_start:m.char_end]) for m in mentions] == [
        ("Sarah Chen", "Sarah Chen"), ("Sarah Chen", "Sarah Chen"), ("Apple", "Apple"), ("Cupertino", "Cupertino")]
    assert len(relations) == 1  # endpoints still resolve by the model's name
    built = rows(ChunkRecords("c1", "d1", "h1", mentions, relations, []))
    assert set(built.mentions["name"]) == {"Sarah Chen", "Apple", "Cupertino"}
    assert built.mentions.filter(pl.col("name") == "Sarah Chen")["entity_id"].n_unique() == 1

from datetime import UTC, datetime

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.consolidate import (DESCRIPTION_SEPARATOR, MAX_DESCRIPTION_CHARS, build_edges, build_entities,
                                        build_nodes, merge_descriptions, misnamed_entities)
from kg_assets.core.linking import NameLinker, apply_redirects
from kg_assets.core.normalize import entity_id, normalize_name_expr, with_entity_ids

MENTIONS = pl.DataFrame({
    "mention_id": ["m1", "m2", "m3", "m4"],
    "chunk_id": ["c1", "c1", "c2", "c3"],
    "document_id": ["d1", "d1", "d2", "d2"],
    "entity_id": ["e_chen", "e_chen", "e_chen", "e_qdl"],
    "name": ["Sarah Chen", "Chen", "Sarah Chen", "QDL"],
    "normalized_name": ["SARAH_CHEN"] * 3 + ["QDL"],
    "entity_type": ["PERSON"] * 3 + ["ORGANIZATION"],
    "description": ["leads the team", "leads the team", "gave a talk", None],
})
DOCS = pl.DataFrame({
    "document_id": ["d1", "d2"],
    "document_date": [datetime(2025, 1, 1, tzinfo=UTC), None],
    "ingested_at": [datetime(2026, 1, 1, tzinfo=UTC)] * 2,
})
RELATIONS = pl.DataFrame({
    "chunk_id": ["c1", "c2", "c3", "c3"],
    "document_id": ["d1", "d2", "d2", "d2"],
    "source_id": ["e_chen", "e_chen", "e_chen", "e_qdl"],
    "target_id": ["e_qdl", "e_qdl", "e_unknown", "e_qdl"],
    "relation_type": ["LEADS", "LEADS", "MET", "IS"],
    "keywords": [["leads", "heads"], ["heads"], ["met"], []],
    "description": ["Chen leads QDL", "Chen leads QDL", "x", "self"],
})
NO_REDIRECTS = schemas.empty(schemas.ENTITY_ALIASES)


def test_entities_aggregate_counts_names_dates_and_provenance():
    entities = build_entities(MENTIONS, DOCS, NO_REDIRECTS)
    chen = entities.filter(pl.col("entity_id") == "e_chen").row(0, named=True)
    assert chen["name"] == "Sarah Chen"  # most frequent surface form
    assert chen["aliases"] == ["Chen", "Sarah Chen"]
    assert chen["mention_count"] == 3 and chen["document_count"] == 2
    assert chen["first_seen"] == datetime(2025, 1, 1, tzinfo=UTC)  # document date when known
    assert chen["last_seen"] == datetime(2026, 1, 1, tzinfo=UTC)  # else ingestion time
    assert chen["source_chunk_ids"] == ["c1", "c2"]
    assert chen["description"] == "leads the team | gave a talk"


def test_a_merged_entity_keeps_the_type_and_normalized_name_of_its_own_id():
    rows = [("d1", "Sarah Chen", "PERSON"), ("d1", "Chen", "PERSON"), ("d2", "Chen", "PERSON"),
            ("d3", "Sarah Chen", "OTHER")]
    frame = pl.DataFrame({
        "mention_id": [f"m{i}" for i in range(len(rows))], "chunk_id": [r[0] for r in rows],
        "document_id": [r[0] for r in rows], "name": [r[1] for r in rows], "entity_type": [r[2] for r in rows],
    }).with_columns(normalize_name_expr(pl.col("name")).alias("normalized_name"))
    mentions = schemas.conform(with_entity_ids(frame, "entity_type", "normalized_name", "entity_id"), schemas.ENTITY_MENTIONS)
    redirects = NameLinker().link(mentions)
    assert redirects.height == 2  # "Chen" and the OTHER-typed "Sarah Chen" join the PERSON "Sarah Chen"
    documents = pl.DataFrame({"document_id": ["d1", "d2", "d3"], "document_date": pl.Series([None] * 3, dtype=schemas.TS),
                              "ingested_at": [datetime(2026, 1, 1, tzinfo=UTC)] * 3})
    entities = build_entities(mentions, documents, redirects)
    # the cluster's smallest name is CHEN and its smallest type OTHER: neither is the entity's own
    assert entities.select("entity_id", "entity_type", "normalized_name", "mention_count").rows() == [
        (entity_id("PERSON", "SARAH_CHEN"), "PERSON", "SARAH_CHEN", 4)]
    assert misnamed_entities(entities, mentions).height == 0


def test_a_short_form_more_frequent_than_the_full_name_does_not_name_the_entity():
    rows = [("d1", "Quantum Dynamics Lab", "ORGANIZATION")] + [("d1", "QDL", "OTHER")] * 3
    frame = pl.DataFrame({
        "mention_id": [f"m{i}" for i in range(len(rows))], "chunk_id": [r[0] for r in rows],
        "document_id": [r[0] for r in rows], "name": [r[1] for r in rows], "entity_type": [r[2] for r in rows],
    }).with_columns(normalize_name_expr(pl.col("name")).alias("normalized_name"))
    mentions = schemas.conform(with_entity_ids(frame, "entity_type", "normalized_name", "entity_id"), schemas.ENTITY_MENTIONS)
    entities = build_entities(mentions, DOCS, NameLinker().link(mentions))
    assert entities.select("name", "mention_count", "aliases").rows() == [
        ("Quantum Dynamics Lab", 4, ["QDL", "Quantum Dynamics Lab"])]


def test_misnamed_entities_finds_ids_that_are_not_their_type_and_name():
    ids = [entity_id("PERSON", "SARAH_CHEN"), entity_id("PERSON", "SARAH_CHEN"), entity_id("PERSON", "QDL"),
           entity_id("PERSON", "ENGINEER", "d1"), entity_id("PERSON", "ENGINEER")]
    entities = pl.DataFrame({
        "entity_id": ids,
        "entity_type": ["PERSON", "PERSON", "ORGANIZATION", "PERSON", "PERSON"],
        "normalized_name": ["SARAH_CHEN", "CHEN", "QDL", "ENGINEER", "ENGINEER"],
        "name": ["Sarah Chen", "Chen", "QDL", "the engineer", "engineer"],
    })
    mentions = pl.DataFrame({"entity_id": ids, "document_id": ["d1"] * 5, "name": entities["name"]})
    bad = misnamed_entities(entities, mentions)
    # a lower-case description's id carries its document: the corpus-wide id of "engineer" is wrong
    assert bad["name"].to_list() == ["Chen", "QDL", "engineer"]
    assert bad["expected_id"].to_list() == [entity_id("PERSON", "CHEN"), entity_id("ORGANIZATION", "QDL"),
                                            entity_id("PERSON", "ENGINEER", "d1")]
    # a name's id may be named by its lower-case form ("sarah chen" more often than "Sarah Chen"): not scoped
    lowered = entities.head(1).with_columns(name=pl.lit("sarah chen"))
    own = pl.DataFrame({"entity_id": [ids[0]] * 3, "document_id": ["d1"] * 3,
                        "name": ["sarah chen", "sarah chen", "Sarah Chen"]})
    assert misnamed_entities(lowered, own).height == 0


def test_consolidation_does_not_depend_on_row_order():
    a = build_entities(MENTIONS, DOCS, NO_REDIRECTS)
    b = build_entities(MENTIONS.reverse(), DOCS.reverse(), NO_REDIRECTS)
    assert a.equals(b)
    ids = a["entity_id"]
    assert build_edges(RELATIONS, ids).equals(build_edges(RELATIONS.reverse(), ids))


def test_merged_descriptions_are_every_fragment_by_frequency_cut_at_the_bound():
    # 600 one-letter fragments (the shortest, so the most of them reach the bound) and a two-letter one, repeated:
    # the description is all of them joined, most frequent first, ties alphabetical, cut at the bound
    letters = [chr(c) for c in range(0x4E00, 0x4E00 + 600)]
    fragments = [f for i, f in enumerate(letters) for _ in range(1 + i % 3)] + ["zz"] * 5
    merged = merge_descriptions(pl.DataFrame({"k": "a", "description": fragments}), ["k"])
    counts = {f: fragments.count(f) for f in set(fragments)}
    expected = DESCRIPTION_SEPARATOR.join(sorted(counts, key=lambda f: (-counts[f], f)))[:MAX_DESCRIPTION_CHARS]
    assert merged["description"].to_list() == [expected]
    assert len(expected) == MAX_DESCRIPTION_CHARS and expected.startswith("zz | ")


def test_edges_merge_supporting_relations_and_drop_unknown_endpoints_and_self_loops():
    edges = build_edges(RELATIONS, pl.Series(["e_chen", "e_qdl"]))
    assert edges.height == 1
    edge = edges.row(0, named=True)
    assert (edge["source_id"], edge["target_id"], edge["relation_type"], edge["weight"]) == ("e_chen", "e_qdl", "LEADS", 2)
    assert edge["keywords"] == ["heads", "leads"]  # its relations' keywords, distinct and sorted
    assert edge["source_chunk_ids"] == ["c1", "c2"] and edge["document_ids"] == ["d1", "d2"]
    assert edge["description"] == "Chen leads QDL"
    assert edge["edge_id"].startswith("edge_")


def test_edges_read_the_keywords_string_of_a_warehouse_made_before_the_list():
    old = RELATIONS.with_columns(pl.Series("keywords", ["leads; heads", "heads", "met", None]))
    ids = pl.Series(["e_chen", "e_qdl"])
    assert build_edges(old, ids).equals(build_edges(RELATIONS, ids))


def test_nodes_carry_their_degree():
    entities = build_entities(MENTIONS, DOCS, NO_REDIRECTS)
    nodes = build_nodes(entities, build_edges(RELATIONS, entities["entity_id"]))
    assert dict(zip(nodes["node_id"], nodes["degree"])) == {"e_chen": 1, "e_qdl": 1}
    chen = nodes.filter(pl.col("node_id") == "e_chen").row(0, named=True)
    assert chen["aliases"] == ["Chen", "Sarah Chen"] and chen["first_seen"] == datetime(2025, 1, 1, tzinfo=UTC)


def test_redirects_rewrite_ids_in_the_named_columns():
    redirects = pl.DataFrame({"from_id": ["e_qdl"], "to_id": ["e_lab"]})
    out = apply_redirects(RELATIONS, redirects, ["source_id", "target_id"])
    assert out["target_id"].to_list() == ["e_lab", "e_lab", "e_unknown", "e_lab"]
    assert out["source_id"].to_list() == ["e_chen", "e_chen", "e_chen", "e_lab"]
    assert out.columns == RELATIONS.columns

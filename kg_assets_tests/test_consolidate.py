from datetime import UTC, datetime

import polars as pl

from kg_assets.core.consolidate import build_edges, build_entities, build_nodes
from kg_assets.core.linking import apply_redirects

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
    "keywords": ["leads", "heads", "met", "is"],
    "description": ["Chen leads QDL", "Chen leads QDL", "x", "self"],
})


def test_entities_aggregate_counts_names_dates_and_provenance():
    entities = build_entities(MENTIONS, DOCS)
    chen = entities.filter(pl.col("entity_id") == "e_chen").row(0, named=True)
    assert chen["name"] == "Sarah Chen"  # most frequent surface form
    assert chen["aliases"] == ["Chen", "Sarah Chen"]
    assert chen["mention_count"] == 3 and chen["document_count"] == 2
    assert chen["first_seen"] == datetime(2025, 1, 1, tzinfo=UTC)  # document date when known
    assert chen["last_seen"] == datetime(2026, 1, 1, tzinfo=UTC)  # else ingestion time
    assert chen["source_chunk_ids"] == ["c1", "c2"]
    assert chen["description"] == "leads the team | gave a talk"


def test_consolidation_does_not_depend_on_row_order():
    a = build_entities(MENTIONS, DOCS)
    b = build_entities(MENTIONS.reverse(), DOCS.reverse())
    assert a.equals(b)
    ids = a["entity_id"]
    assert build_edges(RELATIONS, ids).equals(build_edges(RELATIONS.reverse(), ids))


def test_edges_merge_supporting_relations_and_drop_unknown_endpoints_and_self_loops():
    edges = build_edges(RELATIONS, pl.Series(["e_chen", "e_qdl"]))
    assert edges.height == 1
    edge = edges.row(0, named=True)
    assert (edge["source_id"], edge["target_id"], edge["relation_type"], edge["weight"]) == ("e_chen", "e_qdl", "LEADS", 2)
    assert edge["keywords"] == ["heads", "leads"]
    assert edge["source_chunk_ids"] == ["c1", "c2"] and edge["document_ids"] == ["d1", "d2"]
    assert edge["description"] == "Chen leads QDL"
    assert edge["edge_id"].startswith("edge_")


def test_nodes_carry_their_degree():
    entities = build_entities(MENTIONS, DOCS)
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

"""`KnowledgeGraph.search` on the warehouse the real pipeline built from the sample corpus.

Expected answers come from plain SQL over kg.* (or from the sample's known facts), never from the
code under test.
"""

from datetime import UTC, datetime

import duckdb
import polars as pl
import pytest

from kg_assets.query import KnowledgeGraph, matching, refresh_entity_lookup
from kg_assets.storage.warehouse import Warehouse


def sql(db, query: str, **params) -> pl.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.sql(query, params=params or None).pl()


def entity_names(db) -> pl.DataFrame:
    """entity_id, surface for every current name and alias."""
    return sql(db, """SELECT entity_id, unnest(list_distinct(list_append(aliases, name))) AS surface
                      FROM kg.entities WHERE valid_until IS NULL""")


def add_entities(db, names: list[str], entity_type: str = "ORGANIZATION") -> None:
    """New current entities written through the warehouse's own versioned write."""
    current = sql(db, "SELECT * EXCLUDE (valid_from, valid_until) FROM kg.entities WHERE valid_until IS NULL")
    now = datetime(2025, 1, 1, tzinfo=UTC)
    rows = [{
        "entity_id": f"entity_test{i:08d}", "name": name, "normalized_name": name.upper(), "entity_type": entity_type,
        "aliases": [name], "mention_count": 1, "document_count": 1, "first_seen": now, "last_seen": now,
        "source_chunk_ids": [],
    } for i, name in enumerate(names)]
    new = pl.DataFrame(rows, schema={column: current.schema[column] for column in rows[0]})
    Warehouse(db).replace_current({"entities": (["entity_id"], pl.concat([current, new], how="diagonal"))})


def test_seed_order_exact_over_partial_over_fuzzy(built_warehouse):
    kg = KnowledgeGraph(built_warehouse)
    hits = kg.search("entity:Sarah Chen", limit=50).hits
    assert hits[0].name == "Sarah Chen" and hits[0].entity_type == "PERSON"
    assert (hits[0].score, hits[0].match) == (1.0, "exact") and 'name "Sarah Chen"' in hits[0].why
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # ("Ask Sarah Chen" is no entity any more: the sample's partial matches are the Atlas arm's names)
    hits = kg.search("entity:Atlas", limit=50).hits
    assert hits[0].name == "Atlas" and (hits[0].score, hits[0].match) == (1.0, "exact")
    partial = [h for h in hits if h.match in {"prefix", "token", "containment"}]
    assert partial and all(h.score == 0.7 for h in partial)
    assert "Atlas" in partial[0].name  # e.g. "Northwind Atlas Arm": contains the query
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    typo = kg.search("entity:Sarha Chen").hits
    assert typo[0].name == "Sarah Chen" and typo[0].match == "fuzzy" and 0.48 <= typo[0].score < 0.7
    assert "similar" in typo[0].why


def test_an_alias_matches_exactly_and_says_so(built_warehouse):
    aliases = sql(built_warehouse, """SELECT e.entity_id FROM kg.entities e
                                      WHERE e.valid_until IS NULL AND list_contains(e.aliases, 'QDL') AND e.name <> 'QDL'""")
    hits = KnowledgeGraph(built_warehouse).search("entity:QDL", limit=20).hits
    exact = {h.entity_id: h for h in hits if h.score == 1.0}
    assert set(aliases["entity_id"]) <= set(exact)
    for entity_id in aliases["entity_id"]:
        assert exact[entity_id].why.startswith('alias "QDL"')
    # the pipeline's normalization also makes an exact match: case, spacing, a leading article
    assert KnowledgeGraph(built_warehouse).search("entity:the SARAH   chen").hits[0].score == 1.0


def test_every_prefix_of_a_name_finds_every_entity_with_that_prefix(built_warehouse):
    names = entity_names(built_warehouse)
    kg = KnowledgeGraph(built_warehouse)
    target = "Quantum Dynamics Lab"
    for end in range(1, len(target) + 1):
        prefix = target[:end]
        expected = set(names.filter(pl.col("surface").str.to_lowercase().str.starts_with(prefix.lower()))["entity_id"])
        found = {h.entity_id: h for h in kg.search(f"entity:{prefix}", limit=1000).hits}
        assert expected <= {i for i, h in found.items() if h.score >= 0.7}, prefix
        assert found[sql(built_warehouse, "SELECT entity_id FROM kg.entities WHERE name = $n AND valid_until IS NULL",
                         n=target)["entity_id"][0]].score == (1.0 if prefix == target else 0.7)


def test_percent_and_underscore_are_literal(mutable):
    add_entities(mutable, ["100% Juice Co", "1000 Things", "snake_case Labs", "snakeXcase Labs", "Tenpercent"])
    kg = KnowledgeGraph(mutable)
    assert [h.name for h in kg.search("entity:100%", limit=50).hits] == ["100% Juice Co"]
    assert [h.name for h in kg.search("entity:snake_", limit=50).hits] == ["snake_case Labs"]
    assert {h.name for h in kg.search("entity:%", limit=50).hits} == {"100% Juice Co"}
    assert {h.name for h in kg.search("entity:_", limit=50).hits} == {"snake_case Labs"}
    hit = kg.search("entity:100% juice co").hits[0]
    assert (hit.name, hit.score) == ("100% Juice Co", 1.0)


@pytest.mark.parametrize("query", [
    "entity:'; DROP TABLE kg.entities; --",
    "entity:\" OR 1=1 --",
    "entity:Robert'); DELETE FROM kg.entities WHERE ('1'='1",
    "attr:employer' OR '1'='1",
    "attr:employer=x' OR '1'='1",
    "attr:role=\\",
    "entity:\\",
    "entity:\\%\\_",
    "entity:$1",
    "entity:?",
    "entity:💥 ☃ 北京",
])
def test_injection_attempts_are_plain_strings(built_warehouse, query):
    before = sql(built_warehouse, "SELECT count(*) AS n FROM kg.entities")["n"][0]
    result = KnowledgeGraph(built_warehouse).search(query, limit=1000)
    surfaces = entity_names(built_warehouse)["surface"].str.to_lowercase()
    # a hit must contain the query text literally or be a fuzzy neighbour; nothing matches "everything"
    assert len(result.hits) < surfaces.len() // 2
    for hit in result.hits:
        assert hit.match == "fuzzy" or hit.score >= 0.7
    assert sql(built_warehouse, "SELECT count(*) AS n FROM kg.entities")["n"][0] == before


def test_quotes_backslashes_and_unicode_in_names_are_found_exactly(mutable):
    odd = ["O'Brien \"Quoted\" Ltd", "Back\\Slash Works", "Zürich Versicherung", "北京大学"]
    add_entities(mutable, odd)
    kg = KnowledgeGraph(mutable)
    for name in odd:
        hit = kg.search(f"entity:{name}").hits[0]
        assert (hit.name, hit.score, hit.match) == (name, 1.0, "exact")
    assert kg.search("entity:zurich versicherung").hits[0].name == "Zürich Versicherung"  # diacritics fold


def test_attr_key_value_uses_current_values_and_resolves_entity_names(built_warehouse):
    expected = set(sql(built_warehouse, """
        SELECT a.entity_id FROM kg.entity_attributes a JOIN kg.entities e USING (entity_id)
        WHERE a.valid_until IS NULL AND e.valid_until IS NULL AND a.attr_key = 'employer'
          AND lower(a.value) = 'quantum dynamics lab'""")["entity_id"])
    kg = KnowledgeGraph(built_warehouse)
    hits = kg.search("attr:employer=Quantum Dynamics Lab", limit=100).hits
    assert expected and {h.entity_id for h in hits} == expected
    assert all(h.score == 1.0 and h.attributes["employer"] == "Quantum Dynamics Lab" for h in hits)
    # "QDL" is an alias of Quantum Dynamics Lab, so it names the same employer
    assert {h.entity_id for h in kg.search("attr:employer=QDL", limit=100).hits if h.score == 1.0} == expected
    partial = kg.search("attr:Employer=quantum", limit=100).hits  # keys normalize like the pipeline's
    assert {h.entity_id for h in partial} == expected and all(h.score == 0.7 for h in partial)


def test_attr_value_matches_its_equivalents_and_whole_words_only(built_warehouse):
    cto_holders = set(sql(built_warehouse, """
        SELECT a.entity_id FROM kg.entity_attributes a JOIN kg.entities e USING (entity_id)
        WHERE a.valid_until IS NULL AND e.valid_until IS NULL AND a.attr_key = 'role'
          AND lower(a.value) = 'chief technology officer'""")["entity_id"])
    assert cto_holders  # Marcus Webb, in the sample
    kg = KnowledgeGraph(built_warehouse)
    for query in ("attr:role=CTO", "attr:role=cto"):
        hits = kg.search(query, limit=100).hits
        assert {h.entity_id for h in hits if h.score == 1.0} == cto_holders, query
        # "cto" is a substring of "director" and "postdoctoral", not a word of them
        assert all(h.score == 1.0 for h in hits), [(h.name, h.why) for h in hits]
    chiefs = set(sql(built_warehouse, """
        SELECT a.entity_id FROM kg.entity_attributes a JOIN kg.entities e USING (entity_id)
        WHERE a.valid_until IS NULL AND e.valid_until IS NULL AND a.attr_key = 'role'
          AND regexp_matches(lower(a.value), '\\bchief\\b')""")["entity_id"])
    assert {h.entity_id for h in kg.search("attr:role=chief", limit=100).hits} == chiefs and len(chiefs) > len(cto_holders)


def test_an_acronym_query_matches_only_an_unambiguous_expansion():
    assert matching.equivalent_values("CTO", ["Chief Technology Officer", "Director"]) == ["Chief Technology Officer"]
    assert matching.equivalent_values("CTO", ["Chief Technology Officer", "Chief Trust Officer"]) == []
    assert matching.equivalent_values("Dr. Alan Okafor", ["Alan Okafor", "Alan Okafor Jr"]) == ["Alan Okafor"]


def test_attr_key_alone_lists_every_current_holder(built_warehouse):
    holders = sql(built_warehouse, """SELECT DISTINCT a.entity_id FROM kg.entity_attributes a JOIN kg.entities e USING (entity_id)
                                      WHERE a.valid_until IS NULL AND e.valid_until IS NULL AND a.attr_key = 'role'""")
    hits = KnowledgeGraph(built_warehouse).search("attr:role", limit=1000).hits
    assert {h.entity_id for h in hits} == set(holders["entity_id"]) and all(h.score == 1.0 for h in hits)
    assert KnowledgeGraph(built_warehouse).search("attr:no_such_key").hits == []


def test_as_of_searches_the_values_valid_then(built_warehouse):
    kg = KnowledgeGraph(built_warehouse)
    webb = "Marcus Webb"
    then = {h.name: h for h in kg.search("attr:employer=Northwind Robotics", as_of="2025-03-01", limit=100).hits}
    now = {h.name for h in kg.search("attr:employer=Northwind Robotics", limit=100).hits}
    assert webb in then and webb not in now
    assert then[webb].attributes["employer"] == "Northwind Robotics" and "2024-11-05 to 2025-06-18" in then[webb].why
    valid = sql(built_warehouse, """
        SELECT DISTINCT a.entity_id FROM kg.entity_attributes a JOIN kg.entities e USING (entity_id)
        WHERE e.valid_until IS NULL AND a.attr_key = 'employer' AND a.valid_from <= TIMESTAMPTZ '2025-06-01 00:00:00+00'
          AND (a.valid_until IS NULL OR a.valid_until > TIMESTAMPTZ '2025-06-01 00:00:00+00')""")
    assert {h.entity_id for h in kg.search("attr:employer", as_of="2025-06-01", limit=1000).hits} == set(valid["entity_id"])
    # as_of also dates the attributes shown with a name search
    shown = kg.search(f"entity:{webb}", as_of=datetime(2025, 5, 10, tzinfo=UTC), types=["PERSON"]).hits[0]
    assert shown.attributes["employer"] == "Northwind Robotics"


def test_type_filter_limit_and_counts(built_warehouse):
    kg = KnowledgeGraph(built_warehouse)
    lumen = kg.search("entity:Lumen", types=["other"], limit=50).hits  # Lumen Lens, not Lumen Analytics
    assert lumen and all(h.entity_type == "OTHER" for h in lumen)
    assert {h.entity_type for h in kg.search("entity:Lumen", limit=50).hits} == {"OTHER", "ORGANIZATION"}
    assert len(kg.search("entity:a").hits) == 10  # the seed's cap by default
    assert len(kg.search("entity:a", limit=3).hits) == 3
    counts = sql(built_warehouse, "SELECT entity_id, mention_count, document_count FROM kg.entities WHERE valid_until IS NULL")
    counts = {r["entity_id"]: r for r in counts.iter_rows(named=True)}
    frame = kg.search("entity:a", limit=25).to_frame()
    assert frame.height == 25 and frame["score"].is_sorted(descending=True)
    for hit in kg.search("entity:a", limit=25).hits:
        assert (hit.mention_count, hit.document_count) == (counts[hit.entity_id]["mention_count"],
                                                           counts[hit.entity_id]["document_count"])


@pytest.mark.parametrize("query, kwargs, message", [
    ("", {}, "empty query"),
    ("entity:", {}, "entity: needs a name"),
    ("attr:", {}, "attr: needs a key"),
    ("attr:=Boston", {}, "attr: needs a key"),
    ("entity:Sarah", {"as_of": "last tuesday"}, "not an ISO date"),
    ("entity:Sarah", {"limit": 0}, "limit must be at least 1"),
])
def test_bad_queries_say_what_is_wrong(built_warehouse, query, kwargs, message):
    with pytest.raises(ValueError, match=message):
        KnowledgeGraph(built_warehouse).search(query, **kwargs)


def test_stored_lookup_answers_like_the_in_memory_one_and_goes_stale_safely(mutable):
    queries = ["entity:QDL", "entity:sarah", "entity:Northwnd Robotics", "attr:employer=QDL", "Zoe Muller"]
    before = [KnowledgeGraph(mutable).search(q, limit=20).hits for q in queries]
    rows = refresh_entity_lookup(mutable)
    surfaces = entity_names(mutable)
    assert rows == surfaces.unique().height
    with duckdb.connect(str(mutable), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM kg.entity_lookup").fetchall()[0][0] == rows
    assert [KnowledgeGraph(mutable).search(q, limit=20).hits for q in queries] == before
    add_entities(mutable, ["Zyxwv Freshly Added"])  # the stored lookup no longer describes the entities
    assert KnowledgeGraph(mutable).search("entity:Zyxwv").hits[0].name == "Zyxwv Freshly Added"

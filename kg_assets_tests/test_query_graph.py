"""Entity profiles, neighbourhoods, context blocks, export and pictures over the built sample warehouse."""

import csv
import json
import xml.etree.ElementTree as ET

import bpe_openai
import networkx as nx
import polars as pl
import pytest
from PIL import Image

from kg_assets.query import EntityNotFound, KnowledgeGraph, WarehouseNotBuilt
from kg_assets.query.models import GraphEdge, GraphNode, Subgraph
from kg_assets.query.picture import drawing, render_core, render_subgraph
from kg_assets.storage.warehouse import Warehouse
from kg_assets_tests.test_query_search import sql

NEO4J_TYPES = {"int", "long", "float", "double", "boolean", "byte", "short", "char", "string", "point", "date",
               "localtime", "time", "localdatetime", "datetime", "duration"}


def entity_id(db, name: str, entity_type: str) -> str:
    return sql(db, "SELECT entity_id FROM kg.entities WHERE name = $n AND entity_type = $t AND valid_until IS NULL",
               n=name, t=entity_type)["entity_id"][0]


# ---- profiles ------------------------------------------------------------------------------------

def test_profile_shows_aliases_with_their_linking_evidence(built_warehouse):
    qdl = entity_id(built_warehouse, "Quantum Dynamics Lab", "ORGANIZATION")
    profile = KnowledgeGraph(built_warehouse).profile("QDL")  # an alias several entities carry: the best known wins
    assert profile.entity_id == qdl and profile.name == "Quantum Dynamics Lab"
    others = sql(built_warehouse, "SELECT entity_id FROM kg.entities WHERE name = 'QDL' AND valid_until IS NULL")
    assert {a.split(", ")[-1].rstrip(")") for a in profile.also_named} == set(others["entity_id"])
    redirects = sql(built_warehouse, "SELECT from_id, method, score, evidence FROM kg.entity_aliases WHERE to_id = $id", id=qdl)
    by_id = {a.from_id: a for a in profile.aliases}
    assert set(redirects["from_id"]) <= set(by_id)
    for row in redirects.iter_rows(named=True):
        alias = by_id[row["from_id"]]
        assert (alias.method, alias.score, alias.evidence) == (row["method"], row["score"], row["evidence"])
    assert by_id[qdl].method is None and by_id[qdl].alias == "Quantum Dynamics Lab"
    assert "QDL" in {a.alias for a in profile.aliases if a.method == "acronym"}
    stored = sql(built_warehouse, "SELECT * FROM kg.entities WHERE entity_id = $id", id=qdl).row(0, named=True)
    assert {a.alias for a in profile.aliases} == set(stored["aliases"])
    assert (profile.first_seen, profile.last_seen, profile.mention_count) == (
        stored["first_seen"], stored["last_seen"], stored["mention_count"])


def test_profile_attributes_history_relations_and_sources(built_warehouse):
    webb = entity_id(built_warehouse, "Marcus Webb", "PERSON")
    kg = KnowledgeGraph(built_warehouse)
    profile = kg.profile(webb, max_relations=3, max_sources=2)
    employers = [(h.value, h.valid_from.date().isoformat()) for h in profile.attribute_history if h.key == "employer"]
    assert employers == [("Northwind Robotics", "2024-11-05"), ("Quantum Dynamics Lab", "2025-06-18")]
    assert profile.attributes["employer"] == "Quantum Dynamics Lab"
    assert kg.profile(webb, as_of="2025-05-10").attributes["employer"] == "Northwind Robotics"
    edges = sql(built_warehouse, """SELECT count(*) FILTER (WHERE source_id = $id) AS out_, count(*) FILTER (WHERE target_id = $id) AS in_
                                    FROM kg.graph_edges WHERE valid_until IS NULL""", id=webb).row(0)
    assert profile.relations_total == {"out": edges[0], "in": edges[1]}
    for direction in ("out", "in"):
        listed = [r for r in profile.relations if r.direction == direction]
        assert len(listed) == min(3, profile.relations_total[direction])
        assert [r.weight for r in listed] == sorted((r.weight for r in listed), reverse=True)
    documents = sql(built_warehouse, """SELECT count(DISTINCT c.document_id) AS n FROM kg.entities e, unnest(e.source_chunk_ids) u(chunk_id)
                                        JOIN kg.chunks c ON c.chunk_id = u.chunk_id WHERE e.entity_id = $id AND e.valid_until IS NULL""",
                    id=webb)["n"][0]
    assert profile.documents_total == documents and len(profile.sources) == 2
    assert all("Webb" in s.snippet for s in profile.sources)
    assert profile.sources[0].document_time >= profile.sources[1].document_time


def test_the_sample_graph_tells_the_person_jordan_from_the_country_and_says_what_he_maintains(built_warehouse):
    # issue 20 on the sample: "Jordan prefers Rust" is Jordan Reyes, "Amman, Jordan" the country; he maintains
    # "the project at QDL", not QDL; "Qubitline 1.4" is one technology, not a place for "contribute to Qubitline"
    kg = KnowledgeGraph(built_warehouse)
    reyes = kg.profile(entity_id(built_warehouse, "Jordan Reyes", "PERSON"), max_relations=50)
    assert "Jordan" in {a.alias for a in reyes.aliases}
    assert not [r for r in reyes.relations if r.other_name == "Quantum Dynamics Lab" and r.relation_type == "MAINTAINS"]
    country = kg.profile(entity_id(built_warehouse, "Jordan", "LOCATION"))
    assert "notes/jordan_amman_trip.txt" in {s.document_id for s in country.sources}
    assert sql(built_warehouse, "SELECT entity_type FROM kg.entities WHERE name = 'Qubitline' AND valid_until IS NULL"
               )["entity_type"].to_list() == ["TECHNOLOGY"]


def test_profile_follows_merged_ids_and_refuses_unknown_names(built_warehouse):
    redirect = sql(built_warehouse, "SELECT from_id, to_id FROM kg.entity_aliases ORDER BY from_id LIMIT 1").row(0)
    kg = KnowledgeGraph(built_warehouse)
    assert kg.profile(redirect[0]).entity_id == redirect[1]
    with pytest.raises(EntityNotFound, match="closest: Sarah Chen"):
        kg.profile("Sarha Chen")
    with pytest.raises(WarehouseNotBuilt, match="run `kg run` first"):
        KnowledgeGraph(built_warehouse.parent / "missing.duckdb").search("entity:x")


def test_neighbourhood_hops_are_real_paths_and_bounded(built_warehouse):
    chen = entity_id(built_warehouse, "Sarah Chen", "PERSON")
    edges = sql(built_warehouse, "SELECT source_id, target_id FROM kg.graph_edges WHERE valid_until IS NULL")
    adjacent: dict[str, set[str]] = {}
    for s, t in edges.iter_rows():
        adjacent.setdefault(s, set()).add(t)
        adjacent.setdefault(t, set()).add(s)
    kg = KnowledgeGraph(built_warehouse)
    one = kg.neighbourhood(chen, hops=1, max_nodes=500)
    assert {n.node_id for n in one.nodes if n.hop == 1} == adjacent[chen]
    two = kg.neighbourhood(chen, hops=2, max_nodes=60)
    hop = {n.node_id: n.hop for n in two.nodes}
    assert len(hop) == 60 and hop[chen] == 0
    for node_id, distance in hop.items():
        if distance:
            assert any(hop.get(other) == distance - 1 for other in adjacent[node_id])
    assert all(e.source_id in hop and e.target_id in hop for e in two.edges)
    assert kg.profile(chen, hops=1).neighbourhood == kg.neighbourhood(chen, hops=1)


# ---- context ---------------------------------------------------------------------------------------

TEXT = ("Dr. Sarah Chen met Marcus Webb of Northwind Robotics Inc. in Boston. Sarah Chen later said the QDL "
        "team would keep using DuckDB, and Sarah Chen thanked the boston office. ")


def tokens(text: str) -> int:
    return len(bpe_openai.get_encoding("o200k_base").encode_ordinary(text))


def test_context_finds_the_named_entities_by_the_pipelines_keys(built_warehouse):
    block = KnowledgeGraph(built_warehouse).context(TEXT, max_tokens=2000)
    found = {(e.name, e.entity_type): e for e in block.entities}
    assert ("Sarah Chen", "PERSON") in found and found[("Sarah Chen", "PERSON")].mentions_in_text == 3
    assert ("Northwind Robotics", "ORGANIZATION") in found  # "Northwind Robotics Inc." folds its suffix
    assert ("Quantum Dynamics Lab", "ORGANIZATION") in found  # "QDL" is its alias, the best known reading
    assert ("DuckDB", "TECHNOLOGY") in found
    assert found[("Boston", "LOCATION")].mentions_in_text == 1  # "the boston office" is not written as a name
    assert block.entities[0].name == "Sarah Chen"  # named most often
    lines = block.text.splitlines()
    assert "- Sarah Chen (PERSON): employer = Quantum Dynamics Lab" in lines
    documents = set(sql(built_warehouse, "SELECT document_id FROM kg.documents")["document_id"])
    sources = [line for line in lines if line.startswith("- [")]
    assert sources and all(line[3:line.index("]")] in documents for line in sources)
    names = {e.name for e in block.entities}
    for line in lines:
        if " -[" in line:
            assert line[2:line.index(" -[")] in names and line[line.index("]-> ") + 4:line.rindex(" (")] in names


@pytest.mark.parametrize("budget", [40, 80, 150, 400, 1500])
def test_context_stays_within_its_token_budget(built_warehouse, budget):
    block = KnowledgeGraph(built_warehouse).context(TEXT * 5, max_tokens=budget)
    assert block.tokens == tokens(block.text) <= budget
    assert block.text.startswith("# Knowledge graph context")
    if budget >= 150:
        assert block.included_entities >= 3
    if budget >= 400:  # at 150 the snippets left after entities and relations may not fit
        assert block.included_sources >= 1


def test_context_as_of_and_empty_text(built_warehouse):
    kg = KnowledgeGraph(built_warehouse)
    then = kg.context("Marcus Webb", as_of="2025-03-01", max_tokens=300)
    assert "- Marcus Webb (PERSON): employer = Northwind Robotics; role = senior engineer" in then.text.splitlines()
    assert then.text.splitlines()[0] == (f"# Knowledge graph context as of 2025-03-01T00:00:00+00:00: 1 entity, 0 relations, "
                                         f"{then.included_sources} sources") and then.included_sources > 1
    nothing = kg.context("nothing here names anything in lowercase", max_tokens=100)
    assert nothing.entities == [] and nothing.included_entities == 0 and nothing.tokens <= 100
    with pytest.raises(ValueError, match="max_tokens"):
        kg.context(TEXT, max_tokens=5)


# ---- export ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def current_graph(built_warehouse):
    nodes = sql(built_warehouse, "SELECT * FROM kg.graph_nodes WHERE valid_until IS NULL")
    edges = sql(built_warehouse, "SELECT * FROM kg.graph_edges WHERE valid_until IS NULL")
    employer = sql(built_warehouse, """SELECT entity_id, value FROM kg.entity_attributes
                                       WHERE valid_until IS NULL AND attr_key = 'employer'""")
    return nodes, edges, dict(employer.iter_rows())


def test_graphml_export_reads_back_with_networkx(built_warehouse, tmp_path, current_graph):
    nodes, edges, employer = current_graph
    KnowledgeGraph(built_warehouse).export("graphml", tmp_path / "g.graphml")
    graph = nx.read_graphml(tmp_path / "g.graphml")
    entities = {n for n, kind in graph.nodes(data="kind") if kind == "Entity"}
    relations = [e for e in graph.edges(data="relation_type") if e[2] != "EXTRACTED_FROM"]
    assert entities == set(nodes["node_id"]) and len(relations) == edges.height
    for row in nodes.head(20).iter_rows(named=True):
        data = graph.nodes[row["node_id"]]
        assert (data["label"], data["entity_type"], data["mention_count"]) == (row["label"], row["entity_type"], row["mention_count"])
        assert json.loads(data["source_chunk_ids"]) == row["source_chunk_ids"]
    for entity, value in employer.items():
        assert graph.nodes[entity]["attr_employer"] == value
    edge = edges.row(0, named=True)
    data = graph.edges[edge["source_id"], edge["target_id"], edge["edge_id"]]
    assert (data["relation_type"], data["weight"]) == (edge["relation_type"], edge["weight"])
    assert json.loads(data["document_ids"]) == edge["document_ids"]


def test_graphml_escapes_markup_and_drops_characters_xml_cannot_hold(mutable, tmp_path):
    hostile = 'A & B <Labs> "Quoted" \x01 \u00e9'
    nodes = sql(mutable, "SELECT * EXCLUDE (valid_from, valid_until) FROM kg.graph_nodes WHERE valid_until IS NULL")
    first = nodes["node_id"][0]
    nodes = nodes.with_columns(pl.when(pl.col("node_id") == first).then(pl.lit(hostile)).otherwise("label").alias("label"),
                               pl.when(pl.col("node_id") == first).then(pl.lit(["<x>", "&y"])).otherwise("aliases").alias("aliases"))
    Warehouse(mutable).replace_current({"graph_nodes": (["node_id"], nodes)})
    KnowledgeGraph(mutable).export("graphml", tmp_path / "g.graphml")
    node = nx.read_graphml(tmp_path / "g.graphml").nodes[first]
    assert node["label"] == hostile.replace("\x01", "") and json.loads(node["aliases"]) == ["<x>", "&y"]


def test_json_export_reads_back_as_node_link(built_warehouse, tmp_path, current_graph):
    nodes, edges, employer = current_graph
    KnowledgeGraph(built_warehouse).export("json", tmp_path / "g.json")
    graph = nx.node_link_graph(json.loads((tmp_path / "g.json").read_text()), edges="edges")
    assert graph.is_directed() and graph.is_multigraph()
    entities = {n for n, kind in graph.nodes(data="kind") if kind == "Entity"}
    relations = [e for e in graph.edges(data="relation_type") if e[2] != "EXTRACTED_FROM"]
    assert entities == set(nodes["node_id"]) and len(relations) == edges.height
    for entity, value in employer.items():
        assert graph.nodes[entity]["attributes"]["employer"] == value
    row = nodes.row(0, named=True)
    assert graph.nodes[row["node_id"]]["aliases"] == row["aliases"]
    edge = edges.row(0, named=True)
    assert graph.edges[edge["source_id"], edge["target_id"], edge["edge_id"]]["source_chunk_ids"] == edge["source_chunk_ids"]


def test_neo4j_csv_follows_the_import_tool_header_conventions(built_warehouse, tmp_path, current_graph):
    nodes, edges, employer = current_graph
    KnowledgeGraph(built_warehouse).export("neo4j", tmp_path / "neo4j")
    with open(tmp_path / "neo4j" / "nodes.csv", newline="") as f:
        node_header = next(csv.reader(f))
    with open(tmp_path / "neo4j" / "relationships.csv", newline="") as f:
        edge_header = next(csv.reader(f))
    assert node_header[0].endswith(":ID(Entity)") and ":LABEL" in node_header
    assert edge_header[:3] == [":START_ID(Entity)", ":END_ID(Entity)", ":TYPE"]
    for field in node_header + edge_header:
        name, _, kind = field.partition(":")
        if kind and name:  # a typed property: name:type or name:type[]
            assert kind.removesuffix("[]") in NEO4J_TYPES or kind.startswith("ID("), field
    node_rows = pl.read_csv(tmp_path / "neo4j" / "nodes.csv", infer_schema=False)
    edge_rows = pl.read_csv(tmp_path / "neo4j" / "relationships.csv", infer_schema=False)
    assert node_rows.height == nodes.height and edge_rows.height == edges.height
    ids = set(node_rows["entity_id:ID(Entity)"])
    assert set(edge_rows[":START_ID(Entity)"]) <= ids and set(edge_rows[":END_ID(Entity)"]) <= ids
    labels = dict(zip(node_rows["entity_id:ID(Entity)"], node_rows[":LABEL"]))
    types = dict(nodes.select("node_id", "entity_type").iter_rows())
    assert all(labels[i] == f"Entity;{types[i]}" for i in ids)
    by_id = {r["entity_id:ID(Entity)"]: r for r in node_rows.iter_rows(named=True)}
    for row in nodes.iter_rows(named=True):
        assert by_id[row["node_id"]]["aliases:string[]"].split(";") == row["aliases"]
    for entity, value in employer.items():
        assert by_id[entity]["attr_employer"] == value


def test_parquet_export_reads_back_with_polars(built_warehouse, tmp_path, current_graph):
    nodes, edges, employer = current_graph
    result = KnowledgeGraph(built_warehouse).export("parquet", tmp_path / "pq")
    assert (result.nodes, result.edges) == (nodes.height, edges.height)
    node_rows = pl.read_parquet(tmp_path / "pq" / "nodes.parquet")
    edge_rows = pl.read_parquet(tmp_path / "pq" / "edges.parquet")
    attributes = pl.read_parquet(tmp_path / "pq" / "attributes.parquet")
    assert set(node_rows["node_id"]) == set(nodes["node_id"]) and set(edge_rows["edge_id"]) == set(edges["edge_id"])
    assert node_rows.schema["source_chunk_ids"] == pl.List(pl.String) and edge_rows.schema["weight"] == pl.Int64
    current = sql(built_warehouse, "SELECT count(*) AS n FROM kg.entity_attributes WHERE valid_until IS NULL")["n"][0]
    assert attributes.height == current
    held = attributes.filter(pl.col("attr_key") == "employer").select("entity_id", "value")
    assert dict(held.iter_rows()) == employer


@pytest.fixture(scope="module")
def provenance(built_warehouse):
    """(entity, chunk) pairs of the current nodes, as stored, and the view that exposes them."""
    pairs = sql(built_warehouse, """SELECT DISTINCT n.node_id, u.chunk_id FROM kg.graph_nodes n,
                                    unnest(n.source_chunk_ids) AS u(chunk_id) WHERE n.valid_until IS NULL""")
    return set(pairs.iter_rows())


def test_the_extracted_from_view_has_one_edge_per_node_and_source_chunk(built_warehouse, provenance):
    view = sql(built_warehouse, "SELECT * FROM kg.extracted_from")
    assert set(view.select("source_id", "target_id").iter_rows()) == provenance and view.height == len(provenance)
    assert set(view["relation_type"]) == {"EXTRACTED_FROM"} and set(view["confidence"]) == {1.0}
    assert view["document_id"].null_count() == 0  # every edge reaches a stored chunk


@pytest.mark.parametrize("fmt", ["graphml", "json"])
def test_graph_exports_carry_extracted_from_edges_to_chunk_nodes(built_warehouse, tmp_path, provenance, fmt):
    out = tmp_path / f"g.{fmt}"
    result = KnowledgeGraph(built_warehouse).export(fmt, out)
    graph = (nx.read_graphml(out) if fmt == "graphml"
             else nx.node_link_graph(json.loads(out.read_text()), edges="edges"))
    edges = [(s, t, d) for s, t, d in graph.edges(data=True) if d["relation_type"] == "EXTRACTED_FROM"]
    assert {(s, t) for s, t, _ in edges} == provenance and result.provenance_edges == len(provenance)
    assert all(d["confidence"] == 1.0 for _, _, d in edges)
    chunk_ids = {t for _, t in provenance}
    assert {n for n, kind in graph.nodes(data="kind") if kind == "Chunk"} == chunk_ids == set(
        sql(built_warehouse, "SELECT chunk_id FROM kg.chunks WHERE chunk_id IN (SELECT unnest($ids))",
            ids=sorted(chunk_ids))["chunk_id"])
    some = sorted(chunk_ids)[0]
    stored = sql(built_warehouse, "SELECT document_id, chunk_index FROM kg.chunks WHERE chunk_id = $id", id=some).row(0)
    assert (graph.nodes[some]["document_id"], graph.nodes[some]["chunk_index"]) == stored


def test_neo4j_and_parquet_exports_carry_extracted_from_edges(built_warehouse, tmp_path, provenance):
    KnowledgeGraph(built_warehouse).export("neo4j", tmp_path / "neo4j")
    rows = pl.read_csv(tmp_path / "neo4j" / "extracted_from.csv", infer_schema=False)
    assert rows.columns == [":START_ID(Entity)", ":END_ID(Chunk)", ":TYPE", "confidence:double"]
    assert set(rows.select(":START_ID(Entity)", ":END_ID(Chunk)").iter_rows()) == provenance
    chunks = pl.read_csv(tmp_path / "neo4j" / "chunks.csv", infer_schema=False)
    assert set(rows[":END_ID(Chunk)"]) == set(chunks["chunk_id:ID(Chunk)"]) and set(chunks[":LABEL"]) == {"Chunk"}
    KnowledgeGraph(built_warehouse).export("parquet", tmp_path / "pq")
    edges = pl.read_parquet(tmp_path / "pq" / "extracted_from.parquet")
    assert set(edges.select("source_id", "target_id").iter_rows()) == provenance
    assert edges["confidence"].to_list() == [1.0] * edges.height


def test_export_as_of_rebuilds_the_graph_from_the_documents_dated_by_then(built_warehouse, tmp_path):
    cut = "2025-03-01"
    expected = sql(built_warehouse, f"""
        SELECT DISTINCT coalesce(a.to_id, m.entity_id) AS entity_id FROM kg.entity_mentions m
        JOIN kg.documents d ON d.document_id = m.document_id AND d.valid_until IS NULL
        LEFT JOIN kg.entity_aliases a ON a.from_id = m.entity_id
        WHERE coalesce(d.document_date, d.ingested_at) <= TIMESTAMPTZ '{cut} 00:00:00+00'""")
    dated = sql(built_warehouse, f"""SELECT document_id FROM kg.documents WHERE valid_until IS NULL
                                     AND coalesce(document_date, ingested_at) <= TIMESTAMPTZ '{cut} 00:00:00+00'""")
    result = KnowledgeGraph(built_warehouse).export("parquet", tmp_path / "then", as_of=cut)
    node_rows = pl.read_parquet(tmp_path / "then" / "nodes.parquet")
    edge_rows = pl.read_parquet(tmp_path / "then" / "edges.parquet")
    assert set(node_rows["node_id"]) == set(expected["entity_id"]) and result.nodes < len(sql(
        built_warehouse, "SELECT 1 FROM kg.entities WHERE valid_until IS NULL"))
    assert set(edge_rows["document_ids"].explode()) <= set(dated["document_id"])
    webb = entity_id(built_warehouse, "Marcus Webb", "PERSON")
    held = pl.read_parquet(tmp_path / "then" / "attributes.parquet").filter(
        (pl.col("entity_id") == webb) & (pl.col("attr_key") == "employer"))
    assert held["value"].to_list() == ["Northwind Robotics"]
    with pytest.raises(ValueError, match="unknown export format"):
        KnowledgeGraph(built_warehouse).export("gexf", tmp_path / "x")


# ---- pictures ------------------------------------------------------------------------------------------

def test_neighbourhood_picture_labels_nodes_types_and_relations(built_warehouse, tmp_path):
    kg = KnowledgeGraph(built_warehouse)
    chen = entity_id(built_warehouse, "Sarah Chen", "PERSON")
    subgraph = kg.neighbourhood(chen, hops=1, max_nodes=15)
    render_subgraph(subgraph, tmp_path / "chen.svg", title="Sarah Chen")
    texts = {e.text.strip() for e in ET.parse(tmp_path / "chen.svg").iter() if e.text and e.text.strip()}
    assert {n.label for n in subgraph.nodes if len(n.label) <= 24} <= texts
    assert {n.entity_type for n in subgraph.nodes} <= texts  # the legend
    relations = {name for text in texts for name in text.split(", ")}
    assert {e.relation_type for e in subgraph.edges} <= relations
    render_subgraph(subgraph, tmp_path / "chen.png")
    with Image.open(tmp_path / "chen.png") as image:
        assert image.format == "PNG" and image.width > 500 and len(image.getcolors(1 << 20)) > 5
    with pytest.raises(ValueError, match=".svg or .png"):
        render_subgraph(subgraph, tmp_path / "chen.pdf")


def test_core_picture_draws_the_most_connected_entities(built_warehouse, tmp_path):
    top = sql(built_warehouse, """SELECT label FROM kg.graph_nodes WHERE valid_until IS NULL
                                  ORDER BY degree DESC, mention_count DESC, node_id LIMIT 5""")["label"]
    out = render_core(built_warehouse, tmp_path / "core.svg", top=12)
    texts = {e.text.strip() for e in ET.parse(out).iter() if e.text and e.text.strip()}
    assert set(top) <= texts and "Most connected 12 entities" in texts


def test_a_picture_of_an_unchanged_subgraph_is_not_drawn_again(built_warehouse, tmp_path):
    out = render_core(built_warehouse, tmp_path / "core.svg", top=12)
    out.write_text(out.read_text() + "<!-- kept -->")  # a mark a redraw would lose
    assert render_core(built_warehouse, out, top=12).read_text().endswith("<!-- kept -->")
    render_core(built_warehouse, out, top=11)  # another subgraph: drawn anew
    assert not out.read_text().endswith("<!-- kept -->") and "Most connected 11 entities" in out.read_text()


def _core(hub_degree: int, weight: int, label: str = "Ana Ribeiro") -> Subgraph:
    nodes = [GraphNode(node_id="a", label=label, entity_type="PERSON", degree=hub_degree, mention_count=9),
             GraphNode(node_id="b", label="Qubitline", entity_type="TECHNOLOGY", degree=400, mention_count=9),
             GraphNode(node_id="c", label="Lisbon", entity_type="LOCATION", degree=30, mention_count=9)]
    edges = [GraphEdge(source_id="a", target_id="b", relation_type="USES", weight=weight),
             GraphEdge(source_id="b", target_id="a", relation_type="RELATED_TO", weight=50),
             GraphEdge(source_id="a", target_id="c", relation_type="LIVES_IN", weight=40)]
    return Subgraph(nodes=nodes, edges=edges)


def test_a_picture_is_drawn_again_only_when_it_would_look_different(tmp_path):
    """The core picture of a large graph: one more edge or supporting mention draws the same picture (sizes and
    widths come in steps), so a consolidation after a few changed documents does not spend seconds redrawing it."""
    assert drawing(_core(1000, 900)) == drawing(_core(1001, 901))
    assert drawing(_core(1000, 900)) != drawing(_core(250, 900)), "a node a quarter the size"
    assert drawing(_core(1000, 900)) != drawing(_core(1000, 90)), "an edge a tenth as strong"
    assert drawing(_core(1000, 900)) != drawing(_core(1000, 900, label="Ana R.")), "another label"
    shown = drawing(_core(1000, 900))
    assert [e[:2] + e[3:] for e in shown["edges"]] == [["a", "b", "USES, RELATED_TO"], ["a", "c", "LIVES_IN"]]
    out = render_subgraph(_core(1000, 900), tmp_path / "core.svg")
    out.write_text(out.read_text() + "<!-- kept -->")
    assert render_subgraph(_core(1001, 901), out).read_text().endswith("<!-- kept -->")
    assert not render_subgraph(_core(250, 900), out).read_text().endswith("<!-- kept -->")

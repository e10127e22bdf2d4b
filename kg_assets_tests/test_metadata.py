"""What the UI shows: per-partition numbers, table row counts, both graph tables, previews, staleness."""

import dagster as dg
import pytest
from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._time import get_current_datetime
from pydantic_settings import SettingsError

from kg_assets.definitions import build_definitions
from kg_assets.defs.planner import today_utc
from kg_assets.defs.tables import column_descriptions
from kg_assets.extractors.factory import build_extractor
from kg_assets.settings import ExtractorSettings, Settings
from kg_assets_tests.conftest import project_settings

EARLIER = "2026-01-15"
STUB = "kg_assets.extractors.stub:InstantStubExtractor"


def _events(result):
    return {(m.asset_key.to_user_string(), m.partition): m.materialization.metadata
            for m in result.get_asset_materialization_events()}


def test_each_day_carries_its_own_numbers_and_row_counts_are_the_tables(built):
    project, today = built, today_utc()
    with project.warehouse.transaction() as con:  # these documents arrived on an earlier day
        con.execute("UPDATE kg.documents SET arrival_day = $d WHERE document_id LIKE 'notes/%'", {"d": EARLIER})
    edited = project.inbox / "notes" / "year_end_retro.md"
    edited.write_text(edited.read_text() + "\nHortensia Vale joined Lumen Analytics.\n")
    (project.inbox / "web" / "fresh.md").write_text("# Fresh\n\nIgnatius Plumtree joined the Zebrafish Institute.\n")
    plan = project.plan()
    assert plan.days == (EARLIER, today) and plan.documents == ("notes/year_end_retro.md", "web/fresh.md")
    result = project.run_plan(plan)
    assert result.success
    events = _events(result)
    for day in (EARLIER, today):
        assert events[("documents", day)]["documents_read"].value == 1
        assert events[("chunks", day)]["documents"].value == 1
        # what the key is, on the Partitions tab (it shows a selected key's metadata, not the asset's description)
        assert events[("chunks", day)]["partition_key"].value.startswith(f"{day}: an arrival day, the UTC day")
    retro_chunks = project.sql("SELECT count(*) AS n FROM kg.chunks WHERE document_id = 'notes/year_end_retro.md'")["n"][0]
    fresh_chunks = project.sql("SELECT count(*) AS n FROM kg.chunks WHERE document_id = 'web/fresh.md'")["n"][0]
    earlier, fresh = events[("entity_mentions", EARLIER)], events[("entity_mentions", today)]
    # the edit appended text: the chunks before it are the same chunks, reused, and only the last is new
    assert earlier["chunks_extracted"].value + earlier["chunks_reused"].value == retro_chunks
    assert 1 <= earlier["chunks_extracted"].value < retro_chunks
    assert (fresh["chunks_extracted"].value, fresh["chunks_reused"].value) == (fresh_chunks, 0)
    fresh_mentions = project.sql("SELECT count(*) AS n FROM kg.entity_mentions WHERE document_id = 'web/fresh.md'")["n"][0]
    assert events[("entity_mentions", today)]["rows_written"].value == fresh_mentions
    for asset, table in (("documents", "documents"), ("chunks", "chunks"), ("entity_mentions", "entity_mentions"),
                         ("graph_nodes", "graph_nodes"), ("graph_edges", "graph_edges"), ("linked_entities", "entities")):
        for (key, _), metadata in events.items():
            if key == asset:
                assert metadata["dagster/row_count"].value == project.warehouse.row_count(table), asset
    assert project.warehouse.row_count("graph_nodes") != project.warehouse.row_count("graph_edges")
    preview = events[("graph_edges", None)]["preview"].value
    assert "Top entities by degree" in preview and "RELATED_TO" in preview and "Sample edges" in preview
    # ranked and counted in SQL: the heaviest current edge is the first sample, every current type is counted
    heaviest = project.sql("""SELECT s.label AS source, e.relation_type FROM kg.graph_edges e
                              JOIN kg.graph_nodes s ON s.node_id = e.source_id AND s.valid_until IS NULL
                              WHERE e.valid_until IS NULL ORDER BY e.weight DESC, e.edge_id LIMIT 1""")
    first_sample = preview.split("### Sample edges and their evidence", 1)[1].strip().splitlines()[2]
    assert first_sample.startswith(f"| {heaviest['source'][0]} | {heaviest['relation_type'][0]} |"), first_sample
    types = project.sql("SELECT count(DISTINCT relation_type) AS n FROM kg.graph_edges WHERE valid_until IS NULL")["n"][0]
    assert f"### Relation types ({types:,})" in preview
    assert "| document_id | source_type |" in events[("documents", today)]["sample"].value
    # The most connected core, drawn and embedded: an SVG whose labels are the top entities.
    import base64
    import xml.etree.ElementTree as ElementTree

    nodes = events[("graph_nodes", None)]
    picture = nodes["core_picture"].value
    assert picture.startswith("![The 25 most connected entities](data:image/svg+xml;base64,")
    svg = base64.b64decode(picture.split("base64,", 1)[1].rstrip(")"))
    assert svg == open(nodes["core_picture_path"].value, "rb").read()
    top = project.sql("SELECT label FROM kg.graph_nodes WHERE valid_until IS NULL ORDER BY degree DESC, label LIMIT 1")
    texts = "".join(ElementTree.fromstring(svg).itertext())
    assert top["label"][0][:20] in texts
    # ... and a small drawing of the core the UI shows in place: Markdown under the 1,000 characters beyond which
    # dagster-webserver hides it behind [Show Markdown]
    inline = nodes["graph_picture"].value
    assert len(inline) < 1000 and inline.startswith("![") and "most connected](data:image/svg+xml;base64," in inline
    small_svg = ElementTree.fromstring(base64.b64decode(inline.split("base64,", 1)[1].rstrip(")")))
    assert small_svg.get("width") and small_svg.get("height")  # without a size of its own the UI draws it 0x0 px
    small = "".join(small_svg.itertext())
    assert top["label"][0][:10] in small


def test_column_descriptions_come_from_the_schema_contracts():
    defs = build_definitions(Settings())
    spec = defs.resolve_assets_def("documents").specs_by_key[dg.AssetKey("documents")]
    columns = {c.name: c for c in spec.metadata["dagster/column_schema"].columns}
    assert "first saw the file" in columns["arrival_day"].description
    edges = defs.resolve_assets_def("graph_edges").specs_by_key[dg.AssetKey("graph_edges")]
    assert {c.name for c in edges.metadata["dagster/column_schema"].columns} >= {"edge_id", "weight", "document_ids"}


def test_every_column_of_every_table_is_described_with_the_type_duckdb_gives_it(tmp_path):
    """The schema tab of every table asset: each column of core/schemas.py described, its type the one the
    DDL creates, spelled as DuckDB reports it (TIMESTAMP WITH TIME ZONE, VARCHAR[]), not a Polars repr."""
    import duckdb

    from kg_assets.core import schemas
    from kg_assets.storage.ddl import create_schema

    con = duckdb.connect(str(tmp_path / "types.duckdb"))
    create_schema(con)
    duck = {(t, c): ty for t, c, ty in con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'kg'").fetchall()}
    defs = build_definitions(Settings(), marts=False)
    shown = {}
    for key in defs.resolve_asset_graph().get_all_asset_keys():
        metadata = defs.resolve_asset_graph().get(key).metadata
        table = metadata["dagster/table_name"].split(".", 1)[1]
        shown[table] = {c.name: c for c in metadata["dagster/column_schema"].columns}
    # every table is an asset but those only commands write (`kg facts remember|forget`) and the consolidation's
    # bookkeeping (the digests of what its rows were built from)
    assert set(schemas.TABLES) - set(shown) == {"manual_facts", "forgotten_users", "consolidation_digests"}
    described = {table: shown.get(table) or {n: dg.TableColumn(n, description=column_descriptions(table).get(n))
                                             for n in contract} for table, contract in schemas.TABLES.items()}
    undescribed = [f"{table}.{name}" for table, contract in schemas.TABLES.items() for name in contract
                   if not (described[table][name].description or "").strip()]
    assert undescribed == []
    assert {(t, n): c.type for t, columns in shown.items() for n, c in columns.items()} == {
        (t, n): ty for (t, n), ty in duck.items() if t in shown}


def test_every_asset_has_an_owner_a_code_version_and_metadata_the_ui_can_show():
    from dagster._core.definitions.metadata import normalize_metadata

    from kg_assets.defs.tables import OWNERS

    graph = build_definitions(Settings()).resolve_asset_graph()
    keys = graph.get_all_asset_keys()
    assert any(k.path[0] == "marts" for k in keys)
    assert {k.to_user_string(): list(graph.get(k).owners) for k in keys} == {k.to_user_string(): list(OWNERS) for k in keys}
    assert [k.to_user_string() for k in keys if not graph.get(k).code_version] == []
    # what the UI gets of each asset's metadata (AssetNodeSnap normalizes it so), but the two entries of
    # dagster-dbt's own bookkeeping the UI hides (HIDDEN_METADATA_ENTRY_LABELS of dagster-webserver)
    hidden = {"dagster_dbt/manifest", "dagster_dbt/dagster_dbt_translator"}
    unreadable = {(k.to_user_string(), label): value.value for k in keys
                  for label, value in normalize_metadata(graph.get(k).metadata, allow_invalid=True).items()
                  if label not in hidden and "(unserializable)" in str(value.value)}
    assert unreadable == {}


def test_partitions_extracted_by_another_extractor_show_as_stale(built):
    project = built
    assert project.run_all().success
    day = project.warehouse.arrival_days()[0]  # the sample's one day, when the warehouse was built
    stub = build_definitions(project_settings(project.inbox, project.warehouse.path, engine=STUB))
    for defs, expected in ((project.defs, StaleStatus.FRESH), (stub, StaleStatus.STALE)):
        # what the UI asks: Dagster's own stale-status resolver over these definitions
        graph = defs.resolve_asset_graph()
        view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                              instance=project.instance, asset_graph=graph)
        resolver = CachingStaleStatusResolver(project.instance, graph, loading_context=view)
        causes = resolver.get_stale_causes(dg.AssetKey("entity_mentions"), day)
        assert resolver.get_status(dg.AssetKey("entity_mentions"), day) == expected, causes


def test_an_in_process_extractor_plugin_runs_through_the_pipeline(project):
    project.defs = build_definitions(project_settings(project.inbox, project.warehouse.path, engine=STUB))
    assert project.run_all().success
    per_chunk = project.sql("SELECT DISTINCT extractor, mention_count, relation_count FROM kg.chunk_extractions")
    assert per_chunk.rows() == [("instant-stub", 3, 2)]
    mat = project.instance.get_latest_materialization_event(dg.AssetKey("entity_mentions")).asset_materialization
    assert "in-process extractor instant-stub" in mat.metadata["engine"].value


@pytest.mark.parametrize("value, expected", [
    ("no_such_module:Thing", "cannot import 'no_such_module'"),
    ("kg_assets.extractors.stub:Nope", "has no 'Nope'"),
    ("kg_assets.extractors.stub:TYPES", "is not a class or factory"),
    ("kg_assets.settings:Settings", "does not implement the extractor interface"),
    ("heuristics", "module:attr"),
])
def test_a_bad_extractor_plugin_is_refused_when_settings_load_naming_the_variable(value, expected):
    with pytest.raises(SettingsError, match="KG_EXTRACTOR") as caught:
        Settings.from_env({"KG_EXTRACTOR": value})
    assert expected in str(caught.value)
    assert build_extractor(ExtractorSettings(engine=STUB)).version == "instant-stub-1"

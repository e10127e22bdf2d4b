"""The dbt marts as Dagster assets: their lineage, their dbt tests as asset checks, and what they answer."""

import json
import shutil
import subprocess
import sys

import dagster as dg
import pytest
from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._time import get_current_datetime

from kg_assets.defs.dbt_manifest import DBT_DIR, MANIFEST_PATH, model_code_versions
from kg_assets_tests.conftest import both_backends

DBT_TARGET = DBT_DIR / "target"
MARTS = ("entity_profile", "relation_type_counts", "attribute_timeline", "document_extraction_health")


def mart_keys(project) -> list[dg.AssetKey]:
    return [k for k in project.defs.resolve_asset_graph().get_all_asset_keys() if k.path[0] == "marts"]


def test_marts_hang_under_the_assets_whose_tables_they_read(project):
    graph = project.defs.resolve_asset_graph()
    parents = {name: {k.to_user_string() for k in graph.get(dg.AssetKey(["marts", name])).parent_keys} for name in MARTS}
    assert {"entity_attributes", "chunks", "marts/stg_current_entities", "marts/stg_current_edges"} <= parents["entity_profile"]
    assert parents["relation_type_counts"] == {"marts/stg_current_edges"}
    assert {"entity_attributes", "marts/stg_current_entities"} == parents["attribute_timeline"]
    assert {"documents", "chunks", "chunk_extractions"} == parents["document_extraction_health"]  # the table it reads
    checked = {k.asset_key.path[-1] for k in graph.asset_check_keys if k.asset_key.path[0] == "marts"}
    assert set(MARTS) <= checked


@pytest.mark.own_dbt_replay
def test_marts_build_their_tests_pass_and_they_answer_the_common_questions(built):
    project = built
    failed = project.sql("SELECT chunk_id, document_id FROM kg.chunk_extractions ORDER BY chunk_id LIMIT 1").row(0)
    with project.warehouse.transaction() as con:  # as a timed-out LLM call leaves it
        con.execute("UPDATE kg.chunk_extractions SET status = 'error', error = 'timeout' WHERE chunk_id = $c", {"c": failed[0]})
    result = project.execute("consolidation", asset_selection=mart_keys(project))
    assert result.success
    assert list(DBT_TARGET.glob(f"kg_dbt_models-{result.run_id[:7]}-*")) == [], "a build that succeeded leaves no folder"
    checks = [c for c in result.get_asset_check_evaluations() if c.asset_key.path[0] == "marts"]
    assert {c.asset_key.path[-1] for c in checks} >= set(MARTS) and all(c.passed for c in checks)
    # each mart's materialization carries its row count (they are views: dagster-dbt's fetch_row_counts skips them)
    built = {m.asset_key.path[-1]: m.materialization.metadata for m in result.get_asset_materialization_events()
             if m.asset_key.path[0] == "marts"}
    assert set(built) == {k.path[-1] for k in mart_keys(project)}
    for view, metadata in built.items():
        assert metadata["dagster/row_count"].value == project.sql(f"SELECT count(*) AS n FROM kg_marts.{view}")["n"][0]
    # every column a view has is documented in the dbt yml (the manifest), with the type DuckDB gives it, so the
    # UI describes it and shows its type
    documented = {(n["name"], c): col.get("data_type") for n in json.loads(MANIFEST_PATH.read_text())["nodes"].values()
                  if n["resource_type"] == "model" for c, col in n["columns"].items()}
    columns = project.sql("SELECT table_name, column_name, data_type FROM information_schema.columns "
                          "WHERE table_schema = 'kg_marts'")
    assert {(view, name): data_type for view, name, data_type in columns.iter_rows()} == documented

    profile = project.sql("SELECT * FROM kg_marts.entity_profile")
    assert profile.height == project.sql("SELECT count(*) AS n FROM kg.entities WHERE valid_until IS NULL")["n"][0]
    degree = project.sql("""SELECT p.entity_id FROM kg_marts.entity_profile p JOIN kg.graph_nodes n
                            ON n.node_id = p.entity_id AND n.valid_until IS NULL WHERE p.degree <> n.degree""")
    assert degree.height == 0
    webb = project.sql("""SELECT map_extract(p.current_attributes, 'employer')[1] AS employer, p.aliases, p.document_ids
                          FROM kg_marts.entity_profile p WHERE p.name = 'Marcus Webb' AND p.entity_type = 'PERSON'""").row(0)
    assert webb[0] == "Quantum Dynamics Lab" and "Marcus Webb" in webb[1] and len(webb[2]) >= 5

    counts = project.sql("SELECT relation_type, edges FROM kg_marts.relation_type_counts")
    edges = project.sql("SELECT relation_type, count(*) AS n FROM kg.graph_edges WHERE valid_until IS NULL GROUP BY 1")
    assert dict(counts.iter_rows()) == dict(edges.iter_rows())

    timeline = project.sql("""SELECT value, version, is_current FROM kg_marts.attribute_timeline
                              WHERE entity_name = 'Marcus Webb' AND entity_type = 'PERSON' AND attr_key = 'employer'
                              ORDER BY version""")
    assert timeline.rows() == [("Northwind Robotics", 1, False), ("Quantum Dynamics Lab", 2, True)]

    health = dict(project.sql("SELECT document_id, health FROM kg_marts.document_extraction_health").iter_rows())
    assert len(health) == 18 and health[failed[1]] == "failed_chunks"
    assert {h for d, h in health.items() if d != failed[1]} == {"ok"}


@pytest.mark.own_dbt_replay
def test_a_broken_timeline_fails_its_dbt_test_as_an_asset_check(built):
    project = built
    with project.warehouse.transaction() as con:
        con.execute("""UPDATE kg.entity_attributes SET valid_until = valid_from - INTERVAL 1 DAY
                       WHERE attribute_id = (SELECT min(attribute_id) FROM kg.entity_attributes WHERE valid_until IS NOT NULL)""")
    result = project.execute("consolidation", asset_selection=mart_keys(project))
    verdicts = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert verdicts["attribute_timeline_versions_are_ordered"] is False
    assert verdicts["unique_attribute_timeline_attribute_id"] is True
    # the failed build keeps its target folder, and the run's log says where it is
    [kept] = DBT_TARGET.glob(f"kg_dbt_models-{result.run_id[:7]}-*")
    assert (kept / "run_results.json").exists()
    assert any(str(kept) in (e.message or "") for e in project.instance.all_logs(result.run_id))
    shutil.rmtree(kept)


def _marts_logs(project, result) -> list[str]:
    return [e.message for e in project.instance.all_logs(result.run_id) if e.message and "dbt" in e.message]


def _view_definitions(project) -> dict[str, str]:
    return dict(project.sql("SELECT view_name, sql FROM duckdb_views() WHERE schema_name = 'kg_marts'").iter_rows())


@both_backends
@pytest.mark.own_dbt_replay
def test_once_dbt_has_built_this_sql_the_marts_are_built_in_process(built):
    """Issue 24: after one `dbt build` of the project's SQL, a marts build creates missing or altered views from
    dbt's compiled SQL, reading back exactly as dbt left them, and runs the data tests in one read with dbt's
    verdicts; a view that would not come out as dbt's brings dbt back."""
    project = built
    first = project.execute("consolidation", asset_selection=mart_keys(project))
    assert first.success
    assert any(m.startswith("dbt marts: dbt build, no earlier dbt build of this SQL") for m in _marts_logs(project, first))
    dbt_views, dbt_verdicts = _view_definitions(project), {c.check_name for c in first.get_asset_check_evaluations()}
    assert len(dbt_views) == len(mart_keys(project)) and len(dbt_verdicts) >= 49

    # new data, same views: only the data tests again, with dbt's rule (a broken timeline fails its test)
    with project.warehouse.transaction() as con:
        con.execute("""UPDATE kg.entity_attributes SET valid_until = valid_from - INTERVAL 1 DAY
                       WHERE attribute_id = (SELECT min(attribute_id) FROM kg.entity_attributes WHERE valid_until IS NOT NULL)""")
    second = project.execute("consolidation", asset_selection=mart_keys(project))
    verdicts = {c.check_name: c.passed for c in second.get_asset_check_evaluations()}
    assert set(verdicts) == dbt_verdicts and not second.success
    assert {name for name, passed in verdicts.items() if not passed} == {"attribute_timeline_versions_are_ordered"}
    assert (f"dbt marts: views current (dbt's for this SQL); data tests run in process ({len(verdicts)} tests), "
            "no dbt build") in _marts_logs(project, second)
    assert list(DBT_TARGET.glob(f"kg_dbt_models-{second.run_id[:7]}-*")) == [], "no dbt invocation"
    counted = {m.asset_key.path[-1]: m.materialization.metadata["dagster/row_count"].value
               for m in second.get_asset_materialization_events() if m.asset_key.path[0] == "marts"}
    assert counted["attribute_timeline"] == project.sql("SELECT count(*) AS n FROM kg_marts.attribute_timeline")["n"][0]

    # no marts at all (a new warehouse) and a view redefined by hand: created again from dbt's SQL, as dbt made them
    with project.warehouse.transaction() as con:
        con.execute("DROP VIEW kg_marts.entity_profile")
        con.execute("CREATE OR REPLACE VIEW kg_marts.relation_type_counts AS SELECT 1 AS x")
    third = project.execute("consolidation", asset_selection=mart_keys(project))
    assert ("dbt marts: 2 views created from dbt's compiled SQL; data tests run in process "
            f"({len(verdicts)} tests), no dbt build") in _marts_logs(project, third)
    assert _view_definitions(project) == dbt_views
    assert {c.check_name for c in third.get_asset_check_evaluations() if not c.passed} == {
        "attribute_timeline_versions_are_ordered"}
    if project.warehouse.lake is not None:
        return  # what follows is dbt's build again, the same on both backends

    # a recorded view that does not read back as dbt left it (another DuckDB, say): dbt builds, and is recorded
    [record] = (project.warehouse.folder / "compiled_marts").glob("*.json")
    tampered = json.loads(record.read_text())
    tampered["views"]["relation_type_counts"] += " "
    record.write_text(json.dumps(tampered))
    with project.warehouse.transaction() as con:
        con.execute("CREATE OR REPLACE VIEW kg_marts.relation_type_counts AS SELECT 1 AS x")
    fourth = project.execute("consolidation", asset_selection=mart_keys(project))
    assert ("dbt marts: dbt build, a view created from the recorded SQL does not read back as the one dbt left"
            in _marts_logs(project, fourth))
    assert _view_definitions(project) == dbt_views
    assert json.loads(record.read_text())["views"]["relation_type_counts"] == dbt_views["relation_type_counts"]


def test_every_dbt_test_and_every_model_column_is_described():
    """The UI's asset checks of the marts and their schema tab: no "No description provided". A new column
    of a model must be documented in its yml (and test_marts_build... checks that each view's columns are)."""
    from kg_assets.defs.dbt import mart_assets

    marts = mart_assets(pool="dbt")
    undescribed_checks = [spec.key.name for spec in marts.check_specs if not (spec.description or "").strip()]
    assert len(list(marts.check_specs)) >= 49 and undescribed_checks == []
    nodes = json.loads(MANIFEST_PATH.read_text())["nodes"].values()
    models = {n["name"]: n for n in nodes if n["resource_type"] == "model"}
    assert {k.path[-1] for k in marts.keys} == set(models)
    assert [m for m, n in models.items() if not n["description"].strip() or not n["columns"]] == []
    assert [f"{m}.{c}" for m, n in models.items() for c, col in n["columns"].items()
            if not col["description"].strip() or not col.get("data_type")] == []


def test_the_planner_reads_the_marts_keys_and_code_versions_as_dagster_dbt_makes_them():
    from kg_assets.defs.dbt import mart_assets

    assert model_code_versions() == mart_assets(pool="dbt").code_versions_by_key


@pytest.mark.process
def test_a_run_without_marts_builds_its_job_without_importing_dagster_dbt():
    code = ("import sys; from kg_assets.definitions import build_definitions; from kg_assets.settings import Settings; "
            "job = build_definitions(Settings(), marts=False).resolve_job_def('kg_pipeline'); "
            "print(sorted(k.to_user_string() for k in job.asset_layer.executable_asset_keys)[:3], "
            "'dagster_dbt' in sys.modules, 'dbt' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("False False"), out
    assert "attribute_supersessions" in out


@pytest.mark.process
def test_the_definitions_are_the_same_without_dbt_cores_python_side():
    """kg_assets/defs/dbt.py keeps dagster-dbt from importing dbt-core's Python modules: the assets, checks and
    job (its snapshot) equal those of a process where dagster-dbt did import them, and none got imported."""
    code = ("import sys{before}; from kg_assets.definitions import defs; d = defs(); g = d.resolve_asset_graph(); "
            "print(sorted(k.to_user_string() for k in g.get_all_asset_keys()), sorted(map(str, g.asset_check_keys)), "
            "d.resolve_job_def('kg_pipeline').get_job_snapshot_id(), len([m for m, v in sys.modules.items() if m.startswith('dbt.') and v]))")
    ours, with_dbt_core = (subprocess.run([sys.executable, "-W", "ignore", "-c", code.format(before=before)], check=True,
                                          capture_output=True, text=True).stdout.strip().rsplit(" ", 1)
                           for before in ("", "; import dbt.version"))
    assert ours[0] == with_dbt_core[0]
    assert int(ours[1]) == 0 and int(with_dbt_core[1]) > 100


def _mart_views(db) -> set[str]:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return {row[0] for row in con.execute("SELECT view_name FROM duckdb_views() WHERE schema_name = 'kg_marts'").fetchall()}


def test_the_marts_follow_the_warehouse_not_only_the_instance(tmp_path, kg_cli):
    # After a build, the instance holds the marts' current code versions; a new (or lost and rebuilt)
    # warehouse file with the same instance still needs its own views.
    inbox, home = tmp_path / "inbox", tmp_path / "home"
    inbox.mkdir()
    home.mkdir()
    (inbox / "lab.md").write_text("# Lab\n\nSarah Chen leads the Quantum Dynamics Lab in Boston.\n")
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    models = {key.path[-1] for key in model_code_versions()}
    for db in (tmp_path / "a" / "warehouse.duckdb", tmp_path / "b" / "warehouse.duckdb"):  # the second: replayed
        done = kg_cli("run", "--inbox", inbox, "--db", db, "--dagster-home", home, "--log-level", "WARNING")
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert _mart_views(db) == models, db


def _mart_status(project, name: str) -> StaleStatus:
    """What the UI shows on a mart (Unsynced is STALE), resolved as the webserver resolves it."""

    graph = project.defs.resolve_asset_graph()
    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                          instance=project.instance, asset_graph=graph)
    return CachingStaleStatusResolver(project.instance, graph, view).get_status(dg.AssetKey(["marts", name]))


def test_a_consolidation_that_changed_no_row_leaves_the_marts_in_sync(built):
    project = built
    assert project.execute("consolidation").success  # the graph, then the marts over it
    assert _mart_status(project, "stg_current_edges") == StaleStatus.FRESH
    assert project.consolidate().success  # nothing changed: same tables, same data versions
    assert _mart_status(project, "stg_current_edges") == StaleStatus.FRESH
    with project.warehouse.transaction() as con:  # one relation fewer: graph_edges changes
        con.execute("DELETE FROM kg.local_relations WHERE relation_id = (SELECT min(relation_id) FROM kg.local_relations)")
    assert project.consolidate().success
    assert _mart_status(project, "stg_current_edges") == StaleStatus.STALE

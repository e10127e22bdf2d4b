"""Seed 003's plug-ins and schema in consolidation: a linker plug-in (KG_LINKER=module:attr) and the
relation-type schema (KG_RELATION_TYPES, KG_RELATION_TYPE_MAP, KG_UNKNOWN_RELATION_TYPES), each run through
the real linking and graph steps on a built warehouse."""

import json
import dagster as dg
import polars as pl
import pytest
from pydantic_settings import SettingsError

from kg_assets.core.relation_schema import apply_relation_schema
from kg_assets.definitions import build_definitions
from kg_assets.settings import GraphSettings, Settings

from kg_assets_tests.conftest import project_settings

PLUGIN = "kg_assets_tests.linker_plugin:SameNameLinker"
LINKING = [dg.AssetKey("linked_entities"), dg.AssetKey("entity_aliases")]
GRAPH = [dg.AssetKey("graph_nodes"), dg.AssetKey("graph_edges")]


def _with(project, **graph):
    project.defs = build_definitions(project_settings(project.inbox, project.warehouse.path, graph=GraphSettings(**graph)))
    return project


def _metadata(project, key: str) -> dict:
    event = project.instance.get_latest_materialization_event(dg.AssetKey(key))
    return {k: v.value for k, v in event.asset_materialization.metadata.items()}


@pytest.mark.parametrize("spec", [PLUGIN, "kg_assets_tests.linker_plugin:make_linker"])
def test_a_linker_plugin_links_in_the_pipeline_and_is_named_in_the_metadata(built, spec):
    project = _with(built, linker=spec)
    assert project.execute(asset_selection=LINKING).success
    methods = project.sql("SELECT DISTINCT method FROM kg.entity_aliases")["method"].to_list()
    assert methods == ["same_name"], "every redirect is the plug-in's"
    # the plug-in's rule: no two current entities share a name up to case
    assert project.sql("SELECT lower(name) AS n FROM kg.entities WHERE valid_until IS NULL "
                       "GROUP BY n HAVING count(*) > 1").height == 0
    meta = _metadata(project, "linked_entities")
    assert (meta["linker"], meta["linker_version"], meta["linker_setting"]) == ("same_name", "same-name-1", spec)


def test_the_linking_step_reads_only_the_mention_columns_a_linker_declares(built):
    from kg_assets_tests.linker_plugin import ColumnsSeenLinker

    ColumnsSeenLinker.seen.clear()
    assert _with(built, linker="kg_assets_tests.linker_plugin:ColumnsSeenLinker").execute(asset_selection=LINKING).success
    assert ColumnsSeenLinker.seen == [["entity_id", "name"]]
    # a linker that declares none gets every column (test_a_linker_plugin_links_in_the_pipeline...); one that
    # declares a column the mentions do not have is refused by name
    result = _with(built, linker="kg_assets_tests.linker_plugin:UnknownColumnLinker").execute(asset_selection=LINKING)
    assert not result.success
    (failure,) = [e for e in result.all_events if e.is_step_failure]
    assert "reads mention columns that do not exist: surname" in str(failure.step_failure_data.error)


def test_the_default_linker_is_the_name_linker_by_name(built):
    assert built.execute(asset_selection=LINKING).success
    meta = _metadata(built, "linked_entities")
    assert (meta["linker"], meta["linker_setting"]) == ("name_rules", "name_rules")
    assert meta["linker_version"].startswith("name-rules-")


def test_a_plugin_whose_rows_are_not_redirects_fails_linking_by_name(built):
    project = _with(built, linker="kg_assets_tests.linker_plugin:NoColumnsLinker")
    result = project.execute(asset_selection=LINKING)
    assert not result.success
    (failure,) = [e for e in result.all_events if e.is_step_failure]
    assert "linker broken 0 returned no from_id, to_id, method column" in str(failure.step_failure_data.error)


@pytest.mark.parametrize("value, expected", [
    ("no_such_module:Linker", "cannot import 'no_such_module'"),
    ("kg_assets_tests.linker_plugin:Nope", "has no 'Nope'"),
    ("kg_assets.settings:Settings", "does not implement the linker interface (no name, version, link)"),
    ("names", "expected name_rules or module:attr naming a linker class or factory"),
])
def test_a_bad_linker_setting_is_refused_when_settings_load_naming_the_variable(value, expected):
    with pytest.raises(SettingsError, match="KG_LINKER") as caught:
        Settings.from_env({"KG_LINKER": value})
    assert expected in str(caught.value)


def test_relation_schema_settings_come_from_the_environment():
    graph = Settings.from_env({"KG_RELATION_TYPES": "leads, works at,RELATED_TO",
                               "KG_RELATION_TYPE_MAP": "led=LEADS, employed by = works_at",
                               "KG_UNKNOWN_RELATION_TYPES": "drop"}).graph
    assert graph.relation_types == ["LEADS", "WORKS_AT", "RELATED_TO"]
    assert graph.relation_type_map == {"LED": "LEADS", "EMPLOYED_BY": "WORKS_AT"}
    assert graph.unknown_relation_types == "drop"
    with pytest.raises(SettingsError, match="KG_RELATION_TYPE_MAP"):
        Settings.from_env({"KG_RELATION_TYPE_MAP": "LED"})


def test_relation_schema_maps_then_keeps_related_or_drops_and_counts():
    rel = pl.DataFrame({"relation_type": ["LED", "LEADS", "SAID", "SAID", "RELATED_TO"]})
    kept, counts = apply_relation_schema(rel, [], {"LED": "LEADS"})
    assert kept["relation_type"].to_list() == ["LEADS", "LEADS", "SAID", "SAID", "RELATED_TO"] and counts["mapped"] == 1
    kept, counts = apply_relation_schema(rel, ["LEADS", "RELATED_TO"], {"LED": "LEADS"})
    assert kept["relation_type"].to_list() == ["LEADS", "LEADS", "RELATED_TO", "RELATED_TO", "RELATED_TO"]
    assert (counts["unknown"], counts["unknown_as_related_to"], counts["dropped"]) == (2, 2, 0)
    assert counts["unknown_types"] == {"SAID": 2}
    # without RELATED_TO among the allowed types, or with "drop", unknown types are dropped
    for allowed, unknown in ((["LEADS"], "related"), (["LEADS", "RELATED_TO"], "drop")):
        kept, counts = apply_relation_schema(rel, allowed, {"LED": "LEADS"}, unknown)
        assert set(kept["relation_type"]) <= set(allowed) and counts["dropped"] == counts["unknown"] > 0


def test_the_graph_keeps_only_allowed_relation_types_and_counts_the_rest(built):
    relations = built.sql("SELECT relation_type, count(*) AS n FROM kg.local_relations GROUP BY 1")
    count = dict(relations.iter_rows())
    assert count.get("LED") and count.get("LEADS") and len(count) > 3, "the sample has these types"
    project = _with(built, relation_types=["LEADS", "RELATED_TO"], relation_type_map={"LED": "LEADS"})
    assert project.execute(asset_selection=GRAPH).success
    types = set(project.sql("SELECT DISTINCT relation_type FROM kg.graph_edges WHERE valid_until IS NULL")["relation_type"])
    assert types == {"LEADS", "RELATED_TO"}
    meta = _metadata(project, "graph_edges")
    others = sum(count.values()) - count["LED"] - count["LEADS"] - count["RELATED_TO"]
    assert meta["relation_schema"] == "LEADS, RELATED_TO" and meta["relation_types_mapped"] == count["LED"]
    assert meta["relation_types_unknown"] == meta["unknown_as_related_to"] == others
    assert meta["relations_dropped_by_schema"] == 0 and meta["unknown_relation_types"]["SAID"] == count["SAID"]

    project = _with(built, relation_types=["LEADS"], unknown_relation_types="drop")
    assert project.execute(asset_selection=GRAPH).success
    types = set(project.sql("SELECT DISTINCT relation_type FROM kg.graph_edges WHERE valid_until IS NULL")["relation_type"])
    assert types == {"LEADS"}
    meta = _metadata(project, "graph_edges")
    assert meta["relations_dropped_by_schema"] == sum(count.values()) - count["LEADS"]


def test_kg_eval_linking_scores_the_configured_linker(kg_cli, tmp_path):
    # "Acme" typed two ways: the name rules keep ORGANIZATION and LOCATION readings of one document apart only
    # when both are real types; the plug-in links every equal name, whatever the type.
    rows = [("d1", "m1", "Acme Corp", "ORGANIZATION", "acme"), ("d1", "m2", "ACME CORP", "LOCATION", "acme"),
            ("d2", "m3", "Zurich", "LOCATION", "zurich"), ("d2", "m4", "zurich", "OTHER", "zurich")]
    path = tmp_path / "mentions.jsonl"
    path.write_text("".join(json.dumps({"doc_id": d, "mention_id": m, "text": t, "type": ty, "gold_cluster": g}) + "\n"
                            for d, m, t, ty, g in rows))
    plugin = kg_cli("eval", "linking", path, env={"KG_LINKER": "kg_assets_tests.linker_plugin:SameNameLinker"})
    rules = kg_cli("eval", "linking", path, env={"KG_LINKER": "name_rules"})
    assert plugin.returncode == rules.returncode == 0, plugin.stderr + rules.stderr
    scored, baseline = json.loads(plugin.stdout.splitlines()[-1]), json.loads(rules.stdout.splitlines()[-1])
    assert (scored["linker"], scored["linker_version"]) == ("same_name", "same-name-1")
    assert baseline["linker"] == "name_rules"
    assert scored["bcubed_f1"] == 1.0  # equal names ignoring case: exactly the gold clusters

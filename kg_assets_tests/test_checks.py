"""Every asset check fails on deliberately broken data, and blocking checks stop what depends on them (both backends)."""

import dagster as dg
import pytest

from kg_assets.core import schemas
from kg_assets.defs import checks as check_defs
from kg_assets.defs.partitions import range_tags

from kg_assets_tests.conftest import both_backends

CORRUPTIONS = {
    "documents_one_current_row": "INSERT INTO kg.documents SELECT * FROM kg.documents WHERE valid_until IS NULL LIMIT 1",
    "chunks_have_documents": "UPDATE kg.chunks SET document_id = 'ghost.txt' WHERE chunk_index = 0 AND document_id LIKE 'news/%'",
    "mentions_have_chunks": "UPDATE kg.entity_mentions SET chunk_id = 'chunk_missing' WHERE mention_id IN (SELECT min(mention_id) FROM kg.entity_mentions)",
    "relation_endpoints_exist": "UPDATE kg.local_relations SET source_id = 'entity_nowhere' WHERE relation_id IN (SELECT min(relation_id) FROM kg.local_relations)",
    "extraction_health": "UPDATE kg.chunk_extractions SET status = 'error', error = 'bad JSON from the model'",
    "entities_one_current_row": "INSERT INTO kg.entities SELECT * FROM kg.entities WHERE valid_until IS NULL LIMIT 1",
    "entity_ids_match_names": "UPDATE kg.entities SET normalized_name = 'CHEN' WHERE valid_until IS NULL AND name = 'Sarah Chen'",
    "redirects_resolve": "INSERT INTO kg.entity_aliases (from_id, to_id, method) SELECT entity_id, 'entity_gone', 'manual' FROM kg.entities LIMIT 1",
    "attributes_one_current_row": "INSERT INTO kg.entity_attributes SELECT * FROM kg.entity_attributes WHERE valid_until IS NULL LIMIT 1",
    "edges_one_current_row": "INSERT INTO kg.graph_edges SELECT * FROM kg.graph_edges WHERE valid_until IS NULL LIMIT 1",
    "nodes_one_current_row": "INSERT INTO kg.graph_nodes SELECT * FROM kg.graph_nodes WHERE valid_until IS NULL LIMIT 1",
    "messages_one_current_row": "INSERT INTO kg.messages SELECT * FROM kg.messages WHERE valid_until IS NULL LIMIT 1",
    "edges_join_current_nodes": "UPDATE kg.graph_nodes SET valid_until = now() WHERE node_id IN (SELECT source_id FROM kg.graph_edges LIMIT 1)",
    "user_facts_one_active_per_key": "INSERT INTO kg.user_facts SELECT * REPLACE (fact_id || '_copy' AS fact_id) FROM kg.user_facts WHERE is_active LIMIT 1",
    "facts_have_messages": "UPDATE kg.user_facts SET extracted_from_message_id = 'm-gone' WHERE fact_id IN (SELECT min(fact_id) FROM kg.user_facts WHERE source = 'auto_extraction')",
    "no_facts_of_forgotten_users": "INSERT INTO kg.forgotten_users SELECT user_id, now() FROM kg.user_facts LIMIT 1",
}


def test_every_check_has_a_corruption_case():
    assert {next(iter(c.check_specs)).name for c in check_defs.checks} == set(CORRUPTIONS)


# Tables versioned by row (valid_from / valid_until, the current row has valid_until NULL) and their key.
# kg.user_facts is left out: its valid_until is domain time, checked by user_facts_one_active_per_key.
VERSIONED_KEYS = {
    "documents": ["document_id"],
    "entities": ["entity_id"],
    "entity_attributes": ["entity_id", "attr_key"],
    "graph_nodes": ["node_id"],
    "graph_edges": ["source_id", "target_id", "relation_type"],
    "messages": ["document_id", "message_id"],
}


def test_every_versioned_table_has_a_one_current_row_check():
    versioned = {name for name, contract in schemas.TABLES.items() if "valid_until" in contract} - {"user_facts"}
    assert versioned == set(VERSIONED_KEYS)
    described = " ".join(spec.description or "" for c in check_defs.checks for spec in c.check_specs
                         if spec.name.endswith("one_current_row"))
    for table, key in VERSIONED_KEYS.items():
        assert f"kg.{table} has one current row per" in described
        assert ", ".join(key) in described, table


def _check(name: str) -> dg.AssetChecksDefinition:
    return next(c for c in check_defs.checks if next(iter(c.check_specs)).name == name)


def _evaluate(project, name: str) -> dg.AssetCheckResult:
    """The check's own body on the project's warehouse, invoked directly with the project's resources.

    How Dagster runs checks (jobs, blocking, run config) is tested once per backend below, through real runs."""
    check = _check(name)
    resources = project.defs.resources
    return check(**{key: resources[key] for key in check.required_resource_keys if key in resources})


def _run_check(project, name, run_config=None):
    """One check as a job of its own, in a real in-process run: the evaluation Dagster records."""
    job = dg.define_asset_job(f"only_{name}", selection=dg.AssetSelection.checks(_check(name)))
    defs = dg.Definitions.merge(project.defs, dg.Definitions(jobs=[job]))
    days = project.register_days()
    result = defs.resolve_job_def(f"only_{name}").execute_in_process(
        instance=project.instance, tags=range_tags(days[0], days[-1]), raise_on_error=False, run_config=run_config
    )
    (evaluation,) = result.get_asset_check_evaluations()
    return evaluation


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
@both_backends
def test_check_passes_on_good_data_and_fails_on_broken_data(built, name):
    assert _evaluate(built, name).passed
    with built.warehouse.transaction() as con:
        con.execute(CORRUPTIONS[name])
    evaluation = _evaluate(built, name)
    assert not evaluation.passed
    assert evaluation.metadata  # violations or shares are shown in the UI


@both_backends
def test_a_check_run_by_dagster_records_its_evaluation(built):
    assert _run_check(built, "edges_one_current_row").passed
    with built.warehouse.transaction() as con:
        con.execute(CORRUPTIONS["edges_one_current_row"])
    evaluation = _run_check(built, "edges_one_current_row")
    assert not evaluation.passed and evaluation.metadata["violations"].value == 1


@both_backends
def test_a_failing_blocking_check_stops_downstream_assets(built):
    with built.warehouse.transaction() as con:
        con.execute(CORRUPTIONS["documents_one_current_row"])
    chunks_before = built.sql("SELECT * FROM kg.chunks ORDER BY chunk_id")
    (built.inbox / "notes" / "extra.md").write_text("# Extra\n\nNew text about Ada Lovelace in London.")
    result = built.run_all()
    assert not result.success
    materialized = {m.asset_key.to_user_string() for m in result.get_asset_materialization_events()}
    assert materialized == {"documents"}
    assert built.sql("SELECT * FROM kg.chunks ORDER BY chunk_id").equals(chunks_before)


@both_backends
def test_entity_ids_match_names_reports_each_renamed_or_retyped_entity(built):
    with built.warehouse.transaction() as con:
        con.execute(CORRUPTIONS["entity_ids_match_names"])
        con.execute("UPDATE kg.entities SET entity_type = 'ORGANIZATION' WHERE valid_until IS NULL AND name = 'Marcus Webb' AND entity_type = 'PERSON'")
    evaluation = _evaluate(built, "entity_ids_match_names")
    assert not evaluation.passed and evaluation.metadata["violations"].value == 2


def test_extraction_health_thresholds_are_resource_fields(built):
    with built.warehouse.transaction() as con:
        con.execute("UPDATE kg.chunk_extractions SET status = 'error' WHERE chunk_id IN "
                    "(SELECT chunk_id FROM kg.chunk_extractions ORDER BY chunk_id LIMIT 30)")
    assert not _run_check(built, "extraction_health").passed
    tolerant = {"resources": {"check_thresholds": {"config": {"max_failed_chunk_share": 0.5}}}}
    evaluation = _run_check(built, "extraction_health", run_config=tolerant)
    assert evaluation.passed and evaluation.metadata["max_failed_share"].value == 0.5


@both_backends
def test_relation_endpoints_exist_reports_each_missing_end_once(built):
    with built.warehouse.transaction() as con:
        con.execute(CORRUPTIONS["relation_endpoints_exist"])  # a source nobody mentions
        con.execute("""UPDATE kg.local_relations SET target_id = 'entity_nowhere' WHERE relation_id IN
                       (SELECT max(relation_id) FROM kg.local_relations)""")  # ... and the same id as a target
        con.execute("""UPDATE kg.local_relations SET target_id = 'entity_elsewhere' WHERE relation_id IN
                       (SELECT min(relation_id) FROM kg.local_relations WHERE target_id <> 'entity_nowhere')""")
    evaluation = _evaluate(built, "relation_endpoints_exist")
    assert not evaluation.passed and evaluation.metadata["violations"].value == 2

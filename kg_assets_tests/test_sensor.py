"""The inbox sensor and the nightly schedule ask the planner; each change becomes one named run, once."""

import datetime as dt

import dagster as dg
import pytest

from kg_assets.core.planning import SENSOR_RETRIES
from kg_assets.defs.automation import inbox_sensor, nightly_refresh
from kg_assets.defs.planner import today_utc

from kg_assets_tests.conftest import without_marts

RESOURCES = ("settings", "warehouse", "extractor")


def _tick(project, cursor):
    # A context is closed after use: left open, its resources' instance context is finalized by the garbage
    # collector at some later test and resets Dagster's current definitions-state storage there.
    with dg.build_sensor_context(instance=project.instance, cursor=cursor,
                                 resources={k: project.defs.resources[k] for k in RESOURCES}) as context:
        result = inbox_sensor(context)
    if isinstance(result, dg.SensorResult):
        project.apply_sensor_result(result)
    return result


def _execute(project, request, with_dbt: bool = False):
    """Run what the sensor asked for; its dbt marts only `with_dbt` (tests of the sensor's choices need no views)."""
    assert request.job_name in (None, "kg_pipeline")  # the sensor's own job: never an anonymous one
    selection = request.asset_selection if with_dbt else without_marts(request.asset_selection)
    return project.execute(tags=request.tags, run_config=request.run_config, asset_selection=selection)


def _materialized(run_result, asset):
    return sorted(m.partition or "" for m in run_result.get_asset_materialization_events()
                  if m.asset_key.to_user_string() == asset)


def test_sensor_adds_edits_and_deletes_exactly_what_changed(project):
    today = today_utc()
    first = _tick(project, None)
    assert len(first.run_requests) == 1, "the whole new inbox is one run, not one run per document"
    assert project.instance.get_dynamic_partitions("arrival_days") == [today]
    run = _execute(project, first.run_requests[0], with_dbt=True)
    assert run.success
    assert _materialized(run, "chunks") == [today] and _materialized(run, "graph_edges") == [""]
    assert project.warehouse.row_count("documents") == 18
    cursor = first.cursor
    assert len(cursor) < 80, cursor

    assert _tick(project, cursor).run_requests == []

    # --- add one file: one run over today that processes that document only
    new = project.inbox / "notes" / "plumtree.md"
    new.write_text("# Plumtree\n\nIgnatius Plumtree joined the Zebrafish Institute in Reykjavik.\n")
    added = _tick(project, cursor)
    cursor = added.cursor
    (request,) = added.run_requests
    assert request.run_config["resources"]["scope"]["config"]["documents"] == ["notes/plumtree.md"]
    # the marts are views built by the first run from the same SQL: no dbt start-up in this run
    assert first.run_requests[0].asset_selection is None
    assert not any(key.path[0] == "marts" for key in request.asset_selection)
    untouched = project.sql("SELECT * FROM kg.chunks WHERE document_id <> 'notes/plumtree.md' ORDER BY chunk_id")
    run = _execute(project, request)
    assert run.success
    assert project.sql("SELECT * FROM kg.chunks WHERE document_id <> 'notes/plumtree.md' ORDER BY chunk_id").equals(untouched)
    assert "Ignatius Plumtree" in project.sql("SELECT name FROM kg.entities WHERE valid_until IS NULL")["name"].to_list()
    day = run.get_asset_materialization_events()
    chunks_md = next(m for m in day if m.asset_key.to_user_string() == "chunks").materialization.metadata
    assert chunks_md["documents"].value == 1, "the partition shows what this run did for it, not the corpus"

    # --- edit one file: its rows are replaced, nobody else's
    edited = project.inbox / "notes" / "year_end_retro.md"
    old_chunks = set(project.sql("SELECT chunk_id FROM kg.chunks WHERE document_id = 'notes/year_end_retro.md'")["chunk_id"])
    edited.write_text(edited.read_text().replace("apple pie", "lemon tart") + "\nHortensia Vale joined Lumen Analytics.\n")
    changed = _tick(project, cursor)
    cursor = changed.cursor
    (request,) = changed.run_requests
    assert _execute(project, request).success
    new_chunks = set(project.sql("SELECT chunk_id FROM kg.chunks WHERE document_id = 'notes/year_end_retro.md'")["chunk_id"])
    assert new_chunks != old_chunks
    texts = " ".join(project.sql("SELECT text FROM kg.chunks WHERE document_id = 'notes/year_end_retro.md'")["text"])
    assert "lemon tart" in texts and "apple pie" not in texts
    versions = project.sql("SELECT valid_until IS NULL AS current FROM kg.documents WHERE document_id = 'notes/year_end_retro.md'")
    assert sorted(versions["current"].to_list()) == [False, True]
    stale = project.sql("SELECT count(*) AS n FROM kg.entity_mentions WHERE chunk_id IN (SELECT unnest($ids))",
                        ids=sorted(old_chunks - new_chunks))
    assert stale["n"][0] == 0

    # --- delete one file: its contributions leave every table; entities it alone supported are closed
    victim = "notes/jordan_amman_trip.txt"
    canonical_mentions = """(SELECT coalesce(a.to_id, m.entity_id) AS entity_id, m.document_id, m.chunk_id
                             FROM kg.entity_mentions m LEFT JOIN kg.entity_aliases a ON a.from_id = m.entity_id)"""
    only_there = project.sql(
        f"SELECT entity_id FROM {canonical_mentions} GROUP BY entity_id HAVING bool_and(document_id = $d)", d=victim
    )["entity_id"].to_list()
    edges_before = project.sql("SELECT edge_id FROM kg.graph_edges WHERE valid_until IS NULL AND list_contains(document_ids, $d)", d=victim)
    assert only_there and edges_before.height
    (project.inbox / victim).unlink()
    deleted = _tick(project, cursor)
    cursor = deleted.cursor
    (request,) = deleted.run_requests
    assert _execute(project, request).success
    for table in ("chunks", "entity_mentions", "local_relations", "chunk_extractions", "attribute_observations"):
        assert project.sql(f"SELECT count(*) AS n FROM kg.{table} WHERE document_id = $d", d=victim)["n"][0] == 0, table
    assert project.sql("SELECT status FROM kg.documents WHERE document_id = $d AND valid_until IS NULL", d=victim).height == 0
    closed = project.sql("SELECT entity_id FROM kg.entities WHERE entity_id IN (SELECT unnest($ids)) AND valid_until IS NULL",
                         ids=only_there)
    assert closed.height == 0, "entities only the deleted document supported are no longer current"
    drift = project.sql(f"""
        SELECT e.entity_id FROM kg.entities e
        LEFT JOIN (SELECT entity_id, count(*) AS n FROM {canonical_mentions} GROUP BY entity_id) m USING (entity_id)
        WHERE e.valid_until IS NULL AND e.mention_count IS DISTINCT FROM m.n""")
    assert drift.height == 0
    still = project.sql("SELECT count(*) AS n FROM kg.graph_edges WHERE valid_until IS NULL AND list_contains(document_ids, $d)", d=victim)
    assert still["n"][0] == 0
    attributes = project.sql("SELECT count(*) AS n FROM kg.entity_attributes WHERE list_contains(source_document_ids, $d)", d=victim)
    assert attributes["n"][0] == 0
    assert _tick(project, cursor).run_requests == []


def _fail_run_of(project, request):
    """What the daemon records when the run it launched for this request dies (a killed run worker)."""
    run = project.instance.create_run_for_job(
        job_def=project.defs.resolve_job_def("kg_pipeline"), run_config=request.run_config,
        tags={**request.tags, "dagster/sensor_name": "inbox_sensor", "dagster/run_key": request.run_key})
    project.instance.report_run_failed(run)


def test_a_failed_run_is_requested_again_a_bounded_number_of_times(project):
    first = _tick(project, None)
    (request,) = first.run_requests
    assert _tick(project, first.cursor).run_requests == [], "a pending run is not requested twice"
    cursor, keys = first.cursor, [request.run_key]
    for _ in range(SENSOR_RETRIES):
        _fail_run_of(project, request)
        again = _tick(project, cursor)
        (request,) = again.run_requests
        assert request.run_key not in keys, "a new key, or Dagster would drop the request as a duplicate"
        assert request.run_config == first.run_requests[0].run_config
        cursor = again.cursor
        keys.append(request.run_key)
    _fail_run_of(project, request)
    given_up = _tick(project, cursor)
    assert given_up.run_requests == [] and "nightly" in given_up.skip_reason.skip_message
    # the plan is still there for the nightly refresh, and once it ran the sensor starts afresh
    assert _execute(project, request).success
    assert _tick(project, given_up.cursor).run_requests == []


def test_starting_the_ui_after_kg_run_reruns_nothing(project):
    assert project.run_plan(project.plan()).success  # what `kg run` does
    for cursor in (None, '{"chat/support_chat.jsonl":"1:2"}'):  # a fresh sensor, and one with an old per-file cursor
        result = _tick(project, cursor)
        assert result.run_requests == [] and "no inbox change" in result.skip_reason.skip_message


def test_an_empty_inbox_retracts_everything_and_a_missing_one_retracts_nothing(project):
    assert project.run_plan(project.plan()).success
    documents = project.warehouse.row_count("documents")
    inbox = project.inbox
    inbox.rename(inbox.with_name("unmounted"))
    refused = _tick(project, None)
    assert isinstance(refused, dg.SkipReason) and "refusing" in refused.skip_message
    run = project.execute(days=project.register_days())  # even a run started by hand refuses, before any write
    assert not run.success and project.warehouse.row_count("documents") == documents
    inbox.mkdir()
    emptied = _tick(project, None)
    assert _execute(project, emptied.run_requests[0]).success
    for table in ("documents", "chunks", "entity_mentions", "entities", "graph_nodes", "graph_edges"):
        assert project.warehouse.row_count(table) == 0, table


def _schedule(project):
    with dg.build_schedule_context(instance=project.instance, resources={k: project.defs.resources[k] for k in RESOURCES},
                                   scheduled_execution_time=dt.datetime.now(dt.UTC)) as context:  # closed: see _tick
        return nightly_refresh(context)


@pytest.mark.instance_on_disk
def test_the_nightly_refresh_skips_when_nothing_is_stale_and_redoes_failed_chunks(project):
    assert project.run_plan(project.plan()).success
    skipped = _schedule(project)
    assert isinstance(skipped, dg.SkipReason) and "nothing stale" in skipped.skip_message
    with project.warehouse.transaction() as con:
        con.execute("UPDATE kg.chunk_extractions SET status = 'error' WHERE document_id = 'notes/year_end_retro.md'")
    request = _schedule(project)
    assert request.run_config["resources"]["scope"]["config"]["documents"] == ["notes/year_end_retro.md"]
    run = _execute(project, request)
    assert run.success
    assert isinstance(_schedule(project), dg.SkipReason)


def test_one_document_can_be_reprocessed_alone(built):
    project, key = built, "notes/year_end_retro.md"
    others = project.sql("SELECT * FROM kg.chunk_extractions WHERE document_id <> $d ORDER BY chunk_id", d=key)
    with project.warehouse.transaction() as con:  # as if its rows were lost: a reprocess re-extracts, not reuses
        con.execute("DELETE FROM kg.entity_mentions WHERE document_id = $d", {"d": key})
    plan = project.plan(only=[key])  # what `kg run --document notes/year_end_retro.md` runs
    # its arrival day, the day the shared warehouse was built (not today, when a run crosses midnight)
    arrived = project.sql("SELECT arrival_day FROM kg.documents WHERE document_id = $d AND valid_until IS NULL", d=key)
    assert plan.documents == (key,) and plan.days == (str(arrived["arrival_day"][0]),)
    result = project.run_plan(plan)
    assert result.success
    documents = next(m for m in result.get_asset_materialization_events() if m.asset_key.to_user_string() == "documents")
    assert documents.materialization.metadata["documents_read"].value == 1
    assert project.sql("SELECT * FROM kg.chunk_extractions WHERE document_id <> $d ORDER BY chunk_id", d=key).equals(others)
    assert project.sql("SELECT count(*) AS n FROM kg.entity_mentions WHERE document_id = $d", d=key)["n"][0] > 0

"""The inbox sensor: new, changed and deleted files become exactly the runs (and retractions) they need."""

import dagster as dg

from kg_assets.defs.ingest import inbox_sensor
from kg_assets.defs.partitions import RANGE_END_TAG, RANGE_START_TAG


def _tick(project, cursor):
    context = dg.build_sensor_context(
        instance=project.instance, cursor=cursor, resources={"settings": project.defs.resources["settings"]}
    )
    result = inbox_sensor(context)
    project.apply_sensor_result(result)
    return result


def _partition_keys_materialized(run_result, asset="chunks"):
    return sorted(
        m.partition for m in run_result.get_asset_materialization_events() if m.asset_key.to_user_string() == asset
    )


def _execute(project, request):
    return project.execute(tags=request.tags, asset_selection=request.asset_selection)


def _current(project, table, key):
    return project.sql(f"SELECT * EXCLUDE (valid_from, valid_until) FROM kg.{table} WHERE valid_until IS NULL ORDER BY {key}")


def test_sensor_adds_edits_and_deletes_exactly_what_changed(project):
    first = _tick(project, None)
    assert len(first.run_requests) == 1, "the whole new inbox is one run, not one run per document"
    assert len(project.instance.get_dynamic_partitions("documents")) == 18
    assert _execute(project, first.run_requests[0]).success
    assert project.execute("consolidation").success
    cursor = first.cursor

    quiet = _tick(project, cursor)
    assert quiet.run_requests == []

    # --- add one file: one run over that partition only
    new = project.inbox / "notes" / "plumtree.md"
    new.write_text("# Plumtree\n\nIgnatius Plumtree joined the Zebrafish Institute in Reykjavik.\n")
    added = _tick(project, cursor)
    cursor = added.cursor
    assert [(r.tags[RANGE_START_TAG], r.tags[RANGE_END_TAG]) for r in added.run_requests] == [("notes/plumtree.md",) * 2]
    untouched = project.sql("SELECT * FROM kg.chunks WHERE document_id <> 'notes/plumtree.md' ORDER BY chunk_id")
    run = _execute(project, added.run_requests[0])
    assert run.success and _partition_keys_materialized(run) == ["notes/plumtree.md"]
    assert project.sql("SELECT * FROM kg.chunks WHERE document_id <> 'notes/plumtree.md' ORDER BY chunk_id").equals(untouched)
    assert project.execute("consolidation").success
    assert "Ignatius Plumtree" in project.sql("SELECT name FROM kg.entities WHERE valid_until IS NULL")["name"].to_list()

    # --- edit one file: its rows are replaced, nobody else's
    edited = project.inbox / "notes" / "year_end_retro.md"
    old_chunks = set(project.sql("SELECT chunk_id FROM kg.chunks WHERE document_id = 'notes/year_end_retro.md'")["chunk_id"])
    edited.write_text(edited.read_text().replace("apple pie", "lemon tart") + "\nHortensia Vale joined Lumen Analytics.\n")
    changed = _tick(project, cursor)
    cursor = changed.cursor
    assert len(changed.run_requests) == 1
    run = _execute(project, changed.run_requests[0])
    assert run.success and _partition_keys_materialized(run) == ["notes/year_end_retro.md"]
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
    assert project.execute("consolidation").success
    canonical_mentions = """(SELECT coalesce(a.to_id, m.entity_id) AS entity_id, m.document_id, m.chunk_id
                             FROM kg.entity_mentions m LEFT JOIN kg.entity_aliases a ON a.from_id = m.entity_id)"""
    only_there = project.sql(
        f"SELECT entity_id FROM {canonical_mentions} GROUP BY entity_id HAVING bool_and(document_id = $d)", d=victim
    )["entity_id"].to_list()
    edges_before = project.sql("SELECT edge_id FROM kg.graph_edges WHERE valid_until IS NULL AND list_contains(document_ids, $d)", d=victim)
    assert only_there and edges_before.height
    (project.inbox / victim).unlink()
    deleted = _tick(project, cursor)
    assert victim not in project.instance.get_dynamic_partitions("documents")
    assert [sorted(r.asset_selection) for r in deleted.run_requests] == [
        [dg.AssetKey("chat_users"), dg.AssetKey("entity_attributes"), dg.AssetKey("knowledge_graph"),
         dg.AssetKey("linked_entities"), dg.AssetKey("user_facts")]]
    assert _execute(project, deleted.run_requests[0]).success
    for table in ("chunks", "entity_mentions", "local_relations", "chunk_extractions", "attribute_observations"):
        assert project.sql(f"SELECT count(*) AS n FROM kg.{table} WHERE document_id = $d", d=victim)["n"][0] == 0, table
    assert project.sql("SELECT status FROM kg.documents WHERE document_id = $d AND valid_until IS NULL", d=victim).height == 0
    closed = project.sql("SELECT entity_id FROM kg.entities WHERE entity_id IN (SELECT unnest($ids)) AND valid_until IS NULL",
                         ids=only_there)
    assert closed.height == 0, "entities only the deleted document supported are no longer current"
    # every current entity is supported exactly by the mentions that remain
    drift = project.sql(f"""
        SELECT e.entity_id FROM kg.entities e
        LEFT JOIN (SELECT entity_id, count(*) AS n FROM {canonical_mentions} GROUP BY entity_id) m USING (entity_id)
        WHERE e.valid_until IS NULL AND e.mention_count IS DISTINCT FROM m.n""")
    assert drift.height == 0
    still = project.sql("SELECT count(*) AS n FROM kg.graph_edges WHERE valid_until IS NULL AND list_contains(document_ids, $d)", d=victim)
    assert still["n"][0] == 0
    attributes = project.sql("SELECT count(*) AS n FROM kg.entity_attributes WHERE list_contains(source_document_ids, $d)", d=victim)
    assert attributes["n"][0] == 0

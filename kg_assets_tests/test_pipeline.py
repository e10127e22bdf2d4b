"""The real Definitions, end to end on the sample corpus, in a real Dagster test instance.

A test runs on both backends where the storage contract is what it checks (a whole build, versioned reruns,
the as-of macro); the planner's and the readers' rules (failed chunks, bad documents) run on the embedded file,
and test_warehouse.py holds the partition writes they rely on, on both backends."""

import dagster as dg
import polars as pl

from kg_assets.core.consolidate import misnamed_entities
from kg_assets.definitions import defs as load_code_location
from kg_assets.defs.partitions import arrival_days

from kg_assets_tests.conftest import both_backends

TABLES = ("documents", "chunks", "entity_mentions", "local_relations", "entities", "graph_nodes", "graph_edges")


def test_definitions_load_with_every_asset_check_job_schedule_and_sensor():
    module_defs = load_code_location()  # what `dagster dev` loads, settings from this environment
    graph = module_defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert {"documents", "chunks", "entity_mentions", "local_relations", "linked_entities", "graph_nodes", "graph_edges"} <= keys
    check_names = {k.name for k in graph.asset_check_keys}
    assert {"documents_one_current_row", "mentions_have_chunks", "relation_endpoints_exist", "extraction_health",
            "entities_one_current_row", "edges_one_current_row", "edges_join_current_nodes"} <= check_names
    marts = dg.AssetKey(["marts", "entity_connectivity"])
    assert marts.to_user_string() in keys, "dbt models are assets downstream of the graph"
    assert graph.get(marts).parent_keys == {dg.AssetKey(["marts", "stg_current_entities"]), dg.AssetKey(["marts", "stg_current_edges"])}
    assert graph.get(dg.AssetKey(["marts", "stg_current_edges"])).parent_keys == {dg.AssetKey("graph_edges")}
    # kg_pipeline builds every asset (dbt marts included) over ranges of arrival days
    pipeline = module_defs.resolve_job_def("kg_pipeline")
    # link_overrides is external (written by `kg link`), the only asset no run materializes
    external = {k for k in graph.get_all_asset_keys() if not graph.get(k).is_executable}
    assert external == {dg.AssetKey("link_overrides")}
    assert pipeline.asset_layer.selected_asset_keys == set(graph.get_all_asset_keys()) - external
    assert pipeline.partitions_def == arrival_days
    assert module_defs.resolve_schedule_def("nightly_refresh").cron_schedule == "0 2 * * *"
    assert module_defs.resolve_sensor_def("inbox_sensor").job_name == "kg_pipeline"
    assert module_defs.resolve_schedule_def("nightly_refresh").job_name == "kg_pipeline"
    assert not [k for k in keys if graph.get(dg.AssetKey.from_user_string(k)).automation_condition], "no cascades"
    # DuckDB-writing steps share one pool, LLM-using steps another; partitioned steps batch partitions into one run.
    for key in ("documents", "chunks", "entity_mentions", "linked_entities", "entity_summaries", "graph_edges"):
        assets_def = module_defs.resolve_assets_def(key)
        assert assets_def.op.pool == ("llm" if key in ("entity_mentions", "entity_summaries") else "duckdb"), key
        if assets_def.partitions_def is not None:
            assert assets_def.backfill_policy == dg.BackfillPolicy.single_run(), key


# On the embedded file only: test_lake's `kg run` processes build the same graph on a lake, with its checks and marts.
def test_the_whole_pipeline_builds_a_graph_from_the_sample_corpus(project):
    import os

    environment = dict(os.environ)
    result = project.run_all(with_dbt=True)
    assert result.success
    assert dict(os.environ) == environment, "no step changes the environment (dbt gets the warehouse as a var)"
    counts = project.warehouse.counts()
    for table in TABLES:
        assert counts[table] > 0, table
    assert counts["documents"] == 18
    checks = result.get_asset_check_evaluations()
    assert len(checks) >= 8 and all(c.passed for c in checks)
    # the dbt marts were built on top of the kg schema in the same run
    top = project.sql("SELECT name, neighbours FROM kg_marts.entity_connectivity ORDER BY neighbours DESC, name LIMIT 5")
    assert top.height == 5 and top["neighbours"][0] > 0
    chen = project.sql("SELECT entity_type, normalized_name, mention_count FROM kg.entities "
                       "WHERE name = 'Sarah Chen' AND valid_until IS NULL")
    assert chen.rows() and chen["entity_type"][0] == "PERSON" and chen["mention_count"][0] >= 5
    assert chen["normalized_name"][0] == "SARAH_CHEN"  # not the CHEN merged into it
    entities = project.sql("SELECT entity_id, entity_type, normalized_name, name FROM kg.entities WHERE valid_until IS NULL")
    assert misnamed_entities(entities, project.sql("SELECT entity_id, document_id, name FROM kg.entity_mentions")).height == 0
    # every graph fact traces back to chunks and documents
    trace = project.sql("""
        SELECT count(*) AS n FROM kg.graph_edges e, unnest(e.source_chunk_ids) AS u(chunk_id)
        JOIN kg.chunks c ON c.chunk_id = u.chunk_id JOIN kg.documents d ON d.document_id = c.document_id
        WHERE e.valid_until IS NULL AND d.valid_until IS NULL""")
    assert trace["n"][0] >= counts["graph_edges"]
    # metadata says which extractor ran, in the event log
    mat = project.instance.get_latest_materialization_event(dg.AssetKey("entity_mentions"))
    assert "heuristic" in mat.asset_materialization.metadata["engine"].value
    assert "no LLM configured" in mat.asset_materialization.metadata["engine"].value


@both_backends
def test_the_acronym_of_the_lab_is_linked_to_it_not_listed_next_to_it(built):
    top = built.sql("SELECT name, entity_type FROM kg.entities WHERE valid_until IS NULL "
                    "ORDER BY mention_count DESC, name LIMIT 5")
    assert ("Quantum Dynamics Lab", "ORGANIZATION") in top.rows()
    assert "QDL" not in top["name"].to_list()
    lab = built.sql("SELECT aliases FROM kg.entities WHERE name = 'Quantum Dynamics Lab' AND valid_until IS NULL")
    assert "QDL" in lab["aliases"][0]
    untyped = built.sql("""SELECT a.to_id, a.method FROM kg.entity_aliases a JOIN kg.entity_mentions m ON m.entity_id = a.from_id
                           WHERE m.name = 'QDL' AND m.entity_type = 'OTHER' LIMIT 1""")
    # the untyped "QDL" is the typed "QDL" by the type vote (name-rules-5), itself the lab's acronym
    lab_id = built.sql("SELECT entity_id FROM kg.entities WHERE name = 'Quantum Dynamics Lab' AND valid_until IS NULL")
    assert untyped["to_id"].to_list() == lab_id["entity_id"].to_list()
    assert untyped["method"].to_list()[0] in ("acronym", "type_vote")


@both_backends
def test_a_second_run_reuses_every_chunk_and_changes_no_current_row(built):
    project = built
    before = {t: project.sql(f"SELECT * EXCLUDE (valid_from, valid_until) FROM kg.{t} WHERE valid_until IS NULL ORDER BY ALL")
              for t in ("entities", "graph_edges")}
    mentions = project.sql("SELECT * FROM kg.entity_mentions ORDER BY mention_id")
    result = project.run_all()
    assert result.success
    mat = [m for m in result.get_asset_materialization_events() if m.asset_key.to_user_string() == "entity_mentions"][0]
    assert mat.materialization.metadata["chunks_extracted"].value == 0
    assert project.sql("SELECT * FROM kg.entity_mentions ORDER BY mention_id").equals(mentions)
    for table, frame in before.items():
        after = project.sql(f"SELECT * EXCLUDE (valid_from, valid_until) FROM kg.{table} WHERE valid_until IS NULL ORDER BY ALL")
        assert after.equals(frame), table


def test_a_rerun_redoes_exactly_the_chunks_that_failed(built):
    project = built
    failed = project.sql("SELECT chunk_id, document_id FROM kg.chunk_extractions ORDER BY chunk_id LIMIT 2")
    ids = failed["chunk_id"].to_list()
    expected = project.sql("SELECT * FROM kg.entity_mentions WHERE chunk_id IN (SELECT unnest($ids)) ORDER BY mention_id", ids=ids)
    with project.warehouse.transaction() as con:  # as a timeout or a bad LLM answer would have left them
        con.execute("UPDATE kg.chunk_extractions SET status = 'error', error = 'timeout' WHERE chunk_id IN (SELECT unnest($ids))", {"ids": ids})
        con.execute("DELETE FROM kg.entity_mentions WHERE chunk_id IN (SELECT unnest($ids))", {"ids": ids})
    result = project.run_all()
    mat = [m for m in result.get_asset_materialization_events() if m.asset_key.to_user_string() == "entity_mentions"][0]
    assert mat.materialization.metadata["chunks_extracted"].value == 2
    assert project.sql("SELECT count(*) AS n FROM kg.chunk_extractions WHERE status <> 'ok'")["n"][0] == 0
    restored = project.sql("SELECT * FROM kg.entity_mentions WHERE chunk_id IN (SELECT unnest($ids)) ORDER BY mention_id", ids=ids)
    assert restored.equals(expected)


def test_a_run_stopped_after_reading_a_changed_document_leaves_it_for_the_next_run(project):
    assert project.run_all().success
    path = sorted(project.inbox.rglob("*.md"))[0]
    key = path.relative_to(project.inbox).as_posix()
    path.write_text(path.read_text() + "\n\nZebulon Quartz founded Wintergreen Labs in Oslo.\n")
    # the run reads the new text, then stops (killed, out of memory) before its chunks step
    assert project.run_plan(project.plan(), asset_selection=[dg.AssetKey("documents")]).success
    plan = project.plan()
    assert plan.stale == (key,) and plan.documents == (key,), plan
    redone = project.run_plan(plan)
    assert redone.success
    # the chunks cut again as before reuse their extractions: only the new text is extracted
    mat = [m for m in redone.get_asset_materialization_events() if m.asset_key.to_user_string() == "entity_mentions"][0]
    extracted, reused = (mat.materialization.metadata[k].value for k in ("chunks_extracted", "chunks_reused"))
    assert extracted >= 1 and reused >= 1, (extracted, reused)
    chunks = project.sql("SELECT text FROM kg.chunks WHERE document_id = $d", d=key)["text"].to_list()
    assert any("Zebulon Quartz" in text for text in chunks)
    names = project.sql("SELECT DISTINCT name FROM kg.entity_mentions WHERE document_id = $d", d=key)["name"].to_list()
    assert "Zebulon Quartz" in names, names
    assert not project.plan().documents


def test_bad_documents_are_recorded_and_the_rest_of_the_run_goes_on(project, monkeypatch):
    (project.inbox / "bad").mkdir()
    (project.inbox / "bad" / "empty.txt").write_bytes(b"")
    (project.inbox / "bad" / "binary.md").write_bytes(b"\x00\xff\x10" * 500)
    (project.inbox / "bad" / "undecodable.txt").write_bytes(bytes(range(0x80, 0x100)) * 8)
    (project.inbox / "bad" / "broken.pdf").write_bytes(b"%PDF-1.7 truncated")
    (project.inbox / "bad" / "unclosed.html").write_text("<script>" * 5000 + "<p>Ada Lovelace visited Paris.</p>")
    (project.inbox / "bad" / "nested.html").write_text("<div>" * 20000 + "<p>Ada Lovelace visited Paris.</p>")
    result = project.run_all()
    assert result.success
    docs = project.sql("SELECT document_id, status, error FROM kg.documents WHERE valid_until IS NULL")
    errors = dict(docs.filter(pl.col("status") == "error").select("document_id", "error").iter_rows())
    assert set(errors) == {"bad/empty.txt", "bad/binary.md", "bad/undecodable.txt", "bad/broken.pdf", "bad/unclosed.html",
                           "bad/nested.html"}
    assert "no text" in errors["bad/unclosed.html"]
    assert "Excessive depth" in errors["bad/nested.html"]  # its only text is nested past the depth limit
    assert "empty document" in errors["bad/empty.txt"] and "binary" in errors["bad/binary.md"]
    assert docs.filter(pl.col("status") == "ok").height == 18
    assert project.sql("SELECT count(DISTINCT document_id) AS n FROM kg.chunks")["n"][0] == 18
    # fixing a file makes the next run pick it up
    (project.inbox / "bad" / "empty.txt").write_text("Grace Hopper joined the Harvard Computation Lab in Cambridge.")
    assert project.run_all().success
    fixed = project.sql("SELECT status FROM kg.documents WHERE document_id = 'bad/empty.txt' AND valid_until IS NULL")
    assert fixed["status"].to_list() == ["ok"]
    assert project.sql("SELECT count(*) AS n FROM kg.entity_mentions WHERE name = 'Grace Hopper'")["n"][0] == 1


def test_bad_documents_by_content_fail_alone_and_a_rerun_retries_exactly_them(project, monkeypatch):
    """An ordinary text file the tokenizer refused (one line of over a million characters without a sentence end:
    bpe-openai raises 'Input too long to encode safely') made every document end with no chunks. Tokens are now
    counted in windows; with the window set past the library's limit, that failure comes back and must stay with
    its document: an error row naming the step, the others chunked, and a rerun that redoes exactly it."""
    (project.inbox / "bad").mkdir()
    long_line = "lorem ipsum dolor sit amet " * 40_000  # 1,080,000 characters, no punctuation, no newline
    (project.inbox / "bad" / "endless.txt").write_text(long_line)
    monkeypatch.setattr("kg_assets.core.tokens.WINDOW_CHARS", 2_000_000)
    result = project.run_all()
    assert result.success
    docs = project.sql("SELECT document_id, status, error FROM kg.documents WHERE valid_until IS NULL")
    errors = dict(docs.filter(pl.col("status") == "error").select("document_id", "error").iter_rows())
    assert errors == {"bad/endless.txt": "chunks: ValueError: Input too long to encode safely"}
    assert project.sql("SELECT count(DISTINCT document_id) AS n FROM kg.chunks")["n"][0] == 18
    chunks_step = result.asset_materializations_for_node("chunks")[0].metadata
    assert chunks_step["failed_documents"].value == 1 and "bad/endless.txt" in chunks_step["failures"].value
    # the same bytes are not retried; new bytes are, and only they
    (project.inbox / "bad" / "endless.txt").write_text("Grace Hopper joined the Harvard Computation Lab in Cambridge.")
    plan = project.plan()
    assert plan.changed == ("bad/endless.txt",) and not plan.new and not plan.stale
    assert plan.documents == ("bad/endless.txt",)
    assert project.run_plan(plan).success
    fixed = project.sql("SELECT status FROM kg.documents WHERE document_id = 'bad/endless.txt' AND valid_until IS NULL")
    assert fixed["status"].to_list() == ["ok"]
    assert project.sql("SELECT count(DISTINCT document_id) AS n FROM kg.chunks")["n"][0] == 19
    assert project.sql("SELECT count(*) AS n FROM kg.entity_mentions WHERE name = 'Grace Hopper'")["n"][0] == 1
    # with the bounded windows, the endless line itself is chunked like any text
    monkeypatch.undo()
    (project.inbox / "bad" / "endless.txt").write_text(long_line)
    assert project.run_plan(project.plan()).success
    chunks = project.sql("SELECT count(*) AS n, max(token_count) AS most FROM kg.chunks WHERE document_id = 'bad/endless.txt'")
    assert chunks["n"][0] > 100 and chunks["most"][0] <= 600
    assert project.sql("SELECT count(*) AS n FROM kg.documents WHERE status = 'error' AND valid_until IS NULL")["n"][0] == 0


@both_backends
def test_the_employer_change_in_the_sample_corpus_becomes_attribute_history(built):
    project = built
    history = project.sql("""
        SELECT h.value, h.valid_from::DATE::VARCHAR AS since, h.valid_until::DATE::VARCHAR AS until, h.is_current
        FROM kg.entity_attributes_history h JOIN kg.entities e USING (entity_id)
        WHERE e.name = 'Marcus Webb' AND e.valid_until IS NULL AND h.attr_key = 'employer' ORDER BY h.valid_from""")
    # "Northwind" is the short name of "Northwind Robotics", not another employer
    assert history.rows() == [("Northwind Robotics", "2024-11-05", "2025-06-18", False),
                              ("Quantum Dynamics Lab", "2025-06-18", None, True)]
    before = history.rows()[0]
    roles = project.sql("""
        SELECT h.value, h.valid_from::DATE::VARCHAR AS since FROM kg.entity_attributes_history h
        JOIN kg.entities e USING (entity_id)
        WHERE e.name = 'Marcus Webb' AND e.valid_until IS NULL AND h.attr_key = 'role' ORDER BY h.valid_from""")
    # "CTO" and "Chief Technology Officer" are one role, not five supersessions
    assert roles.rows() == [("senior engineer", "2024-11-05"), ("Chief Technology Officer", "2025-06-18")]
    as_of = project.sql("""
        SELECT a.value FROM kg.entity_attributes_at(TIMESTAMPTZ '2025-03-01 00:00:00+00') a JOIN kg.entities e USING (entity_id)
        WHERE e.name = 'Marcus Webb' AND e.valid_until IS NULL AND a.attr_key = 'employer'""")
    assert as_of["value"].to_list() == ["Northwind Robotics"]
    sup = project.sql("""SELECT old_value, new_value, relation_type FROM kg.attribute_supersessions s JOIN kg.entities e USING (entity_id)
                         WHERE e.name = 'Marcus Webb' AND e.valid_until IS NULL AND s.attr_key = 'employer'""")
    assert (before[0], "Quantum Dynamics Lab", "SUPERSEDES") in sup.rows()
    hq = project.sql("""SELECT a.value FROM kg.entity_attributes_current a JOIN kg.entities e USING (entity_id)
                        WHERE e.name = 'Northwind Robotics' AND e.valid_until IS NULL AND a.attr_key = 'headquarters'""")
    assert hq["value"].to_list() == ["Pittsburgh"]

"""Extraction in bounded batches: the rows are those of one batch, whatever the batch size and however many worker
processes extract them; a worker that dies fails the step by name and loses nothing written."""

import re

import dagster as dg
import pytest

from kg_assets.core.batches import batches_by_size
from kg_assets.definitions import build_definitions
from kg_assets_tests.conftest import assert_same_current_rows, project_settings
from kg_assets_tests.extractor_plugins import DEATH_MARKER

TABLES = ("chunk_extractions", "entity_mentions", "local_relations", "attribute_observations", "entities", "graph_edges")


def test_batches_hold_at_most_the_limit_and_keep_every_key_in_order():
    sizes = [("a", 2), ("b", 0), ("c", 3), ("d", 9), ("e", 1), ("f", 1)]
    assert batches_by_size(sizes, 4) == [["a", "b"], ["c"], ["d"], ["e", "f"]]
    assert batches_by_size(sizes, 100) == [["a", "b", "c", "d", "e", "f"]]
    assert batches_by_size([], 4) == []


@pytest.mark.parametrize("processes", [1, 2])
def test_extraction_in_batches_of_three_chunks_writes_the_rows_of_one_batch(project, built_warehouse, processes):
    project.defs = build_definitions(project_settings(project.inbox, project.warehouse.path, extraction_batch_chunks=3,
                                                      extraction_processes=processes))
    result = project.run_all()
    assert result.success
    logged = [e.message for e in project.instance.all_logs(result.run_id) if e.message]
    assert any("(batch 2 of " in m for m in logged), "the sample's chunks were not split into batches"
    written = [m for m in logged if m.startswith("written (batch ")]
    batches = int(re.search(r"\(batch 1 of (\d+),", written[0]).group(1))
    assert len(written) == batches and all(f"(batch {n} of {batches}," in m for n, m in enumerate(written, 1)), written
    in_workers = [m for m in logged if "worker processes (KG_EXTRACTION_PROCESSES)" in m]
    assert len(in_workers) == (processes > 1), in_workers
    metadata = project.instance.get_latest_materialization_event(dg.AssetKey("entity_mentions")).asset_materialization.metadata
    assert metadata["worker_processes"].value == (2 if processes > 1 else 0) and metadata["batches"].value > 1
    assert_same_current_rows(project.warehouse.path, built_warehouse, TABLES)


def test_a_dead_extraction_worker_fails_the_step_by_name_and_the_rerun_extracts_the_rest(
        project, built_warehouse, tmp_path, monkeypatch):
    settings = dict(extraction_batch_chunks=3, extraction_processes=2, engine="kg_assets_tests.extractor_plugins:dying_extractor")
    project.defs = build_definitions(project_settings(project.inbox, project.warehouse.path, **settings))
    assert project.run_all(asset_selection=[dg.AssetKey("documents"), dg.AssetKey("chunks")]).success
    marker = tmp_path / "die"
    marker.write_text(project.warehouse._read("SELECT max(document_id) AS d FROM kg.documents")["d"][0])
    monkeypatch.setenv(DEATH_MARKER, str(marker))
    failed = project.run_all()
    assert not failed.success
    errors = [str(e.event_specific_data.error) for e in failed.all_events if e.event_type_value == "STEP_FAILURE"]
    assert any("an extraction worker process died" in e and "KG_EXTRACTION_PROCESSES=1" in e for e in errors), errors
    # the last document's batch starts once the batch three before it is written (in flight: 2 workers and 1 waiting)
    kept = project.warehouse._read("SELECT count(*) AS n FROM kg.chunk_extractions")["n"][0]
    assert kept > 0
    marker.unlink()
    rerun = project.run_all()
    assert rerun.success
    logged = " ".join(e.message for e in project.instance.all_logs(rerun.run_id) if e.message)
    reused = sum(int(m) for m in re.findall(r"; (\d+) reused", logged))
    assert reused == kept, (reused, kept)
    assert_same_current_rows(project.warehouse.path, built_warehouse, TABLES)


def test_an_extractor_that_cannot_be_sent_to_workers_fails_the_step_saying_so(project):
    settings = dict(extraction_batch_chunks=3, extraction_processes=2,
                    engine="kg_assets_tests.extractor_plugins:unpicklable_extractor")
    project.defs = build_definitions(project_settings(project.inbox, project.warehouse.path, **settings))
    result = project.run_all()
    assert not result.success
    errors = [str(e.event_specific_data.error) for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert any("cannot be sent to a worker process" in e and "KG_EXTRACTION_PROCESSES=1" in e for e in errors), errors
    project.defs = build_definitions(project_settings(project.inbox, project.warehouse.path,
                                                      **{**settings, "extraction_processes": 1}))
    assert project.run_all().success

"""The documents and chunks steps in bounded batches (KG_INGEST_BATCH_BYTES): the rows are those of one batch,
and each day's metadata counts every document and chunk of it. A run stopped between batches is in
test_kg_run_failures.py."""

import dagster as dg

from kg_assets.core.files.inbox import signature_bytes
from kg_assets.definitions import build_definitions
from kg_assets_tests.conftest import assert_same_current_rows, project_settings

TABLES = ("documents", "chunks", "entity_mentions", "entities", "graph_edges")


def test_a_signature_gives_the_file_size_it_recorded_and_nothing_for_a_link():
    assert signature_bytes("2048:1733500000000000000") == 2048
    assert signature_bytes("link:../elsewhere.md") == 0
    assert signature_bytes(None) == 0


def test_documents_and_chunks_one_file_at_a_time_write_the_rows_of_one_batch(project, built_warehouse):
    settings = project_settings(project.inbox, project.warehouse.path)
    settings = settings.model_copy(update={"ingest": settings.ingest.model_copy(update={"ingest_batch_bytes": 1})})
    project.defs = build_definitions(settings)
    result = project.run_all()
    assert result.success

    files = sum(1 for path in project.inbox.rglob("*") if path.is_file())
    logged = [e.message for e in project.instance.all_logs(result.run_id) if e.message]
    for step, says in (("documents", "new or changed"), ("chunks", "chunks from")):
        written = [m for m in logged if m.startswith("written (batch ") and says in m]
        assert len(written) == files and all(f"(batch {n} of {files})" in m for n, m in enumerate(written, 1)), (
            step, written)

    # a copy of the inbox has other paths and file times (signatures)
    assert_same_current_rows(project.warehouse.path, built_warehouse, TABLES, skip=("path", "file_signature"))
    chunk_rows, tokens = project.sql("SELECT count(*) AS n, sum(token_count) AS t FROM kg.chunks").row(0)

    def day_sum(asset: str, name: str) -> int:
        return sum(m.materialization.metadata[name].value for m in result.get_asset_materialization_events()
                   if m.asset_key == dg.AssetKey(asset))

    assert day_sum("documents", "documents_read") == files
    assert (day_sum("chunks", "chunks"), day_sum("chunks", "tokens")) == (chunk_rows, tokens)

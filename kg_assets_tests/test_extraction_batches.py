"""Extraction in bounded batches: the rows are those of one batch, whatever the batch size."""

import duckdb

from kg_assets.core.batches import batches_by_size
from kg_assets.core import schemas
from kg_assets.definitions import build_definitions
from kg_assets_tests.conftest import project_settings

TABLES = ("chunk_extractions", "entity_mentions", "local_relations", "attribute_observations", "entities", "graph_edges")


def test_batches_hold_at_most_the_limit_and_keep_every_key_in_order():
    sizes = [("a", 2), ("b", 0), ("c", 3), ("d", 9), ("e", 1), ("f", 1)]
    assert batches_by_size(sizes, 4) == [["a", "b"], ["c"], ["d"], ["e", "f"]]
    assert batches_by_size(sizes, 100) == [["a", "b", "c", "d", "e", "f"]]
    assert batches_by_size([], 4) == []


def _columns(table: str) -> str:
    # times differ between two runs; every other column must not
    return ", ".join(c for c, t in schemas.TABLES[table].items() if not t.is_temporal())


def test_extraction_in_batches_of_three_chunks_writes_the_rows_of_one_batch(project, built_warehouse):
    project.defs = build_definitions(project_settings(project.inbox, project.warehouse.path, extraction_batch_chunks=3))
    result = project.run_all()
    assert result.success
    logged = [e.message for e in project.instance.all_logs(result.run_id) if e.message]
    assert any("(batch 2 of " in m for m in logged), "the sample's chunks were not split into batches"
    with duckdb.connect(str(project.warehouse.path), read_only=True) as con:
        con.execute(f"ATTACH '{built_warehouse}' AS one_batch (READ_ONLY)")
        for table in TABLES:
            cols = _columns(table)
            current = " WHERE valid_until IS NULL" if "valid_until" in schemas.TABLES[table] else ""
            ours, theirs = f"SELECT {cols} FROM kg.{table}{current}", f"SELECT {cols} FROM one_batch.kg.{table}{current}"
            extra = con.execute(f"SELECT count(*) FROM ({ours} EXCEPT ALL {theirs})").fetchone()[0]
            missing = con.execute(f"SELECT count(*) FROM ({theirs} EXCEPT ALL {ours})").fetchone()[0]
            total = con.execute(f"SELECT count(*) FROM ({ours})").fetchone()[0]
            assert (extra, missing) == (0, 0) and total > 0, f"{table}: {extra} rows only in batches, {missing} only in one"

"""The storage layer on both backends: the embedded DuckDB file and a DuckLake (see conftest's `warehouse`)."""

import duckdb
import polars as pl
import pytest

from kg_assets.core import schemas
from kg_assets.storage.warehouse import Warehouse

from kg_assets_tests.conftest import both_backends, embedded_only


@pytest.fixture
def wh(warehouse):
    return warehouse


def _chunks(doc: str, n: int, tag: str = "") -> pl.DataFrame:
    return pl.DataFrame({
        "chunk_id": [f"{doc}-{i}{tag}" for i in range(n)],
        "document_id": [doc] * n,
        "chunk_index": list(range(n)),
        "text": [f"text {i}{tag}" for i in range(n)],
    })


@both_backends
def test_schema_kg_holds_every_contract_table(wh):
    with wh.connect() as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema='kg' AND table_type = 'BASE TABLE'").fetchall()}
    assert tables == set(schemas.TABLES)


@both_backends
def test_partition_write_replaces_only_its_documents(wh):
    wh.replace_partitions({"chunks": pl.concat([_chunks("a", 3), _chunks("b", 2)])}, ["a", "b"])
    wh.replace_partitions({"chunks": _chunks("a", 1, "v2")}, ["a"])
    rows = wh.run_user_query("SELECT chunk_id FROM kg.chunks ORDER BY 1")["chunk_id"].to_list()
    assert rows == ["a-0v2", "b-0", "b-1"]


@both_backends
def test_inserts_go_by_column_name_not_position(wh):
    frame = _chunks("a", 2)
    wh.replace_partitions({"chunks": frame.select(list(reversed(frame.columns)))}, ["a"])
    out = wh.run_user_query("SELECT chunk_id, text, chunk_index FROM kg.chunks ORDER BY chunk_index")
    assert out.rows() == [("a-0", "text 0", 0), ("a-1", "text 1", 1)]


@both_backends
def test_a_failed_write_rolls_back_and_releases_the_file(wh):
    wh.replace_partitions({"chunks": _chunks("a", 3)}, ["a"])
    with pytest.raises(duckdb.CatalogException):
        # chunks are deleted and re-inserted first; the failing second table must undo that too
        wh.replace_partitions({"chunks": _chunks("a", 1, "new"), "no_such_table": _chunks("a", 1)}, ["a"])
    assert wh.run_user_query("SELECT chunk_id FROM kg.chunks ORDER BY 1")["chunk_id"].to_list() == ["a-0", "a-1", "a-2"]
    if wh.lake is None:  # the connection was closed: another (read-write) connection can open the file at once
        duckdb.connect(wh.path).close()


@both_backends
def test_documents_are_versioned_by_content_hash(wh):
    docs = pl.DataFrame({"document_id": ["x", "y"], "content_hash": ["h1", "h2"], "status": ["ok", "ok"]})
    assert wh.upsert_documents(docs).height == 2
    assert wh.upsert_documents(docs).height == 0, "unchanged documents are not new versions"
    changed = wh.upsert_documents(docs.with_columns(pl.lit("h3").alias("content_hash")).head(1))
    assert changed["document_id"].to_list() == ["x"]
    history = wh.run_user_query("SELECT document_id, content_hash, valid_until IS NULL AS current FROM kg.documents ORDER BY 1, 2")
    assert history.rows() == [("x", "h1", False), ("x", "h3", True), ("y", "h2", True)]


@both_backends
def test_the_same_bytes_read_by_a_newer_reader_are_a_new_version(wh):
    docs = pl.DataFrame({"document_id": ["x"], "content_hash": ["h1"], "status": ["ok"], "text": ["Notes\n\nTalks"],
                         "headings": [[]]}, schema_overrides={"headings": pl.List(pl.String)})
    wh.upsert_documents(docs)
    assert wh.upsert_documents(docs).height == 0
    marked = docs.with_columns(pl.lit("# Notes\n\nTalks").alias("text"), pl.lit(["Notes"]).alias("headings"))
    assert wh.upsert_documents(marked)["document_id"].to_list() == ["x"]
    current = wh.run_user_query("SELECT text, headings FROM kg.documents WHERE valid_until IS NULL")
    assert current.rows() == [("# Notes\n\nTalks", ["Notes"])]


@both_backends
def test_retiring_a_document_removes_its_rows_everywhere_and_closes_it(wh):
    docs = pl.DataFrame({"document_id": ["a", "b"], "content_hash": ["1", "2"], "status": ["ok", "ok"]})
    wh.upsert_documents(docs)
    mentions = pl.DataFrame({"mention_id": ["m1", "m2"], "document_id": ["a", "b"], "chunk_id": ["a-0", "b-0"]})
    wh.replace_partitions({"chunks": pl.concat([_chunks("a", 1), _chunks("b", 1)]), "entity_mentions": mentions}, ["a", "b"])
    assert wh.retire_documents(["a", "never-seen"]) == ["a"]
    assert wh.run_user_query("SELECT document_id FROM kg.chunks")["document_id"].to_list() == ["b"]
    assert wh.run_user_query("SELECT document_id FROM kg.entity_mentions")["document_id"].to_list() == ["b"]
    assert wh.run_user_query("SELECT status FROM kg.documents WHERE document_id = 'a'")["status"].to_list() == ["deleted"]
    assert wh.retire_documents(["a"]) == []


@both_backends
def test_replace_current_keeps_history_and_original_valid_from(wh):
    e = pl.DataFrame({"entity_id": ["a", "b"], "name": ["A", "B"], "mention_count": [1, 1]})
    wh.replace_current({"entities": (["entity_id"], e)})
    first = wh.run_user_query("SELECT entity_id, valid_from FROM kg.entities ORDER BY 1")
    stats = wh.replace_current({"entities": (["entity_id"], e.filter(pl.col("entity_id") == "a").with_columns(mention_count=5))})
    assert stats == {"entities": {"current": 1, "closed": 1, "written": 1}}
    rows = wh.run_user_query("SELECT entity_id, mention_count, valid_from, valid_until IS NULL AS current FROM kg.entities ORDER BY 1")
    assert rows.select("entity_id", "mention_count", "current").rows() == [("a", 5, True), ("b", 1, False)]
    assert rows["valid_from"].to_list() == first["valid_from"].to_list()
    assert wh.duplicate_current_keys("entities", ["entity_id"]).height == 0


@both_backends
def test_replace_current_rewrites_only_the_rows_that_changed(wh):
    e = pl.DataFrame({"entity_id": ["a", "b", "c"], "name": ["A", "B", "C"], "mention_count": [1, 1, 1],
                      "aliases": [["A"], ["B"], None]})
    assert wh.replace_current({"entities": (["entity_id"], e)})["entities"]["written"] == 3
    # the same rows again, in another order: nothing to write, nothing closed
    assert wh.replace_current({"entities": (["entity_id"], e.reverse())}) == {
        "entities": {"current": 3, "closed": 0, "written": 0}}
    # a changed list value and a NULL that became a value are changes; equal NULLs are not
    changed = e.with_columns(aliases=pl.Series([["A", "Ay"], ["B"], ["C"]]))
    assert wh.replace_current({"entities": (["entity_id"], changed)})["entities"]["written"] == 2
    rows = wh.run_user_query("SELECT entity_id, aliases FROM kg.entities WHERE valid_until IS NULL ORDER BY 1")
    assert rows.rows() == [("a", ["A", "Ay"]), ("b", ["B"]), ("c", ["C"])]
    assert wh.duplicate_current_keys("entities", ["entity_id"]).height == 0


@both_backends
def test_replacing_some_keys_closes_rewrites_and_keeps_only_those_keys_once_each(wh):
    e = pl.DataFrame({"entity_id": ["a", "b", "c", "d"], "name": ["A", "B", "C", "D"], "mention_count": [1, 1, 1, 1]})
    wh.replace_current({"entities": (["entity_id"], e)})
    # keys a, b, c in scope (b given twice): a changes, b is gone, c is the same; d is outside the scope and stays
    scope = pl.DataFrame({"entity_id": ["a", "b", "b", "c"]})
    rows = e.filter(pl.col("entity_id").is_in(["a", "c"])).with_columns(
        mention_count=pl.when(pl.col("entity_id") == "a").then(7).otherwise(pl.col("mention_count")))
    assert wh.replace_current_keys("entities", ["entity_id"], rows, scope) == {"current": 2, "closed": 1, "written": 1}
    current = wh.run_user_query("SELECT entity_id, mention_count FROM kg.entities WHERE valid_until IS NULL ORDER BY 1")
    assert current.rows() == [("a", 7), ("c", 1), ("d", 1)]
    assert wh.run_user_query("SELECT entity_id FROM kg.entities WHERE valid_until IS NOT NULL").rows() == [("b",)]
    assert wh.duplicate_current_keys("entities", ["entity_id"]).height == 0


@both_backends
def test_stale_documents_are_those_with_missing_failed_or_outdated_extractions(wh):
    docs = pl.DataFrame({"document_id": ["a", "b", "c", "d"], "content_hash": list("1234"), "status": ["ok"] * 3 + ["error"]})
    wh.upsert_documents(docs)
    chunks = pl.concat([_chunks("a", 1), _chunks("b", 1), _chunks("c", 1)]).with_columns(chunker_version=pl.lit("chunker-1"))
    status = pl.DataFrame({"chunk_id": ["a-0", "b-0", "c-0"], "document_id": ["a", "b", "c"],
                           "status": ["ok", "error", "ok"], "extractor_version": ["v1", "v1", "v0"]})
    wh.replace_partitions({"chunks": chunks, "chunk_extractions": status}, ["a", "b", "c"])
    assert wh.stale_documents("v1", "chunker-1") == ["b", "c"]
    assert wh.stale_documents("v1", "chunker-2") == ["a", "b", "c"]


def test_an_older_warehouse_gains_columns_added_to_the_contracts(tmp_path):
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE SCHEMA kg")
        con.execute("CREATE TABLE kg.chunk_extractions (chunk_id VARCHAR, document_id VARCHAR, status VARCHAR)")
        con.execute("INSERT INTO kg.chunk_extractions VALUES ('c1', 'd1', 'ok')")
    wh = Warehouse(path)
    wh.create_schema()
    row = wh.run_user_query("SELECT * FROM kg.chunk_extractions").row(0, named=True)
    assert row["chunk_id"] == "c1" and row["bad_lines"] is None
    assert set(schemas.CHUNK_EXTRACTIONS) <= set(row)


@both_backends
def test_an_older_warehouse_gets_its_relation_keywords_string_as_a_list(wh):
    """Before llm-5 a relation's keywords were one string ("works at; leads"): opening the warehouse for writing
    converts the column in place with the rule new rows are made with (normalize.parse_keywords)."""
    from kg_assets.storage.lake import connect_lake

    con = connect_lake(*wh.lake) if wh.lake else duckdb.connect(str(wh.path))
    try:
        con.execute("CREATE SCHEMA kg")
        con.execute("CREATE TABLE kg.local_relations (relation_id VARCHAR, document_id VARCHAR, keywords VARCHAR, "
                    "strength DOUBLE)")
        con.execute("INSERT INTO kg.local_relations VALUES ('r1', 'd1', 'works at; Leads, , leads', 0.9), "
                    "('r2', 'd1', NULL, 1.0), ('r3', 'd1', '  ', 1.0)")
    finally:
        con.close()
    wh.create_schema()
    with wh.connect() as con:  # a second write connection finds the list and leaves it
        assert con.execute("SELECT data_type FROM information_schema.columns WHERE table_schema = 'kg' "
                           "AND table_name = 'local_relations' AND column_name = 'keywords'").fetchone() == ("VARCHAR[]",)
    wh.create_schema()
    rows = wh.run_user_query("SELECT relation_id, keywords, strength FROM kg.local_relations ORDER BY relation_id")
    assert rows.schema["keywords"] == schemas.STRS
    assert rows.rows() == [("r1", ["works at", "Leads"], 0.9), ("r2", [], 1.0), ("r3", [], 1.0)]
    new = pl.DataFrame({"relation_id": ["r4"], "document_id": ["d2"], "keywords": [["founded"]]})
    wh.replace_partitions({"local_relations": new}, ["d2"])  # new rows go in beside the converted ones
    assert wh.local_relations().sort("relation_id")["keywords"].to_list() == [["works at", "Leads"], [], [], ["founded"]]


@pytest.mark.process
@embedded_only("a file lock between processes: a DuckLake has no file to lock (its writers commit through the catalog)")
def test_a_writer_waits_for_another_process_to_release_the_file(wh, tmp_path):
    import subprocess
    import sys
    import time

    wh.create_schema()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); print('locked', flush=True); time.sleep(1.5); con.close()"
    ), wh.path], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    started = time.monotonic()
    wh.replace_partitions({"chunks": _chunks("a", 1)}, ["a"])  # would fail at once without waiting
    assert time.monotonic() - started > 0.5
    assert holder.wait(timeout=10) == 0
    assert wh.run_user_query("SELECT count(*) AS n FROM kg.chunks")["n"][0] == 1


@both_backends
def test_reading_a_missing_warehouse_is_a_clear_error_and_creates_nothing(wh, tmp_path):
    from kg_assets.storage.warehouse import WarehouseNotFound

    for read in (wh.counts, wh.link_overrides, lambda: wh.stale_documents("v", "c"), lambda: wh.run_user_query("SELECT 1")):
        with pytest.raises(WarehouseNotFound, match="no warehouse at .* yet|no DuckLake in .* yet"):
            read()
    assert not list(tmp_path.iterdir()), "no file, no data folder"


@both_backends
def test_the_schema_is_created_once_per_file_and_reads_cannot_write(wh):
    wh.replace_partitions({"chunks": _chunks("a", 1)}, ["a"])
    with wh.connect() as con:
        con.execute("DROP VIEW kg.entity_attributes_current")
    wh.replace_partitions({"chunks": _chunks("b", 1)}, ["b"])  # a later write does not run the DDL again
    views = "SELECT view_name FROM duckdb_views() WHERE schema_name = 'kg' AND view_name = 'entity_attributes_current'"
    assert wh.run_user_query(views).height == 0
    wh.create_schema()  # asked for explicitly, it is checked again
    assert wh.run_user_query(views).height == 1
    with pytest.raises(duckdb.InvalidInputException, match="read-only"):
        wh.run_user_query("DELETE FROM kg.chunks")
    assert wh.run_user_query("SELECT count(*) AS n FROM kg.chunks")["n"][0] == 2


@pytest.mark.process
def test_a_file_another_process_holds_past_the_lock_timeout_is_a_clear_busy_error(tmp_path):
    import subprocess
    import sys

    from kg_assets.storage.warehouse import WarehouseBusy

    path = tmp_path / "held.duckdb"
    Warehouse(path).create_schema()
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(30)", str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(WarehouseBusy, match=r"stayed locked by another process for 0.3 s \(KG_DUCKDB_LOCK_TIMEOUT_S\)"):
            with Warehouse(path, lock_timeout_s=0.3).connect(read_only=True):
                pass
    finally:
        holder.kill()
        holder.wait()
    with Warehouse(path, lock_timeout_s=5).connect(read_only=True) as con:  # free again once the holder is gone
        assert con.execute("SELECT 1").fetchone() == (1,)

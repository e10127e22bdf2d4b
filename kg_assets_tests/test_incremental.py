"""Exact incremental behaviour: the consolidated tables depend only on the documents present now."""

import random
import shutil

import polars as pl

from kg_assets.cli import main

CURRENT = {
    "entities": "SELECT * EXCLUDE (valid_from, valid_until) FROM kg.entities WHERE valid_until IS NULL",
    "graph_nodes": "SELECT * EXCLUDE (valid_from, valid_until) FROM kg.graph_nodes WHERE valid_until IS NULL",
    "graph_edges": "SELECT * EXCLUDE (valid_from, valid_until) FROM kg.graph_edges WHERE valid_until IS NULL",
    "entity_aliases": "SELECT * EXCLUDE (created_at) FROM kg.entity_aliases",
    "entity_attributes": "SELECT * FROM kg.entity_attributes",  # valid_from/until are document time here
    "attribute_supersessions": "SELECT * FROM kg.attribute_supersessions",
}


def _snapshot(project) -> dict[str, pl.DataFrame]:
    return {table: project.sql(sql + " ORDER BY ALL") for table, sql in CURRENT.items()}


def test_building_incrementally_in_any_order_equals_building_from_scratch(built, tmp_path):
    project = built  # the sample corpus built from scratch
    scratch = _snapshot(project)
    assert all(frame.height for name, frame in scratch.items() if name != "attribute_supersessions")

    # The same corpus again, arriving in three shuffled batches, with a document that comes and goes
    # and a document that is edited and then restored.
    full = tmp_path / "full"
    shutil.copytree(project.inbox, full)
    shutil.rmtree(project.inbox)
    project.inbox.mkdir()
    with project.warehouse.transaction() as con:
        for table in ("documents", "chunks", "entity_mentions", "local_relations", "chunk_extractions",
                      "attribute_observations", "entities", "entity_aliases", "graph_nodes", "graph_edges",
                      "entity_attributes", "attribute_supersessions"):
            con.execute(f"DELETE FROM kg.{table}")

    files = sorted(p.relative_to(full) for p in full.rglob("*") if p.is_file())
    random.Random(7).shuffle(files)
    batches = [files[:6], files[6:12], files[12:]]
    transient = project.inbox / "notes" / "transient.md"
    edited = files[0]

    def add(batch):
        for rel in batch:
            (project.inbox / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(full / rel, project.inbox / rel)

    def sync_and_run():
        assert project.run_plan(project.plan()).success

    add(batches[0])
    transient.parent.mkdir(parents=True, exist_ok=True)
    transient.write_text("# Transient\n\nIgnatius Plumtree, a senior engineer at Zebrafish Institute, joined Lumen Analytics.\n")
    sync_and_run()
    (project.inbox / edited).write_text((full / edited).read_text(errors="ignore") + "\nPenelope Quarry joined Northwind Robotics.\n")
    add(batches[1])
    sync_and_run()
    transient.unlink()
    shutil.copy(full / edited, project.inbox / edited)
    add(batches[2])
    sync_and_run()

    incremental = _snapshot(project)
    for table, frame in scratch.items():
        assert incremental[table].equals(frame), table
    names = project.sql("SELECT name FROM kg.entities WHERE valid_until IS NULL")["name"].to_list()
    assert "Ignatius Plumtree" not in names and "Penelope Quarry" not in names
    closed = project.sql("SELECT count(*) AS n FROM kg.entities WHERE valid_until IS NOT NULL AND name = 'Ignatius Plumtree'")
    assert closed["n"][0] == 1, "an entity that lost its support is closed and kept as history"


def test_a_merge_can_be_undone_and_redone(built, capsys):
    project = built
    db = str(project.warehouse.path)
    alias = project.sql("""SELECT a.from_id, a.to_id FROM kg.entity_aliases a
                           WHERE a.method = 'person_short_form' ORDER BY a.from_id LIMIT 1""").row(0, named=True)
    consolidate = lambda: project.consolidate().success  # noqa: E731
    assert main(["link", "split", alias["from_id"], "entity_unknown", "--db", db]) == 2
    assert main(["link", "split", alias["from_id"], alias["to_id"], "--note", "different people", "--db", db]) == 0
    assert consolidate()
    current = set(project.sql("SELECT entity_id FROM kg.entities WHERE valid_until IS NULL")["entity_id"])
    assert {alias["from_id"], alias["to_id"]} <= current
    assert project.sql("SELECT count(*) AS n FROM kg.entity_aliases WHERE from_id = $f", f=alias["from_id"])["n"][0] == 0
    assert main(["link", "list", "--db", db]) == 0 and "different people" in capsys.readouterr().out
    assert main(["link", "remove", alias["from_id"], alias["to_id"], "--db", db]) == 0
    assert consolidate()
    assert project.sql("SELECT to_id FROM kg.entity_aliases WHERE from_id = $f", f=alias["from_id"])["to_id"].to_list() == [alias["to_id"]]
    closed = project.sql("SELECT valid_until FROM kg.entities WHERE entity_id = $f ORDER BY valid_from DESC LIMIT 1", f=alias["from_id"])
    assert closed["valid_until"][0] is not None
    # and a forced merge through the command line
    a, b = project.sql("""SELECT entity_id FROM kg.entities WHERE valid_until IS NULL AND entity_type = 'LOCATION'
                          ORDER BY mention_count DESC, entity_id LIMIT 2""")["entity_id"].to_list()
    assert main(["link", "merge", a, b, "--db", db]) == 0
    assert consolidate()
    row = project.sql("SELECT to_id, method FROM kg.entity_aliases WHERE from_id = $a", a=a).row(0, named=True)
    assert row == {"to_id": b, "method": "override"}

"""Hostile inbox entries through the real entry points: `kg run`, the inbox sensor and the `documents` asset."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from kg_assets.defs.automation import inbox_sensor

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SECRET = "TOP SECRET outside the inbox"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KG_", "DAGSTER_"))}
    home = tmp_path / "dagster_home"
    home.mkdir(exist_ok=True)
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    return {**env, "DAGSTER_HOME": str(home), **extra}


def _kg_run(tmp_path: Path, inbox: Path, db: Path, **extra: str) -> str:
    # --no-marts: what is asserted here happens before the marts (test_cli and test_marts run them in `kg run`)
    proc = subprocess.run([BIN / "kg", "run", "--no-marts", "--inbox", inbox, "--db", db], env=_env(tmp_path, **extra),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def _symlinked_inbox(tmp_path: Path) -> Path:
    """One real document, and a symlink of each kind: inside, outside, loop, dangling."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    (inbox / "real.md").write_text("# Visit\n\nAda Lovelace visited Paris with Charles Babbage.\n")
    (inbox / "passwd.txt").symlink_to(tmp_path / "secret.txt")
    (inbox / "inside.md").symlink_to("real.md")
    (inbox / "loop.txt").symlink_to("loop.txt")
    (inbox / "dangling.txt").symlink_to("missing.txt")
    return inbox


def _current_documents(db: Path) -> dict[str, tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT document_id, status, error, text FROM kg.documents WHERE valid_until IS NULL").fetchall()
    return {row[0]: row[1:] for row in rows}


def _assert_symlink_rows(documents: dict[str, tuple]) -> None:
    assert sorted(documents) == ["dangling.txt", "inside.md", "loop.txt", "passwd.txt", "real.md"]
    assert documents["real.md"][0] == documents["inside.md"][0] == "ok"
    assert "Ada Lovelace" in documents["inside.md"][2]
    for key, reason in {"passwd.txt": "outside the inbox", "loop.txt": "symlink loop", "dangling.txt": "does not exist"}.items():
        status, error, text = documents[key]
        assert status == "error" and reason in error and text is None, (key, error)
    assert not any(SECRET in (text or "") for _, _, text in documents.values())


@pytest.mark.process
def test_kg_run_gives_every_symlink_a_row_and_follows_only_those_inside_the_inbox(tmp_path):
    inbox = _symlinked_inbox(tmp_path)
    db = tmp_path / "warehouse.duckdb"
    out = _kg_run(tmp_path, inbox, db)
    assert "5 documents" in out and "5 new" in out
    assert "failed documents          3" in out
    assert "passwd.txt: symlink leads outside the inbox" in out
    _assert_symlink_rows(_current_documents(db))
    # an unchanged refusal is not redone on the next run
    assert "every document is up to date" in _kg_run(tmp_path, inbox, db)


def test_the_sensor_survives_symlinks_and_their_run_records_each_one(project):
    shutil.rmtree(project.inbox)
    _symlinked_inbox(project.inbox.parent)
    resources = {k: project.defs.resources[k] for k in ("settings", "warehouse", "extractor")}
    with dg.build_sensor_context(instance=project.instance, resources=resources) as context:  # closed: test_sensor._tick
        result = inbox_sensor(context)
    project.apply_sensor_result(result)
    assert len(result.run_requests) == 1
    request = result.run_requests[0]
    assert request.run_config["resources"]["scope"]["config"]["documents"] == [
        "dangling.txt", "inside.md", "loop.txt", "passwd.txt", "real.md"]
    assert project.execute(tags=request.tags, run_config=request.run_config).success
    _assert_symlink_rows(_current_documents(project.warehouse.path))
    # the next tick sees nothing new: no run, no crash
    with dg.build_sensor_context(instance=project.instance, cursor=result.cursor, resources=resources) as context:
        quiet = inbox_sensor(context)
    assert quiet.run_requests == []


def test_partition_keys_added_through_the_instance_cannot_read_outside_the_inbox(project, tmp_path):
    (tmp_path / "outside.txt").write_text(SECRET + "\n")
    hostile = ["../outside.txt", str(tmp_path / "outside.txt"), "notes/../../outside.txt"]
    result = project.execute(documents=hostile, asset_selection=[dg.AssetKey("documents")])
    assert result.success
    documents = _current_documents(project.warehouse.path)
    assert sorted(documents) == sorted(hostile)
    for key in hostile:
        status, error, text = documents[key]
        assert status == "error" and "not a relative path inside the inbox" in error and text is None, (key, error)

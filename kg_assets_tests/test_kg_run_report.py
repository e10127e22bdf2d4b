"""What `kg run` reports and which code it exits with, through `kg_assets.cli.main` in this process: failed
chunks (exit 3 unless allowed), a failed check beside them (exit 1), and a refused over-limit file that is not
redone. The process itself (kills, Ctrl-C, pools, credentials) is under test in test_kg_run_failures.py."""

from pathlib import Path

import pytest

from kg_assets.testing.openai_server import FakeOpenAIServer, Reply
from kg_assets.testing.scripted_llm import extraction_responder


@pytest.fixture
def run_in(tmp_path, kg_cli):
    """`kg run` over tmp_path/inbox into tmp_path/warehouse.duckdb, on an instance in tmp_path/home."""
    inbox, home = tmp_path / "inbox", tmp_path / "home"
    inbox.mkdir()
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")

    def run(*options: str, **env: str):
        return kg_cli("run", "--inbox", inbox, "--db", tmp_path / "warehouse.duckdb", "--dagster-home", home,
                      *options, env={"KG_SUMMARY_MIN_FRAGMENTS": "0", **env})

    run.inbox = inbox
    return run


def test_failed_chunks_are_listed_and_exit_3_unless_allowed(run_in):
    inbox: Path = run_in.inbox
    (inbox / "lab.md").write_text("# Lab news\n\nSarah Chen leads the Quantum Dynamics Lab in Boston.\n")
    (inbox / "hiring.md").write_text("# Hiring\n\nMarcus Webb joined Northwind Robotics in Pittsburgh.\n")
    # Enough good documents that one failed chunk stays under the extraction_health threshold (20%).
    for i, city in enumerate(["Boston", "Pittsburgh", "Boston", "Pittsburgh", "Boston"]):
        (inbox / f"note{i}.md").write_text(f"# Note {i}\n\nSarah Chen met Marcus Webb in {city}.\n")
    normal = extraction_responder()
    with FakeOpenAIServer(lambda r: Reply.server_error() if "Northwind" in r["messages"][-1]["content"] else normal(r)) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "KG_LLM_MAX_RETRIES": "0"}
        # --no-marts: the marts play no part in a failed chunk (test_cli runs them in `kg run`)
        first = run_in("--no-marts", **env)
        assert first.returncode == 3, first.stdout[-3000:] + first.stderr[-3000:]
        assert "kg run finished with 1 failed chunk in " in first.stdout
        assert "failed chunks             1  (in 1 document)" in first.stdout
        assert "hiring.md chunk 0: pass 0: InternalServerError" in first.stdout
        # the same failed chunk over a stricter extraction_health: the failed check wins, and says why
        strict = run_in("--no-marts", KG_MAX_FAILED_CHUNK_SHARE="0.05", **env)
        assert strict.returncode == 1, strict.stdout[-3000:]
        assert "kg run finished with 1 failed check and 1 failed chunk in " in strict.stdout
        assert ("FAILED entity_mentions:extraction_health: 1 of 7 chunks failed extraction (14%, at most 5% allowed "
                "by KG_MAX_FAILED_CHUNK_SHARE)") in strict.stdout, strict.stdout[-3000:]
        allowed = run_in("--no-marts", "--allow-failed-chunks", **env)
        assert allowed.returncode == 0 and "failed chunks             1" in allowed.stdout, allowed.stdout[-3000:]
        server.set_responder(normal)
        fixed = run_in("--no-marts", **env)
        assert fixed.returncode == 0 and "failed chunks             0" in fixed.stdout, fixed.stdout[-3000:]


def test_an_unchanged_over_limit_file_is_not_redone(run_in):
    inbox: Path = run_in.inbox
    (inbox / "note.md").write_text("# Note\n\nGrace Hopper joined the Harvard Computation Lab.\n")
    (inbox / "big.txt").write_text("Grace Hopper " * 1000)
    # --no-marts: what is asserted here happens before the marts (test_cli and test_marts run them in `kg run`)
    first = run_in("--no-marts", KG_MAX_DOCUMENT_BYTES="2000")
    assert first.returncode == 0 and "big.txt: document is 13,000 bytes, over the 2,000-byte limit" in first.stdout
    second = run_in("--no-marts", KG_MAX_DOCUMENT_BYTES="2000")
    assert "every document is up to date" in second.stdout, second.stdout
    (inbox / "big.txt").write_text("Grace Hopper " * 1001)
    third = run_in("--no-marts", KG_MAX_DOCUMENT_BYTES="2000")
    assert "1 changed" in third.stdout and "(1 document)" in third.stdout, third.stdout

"""Reliability drill: replays what issue 10 found against the real entry points and prints ONE table.

    .venv/bin/python scripts/drill.py [--keep]

1. kill -9 of `kg run`'s process group during extraction, heuristic and LLM (the local test server answers
   slowly), then a rerun: the dead run is failed, its pool slots freed, the rerun completes; for the
   heuristic the rerun's graph equals a build from scratch; for the LLM every request in flight at the
   kill is in kg.llm_calls (status `sent`), and the rerun, given credentials in OPENAI_BASE_URL and an
   API key, leaves neither in its output, the instance or the warehouse;
2. the bad-input corpus of benchmarks/hostile_inputs.py through one `kg run`: every entry gets a row,
   the run succeeds; partition keys that leave the inbox get an error row;
3. the fault matrix: every fault the test server injects, in both answer formats, on one of two chunks;
4. security probes: `kg sql` with COPY TO, read_text, INSTALL, ATTACH, SET (all refused), a normal query.

Everything runs in a temporary folder with its own Dagster home; nothing in the repository is touched.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import dagster as dg  # noqa: E402
import duckdb  # noqa: E402
import polars as pl  # noqa: E402

from kg_assets.core.documents import read_document  # noqa: E402
from kg_assets.core.files.inbox import scan_inbox  # noqa: E402
from kg_assets.extractors.llm.engine import LLMExtractor  # noqa: E402
from kg_assets.settings import LLMSettings  # noqa: E402
from kg_assets.storage.warehouse import Warehouse  # noqa: E402
from kg_assets.testing.openai_server import FAULTS, FakeOpenAIServer, Reply  # noqa: E402
from kg_assets.testing.scripted_llm import chunk_text, extraction_responder  # noqa: E402

KG = Path(sys.executable).parent / "kg"
SAMPLE_INBOX = ROOT / "data" / "inbox"
ROWS: list[tuple[str, str, str, bool, float]] = []


def row(drill: str, case: str, outcome: str, ok: bool, seconds: float) -> None:
    ROWS.append((drill, case, outcome, ok, seconds))
    print(f"  {'ok ' if ok else 'BAD'} {drill}: {case}: {outcome} ({seconds:.1f} s)", file=sys.stderr, flush=True)


class Project:
    """An inbox, a warehouse and a Dagster home under one folder, driven through `kg run`."""

    def __init__(self, base: Path, inbox: Path | None = None):
        self.base = base
        base.mkdir(parents=True)
        self.home = base / "dagster_home"
        self.home.mkdir()
        shutil.copy(ROOT / "dagster.yaml", self.home)
        self.inbox = base / "inbox"
        shutil.copytree(inbox or SAMPLE_INBOX, self.inbox, symlinks=True)
        self.db = base / "warehouse.duckdb"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KG_", "DAGSTER_"))}
        return {**env, "DAGSTER_HOME": str(self.home), "KG_SUMMARY_MIN_FRAGMENTS": "0", **extra}

    def args(self, *options: str) -> list[str]:
        return [str(KG), "run", "--inbox", str(self.inbox), "--db", str(self.db), *options]

    def run(self, *options: str, **env: str) -> tuple[int, str, float]:
        started = time.monotonic()
        proc = subprocess.run(self.args(*options), env=self.env(**env), capture_output=True, text=True, timeout=1800)
        return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - started

    def start(self, **env: str) -> subprocess.Popen:
        return subprocess.Popen(self.args(), env=self.env(**env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)

    def instance(self) -> dg.DagsterInstance:
        return dg.DagsterInstance.from_config(str(self.home))

    def sql(self, query: str, params=None) -> list[tuple]:
        with duckdb.connect(str(self.db), read_only=True) as con:
            return con.execute(query, params or []).fetchall()

    def graph(self) -> tuple:
        return tuple(self.sql(f"SELECT count(*) FROM kg.{t} WHERE valid_until IS NULL")[0][0]
                     for t in ("documents", "entities", "graph_nodes", "graph_edges"))


def _kill_when(proc: subprocess.Popen, ready) -> None:
    for line in proc.stdout:
        if ready(line):
            break
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _wedged(project: Project) -> tuple[str, bool]:
    with project.instance() as instance:
        (run,) = instance.get_runs(limit=1)
        held = {pool for pool in instance.event_log_storage.get_concurrency_keys()
                if run.run_id in instance.event_log_storage.get_concurrency_info(pool).active_run_ids}
    return run.run_id, run.status == dg.DagsterRunStatus.STARTED and bool(held)


def _recovered(project: Project, run_id: str) -> bool:
    with project.instance() as instance:
        storage = instance.event_log_storage
        free = all(run_id not in storage.get_concurrency_info(p).active_run_ids for p in storage.get_concurrency_keys())
        return instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.FAILURE and free


def kill_heuristic(base: Path) -> None:
    project = Project(base / "kill_heuristic")
    started = time.monotonic()
    proc = project.start(KG_EXTRACTOR="heuristic")
    _kill_when(proc, lambda line: "extracting " in line and " chunks with the " in line)
    run_id, wedged = _wedged(project)
    row("kill -9 (heuristic)", "killed during extraction", "left STARTED holding its pool slot" if wedged else
        "not wedged", wedged, time.monotonic() - started)
    (project.inbox / "added.md").write_text("# Added\n\nGrace Hopper joined the Harvard Computation Lab.\n")
    code, out, seconds = project.run(KG_EXTRACTOR="heuristic")
    ok = code == 0 and _recovered(project, run_id)
    row("kill -9 (heuristic)", "next kg run", f"exit {code}; dead run FAILURE, slots freed" if ok else out[-300:], ok,
        seconds)
    scratch = Project(base / "scratch", project.inbox)
    scratch_code, _, scratch_seconds = scratch.run(KG_EXTRACTOR="heuristic")
    same = scratch_code == 0 and project.graph() == scratch.graph()
    row("kill -9 (heuristic)", "incremental = scratch", f"documents/entities/nodes/edges {project.graph()} vs "
        f"{scratch.graph()}", same, scratch_seconds)


def kill_llm(base: Path) -> None:
    project = Project(base / "kill_llm")
    normal = extraction_responder()
    password, key = "drill-pw-9c1e", "sk-drill-5b7f"
    with FakeOpenAIServer(lambda r: Reply(content=normal(r).content, delay_s=60)) as server:
        url = server.base_url.replace("http://", f"http://drill:{password}@")
        env = {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": key, "KG_LLM_TIMEOUT_S": "120"}
        started = time.monotonic()
        proc = project.start(**env)
        deadline = time.monotonic() + 300
        while server.in_flight < 16 and time.monotonic() < deadline:
            time.sleep(0.1)
        # Open at the kill, not every request of the run: fact extraction's calls, answered before
        # extraction started, are logged as done, not as sent.
        in_flight = server.in_flight
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        run_id, wedged = _wedged(project)
        row("kill -9 (LLM)", f"killed with {in_flight} requests in flight", "left STARTED holding its pool slot"
            if wedged else "not wedged", wedged, time.monotonic() - started)
        server.set_responder(normal)
        code, out, seconds = project.run(**env)
    ok = code == 0 and _recovered(project, run_id)
    row("kill -9 (LLM)", "next kg run", f"exit {code}; dead run FAILURE, slots freed" if ok else out[-300:], ok, seconds)
    sent = project.sql("SELECT count(*) FROM kg.llm_calls WHERE run_id = ? AND status = 'sent'", [run_id])[0][0]
    row("kill -9 (LLM)", "requests in flight at the kill", f"{sent} of {in_flight} in kg.llm_calls as sent",
        sent == in_flight, 0.0)
    leaks = [p for p in project.base.rglob("*") if p.is_file() and any(s.encode() in p.read_bytes() for s in (password, key))]
    leaks += ["output"] if password in out or key in out else []
    row("security", "base URL credentials and API key", f"found in {len(leaks)} files/outputs" +
        (f": {leaks[:3]}" if leaks else " (instance, compute logs, warehouse, cache, stdout)"), not leaks, 0.0)


def bad_inputs(base: Path) -> None:
    from hostile_inputs import build_corpus

    corpus = base / "hostile"
    corpus.mkdir()
    inbox = build_corpus(corpus)
    project = Project(base / "bad_inputs", inbox)
    code, out, seconds = project.run(KG_EXTRACTOR="heuristic", KG_MAX_DOCUMENT_BYTES="2000000")
    rows = dict(project.sql("SELECT status, count(*) FROM kg.documents WHERE valid_until IS NULL GROUP BY 1")) \
        if project.db.exists() else {}
    entries = len(scan_inbox(project.inbox))
    ok = code == 0 and sum(rows.values()) == entries
    row("bad input", f"{entries} hostile inbox entries, one kg run", f"exit {code}; rows {rows}" if code == 0 else
        out[-300:], ok, seconds)
    for key in ("../secret.txt", str(inbox.parent / "secret.txt")):
        started = time.perf_counter()
        document = read_document(inbox, key, max_bytes=2_000_000)
        row("bad input", f"partition key {key.replace(str(base), '…')}", f"{document['status']}: {document['error']}",
            document["status"] == "error" and document.get("text") is None, time.perf_counter() - started)


def fault_matrix(base: Path) -> None:
    chunks = pl.DataFrame({
        "chunk_id": ["fine", "faulty"], "document_id": ["fine.md", "faulty.md"], "content_hash": ["a", "b"],
        "text": ["Sarah Chen leads the Quantum Dynamics Lab in Boston.", "Marcus Webb joined Northwind Robotics."],
        "section_path": [None, None], "headings": [[], []],
    })
    normal = extraction_responder()
    with FakeOpenAIServer() as server:
        for fmt in ("tuple", "structured"):
            for name, fault in FAULTS.items():
                server.set_responder(lambda r, fault=fault: fault() if "Northwind" in chunk_text(r) else normal(r))
                settings = LLMSettings(base_url=server.base_url, api_key="drill", output_format=fmt, timeout_s=0.5,
                                       max_retries=1, cache_path=str(base / f"cache_{fmt}_{len(ROWS)}.sqlite"))
                started = time.perf_counter()
                engine = LLMExtractor(settings)
                result = engine.extract(chunks)
                status = dict(result.chunk_status.select("chunk_id", "status").iter_rows())
                error = result.chunk_status.filter(pl.col("chunk_id") == "faulty")["error"][0] or ""
                ok = status == {"fine": "ok", "faulty": "error"} and engine.calls["status"].null_count() == 0
                row("fault matrix", f"{fmt}: {name}", error.split(":")[1].strip() if ":" in error else error or status,
                    ok, time.perf_counter() - started)


def security(base: Path) -> None:
    project = base / "kill_heuristic"
    warehouse = Warehouse(project / "warehouse.duckdb")
    victim = base / "precious.txt"
    victim.write_text("precious")
    probes = {
        "COPY ... TO a file": f"COPY (SELECT 1) TO '{victim}'",
        "read_text('/etc/passwd')": "SELECT * FROM read_text('/etc/passwd')",
        "INSTALL httpfs": "INSTALL httpfs",
        "ATTACH another file": f"ATTACH '{base / 'other.duckdb'}' AS other",
        "SET enable_external_access": "SET enable_external_access = true",
    }
    for name, query in probes.items():
        started = time.perf_counter()
        try:
            warehouse.run_user_query(query)
            outcome, ok = "ran", False
        except duckdb.Error as exc:
            outcome, ok = f"refused ({type(exc).__name__})", True
        row("kg sql", name, outcome, ok and victim.read_text() == "precious", time.perf_counter() - started)
    started = time.perf_counter()
    rows = warehouse.run_user_query("SELECT count(*) AS n FROM kg.entities WHERE valid_until IS NULL")["n"][0]
    row("kg sql", "a normal query", f"{rows} current entities", rows > 0, time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder and print its path")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="kg_drill_"))
    try:
        for drill in (kill_heuristic, kill_llm, bad_inputs, fault_matrix, security):
            drill(base)
    finally:
        if args.keep:
            print(f"kept {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)
    print("| drill | case | outcome | ok | s |\n|---|---|---|---|---:|")
    for drill, case, outcome, ok, seconds in ROWS:
        print(f"| {drill} | {case} | {str(outcome).replace('|', '/')[:110]} | {'yes' if ok else '**NO**'} | {seconds:.1f} |")
    failed = sum(not ok for *_, ok, _ in ROWS)
    print(f"\n{len(ROWS) - failed} of {len(ROWS)} checks held")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

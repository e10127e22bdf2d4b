"""`kg run` when things go wrong, as real processes on a real instance: killed runs (SIGKILL of the process
group) do not wedge later ones, a run waits for a pool visibly and stops on Ctrl-C, credentials are never
printed or stored. What a run reports and its exit codes are in test_kg_run_report.py, in process."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from kg_assets.commands.recovery import HOST_TAG, PID_TAG, PROCESS_STARTED_TAG, process_started
from kg_assets.testing.openai_server import FakeOpenAIServer, Reply
from kg_assets.testing.scripted_llm import extraction_responder

pytestmark = pytest.mark.process  # every test here starts the installed commands

ROOT = Path(__file__).resolve().parents[1]
KG = Path(sys.executable).parent / "kg"
DOCUMENTS = {
    "lab.md": "# Lab news\n\nSarah Chen leads the Quantum Dynamics Lab in Boston.\n",
    "hiring.md": "# Hiring\n\nMarcus Webb joined Northwind Robotics in Pittsburgh.\n",
}


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for name, text in DOCUMENTS.items():
        (inbox / name).write_text(text)
    return home


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KG_", "DAGSTER_"))}
    return {**env, "DAGSTER_HOME": str(home), "KG_SUMMARY_MIN_FRAGMENTS": "0", **extra}


def _args(home: Path) -> list:
    return [KG, "run", "--inbox", home.parent / "inbox", "--db", home.parent / "warehouse.duckdb"]


def _start(home: Path, *options: str, **env: str) -> subprocess.Popen:
    # A session of its own: the process group is killed as a whole, as a terminal or an OOM kill would.
    return subprocess.Popen([*_args(home), *options], env=_env(home, **env), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _kg_run(home: Path, *options: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([*_args(home), *options], env=_env(home, **env), capture_output=True, text=True, timeout=600)


def _wait_for(predicate, timeout: float = 180.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _instance(home: Path):
    return dg.DagsterInstance.from_config(str(home))


def _held_slots(instance, pool: str) -> set[str]:
    return set(instance.event_log_storage.get_concurrency_info(pool).active_run_ids)


def test_a_run_killed_during_llm_extraction_is_failed_and_the_next_run_completes(home):
    with FakeOpenAIServer(extraction_responder()) as server:
        normal = extraction_responder()
        server.set_responder(lambda r: Reply(content=normal(r).content, delay_s=120))  # extraction hangs
        env = {"OPENAI_BASE_URL": server.base_url, "KG_LLM_TIMEOUT_S": "300"}
        killed = _start(home, **env)
        _wait_for(lambda: server.in_flight == len(DOCUMENTS), what="the first run's requests")
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
        in_flight = server.calls

        with _instance(home) as instance:
            (wedged,) = instance.get_runs()
            assert wedged.status == dg.DagsterRunStatus.STARTED, "nothing could mark it failed"
            assert _held_slots(instance, "llm") == {wedged.run_id}, "its pool slot stays claimed"

        server.set_responder(normal)
        (home.parent / "inbox" / "new.md").write_text("# Visit\n\nSarah Chen visited DuckDB in Pittsburgh.\n")
        rerun = _kg_run(home, **env)
        assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
        assert f"run {wedged.run_id[:8]} was left STARTED by a process that is gone" in rerun.stdout
        assert "kg run succeeded" in rerun.stdout and "documents                 3" in rerun.stdout

        with _instance(home) as instance:
            dead = instance.get_run_by_id(wedged.run_id)
            assert dead.status == dg.DagsterRunStatus.FAILURE
            assert _held_slots(instance, "llm") == set() and _held_slots(instance, "duckdb") == set()
        # The requests in flight at the kill are in the call log: sent, never answered.
        with duckdb.connect(str(home.parent / "warehouse.duckdb"), read_only=True) as con:
            sent = con.execute("SELECT count(*) FROM kg.llm_calls WHERE run_id = ? AND status = 'sent'",
                               [wedged.run_id]).fetchall()[0][0]
            answered = con.execute("SELECT count(*) FROM kg.llm_calls WHERE run_id <> ? AND status = 'ok'",
                                   [wedged.run_id]).fetchall()[0][0]
        assert sent == in_flight == len(DOCUMENTS)
        assert answered == server.calls - in_flight, "every request of the rerun is logged with its answer"


def _live_blocker(instance, pool: str, process: subprocess.Popen) -> str:
    """A run of another live `kg run`-like process that holds the pool's only slot."""
    run_id = str(uuid.uuid4())
    tags = {HOST_TAG: socket.gethostname(), PID_TAG: str(process.pid), PROCESS_STARTED_TAG: process_started(process.pid)}
    instance.add_run(dg.DagsterRun(job_name="kg_pipeline", run_id=run_id, status=dg.DagsterRunStatus.STARTED, tags=tags))
    storage = instance.event_log_storage
    storage.initialize_concurrency_limit_to_default(pool)
    assert storage.claim_concurrency_slot(pool, run_id, "extraction", 0).is_claimed
    return run_id


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_run_waiting_for_a_pool_says_so_sleeps_stops_on_ctrl_c_and_goes_on_once_the_holder_dies(home):
    holder = subprocess.Popen(["sleep", "600"])
    try:
        with _instance(home) as instance:
            blocker = _live_blocker(instance, "llm", holder)
        # --no-marts: the llm pool is what this is about (test_cli runs the marts in `kg run`)
        waiting = _start(home, "--no-marts", KG_EXTRACTOR="heuristic")
        lines: list[str] = []
        _wait_for(lambda: lines.append(waiting.stdout.readline()) or "kg run: waiting" in lines[-1],
                  what="the waiting message")
        assert f"pool llm (limit 1) is in use by run {blocker[:8]} (kg run, pid {holder.pid}, STARTED)" in lines[-1]
        cpu, wall = _cpu_seconds(waiting.pid), time.monotonic()
        time.sleep(4)
        assert _cpu_seconds(waiting.pid) - cpu < 0.25 * (time.monotonic() - wall), "the wait sleeps"
        waiting.send_signal(signal.SIGINT)
        out, _ = waiting.communicate(timeout=120)  # a loaded machine (the suite's other workers) is slow to exit
        assert waiting.returncode == 130 and "interrupted while waiting for a pool; nothing ran" in out

        proceeding = _start(home, "--no-marts", KG_EXTRACTOR="heuristic")
        _wait_for(lambda: "kg run: waiting" in proceeding.stdout.readline(), what="the waiting message")
        holder.kill()
        holder.wait()
        out, _ = proceeding.communicate(timeout=600)
        assert proceeding.returncode == 0, out[-3000:]
        assert f"run {blocker[:8]} was left STARTED by a process that is gone (pid {holder.pid})" in out
        with _instance(home) as instance:
            assert instance.get_run_by_id(blocker).status == dg.DagsterRunStatus.FAILURE
            assert _held_slots(instance, "llm") == set()
    finally:
        holder.kill()
        holder.wait()


def test_credentials_in_the_base_url_and_the_api_key_are_never_printed_or_stored(home):
    password, key = "pw-4f1c9e-never-stored", "sk-test-7d2a0b-never-stored"
    with FakeOpenAIServer(extraction_responder()) as server:
        url = server.base_url.replace("http://", f"http://kg-user:{password}@")
        done = _kg_run(home, "--log-level", "DEBUG", OPENAI_BASE_URL=url, OPENAI_API_KEY=key)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert server.calls > 0 and {r.headers.get("Authorization") for r in server.records} != {None}
    assert "LLM gpt-4o-mini at http://***@127.0.0.1:" in done.stderr, "the endpoint is shown, redacted"
    # stdout and stderr, the instance (run and event storage, job snapshots, compute logs), warehouse and cache
    for secret in (password, key):
        assert secret not in done.stdout and secret not in done.stderr
        stored = [p for p in home.parent.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
        assert stored == [], secret
    with _instance(home) as instance:
        (run,) = instance.get_runs()
        events = instance.all_logs(run.run_id)
        assert any("***@" in str(e.dagster_event) for e in events if e.dagster_event)


def _session_processes(session: int) -> list[int]:
    """The processes still alive in a session (zombies are gone: they are done)."""
    alive = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if entry.name.isdigit() and fields[0] != "Z" and int(fields[3]) == session:
            alive.append(int(entry.name))
    return alive


def test_a_run_stopped_while_workers_extract_exits_with_its_workers_and_the_next_run_completes(home):
    # Batches of one chunk in two workers, each batch 2 s and more rows than a pipe holds: when the signal comes,
    # a worker has rows ready that the stopping run will never read.
    inbox = home.parent / "inbox"
    for number in range(8):
        (inbox / f"note_{number}.md").write_text(f"# Note {number}\n\nAda Brandt{number} met Cleo Dufour in Lisbon.\n")
    settings = {"KG_EXTRACTION_BATCH_CHUNKS": "1", "KG_EXTRACTION_PROCESSES": "2",
                "KG_EXTRACTOR": "kg_assets_tests.extractor_plugins:slow_bulky_extractor", "PYTHONPATH": str(ROOT)}
    run = _start(home, "--no-marts", **settings)
    lines: list[str] = []
    for line in run.stdout:
        lines.append(line)
        if "worker processes (KG_EXTRACTION_PROCESSES)" in line:
            break
    assert any("batches in 2 worker processes" in line for line in lines), "".join(lines)
    time.sleep(5)  # the first batches are done and their rows wait in the workers
    os.kill(run.pid, signal.SIGTERM)  # the run's process only, as `kill` or a supervisor would
    try:
        out, _ = run.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        pytest.fail("the run did not exit within 60 s of the signal")
    assert run.returncode != 0, out
    _wait_for(lambda: not _session_processes(run.pid), 10, "the worker processes to end")

    done = _kg_run(home, "--no-marts", **settings)
    assert done.returncode == 0, done.stdout + done.stderr
    with duckdb.connect(str(home.parent / "warehouse.duckdb"), read_only=True) as con:
        extracted = con.execute("SELECT count(DISTINCT document_id) FROM kg.chunk_extractions WHERE status = 'ok'").fetchone()[0]
    assert extracted == len(DOCUMENTS) + 8


@pytest.mark.parametrize("step, says", [("documents", "new or changed"), ("chunks", "chunks from")])
def test_a_run_killed_between_ingest_batches_leaves_the_rest_to_the_next_run(home, step, says):
    # One file per batch: the kill lands after the step wrote its first batch and before it wrote them all.
    inbox = home.parent / "inbox"
    for number in range(40):
        (inbox / f"memo_{number:02}.md").write_text(
            f"# Memo {number}\n\n" + f"Ada Brandt{number} met Cleo Dufour in Lisbon on day {number}.\n" * 200)
    run = _start(home, "--no-marts", KG_INGEST_BATCH_BYTES="1")
    lines: list[str] = []
    for line in run.stdout:
        lines.append(line)
        if f"- {step} - written (batch 1 of 42)" in line and says in line:
            os.killpg(run.pid, signal.SIGKILL)
            break
    run.wait(timeout=30)
    assert any(f"- {step} - written (batch 1 of 42)" in line for line in lines), "".join(lines)
    table = "documents WHERE valid_until IS NULL" if step == "documents" else "chunks"
    with duckdb.connect(str(home.parent / "warehouse.duckdb"), read_only=True) as con:
        written = con.execute(f"SELECT count(DISTINCT document_id) FROM kg.{table}").fetchone()[0]
    assert 1 <= written < 42, f"the kill came after {written} of 42 documents' {step} rows: not between batches"

    done = _kg_run(home, "--no-marts", KG_INGEST_BATCH_BYTES="1")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with duckdb.connect(str(home.parent / "warehouse.duckdb"), read_only=True) as con:
        chunked, extracted = con.execute("""SELECT count(DISTINCT c.document_id), count(DISTINCT e.document_id)
            FROM kg.chunks c LEFT JOIN kg.chunk_extractions e ON e.chunk_id = c.chunk_id AND e.status = 'ok'""").fetchone()
        versions = con.execute("SELECT max(n) FROM (SELECT count(*) AS n FROM kg.documents GROUP BY document_id)").fetchone()[0]
    assert (chunked, extracted) == (42, 42) and versions == 1, (chunked, extracted, versions)

"""Benchmark `kg run` on synthetic corpora: wall time, peak memory, rerun cost, row counts, step timings.

    .venv/bin/python benchmarks/run.py [--sizes 1000 10000] [--chars 2000] [--seed 0]
                                                  [--timeout 900] [--keep] [--changed 10]
                                                  [--extractor module:attr]

For each size: generate a corpus (benchmarks/generate_corpus.py) into a fresh temp folder under /tmp,
make an empty Dagster home there holding a copy of the project's dagster.yaml, run
``kg run --inbox ... --db ... --dagster-home ... --log-level INFO`` as a subprocess (no OpenAI env vars,
so the offline heuristic extractor is used, or KG_EXTRACTOR=--extractor), then run it a second time on the
unchanged inbox, then a third time after appending a sentence to --changed documents.
Prints a Markdown table, a per-step breakdown read from the run's Dagster event log, and writes
benchmarks/out/results.json plus the full logs of every `kg run` under benchmarks/out/logs/.
Exits non-zero when a `kg run` fails or times out (its log tail is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

from generate_corpus import generate  # noqa: E402

KG = Path(sys.executable).with_name("kg")
GNU_TIME = Path("/usr/bin/time")
COUNTED = ("documents", "chunks", "entity_mentions", "local_relations", "entities", "graph_nodes", "graph_edges")
STEPS = ("documents", "chunks", "extraction", "linked_entities", "entity_summaries", "knowledge_graph",
         "entity_attributes", "kg_dbt_models")
PHASES = ("first", "rerun", "changed")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


# ---- one `kg run` ----------------------------------------------------------------------------------

def _gnu_time_works() -> bool:
    if not GNU_TIME.exists():
        return False
    try:
        probe = subprocess.run([str(GNU_TIME), "-v", "true"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Maximum resident set size" in probe.stderr


class TreeMemory:
    """The peak of the summed resident memory of every process in a session (a `kg run` and the extraction workers
    it spawns), sampled from /proc every `interval` seconds: GNU time's peak is one process's, not the tree's."""

    def __init__(self, session: int, interval: float = 0.2):
        self.session, self.interval, self.peak_kb = session, interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _rss_kb(self) -> int:
        total = 0
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(entry.path, "stat").read_text()
                # fields after the command's closing parenthesis: state, ppid, pgrp, session, ...
                if int(stat.rsplit(")", 1)[1].split()[3]) == self.session:
                    total += int(Path(entry.path, "statm").read_text().split()[1]) * PAGE_KB
            except (OSError, IndexError, ValueError):
                continue  # the process ended between the listing and the read
        return total

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak_kb = max(self.peak_kb, self._rss_kb())

    def __enter__(self) -> TreeMemory:
        if Path("/proc/self/stat").exists():
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    @property
    def peak_mb(self) -> float | None:
        return self.peak_kb / 1024 if self.peak_kb else None


def run_kg(inbox: Path, db: Path, home: Path, log: Path, timeout: float | None, use_gnu_time: bool,
           extra_env: dict[str, str] | None = None) -> dict:
    """Run `kg run` once; returns status, wall seconds, peak RSS (MB) and the log path."""
    env = {k: v for k, v in os.environ.items() if k not in {"OPENAI_API_KEY", "OPENAI_BASE_URL"}}
    env.pop("KG_EXTRACTOR", None)
    env.update(extra_env or {})  # may set KG_EXTRACTOR (an in-process plug-in)
    cmd = [str(KG), "run", "--inbox", str(inbox), "--db", str(db), "--dagster-home", str(home), "--log-level", "INFO"]
    time_file = log.with_suffix(".time")
    if use_gnu_time:
        cmd = [str(GNU_TIME), "-v", "-o", str(time_file), *cmd]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started_at = time.time()
    started = time.perf_counter()
    status = "ok"
    with log.open("w") as out:
        # Own session, so a timeout can stop the whole child tree (and only it), and its memory is summed.
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=home, start_new_session=True)
        with TreeMemory(proc.pid) as tree:
            try:
                code = proc.wait(timeout=timeout or None)
            except subprocess.TimeoutExpired:
                # SIGINT first: `kg` stops with KeyboardInterrupt while GNU time ignores SIGINT, so it still
                # writes the peak memory report. Then SIGTERM, then SIGKILL.
                code = None
                for sig, grace in ((signal.SIGINT, 60), (signal.SIGTERM, 30), (signal.SIGKILL, None)):
                    try:
                        os.killpg(proc.pid, sig)
                    except ProcessLookupError:
                        pass
                    try:
                        code = proc.wait(timeout=grace)
                        break
                    except subprocess.TimeoutExpired:
                        continue
                status = "timeout"
    seconds = time.perf_counter() - started
    if status == "ok" and code != 0:
        status = f"failed (exit {code})"
    peak_mb = None
    if use_gnu_time and time_file.exists():
        match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", time_file.read_text())
        peak_mb = int(match.group(1)) / 1024 if match else None
    if peak_mb is None:
        after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        # ru_maxrss of children is a running maximum: only a new maximum is attributable to this child.
        peak_mb = after / 1024 if after > before else None
    return {"status": status, "exit_code": code, "seconds": round(seconds, 2), "peak_mb": _round(peak_mb),
            "peak_tree_mb": _round(tree.peak_mb), "started_at": started_at, "log": str(log)}


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def log_tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(no log: {exc})"


# ---- what the run did, from the Dagster event log --------------------------------------------------

def _newest_run_db(home: Path, exclude: set[Path]) -> Path | None:
    runs = [p for p in (home / "history" / "runs").glob("*.db") if p.name != "index.db" and p not in exclude]
    return max(runs, key=lambda p: p.stat().st_mtime) if runs else None


def _ts(value: str) -> float:
    return datetime.fromisoformat(value).replace(tzinfo=UTC).timestamp()


def step_timings(run_db: Path | None, started_at: float, ended_at: float) -> dict:
    """Seconds per phase of one run, from its SQLite event log (default Dagster storage).

    For each asset step: `compute` is STEP_START to its first output (the asset function itself) and
    `events` is the rest of the step, mostly Dagster writing one ASSET_MATERIALIZATION per partition.
    """
    if run_db is None or not run_db.exists():
        return {}
    con = sqlite3.connect(f"file:{run_db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT step_key, dagster_event_type, timestamp FROM event_logs "
            "WHERE dagster_event_type IS NOT NULL ORDER BY id"
        ).fetchall()
    finally:
        con.close()
    if not rows:
        return {}
    first_event = _ts(rows[0][2])
    events: dict[tuple[str | None, str], list[float]] = {}
    for step, kind, ts in rows:
        events.setdefault((step, kind), []).append(_ts(ts))

    def first(step: str | None, kind: str) -> float | None:
        return events.get((step, kind), [None])[0]

    pipeline_start = first(None, "PIPELINE_START")
    pipeline_end = first(None, "PIPELINE_SUCCESS") or first(None, "PIPELINE_FAILURE")
    out: dict = {
        "startup_s": round(first_event - started_at, 2),  # interpreter, imports, inbox scan, partitions
        "planning_s": round((pipeline_start or first_event) - first_event, 2),
        "planned_events": sum(len(v) for (s, k), v in events.items() if k.endswith("_PLANNED")),
        "materialization_events": sum(len(v) for (s, k), v in events.items() if k == "ASSET_MATERIALIZATION"),
    }
    # Asset steps in start order: the known pipeline steps plus any other asset step (e.g. dbt models).
    started_steps = [(times[0], step) for (step, kind), times in events.items() if kind == "STEP_START"]
    asset_steps = [step for _, step in sorted(started_steps)
                   if step in STEPS or (step, "ASSET_MATERIALIZATION") in events
                   or (step, "ASSET_CHECK_EVALUATION") not in events]
    out["asset_steps"] = asset_steps
    for step in asset_steps:
        start = first(step, "STEP_START")
        if start is None:
            continue
        done = first(step, "STEP_SUCCESS") or first(step, "STEP_FAILURE")
        output = first(step, "STEP_OUTPUT")
        end = done or (pipeline_end or ended_at)
        out[step] = {
            "total_s": round(end - start, 2),
            "compute_s": round((output or end) - start, 2),
            "events_s": round(end - output, 2) if output else None,
            "finished": done is not None and first(step, "STEP_FAILURE") is None,
        }
    checks = 0.0
    for (step, kind), times in events.items():
        if kind == "STEP_START" and step not in asset_steps:
            end = first(step, "STEP_SUCCESS") or first(step, "STEP_FAILURE")
            if end:
                checks += end - times[0]
    out["checks_s"] = round(checks, 2)
    if pipeline_end:
        out["shutdown_s"] = round(ended_at - pipeline_end, 2)  # counts, summary, interpreter exit
    return out


def warehouse_counts(db: Path) -> dict[str, int]:
    import duckdb

    if not db.exists():
        return {}
    con = duckdb.connect(str(db), read_only=True)
    try:
        counts = {}
        for table in COUNTED:
            columns = {r[0] for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = 'kg' AND table_name = ?",
                [table]).fetchall()}
            if not columns:
                continue
            where = "WHERE valid_until IS NULL" if "valid_until" in columns else ""
            counts[table] = con.execute(f"SELECT count(*) FROM kg.{table} {where}").fetchone()[0]
        return counts
    finally:
        con.close()


# ---- one size --------------------------------------------------------------------------------------

def postgres_instance(home: Path, size: int) -> dict[str, str]:
    """A fresh PostgreSQL database as the Dagster instance storage (deploy/dagster.postgres.yaml)."""
    import psycopg2

    env = {"DAGSTER_PG_HOST": os.environ.get("DAGSTER_PG_HOST", "127.0.0.1"), "DAGSTER_PG_PORT": os.environ.get("DAGSTER_PG_PORT", "5432"),
           "DAGSTER_PG_USER": os.environ.get("DAGSTER_PG_USER", "postgres"), "DAGSTER_PG_PASSWORD": os.environ.get("DAGSTER_PG_PASSWORD", ""),
           "DAGSTER_PG_DB": f"kg_bench_{size}_{os.getpid()}"}
    con = psycopg2.connect(host=env["DAGSTER_PG_HOST"], port=env["DAGSTER_PG_PORT"], user=env["DAGSTER_PG_USER"],
                           password=env["DAGSTER_PG_PASSWORD"], dbname="postgres")
    con.autocommit = True
    with con.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{env["DAGSTER_PG_DB"]}"')
        cur.execute(f'CREATE DATABASE "{env["DAGSTER_PG_DB"]}"')
    con.close()
    shutil.copy(ROOT / "deploy" / "dagster.postgres.yaml", home / "dagster.yaml")
    return env


def bench_size(size: int, chars: int, seed: int, timeout: float | None, keep: bool, use_gnu_time: bool,
               instance: str = "sqlite", changed: int = 10, extractor: str | None = None) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"kg_bench_{size}_"))
    inbox, db, home = work / "inbox", work / "warehouse.duckdb", work / "dagster_home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    extra_env = postgres_instance(home, size) if instance == "postgres" else {}
    if extractor:
        extra_env["KG_EXTRACTOR"] = extractor
    logs = OUT / "logs"
    logs.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    paths = generate(inbox, size, chars=chars, seed=seed)
    corpus_bytes = sum(p.stat().st_size for p in paths)
    result: dict = {
        "size": size, "chars_per_doc": chars, "seed": seed, "workdir": str(work), "instance": instance,
        "extractor": extractor or "heuristic", "changed_docs": changed,
        "generate_s": round(time.perf_counter() - started, 2), "corpus_mb": round(corpus_bytes / 1e6, 2),
    }
    print(f"[{size:,} docs] corpus {corpus_bytes / 1e6:.1f} MB in {result['generate_s']}s at {work}", flush=True)

    seen: set[Path] = set()
    for phase in PHASES:
        if phase == "changed":
            if not changed:
                continue
            for path in paths[:: max(1, len(paths) // changed)][:changed]:
                with path.open("a") as file:
                    file.write("\nHortensia Vale joined Lumen Analytics in Reykjavik.\n")
        print(f"[{size:,} docs] kg run ({phase}) ...", flush=True)
        run = run_kg(inbox, db, home, logs / f"{size}_{instance}_{phase}.log", timeout, use_gnu_time, extra_env)
        run_db = _newest_run_db(home, seen)
        if run_db:
            seen.add(run_db)
        run["steps"] = step_timings(run_db, run["started_at"], run["started_at"] + run["seconds"])
        result[phase] = run
        print(f"[{size:,} docs] kg run ({phase}): {run['status']} in {run['seconds']:.1f}s, "
              f"peak {run['peak_mb']} MB (all its processes: {run['peak_tree_mb']} MB); log {run['log']}", flush=True)
        if run["status"] != "ok":
            print(f"---- tail of {run['log']} ----\n{log_tail(Path(run['log']))}\n----", file=sys.stderr, flush=True)
            break
    try:
        counts = warehouse_counts(db)
    except Exception as exc:  # a killed run may leave the file unreadable; the timings still count
        counts = {"error": f"{type(exc).__name__}: {exc}"}
    # After a timeout the tables hold whatever the stopped run wrote: kept apart from the results.
    result["counts" if result["first"]["status"] != "timeout" else "counts_partial"] = counts
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return result


# ---- report ----------------------------------------------------------------------------------------

def _fmt(value, spec: str = ",") -> str:
    if value is None:
        return "–"
    return format(value, spec)


def markdown(results: list[dict]) -> str:
    head = ("| size | extractor | first run s | docs/s | peak MB | peak MB, all processes | rerun s (nothing changed) "
            "| rerun s (changed docs) | chunks | mentions | entities | edges |\n"
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for r in results:
        first, rerun, again, counts = r["first"], r.get("rerun"), r.get("changed"), r.get("counts", {})
        first_s = f"{first['seconds']:.1f}" if first["status"] == "ok" else f"{first['status']} after {first['seconds']:.0f}"
        rerun_s, again_s = ("–" if not x else f"{x['seconds']:.1f}" if x["status"] == "ok" else x["status"]
                            for x in (rerun, again))
        again_s = f"{again_s} ({r.get('changed_docs')} docs)" if again else again_s
        docs_s = f"{r['size'] / first['seconds']:.1f}" if first["status"] == "ok" else "–"
        peak, tree = (max((x.get(k) for x in (first, rerun, again) if x and x.get(k)), default=None)
                      for k in ("peak_mb", "peak_tree_mb"))
        rows.append(f"| {r['size']:,} | {r.get('extractor', 'heuristic')} | {first_s} | {docs_s} | {_fmt(peak, ',.0f')} "
                    f"| {_fmt(tree, ',.0f')} "
                    f"| {rerun_s} | {again_s} "
                    f"| {_fmt(counts.get('chunks'))} | {_fmt(counts.get('entity_mentions'))} "
                    f"| {_fmt(counts.get('entities'))} | {_fmt(counts.get('graph_edges'))} |")
    return "\n".join([head, *rows])


def steps_markdown(results: list[dict]) -> str:
    """Seconds per phase, first run / rerun, for each size."""
    phases = [("startup (imports, scan, partitions)", "startup_s"), ("run planning events", "planning_s")]
    steps_seen = [s for r in results for p in PHASES if r.get(p)
                  for s in r[p].get("steps", {}).get("asset_steps", [])]
    phases += [(f"{s}: compute / events", s) for s in dict.fromkeys([*STEPS, *steps_seen])]
    phases += [("asset checks", "checks_s"), ("after run (counts, exit)", "shutdown_s")]
    cols = [(r["size"], p) for r in results for p in PHASES if r.get(p)]
    head = "| phase | " + " | ".join(f"{size:,} {p}" for size, p in cols) + " |\n|---|" + "---:|" * len(cols)
    lines = [head]
    for label, key in phases:
        cells = []
        for size, p in cols:
            steps = next(r for r in results if r["size"] == size)[p].get("steps", {})
            value = steps.get(key)
            if isinstance(value, dict):
                events = "–" if value["events_s"] is None else f"{value['events_s']:.1f}"
                cell = f"{value['compute_s']:.1f} / {events}" + ("" if value["finished"] else " (unfinished)")
            else:
                cell = "–" if value is None else f"{value:.1f}"
            cells.append(cell)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    counts = []
    for size, p in cols:
        steps = next(r for r in results if r["size"] == size)[p].get("steps", {})
        counts.append(f"{_fmt(steps.get('planned_events'))} / {_fmt(steps.get('materialization_events'))}")
    lines.append("| Dagster events: planned / materializations | " + " | ".join(counts) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark `kg run` on synthetic corpora.")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000], help="corpus sizes (default 1000 10000)")
    parser.add_argument("--chars", type=int, default=2000, help="approximate characters per document (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    parser.add_argument("--timeout", type=float, default=900,
                        help="stop a `kg run` after this many seconds, 0 for no limit (default 900)")
    parser.add_argument("--keep", action="store_true", help="keep the temp corpus, warehouse and Dagster home")
    parser.add_argument("--instance", choices=["sqlite", "postgres"], default="sqlite",
                        help="Dagster instance storage: the default local SQLite, or PostgreSQL (deploy/dagster.postgres.yaml)")
    parser.add_argument("--changed", type=int, default=10, help="documents edited before the third run (default 10, 0: no third run)")
    parser.add_argument("--extractor", help="KG_EXTRACTOR for the runs, e.g. kg_assets.extractors.stub:InstantStubExtractor")
    args = parser.parse_args(argv)

    if not KG.exists():
        print(f"benchmarks: {KG} not found; install the project into this interpreter's environment", file=sys.stderr)
        return 2
    use_gnu_time = _gnu_time_works()
    results = []
    for size in args.sizes:
        results.append(bench_size(size, args.chars, args.seed, args.timeout, args.keep, use_gnu_time, args.instance,
                                  args.changed, args.extractor))
        if any(results[-1][p]["status"] != "ok" for p in PHASES if p in results[-1]):
            break  # a failed or timed-out size makes larger sizes pointless

    OUT.mkdir(parents=True, exist_ok=True)
    report = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "peak_rss_source": "/usr/bin/time -v" if use_gnu_time else "getrusage(RUSAGE_CHILDREN)",
        "results": results,
    }
    (OUT / f"results_{args.instance}.json").write_text(json.dumps(report, indent=2) + "\n")
    print()
    print(markdown(results))
    print()
    print("Seconds per phase (asset steps: compute / Dagster event writes):")
    print()
    print(steps_markdown(results))
    print(f"\nresults: {OUT / f'results_{args.instance}.json'}; logs: {OUT / 'logs'}")
    ok = all(r[p]["status"] == "ok" for r in results for p in PHASES if p in r)
    ok = ok and len(results) == len(args.sizes)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

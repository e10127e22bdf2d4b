"""Benchmark the DuckLake backend: partition runs in parallel, the catalog's overhead, its commit rate.

    .venv/bin/python benchmarks/lake.py [--size 1000] [--parallel 1 2] [--commit-seconds 10] [--timeout 3600]

One synthetic corpus (benchmarks/generate_corpus.py), then, each in a fresh Dagster home (llm pool sized to
the number of workers) and, for the lake, a fresh PostgreSQL catalog database on 127.0.0.1:5432 (user
postgres, or the PG* variables):

- `embedded`: the DuckDB file, one `kg run --partitions-only`, then `kg run` consolidating;
- `lake xN` for each N of --parallel: N `kg run --partitions-only` at once, each over every N-th document,
  then one `kg run` consolidating.

Each row gives the partition phase (wall, docs/s, docs/s per worker), the consolidating run, the DuckLake
snapshots (catalog commits) the phase made, and the load average (`uptime`) before and after, since the
machine is shared. Then the catalog's commit rate: 1 and 2 processes committing one-row inserts to a lake
for --commit-seconds, and the projection to 8 machines from the measured rates. Writes
benchmarks/out/lake.json and the logs under benchmarks/out/logs/; exits non-zero when a run fails.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate_corpus import generate  # noqa: E402
from run import KG, OUT, ROOT, log_tail  # noqa: E402

from kg_assets.testing.postgres import pg_admin  # noqa: E402

PG = "host={} port={} user={}".format(os.environ.get("PGHOST", "127.0.0.1"), os.environ.get("PGPORT", "5432"),
                                      os.environ.get("PGUSER", "postgres"))


def load() -> str:
    return "{:.1f}/{:.1f}/{:.1f}".format(*os.getloadavg())


CATALOGS: list[str] = []  # databases this benchmark made, dropped at the end unless --keep


def fresh_catalog(name: str) -> str:
    pg_admin(PG, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    pg_admin(PG, f'CREATE DATABASE "{name}"')
    CATALOGS.append(name)
    return f"{PG} dbname={name}"


def snapshots(catalog: str) -> tuple[int, int]:
    """DuckLake snapshots so far (one per committed transaction): all of them, and those that wrote rows (not
    the catalog's own tables and views, which a new lake creates once)."""
    import psycopg2

    con = psycopg2.connect(catalog)
    try:
        with con.cursor() as cur:
            cur.execute("SELECT count(*), count(*) FILTER (WHERE changes_made LIKE '%inserted_into_table%' "
                        "OR changes_made LIKE '%deleted_from_table%') FROM ducklake_snapshot_changes")
            return cur.fetchone()
    finally:
        con.close()


def kg(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    out = log.open("w")
    proc = subprocess.Popen([str(KG), *args], env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    out.close()
    return proc


def wait_all(procs: list[tuple[subprocess.Popen, Path]], started: float, timeout: float) -> list[float]:
    """Each process's seconds since `started`; raises with its log tail when one fails or outlives `timeout`."""
    seconds: dict[int, float] = {}
    while len(seconds) < len(procs):
        for i, (proc, log) in enumerate(procs):
            if i not in seconds and proc.poll() is not None:
                if proc.returncode != 0:
                    raise RuntimeError(f"exit {proc.returncode}; tail of {log}:\n{log_tail(log)}")
                seconds[i] = time.perf_counter() - started
        if time.perf_counter() - started > timeout:
            for proc, _ in procs:
                proc.kill()
            raise RuntimeError(f"timed out after {timeout:g} s; logs {[str(log) for _, log in procs]}")
        time.sleep(0.2)
    return [seconds[i] for i in range(len(procs))]


def bench(mode: str, workers: int, inbox: Path, keys: list[str], work: Path, timeout: float) -> dict:
    import dagster as dg

    name = f"{mode}_x{workers}"
    home = work / f"home_{name}"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        # The heuristic extractor calls no LLM; its step is still in pool `llm`, sized here to the workers.
        instance.event_log_storage.set_concurrency_slots("llm", workers)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KG_", "DAGSTER_"))}
    env["DAGSTER_HOME"] = str(home)
    catalog = None
    if mode == "lake":
        catalog = fresh_catalog(f"kg_bench_lake_{workers}_{os.getpid()}")
        env.update(KG_WAREHOUSE_BACKEND="ducklake", KG_DUCKLAKE_CATALOG=catalog,
                   KG_DUCKLAKE_DATA_PATH=str(work / f"data_{name}"))
    else:
        env["KG_DUCKDB_PATH"] = str(work / f"{name}.duckdb")
    logs = OUT / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    result: dict = {"mode": mode, "workers": workers, "load_before": load()}
    print(f"[{name}] {len(keys):,} documents, {workers} partition run(s) at once; load {result['load_before']}",
          flush=True)
    procs, started = [], time.perf_counter()
    for i in range(workers):
        # One worker takes the whole inbox as the planner sees it; several split it by document.
        scope = [] if workers == 1 else [arg for key in keys[i::workers] for arg in ("--document", key)]
        log = logs / f"lake_{name}_worker{i}.log"
        procs.append((kg(["run", "--inbox", str(inbox), "--partitions-only", *scope], env, log), log))
    worker_s = wait_all(procs, started, timeout)
    result.update(partitions_s=round(max(worker_s), 1), worker_s=[round(s, 1) for s in worker_s],
                  load_partitions=load())
    result["docs_per_s"] = round(len(keys) / result["partitions_s"], 1)
    result["docs_per_s_per_worker"] = round(sum(len(keys[i::workers]) / s for i, s in enumerate(worker_s)) / workers, 1)
    result["partition_commits"], result["partition_data_commits"] = snapshots(catalog) if catalog else (None, None)
    log = logs / f"lake_{name}_consolidate.log"
    started = time.perf_counter()
    result["consolidate_s"] = round(wait_all([(kg(["run", "--inbox", str(inbox)], env, log), log)], started, timeout)[0], 1)
    result["load_after"] = load()
    if catalog:
        result["total_commits"], result["total_data_commits"] = snapshots(catalog)
    print(f"[{name}] {json.dumps(result)}", flush=True)
    return result


def _commit_loop(catalog: str, data: str, seconds: float, worker: int, out) -> None:
    sys.path.insert(0, str(ROOT))
    from kg_assets.storage.lake import connect_lake

    con = connect_lake(catalog, data)
    commits, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        con.execute("INSERT INTO commit_probe VALUES ($w, $i)", {"w": worker, "i": commits})  # autocommit: one snapshot
        commits += 1
    con.close()
    out.put(commits)


def commit_rate(work: Path, seconds: float, writers: int) -> dict:
    """One-row commits per second to a DuckLake, `writers` processes at once, each on its own connection."""
    sys.path.insert(0, str(ROOT))
    from kg_assets.storage.lake import connect_lake

    catalog, data = fresh_catalog(f"kg_bench_commits_{writers}_{os.getpid()}"), str(work / f"commits_{writers}")
    with connect_lake(catalog, data) as con:
        con.execute("CREATE TABLE commit_probe (worker INTEGER, i INTEGER)")
    before = load()
    out = multiprocessing.get_context("spawn").Queue()
    procs = [multiprocessing.get_context("spawn").Process(target=_commit_loop, args=(catalog, data, seconds, w, out))
             for w in range(writers)]
    for proc in procs:
        proc.start()
    total = sum(out.get(timeout=seconds + 120) for _ in procs)
    for proc in procs:
        proc.join()
    result = {"writers": writers, "commits": total, "commits_per_s": round(total / seconds, 1), "load_before": before,
              "load_after": load()}
    print(f"[commits x{writers}] {json.dumps(result)}", flush=True)
    return result


def markdown(runs: list[dict], commits: list[dict], size: int) -> str:
    lines = ["| backend | partition runs at once | partition phase s | docs/s | docs/s per worker | consolidating run s "
             "| catalog commits after partitions / after all (of them writing rows) | load before → after partitions → after all |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in runs:
        commits_cell = "–" if r["partition_commits"] is None else (
            f"{r['partition_commits']} / {r['total_commits']} ({r['partition_data_commits']} / {r['total_data_commits']})")
        lines.append(f"| {'DuckLake' if r['mode'] == 'lake' else 'embedded file'} | {r['workers']} | {r['partitions_s']} "
                     f"| {r['docs_per_s']} | {r['docs_per_s_per_worker']} | {r['consolidate_s']} | {commits_cell} "
                     f"| {r['load_before']} → {r['load_partitions']} → {r['load_after']} |")
    lines += ["", "| catalog writers | one-row commits/s | load before → after |", "|---:|---:|---|"]
    lines += [f"| {c['writers']} | {c['commits_per_s']} | {c['load_before']} → {c['load_after']} |" for c in commits]
    lake = [r for r in runs if r["mode"] == "lake"]
    if lake and commits:
        best = max(lake, key=lambda r: r["docs_per_s_per_worker"])
        per_run = lake[0]["partition_data_commits"] / lake[0]["workers"]
        rate = max(c["commits_per_s"] for c in commits)
        machines = 8
        wall = size / (machines * best["docs_per_s_per_worker"])
        lines += ["", f"On paper, 8 machines: {best['docs_per_s_per_worker']} docs/s per worker × {machines} = "
                  f"{best['docs_per_s_per_worker'] * machines:.0f} docs/s in the partition phase ({wall:.0f} s for these "
                  f"{size:,} documents), plus the single consolidating run ({best['consolidate_s']} s here). A partition "
                  f"run wrote rows in {per_run:.0f} commits whatever its size, so 8 machines need "
                  f"{machines * per_run / max(best['worker_s']):.2f} commits/s of a catalog that took {rate} commits/s."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the DuckLake backend (partition runs in parallel).")
    parser.add_argument("--size", type=int, default=1000, help="documents in the corpus (default 1000)")
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 2], help="lake partition runs at once (default 1 2)")
    parser.add_argument("--chars", type=int, default=2000, help="approximate characters per document (default 2000)")
    parser.add_argument("--commit-seconds", type=float, default=10, help="length of each commit-rate loop (default 10)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds allowed per phase (default 3600)")
    parser.add_argument("--keep", action="store_true", help="keep the temp corpus, warehouses and Dagster homes")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix=f"kg_bench_lake_{args.size}_"))
    inbox = work / "inbox"
    generate(inbox, args.size, chars=args.chars, seed=0)
    keys = sorted(str(p.relative_to(inbox)) for p in inbox.rglob("*") if p.is_file())
    try:
        runs = [bench("embedded", 1, inbox, keys, work, args.timeout)]
        runs += [bench("lake", n, inbox, keys, work, args.timeout) for n in args.parallel]
        commits = [commit_rate(work, args.commit_seconds, writers) for writers in (1, 2)]
    except RuntimeError as exc:
        print(f"benchmarks/lake.py: a run failed: {exc}", file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
            for name in CATALOGS:
                pg_admin(PG, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    report = {"generated_at": datetime.now(UTC).isoformat(timespec="seconds"), "cpus": os.cpu_count(),
              "size": args.size, "runs": runs, "commits": commits}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "lake.json").write_text(json.dumps(report, indent=2) + "\n")
    print()
    print(markdown(runs, commits, args.size))
    return 0


if __name__ == "__main__":
    sys.exit(main())

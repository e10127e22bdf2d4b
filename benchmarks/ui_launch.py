"""Benchmark a launch from the Dagster UI: end to end, and where the time goes.

    .venv/bin/python benchmarks/ui_launch.py [--repeat 3] [--port 3399]

Builds the sample inbox (data/inbox) with `kg run` into a fresh temp folder with its own Dagster home (a copy
of the project's dagster.yaml), starts `dagster dev -w workspace.yaml` there, waits until the code location
has loaded, then launches a materialization of `graph_nodes` (with `graph_edges`, which the same step writes)
through the webserver's GraphQL API, as the UI's Materialize button does, --repeat times one after the
other. For each launch it prints the time from the request to the run's end as the client sees it, and,
from the run's event log: queued -> dequeued (the daemon), dequeued -> run worker started (process launch,
imports, loading the definitions), and the run's own steps. Prints the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MATERIALIZE = """mutation($params: ExecutionParams!) { launchPipelineExecution(executionParams: $params) {
  __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }"""
STATUS = """query($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }"""
EVENTS = """query($id: ID!) { logsForRun(runId: $id) { ... on EventConnection {
  events { __typename ... on MessageEvent { timestamp message } } } } }"""
JOB = """{ pipelineOrError(params: {pipelineName: "kg_pipeline", repositoryName: "__repository__",
  repositoryLocationName: "kg_assets"}) { __typename } }"""
PARAMS = {"selector": {"repositoryLocationName": "kg_assets", "repositoryName": "__repository__",
                       "pipelineName": "__ASSET_JOB",
                       "assetSelection": [{"path": ["graph_nodes"]}, {"path": ["graph_edges"]}]},
          "mode": "default", "runConfigData": "{}"}


def graphql(port: int, query: str, variables: dict | None = None) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"query": query, "variables": variables or {}}).encode())
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["data"]


def wait_for_location(port: int, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if graphql(port, JOB)["pipelineOrError"]["__typename"] == "Pipeline":
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"the code location did not load within {timeout_s:.0f}s")


def launch_once(port: int, show_events: bool = False) -> dict[str, float]:
    started = time.time()
    answer = graphql(port, MATERIALIZE, {"params": PARAMS})["launchPipelineExecution"]
    if answer["__typename"] != "LaunchRunSuccess":
        raise SystemExit(f"launch failed: {answer}")
    run_id = answer["run"]["runId"]
    while True:
        run = graphql(port, STATUS, {"id": run_id})["runOrError"]
        if run["status"] in ("SUCCESS", "FAILURE", "CANCELED"):
            break
        time.sleep(0.1)
    ended = time.time()
    if run["status"] != "SUCCESS":
        raise SystemExit(f"run {run_id} ended {run['status']}")
    at = {}
    events = graphql(port, EVENTS, {"id": run_id})["logsForRun"]["events"]
    for event in events:
        at.setdefault(event["__typename"], int(event["timestamp"]) / 1000)
    if show_events:
        for event in events:
            print(f"  {int(event['timestamp']) / 1000 - started:6.2f}s {event['__typename']}: {event['message'][:110]}")
    return {"run_id": run_id, "end_to_end_s": ended - started,
            "queued_s": at["RunStartingEvent"] - at["RunEnqueuedEvent"],
            "worker_start_s": at["RunStartEvent"] - at["RunStartingEvent"],
            "steps_s": at["RunSuccessEvent"] - at["RunStartEvent"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--port", type=int, default=3399)
    parser.add_argument("--events", action="store_true", help="print each run's events, in seconds from the launch")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="kg_ui_launch_"))
    home = folder / "dagster_home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    shutil.copytree(ROOT / "data" / "inbox", folder / "inbox")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KG_", "DAGSTER_"))},
           "DAGSTER_HOME": str(home), "KG_INBOX": str(folder / "inbox"), "KG_DUCKDB_PATH": str(folder / "warehouse.duckdb")}
    print(f"load average before: {os.getloadavg()}")
    subprocess.run([BIN / "kg", "run", "--log-level", "WARNING"], cwd=ROOT, env=env, check=True, capture_output=True)
    server = subprocess.Popen([BIN / "dagster", "dev", "-w", "workspace.yaml", "-p", str(args.port)], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_location(args.port)
        print("| launch (run) | end to end s | queued s | run worker start s | steps s |\n|---|---|---|---|---|")
        for n in range(1, args.repeat + 1):
            t = launch_once(args.port, args.events)
            print(f"| {n} ({t['run_id'][:8]}) | {t['end_to_end_s']:.1f} | {t['queued_s']:.1f} | {t['worker_start_s']:.1f} | {t['steps_s']:.1f} |")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
        shutil.rmtree(folder, ignore_errors=True)
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Check the Dagster UI the way a user sees it: headless Chromium opens six pages and each must show its piece.

    apt-get install -y chromium chromium-driver        # Debian's browser and its driver
    .venv/bin/python scripts/ui_check.py               # build the sample, start `dagster dev`, check, stop
    .venv/bin/python scripts/ui_check.py --url http://localhost:3000   # check a UI that is already running

By default it copies data/inbox to a temporary folder, runs `kg run` there with its own DAGSTER_HOME (the
project's dagster.yaml), starts `dagster dev -w workspace.yaml` on that instance, waits for the code location to
load (the GraphQL API), then opens and checks:

  lineage     the global asset lineage draws every asset group, and the assets once "Expand all groups"
  picture     graph_nodes' asset page shows `graph_picture` drawn in place (an <img> of real size, no toggle)
  partitions  documents' Partitions tab, an arrival day selected, says what a key is (an arrival day)
  checks      linked_entities' Checks tab lists each of its checks, passed
  job runs    kg_pipeline's Runs tab lists the `kg run` run (not "No runs found")
  run         that run's page: succeeded, run of kg_pipeline

Each page gets a PNG in --out (default: a new temporary folder, printed at the end). Exit 0 when every check
passes, 1 naming the missing pieces, 2 when the sample or the UI could not be started. 1.5 to 3 minutes on
2 cores, most of it `kg run` and the code location loading (docs/testing.md, "The UI check").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

ROOT = Path(__file__).resolve().parents[1]
LOCATION, JOB, CHECKED = "kg_assets", "kg_pipeline", "linked_entities"  # CHECKED: an asset with several checks


class SetupError(Exception):
    """The sample or the UI could not be started: nothing was checked (exit 2)."""


class Missing(Exception):
    """A piece the page should show and does not."""


def need(value, reason: str):
    if not value:
        raise Missing(reason)
    return value


def graphql(url: str, query: str) -> dict:
    request = urllib.request.Request(f"{url}/graphql", data=json.dumps({"query": query}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["data"]


def build_sample(work: Path) -> dict[str, str]:
    """`kg run` on a copy of data/inbox, with a warehouse and a Dagster instance of its own; their environment."""
    shutil.copytree(ROOT / "data" / "inbox", work / "inbox")
    (work / "dagster_home").mkdir()
    shutil.copy(ROOT / "dagster.yaml", work / "dagster_home" / "dagster.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_", "DAGSTER_", "OPENAI_"))}
    env.update(DAGSTER_HOME=str(work / "dagster_home"), KG_INBOX=str(work / "inbox"),
               KG_DUCKDB_PATH=str(work / "warehouse.duckdb"))
    proc = subprocess.run([sys.executable, "-m", "kg_assets.cli", "run", "--log-level", "WARNING"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SetupError(f"kg run failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return env


def start_ui(env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    """`dagster dev` in a process group of its own, so stop_ui ends all of it (webserver, daemon, code servers)."""
    with log.open("w") as out:
        return subprocess.Popen([sys.executable, "-m", "dagster", "dev", "-w", "workspace.yaml", "-p", str(port)],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop_ui(proc: subprocess.Popen) -> None:
    """Ctrl-C, as a user stops it (SIGTERM to the group leaves it hanging), then SIGKILL to whatever is left."""
    proc.send_signal(signal.SIGINT)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def wait_for_location(url: str, timeout: float = 300) -> None:
    """Until the API says the code location is loaded (the webserver answers before it is)."""
    deadline, state = time.monotonic() + timeout, {}
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, KeyError, StopIteration):
            state = next(e for e in graphql(url, """{ workspaceOrError { ... on Workspace { locationEntries { name
                locationOrLoadError { __typename ... on PythonError { message } } } } } }""")["workspaceOrError"][
                "locationEntries"] if e["name"] == LOCATION)["locationOrLoadError"] or {}
        if state.get("__typename") in ("RepositoryLocation", "PythonError"):
            break
        time.sleep(1)
    need(state.get("__typename") == "RepositoryLocation", f"code location {LOCATION} not loaded: {state or 'no answer'}")


def facts(url: str) -> dict:
    """What the pages must show, from the API: groups, the kg run run, CHECKED's checks, documents' keys."""
    data = graphql(url, """{ assetNodes { groupName }
        runsOrError(filter: {pipelineName: "%s", tags: [{key: "kg/launched_by", value: "kg run"}]}) {
            ... on Runs { results { runId } } }
        checks: assetNodeOrError(assetKey: {path: ["%s"]}) { ... on AssetNode {
            assetChecksOrError { ... on AssetChecks { checks { name } } } } }
        documents: assetNodeOrError(assetKey: {path: ["documents"]}) { ... on AssetNode { partitionKeys } } }""" % (JOB, CHECKED))
    runs = data["runsOrError"].get("results") or []
    return {"groups": sorted({node["groupName"] for node in data["assetNodes"]}),
            "run_id": runs[0]["runId"] if runs else None,
            "checks": [c["name"] for c in data["checks"]["assetChecksOrError"].get("checks", [])],
            "partition_keys": data["documents"].get("partitionKeys") or []}


class Browser:
    """Headless Debian Chromium through its chromedriver (elsewhere: whatever Selenium finds)."""

    def __init__(self, url: str, out: Path):
        options = webdriver.ChromeOptions()
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1600,1000"):
            options.add_argument(arg)
        if Path("/usr/bin/chromium").exists():
            options.binary_location = "/usr/bin/chromium"
        service = Service("/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None)
        self.driver, self.url, self.out, self.shots = webdriver.Chrome(options=options, service=service), url, out, []

    def open(self, path: str) -> None:
        self.driver.get(self.url + path)

    def text(self) -> str:
        return self.driver.find_element(By.TAG_NAME, "body").text

    def wait(self, condition, timeout: float = 60):
        """condition()'s first truthy value within timeout seconds, else None."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.dismiss()
                if value := condition():
                    return value
            except WebDriverException:  # not there yet, or replaced while read: ask again
                pass
            time.sleep(0.5)
        return None

    def click(self, xpath: str) -> None:
        """Click the last element matching xpath, once there is one."""
        need(self.wait(lambda: self.driver.execute_script(
            "arguments[0].click(); return true", self.driver.find_elements(By.XPATH, xpath)[-1])), f"nothing to click at {xpath}")

    def show(self, xpath: str) -> None:
        for element in self.driver.find_elements(By.XPATH, xpath)[:1]:
            self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)

    def dismiss(self) -> bool:
        """Skip Dagster's "Join the Dagster community" dialog (once per browser profile, shown after a delay)."""
        skips = self.driver.find_elements(By.XPATH, "//button[normalize-space()='Skip']")
        for skip in skips:
            skip.click()
        return bool(skips)

    def shot(self, name: str) -> None:
        time.sleep(1)  # let the last data arrive and the layout settle
        if self.dismiss():
            time.sleep(0.5)
        self.driver.save_screenshot(str(self.out / name))
        self.shots.append(name)


def check_lineage(b: Browser, f: dict) -> str:
    b.open("/asset-groups")
    drawn = lambda: {e.text.strip() for e in b.driver.find_elements(By.CSS_SELECTOR, "foreignObject.group")}
    groups = b.wait(lambda: set(f["groups"]) <= drawn())
    b.shot("1_lineage.png")
    need(groups, f"groups drawn {sorted(drawn())}, expected {f['groups']}")
    b.click("//button[.//*[@aria-label='settings']]")  # the last: the graph's settings, not the navigation's
    b.click("//button[@role='menuitem'][contains(., 'Expand all groups')]")
    b.driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    assets = b.wait(lambda: len(b.driver.find_elements(By.CSS_SELECTOR, "foreignObject:not(.group)")) >= 5)
    b.shot("1_lineage_expanded.png")
    count = len(b.driver.find_elements(By.CSS_SELECTOR, "foreignObject:not(.group)"))
    need(assets, f"{count} asset nodes drawn after Expand all groups")
    return f"{len(f['groups'])} groups drawn ({', '.join(f['groups'])}); {count} asset nodes in view once expanded"


def check_picture(b: Browser, f: dict) -> str:
    b.open("/assets/graph_nodes")
    row = b.wait(lambda: b.driver.find_element(By.XPATH, "//tr[td[normalize-space()='graph_picture']]"))
    b.show("//tr[td[normalize-space()='graph_picture']]")
    b.shot("2_graph_nodes_picture.png")
    need(row, "no graph_picture row in the asset's metadata")
    need("[Show Markdown]" not in row.text, "graph_picture is hidden behind [Show Markdown]")
    image = need(row.find_elements(By.TAG_NAME, "img"), "graph_picture's row has no <img>")[0]
    loaded, width, height = b.driver.execute_script("const i = arguments[0], r = i.getBoundingClientRect();"
                                                    "return [i.complete && i.naturalWidth > 0, r.width, r.height]", image)
    alt = image.get_attribute("alt")
    need(loaded and width >= 100 and height >= 50, f"graph_picture's <img> ({alt!r}) is in the page but drawn {width:.0f}x{height:.0f} px")
    return f"graph_picture drawn in place, {width:.0f}x{height:.0f} px ({alt!r})"


def check_partitions(b: Browser, f: dict) -> str:
    key = need(f["partition_keys"], "documents has no partition keys")[-1]
    b.open(f"/assets/documents?view=partitions&partition={key}")
    listed = b.wait(lambda: "Materialized" in b.text() and key in b.text())
    b.show("//*[contains(text(), 'arrival day')]")
    b.shot("3_documents_partitions.png")
    need(listed, f"the Partitions tab does not show key {key} materialized")
    said = need(re.search(r"[^\n]*\barrival days?\b[^\n]*", b.text(), re.I),
                f"key {key} is listed, but nothing on the Partitions tab says a key is an arrival day")
    return f"key {key} materialized; the tab says: {said.group(0)[:100]!r}"


def check_checks(b: Browser, f: dict) -> str:
    b.open(f"/assets/{CHECKED}?view=checks")
    shown = b.wait(lambda: all(name in b.text() for name in f["checks"]) and "Passed" in b.text())
    b.shot(f"4_{CHECKED}_checks.png")
    need(f["checks"] and shown, f"checks {f['checks']} not all listed, or none Passed")
    return f"{len(f['checks'])} checks listed ({', '.join(f['checks'])}), the first Passed"


def check_job_runs(b: Browser, f: dict) -> str:
    short = need(f["run_id"], f"the API has no {JOB} run tagged kg/launched_by=kg run")[:8]
    b.open(f"/locations/{LOCATION}/jobs/{JOB}/runs")
    b.wait(lambda: short in b.text() or "No runs found" in b.text())
    b.shot("5_job_runs.png")
    need(short in b.text(), f"{JOB}'s Runs tab does not list run {short}" + " (No runs found)" * ("No runs found" in b.text()))
    return f"run {short} listed under {JOB}" + ", tagged kg/launched_by: kg run" * ("kg/launched_by: kg run" in b.text())


def check_run(b: Browser, f: dict) -> str:
    need(f["run_id"], "no run to open")
    b.open(f"/runs/{f['run_id']}")
    done = b.wait(lambda: all(s in b.text() for s in ("Success", f"Run of\n{JOB}", "RUN_SUCCESS")))
    b.shot("6_run.png")
    need(done, f"run page without Success, Run of {JOB}, RUN_SUCCESS")
    return f"run page: Success, Run of {JOB}, RUN_SUCCESS event"


CHECKS = {"lineage": check_lineage, "picture": check_picture, "partitions": check_partitions, "checks": check_checks,
          "job runs": check_job_runs, "run": check_run}


def run_checks(url: str, out: Path) -> list[str]:
    """Every check in one browser, a line each; the missing pieces."""
    known, browser, failed = facts(url), Browser(url, out), []
    try:
        for name, check in CHECKS.items():
            browser.shots = []
            try:
                ok, reason = True, check(browser, known)
            except Missing as missing:
                ok, reason = False, str(missing)
            except WebDriverException as error:  # a page that broke the check itself is a missing piece too
                ok, reason = False, f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
            unsynced = browser.text().count("Unsynced")
            note = f" [page shows 'Unsynced' x{unsynced}]" if unsynced else ""
            print(f"{'PASS' if ok else 'FAIL'} {name:<11} {reason}{note}  {' '.join(browser.shots)}", flush=True)
            failed += [] if ok else [f"{name}: {reason}"]
    finally:
        browser.driver.quit()
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="check this running UI instead of building the sample and starting one")
    parser.add_argument("--port", type=int, default=0, help="port for `dagster dev` (default: a free one)")
    parser.add_argument("--out", type=Path, help="folder for the screenshots (default: a new temporary folder)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="ui_check_shots_"))
    out.mkdir(parents=True, exist_ok=True)
    started, ui, work, url = time.monotonic(), None, None, (args.url or "").rstrip("/")
    try:
        if not url:
            work = Path(tempfile.mkdtemp(prefix="ui_check_"))
            print(f"ui_check: kg run on a copy of data/inbox in {work} ...", flush=True)
            env = build_sample(work)
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", args.port))
                url = f"http://127.0.0.1:{sock.getsockname()[1]}"
            print(f"ui_check: sample built in {time.monotonic() - started:.0f}s; dagster dev on {url} ...", flush=True)
            ui = start_ui(env, int(url.rsplit(":", 1)[1]), work / "dagster_dev.log")
        try:
            wait_for_location(url)
        except Missing as missing:
            raise SetupError(missing) from None
        print(f"ui_check: code location {LOCATION} loaded at {time.monotonic() - started:.0f}s", flush=True)
        failed = run_checks(url, out)
    except SetupError as error:
        log = work / "dagster_dev.log" if work else None
        print(f"ui_check: {error}\n{log.read_text()[-3000:] if log and log.exists() else ''}", file=sys.stderr)
        return 2
    finally:
        if ui:
            stop_ui(ui)
        if work:
            shutil.rmtree(work, ignore_errors=True)
    print(f"ui_check: {len(CHECKS) - len(failed)}/{len(CHECKS)} passed in {time.monotonic() - started:.0f}s; screenshots in {out}")
    if failed:
        print("missing:\n  " + "\n  ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

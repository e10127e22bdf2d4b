"""The least a Dagster run of the shape of `kg run`'s 10-document rerun costs: assets and checks that do nothing.

    .venv/bin/python benchmarks/dagster_floor.py [--assets 19] [--checks 16] [--repeat 3]

Each repeat is a fresh interpreter (`python -c`), timed from its start to its exit: `import dagster`, the
definitions, an instance from a temporary DAGSTER_HOME holding the project's dagster.yaml (the same SQLite
storage `kg run` uses), and one in-process run of `--assets` unpartitioned assets in a chain (each returning
a MaterializeResult with metadata) and `--checks` asset checks, logged at INFO as `kg run` logs by default.
No DuckDB, no inbox, no planning: whatever a rerun costs above this is kg_assets' own work. The defaults are
the shape of the benchmark's 10-document rerun at 10,000 documents (19 materializations, 16 checks).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RUN = """
import dagster as dg
names = [f"asset_{{i:02d}}" for i in range({assets})]
defs = []
for i, name in enumerate(names):
    @dg.asset(name=name, deps=names[i - 1:i])
    def _asset():
        return dg.MaterializeResult(metadata={{"dagster/row_count": 1, "rows_written": 0}})
    defs.append(_asset)
for i in range({checks}):
    @dg.asset_check(asset=names[i % len(names)], name=f"check_{{i:02d}}")
    def _check():
        return dg.AssetCheckResult(passed=True)
    defs.append(_check)
assert dg.materialize(defs, instance=dg.DagsterInstance.get(),
                      run_config={{"loggers": {{"console": {{"config": {{"log_level": "INFO"}}}}}}}}).success
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assets", type=int, default=19, help="assets in the run (default 19)")
    parser.add_argument("--checks", type=int, default=16, help="asset checks in the run (default 16)")
    parser.add_argument("--repeat", type=int, default=3, help="runs, each in a fresh interpreter (default 3)")
    args = parser.parse_args(argv)
    code = RUN.format(assets=args.assets, checks=args.checks)
    seconds = []
    with tempfile.TemporaryDirectory(prefix="kg_dagster_floor_") as home:
        shutil.copy(ROOT / "dagster.yaml", Path(home) / "dagster.yaml")
        env = {**os.environ, "DAGSTER_HOME": home}
        for _ in range(args.repeat):
            started = time.perf_counter()
            run = subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env, cwd=home, capture_output=True,
                                 text=True)
            seconds.append(time.perf_counter() - started)
            if run.returncode:
                print(run.stdout, run.stderr, sep="\n", file=sys.stderr)
                return run.returncode
    print(f"a Dagster run of {args.assets} assets and {args.checks} checks doing nothing, from interpreter start: "
          f"{', '.join(f'{s:.2f}' for s in seconds)} s (median {statistics.median(seconds):.2f} s); "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

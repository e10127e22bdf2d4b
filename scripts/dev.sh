#!/usr/bin/env bash
# One entry point for humans and CI:
#   scripts/dev.sh demo   set up, then run the whole pipeline on the bundled sample data (data/inbox)
#   scripts/dev.sh test   set up, then run the whole test suite (KG_TEST_WORKERS processes, default 3)
#   scripts/dev.sh coverage  the same suite with line coverage of kg_assets (report in .coverage/html)
#   scripts/dev.sh ui     set up, then open the Dagster UI (dagster dev) on the same instance as `kg run`
#   scripts/dev.sh lock   re-resolve pyproject.toml's ranges into requirements.lock (exact versions, hashes)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${KG_VENV:-$ROOT/.venv}
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}

setup() {
  if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating virtualenv $VENV with $PYTHON"
    "$PYTHON" -m venv "$VENV"
  fi
  # Install the exact, hash-checked versions of requirements.lock (pyproject.toml keeps the ranges; refresh
  # the lock with `scripts/dev.sh lock`), then the project itself without resolving anything again.
  # Reinstall only when the lock or the project's metadata changed.
  stamp="$VENV/.kg_assets-installed"
  want=$(cat requirements.lock requirements-uv.lock pyproject.toml | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "==> installing the locked dependencies (requirements.lock) and kg_assets"
    # uv (itself pinned with hashes in requirements-uv.lock) installs the lock in about 12 s where pip takes
    # about 80 s; pip stays the fallback when uv cannot be had. Both compile every installed file now, once:
    # left to the first imports, the suite's parallel processes compiled the same modules side by side (a
    # fresh-clone suite took 1.5 min longer).
    uv_install=("$VENV/bin/python" -m uv pip install --quiet --python "$VENV/bin/python" --no-deps)
    if ! { "$VENV/bin/python" -m pip install --quiet --require-hashes -r requirements-uv.lock \
        && "${uv_install[@]}" --require-hashes --compile-bytecode -r requirements.lock \
        && "${uv_install[@]}" -e .; }; then
      echo "==> uv could not install the lock; installing with pip"
      "$VENV/bin/python" -m pip install --quiet --require-hashes --no-deps -r requirements.lock
      "$VENV/bin/python" -m pip install --quiet --no-deps -e .
    fi
    echo "$want" > "$stamp"
  fi
  export PATH="$VENV/bin:$PATH"
  # The project folder is the Dagster instance home: `kg run` and `dagster dev` share runs and partitions.
  export DAGSTER_HOME=${DAGSTER_HOME:-$ROOT}
  # One planned event per asset for ranged runs, and batched event writes where the storage supports them.
  export DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS=${DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS:-true}
  export DAGSTER_EVENT_BATCH_SIZE=${DAGSTER_EVENT_BATCH_SIZE:-1000}
  # The dbt manifest the marts' assets load: prepared here, never at import, and only when a dbt file changed.
  manifest=dbt/target/manifest.json
  if [ ! -f "$manifest" ] || [ -n "$(find dbt -path dbt/target -prune -o \( -name '*.sql' -o -name '*.yml' \) -newer "$manifest" -print -quit)" ]; then
    echo "==> preparing the dbt manifest"
    # The preparer dagster-dbt uses, called on the project directly: importing kg_assets.defs.dbt needs
    # the manifest this makes.
    python -c 'from dagster_dbt import DbtProject; p = DbtProject(project_dir="dbt", profiles_dir="dbt"); p.preparer.prepare(p)' >/dev/null
  fi
}

case "${1:-}" in
  demo)
    setup
    shift
    kg run "$@"
    echo
    echo "Query it:  .venv/bin/kg sql \"SELECT name, entity_type, mention_count FROM kg.entities WHERE valid_until IS NULL ORDER BY mention_count DESC LIMIT 10\""
    echo "Open the UI:  scripts/dev.sh ui"
    ;;
  test)
    setup
    shift
    # Workers in parallel (pytest-xdist; KG_TEST_WORKERS=0 runs in this process), the slowest tests listed.
    python -m pytest -n "${KG_TEST_WORKERS:-3}" --dist worksteal --durations=15 "$@"
    ;;
  coverage)
    setup
    shift
    rm -rf .coverage && mkdir -p .coverage
    python -m pytest -n "${KG_TEST_WORKERS:-3}" --dist worksteal --cov --cov-report=term --cov-report=html:.coverage/html "$@"
    ;;
  ui)
    setup
    dagster dev -w workspace.yaml
    ;;
  lock)
    # Re-resolve pyproject.toml's ranges to exact versions with hashes, for this machine kind (Linux x86_64, Python 3.11).
    "$PYTHON" -m pip install --quiet "uv>=0.5,<1"
    lock=(--generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_28 --no-header)
    "$PYTHON" -m uv pip compile pyproject.toml --extra test --extra dev "${lock[@]}" -o requirements.lock
    # uv itself, which setup installs first (the same range as above)
    echo "uv>=0.5,<1" | "$PYTHON" -m uv pip compile - "${lock[@]}" -o requirements-uv.lock
    ;;
  *)
    echo "usage: scripts/dev.sh demo|test|coverage|ui|lock [args]" >&2
    exit 2
    ;;
esac

#!/usr/bin/env bash
# One entry point for humans and CI:
#   scripts/dev.sh demo   set up, then run the whole pipeline on the bundled sample data (data/inbox)
#   scripts/dev.sh test   set up, then run the whole test suite
#   scripts/dev.sh ui     set up, then open the Dagster UI (dagster dev) on the same instance as `kg run`
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
  # Reinstall only when the dependency list changed.
  stamp="$VENV/.kg_assets-installed"
  want=$(sha256sum pyproject.toml | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "==> installing kg_assets and its dependencies (pyproject.toml)"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -e ".[test,dev]"
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
    python -m pytest "$@"
    ;;
  ui)
    setup
    dagster dev -w workspace.yaml
    ;;
  *)
    echo "usage: scripts/dev.sh demo|test|ui [args]" >&2
    exit 2
    ;;
esac

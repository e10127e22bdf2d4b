import shutil
import threading
from pathlib import Path

import dagster as dg
import pytest

from kg_assets.defs.partitions import arrival_days, partition_range
from kg_assets.defs.planner import add_days
from kg_assets_tests.conftest import run_at_once

ROOT = Path(__file__).resolve().parents[1]

ORDER = ["2026-01-01", "2026-01-03", "2026-01-04", "2026-02-10"]


def test_the_range_covers_every_planned_day_in_instance_order():
    assert partition_range(["2026-01-04", "2026-01-01"], ORDER) == ("2026-01-01", "2026-01-04")
    assert partition_range(["2026-02-10"], ORDER) == ("2026-02-10", "2026-02-10")


def test_a_day_that_is_not_a_partition_yet_is_an_error_not_a_silent_skip():
    with pytest.raises(ValueError, match="2026-03-01"):
        partition_range(["2026-03-01"], ORDER)


def test_two_planners_adding_the_same_days_at_once_both_go_on(tmp_path):
    """Two processes that plan at once (two `kg run --partitions-only`) both find a day missing; Dagster reads
    then inserts, so one insert breaks the instance's unique key. Neither planner fails, and each day is there
    once. Without the retry, nearly every round raised IntegrityError (27 of 28 when this test was written)."""
    shutil.copy(ROOT / "dagster.yaml", tmp_path / "dagster.yaml")
    dg.DagsterInstance.from_config(str(tmp_path)).dispose()  # storage created once, before the two writers
    days = [f"2026-01-{d:02d}" for d in range(1, 29)]
    together, errors = threading.Barrier(2), []

    def planner():
        with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
            for day in days:
                together.wait(timeout=30)
                try:
                    add_days(instance, [day])
                except Exception as exc:  # noqa: BLE001 - any failure of either planner is the finding
                    errors.append(repr(exc))

    run_at_once(planner, 2)
    assert errors == []
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert instance.get_dynamic_partitions(arrival_days.name) == days


def test_every_asset_partitioned_by_arrival_day_says_what_a_key_is():
    from kg_assets.definitions import build_definitions
    from kg_assets.defs.partitions import PARTITIONED_ASSETS
    from kg_assets.settings import Settings

    graph = build_definitions(Settings(), marts=False).resolve_asset_graph()
    partitioned = {k.to_user_string(): graph.get(k).description for k in graph.get_all_asset_keys()
                   if graph.get(k).partitions_def == arrival_days}
    assert set(partitioned) == set(PARTITIONED_ASSETS)
    for asset, description in partitioned.items():
        assert "arrival day" in description and "`YYYY-MM-DD`" in description and "UTC" in description, asset


@pytest.mark.parametrize("key", ["banana", "2026-02-30", "2999-01-01"])
def test_a_launch_over_a_key_that_is_not_an_arrival_day_fails_saying_so(project, key):
    project.instance.add_dynamic_partitions(arrival_days.name, [key])  # what the launchpad's "Add partition" does
    for asset in ("documents", "chunks"):
        result = project.execute(days=[key], asset_selection=[dg.AssetKey(asset)])
        assert not result.success
        [failure] = result.get_step_failure_events()
        message = failure.step_failure_data.user_failure_data.description
        assert f"['{key}'] are not arrival days" in message and "YYYY-MM-DD" in message, message
    assert not project.warehouse.exists() or project.warehouse.row_count("documents") == 0

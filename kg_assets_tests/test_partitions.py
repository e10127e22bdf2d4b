import pytest

from kg_assets.defs.partitions import partition_range

ORDER = ["2026-01-01", "2026-01-03", "2026-01-04", "2026-02-10"]


def test_the_range_covers_every_planned_day_in_instance_order():
    assert partition_range(["2026-01-04", "2026-01-01"], ORDER) == ("2026-01-01", "2026-01-04")
    assert partition_range(["2026-02-10"], ORDER) == ("2026-02-10", "2026-02-10")


def test_a_day_that_is_not_a_partition_yet_is_an_error_not_a_silent_skip():
    with pytest.raises(ValueError, match="2026-03-01"):
        partition_range(["2026-03-01"], ORDER)

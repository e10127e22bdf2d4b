from kg_assets.defs.partitions import partition_ranges

ORDER = [f"d{i:02d}" for i in range(20)]


def test_contiguous_keys_make_one_range():
    assert partition_ranges(["d05", "d03", "d04"], ORDER) == [("d03", "d05")]


def test_scattered_keys_make_one_range_per_run_of_neighbours():
    assert partition_ranges(["d01", "d02", "d09", "d15"], ORDER) == [("d01", "d02"), ("d09", "d09"), ("d15", "d15")]


def test_too_many_ranges_are_joined_across_the_smallest_gaps():
    keys = ["d00", "d02", "d10", "d12", "d19"]
    assert partition_ranges(keys, ORDER, max_ranges=3) == [("d00", "d02"), ("d10", "d12"), ("d19", "d19")]
    assert partition_ranges(keys, ORDER, max_ranges=1) == [("d00", "d19")]


def test_unknown_keys_and_empty_input_are_ignored():
    assert partition_ranges([], ORDER) == []
    assert partition_ranges(["nope"], ORDER) == []

"""The one run planner (kg_assets/core/planning.py): every case the sensor, the schedule and `kg run` meet."""

import polars as pl
import pytest

from kg_assets.core.planning import DOCUMENT_LIST_LIMIT, SENSOR_RETRIES, PlanCursor, PlanError, advance, documents_to_read, plan_work

TODAY = "2026-03-05"


def _known(*rows):
    """(document_id, arrival_day, content_hash, file_signature) rows of current documents."""
    return pl.DataFrame(list(rows), schema=["document_id", "arrival_day", "content_hash", "file_signature"], orient="row")


class Hashes(dict):
    """Content hashes by key, remembering which keys were hashed (reading a file costs)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.asked = []

    def __call__(self, key):
        self.asked.append(key)
        return self.get(key)


KNOWN = _known(("a.md", "2026-03-01", "ha", "10:1"), ("b.md", "2026-03-01", "hb", "20:1"), ("c.md", "2026-03-02", "hc", "30:1"))
INBOX = {"a.md": "10:1", "b.md": "20:1", "c.md": "30:1"}


def test_unchanged_files_are_not_even_hashed_and_plan_nothing():
    hashes = Hashes()
    plan = plan_work(INBOX, KNOWN, TODAY, hashes)
    assert plan.is_empty and plan.unchanged == 3 and hashes.asked == []


def test_a_touched_file_with_the_same_bytes_is_unchanged():
    plan = plan_work({**INBOX, "b.md": "20:99"}, KNOWN, TODAY, Hashes({"b.md": "hb"}))
    assert plan.is_empty and plan.unchanged == 3 and plan.touched == (("b.md", "20:99"),)


def test_a_new_file_arrives_today_and_is_listed():
    plan = plan_work({**INBOX, "d.md": "40:1"}, KNOWN, TODAY, Hashes())
    assert plan.new == ("d.md",) and plan.days == (TODAY,) and plan.documents == ("d.md",)


def test_a_changed_file_is_redone_in_the_partition_of_its_arrival_day():
    plan = plan_work({**INBOX, "c.md": "31:2"}, KNOWN, TODAY, Hashes({"c.md": "hc2"}))
    assert plan.changed == ("c.md",) and plan.days == ("2026-03-02",) and plan.documents == ("c.md",)
    assert not plan.new and plan.unchanged == 2


def test_a_deleted_file_is_retired_in_its_day():
    inbox = {k: v for k, v in INBOX.items() if k != "a.md"}
    plan = plan_work(inbox, KNOWN, TODAY, Hashes())
    assert plan.deleted == ("a.md",) and plan.days == ("2026-03-01",) and plan.documents == ("a.md",)


def test_a_renamed_file_is_a_deletion_plus_an_arrival_and_says_so():
    inbox = {"a2.md": "10:5", "b.md": "20:1", "c.md": "30:1"}
    plan = plan_work(inbox, KNOWN, TODAY, Hashes({"a2.md": "ha"}))
    assert plan.renamed == (("a.md", "a2.md"),)
    assert plan.new == ("a2.md",) and plan.deleted == ("a.md",)
    assert plan.days == ("2026-03-01", TODAY) and plan.documents == ("a.md", "a2.md")


def test_stale_and_failed_documents_are_redone_but_an_unchanged_unreadable_one_is_not():
    # b's chunks were made by another extractor version or failed: the warehouse says it is stale.
    plan = plan_work(INBOX, KNOWN, TODAY, Hashes(), stale={"b.md"})
    assert plan.stale == ("b.md",) and plan.documents == ("b.md",) and plan.days == ("2026-03-01",)
    assert plan.unchanged == 2
    # a document that could not be read (status error) keeps its hash; same bytes, nothing to redo
    assert plan_work(INBOX, KNOWN, TODAY, Hashes()).is_empty


def test_a_graph_out_of_date_alone_plans_a_consolidation_without_partitions():
    plan = plan_work(INBOX, KNOWN, TODAY, Hashes(), consolidate=True)
    assert not plan.is_empty and plan.days == () and plan.documents == ()


def test_an_empty_inbox_retracts_everything():
    plan = plan_work({}, KNOWN, TODAY, Hashes())
    assert plan.deleted == ("a.md", "b.md", "c.md") and plan.days == ("2026-03-01", "2026-03-02")


def test_many_documents_run_whole_days_instead_of_a_long_list():
    inbox = {f"n{i}.md": "1:1" for i in range(DOCUMENT_LIST_LIMIT + 1)}
    plan = plan_work(inbox, None, TODAY, Hashes())
    assert plan.documents is None and plan.take_new and plan.days == (TODAY,)


def test_everything_covers_every_day_and_only_covers_the_named_documents():
    plan = plan_work(INBOX, KNOWN, TODAY, Hashes(), everything=True)
    assert plan.days == ("2026-03-01", "2026-03-02") and plan.documents is None
    only = plan_work(INBOX, KNOWN, TODAY, Hashes(), only=["c.md"])
    assert only.days == ("2026-03-02",) and only.documents == ("c.md",) and only.redo_extraction
    with pytest.raises(PlanError, match="nope.md"):
        plan_work(INBOX, KNOWN, TODAY, Hashes(), only=["nope.md"])


def test_a_file_deleted_re_added_and_re_deleted_gets_a_new_run_key_each_time():
    cursor, keys = PlanCursor(), []
    states = [  # (inbox, warehouse) after each run has done its work
        ({"b.md": "20:1"}, KNOWN),  # a.md deleted
        ({"b.md": "20:1"}, KNOWN.filter(pl.col("document_id") != "a.md")),  # ...and retired
        ({"a.md": "10:1", "b.md": "20:1"}, KNOWN.filter(pl.col("document_id") != "a.md")),  # re-added
        ({"a.md": "10:1", "b.md": "20:1"}, _known(("a.md", TODAY, "ha", "10:1"), ("b.md", "2026-03-01", "hb", "20:1"))),
        ({"b.md": "20:1"}, _known(("a.md", TODAY, "ha", "10:1"), ("b.md", "2026-03-01", "hb", "20:1"))),  # re-deleted
    ]
    for inbox, known in states:
        plan = plan_work(inbox, known.filter(pl.col("document_id") != "c.md"), TODAY, Hashes())
        cursor, key = advance(cursor, plan)
        keys.append(key)
        again, repeat = advance(cursor, plan)  # a second tick before the run finished requests nothing
        assert repeat is None and again == cursor
    requested = [k for k in keys if k]
    assert len(requested) == 3 and len(set(requested)) == 3, keys
    assert keys[1] is None and keys[3] is None


def test_a_failed_run_is_requested_again_under_a_new_key_at_most_sensor_retries_times():
    plan = plan_work({"a.md": "10:1"}, None, TODAY, Hashes())
    cursor, key = advance(PlanCursor(), plan)
    keys = [key]
    assert advance(cursor, plan, requested_run_failed=False) == (cursor, None)
    for _ in range(SENSOR_RETRIES):
        cursor, key = advance(cursor, plan, requested_run_failed=True)
        assert key is not None and key not in keys and cursor.run_key == key
        keys.append(key)
    assert advance(cursor, plan, requested_run_failed=True) == (cursor, None)
    # a new change starts with a fresh retry budget
    changed = plan_work({"a.md": "10:2"}, None, TODAY, Hashes())
    cursor, key = advance(cursor, changed)
    assert key and cursor.retries == 0
    assert PlanCursor.parse(cursor.dump()) == cursor


def test_the_cursor_stays_a_few_bytes_whatever_the_corpus_size():
    inbox = {f"doc{i:06d}.md": f"{i}:1" for i in range(50_000)}
    cursor, key = advance(PlanCursor(), plan_work(inbox, None, TODAY, Hashes()))
    assert key and len(cursor.dump()) < 80
    assert PlanCursor.parse(cursor.dump()) == cursor
    assert PlanCursor.parse('{"notes/a.md": "1:2"}') == PlanCursor(), "an old per-file cursor is dropped, not trusted"


def test_the_documents_step_reads_its_days_retires_what_is_gone_and_adopts_new_files():
    inbox = ["a.md", "c.md", "new.md"]
    whole = documents_to_read(KNOWN, inbox, ["2026-03-01"], None, take_new=False)
    assert whole.read == {"a.md": "2026-03-01"} and whole.retire == ["b.md"]
    adopting = documents_to_read(KNOWN, inbox, ["2026-03-01", TODAY], None, take_new=True)
    assert adopting.read == {"a.md": "2026-03-01", "new.md": TODAY}
    listed = documents_to_read(KNOWN, inbox, ["2026-03-01", TODAY], ["b.md", "new.md", "c.md"], take_new=False)
    assert listed.read == {"new.md": TODAY} and listed.retire == ["b.md"] and listed.ignored == ["c.md"]

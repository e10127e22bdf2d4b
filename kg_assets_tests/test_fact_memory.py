"""A user's fact memory: the seed's dedup rules and our guards, fact keys, supersession, manual facts, context."""

import random
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from kg_assets.core import schemas
from kg_assets.core.facts.context import context_block
from kg_assets.core.facts.dedup import Comparable, compare
from kg_assets.core.facts.keys import fact_key
from kg_assets.core.facts.memory import active_facts, build_user_facts, fact_row, manual_fact
from kg_assets.core.facts.rules import ValidFact

T0 = datetime(2025, 3, 1, 10, 0, tzinfo=UTC)


def _match(new: str, old: str):
    found = compare(Comparable.of(new), Comparable.of(old))
    return None if found is None else (found.rule, found.score, found.guard)


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        # the seed's four examples
        ("loves hiking", "loves hiking", ("exact", 1.0, None)),
        ("engineer at Google", "works as engineer at Google", ("substring", 1.0, None)),
        ("has two younger brothers", "has two younger sisters", ("word_overlap", 0.75, "content_word")),
        ("enjoys cooking", "loves hiking", None),
        # the rules' edges
        ("Loves  Hiking", "loves hiking", ("exact", 1.0, None)),
        ("plays golf", "plays golf daily", None),  # 10 characters: substrings need more than 10 on both sides
        ("plays chess", "plays chess online", ("substring", 1.0, None)),  # 11 characters
        ("plays chess well", "plays chess online", None),  # 2 of 3 words: 0.67 is not over 0.7
        ("is a big fan of jazz music", "is a fan of jazz music", ("word_overlap", 1.0, None)),
        ("lives in Paris with their family", "lives in Rome with their family",
         ("word_overlap", 0.8333, "content_word")),
        ("has 3 kids at home", "has 2 kids at home", ("word_overlap", 0.8, "content_word")),
        ("really does not like spicy food", "really does like spicy food", ("word_overlap", 1.0, "polarity")),
        ("no longer plays the guitar", "plays the guitar", ("substring", 1.0, "polarity")),
        ("loves dark roast coffee", "likes dark roast coffee", ("word_overlap", 0.75, None)),  # liking verbs are light
    ],
)
def test_dedup_rules_and_guards(new, old, expected):
    assert _match(new, old) == expected


@pytest.mark.parametrize(
    ("fact_type", "content", "temporal", "key"),
    [
        ("location", "lives in Boston", "present", "location/residence"),
        ("location", "moved to Lisbon in August", "past", "location/residence"),
        ("event", "recently relocated to Porto", "present", "location/residence"),
        ("location", "lived in Boston for six years", "past", "location/boston-lived-six-year"),
        ("location", "is moving to Munich in January", "future", "location/next_residence"),
        ("location", "was born in Japan", "timeless", "location/origin"),
        ("work", "works as senior engineer at Google", "present", "work/employer"),
        ("work", "is a software engineer at Alpenquant GmbH", "present", "work/employer"),
        ("work", "joined Microsoft as a PM", "past", "work/employer"),
        ("work", "used to work at a bakery", "past", "work/bakery-used-work"),
        ("work", "works as a stunt double", "present", "work/occupation"),
        ("relationship", "has a girlfriend named Sarah", "present", "relationship/partner"),
        ("relationship", "got divorced last year", "past", "relationship/partner"),
        ("general", "is 46 years old", "present", "general/age"),
        ("general", "is Lena Ortiz", "present", "general/name"),
        ("hobby", "loves hiking on weekends", "present", "hobby/hiking"),
        ("hobby", "stopped hiking", "present", "hobby/hiking"),
        ("hobby", "plays guitar in a band", "present", "hobby/guitar"),
        ("preference", "likes cats", "present", "preference/cats"),
        ("preference", "does not like cats", "present", "preference/cats"),
        ("family", "has two younger sisters", "present", "family/sister-two-younger"),
        ("family", "has two younger brothers", "present", "family/brother-two-younger"),
        ("preference", "is a big fan of jazz", "present", "preference/jazz"),  # not an occupation
    ],
)
def test_fact_keys_say_what_a_fact_is_about(fact_type, content, temporal, key):
    assert fact_key(fact_type, content, temporal) == key


def _fact(user, content, minutes, *, fact_type="general", temporal="present", importance=0.5, confidence=0.8,
          message=None, index=0):
    message = message or f"m-{minutes}-{index}"
    return fact_row(user, ValidFact(fact_type, content, confidence, importance, temporal),
                    valid_from=T0 + timedelta(minutes=minutes), learned_at=T0, document_id="chat.jsonl",
                    message_id=message, fact_index=index, message_content=f"message {message}",
                    extractor="test", extractor_version="test-1")


def _frame(rows):
    return pl.DataFrame(rows, schema=schemas.USER_FACTS)


def _by_content(facts: pl.DataFrame) -> dict[str, dict]:
    return {r["content"]: r for r in facts.iter_rows(named=True)}


def test_the_seeds_dedup_examples_inside_a_memory_keep_every_row_and_lose_no_fact():
    facts = build_user_facts(_frame([
        _fact("u1", "loves hiking", 1, fact_type="hobby"),
        _fact("u1", "works as engineer at Google", 2, fact_type="work"),
        _fact("u1", "has two younger sisters", 3, fact_type="family"),
        _fact("u1", "loves hiking", 4, fact_type="hobby"),
        _fact("u1", "engineer at Google", 5, fact_type="work"),
        _fact("u1", "has two younger brothers", 6, fact_type="family"),
        _fact("u1", "enjoys cooking", 7, fact_type="hobby"),
    ]))
    assert facts.height == 7  # nothing is dropped
    rows = facts.sort("valid_from").to_dicts()
    ids = [r["fact_id"] for r in rows]
    assert [(r["duplicate_of"], r["dedup_rule"], r["dedup_score"], r["dedup_guard"]) for r in rows[3:]] == [
        (ids[0], "exact", 1.0, None),
        (ids[1], "substring", 1.0, None),
        (None, "word_overlap", 0.75, "content_word"),  # the seed would drop the brothers; both survive here
        (None, None, None, None),
    ]
    assert rows[5]["dedup_match"] == ids[2]
    assert active_facts(facts)["content"].sort().to_list() == [
        "enjoys cooking", "has two younger brothers", "has two younger sisters", "loves hiking",
        "works as engineer at Google"]
    assert facts.filter(pl.col("duplicate_of").is_not_null())["is_active"].to_list() == [False, False]


def test_a_newer_fact_of_the_same_key_closes_the_older_one_and_history_stays():
    facts = build_user_facts(_frame([
        _fact("lena", "lives in Boston", 0, fact_type="location"),
        _fact("lena", "works at Northwind", 5, fact_type="work"),
        _fact("lena", "moved to Lisbon in August", 60, fact_type="location", temporal="past"),
        _fact("lena", "lived in Boston for six years", 60, fact_type="location", temporal="past", index=1),
        _fact("lena", "works at QDL", 90, fact_type="work"),
        _fact("lena", "moved back to Boston", 120, fact_type="location", temporal="past"),
    ]))
    by = _by_content(facts)
    assert by["lives in Boston"]["valid_until"] == T0 + timedelta(minutes=60)
    assert by["lives in Boston"]["superseded_by"] == by["moved to Lisbon in August"]["fact_id"]
    assert by["moved to Lisbon in August"]["supersedes"] == by["lives in Boston"]["fact_id"]
    assert by["moved to Lisbon in August"]["valid_until"] == T0 + timedelta(minutes=120)
    assert by["works at Northwind"]["valid_until"] == T0 + timedelta(minutes=90)
    assert by["lived in Boston for six years"]["is_active"]  # history told in the past takes no slot
    assert by["moved back to Boston"]["is_active"] and by["works at QDL"]["is_active"]
    residences = facts.filter(pl.col("fact_key") == "location/residence").sort("valid_from")
    assert residences["content"].to_list() == ["lives in Boston", "moved to Lisbon in August", "moved back to Boston"]
    assert residences["is_active"].to_list() == [False, False, True]  # A, B, A: three rows, one current
    current = active_facts(facts).group_by("user_id", "fact_key").len()
    assert current["len"].max() == 1


def test_a_repeated_fact_after_a_change_is_new_again_not_a_duplicate_of_history():
    facts = build_user_facts(_frame([
        _fact("u", "lives in Boston", 0, fact_type="location"),
        _fact("u", "lives in Lisbon", 10, fact_type="location"),
        _fact("u", "lives in Boston", 20, fact_type="location"),
    ])).sort("valid_from")
    assert facts["duplicate_of"].to_list() == [None, None, None]  # dedup compares with active facts only
    assert facts["is_active"].to_list() == [False, False, True]


def test_manual_facts_are_never_set_aside_for_automatic_ones():
    manual, notes = manual_fact("u", "I'm allergic to peanuts", at=T0 + timedelta(minutes=30))
    assert notes == ["fact 1: first person rewritten as 'is allergic to peanuts'"]
    assert (manual["source"], manual["confidence"], manual["importance"]) == ("manual", 1.0, 0.8)
    admin, _ = manual_fact("u", "Works night shifts", at=T0 + timedelta(minutes=40), source="admin", taught_by="mod")
    facts = build_user_facts(_frame([
        _fact("u", "is allergic to peanuts", 10),
        manual,
        _fact("u", "is allergic to peanuts", 50),
        _fact("u", "works night shifts at the hospital", 20, fact_type="work"),
        admin,
    ]))
    by_source = {(r["source"], r["valid_from"]): r for r in facts.iter_rows(named=True)}
    early = by_source[("auto_extraction", T0 + timedelta(minutes=10))]
    late = by_source[("auto_extraction", T0 + timedelta(minutes=50))]
    assert by_source[("manual", T0 + timedelta(minutes=30))]["is_active"]
    assert by_source[("manual", T0 + timedelta(minutes=30))]["dedup_guard"] == "manual"
    assert early["superseded_by"] == manual["fact_id"] and early["valid_until"] == T0 + timedelta(minutes=30)
    assert late["duplicate_of"] == manual["fact_id"]  # an automatic restatement points at the manual fact
    taught = by_source[("admin", T0 + timedelta(minutes=40))]
    assert taught["is_active"] and taught["taught_by"] == "mod" and taught["dedup_guard"] == "manual"
    assert by_source[("auto_extraction", T0 + timedelta(minutes=20))]["superseded_by"] == admin["fact_id"]


def test_manual_fact_arguments_are_checked():
    with pytest.raises(ValueError, match="needs taught_by"):
        manual_fact("u", "works nights", at=T0, source="admin")
    with pytest.raises(ValueError, match="source must be manual or admin"):
        manual_fact("u", "works nights", at=T0, source="auto_extraction")
    with pytest.raises(ValueError, match="not a storable fact: fact 1: 1[0-9]{2} characters"):
        manual_fact("u", "x" * 120, at=T0)


def test_users_never_share_facts_or_keys():
    facts = build_user_facts(_frame([
        _fact("a", "lives in Boston", 0, fact_type="location"),
        _fact("b", "lives in Boston", 1, fact_type="location"),
        _fact("b", "lives in Lisbon", 2, fact_type="location"),
    ]))
    by_user = {u: f.sort("valid_from") for (u,), f in facts.partition_by("user_id", as_dict=True).items()}
    assert by_user["a"]["is_active"].to_list() == [True]
    assert by_user["b"]["duplicate_of"].to_list() == [None, None]
    assert by_user["b"]["is_active"].to_list() == [False, True]


def test_the_rebuild_is_the_same_in_any_order_and_in_any_batches():
    rng = random.Random(7)
    contents = ["lives in Boston", "lives in Lisbon", "loves hiking", "loves hiking on weekends", "has a dog",
                "has two younger sisters", "has two younger brothers", "works at QDL", "works at Northwind",
                "does not like cats", "likes cats", "is 46 years old", "is 47 years old"]
    rows = [_fact(f"u{rng.randrange(3)}", rng.choice(contents), rng.randrange(50), index=i,
                  fact_type=rng.choice(["general", "location", "work", "hobby"]))
            for i in range(120)]
    expected = build_user_facts(_frame(rows)).sort("fact_id")
    for seed in range(3):
        rng.shuffle(rows)
        assert build_user_facts(_frame(rows)).sort("fact_id").equals(expected)
    # a second build over its own output (decisions included) decides the same again
    assert build_user_facts(expected).sort("fact_id").equals(expected)
    assert active_facts(expected).group_by("user_id", "fact_key").len()["len"].max() == 1


def _context_facts():
    return build_user_facts(_frame([
        _fact("lena", "prefers dark roast coffee", 1, fact_type="preference", importance=0.3),
        _fact("lena", "runs support for Qubitline at QDL", 2, fact_type="work", importance=0.8),
        _fact("lena", "lives in Boston", 3, fact_type="location", importance=1.0),
        _fact("lena", "moved to Lisbon", 4, fact_type="location", importance=1.0),
        _fact("lena", "loves hiking", 5, fact_type="hobby", importance=0.5),
        _fact("lena", "speaks Portuguese", 6, importance=0.8),
        _fact("lena", "lived in Boston for six years", 4, fact_type="location", temporal="past", importance=1.0,
              message="m-4-0", index=1),
        _fact("kenji", "lives in Zurich", 6, fact_type="location", importance=1.0),
    ]))


def test_the_context_block_lists_active_facts_most_important_then_most_recent_first():
    block = context_block(_context_facts(), "lena", "Lena Ortiz")
    assert block.splitlines() == [
        "User: Lena Ortiz",
        "Known facts:",
        "- moved to Lisbon",
        "- lived in Boston for six years",  # as important and as recent, but past
        "- speaks Portuguese",
        "- runs support for Qubitline at QDL",
        "- loves hiking",
        "- prefers dark roast coffee",
    ]


def test_a_move_told_in_the_past_tense_is_still_true_and_comes_before_what_is_past():
    facts = build_user_facts(_frame([
        _fact("lena", "lived in Boston for six years", 4, fact_type="location", temporal="past", importance=1.0),
        _fact("lena", "moved to Lisbon in August", 4, fact_type="location", temporal="past", importance=1.0,
              message="m-4-0", index=1),
    ]))
    assert facts.filter(pl.col("content").str.starts_with("moved"))["fact_key"].item() == "location/residence"
    assert context_block(facts, "lena").splitlines()[2:] == ["- moved to Lisbon in August",
                                                              "- lived in Boston for six years"]


def test_the_context_block_stays_within_its_size_limit():
    facts = _context_facts()
    full = context_block(facts, "lena", "Lena Ortiz")
    for limit in range(29, len(full) + 5):  # the header has 29 characters
        block = context_block(facts, "lena", "Lena Ortiz", max_chars=limit)
        assert len(block) <= limit
        assert full.startswith(block.split("\n(")[0])  # whole facts, in order
    # 29 + 18 = 47 characters; the next fact (32) would make 79, the note (25) makes 72
    assert context_block(facts, "lena", "Lena Ortiz", max_chars=75).splitlines()[2:] == [
        "- moved to Lisbon", "(5 more facts not shown)"]
    assert context_block(facts, "lena", "Lena Ortiz", max_chars=71).splitlines()[2:] == [
        "- moved to Lisbon"]  # no room for the note
    assert context_block(facts, "nobody") == "User: nobody\nKnown facts:"
    with pytest.raises(ValueError, match="shorter than the block's header"):
        context_block(facts, "lena", "Lena Ortiz", max_chars=10)

import hashlib
import random
import re
from datetime import UTC, datetime

import polars as pl
import pytest

from kg_assets.core import temporal
from kg_assets.core.schemas import ATTRIBUTE_OBSERVATIONS, ATTRIBUTE_SUPERSESSIONS, ENTITY_ATTRIBUTES
from kg_assets.core.temporal import (
    attributes_as_of,
    build_entity_attributes,
    current_attributes,
)


def d(y, m, day):
    return datetime(y, m, day, tzinfo=UTC)


def docs(*rows):
    """(document_id, document_date or None, ingested_at)"""
    return pl.DataFrame(
        [{"document_id": r[0], "document_date": r[1], "ingested_at": r[2]} for r in rows],
        schema={"document_id": pl.String, "document_date": temporal.schemas.TS, "ingested_at": temporal.schemas.TS},
    )


def obs(*rows):
    """(observation_id, document_id, entity_id, attr_key, value, confidence); chunk = document#0."""
    frame = pl.DataFrame(
        [
            {"observation_id": o, "chunk_id": f"{doc}#0", "document_id": doc, "entity_id": e,
             "entity_name": e, "attr_key": k, "value": v, "confidence": c}
            for o, doc, e, k, v, c in rows
        ],
        schema={n: ATTRIBUTE_OBSERVATIONS[n] for n in
                ["observation_id", "chunk_id", "document_id", "entity_id", "entity_name", "attr_key", "value", "confidence"]},
    )
    return temporal.schemas.conform(frame, ATTRIBUTE_OBSERVATIONS)


INGESTED = d(2026, 1, 1)
EMPLOYER_DOCS = docs(
    ("d1", d(2024, 11, 5), INGESTED),
    ("d2", d(2025, 2, 25), INGESTED),
    ("d3", d(2025, 6, 18), INGESTED),
)
EMPLOYER_OBS = obs(
    ("o1", "d1", "e_chen", "employer", "Northwind Robotics", 0.9),
    ("o2", "d2", "e_chen", "employer", "Northwind Robotics", 0.7),
    ("o3", "d3", "e_chen", "employer", "Quantum Dynamics Lab", 0.95),
)


def timeline(attrs, entity="e_chen", key="employer"):
    rows = attrs.filter((pl.col("entity_id") == entity) & (pl.col("attr_key") == key))
    return [(r["value"], r["valid_from"], r["valid_until"]) for r in rows.iter_rows(named=True)]


def test_employer_change_closes_the_old_row_and_records_a_supersession():
    attrs, sups = build_entity_attributes(EMPLOYER_OBS, EMPLOYER_DOCS, None)
    assert attrs.schema == pl.Schema(ENTITY_ATTRIBUTES) and sups.schema == pl.Schema(ATTRIBUTE_SUPERSESSIONS)
    assert timeline(attrs) == [
        ("Northwind Robotics", d(2024, 11, 5), d(2025, 6, 18)),
        ("Quantum Dynamics Lab", d(2025, 6, 18), None),
    ]
    old, new = attrs.iter_rows(named=True)
    assert old["observation_count"] == 2 and old["source_document_ids"] == ["d1", "d2"]
    assert old["source_chunk_ids"] == ["d1#0", "d2#0"]
    assert old["confidence"] == 0.9  # max of the row's observations
    assert (old["supersedes_value"], old["superseded_by_value"]) == (None, "Quantum Dynamics Lab")
    assert (new["supersedes_value"], new["superseded_by_value"]) == ("Northwind Robotics", None)
    assert new["normalized_value"] == "quantum dynamics lab"

    assert sups.height == 1
    s = sups.row(0, named=True)
    assert (s["entity_id"], s["attr_key"], s["old_value"], s["new_value"]) == (
        "e_chen", "employer", "Northwind Robotics", "Quantum Dynamics Lab")
    assert s["superseded_at"] == d(2025, 6, 18)
    assert (s["old_attribute_id"], s["new_attribute_id"]) == (old["attribute_id"], new["attribute_id"])
    assert s["relation_type"] == "SUPERSEDES" and s["supersession_id"].startswith("sup_")

    assert attributes_as_of(attrs, d(2025, 3, 1))["value"].to_list() == ["Northwind Robotics"]
    assert attributes_as_of(attrs, d(2025, 7, 1))["value"].to_list() == ["Quantum Dynamics Lab"]
    # boundaries: valid_from inclusive, valid_until exclusive; nothing before the first observation
    assert attributes_as_of(attrs, d(2025, 6, 18))["value"].to_list() == ["Quantum Dynamics Lab"]
    assert attributes_as_of(attrs, d(2024, 1, 1)).height == 0
    assert attributes_as_of(attrs, datetime(2025, 3, 1))["value"].to_list() == ["Northwind Robotics"]  # naive = UTC
    assert current_attributes(attrs)["value"].to_list() == ["Quantum Dynamics Lab"]


def test_attribute_id_is_the_documented_hash():
    attrs, _ = build_entity_attributes(EMPLOYER_OBS, EMPLOYER_DOCS, None)
    row = attrs.row(1, named=True)
    raw = "e_chen::employer::quantum dynamics lab::2025-06-18T00:00:00+00:00"
    assert row["attribute_id"] == "attr_" + hashlib.sha256(raw.encode()).hexdigest()[:16]


def test_attribute_and_supersession_ids_are_the_documented_hashes_with_a_fraction_of_a_second():
    documents = docs(("d1", datetime(2025, 3, 1, 9, 30, 0, 250, tzinfo=UTC), INGESTED), ("d2", None, INGESTED))
    attrs, sups = build_entity_attributes(obs(("o1", "d1", "e_chen", "title", "CTO", 0.9),
                                              ("o2", "d2", "e_chen", "title", "CEO", 0.9)), documents, None)
    first = "e_chen::title::cto::2025-03-01T09:30:00.000250+00:00"  # as datetime.isoformat() writes it
    second = "e_chen::title::ceo::2026-01-01T00:00:00+00:00"
    ids = ["attr_" + hashlib.sha256(raw.encode()).hexdigest()[:16] for raw in (first, second)]
    assert attrs["attribute_id"].to_list() == ids
    assert sups["supersession_id"].to_list() == [
        "sup_" + hashlib.sha256(f"{ids[0]}::{ids[1]}".encode()).hexdigest()[:16]]


def test_undated_documents_use_ingested_at():
    documents = docs(("d1", d(2024, 1, 1), INGESTED), ("d2", None, d(2024, 6, 1)), ("d3", d(2025, 1, 1), INGESTED))
    observations = obs(
        ("o1", "d1", "e", "role", "engineer", 0.9),
        ("o2", "d2", "e", "role", "manager", 0.9),  # undated: placed at its ingestion, between d1 and d3
        ("o3", "d3", "e", "role", "director", 0.9),
    )
    attrs, _ = build_entity_attributes(observations, documents, None)
    assert timeline(attrs, "e", "role") == [
        ("engineer", d(2024, 1, 1), d(2024, 6, 1)),
        ("manager", d(2024, 6, 1), d(2025, 1, 1)),
        ("director", d(2025, 1, 1), None),
    ]


def test_observations_without_a_document_time_are_dropped():
    documents = docs(("d1", d(2024, 1, 1), INGESTED), ("d2", None, None))
    observations = obs(("o1", "d1", "e", "role", "engineer", 0.9), ("o2", "d2", "e", "role", "x", 0.9),
                       ("o3", "d_missing", "e", "role", "y", 0.9))
    attrs, sups = build_entity_attributes(observations, documents, None)
    assert timeline(attrs, "e", "role") == [("engineer", d(2024, 1, 1), None)] and sups.height == 0


def test_only_current_document_versions_give_the_time():
    documents = pl.concat([
        docs(("d1", d(2020, 1, 1), INGESTED)).with_columns(valid_until=pl.lit(d(2025, 1, 1))),
        docs(("d1", d(2024, 1, 1), INGESTED)).with_columns(valid_until=pl.lit(None, dtype=temporal.schemas.TS)),
    ])
    attrs, _ = build_entity_attributes(obs(("o1", "d1", "e", "role", "engineer", 0.9)), documents, None)
    assert timeline(attrs, "e", "role") == [("engineer", d(2024, 1, 1), None)]


def test_surface_variants_are_one_value_displayed_by_their_most_frequent_form():
    documents = docs(*[(f"d{i}", d(2025, 1, i), INGESTED) for i in range(1, 6)])
    observations = obs(
        ("o1", "d1", "e", "employer", "Quantum Dynamics Lab", 0.9),
        ("o2", "d2", "e", "employer", "the quantum dynamics lab", 0.9),
        ("o3", "d3", "e", "employer", "  The   Quantum  Dynamics Lab ", 0.9),
        ("o4", "d4", "e", "employer", "Quantum Dynamics Lab", 0.9),
        ("o5", "d5", "e", "employer", "QUANTUM DYNAMICS LAB", 0.9),
    )
    attrs, sups = build_entity_attributes(observations, documents, None)
    assert attrs.height == 1 and sups.height == 0
    row = attrs.row(0, named=True)
    assert (row["value"], row["normalized_value"], row["observation_count"]) == (
        "Quantum Dynamics Lab", "quantum dynamics lab", 5)
    assert (row["valid_from"], row["valid_until"]) == (d(2025, 1, 1), None)
    # equal counts: alphabetical surface form wins
    tie = obs(("o1", "d1", "e", "employer", "acme corp", 0.9), ("o2", "d2", "e", "employer", "ACME Corp", 0.9))
    assert build_entity_attributes(tie, documents, None)[0]["value"].to_list() == ["ACME Corp"]


def test_an_acronym_and_its_expansion_are_one_value_kept_as_written():
    documents = docs(*[(f"d{i}", d(2025, 1, i), INGESTED) for i in range(1, 7)])
    observations = obs(
        ("o1", "d1", "e", "role", "senior engineer", 0.9),
        ("o2", "d2", "e", "role", "Chief Technology Officer", 0.9),
        ("o3", "d3", "e", "role", "CTO", 0.9),
        ("o4", "d4", "e", "role", "Chief Technology Officer", 0.9),
        ("o5", "d5", "e", "role", "CTO", 0.9),
        ("o6", "d6", "e", "role", "Chief Technology Officer", 0.9),
        ("o7", "d6", "e", "role", "chief technology officer", 0.9),
    )
    attrs, sups = build_entity_attributes(observations, documents, None)
    assert timeline(attrs, "e", "role") == [("senior engineer", d(2025, 1, 1), d(2025, 1, 2)),
                                            ("Chief Technology Officer", d(2025, 1, 2), None)]
    assert sups["old_value"].to_list() == ["senior engineer"]
    assert attrs["normalized_value"].to_list() == ["senior engineer", "chief technology officer"]
    assert attrs["observation_count"].to_list() == [1, 6]  # the most frequent form is shown


def test_an_acronym_with_two_expansions_stays_its_own_value():
    documents = docs(*[(f"d{i}", d(2025, 1, i), INGESTED) for i in range(1, 4)])
    observations = obs(
        ("o1", "d1", "e", "role", "Chief Technology Officer", 0.9),
        ("o2", "d2", "e", "role", "CTO", 0.9),
        ("o3", "d3", "e", "role", "Chief Trust Officer", 0.9),
    )
    attrs, _ = build_entity_attributes(observations, documents, None)
    assert [v for v, _, _ in timeline(attrs, "e", "role")] == ["Chief Technology Officer", "CTO", "Chief Trust Officer"]


def test_honorifics_corporate_suffixes_and_punctuation_fold_in_values():
    documents = docs(*[(f"d{i}", d(2025, 1, i), INGESTED) for i in range(1, 7)])
    observations = obs(
        ("o1", "d1", "e", "founder", "Dr. Alan Okafor", 0.9),
        ("o2", "d2", "e", "founder", "Alan Okafor", 0.9),
        ("o3", "d3", "e", "employer", "Northwind Robotics Inc.", 0.9),
        ("o4", "d4", "e", "employer", "Northwind Robotics", 0.9),
        ("o5", "d5", "e", "headquarters", "U.S.", 0.9),
        ("o6", "d6", "e", "headquarters", "United States", 0.9),
    )
    attrs, sups = build_entity_attributes(observations, documents, None)
    assert attrs.height == 3 and sups.height == 0
    # different words stay different values ("President of QDL" is not "QDL")
    other = obs(("o1", "d1", "e", "role", "President of QDL", 0.9), ("o2", "d2", "e", "role", "QDL", 0.9))
    assert build_entity_attributes(other, documents, None)[0].height == 2


def test_keys_are_normalized_again_and_empty_keys_or_values_dropped():
    documents = docs(("d1", d(2025, 1, 1), INGESTED), ("d2", d(2025, 2, 1), INGESTED))
    observations = obs(
        ("o1", "d1", "e", "Employer", "Acme", 0.9),
        ("o2", "d2", "e", " employer ", "Acme", 0.9),
        ("o3", "d2", "e", "HQ-location", "Oslo", 0.9),
        ("o4", "d2", "e", "foundedYear", "1999", 0.9),
        ("o5", "d2", "e", "role", "   ", 0.9),
        ("o6", "d2", "e", "  --  ", "x", 0.9),
        ("o7", "d2", "e", "role", None, 0.9),
        ("o8", "d2", None, "role", "x", 0.9),
    )
    attrs, _ = build_entity_attributes(observations, documents, None)
    assert attrs.select("attr_key", "value", "observation_count").rows() == [
        ("employer", "Acme", 2), ("founded_year", "1999", 1), ("hq_location", "Oslo", 1)]


def test_a_value_that_comes_back_makes_three_rows():
    documents = docs(*[(f"d{i}", d(2025, i, 1), INGESTED) for i in range(1, 6)])
    observations = obs(
        ("o1", "d1", "e", "city", "Paris", 0.9),
        ("o2", "d2", "e", "city", "Berlin", 0.9),
        ("o3", "d3", "e", "city", "Berlin", 0.9),
        ("o4", "d4", "e", "city", "paris", 0.9),
        ("o5", "d5", "e", "city", "Paris", 0.9),
    )
    attrs, sups = build_entity_attributes(observations, documents, None)
    assert timeline(attrs, "e", "city") == [
        ("Paris", d(2025, 1, 1), d(2025, 2, 1)),
        ("Berlin", d(2025, 2, 1), d(2025, 4, 1)),
        ("Paris", d(2025, 4, 1), None),
    ]
    assert attrs["observation_count"].to_list() == [1, 2, 2]
    assert attrs["attribute_id"].n_unique() == 3  # same value, different valid_from: different ids
    assert sups.select("old_value", "new_value", "superseded_at").rows() == [
        ("Paris", "Berlin", d(2025, 2, 1)), ("Berlin", "Paris", d(2025, 4, 1))]
    assert sups["new_attribute_id"].to_list() == attrs["attribute_id"][1:].to_list()
    assert sups["old_attribute_id"].to_list() == attrs["attribute_id"][:2].to_list()


def test_same_time_conflicts_resolve_by_total_confidence_then_count_then_alphabet():
    documents = docs(("d0", d(2025, 1, 1), INGESTED), ("d1", d(2025, 2, 1), INGESTED), ("d2", d(2025, 2, 1), INGESTED))
    base = ("o0", "d0", "e", "ceo", "Alice", 0.9)
    # total confidence: Bob 0.5 + 0.4 = 0.9 beats Carol 0.85 (and the losers leave no trace)
    attrs, sups = build_entity_attributes(obs(
        base, ("o1", "d1", "e", "ceo", "Bob", 0.5), ("o2", "d2", "e", "ceo", "Bob", 0.4),
        ("o3", "d1", "e", "ceo", "Carol", 0.85)), documents, None)
    assert timeline(attrs, "e", "ceo") == [("Alice", d(2025, 1, 1), d(2025, 2, 1)), ("Bob", d(2025, 2, 1), None)]
    assert attrs["observation_count"].to_list() == [1, 2] and sups.height == 1
    # equal total confidence: more observations wins (0.1 + 0.2 == 0.3 exactly in micro-units)
    attrs, _ = build_entity_attributes(obs(
        base, ("o1", "d1", "e", "ceo", "Zed", 0.1), ("o2", "d2", "e", "ceo", "Zed", 0.2),
        ("o3", "d1", "e", "ceo", "Carol", 0.3)), documents, None)
    assert attrs["value"].to_list() == ["Alice", "Zed"]
    # full tie: alphabetical normalized value
    attrs, _ = build_entity_attributes(obs(
        base, ("o1", "d1", "e", "ceo", "Dave", 0.6), ("o3", "d2", "e", "ceo", "carol", 0.6)), documents, None)
    assert attrs["value"].to_list() == ["Alice", "carol"]
    # a same-time winner equal to the previous value extends that row instead of opening a new one
    attrs, sups = build_entity_attributes(obs(
        base, ("o1", "d1", "e", "ceo", "alice", 0.9), ("o3", "d2", "e", "ceo", "Bob", 0.2)), documents, None)
    assert timeline(attrs, "e", "ceo") == [("Alice", d(2025, 1, 1), None)] and sups.height == 0
    assert attrs["observation_count"].to_list() == [2]


def test_null_confidence_uses_the_configurable_default():
    documents = docs(("d1", d(2025, 1, 1), INGESTED))
    observations = obs(("o1", "d1", "e", "ceo", "Bob", None), ("o2", "d1", "e", "ceo", "Carol", 0.7))
    attrs, _ = build_entity_attributes(observations, documents, None)
    assert attrs.select("value", "confidence").rows() == [("Bob", 0.8)]
    attrs, _ = build_entity_attributes(observations, documents, None, default_confidence=0.5)
    assert attrs.select("value", "confidence").rows() == [("Carol", 0.7)]


REDIRECTS = pl.DataFrame({"from_id": ["e_alias"], "to_id": ["e_keeper"]})


def test_redirects_migrate_attributes_and_the_keeper_wins_a_same_time_conflict():
    documents = docs(("d1", d(2025, 1, 1), INGESTED), ("d2", d(2025, 3, 1), INGESTED), ("d3", d(2025, 3, 1), INGESTED),
                     ("d4", d(2025, 5, 1), INGESTED))
    observations = obs(
        ("o1", "d1", "e_alias", "employer", "Northwind Robotics", 0.9),  # only the alias knew this: migrates
        ("o2", "d2", "e_keeper", "employer", "Acme", 0.3),  # keeper vs alias at the same time: keeper wins
        ("o3", "d3", "e_alias", "employer", "Globex", 0.99),
        ("o4", "d3", "e_alias", "employer", "Globex", 0.99),
        ("o5", "d4", "e_alias", "role", "CTO", 0.9),
    )
    attrs, sups = build_entity_attributes(observations, documents, REDIRECTS)
    assert set(attrs["entity_id"]) == {"e_keeper"} and set(sups["entity_id"]) == {"e_keeper"}
    assert timeline(attrs, "e_keeper", "employer") == [
        ("Northwind Robotics", d(2025, 1, 1), d(2025, 3, 1)),
        ("Acme", d(2025, 3, 1), None),
    ]
    assert timeline(attrs, "e_keeper", "role") == [("CTO", d(2025, 5, 1), None)]
    assert sups.select("old_value", "new_value").rows() == [("Northwind Robotics", "Acme")]
    # without the merge, the alias keeps its own timeline
    alone, _ = build_entity_attributes(observations, documents, None)
    assert timeline(alone, "e_alias", "employer")[-1] == ("Globex", d(2025, 3, 1), None)
    # keepers restricts who wins by merge rank: an unlisted canonical id falls back to confidence
    other, _ = build_entity_attributes(observations, documents, REDIRECTS, keepers=["e_someone_else"])
    assert timeline(other, "e_keeper", "employer")[-1] == ("Globex", d(2025, 3, 1), None)


def test_duplicate_redirect_rows_do_not_duplicate_observations():
    redirects = pl.DataFrame({
        "from_id": ["e_alias", "e_alias", "e_keeper"], "to_id": ["e_old", "e_keeper", "e_keeper"],
        "created_at": [d(2025, 1, 1), d(2025, 6, 1), d(2025, 6, 1)],
    })
    observations = obs(("o1", "d1", "e_alias", "role", "CTO", 0.9), ("o2", "d1", "e_keeper", "role", "CTO", 0.9))
    attrs, _ = build_entity_attributes(observations, docs(("d1", d(2025, 1, 1), INGESTED)), redirects)
    assert attrs.select("entity_id", "observation_count").rows() == [("e_keeper", 2)]


def random_world(seed, n=300):
    rng = random.Random(seed)
    values = ["Acme", "acme", "the Acme", "Globex", "Initech", "  initech ", "Umbrella"]
    documents = docs(*[
        (f"d{i}", None if i % 5 == 0 else d(2024, 1 + i % 12, 1 + i % 3), d(2025, 1 + i % 7, 1))
        for i in range(25)
    ])
    rows = [
        (f"o{i}", f"d{rng.randrange(25)}", rng.choice(["e1", "e2", "e3", "e_alias"]),
         rng.choice(["employer", "Employer", "city"]), rng.choice(values),
         rng.choice([None, 0.5, 0.7, 0.9, 0.1, 0.2, 0.3]))
        for i in range(n)
    ]
    redirects = pl.DataFrame({"from_id": ["e_alias"], "to_id": ["e1"]})
    return obs(*rows), documents, redirects


def test_exactly_one_current_row_per_key_and_a_closed_contiguous_history():
    observations, documents, redirects = random_world(1)
    attrs, sups = build_entity_attributes(observations, documents, redirects)
    current = current_attributes(attrs)
    keys = attrs.select("entity_id", "attr_key").unique()
    assert current.height == keys.height == current.select("entity_id", "attr_key").unique().height
    assert attrs.height - keys.height == sups.height  # one supersession per closed row
    check = attrs.with_columns(
        pl.col("valid_from").shift(-1).over("entity_id", "attr_key").alias("next_from"),
        pl.col("normalized_value").shift(-1).over("entity_id", "attr_key").alias("next_value"),
    )
    closed = check.filter(pl.col("valid_until").is_not_null())
    assert (closed["valid_until"] == closed["next_from"]).all()  # no gaps, no overlaps
    assert (closed["normalized_value"] != closed["next_value"]).all()  # runs really changed
    assert (closed["valid_from"] < closed["valid_until"]).all()
    assert attrs["attribute_id"].n_unique() == attrs.height
    assert sups["supersession_id"].n_unique() == sups.height
    assert all(re.fullmatch(r"attr_[0-9a-f]{16}", a) for a in attrs["attribute_id"])
    # every instant after the first observation has exactly one value per key
    for when in [d(2024, 3, 2), d(2024, 8, 15), d(2030, 1, 1)]:
        at = attributes_as_of(attrs, when)
        assert at.height == at.select("entity_id", "attr_key").unique().height


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_any_row_order_gives_identical_frames(seed):
    observations, documents, redirects = random_world(10 + seed)
    expected = build_entity_attributes(observations, documents, redirects)
    for shuffle_seed in range(3):
        got = build_entity_attributes(
            observations.sample(fraction=1.0, shuffle=True, seed=shuffle_seed),
            documents.sample(fraction=1.0, shuffle=True, seed=shuffle_seed),
            redirects,
        )
        assert got[0].equals(expected[0]) and got[1].equals(expected[1])


def test_order_of_ingestion_does_not_matter():
    observations, documents, redirects = random_world(7)
    first, second = observations.head(120), observations.slice(120)
    all_at_once = build_entity_attributes(observations, documents, redirects)
    build_entity_attributes(first, documents, redirects)  # an earlier build leaves nothing behind
    for batch in (pl.concat([first, second]), pl.concat([second, first]),
                  pl.concat([second.reverse(), first.reverse()]),
                  pl.concat([first, observations])):  # re-feeding an overlapping union is harmless
        result = build_entity_attributes(batch, documents, redirects)
        assert result[0].equals(all_at_once[0]) and result[1].equals(all_at_once[1])
    # and the subset alone is a different, smaller history (sanity: the test has teeth)
    assert not build_entity_attributes(first, documents, redirects)[0].equals(all_at_once[0])


def test_employer_story_arriving_newest_first_gives_the_same_timeline():
    newest_first = build_entity_attributes(EMPLOYER_OBS.reverse(), EMPLOYER_DOCS, None)
    in_order = build_entity_attributes(EMPLOYER_OBS, EMPLOYER_DOCS, None)
    assert newest_first[0].equals(in_order[0]) and newest_first[1].equals(in_order[1])
    late_old_fact = build_entity_attributes(EMPLOYER_OBS.filter(pl.col("observation_id") != "o2"), EMPLOYER_DOCS, None)
    assert timeline(late_old_fact[0]) == timeline(in_order[0])  # 2025-02-25 only corroborates Northwind


def test_empty_input_gives_empty_frames_with_the_right_schemas():
    empty_obs = pl.DataFrame(schema=ATTRIBUTE_OBSERVATIONS)
    empty_docs = docs()
    for observations, documents in [
        (empty_obs, empty_docs),
        (empty_obs, EMPLOYER_DOCS),
        (obs(("o1", "d1", "e", "role", "", 0.9)), EMPLOYER_DOCS),  # everything dropped
        (EMPLOYER_OBS, empty_docs),  # no time for anything
    ]:
        attrs, sups = build_entity_attributes(observations, documents, pl.DataFrame(schema={"from_id": pl.String, "to_id": pl.String}))
        assert attrs.height == 0 and sups.height == 0
        assert attrs.schema == pl.Schema(ENTITY_ATTRIBUTES) and sups.schema == pl.Schema(ATTRIBUTE_SUPERSESSIONS)
    assert attributes_as_of(attrs, d(2025, 1, 1)).schema == pl.Schema(ENTITY_ATTRIBUTES)


def test_the_warehouse_attribute_views_match_the_polars_functions(tmp_path):
    from kg_assets.storage.warehouse import Warehouse

    observations, documents, redirects = random_world(3)
    attrs, _ = build_entity_attributes(observations, documents, redirects)
    wh = Warehouse(tmp_path / "warehouse.duckdb")
    wh.replace_tables({"entity_attributes": attrs})

    def ids(query):
        return sorted(wh.run_user_query(query)["attribute_id"])

    assert ids("SELECT attribute_id FROM kg.entity_attributes_current") == sorted(current_attributes(attrs)["attribute_id"])
    history = wh.run_user_query("SELECT attribute_id, version, is_current FROM kg.entity_attributes_history")
    assert history["attribute_id"].to_list() == attrs["attribute_id"].to_list()  # same order as the frame
    assert history["is_current"].sum() == current_attributes(attrs).height
    for when in [d(2024, 1, 1), d(2024, 3, 2), d(2024, 6, 1), d(2024, 11, 2), d(2030, 1, 1)]:
        expected = sorted(attributes_as_of(attrs, when)["attribute_id"])
        with wh.connect(read_only=True) as con:
            con.execute("SET VARIABLE kg_as_of = ?", [when])
            assert sorted(r[0] for r in con.execute("SELECT attribute_id FROM kg.entity_attributes_as_of").fetchall()) == expected
        assert ids(f"SELECT attribute_id FROM kg.entity_attributes_at(TIMESTAMPTZ '{when.isoformat()}')") == expected
    # without the variable: an error naming it, not an empty answer
    with pytest.raises(Exception, match="reads the variable kg_as_of, which is not set: SET VARIABLE kg_as_of"):
        wh.run_user_query("SELECT * FROM kg.entity_attributes_as_of")


def test_values_naming_a_linked_entity_resolve_to_its_canonical_name():
    from kg_assets.core.temporal import resolve_entity_values

    obs = pl.DataFrame({"entity_id": ["e_webb"] * 3, "attr_key": ["employer"] * 3,
                        "value": ["QDL", "Quantum Dynamics Lab", "Acme Unknown"]})
    mentions = pl.DataFrame({"entity_id": ["e_qdl", "e_qdl", "e_person"], "name": ["QDL", "Quantum Dynamics Lab", "Qdl"]})
    entities = pl.DataFrame({"entity_id": ["e_qdl", "e_person"], "name": ["Quantum Dynamics Lab", "Q. D. Lee"], "mention_count": [9, 1]})
    out = resolve_entity_values(obs, mentions, entities)
    assert out["value"].to_list() == ["Quantum Dynamics Lab", "Quantum Dynamics Lab", "Acme Unknown"]
    assert out.columns == obs.columns

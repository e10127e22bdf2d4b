import hashlib

import polars as pl
import pytest

from kg_assets.core.normalize import (
    entity_id,
    is_description_expr,
    normalize_name,
    normalize_name_expr,
    parse_keywords,
    with_entity_ids,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("John Doe", "JOHN_DOE"),
        ("john doe", "JOHN_DOE"),
        ("the Company", "COMPANY"),
        ("John's team", "JOHN_TEAM"),
        ("  Dr.  Sarah   Chen ", "DR_SARAH_CHEN"),
        ("Zoë Müller", "ZOE_MULLER"),
        ("São Paulo", "SAO_PAULO"),
        ("U.S.", "U_S"),
        ("Northwind Robotics Inc.", "NORTHWIND_ROBOTICS_INC"),
        ("Theodore Roosevelt", "THEODORE_ROOSEVELT"),  # 'The' only as a whole leading word
        ("An apple", "APPLE"),
    ],
)
def test_normalize_name_follows_the_seed_rules(raw, expected):
    assert normalize_name(raw) == expected


def test_vectorized_normalization_equals_the_scalar_rule():
    names = ["John Doe", "the Company", "John's team", "Zoë Müller", "U.S.", "  a  b ", "Theodore", "O'Brien’s lab", ""]
    frame = pl.DataFrame({"name": names}).with_columns(normalize_name_expr(pl.col("name")).alias("norm"))
    assert frame["norm"].to_list() == [normalize_name(n) for n in names]


def test_entity_id_is_the_documented_sha256_prefix():
    expected = "entity_" + hashlib.sha256(b"PERSON::SARAH_CHEN").hexdigest()[:14]
    assert entity_id("PERSON", "SARAH_CHEN") == expected
    assert entity_id("ORGANIZATION", "SARAH_CHEN") != expected


def test_with_entity_ids_hashes_each_pair_consistently():
    frame = pl.DataFrame({"t": ["PERSON", "PERSON", "LOCATION"], "n": ["A", "A", "A"], "row": [1, 2, 3]})
    out = with_entity_ids(frame, "t", "n", "id").sort("row")
    assert out["id"].to_list() == [entity_id("PERSON", "A"), entity_id("PERSON", "A"), entity_id("LOCATION", "A")]


def test_a_description_id_carries_its_document():
    expected = "entity_" + hashlib.sha256(b"PERSON::GIRL::d1").hexdigest()[:14]
    assert entity_id("PERSON", "GIRL", "d1") == expected != entity_id("PERSON", "GIRL", "d2")
    frame = pl.DataFrame({"t": ["PERSON"] * 3, "n": ["GIRL"] * 3, "scope": ["d1", "d2", None]})
    out = with_entity_ids(frame, "t", "n", "id", scope_col="scope")
    assert out["id"].to_list() == [expected, entity_id("PERSON", "GIRL", "d2"), entity_id("PERSON", "GIRL")]


def test_a_description_is_written_in_lower_case_and_has_a_letter():
    names = ["people", "the sect", "12-year-old girl", "Sarah Chen", "the Doctor", "iPhone", "200", "東京", "ΕΛΛΑΔΑ"]
    out = pl.DataFrame({"name": names, "entity_type": "OTHER"}).select(
        is_description_expr(pl.col("name"), pl.col("entity_type")))
    # a number and a name in a script without case are no descriptions: they stay names corpus-wide
    assert out.to_series().to_list() == [True, True, True, False, False, False, False, False, False]


def test_relation_keywords_are_read_into_a_list_one_way():
    assert parse_keywords("works at; Leads, , leads ;  employment  history") == ["works at", "Leads", "employment history"]
    assert parse_keywords(["works at, leads", None, "Works At", "AI/ML"]) == ["works at", "leads", "AI/ML"]
    assert parse_keywords(None) == parse_keywords("") == parse_keywords(" ; , ") == parse_keywords([]) == []

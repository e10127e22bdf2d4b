"""The seed's rules for learning facts: extractability, sampling, snapping, answer validation, third person."""

import pytest

from kg_assets.core.facts.person import is_first_person, to_third_person
from kg_assets.core.facts.records import RawFact
from kg_assets.core.facts.rules import (
    SHORT_PHRASES,
    extractability_problem,
    is_sampled,
    sample_point,
    snap,
    validate_answer,
    CONFIDENCE_LEVELS,
    IMPORTANCE_LEVELS,
)


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ("I just got promoted to senior engineer at Google last week!", None),  # the seed's extraction example
        ("I just started learning Japanese!", None),
        ("I work at Microsoft as a PM", None),
        ("hey what's up", "shorter than 20 characters"),  # the seed's "no facts" example
        ("I'm allergic to nuts", None),  # exactly 20 characters passes
        ("I love hiking a lot", "shorter than 20 characters"),  # 19 do not
        ("!remember I'm allergic to peanuts", "starts like a command (! / ? .)"),
        ("/teachbot @user Works night shifts", "starts like a command (! / ? .)"),
        ("?what do you know about me", "starts like a command (! / ? .)"),
        (".ping the server please now", "starts like a command (! / ? .)"),
        ("12:30 - 14:45 / 2025-10-21 ok", "less than 50% letters"),
        ("https://x.io/a1/b2/c3/d4/e5/f6", "less than 50% letters"),
        ("ab12 cd34 ef56 gh78 ij90", "less than 50% letters"),  # 10 letters of 24 characters
    ],
)
def test_extractability_is_the_seeds_check(message, problem):
    assert extractability_problem(message) == problem


def test_the_seeds_short_phrases_are_never_extractable():
    assert len(SHORT_PHRASES) == 22
    for phrase in SHORT_PHRASES:
        assert extractability_problem(phrase) is not None
        assert extractability_problem(phrase.upper() + "  ") is not None


def test_sampling_is_a_fixed_choice_per_message_id_at_the_configured_rate():
    ids = [f"m-{i}" for i in range(20_000)]
    at_30 = {m for m in ids if is_sampled(m, 0.3)}
    assert at_30 == {m for m in ids if is_sampled(m, 0.3)}  # a rerun makes the same choice
    assert 0.29 < len(at_30) / len(ids) < 0.31
    at_60 = {m for m in ids if is_sampled(m, 0.6)}
    assert at_30 < at_60  # a higher rate only adds messages
    assert not any(is_sampled(m, 0.0) for m in ids)
    assert all(is_sampled(m, 1.0) for m in ids)
    assert not any(is_sampled(m, 1.0, enabled=False) for m in ids)
    assert 0.0 <= min(sample_point(m) for m in ids) and max(sample_point(m) for m in ids) < 1.0


@pytest.mark.parametrize("rate", [-0.1, 1.5, "0.3", None])
def test_a_rate_outside_zero_to_one_is_refused(rate):
    with pytest.raises(ValueError, match="FACT_EXTRACTION_RATE must be between 0.0 and 1.0"):
        is_sampled("m-1", rate)


@pytest.mark.parametrize(
    ("value", "levels", "expected", "noted"),
    [
        (1.0, CONFIDENCE_LEVELS, 1.0, False),
        (0.8, CONFIDENCE_LEVELS, 0.8, False),
        (0.9, CONFIDENCE_LEVELS, 0.8, True),  # a tie (0.8 / 1.0) goes to the lower level
        (0.7, CONFIDENCE_LEVELS, 0.6, True),
        (0.75, CONFIDENCE_LEVELS, 0.8, True),
        (0.1, CONFIDENCE_LEVELS, 0.6, True),
        (7, CONFIDENCE_LEVELS, 1.0, True),  # clamped to 1.0 first
        (-2, CONFIDENCE_LEVELS, 0.6, True),
        (0.7, IMPORTANCE_LEVELS, 0.8, True),  # the seed's own example answer uses importance 0.7
        (0.65, IMPORTANCE_LEVELS, 0.5, True),
        (0.4, IMPORTANCE_LEVELS, 0.3, True),
        (0.3, IMPORTANCE_LEVELS, 0.3, False),
        (1, IMPORTANCE_LEVELS, 1.0, False),
    ],
)
def test_levels_snap_to_the_nearest_and_each_snap_is_reported(value, levels, expected, noted):
    level, note = snap(value, levels, 0.5)
    assert level == expected
    assert (note is not None) == noted
    if noted:
        assert f"snapped to {expected}" in note


@pytest.mark.parametrize("value", [None, "high", float("nan"), True])
def test_a_level_that_is_no_number_takes_the_default_with_a_note(value):
    level, note = snap(value, IMPORTANCE_LEVELS, 0.5)
    assert level == 0.5
    assert "is not a number; took 0.5" in note


def test_an_answer_is_validated_snapped_and_every_change_noted():
    facts, notes = validate_answer([
        RawFact("work", "works as senior engineer at Google", 1.0, 0.8, "present"),
        RawFact("event", "recently got promoted.", 1.0, 0.7, "past"),  # the seed's example, importance 0.7
        RawFact("Hobby ", "I love hiking", 0.9, None, "always"),
        RawFact("pets", "has two cats named Luna and Stella", 0.8, 0.5, "present"),  # a fourth fact
    ])
    assert [(f.fact_type, f.content, f.confidence, f.importance, f.temporal) for f in facts] == [
        ("work", "works as senior engineer at Google", 1.0, 0.8, "present"),
        ("event", "recently got promoted", 1.0, 0.8, "past"),
        ("hobby", "loves hiking", 0.8, 0.5, "present"),
    ]
    assert notes == [
        "fact 2: importance 0.7 snapped to 0.8",
        "fact 3: first person rewritten as 'loves hiking'",
        "fact 3: temporal 'always' unknown; took present",
        "fact 3: confidence 0.9 snapped to 0.8",
        "fact 3: importance None is not a number; took 0.5",
        "fact 4: over 3 facts per message dropped",
    ]


def test_facts_must_be_under_100_characters_and_not_empty():
    ok = "x" * 99
    facts, notes = validate_answer([
        RawFact("general", "y" * 100, 0.8, 0.5, "present"),
        RawFact("general", "   ", 0.8, 0.5, "present"),
        RawFact("general", None, 0.8, 0.5, "present"),
        RawFact("mystery", ok, 0.8, 0.5, "present"),
    ])
    assert [(f.fact_type, f.content) for f in facts] == [("general", ok)]
    assert notes == [
        "fact 1: 100 characters (limit 99) dropped",
        "fact 2: empty content dropped",
        "fact 3: empty content dropped",
        "fact 4: type 'mystery' unknown; took general",
    ]


@pytest.mark.parametrize(
    ("first", "third"),
    [
        ("I love hiking.", "loves hiking"),
        ("I'm a nurse at St. Mary's", "is a nurse at St. Mary's"),
        ("I have two younger sisters", "has two younger sisters"),
        ("I watch horror movies", "watches horror movies"),
        ("I don't like cats", "does not like cats"),
        ("I've been to Paris", "has been to Paris"),
        ("I never eat meat", "never eats meat"),
        ("I try to run daily", "tries to run daily"),
        ("I used to live in Paris", "used to live in Paris"),
        ("I went to Italy with my sister", "went to Italy with their sister"),
        ("We moved to São Paulo", "moved to São Paulo"),
        ("My son is in junior high.", "their son is in junior high"),
        ("I drive an F150 and I love it", "drives an F150 and they love it"),
        ("Paris is lovely", "Paris is lovely"),
        ("I moved to the US when I was ten", "moved to the US when they were ten"),
        ("I wrote a book about World War I", "wrote a book about World War I"),
    ],
)
def test_first_person_becomes_the_seeds_third_person(first, third):
    assert to_third_person(first) == third


def test_a_country_or_a_numeral_is_not_a_first_person_pronoun():
    assert not is_first_person("moved to the US") and not is_first_person("studies World War I")
    assert is_first_person("their friends visit us") and is_first_person("I'm from Ohio")

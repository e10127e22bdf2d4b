"""heuristic-14 and name-rules-14: made-up sentences, one test per rule (docs/linking-and-history.md)."""

import polars as pl

from kg_assets_tests.test_graph_rules_13 import heuristic_types
from kg_assets_tests.test_linking import P, X, clusters, mentions, same


def _with_confidence(frame: pl.DataFrame, conf: list[float]) -> pl.DataFrame:
    return frame.with_columns(pl.Series("confidence", conf, dtype=pl.Float64))


def test_a_plain_persons_name_typed_a_person_surely_is_that_person_everywhere():
    frame = _with_confidence(mentions(("d1", "Tarvin Oskel", P), ("d2", "Tarvin Oskel", X),
                                      ("d3", "Mirel Vaas", P), ("d3", "Mirel Vaas", X), ("d3", "Mirel Vaas", X),
                                      ("d4", "Doran Kell", P), ("d5", "Doran Kell", X),
                                      ("d6", "Doctor Who", P), ("d7", "Doctor Who", X)),
                             [0.75, 0.4, 0.85, 0.4, 0.4, 0.55, 0.4, 0.85, 0.4])
    c = clusters(frame)
    assert same(c, ("Tarvin Oskel", X), ("Tarvin Oskel", P))  # across documents
    assert same(c, ("Mirel Vaas", X), ("Mirel Vaas", P))  # outnumbered in its own document
    # a guess from context only is no evidence, and a title or a function word makes no person's name
    assert not same(c, ("Doran Kell", X), ("Doran Kell", P))
    assert not same(c, ("Doctor Who", X), ("Doctor Who", P))


def test_to_after_a_verb_of_speaking_or_losing_names_no_place():
    types = heuristic_types("Officials spoke to Velmora Radio on Monday. The hall is dedicated to Tarvin Oskel. "
                            "The club lost to Dunmore Rovers. The team travelled to Karstadt.")
    assert types.get("Velmora Radio") == X and types.get("Tarvin Oskel") == X, types
    assert types.get("Dunmore Rovers") == X, types
    assert types.get("Karstadt") == "LOCATION", types  # where one goes is still a place


def test_who_with_a_plural_verb_speaks_of_a_team_not_a_person():
    types = heuristic_types("The derby was won by Dunmore Rovers, who have lost once. Tarvin Oskel, who has "
                            "coached them, smiled.")
    assert types.get("Dunmore Rovers") == X, types
    assert types.get("Tarvin Oskel") == P, types


def test_an_arabic_article_is_part_of_a_persons_name():
    types = heuristic_types("Velmoran President Karim al-Tarsi met aides. Later al-Tarsi left, and Tarsi spoke. "
                            "The al-Dunmar Front fought.")
    assert types.get("Karim al-Tarsi") == P, types  # the title split off, the name whole
    assert types.get("Tarsi") == P, types  # the surname alone after the full name
    assert "Dunmar Front" in types and "al-Dunmar Front" not in types, types  # "The al-..." opens no person


def test_a_surname_with_its_particle_after_the_full_name_is_the_person():
    types = heuristic_types("The minister Tarvin de Oskel arrived. De Oskel also spoke. Van Gogh painted.")
    assert types.get("Tarvin de Oskel") == P and types.get("De Oskel") == P, types
    assert types.get("Van Gogh") != P, types  # no full name before it

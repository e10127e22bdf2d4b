"""heuristic-13 and name-rules-13: made-up sentences, one test per rule (docs/linking-and-history.md)."""

import polars as pl

from kg_assets_tests.test_linking import O, P, X, clusters, mentions, same
from kg_assets_tests.test_true_graph import heuristic_names


def heuristic_types(text: str) -> dict[str, str]:
    from kg_assets.extractors.heuristic import HeuristicExtractor
    rows = HeuristicExtractor().extract(pl.DataFrame({"chunk_id": ["c"], "document_id": ["d"], "text": [text]}))
    return dict(rows.mentions.select("name", "entity_type").iter_rows())


def test_a_credit_line_names_no_entity_of_the_story():
    names = heuristic_names(
        'The Velmora council met on Monday, Tessa Quill said. "We will build," she said. '
        "Author: Brannock Hale, Lisbon / dfm Editor: Orla Fenwick")
    assert {"Velmora", "Tessa Quill"} <= set(names), names
    assert not {"Brannock Hale", "Lisbon", "Orla Fenwick"} & set(names), names
    names = heuristic_names("By Brannock Hale\nThe Velmora council met in Lisbon. The mayor agreed. ab / cd (Korvath, "
                            "Dellweg Press)")
    assert "Lisbon" in names and not {"Brannock Hale", "Korvath", "Dellweg Press"} & set(names), names
    # a label inside a sentence is prose, and so is a parenthesis that ends no credit
    names = heuristic_names("He met the editor: Orla Fenwick agreed. The Velmora Party (VP) won.")
    assert "Orla Fenwick" in names, names
    # a label at the head of a note says who wrote the note, a person of its story
    text = "Author: Brannock Hale, Velmora Works\nBrannock Hale met the team of Velmora Works on Monday."
    assert heuristic_names(text).count("Brannock Hale") == 2
    assert heuristic_names(text.replace("\n", " Editor: Orla Fenwick\n", 1)).count("Brannock Hale") == 2


def test_a_noun_for_a_person_before_a_name_makes_it_a_person():
    types = heuristic_types("The British journalist Tarvin Osk visited the city. His wife Meloa Drux stayed home, "
                            "and striker Quennel Abara scored twice.")
    assert types.get("Tarvin Osk") == P and types.get("Meloa Drux") == P and types.get("Quennel Abara") == P, types
    # a name the gazetteer or a head word types keeps its type
    types = heuristic_types("The director Velmora University hired was late.")
    assert types.get("Velmora University") == O, types


def test_an_adjective_in_al_or_an_abstract_noun_alone_is_no_name():
    names = heuristic_names('He spoke to the Social and Environmental council of Velmora about "Brutalism" and '
                            "Modernization plans.")
    assert "Velmora" in names and not {"Social", "Environmental", "Brutalism", "Modernization"} & set(names), names


def test_a_nationality_adjective_before_a_name_the_chunk_names_alone_is_no_part_of_it():
    names = heuristic_names("The revolution in Shiite Iran was studied in Iran. Members of the French Velmora Party "
                            "met; the Velmora Party said no. The European Commission and the Commission agreed. "
                            "Latin America voted.")
    assert {"Iran", "Velmora Party", "European Commission", "Latin America"} <= set(names), names
    assert not {"Shiite Iran", "French Velmora Party"} & set(names), names


def _with_confidence(frame: pl.DataFrame, conf: list[float]) -> pl.DataFrame:
    return frame.with_columns(pl.Series("confidence", conf, dtype=pl.Float64))


def test_an_untyped_full_name_is_the_person_its_document_surely_types_in_more_mentions():
    frame = _with_confidence(mentions(("d1", "Tarvin Osk", P), ("d1", "Tarvin Osk", P), ("d1", "Tarvin Osk", X),
                                      ("d2", "Mirel Vaas", P), ("d2", "Mirel Vaas", X), ("d2", "Mirel Vaas", X),
                                      ("d3", "Doran Kell", P), ("d3", "Doran Kell", X)),
                             [0.75, 0.75, 0.4, 0.75, 0.4, 0.4, 0.55, 0.4])
    c = clusters(frame)
    assert same(c, ("Tarvin Osk", X), ("Tarvin Osk", P))
    # typed by a guess from context only, the two stay apart; outnumbered by untyped mentions they stayed apart too
    # until name-rules-14, which joins a plain person's name typed a person surely (test_graph_rules_14)
    assert same(c, ("Mirel Vaas", X), ("Mirel Vaas", P))
    assert not same(c, ("Doran Kell", X), ("Doran Kell", P))


def test_an_untyped_head_of_an_organisations_name_joins_the_organisation_its_document_names():
    c = clusters(mentions(("d1", "Velmora Trade Commission", O), ("d1", "Commission", X),
                          ("d2", "University of Tarsk", O), ("d2", "University", X),
                          ("d3", "Velmora Trade Commission", O), ("d4", "Tarsk", X), ("d4", "Lake Tarsk", "LOCATION")))
    assert same(c, ("Commission", X), ("Velmora Trade Commission", O))
    assert same(c, ("University", X), ("University of Tarsk", O))
    assert not same(c, ("Tarsk", X), ("Lake Tarsk", "LOCATION"))  # only organisations, not places

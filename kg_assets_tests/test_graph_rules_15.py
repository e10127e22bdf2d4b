"""heuristic-15: made-up sentences, one test per rule (docs/linking-and-history.md)."""

from kg_assets_tests.test_graph_rules_13 import heuristic_types


def test_a_proper_adjective_before_a_noun_for_a_place_is_no_name():
    types = heuristic_types("Voters in the Dravonic nation went to the polls. The Velmora Trust praised the "
                            "Dravonic country's calm, and the final was played at Korvine stadium.")
    assert "Dravonic" not in types and "Korvine" not in types, types
    assert "Velmora Trust" in types, types
    # written alone too ("the Dravonic" before a verb, at a sentence's end), it names something and stays
    types = heuristic_types("Ships sailed across the Dravonic. The Dravonic nation watched them.")
    assert "Dravonic" in types, types
    # another noun after it is no description of a place ("the Velmoric era" may name a period)
    types = heuristic_types("Historians wrote about the Velmoric era, Tessa Quill said.")
    assert "Velmoric" in types, types


def test_a_religion_after_in_is_no_place():
    types = heuristic_types("Tessa Quill teaches at Velmora College. She wrote about reform in Islam last year.")
    assert types.get("Islam") == "OTHER", types


def test_a_section_label_and_a_plural_noun_for_people_are_no_names():
    types = heuristic_types("Read more: Velmora votes, Korvath Opinion: why the mayor lost\n"
                            "Dravon council meets again - Interview with Tessa Quill\n"
                            "Vow to continue Lawmakers backing change said they would return to Dravon.")
    assert not {"Korvath Opinion", "Interview", "Lawmakers"} & set(types), types
    assert "Tessa Quill" in types, types


def test_a_chamber_or_a_corps_heads_an_organisations_name():
    types = heuristic_types("Brannock Hale of the Velmora Chamber of Commerce and Industry met officers of the "
                            "Dravon Army Corps of Engineers on Monday.")
    assert types.get("Velmora Chamber of Commerce and Industry") == "ORGANIZATION", types
    assert types.get("Dravon Army Corps of Engineers") == "ORGANIZATION", types
    assert "Commerce" not in types and "Engineers" not in types, types

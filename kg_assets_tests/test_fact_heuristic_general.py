"""facts-heuristic-3: the rules added to the offline fact extractor, each on made-up sentences (none from the
evaluation dialogs). Every test here fails on facts-heuristic-2 and passes on facts-heuristic-3."""

from kg_assets.extractors.facts.heuristic import EXTRACTOR_VERSION, heuristic_facts


def _contents(text: str) -> list[str]:
    return [f.content for f in heuristic_facts(text)]


def test_the_version_is_bumped_so_earlier_extractions_are_redone():
    assert EXTRACTOR_VERSION == "facts-heuristic-4"


def test_meta_talk_after_a_contraction_an_adverb_or_a_negation_is_skipped():
    # "I'm not sure" was listed but never matched (the list wanted a space after "I")
    assert heuristic_facts("I'm not sure the bus runs on Sundays") == []
    assert heuristic_facts("I still don't know where the keys went") == []
    assert heuristic_facts("I honestly think it's too cold for a picnic") == []
    assert heuristic_facts("I'm just kidding about the boat") == []
    # "I am just <noun phrase>" is a statement, not a "just saying"
    assert _contents("I am just a retired mailman from Ohio") == ["is just a retired mailman from Ohio"]


def test_degree_and_stance_adverbs_leave_before_the_verb_is_inflected():
    assert _contents("I very rarely eat red meat") == ["rarely eats red meat"]
    assert _contents("I for sure want a bigger garden") == ["wants a bigger garden"]
    assert _contents("I have a bit of experience with welding") == ["has a bit of experience with welding"]
    assert _contents("I tried a great curry just yesterday") == ["tried a great curry"]


def test_a_compound_subordinator_is_cut_whole_and_a_condition_states_no_fact():
    assert _contents("I want to learn sailing as soon as I retire") == ["wants to learn sailing"]
    assert _contents("I want to learn sailing even if I get seasick") == ["wants to learn sailing"]
    assert _contents("I kept running even though I was tired") == ["kept running", "was tired"]


def test_a_new_clause_with_a_subject_pronoun_is_cut_off_the_fact():
    assert _contents("I sell honey at the market, there are always long queues") == ["sells honey at the market"]


def test_a_wish_for_something_is_a_fact_like_a_wish_to_do_something():
    assert _contents("I would love a bigger kitchen") == ["would love a bigger kitchen"]


def test_mine_as_a_subject_is_a_statement_of_the_speaker():
    assert _contents("Do you have a garden? Mine is full of tomatoes.") == ["theirs is full of tomatoes"]


def test_how_a_stretch_of_time_went_is_no_fact():
    assert heuristic_facts("My weekend was pretty quiet and uneventful") == []
    assert _contents("My day was long but I finished the fence.") == ["finished the fence"]


def test_trailing_laughter_and_particles_leave_the_fact():
    assert _contents("I collect vintage stamps haha") == ["collects vintage stamps"]
    assert _contents("I play the cello as well") == ["plays the cello"]
    assert _contents("I repair clocks though") == ["repairs clocks"]


def test_that_is_my_is_said_of_something_else():
    assert heuristic_facts("That's my favorite mug") == []
    assert heuristic_facts("It is my favorite time of the year") == []
    assert _contents("Jazz is my favorite music") == ["Jazz is their favorite music"]


def test_one_of_my_favorites_is_a_predicate_of_the_speaker():
    assert _contents("Sudoku is one of my favorite pastimes") == ["Sudoku is one of their favorite pastimes"]
    assert _contents("Basil is another one of my favorites") == ["Basil is another one of their favorites"]


def test_an_unpunctuated_run_on_is_cut_before_my_noun_is():
    assert _contents("I'm fine my sister is a pilot") == ["their sister is a pilot"]
    assert heuristic_facts("One of my cousins was a pilot") == []  # after a preposition: no cut, no statement


def test_the_main_part_before_a_turn_to_the_other_person_is_kept():
    assert _contents("I baked extra bread, so you can take a loaf home") == ["baked extra bread"]
    assert heuristic_facts("I like your hat a lot") == []


def test_love_that_with_a_noun_is_a_preference_alone_it_is_a_reaction():
    assert _contents("I love that bakery on Elm Street") == ["loves that bakery on Elm Street"]
    assert heuristic_facts("I love that!") == []
    assert heuristic_facts("I love that you came over") == []


def test_a_statement_before_a_question_tag_or_a_declarative_question_is_kept():
    assert _contents("I grow my own chillies, you?") == ["grows their own chillies"]
    assert _contents("I play the bagpipes, and you?") == ["plays the bagpipes"]
    assert _contents("I would love to knit a scarf for you?") == ["would love to knit a scarf"]


def test_and_with_a_time_or_frequency_adverb_before_a_verb_starts_a_new_clause():
    assert _contents("I sold my shop and now teach pottery at the college") == [
        "sold their shop", "teaches pottery at the college"]

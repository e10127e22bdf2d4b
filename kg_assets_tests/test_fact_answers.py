"""A yes or no answer to the other speaker's yes/no question states the question's content (core/facts/answers.py):
the rewriting on made-up sentences, the real fact pipeline over two-speaker conversations (context, gate,
attribution, reuse keyed with the question), and the LLM request carrying the question as the other person's."""

import json
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from kg_assets.core.chat import messages_frame, parse_chat
from kg_assets.core.facts.answers import answer_polarity, answered_statement, question_statement, yes_no_question
from kg_assets.core.facts.pipeline import learn_facts
from kg_assets.core.facts.rules import extractability_problem
from kg_assets.extractors.facts.heuristic import HeuristicFactExtractor, heuristic_facts
from kg_assets.settings import LLMSettings
from kg_assets.testing.scripted_llm import extraction_responder, fact_message, is_fact_request

T0 = datetime(2025, 10, 20, 8, 0, tzinfo=UTC)
LEARNED = datetime(2025, 11, 1, tzinfo=UTC)


def _chat(*turns: tuple[str, str], document_id: str = "chat/c.jsonl") -> pl.DataFrame:
    lines = [json.dumps({"user_id": user, "message_id": f"m-{i:03d}", "content": content,
                         "timestamp": (T0 + timedelta(minutes=i)).isoformat()})
             for i, (user, content) in enumerate(turns)]
    return messages_frame(document_id, parse_chat("\n".join(lines)))


def _statement(question: str) -> str | None:
    found = yes_no_question(question)
    return question_statement(*found) if found else None


# -- the grammar ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("question", "statement"), [
    ("Do you keep any goats?", "I keep goats"),
    ("Are you a locksmith?", "I am a locksmith"),
    ("Have you ever been to Tasmania?", "I have been to Tasmania"),
    ("Did you build the shed yourself?", "I built the shed myself"),
    ("Did you go to trade school?", "I went to trade school"),
    ("Can you juggle?", "I can juggle"),
    ("Were you a lifeguard back then?", "I was a lifeguard back then"),
    ("That sounds lovely. So, do you bake your own bread?", "I bake my own bread"),
    ("Do you take your kayak with you when you are at the lake?", "I take my kayak with me when I am at the lake"),
    ("Do you want me to lend you my ladder?", "I want you to lend me your ladder"),
])
def test_a_yes_no_question_to_the_listener_becomes_their_first_person_statement(question, statement):
    assert _statement(question) == statement


@pytest.mark.parametrize("turn", [
    "Where do you keep your goats?",  # a wh-question has no yes/no answer
    "Are you left or right handed?",  # an alternative question neither
    "Does your brother fish?",  # about someone else
    "Do you keep goats? What are their names?",  # the last question is the one answered
    "I keep goats.",  # no question
    None,
])
def test_other_turns_ask_no_yes_no_question_of_the_listener(turn):
    assert yes_no_question(turn) is None


@pytest.mark.parametrize(("answer", "polarity"), [
    ("Yes!", "yes"), ("Yep, two of them.", "yes"), ("Oh yeah, for years", "yes"), ("Of course.", "yes"),
    ("I do!", "yes"), ("I am.", "yes"), ("I really do, but only on weekends", "yes"), ("Thanks, yes I did.", "yes"),
    ("No.", "no"), ("Nope, never.", "no"), ("I don't, sadly", "no"), ("I'm not.", "no"), ("Not really.", "no"),
    ("Of course not", None), ("I have a cat", None), ("Maybe someday", None), ("Yeah, I don't think so", None),
])
def test_an_answer_is_read_as_yes_no_or_neither(answer, polarity):
    assert answer_polarity(answer) == polarity


def test_a_no_states_the_question_negated_and_a_vague_answer_states_nothing():
    assert answered_statement("Have you ever been to Tasmania?", "No, sadly.") == "I have never been to Tasmania"
    assert answered_statement("Do you keep goats?", "Nope") == "I do not keep goats"
    assert answered_statement("Do you keep goats?", "Maybe one day") is None
    assert answered_statement("Where do you live?", "Yes") is None


def test_the_heuristic_adds_the_answered_fact_first_and_keeps_the_answers_own():
    facts = [f.content for f in heuristic_facts("Yep, I have two nanny goats and a billy.", "Do you keep any goats?")]
    assert facts == ["keeps goats", "has two nanny goats and a billy"]
    assert [f.content for f in heuristic_facts("Yes!", "Do you think it will rain?")] == []  # "I think": no fact
    assert [f.content for f in heuristic_facts("Yes!")] == []  # without the question, a yes says nothing


def test_a_short_answer_passes_the_gate_only_after_a_yes_no_question():
    assert extractability_problem("Yes, I do!") == "shorter than 20 characters"
    assert extractability_problem("Yes, I do!", "Do you keep goats?") is None
    assert extractability_problem("Nope.", "Do you keep goats?") is None
    assert extractability_problem("Yes, I do!", "Where do you live?") == "shorter than 20 characters"
    assert extractability_problem("!yes", "Do you keep goats?") is not None  # a command stays one


# -- the real pipeline ------------------------------------------------------------------------------------------

def _facts(learned, user: str) -> list[tuple[str, str]]:
    rows = learned.facts.filter(pl.col("user_id") == user).sort("valid_from", "fact_index")
    return list(rows.select("extracted_from_message_id", "content").iter_rows())


def test_a_yes_gives_the_answering_user_the_question_as_a_fact_at_the_answers_turn():
    chat = _chat(("ana", "Morning! I just fed the chickens. Do you keep any goats?"), ("lena", "Yes!"),
                 ("lena", "Yes!"),  # her own turn before: no question of another speaker, nothing to answer
                 ("ana", "Are you a locksmith?"), ("lena", "I am, for twenty years now."))
    learned = learn_facts(chat, HeuristicFactExtractor(), rate=1.0, learned_at=LEARNED)
    assert _facts(learned, "lena") == [("m-001", "keeps goats"), ("m-004", "is a locksmith")]
    assert _facts(learned, "ana") == [("m-000", "just fed the chickens")]  # nothing from her own question
    outcomes = dict(learned.extractions.select("message_id", "outcome").iter_rows())
    assert outcomes == {"m-000": "ok", "m-001": "ok", "m-002": "not_extractable", "m-003": "ok",
                        "m-004": "ok"}
    assert set(learned.facts["extractor_version"]) == {"facts-heuristic-4"}


def test_the_same_yes_after_another_question_is_extracted_again_not_reused():
    first = learn_facts(_chat(("ana", "Do you keep any goats?"), ("lena", "Yes, I do!")), HeuristicFactExtractor(),
                        rate=1.0, learned_at=LEARNED)
    previous = (first.extractions, first.message_facts)
    same = learn_facts(_chat(("ana", "Do you keep any goats?"), ("lena", "Yes, I do!")), HeuristicFactExtractor(),
                       rate=1.0, learned_at=LEARNED, previous=previous)
    assert same.extractions.equals(first.extractions) and _facts(same, "lena") == [("m-001", "keeps goats")]
    edited = learn_facts(_chat(("ana", "Have you ever been to Tasmania?"), ("lena", "Yes, I do!")),
                         HeuristicFactExtractor(), rate=1.0, learned_at=LEARNED, previous=previous)
    hashes = [dict(r.extractions.select("message_id", "message_hash").iter_rows())["m-001"] for r in (first, edited)]
    assert hashes[0] != hashes[1]  # same author, time and words; another question
    assert _facts(edited, "lena") == [("m-001", "has been to Tasmania")]


def test_a_no_gives_no_positive_fact():
    chat = _chat(("ana", "Do you keep any goats?"), ("lena", "No, I don't."),
                 ("ana", "Have you ever been to Tasmania?"), ("lena", "Nope, never."))
    learned = learn_facts(chat, HeuristicFactExtractor(), rate=1.0, learned_at=LEARNED)
    contents = [c for _, c in _facts(learned, "lena")]
    assert "keeps goats" not in contents and "has been to Tasmania" not in contents
    assert contents == ["does not keep goats", "has never been to Tasmania"]
    assert _facts(learned, "ana") == []


# -- the LLM request --------------------------------------------------------------------------------------------

def test_the_llm_request_carries_the_question_as_the_other_persons_context(openai_server, tmp_path):
    from kg_assets.extractors.llm.facts import LLMFactExtractor

    openai_server.set_responder(extraction_responder())
    settings = LLMSettings(base_url=openai_server.base_url, api_key="test", cache_path=str(tmp_path / "cache.sqlite"),
                           timeout_s=5.0)
    chat = _chat(("ana", "My goats escaped again this morning! Do you keep any goats?"), ("lena", "Yes!"))
    learned = learn_facts(chat, LLMFactExtractor(settings), rate=1.0, learned_at=LEARNED)
    sent = {fact_message(r): r["messages"][-1]["content"] for r in openai_server.requests if is_fact_request(r)}
    assert set(sent) == {"My goats escaped again this morning! Do you keep any goats?", "Yes!"}
    question_line = next(line for line in sent["Yes!"].splitlines() if line.startswith("Previous message"))
    assert question_line == ('Previous message, a question said by the other person, not by the speaker (JSON string): '
                             '"My goats escaped again this morning! Do you keep any goats?"')
    assert "Previous message" not in sent["My goats escaped again this morning! Do you keep any goats?"]
    assert _facts(learned, "lena") == [("m-001", "keeps goats")]  # the scripted model answers as the heuristic

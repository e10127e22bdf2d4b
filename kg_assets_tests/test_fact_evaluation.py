"""`kg eval facts`: the scoring rule of shared/eval/README.md on hand-made cases, and the command's contract."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kg_assets.evaluation.facts import count_matches, score_facts
from kg_assets.core.facts.words import content_words

DEV = Path(__file__).resolve().parents[2] / "shared" / "eval" / "msc_facts_dev.jsonl"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("I've read 20 books this year.", {"read", "20", "book", "year"}),  # pronoun, auxiliary, "this" dropped
        ("The user's mom likes hiking", {"mom", "like", "hiking"}),  # "hiking" is too short to lose "ing"
        ("She watched the fireworks", {"watch", "firework"}),
        ("He goes to the gym", {"goes", "gym"}),  # "goes": neither "es" nor "s" leaves enough
        ("My kids are walking dogs", {"kids", "walk", "dogs"}),  # 4 letters is not longer than "s" + 3
    ],
)
def test_content_words_follow_the_scoring_rule(text, words):
    assert content_words(text) == words


def test_facts_match_at_content_word_f1_of_one_half_at_most_once_each():
    assert count_matches(["has a dog"], ["I have a dog."]) == 1  # {dog} / {dog}: 1.0
    assert count_matches(["has a dog named Rex"], ["I have a dog."]) == 1  # {dog, named, rex} / {dog}: 0.5
    assert count_matches(["has a black dog named Rex"], ["I have a dog."]) == 0  # 2 / 5 = 0.4
    assert count_matches(["has a dog", "has a dog"], ["I have a dog."]) == 1
    assert count_matches(["has a red car", "has a car"], ["I have a car.", "I have a red car."]) == 2
    assert count_matches([], ["I have a car."]) == 0


def _dialog():
    return {
        "dialog_id": "d1",
        "turns": [
            {"idx": 0, "speaker": "A", "text": "I have a dog.", "gold_facts": ["I have a dog."]},
            {"idx": 1, "speaker": "B", "text": "I live in Ohio and teach.", "gold_facts": ["I live in Ohio.",
                                                                                           "I am a teacher."]},
            {"idx": 2, "speaker": "A", "text": "Nice!", "gold_facts": []},
        ],
        "final_persona": {"A": ["I have a dog.", "I like hiking."], "B": ["I live in Ohio.", "I am a teacher."]},
    }


def test_turn_and_persona_scores_on_a_hand_made_dialog():
    predictions = [
        {"dialog_id": "d1", "turn_idx": 0, "speaker": "A", "fact": "has a dog"},  # turn match (1.0)
        {"dialog_id": "d1", "turn_idx": 0, "speaker": "A", "fact": "has a dog named Rex"},  # gold already taken
        {"dialog_id": "d1", "turn_idx": 1, "speaker": "B", "fact": "lives in Ohio"},  # turn match (1.0)
        {"dialog_id": "d1", "turn_idx": 1, "speaker": "B", "fact": "is a teacher at school"},  # turn match (0.67)
        {"dialog_id": "d1", "turn_idx": 2, "speaker": "A", "fact": "likes hiking"},  # no gold in turn 2
        {"dialog_id": "d1", "turn_idx": 1, "speaker": "A", "fact": "lives in Ohio"},  # turn 1 is B's
        {"dialog_id": "other", "turn_idx": 0, "speaker": "A", "fact": "has a dog"},  # not an evaluated dialog
    ]
    scores = score_facts([_dialog()], predictions)
    # turns: 6 predicted, 3 gold, 3 matched -> P 0.5, R 1.0, F1 0.6667
    assert (scores["turn_facts_predicted"], scores["turn_facts_gold"], scores["turn_facts_matched"]) == (6, 3, 3)
    assert (scores["turn_precision"], scores["turn_recall"], scores["turn_f1"]) == (0.5, 1.0, 0.6667)
    # persona A: 4 predicted, 2 matched (dog, hiking); B: 2 predicted, 2 matched -> P 4/6, R 4/4, F1 0.8
    persona = (scores["persona_facts_predicted"], scores["persona_facts_gold"], scores["persona_facts_matched"])
    assert persona == (6, 4, 4)
    assert (scores["persona_precision"], scores["persona_recall"], scores["persona_f1"]) == (0.6667, 1.0, 0.8)


def test_no_prediction_scores_zero_not_an_error():
    scores = score_facts([_dialog()], [])
    assert scores["turn_f1"] == 0.0 and scores["persona_recall"] == 0.0 and scores["turn_facts_gold"] == 3


def test_kg_eval_facts_writes_kept_facts_and_prints_scores_last(tmp_path, kg_cli):
    dialog = {
        "dialog_id": "hand-1", "session": 1,
        "turns": [
            {"idx": 0, "speaker": "bot_0", "text": "Hi! I work as a nurse at the children's hospital.",
             "gold_facts": ["I work as a nurse at a hospital."]},
            {"idx": 1, "speaker": "bot_1", "text": "Cool. What do you do on weekends?", "gold_facts": []},
            {"idx": 2, "speaker": "bot_0", "text": "I love hiking and I play the guitar in a band.",
             "gold_facts": ["I like hiking.", "I play guitar."]},
            {"idx": 3, "speaker": "bot_1", "text": "I play the guitar in a band too!",
             "gold_facts": ["I play guitar."]},
            {"idx": 4, "speaker": "bot_0", "text": "Ha, small world. I love hiking, as I said.",
             "gold_facts": ["I live in a small town."]},
        ],
        "final_persona": {"bot_0": ["I work as a nurse at a hospital.", "I like hiking.", "I play guitar."],
                          "bot_1": ["I play guitar."]},
    }
    second = {**dialog, "dialog_id": "hand-2"}
    path = tmp_path / "dialogs.jsonl"
    path.write_text(json.dumps(dialog) + "\n" + json.dumps(second) + "\n")
    out = tmp_path / "pred" / "pred.jsonl"
    result = kg_cli("eval", "facts", path, "--out", out, "--limit", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    predictions = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(p["turn_idx"], p["speaker"], p["fact"]) for p in predictions] == [
        (0, "bot_0", "works as a nurse at the children's hospital"),
        (2, "bot_0", "loves hiking"),
        (2, "bot_0", "plays the guitar in a band"),
        (3, "bot_1", "plays the guitar in a band too"),  # another speaker: not a duplicate
    ]  # turn 4 repeats "loves hiking": set aside by dedup, not written
    assert set(predictions[0]) == {"dialog_id", "turn_idx", "speaker", "fact", "fact_type", "confidence",
                                   "importance", "temporal"}
    assert predictions[0]["dialog_id"] == "hand-1" and predictions[0]["fact_type"] == "work"
    assert summary["dialogs"] == 1 and summary["duplicates_set_aside"] == 1
    # turns: 4 predicted, 5 gold; matched: nurse (0.86), hiking (0.5), guitar (0.8), bot_1's guitar (0.8) = 4
    assert (summary["turn_precision"], summary["turn_recall"], summary["turn_f1"]) == (1.0, 0.8, 0.8889)
    assert (summary["persona_precision"], summary["persona_recall"]) == (1.0, 1.0)
    assert (summary["llm_calls"], summary["prompt_tokens"], summary["completion_tokens"]) == (0, 0, 0)
    assert summary["extractor"] == "facts-heuristic"


def test_kg_eval_facts_refuses_an_unreadable_file(tmp_path, kg_cli):
    missing = kg_cli("eval", "facts", tmp_path / "nope.jsonl", cwd=tmp_path)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    (tmp_path / "bad.jsonl").write_text(json.dumps(_dialog()) + "\n" + '{"dialog_id": "x", "turns": [{"idx": 0}]}\n')
    bad = kg_cli("eval", "facts", tmp_path / "bad.jsonl", cwd=tmp_path)
    assert bad.returncode == 2 and "line 2 lacks speaker" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.process
def test_kg_eval_facts_with_an_llm_configured_asks_it_through_the_engine(tmp_path, openai_server):
    from kg_assets.testing.scripted_llm import extraction_responder, is_fact_request

    openai_server.set_responder(extraction_responder())
    (tmp_path / "d.jsonl").write_text(json.dumps(_dialog()) + "\n")
    env = {**os.environ, "KG_EXTRACTOR": "llm", "OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "test",
           "KG_LLM_CACHE": str(tmp_path / "cache.sqlite")}
    done = subprocess.run([str(Path(sys.executable).with_name("kg")), "eval", "facts", str(tmp_path / "d.jsonl")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.splitlines()[-1])
    # "I have a dog." and "Nice!" are under 20 characters, so one message is asked about, in one tool request.
    assert (summary["extractor"], summary["llm_calls"]) == ("facts-llm", 1)
    assert sum(is_fact_request(r) for r in openai_server.requests) == 1 and summary["turn_f1"] > 0


@pytest.mark.skipif(not DEV.exists(), reason="shared/eval is not mounted beside the project")
def test_kg_eval_facts_runs_on_the_development_dialogs(tmp_path, kg_cli):
    result = kg_cli("eval", "facts", DEV, "--limit", "10", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["dialogs"] == 10 and summary["turn_facts_gold"] > 50
    assert 0.0 < summary["turn_f1"] < 1.0 and 0.0 < summary["persona_f1"] < 1.0

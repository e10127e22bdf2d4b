"""`kg estimate` and `kg eval extraction`, in-process through the real CLI entry point."""

import json
import re
from pathlib import Path

import pytest

from kg_assets.cli import main
from kg_assets.definitions import build_definitions
from kg_assets.settings import Settings

SHARED_EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval" / "redocred_dev200.jsonl"


@pytest.fixture
def llm_cli(llm_project, monkeypatch):
    """`llm_project`, with the environment the CLI reads its settings from set to the same settings."""
    env = {"KG_INBOX": llm_project.inbox, "KG_DUCKDB_PATH": llm_project.warehouse.path,
           "OPENAI_BASE_URL": llm_project.server.base_url, "KG_LLM_TIMEOUT_S": "5", "KG_SUMMARY_MIN_FRAGMENTS": "0",
           "KG_LLM_PROMPT_PRICE": "0.15", "KG_LLM_COMPLETION_PRICE": "0.60"}
    for name, value in env.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return llm_project


def _estimate(capsys, project) -> dict[str, str]:
    assert main(["estimate", "--inbox", str(project.inbox), "--db", str(project.warehouse.path),
                 "--prompt-price", "0.15", "--completion-price", "0.6"]) == 0
    out = capsys.readouterr().out
    return dict(re.findall(r"^  (.+?)\s{2,}(.+)$", out, re.M))


def test_estimate_predicts_calls_and_tokens_and_knows_what_is_cached(llm_cli, capsys):
    project = llm_cli
    before = _estimate(capsys, project)
    assert project.server.calls == 0, "an estimate never calls the model"
    assert project.run_all().success
    chunks = project.sql("SELECT count(*) AS n FROM kg.chunks")["n"][0]
    assert before["chunks"] == f"{chunks} (0 already cached)"
    assert before["LLM calls"].startswith(f"{chunks:,} to {2 * chunks:,}")
    assert before["working memory"].startswith("at most 200 prompt tokens per request")
    actual = project.sql("SELECT sum(prompt_tokens) AS p FROM kg.llm_calls")["p"][0]
    low, high = (int(v.replace(",", "")) for v in before["prompt tokens"].split(" to "))
    assert 0.85 * low <= actual <= high, (low, actual, high)
    completion_low = int(before["completion tokens"].strip("~").split(" ")[0].replace(",", ""))
    cost_low = float(before["estimated cost"].split("$")[1].split(" ")[0].replace(",", ""))
    assert cost_low == pytest.approx(low * 0.15 / 1e6 + completion_low * 0.6 / 1e6, abs=1e-4)
    after = _estimate(capsys, project)  # with working memory: cached answers replayed in chunk order
    assert after["chunks"] == f"{chunks} ({chunks} already cached)" and after["LLM calls"].startswith("0 to 0")


def _eval(capsys, path: Path, *extra: str) -> dict:
    assert main(["eval", "extraction", str(path), *extra]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_eval_extraction_scores_a_hand_checked_document(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    doc = {
        "doc_id": "d1",
        "text": "Dr. Sarah Chen joined the Quantum Dynamics Lab in Boston. The lab hired Marcus Webb.",
        "entities": [
            {"id": 0, "name": "Sarah Chen", "pipeline_type": "PERSON", "eval_entity": True, "mentions": [{"text": "Sarah Chen"}]},
            {"id": 1, "name": "Quantum Dynamics Lab", "pipeline_type": "ORGANIZATION", "eval_entity": True,
             "mentions": [{"text": "Quantum Dynamics Lab"}, {"text": "the lab"}]},
            {"id": 2, "name": "Boston", "pipeline_type": "LOCATION", "eval_entity": True, "mentions": [{"text": "Boston"}]},
            {"id": 3, "name": "Marcus Webb", "pipeline_type": "PERSON", "eval_entity": True, "mentions": [{"text": "Marcus Webb"}]},
            {"id": 4, "name": "2025", "pipeline_type": "OTHER", "eval_entity": False, "mentions": [{"text": "2025"}]},
        ],
        "relations": [{"head": 0, "tail": 1, "type": "P108"}, {"head": 1, "tail": 2, "type": "P131"}, {"head": 0, "tail": 4, "type": "P580"}],
    }
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    scores = _eval(capsys, path)
    assert scores["entities_gold"] == 4 and scores["relations_gold"] == 2  # the date is not an eval entity
    assert scores["entities_gold_found"] == 4 and scores["entity_recall"] == 1.0
    assert scores["entity_precision"] == round(4 / scores["entities_predicted"], 4)
    assert scores["relations_gold_found"] >= 1
    assert scores["extractor"] == "heuristic" and scores["llm_calls"] == 0
    for key in ("entity_f1", "relation_precision", "relation_recall", "relation_f1", "prompt_tokens", "completion_tokens", "seconds"):
        assert key in scores


@pytest.mark.skipif(not SHARED_EVAL.exists(), reason="shared/eval data is not beside this checkout")
def test_eval_extraction_on_the_shared_redocred_sample(capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    scores = _eval(capsys, SHARED_EVAL, "--limit", "40")
    assert scores["documents"] == 40
    assert 0.6 < scores["entity_f1"] <= 1.0 and 0.0 < scores["relation_f1"] < 1.0


def test_eval_extraction_with_an_llm_counts_calls_and_tokens(llm_cli, tmp_path, capsys):
    doc = {"doc_id": "x", "text": "Sarah Chen joined Quantum Dynamics Lab last spring.",
           "entities": [{"id": 0, "name": "Sarah Chen", "pipeline_type": "PERSON", "mentions": [{"text": "Sarah Chen"}]},
                        {"id": 1, "name": "Quantum Dynamics Lab", "pipeline_type": "ORGANIZATION", "mentions": [{"text": "Quantum Dynamics Lab"}]}],
           "relations": [{"head": 0, "tail": 1, "type": "P108"}]}
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    scores = _eval(capsys, path)
    assert scores["extractor"] == "llm"
    assert scores["llm_calls"] == llm_cli.server.calls == 1
    assert scores["prompt_tokens"] > 0 and scores["completion_tokens"] > 0
    assert scores["entity_f1"] == 1.0 and scores["relation_f1"] == 1.0
    again = _eval(capsys, path)
    assert again["llm_calls"] == 0 and again["cache_hits"] == 1


def test_estimate_after_a_run_with_gleaning_finds_every_chunk_cached_and_counts_facts_and_summaries(
        llm_cli, capsys, monkeypatch):
    """Gleaning answers feed the working memory of a document's next chunks and are cached too: right after a
    complete run the estimate replays them and finds every chunk cached (it used to say "13 (11 already cached)")."""
    from kg_assets.testing.scripted_llm import SAMPLE_NAMES, extraction_responder

    project = llm_cli
    missed = {"Quantum Dynamics Lab": "ORGANIZATION", "Northwind Robotics": "ORGANIZATION"}  # found by gleaning only
    project.server.set_responder(extraction_responder(
        names={n: t for n, t in SAMPLE_NAMES.items() if n not in missed}, missed=missed))
    monkeypatch.setenv("KG_LLM_GLEANING", "always")
    monkeypatch.setenv("KG_SUMMARY_MIN_FRAGMENTS", "2")
    monkeypatch.setenv("FACT_EXTRACTION_RATE", "1.0")
    before = _estimate(capsys, project)
    assert before["summary calls"].startswith("unknown before a first extraction")
    offered = int(before["fact calls"].split()[0])
    assert offered > 0 and f"({offered} of " in before["fact calls"] and "0 already answered" in before["fact calls"]
    project.defs = build_definitions(Settings.from_env())
    assert project.run_all().success
    assert project.sql("SELECT count(*) AS n FROM kg.entity_mentions WHERE gleaning_pass > 0 "
                       "AND name = 'Quantum Dynamics Lab'")["n"][0] > 0, "gleaning found what the first pass missed"
    asked = project.sql("SELECT count(*) AS n FROM kg.fact_extractions WHERE outcome NOT IN "
                        "('disabled', 'not_sampled', 'not_extractable')")["n"][0]
    assert offered == asked, "one fact request per offered message"
    chunks = project.sql("SELECT count(*) AS n FROM kg.chunks")["n"][0]
    after = _estimate(capsys, project)
    assert after["chunks"] == f"{chunks} ({chunks} already cached)" and after["LLM calls"].startswith("0 to 0")
    summaries = project.sql("SELECT count(*) AS n FROM kg.entity_summaries")["n"][0]
    assert summaries > 0 and after["summary calls"].startswith(f"0 ({summaries} entities with at least 2 ")
    assert f"{summaries} already cached" in after["summary calls"]
    assert after["fact calls"].startswith(f"0 ({offered} of ") and f"{offered} already answered" in after["fact calls"]
    assert after["worst case"].startswith("0 calls (extraction, facts, summaries), 0 prompt tokens"), "nothing to ask"
    worst = re.match(r"([\d,]+) calls .*, ([\d,]+) completion tokens \(each answer at the 2,000-token cap\): \$([\d.]+)",
                     before["worst case"])
    calls, completion = (int(worst[i].replace(",", "")) for i in (1, 2))
    assert calls == 2 * chunks + offered and completion == calls * 2000  # summaries unknown before extraction

import json
from pathlib import Path

import polars as pl
import pytest

from kg_assets.core.linking import NameLinker
from kg_assets.core.normalize import entity_id
from kg_assets.evaluation.baselines import ExactIdLinker, exact_name_linker
from kg_assets.evaluation.linking import (
    bcubed_scores,
    eval_mention_frame,
    link_eval_mentions,
    pairwise_scores,
    read_mentions,
    redocred_mentions,
    score_linking,
)

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"

GOLD = {"a": "X", "b": "X", "c": "X", "d": "Y"}
PRED = {"a": 1, "b": 1, "c": 2, "d": 2}


def test_pairwise_from_cluster_intersections():
    # gold pairs ab ac bc, predicted pairs ab cd, correct ab
    s = pairwise_scores(PRED, GOLD)
    assert (s["true_pairs"], s["predicted_pairs"], s["gold_pairs"]) == (1, 2, 3)
    assert s["precision"] == 0.5 and s["recall"] == pytest.approx(1 / 3, abs=1e-4)
    assert s["f1"] == pytest.approx(0.4, abs=1e-4)


def test_bcubed_by_hand():
    # a, b: P 2/2 R 2/3; c: P 1/2 R 1/3; d: P 1/2 R 1/1
    s = bcubed_scores(PRED, GOLD)
    assert s["precision"] == pytest.approx(0.75, abs=1e-4)
    assert s["recall"] == pytest.approx(2 / 3, abs=1e-4)
    assert s["f1"] == pytest.approx(2 * 0.75 * (2 / 3) / (0.75 + 2 / 3), abs=1e-4)
    assert (s["mentions"], s["predicted_clusters"], s["gold_clusters"]) == (4, 2, 2)


def test_singletons():
    gold = {"a": "X", "b": "X", "c": "Z"}
    all_single = {"a": 1, "b": 2, "c": 3}
    pair = pairwise_scores(all_single, gold)
    assert (pair["precision"], pair["recall"]) == (1.0, 0.0)  # nothing claimed, one gold pair missed
    b3 = bcubed_scores(all_single, gold)
    assert b3["precision"] == 1.0 and b3["recall"] == pytest.approx((0.5 + 0.5 + 1) / 3, abs=1e-4)
    one = {"a": 1, "b": 1, "c": 1}
    assert bcubed_scores(one, gold)["precision"] == pytest.approx((2 / 3 + 2 / 3 + 1 / 3) / 3, abs=1e-4)
    assert bcubed_scores(one, gold)["recall"] == 1.0
    assert pairwise_scores(gold, gold)["f1"] == 1.0 and bcubed_scores(gold, gold)["f1"] == 1.0
    # both all-singletons: no pairs anywhere, nothing wrong
    assert pairwise_scores({"a": 1, "b": 2}, {"a": "X", "b": "Y"})["f1"] == 1.0


def test_mentions_missing_from_the_prediction_are_singletons():
    gold = {"a": "X", "b": "X"}
    assert bcubed_scores({"a": 1}, gold) == bcubed_scores({"a": 1, "b": 2}, gold)
    # cluster labels that look alike do not collide with the stand-ins
    assert pairwise_scores({"a": "s", "b": "s"}, gold)["f1"] == 1.0


EVAL_ROWS = pl.DataFrame({
    "doc_id": ["d1", "d1", "d2", "d2", "d3"],
    "mention_id": ["m1", "m2", "m3", "m4", "m5"],
    "text": ["Barack Obama", "Obama", "Obama", "Quantum Dynamics Lab", "QDL"],
    "type": ["PERSON", "PERSON", "PERSON", "ORGANIZATION", "ORGANIZATION"],
    "gold_cluster": ["obama", "obama", "obama", "qdl", "qdl"],
})


def test_eval_mentions_become_pipeline_mentions():
    frame = eval_mention_frame(EVAL_ROWS)
    row = frame.filter(pl.col("mention_id") == "m1").row(0, named=True)
    assert row["entity_id"] == entity_id("PERSON", "BARACK_OBAMA")
    assert row["document_id"] == row["chunk_id"] == "d1" and row["normalized_name"] == "BARACK_OBAMA"


def test_eval_mentions_get_the_row_builders_ids():
    rows = pl.DataFrame({"doc_id": ["d1", "d1", "d2"], "mention_id": ["m1", "m2", "m3"],
                         "text": ["the engineer", "engineer", "the engineer"], "type": ["PERSON"] * 3})
    out = dict(link_eval_mentions(rows, NameLinker()).iter_rows())
    assert out["m1"] == out["m2"] == entity_id("PERSON", "ENGINEER", "d1") != out["m3"]


def test_link_eval_mentions_runs_the_linker_and_its_redirects():
    out = dict(link_eval_mentions(EVAL_ROWS, NameLinker()).iter_rows())
    assert out["m1"] == out["m2"] == out["m3"] == entity_id("PERSON", "BARACK_OBAMA")
    assert out["m4"] == out["m5"] == entity_id("ORGANIZATION", "QUANTUM_DYNAMICS_LAB")
    baseline = dict(link_eval_mentions(EVAL_ROWS, ExactIdLinker()).iter_rows())
    assert baseline["m2"] == baseline["m3"] != baseline["m1"]
    scores = score_linking(EVAL_ROWS, NameLinker())
    assert scores["bcubed_f1"] == 1.0 and scores["pairwise_f1"] == 1.0 and scores["predicted_clusters"] == 2


def test_per_document_linking_keeps_documents_apart():
    out = dict(link_eval_mentions(EVAL_ROWS, NameLinker(), per_document=True).iter_rows())
    assert out["m2"] == out["m1"] != out["m3"]
    assert out["m2"].startswith("d1#") and out["m3"].startswith("d2#")


def test_redocred_flattening(tmp_path):
    doc = {"doc_id": "Doc A", "text": "...", "entities": [
        {"id": 0, "name": "Spain", "pipeline_type": "LOCATION", "eval_entity": True,
         "mentions": [{"text": "Spain", "start": 1, "end": 6}, {"text": "Spanish", "start": 10, "end": 17}]},
        {"id": 1, "name": "1717", "pipeline_type": "OTHER", "eval_entity": False,
         "mentions": [{"text": "1717", "start": 20, "end": 24}]},
        {"id": 2, "name": "Philip V", "pipeline_type": "PERSON", "eval_entity": True,
         "mentions": [{"text": "Philip V", "start": 30, "end": 38}]},
    ], "relations": []}
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps(doc) + "\n\n")
    m = redocred_mentions(path)
    assert m.height == 3 and "1717" not in m["text"].to_list()
    assert m.filter(pl.col("text") == "Spanish")["gold_cluster"].item() == "Doc A#0"
    assert set(m["type"]) == {"LOCATION", "PERSON"} and m["mention_id"].is_unique().all()


@pytest.mark.skipif(not (EVAL / "ecbplus_dev_mentions.jsonl").exists(), reason="shared eval data absent")
def test_ecbplus_dev_name_linker_at_least_matches_exact_names():
    mentions = read_mentions(EVAL / "ecbplus_dev_mentions.jsonl")
    ours = score_linking(mentions, NameLinker())
    exact = score_linking(mentions, exact_name_linker)
    assert ours["mentions"] == mentions.height == exact["mentions"]
    assert ours["bcubed_f1"] >= exact["bcubed_f1"]

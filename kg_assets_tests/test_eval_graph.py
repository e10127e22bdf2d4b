"""`kg eval graph`: the whole-graph scoring rule of shared/eval/README.md on a hand-made graph, the command's
contract, and agreement with the reference scorer shared/eval/graphscore.py on the development articles."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from kg_assets.cli import main as kg_main
from kg_assets.evaluation.graph import graph_scores, inbox_file_name, read_documents, surface

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
DEV_DOCS = EVAL / "dwie_dev.jsonl"
DEV_MENTIONS = EVAL / "dwie_dev_mentions.jsonl"
SCORES = ("nodes", "gold_clusters", "gold_mentions", "node_precision", "cluster_recall", "cluster_recall_weighted",
          "fragmentation", "fragmentation_weighted", "split_share", "type_split_share")


@pytest.fixture
def kg(monkeypatch, capsys, tmp_path):
    """`kg …` in this process through kg_assets.cli.main, without the developer's OPENAI_*/KG_* settings (so
    the offline extractor runs): (exit code, stdout, stderr)."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "KG_")):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))

    def run(*args):
        capsys.readouterr()
        code = kg_main([str(arg) for arg in args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_surface_names_are_case_folded_collapsed_and_stripped():
    assert surface('  “Bonn.” ') == "bonn"
    assert surface("European \t Union") == "european union"
    assert surface("Straße") == surface("STRASSE") == "strasse"  # casefold, not lowercase
    assert surface("(U.S.)") == "u.s"


def _hand_made_graph() -> tuple[pl.DataFrame, pl.DataFrame]:
    entities = pl.DataFrame([
        ("e1", "Angela Merkel", "PERSON", ["Merkel"]),  # name and alias reach the same entity: once
        ("e2", "merkel", "PERSON", None),
        ("e3", "Germany", "LOCATION", ["Deutschland"]),
        ("e4", "Germany", "ORGANIZATION", []),
        ("e5", "the ministry", "OTHER", []),  # reaches nothing
        ("e6", '"Bonn."', "LOCATION", []),
        ("e7", "Straße", "LOCATION", []),
        ("e8", "European  Union", "ORGANIZATION", ["EU"]),
        ("e9", "Washington", "LOCATION", []),  # one node, two gold entities
    ], schema={"entity_id": pl.String, "name": pl.String, "entity_type": pl.String, "aliases": pl.List(pl.String)},
        orient="row")
    gold = [("Angela Merkel", "Merkel"), ("Merkel", "Merkel"), ("Merkel", "Merkel"),
            *[("Germany", "Germany")] * 4, ("Bonn", "Bonn"), ("STRASSE", "Strasse"),
            ("European Union", "EU"), ("EU", "EU"), ("Paris", "Paris"), ("Paris", "Paris"),
            ("Washington", "Washington_DC"), ("Washington", "George_Washington")]
    mentions = pl.DataFrame(gold, schema={"text": pl.String, "gold_cluster": pl.String}, orient="row")
    return entities, mentions


def test_whole_graph_scores_on_a_hand_made_graph():
    # Worked out by hand. Gold: 8 entities, 15 mentions (Merkel 3, Germany 4, Bonn 1, Strasse 1, EU 2, Paris 2,
    # Washington_DC 1, George_Washington 1). Nodes: 9; e5 reaches nothing, the 8 others reach something:
    #   node_precision 8/9 = 0.8889
    # Reached: every entity but Paris (nodes: Merkel e1 e2, Germany e3 e4, Bonn e6, Strasse e7, EU e8,
    # Washington_DC e9, George_Washington e9):
    #   cluster_recall 7/8 = 0.875; weighted (3+4+1+1+2+1+1)/15 = 13/15 = 0.8667
    #   fragmentation (2+2+1+1+1+1+1)/7 = 9/7 = 1.2857; weighted (3*2+4*2+1+1+2+1+1)/13 = 20/13 = 1.5385
    #   split_share (Merkel, Germany) 2/7 = 0.2857; type_split_share (Germany: LOCATION, ORGANIZATION) 1/7 = 0.1429
    entities, mentions = _hand_made_graph()
    assert graph_scores(entities, mentions) == {
        "nodes": 9, "gold_clusters": 8, "gold_mentions": 15,
        "node_precision": 0.8889, "cluster_recall": 0.875, "cluster_recall_weighted": 0.8667,
        "fragmentation": 1.2857, "fragmentation_weighted": 1.5385, "split_share": 0.2857, "type_split_share": 0.1429,
    }


def test_an_empty_graph_scores_zero_not_an_error():
    entities, mentions = _hand_made_graph()
    scores = graph_scores(entities.clear(), mentions)
    assert scores["nodes"] == 0 and scores["node_precision"] == 0.0 and scores["cluster_recall"] == 0.0
    assert scores["fragmentation"] == 0.0 and scores["gold_clusters"] == 8


def test_inbox_file_names_are_safe_and_distinct():
    assert inbox_file_name("DW_1095032") == "DW_1095032.txt"
    odd = ["a/b", "a_b", "../etc/passwd", ".hidden", "Zürich news", "", "x" * 300]
    names = [inbox_file_name(doc_id) for doc_id in odd]
    assert len(set(names)) == len(odd)
    assert names[0].startswith("a_b~") and names[1] == "a_b.txt"
    for name in names:
        assert "/" not in name and not name.startswith(".") and name.endswith(".txt") and len(name) < 130


def test_documents_need_a_doc_id_and_a_text():
    assert read_documents(['{"doc_id": 7, "text": "Hi."}', "", '{"doc_id": "a/b", "text": "Ho."}']) == [
        ("7", "Hi."), ("a/b", "Ho.")]
    with pytest.raises(ValueError, match="line 2 lacks text"):
        read_documents(['{"doc_id": "a", "text": "x"}', '{"doc_id": "b"}'])
    with pytest.raises(ValueError, match="line 2: doc_id 'a' was seen before"):
        read_documents(['{"doc_id": "a", "text": "x"}', '{"doc_id": "a", "text": "y"}'])


def test_kg_eval_graph_refuses_bad_input_with_the_file_and_line(tmp_path, kg):
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"doc_id": "d1", "text": "Angela Merkel visited Paris."}) + "\n")
    mentions = tmp_path / "mentions.jsonl"
    mentions.write_text(json.dumps({"doc_id": "d1", "text": "Paris", "gold_cluster": "Paris"}) + "\n"
                        + json.dumps({"doc_id": "d1", "text": "Merkel"}) + "\n")
    code, _, err = kg("eval", "graph", tmp_path / "nope.jsonl", mentions)
    assert code == 2 and f"cannot read {tmp_path / 'nope.jsonl'}" in err
    code, _, err = kg("eval", "graph", docs, mentions)
    assert code == 2 and f"cannot read {mentions}: line 2 lacks gold_cluster" in err and "Traceback" not in err
    (tmp_path / "bad_docs.jsonl").write_text(docs.read_text() + '{"text": "no id"}\n')
    code, _, err = kg("eval", "graph", tmp_path / "bad_docs.jsonl", mentions)
    assert code == 2 and f"cannot read {tmp_path / 'bad_docs.jsonl'}: line 2 lacks doc_id" in err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    mentions.write_text(json.dumps({"doc_id": "d1", "text": "Paris", "gold_cluster": "Paris"}) + "\n")
    code, _, err = kg("eval", "graph", docs, mentions, "--out", tmp_path / "full")
    assert code == 2 and "not a new or empty folder" in err


@pytest.mark.slow
@pytest.mark.process  # the reference scorer runs as a script of its own
@pytest.mark.skipif(not DEV_DOCS.exists() or not DEV_MENTIONS.exists(),
                    reason="shared/eval (dwie_dev.jsonl, dwie_dev_mentions.jsonl) is not mounted beside the project")
def test_kg_eval_graph_equals_the_reference_scorer_on_development_articles(tmp_path, kg):
    articles = DEV_DOCS.read_text(encoding="utf-8").splitlines()[:5]
    ids = {json.loads(line)["doc_id"] for line in articles}
    mentions = [line for line in DEV_MENTIONS.read_text(encoding="utf-8").splitlines()
                if line.strip() and json.loads(line)["doc_id"] in ids]
    (tmp_path / "docs.jsonl").write_text("\n".join(articles) + "\n", encoding="utf-8")
    (tmp_path / "mentions.jsonl").write_text("\n".join(mentions) + "\n", encoding="utf-8")
    out = tmp_path / "graph"

    code, stdout, err = kg("eval", "graph", tmp_path / "docs.jsonl", tmp_path / "mentions.jsonl", "--out", out)

    assert code == 0, err[-3000:]
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["documents"] == 5 and summary["extractor"] == "heuristic" and summary["seconds"] > 0
    assert sorted(p.name for p in (out / "inbox").iterdir()) == sorted(f"{i}.txt" for i in ids)
    reference = subprocess.run(
        [sys.executable, EVAL / "graphscore.py", out / "warehouse.duckdb", tmp_path / "mentions.jsonl"],
        capture_output=True, text=True, timeout=120)
    assert reference.returncode == 0, reference.stderr
    expected = json.loads(reference.stdout.strip().splitlines()[-1])
    assert set(expected) == set(SCORES)
    assert {key: summary[key] for key in SCORES} == expected
    assert expected["nodes"] > 20 and 0 < expected["node_precision"] < 1 and expected["gold_mentions"] == len(mentions)
    with duckdb.connect(str(out / "warehouse.duckdb"), read_only=True) as con:  # `kg run --no-marts`: no dbt views
        assert con.execute("SELECT count(*) FROM duckdb_views() WHERE schema_name = 'kg_marts'").fetchall() == [(0,)]

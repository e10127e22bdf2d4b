"""Scores for entity linking (`kg eval linking`), per shared/eval/README.md.

- `link_eval_mentions` runs a linker over eval mention rows (doc_id, mention_id, text, type) exactly as
  the pipeline would: each mention becomes an ENTITY_MENTIONS row of its document (entity_id by the row
  builder's id rule, `rows.with_mention_entity_ids`), the linker returns redirects, `apply_redirects` rewrites the ids, and the
  cluster of a mention is the canonical entity id it ends on.
- `pairwise_scores` and `bcubed_scores` compare predicted and gold clusterings from the contingency
  counts (mentions per (predicted, gold) cluster pair), never enumerating mention pairs.
  Conventions: mentions missing from `pred` are singletons; mentions missing from `gold` are ignored.
  With no predicted pairs pairwise precision is 1.0 (nothing wrong was claimed), with no gold pairs
  pairwise recall is 1.0.
- `redocred_mentions` flattens Re-DocRED documents into the same mention format (gold cluster =
  document + entity: Re-DocRED clusters are within one document).
"""

from __future__ import annotations

import json
import time
from collections.abc import Hashable, Mapping
from pathlib import Path

import polars as pl

from kg_assets.core.extraction.rows import with_mention_entity_ids
from kg_assets.core.linking import Linker, apply_redirects
from kg_assets.evaluation.metrics import scores


def _contingency(pred: Mapping[Hashable, Hashable], gold: Mapping[Hashable, Hashable]) -> pl.DataFrame:
    keys = list(gold)
    frame = pl.DataFrame({  # a mention missing from `pred` gets a label no real cluster can have
        "g": pl.Series([str(gold[k]) for k in keys], dtype=pl.String),
        "p": pl.Series([f"p:{pred[k]}" if k in pred else f"missing:{i}" for i, k in enumerate(keys)], dtype=pl.String),
    })
    return frame.group_by("p", "g").len().rename({"len": "n"}).with_columns(pl.col("n").cast(pl.Int64))


def pairwise_scores(pred: Mapping[Hashable, Hashable], gold: Mapping[Hashable, Hashable]) -> dict:
    """Precision/recall/F1 over coreferent mention pairs, from cluster intersection sizes."""
    c = _contingency(pred, gold)
    pairs = lambda col: (col * (col - 1) // 2).sum()  # noqa: E731
    true_pairs = int(c.select(pairs(pl.col("n"))).item() or 0)
    pred_pairs = int(c.group_by("p").agg(pl.col("n").sum()).select(pairs(pl.col("n"))).item() or 0)
    gold_pairs = int(c.group_by("g").agg(pl.col("n").sum()).select(pairs(pl.col("n"))).item() or 0)
    precision = true_pairs / pred_pairs if pred_pairs else 1.0
    recall = true_pairs / gold_pairs if gold_pairs else 1.0
    return {**scores(precision, recall), "true_pairs": true_pairs, "predicted_pairs": pred_pairs,
            "gold_pairs": gold_pairs}


def bcubed_scores(pred: Mapping[Hashable, Hashable], gold: Mapping[Hashable, Hashable]) -> dict:
    """B-cubed precision/recall/F1: per mention, the share of its predicted cluster in its gold cluster
    (precision) and of its gold cluster in its predicted cluster (recall), averaged over mentions."""
    c = _contingency(pred, gold)
    total = int(c["n"].sum() or 0)
    if total == 0:
        return {**scores(0.0, 0.0), "mentions": 0, "predicted_clusters": 0, "gold_clusters": 0}
    c = c.with_columns(
        pl.col("n").sum().over("p").alias("np"),
        pl.col("n").sum().over("g").alias("ng"),
    )
    precision = float(c.select((pl.col("n") ** 2 / pl.col("np")).sum()).item()) / total
    recall = float(c.select((pl.col("n") ** 2 / pl.col("ng")).sum()).item()) / total
    return {**scores(precision, recall), "mentions": total, "predicted_clusters": c["p"].n_unique(),
            "gold_clusters": c["g"].n_unique()}


def eval_mention_frame(mentions: pl.DataFrame) -> pl.DataFrame:
    """Eval rows (doc_id, mention_id, text, type) as ENTITY_MENTIONS rows of their documents."""
    frame = mentions.select(
        pl.col("mention_id").cast(pl.String),
        pl.col("doc_id").cast(pl.String).alias("document_id"),
        pl.col("doc_id").cast(pl.String).alias("chunk_id"),
        pl.col("text").cast(pl.String).alias("name"),
        pl.col("type").cast(pl.String).fill_null("OTHER").alias("entity_type"),
    )
    return with_mention_entity_ids(frame)


def link_eval_mentions(mentions: pl.DataFrame, linker: Linker, per_document: bool = False) -> pl.DataFrame:
    """mention_id -> cluster (the canonical entity id after the linker's redirects).

    per_document=True links each document on its own (for gold that only clusters within a document,
    like Re-DocRED); the cluster is then prefixed with the document id."""
    frame = eval_mention_frame(mentions)
    if not per_document:
        redirects = linker.link(frame)
        linked = apply_redirects(frame, redirects, ["entity_id"])
        return linked.select("mention_id", pl.col("entity_id").alias("cluster"))
    parts = []
    for (doc,), part in frame.sort("document_id", "mention_id").group_by("document_id", maintain_order=True):
        redirects = linker.link(part)
        linked = apply_redirects(part, redirects, ["entity_id"])
        parts.append(linked.select("mention_id", pl.concat_str(pl.lit(f"{doc}#"), "entity_id").alias("cluster")))
    return pl.concat(parts) if parts else pl.DataFrame(schema={"mention_id": pl.String, "cluster": pl.String})


def score_linking(mentions: pl.DataFrame, linker: Linker, per_document: bool = False) -> dict:
    """Pairwise and B-cubed scores of `linker` on eval mentions with a gold_cluster column."""
    started = time.perf_counter()
    clusters = link_eval_mentions(mentions, linker, per_document=per_document)
    seconds = time.perf_counter() - started
    pred = dict(clusters.select("mention_id", "cluster").iter_rows())
    gold = dict(mentions.select(pl.col("mention_id").cast(pl.String), pl.col("gold_cluster").cast(pl.String)).iter_rows())
    pair = pairwise_scores(pred, gold)
    b3 = bcubed_scores(pred, gold)
    return {
        "linker": getattr(linker, "name", type(linker).__name__),
        "pairwise_precision": pair["precision"], "pairwise_recall": pair["recall"], "pairwise_f1": pair["f1"],
        "bcubed_precision": b3["precision"], "bcubed_recall": b3["recall"], "bcubed_f1": b3["f1"],
        "predicted_clusters": b3["predicted_clusters"], "gold_clusters": b3["gold_clusters"],
        "mentions": b3["mentions"], "seconds": round(seconds, 3),
    }


def read_mentions(path: str | Path) -> pl.DataFrame:
    """Eval mentions (`ecbplus_dev_mentions.jsonl` format)."""
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    keep = ["doc_id", "mention_id", "text", "type", "gold_cluster", "start", "end"]
    return pl.DataFrame([{k: r.get(k) for k in keep} for r in rows],
                        schema={"doc_id": pl.String, "mention_id": pl.String, "text": pl.String, "type": pl.String,
                                "gold_cluster": pl.String, "start": pl.Int64, "end": pl.Int64})


def redocred_mentions(docs_jsonl_path: str | Path) -> pl.DataFrame:
    """Re-DocRED entity mentions (eval_entity true only) as eval mention rows:
    doc_id, mention_id, text, type (= pipeline_type), gold_cluster = f"{doc_id}#{entity id}", start, end."""
    rows = []
    for line in Path(docs_jsonl_path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        doc = json.loads(line)
        doc_id = str(doc["doc_id"])
        for entity in doc.get("entities", []):
            if not entity.get("eval_entity", True):
                continue
            for k, mention in enumerate(entity.get("mentions", [])):
                rows.append({
                    "doc_id": doc_id,
                    "mention_id": f"{doc_id}#{entity['id']}#{k}",
                    "text": mention["text"],
                    "type": entity.get("pipeline_type") or "OTHER",
                    "gold_cluster": f"{doc_id}#{entity['id']}",
                    "start": mention.get("start"),
                    "end": mention.get("end"),
                })
    return pl.DataFrame(rows, schema={"doc_id": pl.String, "mention_id": pl.String, "text": pl.String,
                                      "type": pl.String, "gold_cluster": pl.String, "start": pl.Int64,
                                      "end": pl.Int64})

"""Scores for `kg eval extraction`, per shared/eval/README.md.

A predicted entity matches a gold entity when its normalized name equals the normalized text of one
of the gold entity's mentions and the types agree (OTHER on either side matches any type). Relations
are scored unlabelled and direction-free, as pairs of matched entities.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from kg_assets.core.normalize import normalize_name
from kg_assets.evaluation.metrics import prf


def _types_agree(predicted: str, gold: str) -> bool:
    return predicted == gold or "OTHER" in (predicted, gold)


def score_document(gold: dict, entities: pl.DataFrame, relations: pl.DataFrame) -> dict[str, int]:
    """Counts for one document. `entities`: entity_id, normalized_name, entity_type (one row per predicted
    entity after in-document linking); `relations`: source_id, target_id."""
    gold_entities = [e for e in gold["entities"] if e.get("eval_entity", True)]
    names = {e["id"]: {normalize_name(m["text"]) for m in e["mentions"]} for e in gold_entities}
    types = {e["id"]: e["pipeline_type"] for e in gold_entities}
    match: dict[str, object] = {}
    for entity_id, name, entity_type in entities.select("entity_id", "normalized_name", "entity_type").iter_rows():
        for gold_id, gold_names in names.items():
            if name in gold_names and _types_agree(entity_type, types[gold_id]):
                match[entity_id] = gold_id
                break
    eval_ids = set(names)
    gold_pairs = {frozenset((r["head"], r["tail"])) for r in gold["relations"]
                  if r["head"] in eval_ids and r["tail"] in eval_ids and r["head"] != r["tail"]}
    predicted_pairs = {frozenset(p) for p in relations.select("source_id", "target_id").iter_rows() if p[0] != p[1]}
    mapped = [frozenset(match.get(i) for i in pair) for pair in predicted_pairs]
    return {
        "entities_predicted": entities.height,
        "entities_predicted_correct": len(match),
        "entities_gold": len(gold_entities),
        "entities_gold_found": len(set(match.values())),
        "relations_predicted": len(predicted_pairs),
        "relations_predicted_correct": sum(1 for m in mapped if None not in m and len(m) == 2 and m in gold_pairs),
        "relations_gold": len(gold_pairs),
        "relations_gold_found": len(gold_pairs & {m for m in mapped if None not in m}),
    }


def summarize(counts: Iterable[dict[str, int]]) -> dict[str, float]:
    total: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            total[k] = total.get(k, 0) + v
    ent = prf(total.get("entities_predicted_correct", 0), total.get("entities_predicted", 0),
              total.get("entities_gold_found", 0), total.get("entities_gold", 0))
    rel = prf(total.get("relations_predicted_correct", 0), total.get("relations_predicted", 0),
              total.get("relations_gold_found", 0), total.get("relations_gold", 0))
    return {**{f"entity_{k}": v for k, v in ent.items()}, **{f"relation_{k}": v for k, v in rel.items()}, **total}

"""Scores for `kg eval facts`, per the contract in shared/eval/README.md.

A predicted fact matches a gold fact of the same dialog, turn and speaker when the F1 of their content-word
sets (kg_assets/core/facts/words.py) is at least 0.5. Each fact matches at most once, best scores first
(ties: earlier predicted fact, then earlier gold fact). Persona level: all facts kept for a speaker against
that speaker's ``final_persona``, same rule.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from kg_assets.core.evaluation import prf
from kg_assets.core.facts.words import content_words, set_f1

MATCH_F1 = 0.5


def count_matches(predicted: Sequence[str], gold: Sequence[str], threshold: float = MATCH_F1) -> int:
    """Pairs matched one-to-one, greedily by descending content-word F1."""
    pred_words = [content_words(p) for p in predicted]
    gold_words = [content_words(g) for g in gold]
    pairs = sorted(
        ((score, i, j) for i, p in enumerate(pred_words) for j, g in enumerate(gold_words)
         if (score := set_f1(p, g)) >= threshold),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    used_pred: set[int] = set()
    used_gold: set[int] = set()
    for _, i, j in pairs:
        if i not in used_pred and j not in used_gold:
            used_pred.add(i)
            used_gold.add(j)
    return len(used_pred)


def score_facts(dialogs: Iterable[Mapping], predictions: Iterable[Mapping]) -> dict:
    """Turn- and persona-level precision, recall and F1 of predicted facts against annotated dialogs.

    `dialogs`: {dialog_id, turns: [{idx, speaker, gold_facts}], final_persona: {speaker: [facts]}};
    `predictions`: {dialog_id, turn_idx, speaker, fact}. Predictions for dialogs not given are ignored; a
    prediction at a turn of another speaker counts as predicted and matches nothing.
    """
    dialogs = list(dialogs)
    evaluated = {d["dialog_id"] for d in dialogs}
    by_turn: dict[tuple, list[str]] = defaultdict(list)
    by_speaker: dict[tuple, list[str]] = defaultdict(list)
    turn = {"predicted": 0, "gold": 0, "matched": 0}
    persona = {"predicted": 0, "gold": 0, "matched": 0}
    for p in predictions:
        if p["dialog_id"] in evaluated:  # a fact at a turn of another speaker counts, and matches nothing
            by_turn[(p["dialog_id"], p["turn_idx"], p["speaker"])].append(p["fact"])
            by_speaker[(p["dialog_id"], p["speaker"])].append(p["fact"])
            turn["predicted"] += 1
            persona["predicted"] += 1
    for dialog in dialogs:
        did = dialog["dialog_id"]
        for t in dialog["turns"]:
            gold = t.get("gold_facts") or []
            turn["gold"] += len(gold)
            turn["matched"] += count_matches(by_turn.get((did, t["idx"], t["speaker"]), []), gold)
        for speaker, gold in (dialog.get("final_persona") or {}).items():
            persona["gold"] += len(gold)
            persona["matched"] += count_matches(by_speaker.get((did, speaker), []), gold)
    t_scores = prf(turn["matched"], turn["predicted"], turn["matched"], turn["gold"])
    p_scores = prf(persona["matched"], persona["predicted"], persona["matched"], persona["gold"])
    return {
        **{f"turn_{k}": v for k, v in t_scores.items()},
        **{f"persona_{k}": v for k, v in p_scores.items()},
        "turn_facts_predicted": turn["predicted"], "turn_facts_gold": turn["gold"], "turn_facts_matched": turn["matched"],
        "persona_facts_predicted": persona["predicted"], "persona_facts_gold": persona["gold"],
        "persona_facts_matched": persona["matched"],
    }

"""Precision, recall and F1, shared by every `kg eval` command."""

from __future__ import annotations


def scores(precision: float, recall: float) -> dict[str, float]:
    """Precision, recall and their F1, rounded for reports (shared by every eval command)."""
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def prf(correct_predicted: int, predicted: int, correct_gold: int, gold: int) -> dict[str, float]:
    """Scores from counts: correct predictions over predictions, gold items found over gold items."""
    return scores(correct_predicted / predicted if predicted else 0.0, correct_gold / gold if gold else 0.0)

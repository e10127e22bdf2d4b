"""`kg eval facts`, per the contract in shared/eval/README.md: the dialogs run through the fact pipeline, and scores.

Each dialog becomes one chat conversation (rendered as a chat `.jsonl` and read by the same parser as inbox
chats), each speaker one user, and the messages go through `learn_facts` with the rate at 1.0.

A predicted fact matches a gold fact of the same dialog, turn and speaker when the F1 of their content-word
sets (kg_assets/core/facts/words.py) is at least 0.5. Each fact matches at most once, best scores first
(ties: earlier predicted fact, then earlier gold fact). Persona level: all facts kept for a speaker against
that speaker's ``final_persona``, same rule.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.chat import messages_frame, parse_chat
from kg_assets.evaluation.metrics import prf
from kg_assets.core.facts.pipeline import learn_facts
from kg_assets.core.facts.records import FactExtractor
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
        "turn_facts_predicted": turn["predicted"], "turn_facts_gold": turn["gold"],
        "turn_facts_matched": turn["matched"],
        "persona_facts_predicted": persona["predicted"], "persona_facts_gold": persona["gold"],
        "persona_facts_matched": persona["matched"],
    }


def read_dialogs(lines: Iterable[str]) -> list[dict]:
    """Dialogs of a DIALOGS.jsonl file; ValueError naming the line of the first one that is malformed."""
    dialogs: list[dict] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            dialog = json.loads(line)
            turns = dialog["turns"]
            if not isinstance(dialog["dialog_id"], str | int) or not isinstance(turns, list):
                raise TypeError("dialog_id must be a string and turns a list")
            for t in turns:
                if not (isinstance(t["idx"], int) and isinstance(t["speaker"], str) and isinstance(t["text"], str)):
                    raise TypeError("each turn needs an integer idx, a speaker and a text")
            if len({t["idx"] for t in turns}) < len(turns) or str(dialog["dialog_id"]) in seen:
                raise TypeError("turn idx values and dialog ids must be unique")
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {number} is not JSON: {exc.msg}") from exc
        except KeyError as exc:
            raise ValueError(f"line {number} lacks {exc.args[0]}") from exc
        except TypeError as exc:
            raise ValueError(f"line {number}: {exc}") from exc
        seen.add(str(dialog["dialog_id"]))
        dialogs.append(dialog)
    return dialogs


_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)  # turn i of a dialog is sent at epoch + i minutes


def _user(dialog_id: str, speaker: str) -> str:
    return f"{dialog_id}/{speaker}"  # speakers (bot_0, bot_1) repeat across dialogs; users must not


def dialog_messages(dialogs: Iterable[dict]) -> pl.DataFrame:
    """MESSAGES rows for annotated dialogs: one conversation per dialog, message id = turn index."""
    frames = []
    for dialog in dialogs:
        lines = [
            json.dumps({"user_id": _user(dialog["dialog_id"], t["speaker"]), "message_id": str(t["idx"]),
                        "timestamp": (_EPOCH + timedelta(minutes=int(t["idx"]))).isoformat(), "content": t["text"]})
            for t in dialog["turns"]
        ]
        frames.append(messages_frame(str(dialog["dialog_id"]), parse_chat("\n".join(lines))))
    return pl.concat(frames) if frames else schemas.empty(schemas.MESSAGES)


def fact_predictions(dialogs: list[dict], facts: pl.DataFrame) -> list[dict]:
    """One contract line per fact kept (not set aside as a duplicate), in dialog and turn order."""
    speakers = {_user(d["dialog_id"], t["speaker"]): t["speaker"] for d in dialogs for t in d["turns"]}
    kept = facts.filter(pl.col("duplicate_of").is_null()).with_columns(
        pl.col("extracted_from_message_id").cast(pl.Int64).alias("turn_idx")
    ).sort("document_id", "turn_idx", "fact_index")
    order = {str(d["dialog_id"]): i for i, d in enumerate(dialogs)}
    rows = [
        {"dialog_id": r["document_id"], "turn_idx": r["turn_idx"], "speaker": speakers[r["user_id"]],
         "fact": r["content"], "fact_type": r["fact_type"], "confidence": r["confidence"],
         "importance": r["importance"], "temporal": r["temporal"]}
        for r in kept.iter_rows(named=True)
    ]
    return sorted(rows, key=lambda r: order[r["dialog_id"]])


def evaluate_facts(dialogs: list[dict], extractor: FactExtractor) -> tuple[list[dict], dict]:
    """(predictions, summary) of the fact pipeline on annotated dialogs."""
    started = time.perf_counter()
    learned = learn_facts(dialog_messages(dialogs), extractor, enabled=True, rate=1.0, learned_at=_EPOCH)
    predictions = fact_predictions(dialogs, learned.facts)
    outcomes = learned.outcomes()
    summary = {
        **score_facts(dialogs, predictions),
        "dialogs": len(dialogs),
        "messages": learned.extractions.height,
        "messages_not_extractable": outcomes.get("not_extractable", 0),
        "messages_failed": outcomes.get("error", 0),
        "duplicates_set_aside": learned.facts.filter(pl.col("duplicate_of").is_not_null()).height,
        "extractor": extractor.name,
        "extractor_version": extractor.version,
        "llm_calls": learned.llm_calls,
        "prompt_tokens": learned.prompt_tokens,
        "completion_tokens": learned.completion_tokens,
        "seconds": round(time.perf_counter() - started, 2),
    }
    return predictions, summary

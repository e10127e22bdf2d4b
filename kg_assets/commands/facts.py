"""`kg eval facts`: the user-fact pipeline over annotated dialogs (contract in shared/eval/README.md).

Each dialog becomes one chat conversation (rendered as a chat `.jsonl` and read by the same parser as inbox
chats), each speaker one user, and the messages go through `learn_facts` with the rate at 1.0. The `kg facts`
commands join this module once the fact assets exist.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.chat import messages_frame, parse_chat
from kg_assets.core.fact_evaluation import score_facts
from kg_assets.core.facts.pipeline import learn_facts
from kg_assets.core.facts.records import FactExtractor
from kg_assets.extractors.facts.heuristic import HeuristicFactExtractor

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


def _extractor() -> FactExtractor | None:
    engine = os.environ.get("KG_EXTRACTOR", "auto")
    if engine == "llm":
        print("kg eval facts: the LLM fact extractor is not wired to the LLM engine yet; "
              "unset KG_EXTRACTOR or set it to heuristic", file=sys.stderr)
        return None
    if engine == "auto" and (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")):
        print("kg eval facts: LLM fact extraction is not wired yet; using the offline heuristic", file=sys.stderr)
    return HeuristicFactExtractor()


def cmd_eval_facts(args: argparse.Namespace) -> int:
    """Fact extraction quality on annotated dialogs: writes PRED.jsonl, last line is one JSON object."""
    extractor = _extractor()
    if extractor is None:
        return 2
    try:
        with open(args.dialogs, encoding="utf-8") as handle:
            dialogs = [json.loads(line) for line in handle if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        print(f"kg eval facts: cannot read {args.dialogs}: {exc}", file=sys.stderr)
        return 2
    dialogs = dialogs[: args.limit] if args.limit else dialogs
    turns = sum(len(d["turns"]) for d in dialogs)
    print(f"kg eval facts: {len(dialogs)} dialogs, {turns} turns, extractor {extractor.name}", file=sys.stderr)
    predictions, summary = evaluate_facts(dialogs, extractor)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as out:
            for row in predictions:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(json.dumps(summary))
    return 0


def register_eval(eval_subparsers: argparse._SubParsersAction) -> None:
    """Add `kg eval facts` to the `kg eval` subcommands."""
    facts = eval_subparsers.add_parser("facts", help="user-fact turn and persona P/R/F1 on DIALOGS.jsonl")
    facts.add_argument("dialogs", help="annotated dialogs (shared/eval msc_facts format)")
    facts.add_argument("--out", help="write one predicted fact per line here")
    facts.add_argument("--limit", type=int, help="only the first N dialogs")
    facts.set_defaults(func=cmd_eval_facts)

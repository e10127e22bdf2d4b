"""`kg eval facts`: the user-fact pipeline over annotated dialogs (contract in shared/eval/README.md).

The `kg facts` commands join this module once the fact assets exist. Imports are deferred so that `kg`
starts fast whatever the command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kg_assets.commands.common import load_settings


def _extractor(args: argparse.Namespace):
    from kg_assets.extractors.facts.heuristic import HeuristicFactExtractor

    extractor = load_settings(args).extractor
    if extractor.engine == "llm":
        print("kg eval facts: the LLM fact extractor is not wired to the LLM engine yet; "
              "unset KG_EXTRACTOR or set it to heuristic", file=sys.stderr)
        return None
    if extractor.uses_llm:
        print("kg eval facts: LLM fact extraction is not wired yet; using the offline heuristic", file=sys.stderr)
    return HeuristicFactExtractor()


def cmd_eval_facts(args: argparse.Namespace) -> int:
    """Fact extraction quality on annotated dialogs: writes PRED.jsonl, last line is one JSON object."""
    from kg_assets.evaluation.facts import evaluate_facts, read_dialogs

    extractor = _extractor(args)
    if extractor is None:
        return 2
    try:
        with open(args.dialogs, encoding="utf-8") as handle:
            dialogs = read_dialogs(handle)
    except (OSError, ValueError) as exc:
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

"""`kg facts ...` (what kg_assets knows about a chat user, and forgetting them) and `kg eval facts`.

    kg facts remember USER "text"         a fact the user states (source manual, confidence 1.0, importance 0.8)
    kg facts teach USER "text" --by ADMIN  a fact an admin states about the user (source admin)
    kg facts list USER [--history]        current facts with type, source and when learned; --history adds
                                          superseded facts and duplicates set aside
    kg facts context USER [--max-chars N] the seed's context block, ready for a prompt
    kg facts forget USER                  delete everything the user wrote or that was learned from it
    kg facts unforget USER                lift the tombstone: the next `kg run` reads their messages again

Manual facts are stored in kg.manual_facts, so they survive every rebuild; the memory (kg.user_facts) is
rebuilt at once. Imports are deferred so that `kg` starts fast whatever the command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kg_assets.commands.common import add_db_option, load_settings, plural


def _extractor(args: argparse.Namespace):
    """The fact extractor `kg run` would use: the LLM when one is configured, else the offline heuristic."""
    from kg_assets.extractors.factory import build_fact_extractor

    return build_fact_extractor(load_settings(args).extractor)


def cmd_eval_facts(args: argparse.Namespace) -> int:
    """Fact extraction quality on annotated dialogs: writes PRED.jsonl, last line is one JSON object."""
    from kg_assets.evaluation.facts import evaluate_facts, read_dialogs

    extractor = _extractor(args)
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


def register(subparsers) -> None:
    facts = subparsers.add_parser("facts", help="what kg_assets knows about a chat user: remember, teach, list, "
                                                 "context, forget, unforget")
    actions = facts.add_subparsers(dest="action", required=True)
    for name, help_text, handler in (
        ("remember", "store a fact the user states about themselves", cmd_remember),
        ("teach", "store a fact an admin states about the user", cmd_remember),
        ("list", "what is known about the user", cmd_list),
        ("context", "the user's context block for a prompt", cmd_context),
        ("forget", "delete everything the user wrote or that was learned from it", cmd_forget),
        ("unforget", "let ingestion read the user's messages again", cmd_unforget),
    ):
        action = actions.add_parser(name, help=help_text)
        action.add_argument("user", help="user_id as in the chat logs")
        if name in ("remember", "teach"):
            action.add_argument("text", help='the fact, e.g. "I am allergic to peanuts" or "is allergic to peanuts"')
            action.add_argument("--type", help="fact type (default: the offline extractor's cues, else general)")
            action.add_argument("--force", action="store_true",
                                help="keep a text that chat extraction would skip (too short, a greeting, a command)")
        if name == "teach":
            action.add_argument("--by", required=True, help="the admin who states it")
        if name == "list":
            action.add_argument("--history", action="store_true", help="also superseded facts and duplicates")
        if name == "context":
            action.add_argument("--max-chars", type=int, help="size limit (env KG_FACT_CONTEXT_CHARS, default 1000)")
        add_db_option(action)
        action.set_defaults(func=handler)


def _store(args: argparse.Namespace):
    from kg_assets.storage.facts import FactStore
    from kg_assets.storage.warehouse import Warehouse

    settings = load_settings(args)
    return settings, FactStore(Warehouse.from_settings(settings.warehouse))


def cmd_remember(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    import polars as pl

    from kg_assets.core.facts.memory import manual_fact, rebuild_memory
    from kg_assets.core.facts.rules import FACT_TYPES, extractability_problem

    from kg_assets.extractors.facts.heuristic import heuristic_facts

    found = heuristic_facts(args.text)  # type and tense from the offline cues, when it reads the text as a fact
    fact_type = args.type or (found[0].fact_type if found else "general")
    temporal = found[0].temporal if found else "present"
    if fact_type not in FACT_TYPES:
        print(f"kg facts {args.action}: --type must be one of {', '.join(FACT_TYPES)}", file=sys.stderr)
        return 2
    _, store = _store(args)
    if args.user in store.forgotten_user_ids():
        print(f"kg facts {args.action}: {args.user} is forgotten; `kg facts unforget {args.user}` first", file=sys.stderr)
        return 2
    # The seed's rules for which chat messages go to extraction; a short text the offline cues read as a fact
    # ("I speak Portuguese") passes, "hi" does not.
    problem = extractability_problem(args.text.strip())
    if problem is not None and not found and not args.force:
        print(f"kg facts {args.action}: {args.text!r} is not a storable fact: chat extraction would skip it ({problem}); "
              f"--force stores it anyway", file=sys.stderr)
        return 2
    teach = args.action == "teach"
    try:
        row, notes = manual_fact(args.user, args.text, at=datetime.now(UTC), source="admin" if teach else "manual",
                                 taught_by=args.by if teach else None, fact_type=fact_type, temporal=temporal)
    except ValueError as exc:
        print(f"kg facts {args.action}: {exc}", file=sys.stderr)
        return 2
    store.add_manual_fact(row)
    store.write_memory(rebuild_memory(store.fact_inputs(), store.forgotten_user_ids()))
    stored = store.user_facts(args.user).filter(pl.col("fact_id") == row["fact_id"]).row(0, named=True)
    for note in notes:
        print(f"  note: {note}")
    said = (f"kg facts {args.action}: {args.user} {stored['content']!r} ({stored['fact_type']}, source {stored['source']}, "
            f"confidence {stored['confidence']}, importance {stored['importance']})")
    if stored["duplicate_of"]:
        original = store.user_facts(args.user).filter(pl.col("fact_id") == stored["duplicate_of"]).row(0, named=True)
        print(f"{said}: a duplicate ({stored['dedup_rule']} {stored['dedup_score']:.2f}) of their fact "
              f"{original['content']!r} ({original['fact_id']}), which stays; kept as history only")
        return 0
    what = "replaces" if stored["supersedes"] or stored["dedup_guard"] == "manual" else "adds"
    print(f"{said}; it {what} {'a fact' if what == 'replaces' else 'to their facts'}")
    return 0


def _header(store, user: str) -> str:
    person = store.chat_user(user)
    if person is None or person["name"] is None:
        return user
    linked = f", person entity {person['entity_id']}" if person["entity_id"] else ""
    return f"{user} ({person['name']}{linked})"


def cmd_list(args: argparse.Namespace) -> int:
    import polars as pl

    _, store = _store(args)
    if not store.is_known_user(args.user):
        print(f"kg facts list: no messages or facts of {args.user!r} in {store.wh.path}", file=sys.stderr)
        return 2
    if args.user in store.forgotten_user_ids():
        print(f"kg facts list: {args.user} is forgotten: nothing is kept about them")
        return 0
    from kg_assets.core.facts.context import context_order

    facts = store.user_facts(args.user)
    current = context_order(facts.filter(pl.col("is_active")))  # the order of the context block
    print(f"{_header(store, args.user)}: {current.height} current facts")
    for row in current.iter_rows(named=True):
        print(_fact_line(row))
    if args.history:
        past = facts.filter(~pl.col("is_active")).sort("valid_from")
        print(f"history: {past.height} facts no longer current")
        for row in past.iter_rows(named=True):
            why = (f"duplicate ({row['dedup_rule']} {row['dedup_score']:.2f}) of {row['duplicate_of']}" if row["duplicate_of"]
                   else f"until {row['valid_until']:%Y-%m-%d}, superseded by {row['superseded_by']}")
            print(_fact_line(row) + f"\n      {why}")
    return 0


def _fact_line(row: dict) -> str:
    source = row["source"] + (f" by {row['taught_by']}" if row["taught_by"] else "")
    origin = (f"; message {row['extracted_from_message_id']} in {row['document_id']}" if row["document_id"] else "")
    return (f"  [{row['fact_type']}] {row['content']}\n      {source}, since {row['valid_from']:%Y-%m-%d %H:%M}, "
            f"learned {row['learned_at']:%Y-%m-%d}, confidence {row['confidence']}, importance {row['importance']}, "
            f"{row['temporal']}{origin}  ({row['fact_id']})")


def cmd_context(args: argparse.Namespace) -> int:
    from kg_assets.core.facts.context import context_block

    settings, store = _store(args)
    if not store.is_known_user(args.user):  # as `kg facts list` says it
        print(f"kg facts context: no messages or facts of {args.user!r} in {store.wh.path}", file=sys.stderr)
        return 2
    person = store.chat_user(args.user)
    try:
        block = context_block(store.user_facts(args.user), args.user, person["name"] if person else None,
                              max_chars=args.max_chars or settings.facts.context_chars)
    except ValueError as exc:
        print(f"kg facts context: {exc}", file=sys.stderr)
        return 2
    print(block)
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from kg_assets.storage.llm_cache import LLMCache

    settings, store = _store(args)
    report = store.forget_user(args.user)
    answers = 0
    if report.document_ids and Path(settings.extractor.cache_path).exists():
        with LLMCache(settings.extractor.cache_path) as cache:
            answers = cache.forget_documents(report.document_ids)
    print(f"kg facts forget: {args.user} is forgotten: {plural(report.messages, 'message')}, "
          f"{plural(report.facts, 'fact')}, {plural(len(report.document_ids), 'chat document')} with their chunks "
          f"and mentions, {plural(report.derived_rows, 'graph row')} and {plural(answers, 'cached LLM answer')} deleted")
    if report.document_ids:
        print(f"  run `kg run` to rebuild {', '.join(report.document_ids)} from the other speakers' messages; "
              f"{args.user}'s messages stay out until `kg facts unforget {args.user}`")
    return 0


def cmd_unforget(args: argparse.Namespace) -> int:
    _, store = _store(args)
    reread = store.unforget_user(args.user)
    if reread is None:
        print(f"kg facts unforget: {args.user} is not forgotten", file=sys.stderr)
        return 2
    print(f"kg facts unforget: {args.user} may be learned about again; the next `kg run` reads the chat logs "
          f"again with their messages ({plural(reread, 'current chat document')} marked for it)")
    return 0


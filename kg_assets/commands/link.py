"""`kg link`: manual linking decisions (split, merge, remove, list), applied by the next consolidation."""

from __future__ import annotations

import argparse
import sys

from kg_assets.commands.common import add_db_option, load_settings


def register(subparsers) -> None:
    link = subparsers.add_parser("link", help="override entity linking: split a merge, force a merge, list, remove")
    link.add_argument("action", choices=["split", "merge", "remove", "list"])
    link.add_argument("from_id", nargs="?")
    link.add_argument("to_id", nargs="?")
    link.add_argument("--note", help="why (kept with the override)")
    add_db_option(link)
    link.set_defaults(func=link_command)


def link_command(args: argparse.Namespace) -> int:
    """Manual linking decisions, applied by the next consolidation (linked_entities)."""
    if args.action != "list" and not (args.from_id and args.to_id):
        print(f"kg link: {args.action} needs FROM_ID and TO_ID", file=sys.stderr)
        return 2
    import polars as pl

    from kg_assets.storage.warehouse import Warehouse

    settings = load_settings(args)
    warehouse = Warehouse.from_settings(settings.warehouse)
    if args.action == "list":
        with pl.Config(tbl_rows=-1, fmt_str_lengths=60):
            print(warehouse.link_overrides())
        return 0
    if args.action != "remove" and len(warehouse.extracted_entity_ids([args.from_id, args.to_id])) < 2:
        print(f"kg link: both ids must be extracted entity ids (kg.entity_mentions) in {warehouse.path}", file=sys.stderr)
        return 2
    warehouse.set_link_override(args.from_id, args.to_id, None if args.action == "remove" else args.action, args.note)
    print(f"kg link: {args.action} {args.from_id} {args.to_id}; takes effect on the next consolidation "
          "(kg run, or materialize linked_entities)")
    return 0

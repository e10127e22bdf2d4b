"""The `kg` command: run the pipeline on an inbox, estimate, evaluate, link overrides, query the warehouse.

Each subcommand lives in its own module under kg_assets/commands/ and adds its parser with `register`.
"""

from __future__ import annotations

import argparse
import os
import sys

from kg_assets.commands import estimate, evaluate, facts, link, llm, run, search, sql
from kg_assets.settings import SettingsError

COMMANDS = (run, sql, estimate, evaluate, link, search, facts, llm)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kg", description="kg_assets: documents to a knowledge graph in DuckDB")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    from kg_assets.storage.warehouse import WarehouseNotFound

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (SettingsError, WarehouseNotFound) as exc:
        print(f"kg {args.command}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`kg show X | head`): no traceback, and none when Python flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a command a pipe cut short


def entry() -> None:
    """The `kg` console script: `main` in a process whose garbage collector runs less often
    (`defs/garbage_collection.py`), which exits without a last full collection."""
    from kg_assets.defs.garbage_collection import collect_less_often, skip_the_last_collection

    collect_less_often()
    code = main()
    skip_the_last_collection()
    sys.exit(code)


if __name__ == "__main__":
    entry()

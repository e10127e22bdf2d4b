"""What several `kg` commands share: settings from the environment plus their options."""

from __future__ import annotations

import argparse

from kg_assets.settings import Settings


def add_inbox_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--inbox", help="folder of documents (env KG_INBOX, default data/inbox)")


def add_db_option(parser: argparse.ArgumentParser, why: str = "DuckDB file") -> None:
    parser.add_argument("--db", help=f"{why} (env KG_DUCKDB_PATH, default data/warehouse.duckdb)")


def load_settings(args: argparse.Namespace) -> Settings:
    """The environment's settings, with --inbox and --db in place of KG_INBOX and KG_DUCKDB_PATH."""
    options = {"KG_INBOX": getattr(args, "inbox", None), "KG_DUCKDB_PATH": getattr(args, "db", None)}
    return Settings.from_env({name: value for name, value in options.items() if value})


def plural(n: int, noun: str) -> str:
    """A count with its noun: "1 document", "2,040 documents"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"

"""`kg sql`: a read-only SQL query on the warehouse, printed as a table.

The query runs sandboxed: it reads the warehouse and nothing else (no other file, URL or extension; see
`kg_assets.storage.warehouse.SANDBOX`)."""

from __future__ import annotations

import argparse
import sys

from kg_assets.commands.common import add_db_option, load_settings


def register(subparsers) -> None:
    sql = subparsers.add_parser("sql", help="run a read-only SQL query on the warehouse")
    sql.add_argument("query")
    add_db_option(sql)
    sql.add_argument("--limit", type=int, default=50, help="rows to print")
    sql.set_defaults(func=sql_command)


def sql_command(args: argparse.Namespace) -> int:
    import duckdb
    import polars as pl

    from kg_assets.storage.warehouse import Warehouse

    settings = load_settings(args)
    warehouse = Warehouse.from_settings(settings.warehouse)
    try:
        result = warehouse.run_user_query(args.query)
    except duckdb.Error as exc:  # a typo, a write, or a file, URL or extension the sandbox refuses
        print(f"kg sql: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    with pl.Config(tbl_rows=args.limit, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=200):
        print(result)
    return 0

"""`kg sql`: a read-only SQL query on the warehouse, printed as a table."""

from __future__ import annotations

import argparse

from kg_assets.commands.common import add_db_option, load_settings


def register(subparsers) -> None:
    sql = subparsers.add_parser("sql", help="run a read-only SQL query on the warehouse")
    sql.add_argument("query")
    add_db_option(sql)
    sql.add_argument("--limit", type=int, default=50, help="rows to print")
    sql.set_defaults(func=sql_command)


def sql_command(args: argparse.Namespace) -> int:
    import polars as pl

    from kg_assets.storage.warehouse import Warehouse

    settings = load_settings(args)
    warehouse = Warehouse(settings.warehouse.db_path, settings.warehouse.lock_timeout_s)
    with pl.Config(tbl_rows=args.limit, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=200):
        print(warehouse.run_user_query(args.query))
    return 0

"""`kg sql`: a read-only SQL query on the warehouse, printed as a table; on a DuckLake, also as of an earlier
snapshot (`--snapshot N`, `--as-of TIME`) and the list of snapshots (`--snapshots`).

The query runs sandboxed: it reads the warehouse and nothing else (no other file, URL or extension; see
`kg_assets.storage.warehouse.SANDBOX`), at an earlier snapshot too."""

from __future__ import annotations

import argparse
import re
import sys
from datetime import UTC, datetime

from kg_assets.commands.common import add_db_option, load_settings


def snapshot_id(text: str) -> int:
    """A snapshot id as `ducklake_snapshots` numbers them: a whole number from 0."""
    if not re.fullmatch(r"[0-9]+", text):
        raise argparse.ArgumentTypeError(f"a snapshot id is a whole number from 0 (see --snapshots), not {text!r}")
    return int(text)


def moment(text: str) -> datetime:
    """An ISO 8601 time; without an offset it is UTC (not this machine's zone)."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an ISO 8601 time such as 2026-12-01T18:30:00+00:00, not {text!r}") from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def register(subparsers) -> None:
    sql = subparsers.add_parser("sql", help="run a read-only SQL query on the warehouse")
    sql.add_argument("query", nargs="?")
    add_db_option(sql)
    sql.add_argument("--limit", type=int, default=50, help="rows to print")
    when = sql.add_mutually_exclusive_group()
    when.add_argument("--snapshot", type=snapshot_id, help="DuckLake only: query the graph as of this snapshot id")
    when.add_argument("--as-of", type=moment, metavar="TIME",
                      help="DuckLake only: query the graph as it was at this ISO time (UTC unless it has an offset)")
    when.add_argument("--snapshots", action="store_true", help="DuckLake only: list the snapshots instead of a query")
    sql.set_defaults(func=sql_command)


def sql_command(args: argparse.Namespace) -> int:
    import polars as pl

    from kg_assets.storage.lake import SnapshotNotFound
    from kg_assets.storage.warehouse import NoTimeTravel, QueryError, Warehouse

    if (args.query is None) != args.snapshots:
        print("kg sql: give a query, or --snapshots to list the lake's snapshots", file=sys.stderr)
        return 2
    warehouse = Warehouse.from_settings(load_settings(args).warehouse)
    snapshot = args.snapshot if args.snapshot is not None else args.as_of
    try:
        result = warehouse.snapshots() if args.snapshots else warehouse.run_user_query(args.query, snapshot=snapshot)
    except NoTimeTravel as exc:
        print(f"kg sql: {exc}", file=sys.stderr)
        return 2
    except SnapshotNotFound as exc:
        print(f"kg sql: {exc}", file=sys.stderr)
        return 1
    except QueryError as exc:  # a typo, a write, or a file, URL or extension the sandbox refuses
        print(f"kg sql: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    with pl.Config(tbl_rows=args.limit, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=200):
        print(result)
    return 0

"""The `kg` command: run the pipeline on an inbox, query the warehouse."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def _configure_env(args: argparse.Namespace) -> None:
    # Definitions read these when they load, so they must be set first.
    if getattr(args, "inbox", None):
        os.environ["KG_INBOX"] = str(Path(args.inbox).resolve())
    if getattr(args, "db", None):
        os.environ["KG_DUCKDB_PATH"] = str(Path(args.db).resolve())
    if getattr(args, "dagster_home", None):
        os.environ["DAGSTER_HOME"] = str(Path(args.dagster_home).resolve())
    if not os.environ.get("DAGSTER_HOME"):
        os.environ["DAGSTER_HOME"] = str(Path.cwd().resolve())
    Path(os.environ["DAGSTER_HOME"]).mkdir(parents=True, exist_ok=True)


def cmd_run(args: argparse.Namespace) -> int:
    _configure_env(args)
    import warnings

    import dagster as dg

    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    warnings.filterwarnings("ignore", category=dg.PreviewWarning)

    from kg_assets.core.documents import scan_inbox
    from kg_assets.definitions import defs
    from kg_assets.defs.ingest import inbox_changes
    from kg_assets.defs.partitions import documents_partitions, range_tags
    from kg_assets.storage.warehouse import Warehouse

    started = time.perf_counter()
    inbox = Path(os.environ.get("KG_INBOX", "data/inbox"))
    if not inbox.is_dir():
        print(f"kg run: inbox {inbox} is not a directory", file=sys.stderr)
        return 2
    instance = dg.DagsterInstance.get()
    now = scan_inbox(inbox)
    known = list(instance.get_dynamic_partitions(documents_partitions.name))
    changes = inbox_changes({}, now, known)
    if changes.added:
        instance.add_dynamic_partitions(documents_partitions.name, changes.added)
    for key in changes.deleted:
        instance.delete_dynamic_partition(documents_partitions.name, key)
    ordered = list(instance.get_dynamic_partitions(documents_partitions.name))
    print(f"kg run: {len(now)} documents in {inbox} ({len(changes.added)} new, {len(changes.deleted)} removed); "
          f"DAGSTER_HOME={os.environ['DAGSTER_HOME']}", flush=True)

    job = defs.resolve_job_def("kg_pipeline" if ordered else "consolidation")
    tags = range_tags(ordered[0], ordered[-1]) if ordered else {}
    result = job.execute_in_process(
        instance=instance,
        tags=tags,
        raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": args.log_level}}}},
    )

    warehouse = Warehouse()
    counts = warehouse.counts()
    failed = warehouse.query(
        "SELECT document_id, error FROM kg.documents WHERE valid_until IS NULL AND status = 'error' ORDER BY 1"
    )
    checks = result.get_asset_check_evaluations()
    print(f"\nkg run {'succeeded' if result.success else 'FAILED'} in {time.perf_counter() - started:.1f}s "
          f"(run {result.run_id}); warehouse {warehouse.path}")
    for table in ("documents", "chunks", "entity_mentions", "local_relations", "entities", "graph_nodes", "graph_edges"):
        print(f"  {table:<16} {counts[table]:>10,}")
    print(f"  {'failed documents':<16} {failed.height:>10,}")
    for document_id, error in failed.iter_rows():
        print(f"    {document_id}: {error}")
    failing = [c for c in checks if not c.passed]
    print(f"  checks           {len(checks) - len(failing)}/{len(checks)} passed")
    for check in failing:
        print(f"    FAILED {check.asset_key.to_user_string()}:{check.check_name}")
    return 0 if result.success and not failing else 1


def cmd_sql(args: argparse.Namespace) -> int:
    _configure_env(args)
    from kg_assets.storage.warehouse import Warehouse

    import polars as pl

    with pl.Config(tbl_rows=args.limit, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=200):
        print(Warehouse().query(args.query, read_only=True))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kg", description="kg_assets: documents to a knowledge graph in DuckDB")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="discover the inbox and materialize every asset and check")
    run.add_argument("--inbox", help="folder of documents (env KG_INBOX, default data/inbox)")
    run.add_argument("--db", help="DuckDB file (env KG_DUCKDB_PATH, default data/warehouse.duckdb)")
    run.add_argument("--dagster-home", help="Dagster instance folder (env DAGSTER_HOME, default the current folder)")
    run.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                     help="Dagster event log level printed while running (default INFO)")
    run.set_defaults(func=cmd_run)

    sql = sub.add_parser("sql", help="run a read-only SQL query on the warehouse")
    sql.add_argument("query")
    sql.add_argument("--db", help="DuckDB file (env KG_DUCKDB_PATH)")
    sql.add_argument("--limit", type=int, default=50, help="rows to print")
    sql.set_defaults(func=cmd_sql)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

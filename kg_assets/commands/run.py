"""`kg run`: register the inbox as document partitions and materialize everything in one Dagster run."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from kg_assets.commands import run_report
from kg_assets.commands.common import add_db_option, add_inbox_option, load_settings, use_dagster_home
from kg_assets.settings import Settings

SUMMARY_TABLES = ("documents", "chunks", "entity_mentions", "local_relations", "entities", "graph_nodes", "graph_edges")


def register(subparsers) -> None:
    run = subparsers.add_parser("run", help="discover the inbox and materialize every asset and check")
    add_inbox_option(run)
    add_db_option(run)
    run.add_argument("--dagster-home", help="Dagster instance folder (env DAGSTER_HOME, default the current folder)")
    run.add_argument("--all", action="store_true", help="re-run every document partition, not only new, changed or stale ones")
    run.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                     help="Dagster event log level printed while running (default INFO)")
    run_report.add_options(run)
    run.set_defaults(func=run_command)


def documents_needing_work(settings: Settings, keys: list[str], added: set[str]) -> list[str]:
    """New documents, documents whose bytes changed, and documents with stale or failed extractions."""
    from kg_assets.core.chunking import CHUNKER_VERSION
    from kg_assets.core.files import DocumentError
    from kg_assets.core.files.inbox import entry_hash
    from kg_assets.storage.warehouse import Warehouse

    warehouse = Warehouse(settings.warehouse.db_path, settings.warehouse.lock_timeout_s)
    if not warehouse.exists():
        return keys
    stored = warehouse.current_content_hashes()
    inbox = Path(settings.ingest.inbox_dir)
    changed = set(added)
    for key in keys:
        try:
            if stored.get(key) != entry_hash(inbox, key):
                changed.add(key)
        except (OSError, DocumentError):
            changed.add(key)  # the documents asset records why it cannot be read
    stale = warehouse.stale_documents(settings.extractor.build_extractor().version, CHUNKER_VERSION)
    return sorted(changed | set(stale))


def run_command(args: argparse.Namespace) -> int:
    settings = load_settings(args)
    dagster_home = use_dagster_home(args)
    # Ranged runs write one planned event per asset instead of one per document, and storages that can
    # (PostgreSQL) write materialization events in batches: Dagster's own bookkeeping dominates otherwise.
    # Dagster reads both from the environment.
    os.environ.setdefault("DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS", "true")
    os.environ.setdefault("DAGSTER_EVENT_BATCH_SIZE", "1000")
    import warnings

    import dagster as dg

    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    warnings.filterwarnings("ignore", category=dg.PreviewWarning)

    from kg_assets.commands.recovery import job_pools, process_tags, wait_for_pools
    from kg_assets.core.files.inbox import scan_inbox
    from kg_assets.definitions import build_definitions
    from kg_assets.defs.ingest import inbox_changes
    from kg_assets.defs.partitions import documents_partitions, partition_ranges, range_tags
    from kg_assets.storage.warehouse import Warehouse

    started = time.perf_counter()
    inbox = Path(settings.ingest.inbox_dir)
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
          f"DAGSTER_HOME={dagster_home}", flush=True)

    todo = ordered if args.all else documents_needing_work(settings, ordered, set(changes.added))
    span = partition_ranges(todo, ordered, max_ranges=1)
    if span:
        print(f"kg run: {len(todo):,} documents to (re)process in one run over partitions "
              f"{span[0][0]} .. {span[0][1]}", flush=True)
    else:
        print("kg run: every document is up to date; consolidating only", flush=True)
    job = build_definitions(settings).resolve_job_def("kg_pipeline" if span else "consolidation")
    try:
        wait_for_pools(instance, job_pools(job))
    except KeyboardInterrupt:
        print("kg run: interrupted while waiting for a pool; nothing ran", file=sys.stderr)
        return run_report.INTERRUPTED
    result = job.execute_in_process(
        instance=instance,
        tags={**(range_tags(*span[0]) if span else {}), **process_tags()},
        raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": args.log_level}}}},
    )

    warehouse = Warehouse(settings.warehouse.db_path, settings.warehouse.lock_timeout_s)
    print(f"\nkg run {'succeeded' if result.success else 'FAILED'} in {time.perf_counter() - started:.1f}s "
          f"(run {result.run_id}); warehouse {warehouse.path}")
    if not warehouse.exists():
        print("  the run wrote no warehouse", file=sys.stderr)
        return 1
    print_summary(warehouse, result)
    failed_chunks = run_report.print_failed_chunks(warehouse)
    checks = result.get_asset_check_evaluations()
    failing = [c for c in checks if not c.passed]
    print(f"  checks           {len(checks) - len(failing)}/{len(checks)} passed")
    for check in failing:
        print(f"    FAILED {check.asset_key.to_user_string()}:{check.check_name}")
    return run_report.exit_code(result.success, len(failing), failed_chunks, args.allow_failed_chunks)


def print_summary(warehouse, result) -> None:
    """Rows per table, failed documents and, when an LLM ran, the run's spend."""
    counts = warehouse.counts()
    failed = warehouse.failed_documents()
    for table in SUMMARY_TABLES:
        print(f"  {table:<16} {counts[table]:>10,}")
    print(f"  {'failed documents':<16} {failed.height:>10,}")
    for document_id, error in failed.iter_rows():
        print(f"    {document_id}: {error}")
    calls = warehouse.llm_spend(result.run_id)
    if calls["calls"] or calls["hits"]:
        print(f"  {'LLM calls':<16} {calls['calls']:>10,}  ({calls['hits']:,} cache hits; {calls['prompt']:,} prompt + "
              f"{calls['completion']:,} completion tokens; ${calls['cost']:.4f})")

"""`kg run`: ask the planner what changed, then materialize it (and consolidate) in one Dagster run."""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import os
import socket
import sys
import time
from pathlib import Path

from kg_assets.commands import run_report
from kg_assets.commands.common import add_db_option, add_inbox_option, load_settings, plural
from kg_assets.settings import use_dagster_event_batching, use_dagster_home

MAX_TAGGED_DAYS = 10  # a longer list of arrival days is tagged as its range
SUMMARY_TABLES = ("documents", "chunks", "entity_mentions", "local_relations", "entities", "graph_nodes", "graph_edges")


def register(subparsers) -> None:
    run = subparsers.add_parser("run", help="process what changed in the inbox, then consolidate, in one run")
    add_inbox_option(run)
    add_db_option(run)
    run.add_argument("--dagster-home", help="Dagster instance folder (env DAGSTER_HOME, default the current folder)")
    which = run.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="re-run every arrival day, not only new, changed or stale documents")
    which.add_argument("--document", action="append", metavar="KEY",
                       help="reprocess just this document (its inbox-relative path); repeatable")
    run.add_argument("--partitions-only", action="store_true",
                     help="write the documents' partitions and stop before consolidation: for several runs writing a "
                          "DuckLake at once; a later `kg run` consolidates them")
    run.add_argument("--rebuild-graph", action="store_true",
                     help="consolidate every entity, edge and node from scratch, not only those the changed documents "
                          "touch (the same rows: a check, or after editing kg tables by hand)")
    run.add_argument("--no-marts", action="store_true",
                     help="build the graph but not the dbt marts (views over it): the next `kg run` without this "
                          "option builds them")
    run.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                     help="Dagster event log level printed while running (default INFO)")
    run_report.add_options(run)
    run.set_defaults(func=run_command)


def run_command(args: argparse.Namespace) -> int:
    settings = load_settings(args)
    dagster_home = use_dagster_home(args.dagster_home)
    use_dagster_event_batching()
    import warnings

    import dagster as dg

    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    warnings.filterwarnings("ignore", category=dg.PreviewWarning)

    from kg_assets.commands.recovery import job_pools, process_tags, wait_for_pools
    from kg_assets.core.files.inbox import InboxMissing
    from kg_assets.core.planning import PlanError
    from kg_assets.defs.planner import add_days, current_plan, marts_are_current, run_spec, today_utc
    from kg_assets.extractors.factory import build_extractor
    from kg_assets.storage.warehouse import Warehouse

    started = time.perf_counter()
    inbox = Path(settings.ingest.inbox_dir)
    warehouse = Warehouse.from_settings(settings.warehouse)
    instance = dg.DagsterInstance.get()
    try:
        plan = current_plan(inbox, warehouse, instance, build_extractor(settings.extractor).version, today_utc(),
                            everything=args.all, only=args.document)
    except (InboxMissing, PlanError) as exc:
        print(f"kg run: {exc}", file=sys.stderr)
        return 2
    warehouse.record_file_signatures(plan.touched)  # e.g. after a copy or a migration: hashed once, not every run
    if args.rebuild_graph and not args.partitions_only and warehouse.exists():
        from kg_assets.storage.consolidation import clear_digests

        clear_digests(warehouse)
        plan = dataclasses.replace(plan, consolidate=True)
    print(f"kg run: {plan.inbox_documents:,} documents in {inbox} ({plan.summary()}); DAGSTER_HOME={dagster_home}",
          flush=True)
    # With --no-marts the marts' state asks for nothing: a run would only consolidate a current graph again.
    if plan.is_empty and (not warehouse.exists() or args.no_marts or marts_are_current(instance, warehouse)):
        print(f"kg run: every document is up to date and the graph too; nothing to run "
              f"({time.perf_counter() - started:.1f}s); warehouse {warehouse.path}")
        if warehouse.exists():
            print_summary(warehouse, None)
        return 0
    if args.partitions_only and not plan.days:
        print("kg run: every document is up to date; --partitions-only leaves consolidation to a later kg run")
        return 0
    spec = _narrowed(run_spec(plan, instance, warehouse), plan, args)
    add_days(instance, spec.missing_days)
    if plan.days:
        count = 0 if plan.documents is None else len(plan.documents)
        scope = "every document" if plan.documents is None else plural(count, "document")
        print(f"kg run: one run over arrival days {', '.join(plan.days)} ({scope})", flush=True)
    else:
        print("kg run: every document is up to date; consolidating only", flush=True)

    from kg_assets.commands.launch import execute_location_run
    from kg_assets.definitions import build_definitions

    # The location's own job (dbt assets included, even when this run builds no mart), so that the UI
    # re-executes the run as the same version; --no-marts and --partitions-only trade that for start-up time.
    slim = args.no_marts or args.partitions_only
    job = build_definitions(settings, marts=not slim).resolve_job_def("kg_pipeline")
    try:
        wait_for_pools(instance, job_pools(job))
    except KeyboardInterrupt:
        print("kg run: interrupted while waiting for a pool; nothing ran", file=sys.stderr)
        return run_report.INTERRUPTED
    result = execute_location_run(
        instance, job,
        tags={**spec.tags, **plan_tags(plan, args),
              **process_tags()},
        asset_selection=spec.asset_selection,
        run_config={**spec.run_config, "loggers": {"console": {"config": {"log_level": args.log_level}}}},
    )
    return _report(result, warehouse, time.perf_counter() - started, args.allow_failed_chunks)


def _narrowed(spec, plan, args: argparse.Namespace):
    """The planned run with what --partitions-only and --no-marts leave out taken out of its selection."""
    import dagster as dg

    from kg_assets.defs.partitions import CONSOLIDATION_ASSETS, PARTITIONED_ASSETS

    if args.partitions_only:
        return dataclasses.replace(spec, asset_selection=[dg.AssetKey(a) for a in PARTITIONED_ASSETS], builds_marts=False)
    if args.no_marts and spec.builds_marts:
        keep = (*PARTITIONED_ASSETS, *CONSOLIDATION_ASSETS) if plan.days else CONSOLIDATION_ASSETS
        return dataclasses.replace(spec, asset_selection=[dg.AssetKey(a) for a in keep], builds_marts=False)
    return spec


def _report(result, warehouse, seconds: float, allow_failed_chunks: bool) -> int:
    """The run's headline, summary, failed chunks and checks, and the exit code they make."""
    if not warehouse.exists():
        print(f"\nkg run FAILED in {seconds:.1f}s (run {result.run_id})")
        print("  the run wrote no warehouse", file=sys.stderr)
        return 1
    checks = result.get_asset_check_evaluations()
    failing = [c for c in checks if not c.passed]
    failed = warehouse.failed_chunks()
    print(f"\nkg run {run_report.headline(result.success, len(failing), failed.height)} in "
          f"{seconds:.1f}s (run {result.run_id}); warehouse {warehouse.path}")
    print_summary(warehouse, result.run_id)
    run_report.print_failed_chunks(failed)
    run_report.print_checks(checks)
    return run_report.exit_code(result.success, len(failing), failed.height, allow_failed_chunks)


def plan_tags(plan, args: argparse.Namespace) -> dict[str, str]:
    """What planned the run, shown with it in the UI: the command and the plan's days and document counts;
    `user` is the tag the UI's "Launched by" column shows (else "Manually launched")."""
    command = ["kg run", *(["--all"] if args.all else []), *(f"--document {key}" for key in args.document or ()),
               *(["--partitions-only"] if args.partitions_only else []), *(["--no-marts"] if args.no_marts else [])]
    days = ", ".join(plan.days) if len(plan.days) <= MAX_TAGGED_DAYS else (
        f"{plan.days[0]} .. {plan.days[-1]} ({len(plan.days):,} days)")
    return {"kg/launched_by": " ".join(command), "user": f"kg run ({_login()}@{socket.gethostname()})",
            "kg/arrival_days": days or "none (consolidation only)",
            "kg/new_documents": str(len(plan.new)), "kg/changed_documents": str(len(plan.changed)),
            "kg/deleted_documents": str(len(plan.deleted))}


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # a uid without a passwd entry (some containers)
        return str(os.getuid())


def print_summary(warehouse, run_id: str | None) -> None:
    """Rows per table, failed documents, documents without entities and, when an LLM ran, the run's spend."""
    counts = warehouse.counts()
    failed = warehouse.failed_documents()
    for table in SUMMARY_TABLES:
        print(f"  {table:<16} {counts[table]:>10,}")
    print(f"  {'failed documents':<16} {failed.height:>10,}")
    for document_id, error in failed.iter_rows():
        print(f"    {document_id}: {error}")
    run_report.print_documents_without_entities(warehouse)
    calls = warehouse.llm_spend(run_id) if run_id else {"calls": 0, "hits": 0}
    if calls["calls"] or calls["hits"]:
        print(f"  {'LLM calls':<16} {calls['calls']:>10,}  ({calls['hits']:,} cache hits; {calls['prompt']:,} prompt + "
              f"{calls['completion']:,} completion tokens; ${calls['cost']:.4f})")
        if calls.get("empty") or calls.get("degenerate"):
            print(f"  {'LLM bad answers':<16} {calls['empty'] + calls['degenerate']:>10,}  ({calls['empty']:,} empty, "
                  f"{calls['degenerate']:,} degenerate: loops or echoes of the prompt; see docs/llm.md)")
            run_report.print_bad_answers(warehouse.bad_llm_answers(run_id))

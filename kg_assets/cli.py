"""The `kg` command: run the pipeline on an inbox, query the warehouse."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from kg_assets.commands import search as search_commands


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


def _documents_needing_work(inbox: Path, keys: list[str], added: set[str]) -> list[str]:
    """New documents, documents whose bytes changed, and documents with stale or failed extractions."""
    from kg_assets.core.chunking import CHUNKER_VERSION
    from kg_assets.core.documents import content_hash
    from kg_assets.storage.warehouse import Warehouse

    warehouse = Warehouse()
    if not Path(warehouse.path).exists():
        return keys
    stored = dict(warehouse.query(
        "SELECT document_id, content_hash FROM kg.documents WHERE valid_until IS NULL", read_only=True).iter_rows())
    changed = set(added)
    for key in keys:
        try:
            if stored.get(key) != content_hash((inbox / key).read_bytes()):
                changed.add(key)
        except OSError:
            changed.add(key)  # the documents asset records why it cannot be read
    stale = warehouse.stale_documents(_resources().extractor.get().version, CHUNKER_VERSION)
    return sorted(changed | set(stale))


def cmd_run(args: argparse.Namespace) -> int:
    _configure_env(args)
    # Ranged runs write one planned event per asset instead of one per document, and storages that can
    # (PostgreSQL) write materialization events in batches: Dagster's own bookkeeping dominates otherwise.
    os.environ.setdefault("DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS", "true")
    os.environ.setdefault("DAGSTER_EVENT_BATCH_SIZE", "1000")
    import warnings

    import dagster as dg

    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    warnings.filterwarnings("ignore", category=dg.PreviewWarning)

    from kg_assets.core.documents import scan_inbox
    from kg_assets.definitions import defs
    from kg_assets.defs.ingest import inbox_changes
    from kg_assets.defs.partitions import documents_partitions, partition_ranges, range_tags
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

    todo = ordered if args.all else _documents_needing_work(inbox, ordered, set(changes.added))
    span = partition_ranges(todo, ordered, max_ranges=1)
    if span:
        print(f"kg run: {len(todo):,} documents to (re)process in one run over partitions "
              f"{span[0][0]} .. {span[0][1]}", flush=True)
    else:
        print("kg run: every document is up to date; consolidating only", flush=True)
    job = defs.resolve_job_def("kg_pipeline" if span else "consolidation")
    result = job.execute_in_process(
        instance=instance,
        tags=range_tags(*span[0]) if span else {},
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
    calls = warehouse.query(
        """SELECT count(*) FILTER (WHERE status <> 'cache_hit') AS calls, count(*) FILTER (WHERE status = 'cache_hit') AS hits,
                  coalesce(sum(prompt_tokens) FILTER (WHERE status <> 'cache_hit'), 0) AS prompt,
                  coalesce(sum(completion_tokens) FILTER (WHERE status <> 'cache_hit'), 0) AS completion,
                  coalesce(sum(cost_usd), 0) AS cost FROM kg.llm_calls WHERE run_id = $run""",
        {"run": result.run_id},
    ).row(0, named=True)
    if calls["calls"] or calls["hits"]:
        print(f"  {'LLM calls':<16} {calls['calls']:>10,}  ({calls['hits']:,} cache hits; {calls['prompt']:,} prompt + "
              f"{calls['completion']:,} completion tokens; ${calls['cost']:.4f})")
    failing = [c for c in checks if not c.passed]
    print(f"  checks           {len(checks) - len(failing)}/{len(checks)} passed")
    for check in failing:
        print(f"    FAILED {check.asset_key.to_user_string()}:{check.check_name}")
    return 0 if result.success and not failing else 1


def _resources():
    """The code location's resources, initialized as in a run (EnvVar secrets resolved)."""
    import dagster as dg

    from kg_assets.defs.resources import default_resources

    with dg.build_resources(default_resources()) as resources:
        return resources


def _read_inbox(inbox: Path):
    """Documents of an inbox as a frame, read and parsed exactly as the documents asset does."""
    import polars as pl

    from kg_assets.core import schemas
    from kg_assets.core.documents import read_document, scan_inbox

    rows = [read_document(inbox / key, key) for key in scan_inbox(inbox)]
    return schemas.conform(pl.DataFrame(rows, infer_schema_length=None), schemas.DOCUMENTS) if rows else schemas.empty(schemas.DOCUMENTS)


def cmd_estimate(args: argparse.Namespace) -> int:
    """Dry run: what extracting the inbox with the configured LLM would send, before anything is spent."""
    _configure_env(args)
    import polars as pl

    from kg_assets.core.chunking import chunk_documents
    from kg_assets.core.prompts import build_gleaning_messages, count_message_tokens
    from kg_assets.llm.cache import LLMCache

    resources = _resources()
    extractor = resources.extractor.model_copy(update={"engine": "llm", **({"model": args.model} if args.model else {})})
    engine = extractor.get()
    s = engine.settings
    prompt_price = args.prompt_price if args.prompt_price is not None else s.prompt_price_per_1m
    completion_price = args.completion_price if args.completion_price is not None else s.completion_price_per_1m
    docs = _read_inbox(Path(os.environ.get("KG_INBOX", "data/inbox")))
    chunks = chunk_documents(docs, resources.settings.chunking()).join(
        docs.select("document_id", "headings"), on="document_id", how="left")
    rows = list(chunks.iter_rows(named=True))
    first = [engine.first_pass_messages(r) for r in rows]
    first_tokens = [count_message_tokens(m) for m in first]
    # A gleaning request repeats the text and lists what was found (about 12 entities per chunk assumed).
    found = [("ENTITY NAME", "TYPE")] * 12
    glean_tokens = [count_message_tokens(build_gleaning_messages(
        r["text"], fmt=s.output_format, found_entities=found, entity_types=s.entity_types,
        section_path=r["section_path"], headings=r["headings"] or ())) for r in rows]
    cached: set[str] = set()
    if Path(s.cache_path).exists():
        with LLMCache(s.cache_path) as cache:
            cached = cache.contains(engine.first_pass_hash(r) for r in rows)
    todo = [i for i, r in enumerate(rows) if engine.first_pass_hash(r) not in cached]
    # Low: one call per chunk (gleaning "auto" when first answers are complete); high: every pass taken.
    calls = (len(todo), len(todo) * (1 + s.max_gleanings))
    if s.gleaning == "always":
        calls = (calls[1], calls[1])
    first = sum(first_tokens[i] for i in todo)
    glean = sum(s.max_gleanings * glean_tokens[i] for i in todo)
    prompt = (first if calls[0] == len(todo) else first + glean, first + glean)
    chunk_tokens = chunks["token_count"].to_list()
    completion_first = int(sum(args.completion_ratio * chunk_tokens[i] for i in todo))
    completion = (completion_first if calls[0] == len(todo) else int(completion_first * (1 + 0.3 * s.max_gleanings)),
                  int(completion_first * (1 + 0.3 * s.max_gleanings)))
    cost = tuple((p * prompt_price + c * completion_price) / 1e6 for p, c in zip(prompt, completion))
    failed = docs.filter(pl.col("status") == "error").height
    print(f"kg estimate: {s.model} ({s.output_format} format, gleaning {s.gleaning}, {s.max_gleanings} pass(es) at most)")
    for label, value in [
        ("documents", f"{docs.height:,} ({failed:,} unreadable)"),
        ("chunks", f"{len(rows):,} ({len(rows) - len(todo):,} already cached)"),
        ("LLM calls", f"{calls[0]:,} to {calls[1]:,}"),
        ("prompt tokens", f"{prompt[0]:,} to {prompt[1]:,}"),
        ("completion tokens", f"~{completion[0]:,} to {completion[1]:,} (estimated at {args.completion_ratio:.2f} x chunk tokens)"),
        ("prompt tokens / chunk", f"{prompt[0] / len(todo):,.0f} to {prompt[1] / len(todo):,.0f}" if todo else "0"),
        ("estimated cost", f"${cost[0]:,.4f} to ${cost[1]:,.4f} at ${prompt_price}/1M prompt, ${completion_price}/1M completion tokens"),
    ]:
        print(f"  {label:<22} {value}")
    return 0


def cmd_eval_extraction(args: argparse.Namespace) -> int:
    """Extraction quality on annotated documents (shared/eval format): last line is one JSON object."""
    _configure_env(args)
    import json

    import polars as pl

    from kg_assets.core.chunking import chunk_documents
    from kg_assets.core.evaluation import score_document, summarize
    from kg_assets.core.linking import NameLinker, apply_redirects
    started = time.perf_counter()
    gold = [json.loads(line) for line in Path(args.docs).read_text().splitlines() if line.strip()]
    gold = gold[: args.limit] if args.limit else gold
    resources = _resources()
    extractor_resource = resources.extractor
    engine = extractor_resource.get(run_id=f"eval-{int(time.time())}")
    docs = pl.DataFrame({
        "document_id": [str(d["doc_id"]) for d in gold], "text": [d["text"] for d in gold], "status": ["ok"] * len(gold),
        "headings": [[] for _ in gold],
    })
    chunks = chunk_documents(docs, resources.settings.chunking()).join(docs.select("document_id", "headings"), on="document_id")
    print(f"kg eval extraction: {len(gold)} documents, {chunks.height} chunks, {extractor_resource.describe(engine)}", file=sys.stderr)
    result = engine.extract(chunks)
    linker = NameLinker()
    counts = []
    for doc in gold:
        mentions = result.mentions.filter(pl.col("document_id") == str(doc["doc_id"]))
        redirects = linker.link(mentions)
        linked = apply_redirects(mentions, redirects, ["entity_id"])
        entities = linked.group_by("entity_id").agg(pl.col("normalized_name").first(), pl.col("entity_type").first())
        relations = apply_redirects(result.relations.filter(pl.col("document_id") == str(doc["doc_id"])), redirects,
                                    ["source_id", "target_id"])
        counts.append(score_document(doc, entities, relations))
    calls = result.calls.filter(pl.col("status") != "cache_hit")
    summary = {
        **summarize(counts),
        "documents": len(gold),
        "extractor": engine.name,
        "extractor_version": engine.version,
        "llm_calls": calls.height,
        "cache_hits": result.calls.height - calls.height,
        "prompt_tokens": int(calls["prompt_tokens"].sum() or 0),
        "completion_tokens": int(calls["completion_tokens"].sum() or 0),
        "seconds": round(time.perf_counter() - started, 2),
    }
    print(json.dumps(summary))
    return 0


def cmd_eval_linking(args: argparse.Namespace) -> int:
    """Linking quality on annotated mentions: writes one cluster per mention, last line is one JSON object."""
    import json

    from kg_assets.core.link_scoring import link_eval_mentions, read_mentions, redocred_mentions, score_linking
    from kg_assets.core.linking import NameLinker

    first = json.loads(Path(args.mentions).open().readline())
    # Documents with gold entities (Re-DocRED format) give within-document clusters: link per document.
    per_document = args.per_document or "entities" in first
    mentions = redocred_mentions(args.mentions) if "entities" in first else read_mentions(args.mentions)
    linker = NameLinker()
    scores = score_linking(mentions, linker, per_document=per_document)
    if args.out:
        clusters = link_eval_mentions(mentions, linker, per_document=per_document)
        with open(args.out, "w") as out:
            for mention_id, cluster in clusters.select("mention_id", "cluster").iter_rows():
                out.write(json.dumps({"mention_id": mention_id, "cluster": cluster}) + "\n")
    print(json.dumps(scores))
    return 0


def cmd_link(args: argparse.Namespace) -> int:
    """Manual linking decisions, applied by the next consolidation (linked_entities)."""
    _configure_env(args)
    import polars as pl

    from kg_assets.storage.warehouse import Warehouse

    warehouse = Warehouse()
    if args.action == "list":
        with pl.Config(tbl_rows=-1, fmt_str_lengths=60):
            print(warehouse.query("SELECT * FROM kg.link_overrides ORDER BY created_at"))
        return 0
    known = warehouse.query(
        "SELECT DISTINCT entity_id FROM kg.entity_mentions WHERE entity_id IN ($a, $b)", {"a": args.from_id, "b": args.to_id})
    if known.height < 2 and args.action != "remove":
        print(f"kg link: both ids must be extracted entity ids (kg.entity_mentions) in {warehouse.path}", file=sys.stderr)
        return 2
    warehouse.set_link_override(args.from_id, args.to_id, None if args.action == "remove" else args.action, args.note)
    print(f"kg link: {args.action} {args.from_id} {args.to_id}; takes effect on the next consolidation "
          "(kg run, or materialize linked_entities)")
    return 0


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
    run.add_argument("--all", action="store_true", help="re-run every document partition, not only new, changed or stale ones")
    run.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                     help="Dagster event log level printed while running (default INFO)")
    run.set_defaults(func=cmd_run)

    sql = sub.add_parser("sql", help="run a read-only SQL query on the warehouse")
    sql.add_argument("query")
    sql.add_argument("--db", help="DuckDB file (env KG_DUCKDB_PATH)")
    sql.add_argument("--limit", type=int, default=50, help="rows to print")
    sql.set_defaults(func=cmd_sql)

    estimate = sub.add_parser("estimate", help="dry-run estimate of LLM calls, tokens and cost for the inbox")
    estimate.add_argument("--inbox", help="folder of documents (env KG_INBOX, default data/inbox)")
    estimate.add_argument("--model", help="model to price (env KG_LLM_MODEL)")
    estimate.add_argument("--prompt-price", type=float, help="USD per 1M prompt tokens (env KG_LLM_PROMPT_PRICE)")
    estimate.add_argument("--completion-price", type=float, help="USD per 1M completion tokens (env KG_LLM_COMPLETION_PRICE)")
    estimate.add_argument("--completion-ratio", type=float, default=0.5,
                          help="expected completion tokens per chunk token on the first pass (default 0.5)")
    estimate.add_argument("--db", help="DuckDB file, to find the LLM cache beside it (env KG_DUCKDB_PATH)")
    estimate.set_defaults(func=cmd_estimate)

    evaluate = sub.add_parser("eval", help="evaluate extraction or linking on annotated data")
    eval_sub = evaluate.add_subparsers(dest="what", required=True)
    extraction = eval_sub.add_parser("extraction", help="entity and relation P/R/F1 on DOCS.jsonl")
    extraction.add_argument("docs", help="documents with gold entities and relations (shared/eval format)")
    extraction.add_argument("--limit", type=int, help="only the first N documents")
    extraction.set_defaults(func=cmd_eval_extraction)

    linking = eval_sub.add_parser("linking", help="pairwise and B-cubed P/R/F1 of entity linking on MENTIONS.jsonl")
    linking.add_argument("mentions", help="mentions with gold clusters, or documents with gold entities (shared/eval formats)")
    linking.add_argument("--out", help="write one {mention_id, cluster} line per mention here")
    linking.add_argument("--per-document", action="store_true",
                         help="link each document on its own (for gold that only clusters within documents)")
    linking.set_defaults(func=cmd_eval_linking)

    link = sub.add_parser("link", help="override entity linking: split a merge, force a merge, list, remove")
    link.add_argument("action", choices=["split", "merge", "remove", "list"])
    link.add_argument("from_id", nargs="?")
    link.add_argument("to_id", nargs="?")
    link.add_argument("--note", help="why (kept with the override)")
    link.add_argument("--db", help="DuckDB file (env KG_DUCKDB_PATH)")
    link.set_defaults(func=cmd_link)

    search_commands.register(sub)

    args = parser.parse_args(argv)
    if getattr(args, "func", None) is cmd_link and args.action != "list" and not (args.from_id and args.to_id):
        parser.error(f"kg link {args.action} needs FROM_ID and TO_ID")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

"""extraction: one multi_asset per arrival-day partition writing entity_mentions, local_relations,
attribute_observations, chunk_extractions and llm_calls, each an asset of its own.

Chunks already extracted successfully by the same extractor version are reused, so a rerun redoes
exactly the chunks that failed, changed or were never extracted; LLM answers are cached besides, so a
redone chunk whose requests already succeeded costs nothing. No DuckDB connection is open while the
extractor works: read, extract, then write everything in one transaction.
"""

from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass

import dagster as dg
import polars as pl

from kg_assets.core import schemas
from kg_assets.core.batches import batches_by_size
from kg_assets.core.isolation import DocumentFailure
from kg_assets.defs.llm_calls import export_calls, spend_per_day
from kg_assets.defs.partitions import RunScope, add_partition_metadata, documents_in_scope, partitioned, per_day_counts
from kg_assets.defs.pools import Pools
from kg_assets.defs.previews import sample_rows
from kg_assets.defs.resources import ExtractorResource, WarehouseResource
from kg_assets.defs.tables import table_spec
from kg_assets.extractors.base import ExtractionResult
from kg_assets.extractors.workers import ExtractionWorkers, worker_count

PARTITION_TABLES = ("entity_mentions", "local_relations", "attribute_observations", "chunk_extractions")


@dataclass
class _Batch:
    """One batch of documents in the step: its earlier chunk statuses, the chunks kept from earlier runs, and the
    extraction of the rest (a future: it may be running in a worker process)."""
    ids: list[str]
    label: str
    previous: pl.DataFrame
    reusable: pl.DataFrame
    extracted: Future


def _start_batch(context: dg.AssetExecutionContext, wh, extractor: ExtractorResource, engine, scope: RunScope,
                 workers: ExtractionWorkers, ids: list[str], label: str) -> _Batch:
    """Read the documents `ids`' chunks and what earlier runs extracted of them, and hand the chunks to extract to
    the workers."""
    chunks = wh.chunks_for_extraction(ids)
    # Only the chunks' earlier statuses are read: the rows of a reused chunk stay where they are (replace_partitions
    # keeps them), so a batch's reads and writes do not grow with what earlier runs extracted.
    previous = wh.read_partitions("chunk_extractions", ids)
    if engine is None:
        # KG_ENTITY_EXTRACTION_ENABLED=false (seed 002): no chunk goes to the extractor; what earlier runs
        # extracted from chunks that still exist stays, so turning it back on extracts exactly the rest.
        reusable = previous.join(chunks.select("chunk_id"), on="chunk_id", how="semi").select("chunk_id")
        todo = chunks.clear()
        context.log.info(f"entity extraction is off (KG_ENTITY_EXTRACTION_ENABLED=false): {chunks.height:,} chunks "
                         f"not extracted, {reusable.height:,} kept from earlier runs{label}")
    else:
        reusable = previous.filter(
            (pl.col("status") == "ok") & (pl.col("extractor_version") == engine.version) & (not scope.redo_extraction)
        ).join(chunks.select("chunk_id"), on="chunk_id", how="semi").select("chunk_id")
        todo = chunks.join(reusable, on="chunk_id", how="anti")
        context.log.info(
            f"extracting {todo.height:,} of {chunks.height:,} chunks with the {extractor.describe(engine)}; "
            f"{reusable.height:,} reused{label}"
        )
    return _Batch(ids, label, previous, reusable, workers.extract(todo))


def _finish_batch(context: dg.AssetExecutionContext, wh, workers: ExtractionWorkers,
                  batch: _Batch) -> tuple[pl.DataFrame, pl.DataFrame, list[DocumentFailure]]:
    """Write a batch's extraction (one transaction); returns its chunk_extractions rows with a `reused` flag, the
    LLM calls made and the documents that failed. Only the batches in flight are in memory (`ExtractionWorkers`)."""
    result, failures = workers.result(batch.extracted, batch.label)
    if batch.label:  # progress, batch by batch: with workers, the "extracting" lines come when batches are handed out
        failed = result.chunk_status.filter(pl.col("status") != "ok").height
        context.log.info(f"written{batch.label}: {result.mentions.height:,} mentions, {result.relations.height:,} "
                         f"relations{f', {failed:,} chunks failed' if failed else ''}")
    new = {
        "entity_mentions": result.mentions,
        "local_relations": result.relations,
        "attribute_observations": result.attributes,
        "chunk_extractions": result.chunk_status,
    }
    wh.replace_partitions(new, batch.ids, keep_chunk_ids=batch.reusable["chunk_id"])
    status = pl.concat([batch.previous.join(batch.reusable, on="chunk_id", how="semi"), result.chunk_status]).with_columns(
        reused=pl.col("chunk_id").is_in(batch.reusable["chunk_id"].implode()))
    return status, result.calls, failures


def extraction(context: dg.AssetExecutionContext, warehouse: WarehouseResource, extractor: ExtractorResource,
               scope: RunScope):
    wh = warehouse.get()
    enabled = extractor.entity_extraction_enabled
    engine = extractor.build_extractor(run_id=context.run_id, progress=context.log.info) if enabled else None
    days = context.partition_keys
    in_scope = documents_in_scope(wh, days, scope)
    # Batches of whole documents, each written as it finishes: memory holds one batch's chunks and rows, and a
    # run stopped midway keeps what it wrote (the next run reuses those chunks like any extracted chunk).
    counts = wh.chunk_counts(in_scope["document_id"].to_list())
    batches = batches_by_size(counts.iter_rows(), extractor.extraction_batch_chunks)
    statuses, calls, failures = [], [], []
    processes = worker_count(engine, extractor.extraction_processes, len(batches))
    if processes:
        context.log.info(f"{len(batches)} batches in {processes} worker processes (KG_EXTRACTION_PROCESSES)")

    def finish(batch: _Batch) -> None:
        status, batch_calls, batch_failures = _finish_batch(context, wh, workers, batch)
        statuses.append(status)
        calls.append(batch_calls)
        failures.extend(batch_failures)

    # Batches are written in order, each as it finishes; while workers extract, the step reads the next batch
    # and writes the last one.
    with ExtractionWorkers(engine, processes) as workers:
        started: deque[_Batch] = deque()
        for number, ids in enumerate(batches, 1):
            label = f" (batch {number} of {len(batches)}, {len(ids):,} documents)" if len(batches) > 1 else ""
            started.append(_start_batch(context, wh, extractor, engine, scope, workers, ids, label))
            if len(started) >= workers.in_flight:
                finish(started.popleft())
        while started:
            finish(started.popleft())
    if engine is not None and extractor.uses_llm:
        export_calls(wh, engine.settings.cache_path)
    for failure in failures[:20]:
        context.log.warning(f"document {failure.document_id} failed in step {failure.step}: {failure.error}")
    status = (pl.concat(statuses, how="vertical_relaxed") if statuses
              else schemas.empty(schemas.CHUNK_EXTRACTIONS).with_columns(reused=pl.lit(False)))
    calls = pl.concat(calls, how="vertical_relaxed") if calls else ExtractionResult.empty().calls

    failed = status.filter(pl.col("status") != "ok")
    for chunk_id, error in failed.select("chunk_id", "error").head(20).iter_rows():
        context.log.warning(f"chunk {chunk_id}: {error}")
    engine_metadata = {"extractor": engine.name, "extractor_version": engine.version, "engine": extractor.describe(engine),
                       "failed_documents": len(failures), "batches": len(batches),
                       "worker_processes": processes} if engine is not None else {
        "extractor": "off", "extractor_version": "", "failed_documents": 0,
        "engine": "entity extraction off (KG_ENTITY_EXTRACTION_ENABLED=false)"}
    if hasattr(engine, "example_copies_dropped"):  # records that copied the prompt's example (LLM engine)
        engine_metadata["example_copies_dropped"] = engine.example_copies_dropped
    status = status.join(in_scope, on="document_id")
    per_day = per_day_counts(days, status, chunks_extracted=(~pl.col("reused")).sum(), chunks_reused=pl.col("reused").sum(),
                             chunks_failed=(pl.col("status") != "ok").sum(),
                             chunks_without_entities=(pl.col("mention_count") == 0).sum())
    # A document with text whose chunks all came back without error and without a mention: a warning.
    empty = (status.group_by("document_id", "arrival_day")
             .agg(mentions=pl.col("mention_count").sum(), ok=(pl.col("status") == "ok").all())
             .filter((pl.col("mentions") == 0) & pl.col("ok")).sort("document_id"))
    for document_id in empty["document_id"].head(20):
        context.log.warning(f"document {document_id}: it has text but no entity was extracted from it")
    empty_per_day = per_day_counts(days, empty, documents_without_entities=pl.len())
    per_day = {day: {**per_day[day], **empty_per_day[day]} for day in days}
    spend = spend_per_day(days, calls.join(in_scope, on="document_id"))
    ids = in_scope["document_id"].to_list()
    rows = {t: per_day_counts(days, wh.rows_per_document(t, ids).join(in_scope, on="document_id"), rows=pl.col("rows").sum())
            for t in PARTITION_TABLES}
    for table in PARTITION_TABLES:
        add_partition_metadata(context, {day: {"rows_written": rows[table][day]["rows"], **per_day[day], **spend[day]}
                                         for day in days}, asset_key=table)
    add_partition_metadata(context, {day: spend[day] for day in days}, asset_key="llm_calls")
    samples = {"entity_mentions": sample_rows(wh, "entity_mentions", ["name", "entity_type", "document_id", "description"]),
               "local_relations": sample_rows(wh, "local_relations", ["source_name", "relation_type", "target_name", "document_id"])}
    for table in (*PARTITION_TABLES, "llm_calls"):
        sample = {"sample": samples[table]} if table in samples else {}
        if table == "entity_mentions":
            sample["no_entity_documents"] = dg.MetadataValue.json(empty["document_id"].head(100).to_list())
        yield dg.MaterializeResult(asset_key=table, metadata={**engine_metadata, **sample,
                                                              "dagster/row_count": wh.row_count(table)})


def assets(pools: Pools, extractor_version: str) -> list[dg.AssetsDefinition]:
    """The extraction multi_asset. Its step calls the extractor, so it takes the `llm` pool, which caps LLM
    steps across concurrent runs; its DuckDB writes wait for the file lock. The extractor's version is its
    code version: rows made by another extractor or version show as stale partitions in the UI."""
    def spec(name: str, description: str) -> dg.AssetSpec:
        return table_spec(name, group="extraction", deps=["chunks"], description=description,
                          code_version=extractor_version)

    return [dg.multi_asset(
        name="extraction",
        specs=[
            spec("entity_mentions", "Typed entity mentions per chunk, with normalized names and stable ids."),
            spec("local_relations", "Relations between entities mentioned in the same chunk."),
            spec("attribute_observations", "Facts about an entity seen in one chunk (employer, role, headquarters "
                 "...): the input of the attribute timeline."),
            spec("chunk_extractions", "One row per chunk: extraction status, error, counts and extractor version; "
                 "what makes a rerun redo exactly the chunks that failed or were made by another version."),
            spec("llm_calls", "Every LLM request and cache hit: tokens, latency, cost, status (empty offline)."),
        ],
        **partitioned(pools.llm),
    )(extraction)]

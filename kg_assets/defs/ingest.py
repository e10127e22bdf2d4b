"""documents and chunks, partitioned by arrival day; per-document status stays in the rows."""

from pathlib import Path

import dagster as dg
import polars as pl

from kg_assets.core import schemas
from kg_assets.core.chunking import CHUNKER_VERSION, chunk_document, chunks_frame, documents_to_chunk
from kg_assets.core.documents import read_document
from kg_assets.core.files.inbox import scan_present_inbox
from kg_assets.core.isolation import isolate
from kg_assets.core.planning import documents_to_read
from kg_assets.defs.partitions import (RunScope, add_partition_metadata, checked_arrival_days, documents_in_scope, partitioned,
                                     per_day_counts, record_failures)
from kg_assets.defs.pools import Pools
from kg_assets.defs.previews import sample_rows
from kg_assets.defs.resources import ExtractorResource, IngestResource, WarehouseResource
from kg_assets.defs.tables import markdown_table, table_asset
from kg_assets.storage.facts import FactStore


def documents(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: IngestResource, scope: RunScope,
    extractor: ExtractorResource,
) -> dg.MaterializeResult:
    """One row per inbox file: extracted text, title, headings, date, content hash, arrival day, or an error
    status. Files gone from the inbox are retired here (their rows leave every per-document table)."""
    inbox = Path(settings.inbox_dir)
    listing = scan_present_inbox(inbox)  # a missing inbox fails the step before anything is retired
    wh = warehouse.get()
    wh.ensure_schema()  # the first step of a run reads before it writes: never a lake half made by another run
    days = checked_arrival_days(context.partition_keys)
    work = documents_to_read(wh.document_states() if wh.exists() else None, listing, days, scope.documents, scope.take_new)
    for key in work.ignored:
        context.log.warning(f"document {key} arrived on a day outside this run ({days[0]} .. {days[-1]}); not processed")
    forgotten = FactStore(wh).forgotten_user_ids()  # chat messages of these users are left out
    rows = []
    for i, (key, day) in enumerate(work.read.items(), start=1):
        rows.append({**read_document(inbox, key, settings.max_document_bytes, forgotten, extractor.describes_images),
                     "arrival_day": day,
                     "file_signature": listing.get(key)})
        if i % 1000 == 0:
            context.log.info(f"read {i:,}/{len(work.read):,} documents")
    frame = schemas.conform(pl.DataFrame(rows, infer_schema_length=None), schemas.DOCUMENTS) if rows else schemas.empty(schemas.DOCUMENTS)
    changed = wh.upsert_documents(frame)
    retired = wh.retire_documents(work.retire)
    if retired:
        context.log.info(f"retired {len(retired):,} documents whose files are gone: {retired[:10]}")
    errors = frame.filter(pl.col("status") == "error")
    for document_id, error in errors.select("document_id", "error").head(50).iter_rows():
        context.log.warning(f"document {document_id}: {error}")
    day_of = pl.DataFrame({"document_id": list(work.read), "arrival_day": list(work.read.values())},
                          schema={"document_id": pl.String, "arrival_day": pl.String})
    retired_days = wh.document_days(retired) if retired else day_of.clear()
    per_day = per_day_counts(days, frame.with_columns(changed=pl.col("document_id").is_in(changed["document_id"].implode())),
                             documents_read=pl.len(), changed=pl.col("changed").sum(), failed=(pl.col("status") == "error").sum(),
                             bytes=pl.col("byte_size").fill_null(0).sum())
    for day, count in per_day_counts(days, retired_days, retired=pl.len()).items():
        per_day[day].update(count)
    add_partition_metadata(context, per_day)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": wh.row_count("documents"),
            "failed_documents": (failures := wh.failed_documents()).height,
            "failures": markdown_table(failures.head(50)),  # every current failure, not only this run's
            "sample": sample_rows(wh, "documents", ["document_id", "source_type", "title", "arrival_day", "status"]),
        }
    )


def chunks(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: IngestResource, scope: RunScope
) -> dg.MaterializeResult:
    """Token-aware chunks (offline o200k tokenizer) with stable ids, character offsets and section paths."""
    wh = warehouse.get()
    days = context.partition_keys
    in_scope = documents_in_scope(wh, days, scope)
    ids = in_scope["document_id"].to_list()
    docs = wh.read_partitions("documents", ids)
    config = settings.chunking()
    chunked, failures = isolate("chunks", documents_to_chunk(docs), lambda doc: chunk_document(*doc, config))
    frame = chunks_frame([row for rows in chunked.values() for row in rows])
    wh.replace_partitions({"chunks": frame}, ids)  # a failed document keeps no chunks
    failed = record_failures(context, wh, failures)
    context.log.info(f"{frame.height:,} chunks from {len(chunked):,} documents; {len(failures):,} failed")
    add_partition_metadata(context, per_day_counts(
        days, frame.join(in_scope, on="document_id"),
        chunks=pl.len(), documents=pl.col("document_id").n_unique(), tokens=pl.col("token_count").sum()))
    return dg.MaterializeResult(
        metadata={"dagster/row_count": wh.row_count("chunks"), "chunker_version": CHUNKER_VERSION, **failed,
                  "sample": sample_rows(wh, "chunks", ["document_id", "chunk_index", "section_path", "token_count", "text"])}
    )


def assets(pools: Pools) -> list[dg.AssetsDefinition]:
    """documents and chunks, their steps in the pools of the warehouse's backend."""
    return [
        table_asset("documents", group="ingest", **partitioned(pools.partitions))(documents),
        table_asset("chunks", group="ingest", deps=["documents"], code_version=CHUNKER_VERSION,
                    **partitioned(pools.partitions))(chunks),
    ]

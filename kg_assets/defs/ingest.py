"""documents and chunks, partitioned by arrival day; per-document status stays in the rows."""

from pathlib import Path

import dagster as dg
import polars as pl

from kg_assets.core import schemas
from kg_assets.core.chunking import CHUNKER_VERSION, chunk_document, chunks_frame, documents_to_chunk
from kg_assets.core.documents import read_document
from kg_assets.core.batches import batches_by_size
from kg_assets.core.files.inbox import scan_present_inbox, signature_bytes
from kg_assets.core.isolation import DocumentFailure, isolate
from kg_assets.core.planning import documents_to_read
from kg_assets.defs.partitions import (RunScope, add_partition_metadata, checked_arrival_days, documents_in_scope, partitioned,
                                     failure_metadata, per_day_counts, record_failures)
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
    # Batches of whole files, each written as it finishes: memory holds one batch's texts, whatever the size of
    # an arrival day, and a run stopped midway keeps the documents it wrote (they are not chunked yet, so the
    # next run's plan takes them up again).
    batches = batches_by_size(((key, signature_bytes(listing.get(key))) for key in work.read),
                              settings.ingest_batch_bytes)
    read: list[pl.DataFrame] = []  # per document: what the metadata counts, without its text
    done = 0
    for number, keys in enumerate(batches, 1):
        rows = []
        for key in keys:
            rows.append({**read_document(inbox, key, settings.max_document_bytes, forgotten, extractor.describes_images),
                         "arrival_day": work.read[key], "file_signature": listing.get(key)})
            done += 1
            if done % 1000 == 0:
                context.log.info(f"read {done:,}/{len(work.read):,} documents")
        batch = schemas.conform(pl.DataFrame(rows, infer_schema_length=None), schemas.DOCUMENTS)
        changed = wh.upsert_documents(batch)
        if len(batches) > 1:
            context.log.info(f"written (batch {number} of {len(batches)}): {batch.height:,} documents, "
                             f"{changed.height:,} new or changed")
        read.append(batch.select("document_id", "arrival_day", "status", "error", "byte_size", changed=pl.col(
            "document_id").is_in(changed["document_id"].implode())))
    frame = pl.concat(read) if read else schemas.empty(schemas.DOCUMENTS).select(
        "document_id", "arrival_day", "status", "error", "byte_size", changed=pl.lit(False))
    retired = wh.retire_documents(work.retire)
    if retired:
        context.log.info(f"retired {len(retired):,} documents whose files are gone: {retired[:10]}")
    errors = frame.filter(pl.col("status") == "error")
    for document_id, error in errors.select("document_id", "error").head(50).iter_rows():
        context.log.warning(f"document {document_id}: {error}")
    retired_days = wh.document_days(retired) if retired else frame.select("document_id", "arrival_day").clear()
    per_day = per_day_counts(days, frame, documents_read=pl.len(), changed=pl.col("changed").sum(),
                             failed=(pl.col("status") == "error").sum(), bytes=pl.col("byte_size").fill_null(0).sum())
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
    # Batches of whole documents as in the documents step, each written as it finishes: a run stopped midway
    # keeps the documents it chunked, and the next run's plan takes up the others (they have no chunks).
    signatures = dict(wh.document_states(days).select("document_id", "file_signature").iter_rows())
    batches = batches_by_size(((d, signature_bytes(signatures.get(d))) for d in in_scope["document_id"]),
                              settings.ingest_batch_bytes)
    config = settings.chunking()
    counted: list[pl.DataFrame] = []  # per document: chunks and tokens, for the metadata
    failures: list[DocumentFailure] = []
    chunked_documents = 0
    for number, ids in enumerate(batches, 1):
        docs = wh.read_partitions("documents", ids)
        chunked, batch_failures = isolate("chunks", documents_to_chunk(docs), lambda doc: chunk_document(*doc, config))
        frame = chunks_frame([row for rows in chunked.values() for row in rows])
        wh.replace_partitions({"chunks": frame}, ids)  # a failed document keeps no chunks
        record_failures(context, wh, batch_failures)
        failures += batch_failures
        chunked_documents += len(chunked)
        counted.append(frame.group_by("document_id").agg(chunks=pl.len(), tokens=pl.col("token_count").sum()))
        if len(batches) > 1:
            context.log.info(f"written (batch {number} of {len(batches)}): {frame.height:,} chunks from "
                             f"{len(chunked):,} documents; {len(batch_failures):,} failed")
    per_document = pl.concat(counted) if counted else pl.DataFrame(
        schema={"document_id": pl.String, "chunks": pl.UInt32, "tokens": pl.Int64})
    context.log.info(f"{per_document['chunks'].sum():,} chunks from {chunked_documents:,} documents; "
                     f"{len(failures):,} failed")
    add_partition_metadata(context, per_day_counts(
        days, per_document.join(in_scope, on="document_id"),
        chunks=pl.col("chunks").sum(), documents=pl.len(), tokens=pl.col("tokens").sum()))
    return dg.MaterializeResult(
        metadata={"dagster/row_count": wh.row_count("chunks"), "chunker_version": CHUNKER_VERSION,
                  **failure_metadata(failures),
                  "sample": sample_rows(wh, "chunks", ["document_id", "chunk_index", "section_path", "token_count", "text"])}
    )


def assets(pools: Pools) -> list[dg.AssetsDefinition]:
    """documents and chunks, their steps in the pools of the warehouse's backend."""
    return [
        table_asset("documents", group="ingest", **partitioned(pools.partitions))(documents),
        table_asset("chunks", group="ingest", deps=["documents"], code_version=CHUNKER_VERSION,
                    **partitioned(pools.partitions))(chunks),
    ]

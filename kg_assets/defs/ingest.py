"""documents and chunks (partitioned by document), and the inbox sensor that drives them."""


import json
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import polars as pl

from kg_assets.core import schemas
from kg_assets.core.chunking import CHUNKER_VERSION, chunk_documents
from kg_assets.core.documents import read_document
from kg_assets.core.files.inbox import scan_inbox
from kg_assets.defs.partitions import (
    CONSOLIDATION_ASSETS,
    PARTITIONED_ASSETS,
    documents_partitions,
    partition_ranges,
    range_tags,
    single_run,
)
from kg_assets.defs.resources import IngestResource, WarehouseResource
from kg_assets.defs.tables import markdown_table, table_metadata
from kg_assets.storage.facts import FactStore

eager = dg.AutomationCondition.eager()


@dg.asset(
    partitions_def=documents_partitions,
    backfill_policy=single_run,
    pool="duckdb",
    group_name="ingest",
    kinds={"duckdb", "polars"},
    metadata=table_metadata("documents"),
    description="One row per inbox file: extracted text, title, headings, date, content hash, or an error status.",
)
def documents(context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: IngestResource) -> dg.MaterializeResult:
    inbox = Path(settings.inbox_dir)
    keys = context.partition_keys
    forgotten = FactStore(warehouse.get()).forgotten_user_ids()  # chat messages of these users are left out
    rows = []
    for i, key in enumerate(keys, start=1):
        rows.append(read_document(inbox, key, settings.max_document_bytes, forgotten))
        if i % 1000 == 0:
            context.log.info(f"read {i:,}/{len(keys):,} documents")
    frame = schemas.conform(pl.DataFrame(rows, infer_schema_length=None), schemas.DOCUMENTS)
    changed = warehouse.get().upsert_documents(frame)
    errors = frame.filter(pl.col("status") == "error")
    for document_id, error in errors.select("document_id", "error").iter_rows():
        context.log.warning(f"document {document_id}: {error}")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": frame.height,
            "documents": frame.height,
            "changed": changed.height,
            "failed": errors.height,
            "bytes": int(frame["byte_size"].fill_null(0).sum()),
            "errors": markdown_table(errors.select("document_id", "error").head(50)),
        }
    )


@dg.asset(
    partitions_def=documents_partitions,
    backfill_policy=single_run,
    pool="duckdb",
    deps=[documents],
    group_name="ingest",
    kinds={"duckdb", "polars"},
    code_version=CHUNKER_VERSION,
    automation_condition=eager,
    metadata=table_metadata("chunks"),
    description="Token-aware chunks (offline o200k tokenizer) with stable ids, character offsets and section paths.",
)
def chunks(context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: IngestResource) -> dg.MaterializeResult:
    wh = warehouse.get()
    keys = context.partition_keys
    docs = wh.read_partitions("documents", keys)
    frame = chunk_documents(docs, settings.chunking())
    wh.replace_partitions({"chunks": frame}, keys)
    context.log.info(f"{frame.height:,} chunks from {docs.height:,} documents")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": frame.height,
            "chunks": frame.height,
            "tokens": int(frame["token_count"].sum() or 0),
            "mean_tokens": float(frame["token_count"].mean() or 0.0),
            "chunker_version": CHUNKER_VERSION,
        }
    )


@dataclass(frozen=True)
class InboxChanges:
    added: list[str]
    changed: list[str]
    deleted: list[str]


def inbox_changes(seen: dict[str, str], now: dict[str, str], known: list[str]) -> InboxChanges:
    """Compare the inbox now with the last signatures seen and the instance's partitions."""
    known_set, now_keys = set(known), set(now)
    return InboxChanges(
        added=sorted(now_keys - known_set),
        changed=sorted(k for k in now_keys & known_set if seen.get(k) != now[k]),
        deleted=sorted(known_set - now_keys),
    )


@dg.sensor(
    name="inbox_sensor",
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    asset_selection=dg.AssetSelection.assets(*PARTITIONED_ASSETS),
    description="Finds new, changed and deleted inbox files; adds/removes partitions; one run per changed range.",
)
def inbox_sensor(context: dg.SensorEvaluationContext, settings: IngestResource) -> dg.SensorResult:
    seen: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    now = scan_inbox(Path(settings.inbox_dir))
    known = list(context.instance.get_dynamic_partitions(documents_partitions.name))
    changes = inbox_changes(seen, now, known)
    added, changed, deleted = changes.added, changes.changed, changes.deleted
    ordered = [k for k in known if k not in deleted] + added
    requests = [
        dg.RunRequest(
            run_key=f"{first}..{last}@{now[first]}:{now[last]}",
            asset_selection=[dg.AssetKey(a) for a in PARTITIONED_ASSETS],
            tags=range_tags(first, last),
        )
        for first, last in partition_ranges(added + changed, ordered)
    ]
    if deleted:
        # Consolidation retracts the deleted documents' rows from every table.
        requests.append(
            dg.RunRequest(
                run_key=f"retire:{len(known)}:{','.join(deleted)[:200]}",
                asset_selection=[dg.AssetKey(a) for a in CONSOLIDATION_ASSETS],
            )
        )
    if added or changed or deleted:
        context.log.info(f"inbox: {len(added)} new, {len(changed)} changed, {len(deleted)} deleted")
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[
            *([documents_partitions.build_add_request(added)] if added else []),
            *([documents_partitions.build_delete_request(deleted)] if deleted else []),
        ],
        cursor=json.dumps(now, separators=(",", ":")),
    )

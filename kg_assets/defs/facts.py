"""User facts: chat messages and the facts learned from them (partitioned like chunks), consolidated into
the users' memory (`user_facts`) and the chat users linked to person entities (`chat_users`).

Nothing a user wrote goes into metadata or logs: only ids and counts, so `kg facts forget` leaves nothing
of it in the Dagster instance either.
"""

from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import polars as pl

from kg_assets.core import schemas
from kg_assets.core.documents import read_chat_messages
from kg_assets.core.facts.memory import rebuild_memory
from kg_assets.core.facts.pipeline import LearnedFacts, learn_facts
from kg_assets.core.facts.users import build_chat_users
from kg_assets.core.files import DocumentError
from kg_assets.core.isolation import DocumentFailure, isolate, isolate_batch
from kg_assets.defs.llm_calls import export_calls, spend_per_day
from kg_assets.defs.partitions import (RunScope, add_partition_metadata, documents_in_scope, partitioned, per_day_counts,
                                     record_failures)
from kg_assets.defs.pools import Pools
from kg_assets.defs.resources import ExtractorResource, FactResource, IngestResource, WarehouseResource
from kg_assets.defs.tables import content_version, table_asset, table_spec
from kg_assets.storage.facts import FactStore


def _counts(frame: pl.DataFrame, column: str) -> dict[str, int]:
    counts = frame.group_by(column).len().sort(column)
    return {str(k): int(v) for k, v in counts.iter_rows()}


def _learn_isolated(messages: pl.DataFrame, engine, **options) -> tuple[LearnedFacts, list[DocumentFailure]]:
    """learn_facts on every message at once; when it raises, per chat (`core.isolation`): each message of a
    chat that makes it raise gets outcome 'error' with the step's error, so the next run asks it again."""
    results, failures = isolate_batch("message_facts", messages, lambda frame: learn_facts(frame, engine, **options))
    errors = {f.document_id: f.error for f in failures}
    failed = messages.filter(pl.col("document_id").is_in(list(errors))).select(
        "document_id", "message_id", "user_id",
        pl.col("document_id").replace_strict(errors, return_dtype=pl.String).alias("reason"),
    ).with_columns(outcome=pl.lit("error"), fact_count=pl.lit(0), extractor=pl.lit(engine.name),
                   extractor_version=pl.lit(engine.version), extracted_at=pl.lit(datetime.now(UTC)))
    if len(results) == 1 and not failures:
        return results[0], []
    return LearnedFacts(
        pl.concat([r.facts for r in results], how="vertical_relaxed") if results else schemas.empty(schemas.USER_FACTS),
        pl.concat([*(r.extractions for r in results), schemas.conform(failed, schemas.FACT_EXTRACTIONS)], how="vertical_relaxed"),
        pl.concat([r.message_facts for r in results], how="vertical_relaxed") if results else schemas.empty(schemas.FACT_INPUTS),
        sum(r.llm_calls for r in results), sum(r.prompt_tokens for r in results), sum(r.completion_tokens for r in results),
    ), failures


def messages(context: dg.AssetExecutionContext, warehouse: WarehouseResource, settings: IngestResource,
             scope: RunScope) -> dg.MaterializeResult:
    """One row per chat message (versioned): conversation, message id, user, display name, the message's own
    time, content, reply-to. An edited or deleted chat file closes its rows."""
    wh = warehouse.get()
    store = FactStore(wh)
    in_scope = documents_in_scope(wh, context.partition_keys, scope)
    keys = in_scope["document_id"].to_list()
    chats = wh.read_partitions("documents", keys).filter((pl.col("source_type") == "chat") & (pl.col("status") == "ok"))
    forgotten = store.forgotten_user_ids()
    def read(chat: tuple[str, str]) -> pl.DataFrame | None:
        try:
            return read_chat_messages(Path(settings.inbox_dir), *chat, forgotten)
        except (DocumentError, OSError) as exc:  # the file changed since the documents step: not its content's fault
            context.log.warning(f"chat {chat[0]}: {exc}")
            return None  # its current rows stay until a run reads the file and its text together

    read_chats, failures = isolate("messages", ((d, (d, h)) for d, h in chats.select("document_id", "content_hash").iter_rows()), read)
    frames = [f for f in read_chats.values() if f is not None]
    failed = [d for d, f in read_chats.items() if f is None]
    errors = record_failures(context, wh, failures)  # a chat whose content made the reader raise: an error row
    frame = pl.concat(frames) if frames else schemas.empty(schemas.MESSAGES)
    stats = store.write_messages(frame, [k for k in keys if k not in failed])
    context.log.info(f"{frame.height:,} messages from {len(frames):,} chat logs; {stats['closed']:,} versions closed")
    add_partition_metadata(context, per_day_counts(context.partition_keys, frame.join(in_scope, on="document_id"),
                                                   messages=pl.len(), chat_documents=pl.col("document_id").n_unique()))
    return dg.MaterializeResult(metadata={
        "dagster/row_count": wh.row_count("messages"),
        "messages": frame.height,
        "chat_documents": len(frames),
        "users": frame["user_id"].n_unique(),
        "versions_closed": stats["closed"],
        "chat_documents_failed": len(failed),
        **errors,
        "forgotten_users_left_out": len(forgotten),
    })


def message_facts(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, extractor: ExtractorResource, facts: FactResource,
    scope: RunScope,
):
    wh = warehouse.get()
    store = FactStore(wh)
    in_scope = documents_in_scope(wh, context.partition_keys, scope)
    keys = in_scope["document_id"].to_list()
    current = wh.read_partitions("messages", keys)
    previous = (wh.read_partitions("fact_extractions", keys), wh.read_partitions("message_facts", keys))
    engine = extractor.build_fact_extractor(run_id=context.run_id)
    context.log.info(f"learning facts from {current.height:,} messages with the {extractor.describe(engine)} "
                     f"(enabled={facts.enabled}, rate={facts.rate})")
    learned, failures = _learn_isolated(current, engine, enabled=facts.enabled, rate=facts.rate,
                                        known=store.known_facts(keys), previous=previous)
    for failure in failures[:20]:
        context.log.warning(f"chat {failure.document_id} failed in step {failure.step}; its messages are asked again "
                            "on the next run")
    wh.replace_partitions({"fact_extractions": learned.extractions, "message_facts": learned.message_facts}, keys)
    if extractor.uses_llm:
        export_calls(wh, extractor.cache_path)
    outcomes = learned.outcomes()
    if outcomes.get("error"):
        failed = learned.extractions.filter(pl.col("outcome") == "error")
        context.log.warning(f"{failed.height:,} messages failed fact extraction and are asked again on the next run: "
                            f"{failed['message_id'].head(20).to_list()}")
    reused = previous[1].join(learned.message_facts.select("fact_id"), on="fact_id", how="semi").height
    day_of = in_scope.select("document_id", "arrival_day")
    per_day = per_day_counts(context.partition_keys, learned.extractions.join(day_of, on="document_id"),
                             messages=pl.len(), messages_failed=(pl.col("outcome") == "error").sum())
    for day, counts in per_day_counts(context.partition_keys, learned.message_facts.join(day_of, on="document_id"),
                                      facts=pl.len()).items():
        per_day[day].update(counts)
    if extractor.uses_llm:
        for day, spend in spend_per_day(context.partition_keys, engine.calls.join(day_of, on="document_id")).items():
            per_day[day].update(spend)
    add_partition_metadata(context, per_day, asset_key="message_facts")
    yield dg.MaterializeResult(asset_key="fact_extractions", metadata={
        "dagster/row_count": wh.row_count("fact_extractions"), "messages": learned.extractions.height})
    yield dg.MaterializeResult(asset_key="message_facts", metadata={
        "dagster/row_count": wh.row_count("message_facts"),
        "facts_learned": learned.message_facts.height - reused,
        "facts_reused": reused,
        "messages": learned.extractions.height,
        "messages_extracted": outcomes.get("ok", 0),
        "skipped_disabled": outcomes.get("disabled", 0),
        "skipped_by_rate": outcomes.get("not_sampled", 0),
        "skipped_not_extractable": outcomes.get("not_extractable", 0),
        "messages_failed": outcomes.get("error", 0),
        "failed_documents": len(failures),
        "facts_by_type": dg.MetadataValue.json(_counts(learned.message_facts, "fact_type")),
        "extractor": engine.name,
        "extractor_version": engine.version,
    })


def user_facts(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Each user's fact memory: dedup (seed rules plus guards, duplicates kept as rows pointing at what they
    duplicate) and supersession in message time (valid_from / valid_until), from learned and manual facts."""
    wh = warehouse.get()
    store = FactStore(wh)
    memory = rebuild_memory(store.fact_inputs(), store.forgotten_user_ids())
    store.write_memory(memory)
    active = memory.filter(pl.col("is_active"))
    duplicates = memory.filter(pl.col("duplicate_of").is_not_null())
    outcomes = _counts(store.extraction_outcomes(), "outcome")
    context.log.info(f"{active.height:,} active facts of {active['user_id'].n_unique():,} users; "
                     f"{duplicates.height:,} duplicates set aside")
    return dg.MaterializeResult(data_version=content_version(wh, "user_facts"), metadata={
        "dagster/row_count": memory.height,
        "facts": memory.height,
        "active_facts": active.height,
        "users": memory["user_id"].n_unique(),
        "manual_facts": memory.filter(pl.col("source") != "auto_extraction").height,
        "superseded": memory.filter(pl.col("superseded_by").is_not_null()).height,
        "skipped_by_dedup": duplicates.height,
        "dedup_by_rule": dg.MetadataValue.json(_counts(duplicates, "dedup_rule")),
        "kept_by_guard": dg.MetadataValue.json(_counts(memory.filter(pl.col("dedup_guard").is_not_null()), "dedup_guard")),
        "active_by_type": dg.MetadataValue.json(_counts(active, "fact_type")),
        "skipped_by_rate": outcomes.get("not_sampled", 0),
        "skipped_not_extractable": outcomes.get("not_extractable", 0),
        "messages_failed": outcomes.get("error", 0),
    })


def chat_users(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """One row per chat user: display name (else the name they introduced themselves with) and the current
    PERSON entity of that name."""
    wh = warehouse.get()
    store = FactStore(wh)
    entities = wh.current_entities(["entity_id", "name", "normalized_name", "entity_type", "aliases", "mention_count"])
    users = build_chat_users(store.current_messages(), store.memory(), entities)
    store.write_chat_users(users)
    linked = users.filter(pl.col("entity_id").is_not_null())
    context.log.info(f"{users.height:,} chat users, {linked.height:,} linked to a person entity")
    return dg.MaterializeResult(data_version=content_version(wh, "chat_users"), metadata={
        "dagster/row_count": users.height,
        "users": users.height,
        "linked_to_person": linked.height,
        "named_by": dg.MetadataValue.json(_counts(users.drop_nulls("name_source"), "name_source")),
    })


def assets(pools: Pools) -> list[dg.AssetsDefinition]:
    """messages and the facts learned from them per partition, then the users' memory and the chat users."""
    return [
        table_asset("messages", group="facts", deps=["documents"], **partitioned(pools.partitions))(messages),
        dg.multi_asset(name="message_facts", specs=[
            table_spec("message_facts", group="facts", deps=["messages"], description=(
                "Facts learned from each chat message (seed 001 rules: switch, rate, extractability, at most 3 facts, "
                "levels snapped), with the user's known facts in each request. Its LLM calls go to kg.llm_calls like "
                "extraction's.")),
            table_spec("fact_extractions", group="facts", deps=["messages"], description=(
                "One outcome row per chat message: disabled, not_sampled, not_extractable (with the rule), ok or "
                "error; what makes a rerun ask again exactly the messages that failed.")),
        ], **partitioned(pools.llm))(message_facts),
        table_asset("user_facts", group="facts", deps=["message_facts", "fact_extractions", "linked_entities"],
                    pool=pools.consolidation)(user_facts),
        table_asset("chat_users", group="facts", deps=["user_facts", "messages", "linked_entities"],
                    pool=pools.consolidation)(chat_users),
    ]

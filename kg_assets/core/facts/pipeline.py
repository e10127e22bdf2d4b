"""The seed's pipeline over message rows: switch and rate -> extractability -> extraction -> validation -> memory.

`learn_facts` is pure apart from calling the extractor it is given. Messages are taken per user in time order
(sent_at, document_id, message_id). Extraction runs in rounds, one message per user per round, so each request
carries that user's facts known so far (earlier messages and the `known` facts given, e.g. manual ones), as in
the seed's prompt, while users are still batched together for the extractor. A failed answer fails its message
only (outcome ``error``); its facts are simply absent, and a rerun asks again.

The returned facts are `build_user_facts` over the known and the new facts together, so they are the same
whether a user's messages arrive in one run or in many.

`previous` (the FACT_EXTRACTIONS and fact rows an earlier run made for these messages) lets a rerun reuse
what it already learned: a message that is offered again, unchanged (same `message_hash`), and whose earlier
extraction by the same extractor version succeeded keeps its facts without a new request. Everything else,
including a message whose earlier extraction failed, is asked again.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.facts.memory import UserMemory, build_user_facts, fact_row, replay_order
from kg_assets.core.facts.records import FactExtractor, FactRequest
from kg_assets.core.facts.rules import (
    DEFAULT_ENABLED,
    DEFAULT_RATE,
    check_rate,
    extractability_problem,
    is_sampled,
    validate_answer,
)
from kg_assets.core.normalize import stable_hash

MAX_KNOWN_FACTS = 30  # known facts listed in a request, most important and most recent first


@dataclass(frozen=True)
class LearnedFacts:
    facts: pl.DataFrame  # USER_FACTS: known and new facts, every decision made
    extractions: pl.DataFrame  # FACT_EXTRACTIONS: one row per message
    message_facts: pl.DataFrame  # FACT_INPUTS of the given messages only (learned now or reused), undecided
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def outcomes(self) -> dict[str, int]:
        """Messages per outcome (disabled, not_sampled, not_extractable, ok, error)."""
        return dict(self.extractions.group_by("outcome").len().sort("outcome").iter_rows())


def learn_facts(
    messages: pl.DataFrame,
    extractor: FactExtractor,
    *,
    enabled: bool = DEFAULT_ENABLED,
    rate: float = DEFAULT_RATE,
    known: pl.DataFrame | None = None,
    learned_at: datetime | None = None,
    max_known_facts: int = MAX_KNOWN_FACTS,
    previous: tuple[pl.DataFrame, pl.DataFrame] | None = None,
) -> LearnedFacts:
    """Learn facts from MESSAGES rows (document_id, message_id, user_id, content, sent_at, display_name).

    `enabled` and `rate` are FACT_EXTRACTION_ENABLED and FACT_EXTRACTION_RATE; `known`: USER_FACTS rows
    already held (manual facts, facts of other conversations); `learned_at`: the time stamped on new facts;
    `previous`: (FACT_EXTRACTIONS, fact rows) of an earlier run over these messages, reused where unchanged.
    """
    rate = check_rate(rate)
    learned_at = learned_at or datetime.now(UTC)
    ordered = messages.sort(["sent_at", "document_id", "message_id"], nulls_last=True).to_dicts()
    outcome_rows: dict[tuple[str, str], dict] = {}
    queues: dict[str, deque[dict]] = {}
    reusable, reused_facts = _reusable(previous, extractor.version)
    reused_rows: list[dict] = []
    for message in ordered:
        key = (message["document_id"], message["message_id"])
        digest = message_hash(message)
        outcome, reason = "ok", None
        if not enabled:
            outcome = "disabled"
        elif not is_sampled(message["message_id"], rate):
            outcome = "not_sampled"
        elif (problem := extractability_problem(message["content"])) is not None:
            outcome, reason = "not_extractable", problem
        elif reusable.get(key, {}).get("message_hash") == digest:
            outcome_rows[key] = reusable[key]
            reused_rows.extend(reused_facts.get(key, ()))
            continue
        else:
            queues.setdefault(message["user_id"], deque()).append(message)
        outcome_rows[key] = {"document_id": key[0], "message_id": key[1], "user_id": message["user_id"],
                             "message_hash": digest, "outcome": outcome, "reason": reason, "fact_count": 0, "notes": [],
                             "extractor": extractor.name, "extractor_version": extractor.version,
                             "extracted_at": learned_at}

    prior = schemas.conform(known, schemas.USER_FACTS).to_dicts() if known is not None and known.height else []
    prior += reused_rows
    memories: dict[str, UserMemory] = {}
    for row in replay_order(prior):
        memories.setdefault(row["user_id"], UserMemory()).add(dict(row))
    new_rows: list[dict] = []
    calls = prompt_tokens = completion_tokens = 0
    while queues:
        batch = [queue.popleft() for queue in queues.values()]
        queues = {user: queue for user, queue in queues.items() if queue}
        requests = [
            FactRequest(m["document_id"], m["message_id"], m["user_id"], m["content"], m.get("sent_at"),
                        m.get("display_name"),
                        memories[m["user_id"]].known(max_known_facts) if m["user_id"] in memories else ())
            for m in batch
        ]
        answers = extractor.extract_facts(requests)
        if len(answers) != len(requests):
            raise RuntimeError(f"{extractor.name} answered {len(answers)} of {len(requests)} requests")
        for message, answer in zip(batch, answers):
            calls += answer.llm_calls
            prompt_tokens += answer.prompt_tokens
            completion_tokens += answer.completion_tokens
            status = outcome_rows[(message["document_id"], message["message_id"])]
            if answer.error is not None:
                status.update(outcome="error", reason=answer.error)
                continue
            facts, notes = validate_answer(answer.facts)
            status.update(fact_count=len(facts), notes=notes)
            memory = memories.setdefault(message["user_id"], UserMemory())
            for index, fact in enumerate(facts):
                row = fact_row(
                    message["user_id"], fact, valid_from=message["sent_at"], learned_at=learned_at,
                    document_id=message["document_id"], message_id=message["message_id"], fact_index=index,
                    message_content=message["content"], extractor=extractor.name,
                    extractor_version=extractor.version,
                )
                new_rows.append(row)
                memory.add(row if not prior else dict(row))

    if prior:  # known facts may be newer than some messages: decide everything again in time order
        facts_frame = build_user_facts(pl.DataFrame(prior + new_rows, schema=schemas.USER_FACTS))
    elif new_rows:  # each memory already took its facts in replay order
        decided = [row for user in sorted(memories) for row in memories[user].rows]
        facts_frame = schemas.conform(pl.DataFrame(decided, schema=schemas.USER_FACTS), schemas.USER_FACTS)
    else:
        facts_frame = schemas.empty(schemas.USER_FACTS)
    extractions = (schemas.conform(pl.DataFrame(list(outcome_rows.values()), schema=schemas.FACT_EXTRACTIONS),
                                   schemas.FACT_EXTRACTIONS)
                   if outcome_rows else schemas.empty(schemas.FACT_EXTRACTIONS))
    inputs = reused_rows + new_rows
    message_facts = (schemas.conform(pl.DataFrame(inputs, schema=schemas.USER_FACTS), schemas.FACT_INPUTS)
                     if inputs else schemas.empty(schemas.FACT_INPUTS))
    return LearnedFacts(facts_frame, extractions, message_facts, calls, prompt_tokens, completion_tokens)


def message_hash(message: dict) -> str:
    """What a fact extraction of a message depends on: its author, time and words."""
    sent_at = message.get("sent_at")
    return stable_hash(message["user_id"], sent_at.isoformat() if sent_at else "", message["content"])


def _reusable(previous: tuple[pl.DataFrame, pl.DataFrame] | None,
              version: str) -> tuple[dict[tuple[str, str], dict], dict[tuple[str, str], list[dict]]]:
    """Earlier successful extractions by `version`, and their facts, by (document_id, message_id)."""
    if previous is None:
        return {}, {}
    extractions, facts = previous
    done = extractions.filter((pl.col("outcome") == "ok") & (pl.col("extractor_version") == version))
    rows = {(r["document_id"], r["message_id"]): r for r in done.to_dicts()}
    by_message: dict[tuple[str, str], list[dict]] = {}
    for row in schemas.conform(facts, schemas.USER_FACTS).to_dicts():
        key = (row["document_id"], row["extracted_from_message_id"])
        if key in rows:
            by_message.setdefault(key, []).append(row)
    return rows, by_message

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

A message that answers another speaker's question carries that question turn as its `context` (answers.py:
the turn it replies to, else the turn before it in its conversation). The context is part of the message hash,
so the same "Yes!" after another question is extracted again, and its facts are the answering user's, at the
answer's message.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.facts.answers import previous_questions
from kg_assets.core.facts.memory import UserMemory, build_user_facts, fact_row, replay_order
from kg_assets.core.facts.records import FactAnswer, FactExtractor, FactRequest
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
    contexts = previous_questions(ordered)
    for message in ordered:
        message["context"] = contexts.get((message["document_id"], message["message_id"]))
    outcome_rows, queues, reused_rows = _triage(ordered, extractor, enabled, rate, learned_at,
                                                *_reusable(previous, extractor.version))
    prior = schemas.conform(known, schemas.USER_FACTS).to_dicts() if known is not None and known.height else []
    prior += reused_rows
    memories: dict[str, UserMemory] = {}
    for row in replay_order(prior):
        memories.setdefault(row["user_id"], UserMemory()).add(dict(row))
    new_rows, (calls, prompt_tokens, completion_tokens) = _extract_in_rounds(
        queues, extractor, memories, outcome_rows, learned_at, max_known_facts, copy_rows=bool(prior))
    return LearnedFacts(
        _decided_facts(prior, new_rows, memories),
        _rows_frame(list(outcome_rows.values()), schemas.FACT_EXTRACTIONS, schemas.FACT_EXTRACTIONS),
        _rows_frame(reused_rows + new_rows, schemas.USER_FACTS, schemas.FACT_INPUTS),
        calls, prompt_tokens, completion_tokens,
    )


def _triage(ordered: list[dict], extractor: FactExtractor, enabled: bool, rate: float, learned_at: datetime,
            reusable: dict[tuple[str, str], dict], reused_facts: dict[tuple[str, str], list[dict]],
            ) -> tuple[dict[tuple[str, str], dict], dict[str, deque[dict]], list[dict]]:
    """Each message's outcome row by (document_id, message_id); the messages to ask, queued per user in time
    order; and the fact rows of the messages whose earlier extraction is reused."""
    outcome_rows: dict[tuple[str, str], dict] = {}
    queues: dict[str, deque[dict]] = {}
    reused_rows: list[dict] = []
    for message in ordered:
        key = (message["document_id"], message["message_id"])
        digest = message_hash(message)
        skipped = _skip_reason(message, enabled, rate)
        if skipped is None and reusable.get(key, {}).get("message_hash") == digest:
            outcome_rows[key] = reusable[key]
            reused_rows.extend(reused_facts.get(key, ()))
            continue
        if skipped is None:
            queues.setdefault(message["user_id"], deque()).append(message)
        outcome, reason = skipped or ("ok", None)
        outcome_rows[key] = {"document_id": key[0], "message_id": key[1], "user_id": message["user_id"],
                             "message_hash": digest, "outcome": outcome, "reason": reason, "fact_count": 0, "notes": [],
                             "extractor": extractor.name, "extractor_version": extractor.version,
                             "extracted_at": learned_at}
    return outcome_rows, queues, reused_rows


def _skip_reason(message: dict, enabled: bool, rate: float) -> tuple[str, str | None] | None:
    """(outcome, reason) of a message that is not offered to extraction: the switch, the rate, extractability
    in this order; None for a message that is offered."""
    if not enabled:
        return "disabled", None
    if not is_sampled(message["message_id"], rate):
        return "not_sampled", None
    if (problem := extractability_problem(message["content"], message.get("context"))) is not None:
        return "not_extractable", problem
    return None


def _extract_in_rounds(queues: dict[str, deque[dict]], extractor: FactExtractor, memories: dict[str, UserMemory],
                       outcome_rows: dict[tuple[str, str], dict], learned_at: datetime, max_known_facts: int,
                       copy_rows: bool) -> tuple[list[dict], tuple[int, int, int]]:
    """Ask the extractor one message per user per round, each request carrying the user's facts known so far;
    the new fact rows and (LLM calls, prompt tokens, completion tokens). Outcome rows are updated in place."""
    new_rows: list[dict] = []
    calls = prompt_tokens = completion_tokens = 0
    while queues:
        batch = [queue.popleft() for queue in queues.values()]
        queues = {user: queue for user, queue in queues.items() if queue}
        requests = [
            FactRequest(m["document_id"], m["message_id"], m["user_id"], m["content"], m.get("sent_at"),
                        m.get("display_name"),
                        memories[m["user_id"]].known(max_known_facts) if m["user_id"] in memories else (),
                        m.get("context"))
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
            new_rows += _take_answer(message, answer, status, memories, extractor, learned_at, copy_rows)
    return new_rows, (calls, prompt_tokens, completion_tokens)


def _take_answer(message: dict, answer: FactAnswer, status: dict, memories: dict[str, UserMemory],
                 extractor: FactExtractor, learned_at: datetime, copy_rows: bool) -> list[dict]:
    """The fact rows of one answer, validated and added to the user's memory (a copy when `copy_rows`: the
    memory must not decide rows that are decided again with the known facts); its outcome in `status`."""
    if answer.error is not None:
        status.update(outcome="error", reason=answer.error)
        return []
    facts, notes = validate_answer(answer.facts)
    status.update(fact_count=len(facts), notes=notes)
    memory = memories.setdefault(message["user_id"], UserMemory())
    rows = []
    for index, fact in enumerate(facts):
        row = fact_row(
            message["user_id"], fact, valid_from=message["sent_at"], learned_at=learned_at,
            document_id=message["document_id"], message_id=message["message_id"], fact_index=index,
            message_content=message["content"], extractor=extractor.name,
            extractor_version=extractor.version,
        )
        rows.append(row)
        memory.add(dict(row) if copy_rows else row)
    return rows


def _decided_facts(prior: list[dict], new_rows: list[dict], memories: dict[str, UserMemory]) -> pl.DataFrame:
    if prior:  # known facts may be newer than some messages: decide everything again in time order
        return build_user_facts(pl.DataFrame(prior + new_rows, schema=schemas.USER_FACTS))
    if new_rows:  # each memory already took its facts in replay order
        decided = [row for user in sorted(memories) for row in memories[user].rows]
        return schemas.conform(pl.DataFrame(decided, schema=schemas.USER_FACTS), schemas.USER_FACTS)
    return schemas.empty(schemas.USER_FACTS)


def _rows_frame(rows: list[dict], schema: dict[str, pl.DataType], contract: dict[str, pl.DataType]) -> pl.DataFrame:
    """Rows built to `schema`, conformed to the table contract `contract` (its empty frame when none)."""
    return schemas.conform(pl.DataFrame(rows, schema=schema), contract) if rows else schemas.empty(contract)


def message_hash(message: dict) -> str:
    """What a fact extraction of a message depends on: its author, time and words, and the other speaker's
    question it answers (its context), so a "Yes!" to another question is not reused."""
    sent_at = message.get("sent_at")
    parts = [message["user_id"], sent_at.isoformat() if sent_at else "", message["content"]]
    if message.get("context"):
        parts.append(message["context"])
    return stable_hash(*parts)


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

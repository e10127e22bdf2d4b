"""The LLM `FactExtractor`: one instructor tool request per chat message, through the entity-extraction engine.

Requests share the engine's cache (keyed with FACT_PROMPT_VERSION), concurrency and rate limits, timeouts and
retries, call log (kg.llm_calls rows with document_id and message_id) and cost accounting. An answer that
does not validate fails its message only: the engine drops it from the cache, the message's outcome is
`error`, and the next run asks again.
"""

from __future__ import annotations

import asyncio

import openai
import polars as pl
from pydantic import ValidationError

from kg_assets.core.facts.records import FactAnswer, FactRequest
from kg_assets.extractors.base import settings_digest
from kg_assets.extractors.facts.prompt import FACT_PROMPT_VERSION, FactsOut, FactsTool, build_fact_messages, raw_facts
from kg_assets.extractors.llm.answers import ParseFailure
from kg_assets.extractors.llm.engine import LLMExtractor, ToolRequest
from kg_assets.settings import LLMSettings

FACTS_TOOL = ToolRequest(FactsTool, output_format="facts", prompt_version=FACT_PROMPT_VERSION)


def _parse_facts(content: str, gleaning_pass: int | None, truncated: bool) -> FactsOut:
    try:
        return FactsOut.model_validate_json(content)
    except (ValidationError, ValueError) as exc:
        raise ParseFailure(f"facts answer did not validate: {str(exc)[:300]}") from exc


class LLMFactExtractor:
    name = "facts-llm"
    code_version = "facts-llm-1"

    def __init__(self, settings: LLMSettings, run_id: str | None = None):
        self.engine = LLMExtractor(settings, run_id=run_id)
        self.engine._calls = []  # every round's calls, for the call log and cost metadata
        digest = settings_digest(temperature=settings.temperature, max_completion_tokens=settings.max_completion_tokens)
        self.version = f"{self.code_version}/{FACT_PROMPT_VERSION}/{settings.model}/{digest}"

    @property
    def calls(self) -> pl.DataFrame:
        """LLM_CALLS rows of every request and cache hit so far."""
        return self.engine.calls

    def extract_facts(self, requests: list[FactRequest]) -> list[FactAnswer]:
        return self.engine._run(self._all, requests) if requests else []

    async def _all(self, requests: list[FactRequest]) -> list[FactAnswer]:
        first = len(self.engine._calls)
        outcomes = await asyncio.gather(*(self._one(r) for r in requests))
        calls = {(c["document_id"], c["message_id"]): c for c in self.engine._calls[first:]}
        answers = []
        for request, (facts, error) in zip(requests, outcomes):
            call = calls.get((request.document_id, request.message_id), {})
            sent = bool(call) and call["status"] != "cache_hit"
            answers.append(FactAnswer(facts, error, llm_calls=int(sent),
                                      prompt_tokens=call["prompt_tokens"] if sent else 0,
                                      completion_tokens=call["completion_tokens"] if sent else 0))
        return answers

    async def _one(self, request: FactRequest) -> tuple[tuple, str | None]:
        where = {"chunk_id": None, "document_id": request.document_id, "message_id": request.message_id,
                 "gleaning_pass": None}
        try:
            answer = await self.engine._ask(build_fact_messages(request), where, _parse_facts, tool=FACTS_TOOL)
        except (openai.APIError, ParseFailure) as exc:
            return (), f"{type(exc).__name__}: {exc}"[:500]
        return raw_facts(answer), None

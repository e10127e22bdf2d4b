"""What a fact extractor is given and what it returns, and the `FactExtractor` interface.

Extractors live in kg_assets/extractors/facts/ (the offline heuristic; the LLM path through the shared engine).
They answer in loose terms (`RawFact`: any type string, any number); kg_assets/core/facts/rules.py turns an
answer into valid facts and says what it had to change.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class KnownFact:
    fact_type: str
    content: str


@dataclass(frozen=True, slots=True)
class FactRequest:
    """One chat message to learn from, with what is already known about its author (for the prompt) and, when
    the message answers another speaker's question, that speaker's turn (`context`, answers.py): said by the
    other person, so a fact may come from it only as far as the message affirms it."""

    document_id: str
    message_id: str
    user_id: str
    content: str
    sent_at: datetime | None = None
    display_name: str | None = None
    known_facts: tuple[KnownFact, ...] = ()
    context: str | None = None


@dataclass(frozen=True, slots=True)
class RawFact:
    """A fact as an extractor gave it, before validation and snapping."""

    fact_type: object
    content: object
    confidence: object = None
    importance: object = None
    temporal: object = None


@dataclass(frozen=True, slots=True)
class FactAnswer:
    """The extractor's answer for one request: facts, or an error that fails this message only."""

    facts: tuple[RawFact, ...] = ()
    error: str | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class FactExtractor(Protocol):
    name: str
    version: str  # stored with every fact; facts from another version can be re-extracted

    def extract_facts(self, requests: list[FactRequest]) -> list[FactAnswer]:
        """One answer per request, in order. Must not raise for one bad message: return an error answer."""
        ...

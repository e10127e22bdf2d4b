"""Extraction prompts for the LLM extractor: pure functions that build OpenAI chat messages.

Two output formats share one set of rules:

``tuple``
    One record per line, fields separated by ``<|#|>``, the answer ends with ``<|COMPLETE|>``::

        entity<|#|>NAME<|#|>TYPE<|#|>DESCRIPTION
        relation<|#|>SOURCE<|#|>TARGET<|#|>KEYWORDS<|#|>DESCRIPTION<|#|>STRENGTH
        attribute<|#|>ENTITY<|#|>KEY<|#|>VALUE<|#|>CONFIDENCE

    Line-oriented, so a truncated or partly malformed answer still yields its good lines
    (:func:`kg_assets.core.extraction.sanitize.parse_tuples`).
``structured``
    Function calling through instructor; the JSON schema comes from
    :class:`kg_assets.core.extraction.sanitize.ExtractionOut`, the prompt only names the fields.

Gleaning (a second pass for missed records) is a *fresh* request, not a replay of the first
conversation: same system prompt, the text, a compact list of the entities already found and the
lines that failed to parse. That costs less than re-sending the first answer.

Token budget (o200k_base, 2,000-character chunk with a 15-heading outline): first pass <= 1,100
tokens, one gleaning pass <= 1,300; ``kg_assets_tests/test_prompts.py`` measures both.

Versioning: ``PROMPT_VERSION`` is part of the cache key (:func:`prompt_hash`). Bump it whenever any
prompt text, the example, the record format or the context layout changes, so cached answers to the
old prompt are never reused for the new one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Literal

__all__ = [
    "COMPLETE",
    "DEFAULT_ENTITY_TYPES",
    "DELIMITER",
    "MAX_FAILED_LINES",
    "MAX_FOUND_ENTITIES",
    "MAX_HEADINGS",
    "PROMPT_VERSION",
    "build_gleaning_messages",
    "build_messages",
    "count_message_tokens",
    "prompt_hash",
    "system_prompt",
]

Format = Literal["tuple", "structured"]

PROMPT_VERSION = "kg-extract-2"

DEFAULT_ENTITY_TYPES: tuple[str, ...] = (
    "PERSON",
    "ORGANIZATION",
    "LOCATION",
    "EVENT",
    "CONCEPT",
    "TECHNOLOGY",
    "PRODUCT",
    "OTHER",
)

DELIMITER = "<|#|>"
COMPLETE = "<|COMPLETE|>"
CONTINUE = "<|CONTINUE|>"

MAX_HEADINGS = 15  # outline entries sent as document context
MAX_HEADING_CHARS = 60
MAX_SECTION_CHARS = 200
MAX_FOUND_ENTITIES = 60  # entities listed in a gleaning request ...
MAX_FOUND_CHARS = 800  # ... within this many characters of names (~200 tokens)
MAX_FOUND_NAME_CHARS = 60
MAX_FAILED_LINES = 3  # malformed lines sent back for re-emission
MAX_FAILED_LINE_CHARS = 200

_D = DELIMITER
_EXAMPLE_TEXT = "Dr. Sarah Chen leads the AI team at Acme Labs, founded in 2015."
_EXAMPLE_OUTPUT = "\n".join(
    [
        f"entity{_D}Sarah Chen{_D}PERSON{_D}Leads the AI team at Acme Labs.",
        f"entity{_D}Acme Labs{_D}ORGANIZATION{_D}Lab founded in 2015.",
        f"relation{_D}Sarah Chen{_D}Acme Labs{_D}works at, leads{_D}Chen leads its AI team.{_D}1.0",
        f"attribute{_D}Acme Labs{_D}founded_year{_D}2015{_D}1.0",
        COMPLETE,
    ]
)
_EXAMPLE_TYPES = frozenset({"PERSON", "ORGANIZATION"})


def _clip(s: str, limit: int) -> str:
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


@lru_cache(maxsize=64)
def _system_prompt(fmt: Format, entity_types: tuple[str, ...], max_attributes: int) -> str:
    if fmt not in ("tuple", "structured"):
        raise ValueError(f"unknown prompt format {fmt!r}; expected 'tuple' or 'structured'")
    if not entity_types:
        raise ValueError("entity_types must not be empty")
    types = ", ".join(entity_types)
    fallback = "OTHER if none fits" if "OTHER" in entity_types else "skip entities that fit none"
    rules = (
        "You are a knowledge graph specialist. Extract entities, relations and attribute facts from the text.\n"
        f"Entity types: {types} ({fallback}).\n"
        "- Names exactly as written, fullest form; no pronouns or generic nouns.\n"
        "- Descriptions: one short sentence from the text. Never invent facts.\n"
        "- Relations only between extracted entities; keywords short, main one first; strength 0-1 (1 = explicit).\n"
        "- Attributes: entity facts with snake_case keys (employer, role, headquarters, located_in, "
        f"founded_year), confidence 0-1; at most {max_attributes}.\n"
    )
    if fmt == "structured":
        return rules + (
            "Fields:\n"
            "- entities: name, type, description\n"
            "- relations: source and target (entity names), keywords, description, strength\n"
            "- attributes: entity (name), key, value, confidence\n"
            "- more: true only if the text holds records you did not list"
        )
    note = "" if _EXAMPLE_TYPES <= set(entity_types) else " (its types are illustrative; use only the types above)"
    return rules + (
        f"Output one record per line, nothing else, then {COMPLETE} ({CONTINUE} if records remain unlisted):\n"
        f"entity{_D}NAME{_D}TYPE{_D}DESCRIPTION\n"
        f"relation{_D}SOURCE{_D}TARGET{_D}KEYWORDS{_D}DESCRIPTION{_D}STRENGTH\n"
        f"attribute{_D}ENTITY{_D}KEY{_D}VALUE{_D}CONFIDENCE\n"
        f"\nExample{note}. Text: {_EXAMPLE_TEXT}\nOutput:\n{_EXAMPLE_OUTPUT}"
    )


def system_prompt(
    fmt: Format, entity_types: Sequence[str] = DEFAULT_ENTITY_TYPES, max_attributes: int = 10
) -> str:
    """The system message shared by the first pass and every gleaning pass."""
    return _system_prompt(fmt, tuple(t.strip().upper() for t in entity_types), int(max_attributes))


def _context(section_path: str | None, headings: Sequence[str]) -> str:
    lines = []
    items = [_clip(h, MAX_HEADING_CHARS) for h in headings if h and h.strip()]
    if items:
        shown = " | ".join(items[:MAX_HEADINGS])
        more = len(items) - MAX_HEADINGS
        lines.append(f"Document outline: {shown}" + (f" | … (+{more} more)" if more > 0 else ""))
    if section_path and section_path.strip():
        lines.append(f"Section: {_clip(section_path, MAX_SECTION_CHARS)}")
    return "\n".join(lines) + ("\n" if lines else "")


def _text_block(text: str) -> str:
    return f'Text:\n"""\n{text}\n"""'


def build_messages(
    text: str,
    *,
    fmt: Format,
    entity_types: Sequence[str] = DEFAULT_ENTITY_TYPES,
    section_path: str | None = None,
    headings: Sequence[str] = (),
    max_attributes: int = 10,
) -> list[dict]:
    """First-pass request: [system, user] chat messages for one chunk."""
    return [
        {"role": "system", "content": system_prompt(fmt, entity_types, max_attributes)},
        {"role": "user", "content": _context(section_path, headings) + _text_block(text)},
    ]


def _found_outline(found_entities: Sequence[tuple[str, str]]) -> str:
    groups: dict[str, list[str]] = {}
    seen: set[tuple[str, str]] = set()
    listed = total = budget = 0
    full = False  # stop at the first entity that does not fit: earlier entities come first
    for name, etype in found_entities:
        name, etype = _clip(str(name), MAX_FOUND_NAME_CHARS), str(etype).strip().upper()
        key = (name.casefold(), etype)
        if not name or key in seen:
            continue
        seen.add(key)
        total += 1
        full = full or listed >= MAX_FOUND_ENTITIES or budget + len(name) + 2 > MAX_FOUND_CHARS
        if not full:
            groups.setdefault(etype, []).append(name)
            listed += 1
            budget += len(name) + 2
    if not groups:
        return ""
    lines = [f"{t}: " + "; ".join(names) for t, names in groups.items()]
    more = f"\n(+{total - listed} more not listed)" if total > listed else ""
    return "Already extracted:\n" + "\n".join(lines) + more


def build_gleaning_messages(
    text: str,
    *,
    fmt: Format,
    found_entities: Sequence[tuple[str, str]],
    failed_lines: Sequence[str] = (),
    entity_types: Sequence[str] = DEFAULT_ENTITY_TYPES,
    section_path: str | None = None,
    headings: Sequence[str] = (),
    max_attributes: int = 10,
) -> list[dict]:
    """A fresh request for what the earlier passes missed (no history replay).

    ``found_entities`` are (name, type) pairs already extracted, listed grouped by type
    ("PERSON: Sarah Chen; Marcus Webb", which costs about a third fewer tokens than "NAME (TYPE)" per
    entity): deduplicated, at most ``MAX_FOUND_ENTITIES`` within ``MAX_FOUND_CHARS``, the rest counted.
    ``failed_lines`` are raw lines that did not parse (tuple format only; the first
    ``MAX_FAILED_LINES``, clipped, are sent back to be re-emitted correctly).
    """
    parts = [_context(section_path, headings) + _text_block(text)]
    found = _found_outline(found_entities)
    if found:
        parts.append(found)
    failed = [_clip(s, MAX_FAILED_LINE_CHARS) for s in failed_lines if s and s.strip()][:MAX_FAILED_LINES]
    if failed and fmt == "tuple":
        parts.append("These lines were malformed; re-emit them correctly:\n" + "\n".join(failed))
    empty = f"only {COMPLETE}" if fmt == "tuple" else "empty lists"
    parts.append(
        "Give ONLY entities, relations and attributes missed so far (relations may link already extracted "
        f"entities); do not repeat earlier records. If nothing was missed, answer {empty}."
    )
    return [
        {"role": "system", "content": system_prompt(fmt, entity_types, max_attributes)},
        {"role": "user", "content": "\n".join(parts)},
    ]


def prompt_hash(messages: Sequence[Mapping], model: str, params: Mapping) -> str:
    """Cache key of one request: sha256 over a canonical JSON of model, PROMPT_VERSION, messages, params.

    Key order never matters (keys are sorted at every level). For ``structured`` requests, put
    whatever shapes the tool schema (e.g. the response model name or its schema hash) into ``params``.
    """
    payload = {
        "model": model,
        "prompt_version": PROMPT_VERSION,
        "messages": [dict(m) for m in messages],
        "params": dict(params),
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


@lru_cache(maxsize=4)
def _encoding(name: str):
    import bpe_openai

    return bpe_openai.get_encoding(name)


def count_message_tokens(messages: Sequence[Mapping], encoding: str = "o200k_base") -> int:
    """Prompt tokens of a chat request: content tokens + 3 per message + 3 reply priming (OpenAI's rule)."""
    enc = _encoding(encoding)
    return sum(len(enc.encode_ordinary(str(m.get("content") or ""))) + 3 for m in messages) + 3


SUMMARY_SYSTEM = (
    "You merge descriptions of one entity from a knowledge graph into a single neutral paragraph of at most "
    "60 words. Use only facts present in the descriptions; keep names as written; no preamble."
)


def build_summary_messages(name: str, entity_type: str, fragments: Sequence[str], max_fragments: int = 30) -> list[dict]:
    """A request to condense an entity's description fragments (used past a fragment-count threshold)."""
    listed = "\n".join(f"- {_clip(f, 300)}" for f in list(fragments)[:max_fragments])
    return [
        {"role": "system", "content": SUMMARY_SYSTEM},
        {"role": "user", "content": f"Entity: {name} ({entity_type})\nDescriptions:\n{listed}"},
    ]

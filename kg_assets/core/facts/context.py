"""The seed's context block: what is known about a user, ready to paste into a prompt.

    User: Lena Ortiz
    Known facts:
    - moved to Lisbon
    - runs support for Qubitline at the Quantum Dynamics Lab

Only active facts; most important first, then most recent, then what is still true before what is past (a
message saying "moved to Lisbon, before that lived in Boston": a fact holding a slot such as
location/residence is still true even when told in the past tense), then most confident. Facts are added whole, in that
order, until the next one would take the block past `max_chars`; a last line then says how many were left out (if
that line fits too).
"""

from __future__ import annotations

import polars as pl

from kg_assets.core.facts.keys import SLOT_KEYS

DEFAULT_CONTEXT_CHARS = 1000


def context_order(facts: pl.DataFrame) -> pl.DataFrame:
    """USER_FACTS rows in the block's order (module docstring)."""
    past = (pl.col("temporal") == "past") & ~pl.col("fact_key").is_in(list(SLOT_KEYS)).fill_null(False)
    return (facts.with_columns(past.alias("_past"))
            .sort(["importance", "valid_from", "_past", "confidence", "fact_id"],
                  descending=[True, True, False, True, False], nulls_last=True)
            .drop("_past"))


def context_block(user_facts: pl.DataFrame, user_id: str, display_name: str | None = None,
                  max_chars: int = DEFAULT_CONTEXT_CHARS) -> str:
    header = f"User: {display_name or user_id}\nKnown facts:"
    if max_chars < len(header):
        raise ValueError(f"max_chars {max_chars} is shorter than the block's header ({len(header)} characters)")
    facts = context_order(user_facts.filter((pl.col("user_id") == user_id) & pl.col("is_active")))["content"].to_list()
    lines = [header]
    size = len(header)
    shown = 0
    for content in facts:
        line = f"- {content}"
        if size + 1 + len(line) > max_chars:
            break
        lines.append(line)
        size += 1 + len(line)
        shown += 1
    if shown < len(facts):
        more = f"({len(facts) - shown} more facts not shown)"
        if size + 1 + len(more) <= max_chars:
            lines.append(more)
    return "\n".join(lines)

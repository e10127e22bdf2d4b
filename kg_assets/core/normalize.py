"""Entity name normalization and stable ids.

Rules (from the seed table): "John Doe" / "john doe" -> JOHN_DOE, "the Company" -> COMPANY,
"John's team" -> JOHN_TEAM. Diacritics are folded so "Zoë" and "Zoe" meet.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

import polars as pl

_LEADING_ARTICLE = r"^(?:the|a|an)\s+"
_POSSESSIVE = r"['’]s\b"
_NON_WORD = r"[^0-9A-Za-z]+"


def normalize_name(name: str) -> str:
    """Normalize one surface form to its UPPER_SNAKE key."""
    folded = unicodedata.normalize("NFKD", name)
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    folded = re.sub(_LEADING_ARTICLE, "", folded.strip(), flags=re.IGNORECASE)
    folded = re.sub(_POSSESSIVE, "", folded)
    return re.sub(_NON_WORD, "_", folded).strip("_").upper()


def normalize_name_expr(expr: pl.Expr) -> pl.Expr:
    """The same rule as :func:`normalize_name`, vectorized for Polars."""
    return (
        expr.str.normalize("NFKD")
        .str.replace_all(r"\p{M}", "")
        .str.strip_chars()
        .str.replace(r"(?i)" + _LEADING_ARTICLE, "")
        .str.replace_all(_POSSESSIVE, "")
        .str.replace_all(_NON_WORD, "_")
        .str.strip_chars("_")
        .str.to_uppercase()
    )


def entity_id(entity_type: str, normalized: str) -> str:
    """`entity_` + sha256("TYPE::NORMALIZED")[:14]: the same name and type give the same id anywhere."""
    return "entity_" + hashlib.sha256(f"{entity_type}::{normalized}".encode()).hexdigest()[:14]


def stable_hash(*parts: str, length: int = 16) -> str:
    return hashlib.sha256("::".join(parts).encode()).hexdigest()[:length]


def with_entity_ids(frame: pl.DataFrame, type_col: str, name_col: str, out: str) -> pl.DataFrame:
    """Add `out` = entity_id(type, name) hashing each distinct pair once (names repeat a lot)."""
    pairs = frame.select(type_col, name_col).unique()
    pairs = pairs.with_columns(
        pl.struct(type_col, name_col)
        .map_elements(lambda s: entity_id(s[type_col], s[name_col]), return_dtype=pl.String)
        .alias(out)
    )
    return frame.join(pairs, on=[type_col, name_col], how="left", nulls_equal=True)

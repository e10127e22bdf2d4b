"""Entity name normalization and stable ids.

Rules (from the seed table): "John Doe" / "john doe" -> JOHN_DOE, "the Company" -> COMPANY,
"John's team" -> JOHN_TEAM. Diacritics are folded so "Zoë" and "Zoe" meet.

An entity id is made from the type and the normalized name, so a name is one entity corpus-wide. A
description is not a name: written without a capital ("people", "the sect", "girl"), what it refers to is
fixed only by its document, so its id also carries the document (:func:`id_scope_expr`).
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


def entity_id(entity_type: str, normalized: str, scope: str | None = None) -> str:
    """`entity_` + sha256("TYPE::NORMALIZED")[:14]: the same name and type give the same id anywhere; a
    description's id is sha256("TYPE::NORMALIZED::DOCUMENT"), the same only inside its document."""
    key = f"{entity_type}::{normalized}" if scope is None else f"{entity_type}::{normalized}::{scope}"
    return "entity_" + hashlib.sha256(key.encode()).hexdigest()[:14]


def is_description_expr(name: pl.Expr) -> pl.Expr:
    """A mention written in lower case ("people", "the sect", "12-year-old girl"): a description, not a name.
    It needs a lower-case letter, so a number ("200") and a name in a script without case stay names."""
    return name.str.contains(r"\p{Ll}") & ~name.str.contains(r"\p{Lu}")


def id_scope_expr(name: pl.Expr, document_id: pl.Expr) -> pl.Expr:
    """The scope of a mention's id: its document for a description, else null (the whole corpus). Every
    "people" of the corpus were one entity otherwise, joining the people of unrelated stories."""
    return pl.when(is_description_expr(name)).then(document_id).otherwise(pl.lit(None, pl.String))


def stable_hash(*parts: str, length: int = 16) -> str:
    return hashlib.sha256("::".join(parts).encode()).hexdigest()[:length]


def with_entity_ids(frame: pl.DataFrame, type_col: str, name_col: str, out: str,
                    scope_col: str | None = None) -> pl.DataFrame:
    """Add `out` = entity_id(type, name, scope) hashing each distinct triple once (names repeat a lot).
    Without `scope_col` every id is corpus-wide."""
    on = [type_col, name_col] if scope_col is None else [type_col, name_col, scope_col]
    pairs = frame.select(on).unique()
    pairs = pairs.with_columns(
        pl.struct(on)
        .map_elements(lambda s: entity_id(s[type_col], s[name_col], s[scope_col] if scope_col else None),
                      return_dtype=pl.String)
        .alias(out)
    )
    return frame.join(pairs, on=on, how="left", nulls_equal=True)

"""Entity name normalization and stable ids.

Rules (from the seed table): "John Doe" / "john doe" -> JOHN_DOE, "the Company" -> COMPANY,
"John's team" -> JOHN_TEAM. Diacritics are folded so "Zoë" and "Zoe" meet.

Every script keeps its letters, marks and digits (NFKC, upper-cased): "Владимир Иванов" -> ВЛАДИМИР_ИВАНОВ,
"阿尔托" -> 阿尔托. Marks are dropped only after a Latin or Greek letter (accents: "Αθήνα" and "ΑΘΗΝΑ"
meet), never after a letter of another script ("й", "が" and Devanagari vowel signs stay). A Latin letter
outside ASCII that has no plain form ("ø", "ß", "ł") stays a separator, as before, so no Latin id changes.

An entity id is made from the type and the normalized name, so a name is one entity corpus-wide. A
description is not a name: written without a capital ("people", "the sect", "girl"), what it refers to is
fixed only by its document, so its id also carries the document (:func:`id_scope_expr`). A concept written in
lower case ("machine learning", typed CONCEPT or TECHNOLOGY) is a name (:func:`is_description_expr`).

Relation keywords are a list: :func:`parse_keywords` is the one rule that reads a model's "works at; leads"
(and the string column of a warehouse made before the list) into one.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable

import polars as pl

_LEADING_ARTICLE = r"^(?:the|a|an)\s+"
_POSSESSIVE = r"['’]s\b"
# A word character: an ASCII letter or digit, or a letter, mark or digit of any script but Latin.
NON_WORD = r"[^0-9A-Za-z[[\p{L}\p{M}\p{N}]--\p{Latin}]]+"
# A mark is dropped after these bases (diacritics): Latin and Greek letters, ASCII digits, and anything
# not a letter or digit; kept after the letters and digits of every other script.
_MARK_DROPPING_BASE = r"[\p{Latin}\p{Greek}0-9]|[^\p{L}\p{N}\p{M}]"


# Letters of the Latin and Greek scripts (as the Polars regex's \p{Latin}, \p{Greek}) whose Unicode names
# do not start with LATIN or GREEK: modifier letters, Roman numerals, fullwidth forms, Kelvin, Ohm...
_LATIN_UNNAMED = ((0xAA, 0xAA), (0xBA, 0xBA), (0x2B0, 0x2B8), (0x2E0, 0x2E4), (0x1D2C, 0x1D5C), (0x1D9B, 0x1DBE),
                  (0x2071, 0x2071), (0x207F, 0x207F), (0x212A, 0x212B), (0x2132, 0x2132), (0x214E, 0x214E),
                  (0x2160, 0x2188), (0x2C7D, 0x2C7D), (0xA770, 0xA770), (0xA7F2, 0xA7F4), (0xA7F8, 0xA7F9),
                  (0xAB5C, 0xAB5F), (0xAB69, 0xAB69), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A), (0x10780, 0x107BA))
_GREEK_UNNAMED = ((0x1D5D, 0x1D61), (0x1DBF, 0x1DBF), (0x2126, 0x2126), (0x1D242, 0x1D244))


def _in(ch: str, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= ord(ch) <= hi for lo, hi in ranges)


def _is_latin(ch: str) -> bool:
    return unicodedata.name(ch, "").startswith("LATIN ") or _in(ch, _LATIN_UNNAMED)


def _latin_or_greek(ch: str) -> bool:
    return (_is_latin(ch) or _in(ch, _GREEK_UNNAMED)
            or (unicodedata.name(ch, "").startswith("GREEK ") and ch != "\u0374"))


def _is_word_char(ch: str) -> bool:
    if ch.isascii():
        return ch.isalnum()
    return unicodedata.category(ch)[0] in "LMN" and not _is_latin(ch)


def _drops_marks(base: str | None) -> bool:
    return (base is None or base.isascii() or unicodedata.category(base)[0] not in "LN"
            or _latin_or_greek(base))


def fold_marks(text: str) -> str:
    """NFKD, marks dropped after Latin and Greek letters (and non-letters), recomposed (NFC)."""
    if text.isascii():
        return text
    out: list[str] = []
    base: str | None = None
    for ch in unicodedata.normalize("NFKD", text):
        if unicodedata.category(ch)[0] == "M":
            if not _drops_marks(base):
                out.append(ch)
            continue
        base = ch
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def normalize_name(name: str) -> str:
    """Normalize one surface form to its UPPER_SNAKE key."""
    folded = fold_marks(name)
    folded = re.sub(_LEADING_ARTICLE, "", folded.strip(), flags=re.IGNORECASE)
    folded = re.sub(_POSSESSIVE, "", folded)
    return word_separated(folded).upper()


def word_separated(text: str) -> str:
    """Each run of non-word characters (:data:`NON_WORD`) as one "_", none at the ends."""
    if text.isascii():
        return re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_")
    snake = "".join(ch if _is_word_char(ch) else "_" for ch in text)
    return re.sub("_+", "_", snake).strip("_")


def fold_marks_expr(expr: pl.Expr) -> pl.Expr:
    """:func:`fold_marks`, vectorized for Polars."""
    return (expr.str.normalize("NFKD").str.replace_all(rf"(^|{_MARK_DROPPING_BASE})\p{{M}}+", "${1}")
            .str.normalize("NFC"))


def normalize_name_expr(expr: pl.Expr) -> pl.Expr:
    """The same rule as :func:`normalize_name`, vectorized for Polars."""
    return (
        fold_marks_expr(expr)
        .str.strip_chars()
        .str.replace(r"(?i)" + _LEADING_ARTICLE, "")
        .str.replace_all(_POSSESSIVE, "")
        .str.replace_all(NON_WORD, "_")
        .str.strip_chars("_")
        .str.to_uppercase()
    )


def entity_id(entity_type: str, normalized: str, scope: str | None = None) -> str:
    """`entity_` + sha256("TYPE::NORMALIZED")[:14]: the same name and type give the same id anywhere; a
    description's id is sha256("TYPE::NORMALIZED::DOCUMENT"), the same only inside its document."""
    key = f"{entity_type}::{normalized}" if scope is None else f"{entity_type}::{normalized}::{scope}"
    return "entity_" + hashlib.sha256(key.encode()).hexdigest()[:14]


# Types whose lower-case names are kinds, not individuals: "machine learning" is the same idea in every document.
CONCEPT_TYPES = ("CONCEPT", "TECHNOLOGY")
# A first word that points at one instance the text talks about ("the algorithm", "our method", "two approaches").
_INSTANCE_WORD = (r"(?i)^(?:the|a|an|this|that|these|those|my|our|your|his|her|its|their|some|several|many|each"
                  r"|every|another|such|one|two|three|four|five|six|seven|eight|nine|ten|dozens|hundreds|thousands"
                  r"|\S*\d\S*)\s")


def is_description_expr(name: pl.Expr, entity_type: pl.Expr) -> pl.Expr:
    """A mention written in lower case ("people", "the sect", "12-year-old girl") describes rather than names:
    what it refers to is fixed only by its document. A concept is the exception: typed CONCEPT or TECHNOLOGY
    and not opened by a determiner, possessive or number, a lower-case name ("machine learning", "dbt") names a
    kind, the same in every document; "the algorithm" or "two methods" still point at one story's instance.
    It needs a lower-case letter, so a number ("200") and a name in a script without case stay names."""
    lower_case = name.str.contains(r"\p{Ll}") & ~name.str.contains(r"\p{Lu}")
    concept = entity_type.is_in(CONCEPT_TYPES) & ~name.str.strip_chars().str.contains(_INSTANCE_WORD)
    return lower_case & ~concept


def id_scope_expr(name: pl.Expr, entity_type: pl.Expr, document_id: pl.Expr) -> pl.Expr:
    """The scope of a mention's id: its document for a description, else null (the whole corpus). Every
    "people" of the corpus were one entity otherwise, joining the people of unrelated stories."""
    return pl.when(is_description_expr(name, entity_type)).then(document_id).otherwise(pl.lit(None, pl.String))


def stable_hash(*parts: str, length: int = 16) -> str:
    return hashlib.sha256("::".join(parts).encode()).hexdigest()[:length]


def stable_hash_expr(*parts: pl.Expr, prefix: str = "", length: int = 16) -> pl.Expr:
    """`prefix + stable_hash(*parts)` of each row, for whole columns: the parts joined in Polars, hashed in one pass
    over a list (a struct per row through `map_elements` costs several times more)."""
    def hashes(joined: pl.Series) -> pl.Series:
        return pl.Series([prefix + hashlib.sha256(text.encode()).hexdigest()[:length] for text in joined.to_list()],
                         dtype=pl.String)
    return pl.concat_str(parts, separator="::").map_batches(hashes, return_dtype=pl.String)


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


_KEYWORD_SEPARATORS = re.compile(r"[,;]")


def parse_keywords(keywords: str | Iterable[str | None] | None) -> list[str]:
    """Relation keywords as a list: each string split at commas and semicolons, every keyword's whitespace
    collapsed, empty ones dropped, repeats dropped case-insensitively (the first spelling kept), in order.

    "works at; Leads, , leads" -> ["works at", "Leads"]; None or "" -> []. A list is read item by item,
    so a list and the string that joins it give the same keywords."""
    if keywords is None:
        return []
    items = [keywords] if isinstance(keywords, str) else keywords
    seen: dict[str, str] = {}
    for item in items:
        for keyword in _KEYWORD_SEPARATORS.split(item or ""):
            keyword = " ".join(keyword.split())
            if keyword and keyword.casefold() not in seen:
                seen[keyword.casefold()] = keyword
    return list(seen.values())

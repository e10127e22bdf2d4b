"""Pure matching rules of search and context: query syntax, folding, scores, fuzzy matches, text spans.

Scores follow seed 002's order (an exact hit outranks a keyword hit):

| match | score | when |
|---|---|---|
| exact | 1.0 | the query equals a name or alias after folding, or after the pipeline's name normalization |
| prefix / token / containment | 0.7 | a folded name or alias starts with the query, has all its tokens, or contains it |
| fuzzy | 0.6 x similarity | RapidFuzz `ratio` of the folded strings >= 80 (so always below 0.7) |

For `attr:key=value`: 1.0 when the value equals the query value (compared as the attribute timeline
compares values), says the same under the timeline's value equivalences (`linking.values`: "CTO" finds
"Chief Technology Officer" when no other value of the key has those initials), or is the canonical name
of an entity the query value names ("QDL" finds the employer "Quantum Dynamics Lab"); 0.7 when the value
contains the query value as whole words ("cto" is not in "director"); `attr:key` alone: 1.0 for every
entity that has the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Literal

import polars as pl
from rapidfuzz import fuzz, process

from kg_assets.core.linking.values import value_classes
from kg_assets.core.normalize import normalize_name_expr
from kg_assets.core.temporal import normalize_key_expr, normalize_value_expr

EXACT_SCORE = 1.0
PARTIAL_SCORE = 0.7
FUZZY_WEIGHT = 0.6
FUZZY_CUTOFF = 80.0
DEFAULT_LIMIT = 10  # seed 002 caps entities at 10 (entityExtractionMaxEntities)

NAME_MATCHES = ("exact", "prefix", "token", "containment")  # by rank, as the storage query returns it
ATTR_MATCHES = ("exact", "containment")


@dataclass(frozen=True)
class Query:
    """A parsed search: `entity:NAME` or a bare NAME (kind "entity"), `attr:key[=value]` (kind "attr")."""

    kind: Literal["entity", "attr"]
    text: str = ""
    key: str = ""
    value: str | None = None


def parse_query(raw: str) -> Query:
    """Split the seed's prefix syntax; a bare word searches names and aliases."""
    text = (raw or "").strip()
    prefix, sep, rest = text.partition(":")
    prefix = prefix.strip().lower()
    if sep and prefix == "entity":
        name = rest.strip()
        if not name:
            raise ValueError("entity: needs a name, e.g. entity:Sarah Chen")
        return Query("entity", text=name)
    if sep and prefix == "attr":
        key, _, value = rest.partition("=")
        key = normalize_key(key)
        if not key:
            raise ValueError("attr: needs a key, e.g. attr:employer or attr:employer=Quantum Dynamics Lab")
        return Query("attr", key=key, value=value.strip() or None)
    if not text:
        raise ValueError("empty query: give a name, entity:NAME, attr:KEY or attr:KEY=VALUE")
    return Query("entity", text=text)


def _one(rule, text: str):
    """A Polars rule applied to one string: a query is keyed exactly as the stored names are."""
    return pl.select(rule(pl.lit(text, dtype=pl.String)).alias("v")).item()


def fold_expr(expr: pl.Expr) -> pl.Expr:
    """Case and diacritics folded, whitespace runs collapsed; punctuation kept (so `%` stays `%`)."""
    return (expr.str.normalize("NFKD").str.replace_all(r"\p{M}", "").str.to_lowercase()
            .str.replace_all(r"\s+", " ").str.strip_chars())


def tokens_expr(folded: pl.Expr) -> pl.Expr:
    return folded.str.extract_all(r"[\p{L}\p{N}]+")


def fold(text: str) -> str:
    return _one(fold_expr, text)


def tokens(text: str) -> list[str]:
    found = _one(lambda e: tokens_expr(fold_expr(e)), text)
    return [] if found is None else list(found)


def normalize_key(key: str) -> str:
    """An attribute key as the pipeline stores it ("HQ-location" -> hq_location)."""
    return _one(normalize_key_expr, key) or ""


def normalize_value(value: str) -> str:
    """An attribute value as the attribute timeline compares it."""
    return _one(normalize_value_expr, value) or ""


def equivalent_values(query_value: str, values: list[str]) -> list[str]:
    """The `values` that say what `query_value` says, by the attribute timeline's value equivalences.
    Search folds case, so a one-word query is also read in capitals, as an acronym ("cto" as "CTO")."""
    asked = {query_value, query_value.upper()} if len(query_value.split()) == 1 else {query_value}
    classes = value_classes(pl.DataFrame({"value": [*asked, *values]}), [], "value")
    query_classes = classes.filter(pl.col("value").is_in(list(asked)))["value_class"]
    return sorted(classes.filter(pl.col("value_class").is_in(query_classes.implode()) & ~pl.col("value").is_in(list(asked)))
                  ["value"])


def normalized_name(text: str) -> str:
    """The pipeline's entity name key ("the Company" -> COMPANY), computed as the lookup computes it."""
    return _one(normalize_name_expr, text) or ""


def name_match_score(rank: int) -> tuple[float, str]:
    """(score, match kind) of a storage rank: 0 exact, 1 prefix, 2 token, 3 containment."""
    return (EXACT_SCORE if rank == 0 else PARTIAL_SCORE), NAME_MATCHES[rank]


def fuzzy_matches(folded_query: str, choices: pl.DataFrame, limit: int) -> pl.DataFrame:
    """Best fuzzy surface per entity: entity_id, surface, similarity, score (FUZZY_WEIGHT x similarity)."""
    found = process.extract(folded_query, choices["folded"].to_list(), scorer=fuzz.ratio,
                            score_cutoff=FUZZY_CUTOFF, limit=None)
    if not found:
        return pl.DataFrame(schema={"entity_id": pl.String, "surface": pl.String, "similarity": pl.Float64,
                                    "score": pl.Float64})
    rows = choices[[index for _, _, index in found]].with_columns(
        pl.Series("similarity", [similarity for _, similarity, _ in found], dtype=pl.Float64))
    return (rows.sort(["similarity", "surface"], descending=[True, False])
            .unique("entity_id", keep="first", maintain_order=True).head(limit)
            .select("entity_id", "surface", "similarity",
                    (FUZZY_WEIGHT * pl.col("similarity") / 100).round(3).alias("score")))


def parse_time(value: str | datetime | date | None) -> datetime | None:
    """`--as-of`: an ISO date or date-time; a naive one is taken as UTC."""
    if value is None or isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    else:
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"not an ISO date or timestamp: {value!r} (e.g. 2025-06-01 or 2025-06-01T12:00:00Z)") from None
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


# ---- text spans (kg context) -----------------------------------------------------------------

_WORD = re.compile(r"\S+")
_EDGE_PUNCT = "\"'“”‘’()[]{}<>.,;:!?*"


def text_spans(text: str, max_words: int) -> pl.DataFrame:
    """Every run of 1..max_words whitespace-separated words: span_id, first/last word index, char start
    and end (edge punctuation trimmed), text."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    rows = []
    for first in range(len(words)):
        for last in range(first, min(first + max_words, len(words))):
            start, end = words[first][0], words[last][1]
            piece = text[start:end]
            stripped = piece.strip(_EDGE_PUNCT)
            if not stripped:
                continue
            start += piece.find(stripped)
            rows.append((first, last, start, start + len(stripped), stripped))
    frame = pl.DataFrame(rows, schema={"first_word": pl.Int64, "last_word": pl.Int64, "start": pl.Int64,
                                       "end": pl.Int64, "text": pl.String}, orient="row")
    return frame.with_row_index("span_id")


def pick_spans(matches: pl.DataFrame) -> pl.DataFrame:
    """Non-overlapping matched spans: longest first, then leftmost (a name is not also read as its parts)."""
    taken: set[int] = set()
    keep: list[int] = []
    ordered = matches.select("span_id", "first_word", "last_word", "start", "end").unique("span_id").sort(
        [pl.col("end") - pl.col("start"), "start"], descending=[True, False])
    for span_id, first, last, _, _ in ordered.iter_rows():
        words = set(range(first, last + 1))
        if words & taken:
            continue
        taken |= words
        keep.append(span_id)
    return matches.filter(pl.col("span_id").is_in(keep))


def snippet(text: str, names: list[str], width: int) -> str:
    """About `width` characters of text around the first occurrence of any of the names (case-folded),
    cut at word boundaries and marked with ellipses where cut."""
    lowered = text.lower()
    hits = [i for i in (lowered.find(n.lower()) for n in names if n) if i >= 0]
    at = min(hits) if hits else 0
    start = max(0, at - width // 3)
    end = min(len(text), start + width)
    if start > 0:
        start = text.find(" ", start) + 1 or start
    if end < len(text):
        end = text.rfind(" ", start, end) if text.rfind(" ", start, end) > start else end
    body = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else "")

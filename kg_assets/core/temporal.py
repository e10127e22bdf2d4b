"""Temporal entity attributes: attribute observations -> a versioned timeline per (entity_id, attr_key).

Pure Polars, no Dagster, no DuckDB. `build_entity_attributes` is a pure function of the *set* of
observations (plus documents and redirects): the same observations in any row order, delivered at once
or after earlier builds from a subset, give identical frames. It rebuilds the whole timeline every time,
so nothing depends on the order in which documents were ingested.

Rules
-----
* Time of an observation = its own ``observed_at`` when given (the chat message it was read from, see
  core/chat.py `observation_message_times`), else its document's ``document_date`` when known, else its
  ``ingested_at``. Only
  the current row of a versioned documents frame is used (``valid_until IS NULL`` when that column is
  present; then the latest ``ingested_at`` per document_id). Observations whose document has no time
  (or no document row) cannot be placed on a timeline and are dropped.
* Cleaning: ``attr_key`` is normalized again (diacritics folded, camelCase split, lowercase, every run of
  non-alphanumerics -> ``_``, trimmed of ``_``); rows with an empty key, an empty value or no entity are
  dropped. Exact duplicate observation rows count once (so re-feeding an overlapping union is harmless).
* Values are compared by equivalence class (`core.linking.values`, the linker's own name equivalences):
  the same name key (case, punctuation, diacritics, articles, honorifics before a name, corporate
  suffixes, country aliases fold) or an acronym and its only expansion among the entity's values for
  that key. "Quantum Dynamics Lab" and "the  quantum dynamics lab", "CTO" and "Chief Technology Officer"
  are the same value. The displayed ``value`` is the most frequent surface form (trimmed, whitespace
  collapsed) of that class for that (entity_id, attr_key) over all kept observations, ties the longer (an
  acronym's expansion), then alphabetical,
  so one value is spelled the same in every row, as written in a document; ``normalized_value`` is that
  form trimmed, lower-cased, whitespace collapsed and one leading ``"the "`` stripped.
* Redirects (``from_id -> to_id``, one hop, as stored by linking) are applied to ``entity_id`` first: the
  attributes of merged entities migrate to the canonical entity. At most one redirect per ``from_id`` is
  used (the latest ``created_at`` when present, then the smallest ``to_id``); self-redirects are ignored.
* Same time point = same observation time (same document time, to the microsecond) for the same
  canonical (entity_id, attr_key). When several value classes are observed at one time point, one
  wins, by in turn: (1) observed by the keeper itself (an observation whose own entity_id is the canonical
  id, i.e. was not redirected, and, when ``keepers`` is given, whose canonical id is in ``keepers``),
  (2) highest total confidence, (3) most observations, (4) alphabetical class key. Losing
  observations at that time point contribute nothing to the timeline (they stay in attribute_observations).
* Timeline per (entity_id, attr_key): the winners ordered by time; consecutive equal values form one
  row, ``valid_from`` = the first time of that run. A new value closes the previous row:
  ``valid_until`` = the next row's ``valid_from``; the last row is current (``valid_until`` NULL), so
  there is exactly one current row per key. History is kept: A, B, A gives three rows.
* Row ``confidence`` = the MAX of its observations' confidence (the best evidence for the value in that
  run; it does not drop when weaker corroboration arrives); null confidence counts as
  ``default_confidence`` (0.8). Same-time totals are summed in integer micro-units, so floating-point
  summation order cannot change a winner.
* Provenance: ``source_document_ids`` / ``source_chunk_ids`` (sorted, distinct) and
  ``observation_count`` of the observations that make the row. ``supersedes_value`` is the previous
  row's displayed value (NULL for the first), ``superseded_by_value`` the next one's (NULL when current).
* ``attribute_id`` = ``"attr_" + sha256("entity_id::attr_key::normalized_value::valid_from.isoformat()")[:16]``
  (``valid_from`` as an aware UTC datetime, e.g. ``2025-06-18T00:00:00+00:00``).
* Every closure yields one schemas.ATTRIBUTE_SUPERSESSIONS row (old -> new, ``relation_type`` "SUPERSEDES",
  ``superseded_at`` = the new row's ``valid_from``),
  ``supersession_id`` = ``"sup_" + sha256("old_attribute_id::new_attribute_id")[:16]``.
* Outputs are sorted (entity_id, attr_key, valid_from) and conform to the schemas below.
* Every rule above works inside one canonical entity: the rows of some entities, built from their observations
  alone, are those a build from every observation gives them. `attribute_digests` is what a consolidation compares
  to rebuild only the entities whose inputs changed.

SQL views
---------
``kg.entity_attributes_current``, ``_history``, ``_as_of`` and the table macro ``kg.entity_attributes_at(ts)``
are the SQL twins of `current_attributes` and `attributes_as_of`; their DDL lives with the rest of the
schema in ``kg_assets/storage/ddl.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.linking import apply_redirects
from kg_assets.core.linking.values import value_classes
from kg_assets.core.normalize import NON_WORD, fold_marks_expr, stable_hash_expr

DEFAULT_CONFIDENCE = 0.8
_CONF_UNITS = 1_000_000  # same-time totals are summed as integers: order-independent

_KEY = ["entity_id", "attr_key"]
# what the rows are built from: these columns of each observation (observed_at: the chat message's time, if any)
_INPUTS = {"observation_id": pl.String, "chunk_id": pl.String, "document_id": pl.String, "entity_id": pl.String,
           "attr_key": pl.String, "value": pl.String, "confidence": pl.Float64, "observed_at": schemas.TS}


def normalize_key_expr(expr: pl.Expr) -> pl.Expr:
    """snake_case key, vectorized twin of `core.extraction.sanitize.attr_key` ("HQ-location" -> hq_location)."""
    return (
        fold_marks_expr(expr)
        .str.strip_chars()
        .str.replace_all(r"([a-z0-9])([A-Z])", "${1}_${2}")
        .str.to_lowercase()
        .str.replace_all(NON_WORD, "_")
        .str.strip_chars("_")
    )


def surface_value_expr(expr: pl.Expr) -> pl.Expr:
    """A value as displayed: trimmed, whitespace runs collapsed."""
    return expr.str.replace_all(r"\s+", " ").str.strip_chars()


def normalize_value_expr(expr: pl.Expr) -> pl.Expr:
    """Comparison key of a value: trim, lowercase, collapse whitespace, strip one leading "the "."""
    return surface_value_expr(expr).str.to_lowercase().str.replace(r"^the\s+", "")


def _column(frame: pl.DataFrame, name: str, dtype: pl.DataType) -> pl.Expr:
    return (pl.col(name) if name in frame.columns else pl.lit(None)).cast(dtype).alias(name)


def _inputs(observations: pl.DataFrame) -> pl.DataFrame:
    return observations.select(*(_column(observations, name, dtype) for name, dtype in _INPUTS.items()))


def _document_times(documents: pl.DataFrame) -> pl.DataFrame:
    """document_id -> observed_at (document_date, else ingested_at) from the current document rows."""
    docs = documents
    if "valid_until" in docs.columns:
        docs = docs.filter(pl.col("valid_until").is_null())
    docs = docs.select(
        _column(docs, "document_id", pl.String),
        _column(docs, "document_date", schemas.TS),
        _column(docs, "ingested_at", schemas.TS),
    )
    return (
        docs.sort(["document_id", "ingested_at", "document_date"], descending=[False, True, True], nulls_last=True)
        .group_by("document_id", maintain_order=True).first()
        .select("document_id", pl.coalesce("document_date", "ingested_at").alias("observed_at"))
        .filter(pl.col("observed_at").is_not_null())
    )


def _resolved_redirects(redirects: pl.DataFrame | None) -> pl.DataFrame:
    """One to_id per from_id (latest created_at, then smallest to_id), self-redirects dropped."""
    if redirects is None or redirects.height == 0:
        return pl.DataFrame(schema={"from_id": pl.String, "to_id": pl.String})
    r = redirects.select(
        _column(redirects, "from_id", pl.String),
        _column(redirects, "to_id", pl.String),
        _column(redirects, "created_at", schemas.TS),
    ).filter(pl.col("from_id").is_not_null() & pl.col("to_id").is_not_null() & (pl.col("from_id") != pl.col("to_id")))
    return (
        r.sort(["from_id", "created_at", "to_id"], descending=[False, True, False], nulls_last=True)
        .group_by("from_id", maintain_order=True).first()
        .select("from_id", "to_id")
    )


def _prepare(
    observations: pl.DataFrame,
    documents: pl.DataFrame,
    redirects: pl.DataFrame | None,
    keepers: Iterable[str] | pl.Series | None,
    default_confidence: float,
) -> pl.DataFrame:
    """Clean, timed, redirected observations with their keeper flag."""
    obs = (
        _inputs(observations).rename({"observed_at": "_message_time"})
        .unique()
        .with_columns(
            normalize_key_expr(pl.col("attr_key")).alias("attr_key"),
            surface_value_expr(pl.col("value")).alias("surface"),
            normalize_value_expr(pl.col("value")).alias("normalized_value"),
            pl.col("confidence").fill_null(default_confidence),
        )
        .filter(
            pl.col("entity_id").is_not_null()
            & (pl.col("attr_key").str.len_chars() > 0)
            & (pl.col("normalized_value").str.len_chars() > 0)
        )
        .join(_document_times(documents), on="document_id", how="inner")
        .with_columns(pl.coalesce("_message_time", "observed_at").alias("observed_at"),
                      pl.col("entity_id").alias("observed_entity_id"))
        .drop("_message_time")
    )
    obs = apply_redirects(obs, _resolved_redirects(redirects), ["entity_id"])
    # equivalent values of the (canonical) entity's attribute are one value: "CTO" = "Chief Technology Officer"
    obs = obs.join(value_classes(obs, _KEY, "surface"), on=[*_KEY, "surface"], how="left")
    own = pl.col("observed_entity_id") == pl.col("entity_id")
    if keepers is not None:
        own = own & pl.col("entity_id").is_in(pl.Series(list(keepers), dtype=pl.String).implode())
    return obs.with_columns(own.alias("is_keeper"))


def _displayed_values(obs: pl.DataFrame) -> pl.DataFrame:
    """(entity_id, attr_key, value_class) -> most frequent surface form, ties the longer (an acronym's
    expansion: "Chief Technology Officer" over "CTO"), then alphabetical, and its normalized_value."""
    group = [*_KEY, "value_class"]
    return (
        obs.group_by(*group, "surface").len().with_columns(pl.col("surface").str.len_chars().alias("_chars"))
        .sort([*group, "len", "_chars", "surface"], descending=[False, False, False, True, True, False])
        .group_by(group, maintain_order=True).first()
        .select(*group, pl.col("surface").alias("value"), normalize_value_expr(pl.col("surface")).alias("normalized_value"))
    )


def _time_point_winners(obs: pl.DataFrame) -> pl.DataFrame:
    """One value class per (entity_id, attr_key, observed_at): keeper, total confidence, count, a-z."""
    point = [*_KEY, "observed_at"]
    candidates = obs.group_by(*point, "value_class").agg(
        pl.col("is_keeper").any().alias("keeper"),
        (pl.col("confidence") * _CONF_UNITS).round().cast(pl.Int64).sum().alias("total_confidence"),
        pl.len().alias("n"),
    )
    return (
        candidates.sort(
            [*point, "keeper", "total_confidence", "n", "value_class"],
            descending=[False, False, False, True, True, True, False],
        )
        .group_by(point, maintain_order=True).first()
        .select(*point, "value_class")
    )


def _iso_utc(column: str) -> pl.Expr:
    """`datetime.isoformat()` of a UTC time, as the ids were first made: no fraction when it has no microseconds."""
    at = pl.col(column).dt.convert_time_zone("UTC")
    return (pl.when(at.dt.microsecond() == 0).then(at.dt.strftime("%Y-%m-%dT%H:%M:%S+00:00"))
            .otherwise(at.dt.strftime("%Y-%m-%dT%H:%M:%S%.6f+00:00")))


def _with_attribute_ids(rows: pl.DataFrame) -> pl.DataFrame:
    return rows.with_columns(stable_hash_expr(pl.col("entity_id"), pl.col("attr_key"), pl.col("normalized_value"),
                                              _iso_utc("valid_from"), prefix="attr_").alias("attribute_id"))


def build_entity_attributes(
    observations: pl.DataFrame,
    documents: pl.DataFrame,
    redirects: pl.DataFrame | None = None,
    keepers: Iterable[str] | pl.Series | None = None,
    *,
    default_confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(entity_attributes, supersessions) from ALL current observations; see the module rules.

    `observations`: ATTRIBUTE_OBSERVATIONS rows; `documents`: document_id, document_date, ingested_at
    (valid_until honoured when present); `redirects`: from_id -> to_id (ENTITY_ALIASES), may be None;
    `keepers`: canonical ids whose own observations win same-time conflicts against merged aliases
    (None = every canonical entity).
    """
    obs = _prepare(observations, documents, redirects, keepers, default_confidence)
    if obs.height == 0:
        return schemas.empty(schemas.ENTITY_ATTRIBUTES), schemas.empty(schemas.ATTRIBUTE_SUPERSESSIONS)

    point = [*_KEY, "observed_at"]
    winners = _time_point_winners(obs).sort(point)
    winners = winners.with_columns(
        (pl.col("value_class") != pl.col("value_class").shift(1).over(_KEY)).fill_null(True).alias("changed")
    ).with_columns(pl.col("changed").cast(pl.Int64).cum_sum().over(_KEY).alias("run"))

    contributing = obs.join(
        winners.select(*point, "value_class", "run"), on=[*point, "value_class"], how="inner"
    )
    rows = contributing.group_by(*_KEY, "run").agg(
        pl.col("value_class").first(),
        pl.col("observed_at").min().alias("valid_from"),
        pl.col("confidence").max(),
        pl.col("document_id").drop_nulls().unique().sort().alias("source_document_ids"),
        pl.col("chunk_id").drop_nulls().unique().sort().alias("source_chunk_ids"),
        pl.len().cast(pl.Int64).alias("observation_count"),
    )
    rows = (
        rows.join(_displayed_values(obs), on=[*_KEY, "value_class"], how="left")
        .sort([*_KEY, "valid_from"])
        .pipe(_with_attribute_ids)
        .with_columns(
            pl.col("valid_from").shift(-1).over(_KEY).alias("valid_until"),
            pl.col("value").shift(1).over(_KEY).alias("supersedes_value"),
            pl.col("value").shift(-1).over(_KEY).alias("superseded_by_value"),
            pl.col("attribute_id").shift(1).over(_KEY).alias("old_attribute_id"),
        )
    )

    supersessions = (
        rows.filter(pl.col("old_attribute_id").is_not_null())
        .select(
            *_KEY,
            pl.col("supersedes_value").alias("old_value"),
            pl.col("value").alias("new_value"),
            pl.col("valid_from").alias("superseded_at"),
            "old_attribute_id",
            pl.col("attribute_id").alias("new_attribute_id"),
            pl.lit("SUPERSEDES").alias("relation_type"),
        )
        .with_columns(stable_hash_expr(pl.col("old_attribute_id"), pl.col("new_attribute_id"), prefix="sup_")
                      .alias("supersession_id"))
    )
    return (
        schemas.conform(rows, schemas.ENTITY_ATTRIBUTES),
        schemas.conform(supersessions.sort([*_KEY, "superseded_at"]), schemas.ATTRIBUTE_SUPERSESSIONS),
    )


def current_attributes(entity_attributes: pl.DataFrame) -> pl.DataFrame:
    """The current rows (valid_until NULL): one per (entity_id, attr_key)."""
    return entity_attributes.filter(pl.col("valid_until").is_null())


def resolve_entity_values(observations: pl.DataFrame, mentions: pl.DataFrame, entities: pl.DataFrame) -> pl.DataFrame:
    """Rewrite attribute values that name a linked entity to that entity's canonical name.

    "QDL" and "Quantum Dynamics Lab" as an employer are one value once linking made them one entity.
    `mentions` must already carry canonical entity ids (redirects applied); a surface name used for
    several entities resolves to the one with the most mentions.
    """
    names = (
        mentions.select(normalize_value_expr(pl.col("name")).alias("_value_key"), "entity_id")
        .unique()
        .join(entities.select("entity_id", pl.col("name").alias("_canonical"), "mention_count"), on="entity_id")
        .sort(["_value_key", "mention_count", "entity_id"], descending=[False, True, False])
        .unique("_value_key", keep="first", maintain_order=True)
        .select("_value_key", "_canonical")
    )
    return (
        observations.with_columns(normalize_value_expr(pl.col("value")).alias("_value_key"))
        .join(names, on="_value_key", how="left")
        .with_columns(pl.coalesce("_canonical", "value").alias("value"))
        .drop("_value_key", "_canonical")
    )


ATTRIBUTE_RULES_VERSION = "attributes-1"  # in every digest: rows made under other rules are made again


def with_canonical_ids(observations: pl.DataFrame, redirects: pl.DataFrame | None) -> pl.DataFrame:
    """`observations` with `canonical_id`: the entity whose attribute rows an observation is part of."""
    return apply_redirects(observations.with_columns(pl.col("entity_id").alias("canonical_id")),
                           _resolved_redirects(redirects), ["canonical_id"])


def attribute_digests(observations: pl.DataFrame, documents: pl.DataFrame) -> pl.DataFrame:
    """(entity_id, digest) per canonical entity: a digest of everything its attribute rows are built from (its
    observations, values as resolved, with their documents' times and the ids they were observed under) and of the
    rules' version. An entity whose digest is the same has the same rows. `observations` carry their `canonical_id`
    (`with_canonical_ids`)."""
    times = _document_times(documents).rename({"observed_at": "_document_time"})
    obs = _inputs(observations).with_columns(observations["canonical_id"])
    hashed = obs.filter(pl.col("canonical_id").is_not_null()).join(times, on="document_id", how="left").select(
        "canonical_id", pl.struct(*_INPUTS, "_document_time").hash(seed=0).alias("_h"))
    low, high = (pl.col("_h") % (1 << 32)).cast(pl.Int64).sum(), (pl.col("_h") // (1 << 32)).cast(pl.Int64).sum()
    return hashed.group_by("canonical_id").agg(pl.len().alias("_n"), low.alias("_low"), high.alias("_high")).select(
        pl.col("canonical_id").alias("entity_id"),
        pl.format("{}:{}:{}:{}", "_n", "_low", "_high", pl.lit(ATTRIBUTE_RULES_VERSION)).alias("digest"))


def attributes_as_of(entity_attributes: pl.DataFrame, when: datetime) -> pl.DataFrame:
    """Rows valid at `when`: valid_from <= when < coalesce(valid_until, +inf). Naive `when` is UTC."""
    at = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    at_lit = pl.lit(at.astimezone(UTC)).cast(schemas.TS)
    return entity_attributes.filter(
        (pl.col("valid_from") <= at_lit) & (pl.col("valid_until").is_null() | (at_lit < pl.col("valid_until")))
    )

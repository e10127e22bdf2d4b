"""Chat users: the name each speaker goes by and the person entity of the graph that name is.

A user's name is their latest display name; without one, the name they introduced themselves with: the earliest
active fact that is "is called / is named / goes by" a name, or "is" + a name of capitalised words alone
("is Lena Ortiz") or before a comma ("is Ana Ribeiro, a PhD student at ...", two words at least). The name is linked to the current PERSON
entity whose normalized name, or the normalized form of one of whose aliases, equals the name's normalized
form (normalize.py: case, diacritics, punctuation folded); when several match, the most mentioned one wins.
"""

from __future__ import annotations

import re

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.normalize import normalize_name, normalize_name_expr

_NAME = r"([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,3})"
_INTRODUCTIONS = (
    re.compile(rf"^(?:is called|is named|goes by|their name is|is) {_NAME}$"),
    re.compile(r"^is ([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){1,3}),"),
)


def introduced_name(content: str) -> str | None:
    """The name a fact introduces ("is Lena Ortiz" -> "Lena Ortiz"), or None."""
    for pattern in _INTRODUCTIONS:
        if match := pattern.match(content.strip()):
            return match.group(1)
    return None


def build_chat_users(messages: pl.DataFrame, user_facts: pl.DataFrame, entities: pl.DataFrame) -> pl.DataFrame:
    """CHAT_USERS rows: one per user with a current message (MESSAGES), named and linked (module rules).

    `user_facts` are USER_FACTS rows; `entities` current entities (entity_id, name, normalized_name,
    entity_type, aliases, mention_count).
    """
    if messages.height == 0:
        return schemas.empty(schemas.CHAT_USERS)
    users = messages.group_by("user_id").agg(
        pl.col("display_name").sort_by("sent_at").drop_nulls().last().alias("display_name"),
        pl.len().cast(pl.Int64).alias("message_count"),
        pl.col("document_id").n_unique().cast(pl.Int64).alias("document_count"),
        pl.col("sent_at").min().alias("first_message_at"),
        pl.col("sent_at").max().alias("last_message_at"),
    )
    introduced: dict[str, str] = {}
    active = user_facts.filter(pl.col("is_active")).sort(["valid_from", "fact_id"])
    for user, content in active.select("user_id", "content").iter_rows():
        if user not in introduced and (name := introduced_name(content)) is not None:
            introduced[user] = name
    users = users.with_columns(
        pl.col("user_id").replace_strict(introduced, default=None, return_dtype=pl.String).alias("_introduced"),
    ).with_columns(
        pl.coalesce("display_name", "_introduced").alias("name"),
        pl.when(pl.col("display_name").is_not_null()).then(pl.lit("display_name"))
        .when(pl.col("_introduced").is_not_null()).then(pl.lit("self_introduction")).alias("name_source"),
    )
    users = users.with_columns(
        pl.col("name").map_elements(normalize_name, return_dtype=pl.String).alias("_key"))
    persons = entities.filter(pl.col("entity_type") == "PERSON")
    keys = pl.concat([
        persons.select("entity_id", pl.col("normalized_name").alias("_key")),
        persons.select("entity_id", pl.col("aliases")).explode("aliases").drop_nulls("aliases")
        .select("entity_id", normalize_name_expr(pl.col("aliases")).alias("_key")),
    ]).unique()
    ranked = (
        keys.join(persons.select("entity_id", pl.col("name").alias("entity_name"), "mention_count"), on="entity_id")
        .sort(["mention_count", "entity_id"], descending=[True, False])
        .unique("_key", keep="first", maintain_order=True)
        .drop("mention_count")
    )
    linked = users.join(ranked, on="_key", how="left").sort("user_id")
    return schemas.conform(linked, schemas.CHAT_USERS)

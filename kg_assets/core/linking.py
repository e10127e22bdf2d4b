"""Entity linking: which extracted entity ids name the same real-world entity.

A linker returns redirects (from_id -> to_id with method, score and evidence) instead of rewriting
ids, so every merge is a row that can be audited and undone. The baseline links by exact id: the same
normalized name and type already share an id (see `normalize.entity_id`), so it redirects nothing.
"""

from __future__ import annotations

from typing import Protocol

import polars as pl

from kg_assets.core import schemas


class Linker(Protocol):
    name: str

    def link(self, mentions: pl.DataFrame) -> pl.DataFrame:
        """Redirect rows (ENTITY_ALIASES contract) for the given ENTITY_MENTIONS frame."""
        ...


class ExactIdLinker:
    name = "exact_id"

    def link(self, mentions: pl.DataFrame) -> pl.DataFrame:
        return schemas.empty(schemas.ENTITY_ALIASES)


def apply_redirects(frame: pl.DataFrame, redirects: pl.DataFrame, columns: list[str]) -> pl.DataFrame:
    """Replace ids in `columns` by their redirect target (one hop: redirects are stored resolved)."""
    mapping = redirects.select(pl.col("from_id"), pl.col("to_id"))
    for column in columns:
        frame = (
            frame.join(mapping.rename({"from_id": column}), on=column, how="left")
            .with_columns(pl.coalesce("to_id", column).alias(column))
            .drop("to_id")
        )
    return frame

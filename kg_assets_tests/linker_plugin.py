"""A small linker plug-in for the tests (`KG_LINKER=kg_assets_tests.linker_plugin:SameNameLinker`): a real
module loaded by name, as a user's embedding linker would be."""

import polars as pl


class SameNameLinker:
    """Links the entity ids whose names are equal ignoring case and type: each to the smallest id of its name."""

    name = "same_name"
    version = "same-name-1"

    def link(self, mentions: pl.DataFrame, overrides: pl.DataFrame | None = None) -> pl.DataFrame:
        ids = mentions.select("entity_id", pl.col("name").str.to_lowercase().alias("key")).unique()
        canonical = ids.group_by("key").agg(pl.col("entity_id").min().alias("to_id"))
        return (ids.join(canonical, on="key").filter(pl.col("entity_id") != pl.col("to_id"))
                .select(pl.col("entity_id").alias("from_id"), "to_id", pl.lit("same_name").alias("method"),
                        pl.lit(1.0).alias("score"), pl.col("key").alias("evidence"))
                .sort("from_id"))


class NoColumnsLinker:
    """A broken plug-in: its rows are not redirects."""

    name = "broken"
    version = "0"

    def link(self, mentions: pl.DataFrame, overrides: pl.DataFrame | None = None) -> pl.DataFrame:
        return pl.DataFrame({"entity": mentions["entity_id"].head(1)})


class ColumnsSeenLinker(SameNameLinker):
    """SameNameLinker that declares the mention columns it reads and keeps those it was given."""

    name = "columns_seen"
    mention_columns = ("entity_id", "name")
    seen: list[list[str]] = []

    def link(self, mentions: pl.DataFrame, overrides: pl.DataFrame | None = None) -> pl.DataFrame:
        ColumnsSeenLinker.seen.append(mentions.columns)
        return super().link(mentions, overrides)


class UnknownColumnLinker(SameNameLinker):
    """Declares a mention column that does not exist."""

    mention_columns = ("entity_id", "surname")


def make_linker() -> SameNameLinker:
    """A factory, as KG_LINKER may name one instead of a class."""
    return SameNameLinker()

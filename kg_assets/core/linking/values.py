"""Which attribute values say the same thing: the linker's name equivalences applied to values.

"Chief Technology Officer" and "CTO", "Northwind Robotics Inc." and "Northwind Robotics", "Dr. Alan Okafor"
and "Alan Okafor", "U.S." and "United States" are one value. Two values of one group (an entity's
attribute) are equivalent when
  * their name keys are equal (`name_keys.with_name_keys` with the VALUE type: case, punctuation,
    diacritics, possessives, dotted initials, articles, honorifics before a name, corporate suffixes and
    country aliases fold), or
  * one is an acronym written in capitals whose letters are the initials of the other
    (`name_keys.acronym_forms`, every word counted as a content word whatever its case), and of no other
    value of the group: "CTO" next to "Chief Technology Officer" and "Chief Trust Officer" stays apart.
"""

from __future__ import annotations

import polars as pl

from kg_assets.core.linking.name_keys import VALUE, acronym_forms, with_name_keys


def value_classes(frame: pl.DataFrame, group: list[str], value: str) -> pl.DataFrame:
    """The distinct (*group, value) rows of `frame` with `value_class`, equal for equivalent values of a
    group: the value's name key, or for an acronym the key of its one expansion. Independent of row order."""
    distinct = (
        frame.select(*group, value).unique().sort(*group, value)
        .with_row_index("idx").with_columns(pl.col("idx").cast(pl.Int64), pl.lit(VALUE).alias("_type"))
    )
    # a key is a function of the text alone: each distinct text is keyed once (cities and employers repeat)
    texts = with_name_keys(distinct.select(value, "_type").unique(value), name=value, entity_type="_type").drop("_type")
    keyed = distinct.join(texts, on=value, how="left").with_columns(
        # a value with no letters or digits keeps its own lower-case text as its key
        pl.when(pl.col("key") != "").then(pl.col("key")).otherwise(pl.col(value).str.to_lowercase()).alias("key"))
    shorts = keyed.filter(pl.col("is_acronym")).select(*group, "idx", pl.col("key").alias("h_key"))
    longs = keyed.filter(pl.col("n_tok") >= 2)
    expanded = pl.DataFrame(schema={"idx": pl.Int64, "_class": pl.String})
    if shorts.height and longs.height:
        forms = acronym_forms(longs, tokens="up").join(longs.select("idx", *group, pl.col("key").alias("_class")),
                                                         on="idx")
        candidates = shorts.join(forms.drop("idx"), on=[*group, "h_key"])
        expanded = (candidates.group_by("idx").agg(pl.col("_class").unique())
                    .filter(pl.col("_class").list.len() == 1)
                    .select("idx", pl.col("_class").list.first()))
    return (
        keyed.join(expanded, on="idx", how="left")
        .select(*group, value, pl.coalesce("_class", "key").alias("value_class"))
    )

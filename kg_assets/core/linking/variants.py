"""Name variants only the corpus can confirm (name-rules-8): a plural beside its singular, and a name beside the
same name qualified by the organisation that makes it; and (name-rules-15) a name with a German umlaut beside the same
name with the umlaut spelled out ("Zoë Müller" and "Zoe Mueller").

Both work on keys (`name_keys.with_name_keys`) with the reading each id's documents give it
(`type_vote.resolved_types`), and both need the other form written as a name somewhere in the corpus, so neither
invents a name. People and places are left out: "James Adams" is not "James Adam", and a place qualified by a
word is usually another place. On the DWIE dev articles the plural rule joined "Christian Democrats" to
"Christian Democrat", rightly, and "European Championships" (an event) to "European Championship", wrongly:
events are left out of it.
"""

from __future__ import annotations

import polars as pl

from kg_assets.core.linking.clusters import OTHER
from kg_assets.core.linking.name_keys import COMPANY_DESCRIPTORS, with_name_keys

NOT_VARIED = ("PERSON", "LOCATION")
# The longest maker written before a product's name ("Northwind", "Helix Sensors", "Deutsche Welle").
MAX_MAKER_TOKENS = 3
# German's own spelling of its letters where a keyboard or a system has none. Folding diacritics alone makes
# "Müller" MULLER, and the same person written "Mueller" MUELLER.
UMLAUT_SPELLINGS = {"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue", "ß": "ss"}


def _compatible(left: str, right: str) -> pl.Expr:
    """Two readings of one thing: the same, or one of them untyped (the extractor could not tell)."""
    return (pl.col(left) == pl.col(right)) | (pl.col(left) == OTHER) | (pl.col(right) == OTHER)


def plural_variants(readings: pl.DataFrame) -> pl.DataFrame:
    """(idx, target): a name of two words or more whose last word is a plural in -s, and the id of the same name
    in the singular ("Northwind Atlas Arms" -> "Northwind Atlas Arm"), when the corpus writes the singular."""
    # an event's name is often a plural of its own ("Olympics", "European Championships" is not the Championship)
    varied = readings.filter(~pl.col("reading").is_in([*NOT_VARIED, "EVENT"]))
    plural = varied.filter(pl.col("key").str.contains(r" \S*[^S\s]S$")).select(
        "idx", pl.col("key").str.slice(0, pl.col("key").str.len_chars() - 1).alias("singular"), "reading")
    return (plural.join(varied.select(pl.col("idx").alias("target"), pl.col("key").alias("singular"),
                                      pl.col("reading").alias("target_reading")), on="singular")
            .filter(_compatible("reading", "target_reading")).select("idx", "target").sort("idx", "target"))


def maker_names(readings: pl.DataFrame) -> pl.DataFrame:
    """The names an organisation is written by before its products: its key, and its leading words when every
    word left out only says what kind of company it is ("Northwind" of "Northwind Robotics")."""
    orgs = readings.filter(pl.col("reading") == "ORGANIZATION").select(pl.col("key").str.split(" ").alias("w"))
    descriptor = pl.element().is_in(COMPANY_DESCRIPTORS)
    leading = (orgs.with_columns(pl.col("w").list.eval(pl.when(~descriptor).then(pl.int_range(pl.len()))).list.max()
                                 .alias("last_name_word"))
               .filter(pl.col("last_name_word").is_not_null())
               .select(pl.col("w").list.slice(0, pl.col("last_name_word") + 1).list.join(" ").alias("maker")))
    return pl.concat([orgs.select(pl.col("w").list.join(" ").alias("maker")), leading]).unique()


def maker_qualified_variants(readings: pl.DataFrame) -> pl.DataFrame:
    """(idx, target): a name that starts with the name of an organisation of the corpus, and the id of the rest of
    it, two words or more, written alone ("Northwind Atlas Arm C2" -> "Atlas Arm C2", "UN Security Council" ->
    "Security Council"): the maker before a product or the parent before a body names the same thing."""
    makers = maker_names(readings)
    varied = readings.filter(~pl.col("reading").is_in(NOT_VARIED))
    words = varied.select("idx", "reading", pl.col("key").str.split(" ").alias("w"))
    splits = pl.concat([
        words.filter(pl.col("w").list.len() >= cut + 2).select(
            "idx", "reading", pl.col("w").list.slice(0, cut).list.join(" ").alias("maker"),
            pl.col("w").list.slice(cut).list.join(" ").alias("rest"))
        for cut in range(1, MAX_MAKER_TOKENS + 1)])
    rest = varied.select(pl.col("idx").alias("target"), pl.col("key").alias("rest"),
                         pl.col("reading").alias("target_reading"))
    # ... the rest names a thing, not only a kind of company ("Zeta Holdings Partners" is no maker's "Holdings
    # Partners"), and one maker only is written before it (else which one makes it is unknown)
    kind_only = pl.col("rest").str.split(" ").list.eval(pl.element().is_in(COMPANY_DESCRIPTORS)).list.all()
    pairs = (splits.filter(~kind_only).join(makers, on="maker", how="semi").join(rest, on="rest")
             .filter(_compatible("reading", "target_reading") & (pl.col("idx") != pl.col("target"))))
    one_maker = pairs.group_by("target").agg(pl.col("maker").n_unique().alias("makers")).filter(pl.col("makers") == 1)
    return pairs.join(one_maker, on="target", how="semi").select("idx", "target").unique().sort("idx", "target")


def umlaut_spellings(nodes: pl.DataFrame, readings: pl.DataFrame) -> pl.DataFrame:
    """(idx, target): a name written with ä, ö, ü or ß and the id of the same name written with ae, oe, ue or ss
    ("Zoe Mueller" -> "Zoë Müller"), of one reading or one of them untyped. People are included: it is one name in
    two spellings, not two names. Both spellings must be in the corpus."""
    written = nodes.filter(pl.col("name").str.contains("[äöüÄÖÜß]"))
    if written.height == 0:
        return pl.DataFrame(schema={"idx": pl.Int64, "target": pl.Int64})
    spelled = with_name_keys(written.select(
        "idx", pl.col("name").str.replace_many(list(UMLAUT_SPELLINGS), list(UMLAUT_SPELLINGS.values())), "entity_type"))
    spelled = spelled.filter(pl.col("key") != "").select(pl.col("idx").alias("target"), "key").join(
        readings.select(pl.col("idx").alias("target"), pl.col("reading").alias("target_reading")), on="target")
    return (readings.select("idx", "key", "reading").join(spelled, on="key")
            .filter(_compatible("reading", "target_reading") & (pl.col("idx") != pl.col("target")))
            .select(pl.col("idx").cast(pl.Int64), pl.col("target").cast(pl.Int64)).unique().sort("idx", "target"))

"""Name keys: the folded form of a name that decides matches, and the handles of long forms.

The entity keeps its own name: the key only decides which ids may name the same entity. The lexicons
below are general lists of words that are not part of a name (articles, honorifics, corporate suffixes),
never names taken from a data set.
"""

from __future__ import annotations

import re

import polars as pl

from kg_assets.core.linking.clusters import OTHER

ARTICLES = ["THE", "A", "AN"]
PREPOSITIONS = ["IN", "NEAR", "AT", "ON", "FROM", "TO", "INTO", "INSIDE", "OUTSIDE", "ACROSS", "AROUND", "THROUGHOUT",
                "WITHIN", "OF", "FOR", "BY", "WITH"]
HONORIFICS = [
    "DR", "DRS", "PROF", "PROFESSOR", "MR", "MRS", "MS", "MISS", "MX", "MESSRS", "MME", "MLLE", "SIR", "DAME",
    "LORD", "LADY", "REV", "REVEREND", "HON", "SEN", "SENATOR", "REP", "GOV", "GOVERNOR", "GEN", "COL",
    "CAPT", "LT", "SGT", "PRESIDENT", "JUDGE", "MAYOR", "HERR", "FRAU",
]
CORPORATE_SUFFIXES = [
    "INC", "INCORPORATED", "CORP", "CORPORATION", "LTD", "LIMITED", "LLC", "LLP", "LP", "PLC", "CO", "COMPANY",
    "GMBH", "AG", "KG", "SA", "SAS", "SARL", "SPA", "SRL", "BV", "NV", "PTY", "KK", "AB", "OY", "OYJ", "ASA",
]
CONNECTORS = [
    "of", "the", "and", "for", "de", "del", "della", "des", "du", "da", "di", "la", "le", "los", "las", "von",
    "van", "der", "den", "y", "e", "et", "und", "in", "on", "at", "to", "a", "an", "&",
]
# prepositions that end the head of a name: "Bank of America" is a bank, "Order of the Rising Sun" an order
HEAD_CONNECTORS = ["of", "for", "de", "del", "della", "des", "du", "da", "di", "in", "on", "at", "to", "against",
                   "from", "von", "van"]
# Arabic articles written before a name with a hyphen ("Al-Kutobi", "El-Sonni"): not half of a compound.
NAME_ARTICLES = ["AL", "EL"]
# Very common country aliases that no rule can derive (the "+A for America" pattern, Britain).
GEO_ALIASES = {
    "US": "UNITED STATES", "USA": "UNITED STATES", "UNITED STATES OF AMERICA": "UNITED STATES",
    "AMERICA": "UNITED STATES",
    "UK": "UNITED KINGDOM", "GREAT BRITAIN": "UNITED KINGDOM", "BRITAIN": "UNITED KINGDOM",
    "USSR": "SOVIET UNION", "UAE": "UNITED ARAB EMIRATES",
}
COUNTRY_FIRST = "^(" + "|".join(re.escape(a) for a in sorted(GEO_ALIASES, key=len, reverse=True)) + ") "
# Words that say what kind of company a name is, not which one: "Northwind Robotics" is named "Northwind".
COMPANY_DESCRIPTORS = [
    "ROBOTICS", "ANALYTICS", "SYSTEMS", "TECHNOLOGIES", "TECHNOLOGY", "SOLUTIONS", "SOFTWARE", "NETWORKS",
    "PARTNERS", "CAPITAL", "VENTURES", "INDUSTRIES", "ENTERPRISES", "PHARMACEUTICALS", "PHARMA", "THERAPEUTICS",
    "BIOSCIENCES", "MOTORS", "AIRLINES", "AIRWAYS", "STUDIOS", "GROUP", "HOLDINGS", "LAB", "LABS", "LABORATORY",
    "LABORATORIES", "SENSORS", "ELECTRONICS", "INTERNATIONAL", "WORLDWIDE", "GLOBAL",
]
# An attribute value, not a name of known type: the folds of every type apply where they fit (an honorific
# before a capitalised word, a corporate suffix, a country alias), so values compare as the linker compares names.
VALUE = "VALUE"
GEO_TYPES = ["LOCATION", OTHER, VALUE]
PLACE_TYPES = ["LOCATION"]
# lower-case words after a place's name that only say what kind of place it is: "Aceh province" is Aceh
# (while "Albany County", capitalised, is another place than Albany)
PLACE_CLASS_WORDS = ["province", "region", "state", "city", "town", "village", "district", "island", "area",
                     "municipality", "prefecture", "regency", "country"]
# a capitalised word after one word that names the kind of natural place it is: "Mediterranean Sea" is the
# Mediterranean, "Gaza Strip" Gaza (not "River": "Jordan River" is no Jordan), unless the word before is a compass
# or colour word, which alone names no place ("North Sea", "Red Sea")
NATURAL_FEATURE_WORDS = ["Sea", "Ocean", "Strip", "Desert", "Peninsula"]
COMPASS_AND_COLOUR_WORDS = ["North", "South", "East", "West", "Northern", "Southern", "Eastern", "Western", "Central",
                            "Red", "Black", "White", "Yellow", "Dead", "Great"]
ORG_TYPES = ["ORGANIZATION", OTHER, VALUE]

MAX_TOKENS = 10  # longer "names" are phrases: they can be linked by key but publish no handles
MIN_SHORT_CHARS = 4  # the seed rule: the shorter side of a containment has at least 4 characters
MAX_ACRONYM = 10
ROMAN_NUMERAL = r"^(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$"  # I to LXXXIX, in capitals


def _drop_first(cond: pl.Expr) -> pl.Expr:
    return pl.when(cond).then(pl.col("tok").list.slice(1)).otherwise(pl.col("tok"))


def _drop_last(cond: pl.Expr) -> pl.Expr:
    return pl.when(cond).then(pl.col("tok").list.slice(0, pl.col("tok").list.len() - 1)).otherwise(pl.col("tok"))


def _country_first(key: pl.Expr) -> pl.Expr:
    """An organisation named after its country writes the country either way: "US Geological Survey" is
    "United States Geological Survey" (the key's leading country alias becomes the country's name)."""
    # One regex, longest alias first: a chain of when/then per alias, each naming the key three times, grew
    # the expression 3^9-fold and cost 0.7 s of Polars planning per call, whatever the data
    alias = key.str.extract(COUNTRY_FIRST, 1)
    return (pl.when(alias.is_not_null())
            .then(pl.concat_str(alias.replace_strict(GEO_ALIASES, return_dtype=pl.String), key.str.slice(alias.str.len_chars())))
            .otherwise(key))


def with_name_keys(nodes: pl.DataFrame, name: str = "name", entity_type: str = "entity_type") -> pl.DataFrame:
    """Add tok (folded tokens, original case), up (upper-case tokens), key, n_tok, key_chars,
    first_cap (the name starts with a capital or digit), is_acronym (one all-capitals token),
    declared (acronym declared in a trailing parenthesis, or null)."""
    s = pl.col(name).fill_null("").str.normalize("NFKD").str.replace_all(r"\p{M}", "").str.strip_chars()
    et = pl.col(entity_type)
    out = nodes.lazy().with_columns(_name_tokens(s, et).alias("tok"), _declared_acronym(s).alias("declared"))
    out = _drop_describing_words(out, et)
    out = _drop_place_class_words(out, et)
    out = _drop_leading_words(out, et)
    out = _drop_corporate_suffixes(out, et)
    return _with_keys(out, et).with_columns(*_shape_columns()).collect()


def _declared_acronym(s: pl.Expr) -> pl.Expr:
    """The acronym a trailing parenthesis declares: "Quantum Dynamics Lab (QDL)" -> QDL."""
    return s.str.extract(r"\(\s*([\p{Lu}][\p{Lu}\p{N}&.]{1,11})\s*\)\s*$", 1).str.replace_all(r"[^\p{L}\p{N}]", "")


def _name_tokens(s: pl.Expr, et: pl.Expr) -> pl.Expr:
    """The tokens of the name without a trailing parenthesis, possessives and dots of initials."""
    base = s.str.replace(r"\s*\([^()]*\)\s*$", "")
    base = pl.when(base.str.contains(r"[\p{L}\p{N}]")).then(base).otherwise(s)
    # a place before a possessive qualifies the place after it: "Indonesia's Aceh province" is in Aceh
    base = pl.when(et.is_in(PLACE_TYPES)).then(base.str.replace(r"^.*\S\s?['’`]s\s+(\p{Lu})", "${1}")).otherwise(base)
    # after a person's full name, a comma opens an apposition: "Warren Jeffs, Polygamist Leader" is Warren
    # Jeffs (one word before the comma may be a surname first: "Smith, John")
    base = pl.when(et == "PERSON").then(base.str.replace(r"^(\S+\s+[^,]*[^,\s])\s*,\s.*$", "${1}")).otherwise(base)
    base = base.str.replace_all(r"['’`]s\b", "").str.replace_all(r"\b(\p{L})\.", "${1}")
    # runs of single capitals are one acronym: "U . S ." / "U S" -> "US" (a lone initial stays: "John F Kennedy")
    base = base.str.replace_all(r"\b(\p{Lu})\b", "${1}§")
    for _ in range(3):
        base = base.str.replace_all(r"§[\s.]+(\p{Lu})§", "${1}§")
    return base.str.replace_all("§", "").str.extract_all(r"[\p{L}\p{N}]+")


def _drop_describing_words(out: pl.LazyFrame, et: pl.Expr) -> pl.LazyFrame:
    """Lower-case words that are no name particle describe the name: "Polygamist leader Warren Jeffs",
    "Indonesian province of Aceh"."""
    describing = pl.element().str.contains(r"^\p{Ll}") & ~pl.element().is_in(CONNECTORS)
    last_describing = pl.col("tok").list.eval(pl.when(describing).then(pl.int_range(pl.len())).otherwise(None)).list.max()
    capitals_after = (pl.col("tok").list.slice(last_describing + 1)
                      .list.eval(pl.element().str.contains(r"^\p{Lu}")).list.sum().fill_null(0))
    capital_after = capitals_after > 0
    # ... before a person only when a full name is left: before a lone word the description picks one
    # referent of several ("the new Doctor", "the eleventh Doctor" are not "the Doctor")
    full_name_after = capitals_after >= 2
    # ... before a place only as "<capitalised or describing words> <describing word> of <Name>": in "Aceh,
    # on the northern tip of Sumatra" the place is Aceh
    head = pl.col("tok").list.slice(0, last_describing)
    place_prefix = (
        (pl.col("tok").list.get(last_describing + 1, null_on_oob=True).str.to_lowercase() == "of").fill_null(False)
        & head.list.eval(pl.element().str.contains(r"^\p{Lu}") | describing).list.all().fill_null(True))
    return out.with_columns(
        pl.when(last_describing.is_not_null() & capital_after
                & (((et == "PERSON") & full_name_after) | (et.is_in(PLACE_TYPES) & place_prefix)))
        .then(pl.col("tok").list.slice(last_describing + 1)).otherwise(pl.col("tok")).alias("tok"))


def _drop_place_class_words(out: pl.LazyFrame, et: pl.Expr) -> pl.LazyFrame:
    """Lower-case words after a capitalised place name only say what kind of place it is ("Aceh province"), and
    so does a natural feature after a one-word name ("Mediterranean Sea", `NATURAL_FEATURE_WORDS`)."""
    for _ in range(3):
        ends_describing = pl.col("tok").list.last().is_in(PLACE_CLASS_WORDS).fill_null(False)
        capital_before = (pl.col("tok").list.slice(0, pl.col("tok").list.len() - 1)
                          .list.eval(pl.element().str.contains(r"^\p{Lu}")).list.any().fill_null(False))
        out = out.with_columns(_drop_last((pl.col("tok").list.len() > 1) & et.is_in(PLACE_TYPES)
                                          & ends_describing & capital_before).alias("tok"))
    feature = ((pl.col("tok").list.len() == 2) & et.is_in(GEO_TYPES)
               & pl.col("tok").list.last().is_in(NATURAL_FEATURE_WORDS).fill_null(False)
               & pl.col("tok").list.first().str.contains(r"^\p{Lu}\p{Ll}").fill_null(False)
               & ~pl.col("tok").list.first().is_in(COMPASS_AND_COLOUR_WORDS).fill_null(False))
    return out.with_columns(_drop_last(feature).alias("tok"))


def _drop_leading_words(out: pl.LazyFrame, et: pl.Expr) -> pl.LazyFrame:
    """Leading prepositions and articles are never part of a name ("in the North Bay"); before a person's
    name, lower-case words are descriptions ("boss Steven Moffat") and titles are honorifics."""
    first_up = pl.col("tok").list.first().str.to_uppercase()
    many = pl.col("tok").list.len() > 1
    capitals_follow = pl.col("tok").list.slice(1).list.eval(pl.element().str.contains(r"^\p{Lu}")).list.sum()
    capital_follows = capitals_follow > 0
    for _ in range(3):
        out = out.with_columns(_drop_first(many & (
            first_up.is_in(ARTICLES) | (first_up.is_in(PREPOSITIONS) & capital_follows)
            | ((et == "PERSON") & (first_up.is_in(HONORIFICS)
                                   | (pl.col("tok").list.first().str.contains(r"^\p{Ll}") & (capitals_follow >= 2))))
            | ((et == VALUE) & first_up.is_in(HONORIFICS)
               & pl.col("tok").list.get(1, null_on_oob=True).str.contains(r"^\p{Lu}").fill_null(False))
        )).alias("tok"))
    return out


def _drop_corporate_suffixes(out: pl.LazyFrame, et: pl.Expr) -> pl.LazyFrame:
    """After an organisation's name, corporate suffixes (Inc, Corp, Ltd ...) are not part of it."""
    many = pl.col("tok").list.len() > 1
    # ... and a corporate suffix ends the name: "of <place>" after it says where the company is ("Helix Sensors
    # Ltd. of Manchester" is Helix Sensors)
    suffix_of = pl.col("tok").list.eval(pl.when(
        (pl.int_range(pl.len()) > 0) & pl.element().str.to_uppercase().is_in(CORPORATE_SUFFIXES)
        & (pl.element().shift(-1) == "of")).then(pl.int_range(pl.len()))).list.min()
    out = out.with_columns(pl.when(et.is_in(ORG_TYPES) & suffix_of.is_not_null())
                           .then(pl.col("tok").list.slice(0, suffix_of)).otherwise(pl.col("tok")).alias("tok"))
    last_up = pl.col("tok").list.last().str.to_uppercase()
    for _ in range(2):
        out = out.with_columns(_drop_last(many & et.is_in(ORG_TYPES) & last_up.is_in(CORPORATE_SUFFIXES))
                               .alias("tok"))
    return out


def _with_keys(out: pl.LazyFrame, et: pl.Expr) -> pl.LazyFrame:
    """up (upper-case tokens), raw_key (them joined) and key: for places and values the country a common
    alias names, for organisations their country written in full."""
    up = pl.col("tok").list.eval(pl.element().str.to_uppercase())
    out = out.with_columns(up.alias("up"))
    key = pl.col("up").list.join(" ")
    geo = key.replace_strict(GEO_ALIASES, default=key, return_dtype=pl.String)
    out = out.with_columns(pl.when(et.is_in(GEO_TYPES)).then(geo).otherwise(key).alias("key"), key.alias("raw_key"))
    return out.with_columns(pl.when(et == "ORGANIZATION").then(_country_first(pl.col("key"))).otherwise(pl.col("key"))
                            .alias("key"))


def _shape_columns() -> list[pl.Expr]:
    """n_tok, key_chars, first_cap and is_acronym of the final tokens and key."""
    return [
        pl.col("tok").list.len().cast(pl.Int64).alias("n_tok"),
        pl.col("key").str.replace_all(" ", "").str.len_chars().cast(pl.Int64).alias("key_chars"),
        # name-like: starts with a capital (or a digit) and has a capitalised word ("15-inch" is not a name)
        (pl.col("tok").list.first().str.contains(r"^[\p{Lu}\p{N}]").fill_null(False)
         & pl.col("tok").list.eval(pl.element().str.contains(r"^\p{Lu}")).list.any().fill_null(False)).alias("first_cap"),
        ((pl.col("tok").list.len() == 1)
         & pl.col("tok").list.first().str.contains(rf"^\p{{Lu}}[\p{{Lu}}\p{{N}}]{{1,{MAX_ACRONYM - 1}}}$").fill_null(False)
         ).alias("is_acronym"),
    ]


# ---------------------------------------------------------------------------------------------------
# Handles: the keys under which a long form can be found by a short form.


def _spans() -> pl.DataFrame:
    rows = [(n, start, length) for n in range(2, MAX_TOKENS + 1) for length in range(1, n)
            for start in range(0, n - length + 1)]
    return pl.DataFrame(rows, schema={"n_tok": pl.Int64, "start": pl.Int64, "length": pl.Int64}, orient="row")


def acronym_forms(frame: pl.DataFrame, tokens: str = "tok") -> pl.DataFrame:
    """(idx, h_key): the acronyms a name of 2+ content words can be written as: initials of its
    capitalised content words, with or without the connectors, all-caps words of 2-4 letters kept whole
    ("US Geological Survey" -> USGS). Pass upper-cased tokens to let every content word count."""
    e = pl.element()
    is_conn = e.str.to_lowercase().is_in(CONNECTORS)
    content = e.str.contains(r"^\p{Lu}") & ~is_conn  # a number is no word of an acronym ("Q1 2025" is not Q2)
    # a roman numeral is a number, written whole: "World War II" is WWII, never WWI
    roman = e.str.contains(ROMAN_NUMERAL) & (e.str.len_chars() > 0)
    initial = pl.when(roman).then(e).otherwise(e.str.slice(0, 1).str.to_uppercase())
    whole = pl.when(e.str.contains(r"^\p{Lu}{2,4}$")).then(e).otherwise(initial)

    def letters(keep: pl.Expr, letter: pl.Expr) -> pl.Expr:
        return pl.col(tokens).list.eval(pl.when(keep).then(letter).otherwise(pl.lit(""))).list.join("")

    acr = frame.lazy().select(
        "idx",
        letters(content, initial).alias("a1"),
        letters(content, whole).alias("a2"),
        letters(content | is_conn, initial).alias("a3"),
        letters(content | is_conn, whole).alias("a4"),
        pl.col(tokens).list.eval(content).list.sum().alias("n_content"),
    ).filter(pl.col("n_content") >= 2).collect()
    acr = acr.unpivot(index="idx", on=["a1", "a2", "a3", "a4"], value_name="h_key").select("idx", "h_key")
    acr = acr.filter(pl.col("h_key").str.len_chars().is_between(2, MAX_ACRONYM)).unique()
    # an acronym that is one of the name's own words names that word, not the whole: "US" is not "US Secretary"
    words = (frame.select("idx", pl.col(tokens).list.eval(pl.element().str.to_uppercase()).alias("h_key"))
             .explode("h_key"))
    return acr.join(words, on=["idx", "h_key"], how="anti")


def long_form_handles(nodes: pl.DataFrame, short_keys: pl.DataFrame, short_acronyms: pl.DataFrame) -> pl.DataFrame:
    """(l, h_key, rule, global_ok) for long nodes, restricted to keys some short node has."""
    long = nodes.filter((pl.col("n_tok") >= 2) & (pl.col("n_tok") <= MAX_TOKENS)).select(
        "idx", "entity_type", "tok", "up", "n_tok", "name")
    frames = []
    runs = _token_run_handles(nodes, long, short_keys)
    if runs.height:
        frames.append(runs)
    frames.append(_person_name_handles(long, short_keys))
    if short_acronyms.height:
        acr = acronym_forms(long).join(short_acronyms, on="h_key", how="semi")
        frames.append(acr.select(pl.col("idx").alias("l"), "h_key", pl.lit("acronym").alias("rule"),
                                 (pl.col("h_key").str.len_chars() >= 3).alias("global_ok")))
    declared = nodes.filter(pl.col("declared").is_not_null() & (pl.col("n_tok") >= 1)).select(
        pl.col("idx").alias("l"), pl.col("declared").str.to_uppercase().alias("h_key"),
        pl.lit("declared_acronym").alias("rule"), pl.lit(True).alias("global_ok"))
    frames.append(declared.join(short_acronyms, on="h_key", how="semi"))
    frames = [f.with_columns(pl.col("l").cast(pl.Int64), pl.col("global_ok").cast(pl.Boolean)) for f in frames]
    return pl.concat(frames).unique()


def _token_run_handles(nodes: pl.DataFrame, long: pl.DataFrame, short_keys: pl.DataFrame) -> pl.DataFrame:
    """(l, h_key, rule, global_ok) of the token runs of long names that a short node names: containment,
    surname, trailing person runs, given names. Locations publish no runs."""
    # the run strings are built first and only the matching ones get the other columns back
    runs = (
        long.lazy().filter(pl.col("entity_type") != "LOCATION").select("idx", "n_tok", "up")
        .join(_spans().lazy(), on="n_tok")
        .select("idx", "start", "length",
                pl.col("up").list.slice(pl.col("start"), pl.col("length")).list.join(" ").alias("h_key"))
        .join(short_keys.lazy(), on="h_key", how="semi")
        .join(long.lazy(), on="idx")
        .collect()
    )
    if runs.height == 0:
        return runs
    runs = _with_run_shape(runs, nodes).with_columns(_run_rule().alias("rule")).filter(pl.col("rule").is_not_null())
    global_ok = (
        pl.when(pl.col("rule").is_in(["surname", "person_short_form", "first_name"])).then(True)
        .when(pl.col("rule") == "containment").then(pl.col("length") >= 2)
        .otherwise(False)
    )
    return runs.select(pl.col("idx").alias("l"), "h_key", "rule", global_ok.alias("global_ok"))


def _with_run_shape(runs: pl.DataFrame, nodes: pl.DataFrame) -> pl.DataFrame:
    """Where each run sits in its long name: the words outside it, prefix or suffix, after a connector,
    whether it holds the name's head, and what the outside words are (name-like, numbered, descriptors)."""
    connectors = pl.element().str.to_lowercase().is_in(CONNECTORS)
    outside_tok = pl.concat_list(pl.col("tok").list.slice(0, pl.col("start")),
                                 pl.col("tok").list.slice(pl.col("start") + pl.col("length")))
    is_prep = pl.col("tok").list.eval(pl.element().str.to_lowercase().is_in(HEAD_CONNECTORS))
    first_prep = is_prep.list.arg_max()
    head = pl.when(is_prep.list.any() & (first_prep > 0)).then(first_prep - 1).otherwise(pl.col("n_tok") - 1)
    runs = runs.with_columns(
        _splits_a_compound().alias("splits_compound"),
        outside_tok.alias("outside"),
        (pl.col("start") == 0).alias("is_prefix"),
        (pl.col("start") + pl.col("length") == pl.col("n_tok")).alias("is_suffix"),
        pl.when(pl.col("start") > 0).then(pl.col("tok").list.get(pl.col("start") - 1, null_on_oob=True))
        .otherwise(None).str.to_lowercase().is_in(CONNECTORS).fill_null(False).alias("after_connector"),
        head.cast(pl.Int64).alias("head"),
    )
    # a trailing word that is a known place is a locative modifier: the head of "Bayern Munich" is Bayern
    places = nodes.filter((pl.col("entity_type") == "LOCATION") & (pl.col("n_tok") == 1))["raw_key"].unique()
    for _ in range(2):
        at_place = pl.col("up").list.get(pl.col("head"), null_on_oob=True).is_in(places.implode()).fill_null(False)
        runs = runs.with_columns(
            pl.when(at_place & (pl.col("head") > 0) & (pl.col("head") == pl.col("n_tok") - 1))
            .then(pl.col("head") - 1).otherwise(pl.col("head")).alias("head"))
    return runs.with_columns(
        pl.col("outside").list.eval(pl.element().str.contains(r"^[\p{Lu}\p{N}]") | connectors).list.all()
        .alias("extras_namelike"),
        pl.col("outside").list.eval(pl.element().str.contains(r"\p{N}|^[IVXLC]{1,4}$")).list.any()
        .alias("extras_numbered"),
        pl.col("outside").list.eval(pl.element().str.to_uppercase().is_in(COMPANY_DESCRIPTORS)).list.all()
        .alias("extras_descriptors"),
        ((pl.col("start") <= pl.col("head")) & (pl.col("head") < pl.col("start") + pl.col("length")))
        .alias("has_head"),
        # the run ends where a phrase of the name ends: at its head, before a preposition or at its end
        # ("Center for European Policy" is not "Center for European Policy Studies", "Council of Europe" not
        # "Council of Europe and the OSCE"; "Supreme Court" is "Supreme Court of India")
        ((pl.col("start") + pl.col("length") - 1 == pl.col("head"))
         | (pl.col("start") + pl.col("length") == pl.col("n_tok"))
         | pl.col("tok").list.get(pl.col("start") + pl.col("length"), null_on_oob=True).str.to_lowercase()
         .is_in(HEAD_CONNECTORS).fill_null(False)).alias("ends_phrase"),
    )


def _hyphen_glued(left: pl.Expr, right: pl.Expr) -> pl.Expr:
    """Whether the words `left` and `right` (upper case) are written as one hyphenated word in the name."""
    spaced = pl.concat_str(pl.lit(" "), pl.col("name").fill_null("").str.normalize("NFKD")
                           .str.replace_all(r"\p{M}", "").str.to_uppercase()
                           .str.replace_all(r"[\p{Pd}]", "-").str.replace_all(r"[^\p{L}\p{N}-]+", " "), pl.lit(" "))
    pair = pl.concat_str(left, pl.lit("-"), right)
    return pl.any_horizontal(
        spaced.str.contains(pl.concat_str(pl.lit(a), pair, pl.lit(b)), literal=True) for a in " -" for b in " -"
    ).fill_null(False)


def _splits_a_compound() -> pl.Expr:
    """A run whose first or last word is half of a hyphenated word names a part of it, not the whole:
    "Pacific" is not "Asia-Pacific", "Jean" not "Jean-Claude Duvalier", "Jones" not "Zeta-Jones". An Arabic
    article before a hyphen is no part of a person's name ("Kutobi" is "Omar Al-Kutobi")."""
    end = pl.col("start") + pl.col("length")
    before = pl.col("up").list.get(pl.col("start") - 1, null_on_oob=True)
    first = pl.col("up").list.get(pl.col("start"), null_on_oob=True)
    last = pl.col("up").list.get(end - 1, null_on_oob=True)
    after = pl.col("up").list.get(end, null_on_oob=True)
    article = (pl.col("entity_type") == "PERSON") & before.is_in(NAME_ARTICLES)
    left = (pl.col("start") > 0) & _hyphen_glued(before, first) & ~article
    right = (end < pl.col("n_tok")) & _hyphen_glued(last, after)
    return (left | right).fill_null(False)


def _run_rule() -> pl.Expr:
    """The rule by which a run of a long name is its short form, by the long name's type (null: none)."""
    et = pl.col("entity_type")
    return (
        pl.when(pl.col("splits_compound")).then(None)
        # a person's short forms come from a name: "Doctor" is no surname of "new Doctor", a description
        .when(et == "PERSON").then(
            pl.when(~pl.col("extras_namelike")).then(None)
            .when(pl.col("is_suffix") & (pl.col("length") == 1)).then(pl.lit("surname"))
            .when(pl.col("is_suffix")).then(pl.lit("person_short_form"))
            # one given name: a longer prefix is another person's full name ("Martin Luther" is not "Martin
            # Luther King", "John Cage" not "John Cage Organ Project")
            .when(pl.col("is_prefix") & (pl.col("length") == 1)).then(pl.lit("first_name")))
        .when(et == "LOCATION").then(None)  # Albany / Albany County, Germany / East Germany: other places
        .otherwise(
            pl.when(pl.col("extras_namelike") & pl.col("has_head") & pl.col("ends_phrase")
                    & ~pl.col("after_connector") & ~pl.col("extras_numbered")).then(pl.lit("containment"))
            # "Northwind" names "Northwind Robotics": what the head lacks only says what kind of company
            .when((et == "ORGANIZATION") & pl.col("is_prefix") & pl.col("extras_descriptors"))
            .then(pl.lit("org_short_form")))
    )


def _person_name_handles(long: pl.DataFrame, short_keys: pl.DataFrame) -> pl.DataFrame:
    """(l, h_key, rule, global_ok) of a person's first + last of a longer name, first + middle initials + last,
    initials + last, where a short node has that key."""
    person = long.filter(pl.col("entity_type") == "PERSON")
    first, last = pl.col("up").list.first(), pl.col("up").list.last()
    given = pl.col("up").list.slice(0, pl.col("n_tok") - 1)
    middle = pl.col("up").list.slice(1, pl.col("n_tok") - 2)
    initials = lambda lst: lst.list.eval(pl.element().str.slice(0, 1)).list.join("")  # noqa: E731
    fl = pl.concat([
        person.filter(pl.col("n_tok") >= 3).select("idx", pl.concat_str(first, pl.lit(" "), last).alias("h_key")),
        person.filter(pl.col("n_tok") >= 3).select(
            "idx", pl.concat_str(first, pl.lit(" "), initials(middle), pl.lit(" "), last).alias("h_key")),
        person.filter(first.str.len_chars() > 1).select(
            "idx", pl.concat_str(initials(given), pl.lit(" "), last).alias("h_key")),
    ]).unique().join(short_keys, on="h_key", how="semi")
    return fl.select(pl.col("idx").alias("l"), "h_key", pl.lit("person_short_form").alias("rule"),
                     pl.lit(True).alias("global_ok"))

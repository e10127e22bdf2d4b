"""Entity linking: which extracted entity ids name the same real-world entity.

A linker returns redirects (from_id -> to_id with method, score and evidence) instead of rewriting
ids, so every merge is a row that can be audited and undone. Redirects are stored resolved: every
non-canonical id points straight at its canonical id (no chains, no cycles, never from == to).

Linkers
-------
- `ExactIdLinker`: the same normalized name and type already share an id (`normalize.entity_id`), so
  it redirects nothing.
- `NameLinker`: rule-based name linking (below). Pure Polars in and out.
- Baselines for comparison: `exact_name_linker` (equal normalized name, any type),
  `containment_linker` (the seed rule: same type, case-insensitive containment, shorter side >= 4
  characters), `fuzzy_linker` (RapidFuzz WRatio >= 80 within token blocks).

Any object with a `name` and `link(mentions, overrides=None)` is a `Linker`: an embedding linker can be
plugged in later the same way (and may reuse `resolve_clusters` to turn its pairs into redirects).

NameLinker rules
----------------
The linker works on DISTINCT entity ids (one node per id, with its most frequent surface form, mention
count and the documents it occurs in), never per mention. Every rule is a general statement about
names; none is tuned to a data set.

1. Matching key. The surface form is folded: diacritics, punctuation, possessives, dotted and spaced
   initials ("U.S." / "U . S ." -> US, while "John F. Kennedy" keeps its lone initial), leading
   articles and prepositions ("in the North Bay" -> North Bay), before a person's name honorifics (Dr,
   Prof, Mr, Mrs, Ms, Sir, President ...) and lower-case descriptions ("boss Steven Moffat"), after an
   organization's name corporate suffixes (Inc, Corp, Ltd, LLC, GmbH, Co, plc ...). Generational
   suffixes (Jr, Sr) are kept: they tell father and son apart. The entity keeps its own name: the key
   only decides matches. A trailing "(ABC)" leaves the key and becomes a declared acronym.
2. Name variants (equivalence, any documents). Ids of the same type with the same key are one entity
   ("Apple Inc." = "Apple", "Dr. Jane Smith" = "Jane Smith"); a small table of very common country
   aliases that no rule derives (US / USA / United States, UK / Britain ...) joins locations. An id
   typed OTHER joins the only typed entity with its key when it is written as a name and never occurs
   in a document that has the typed one (inside one document two types are a distinction: "Spanish"
   the language next to "Spanish" for Spain; across documents they are extraction noise). When the
   key is typed several ways (Jordan the LOCATION, Jordan the PERSON) it stays separate. Different
   types never merge otherwise.
3. Short forms (directed: a short id joins at most one long entity of the SAME type). The short side
   must be written as a name (a capitalised word, not "15-inch" or "jury") and, except for acronyms,
   have at least 4 characters (the seed rule). Candidate long forms:
   - person_short_form (PERSON): the surname ("Obama" -> "Barack Obama") or a trailing run ("Luther
     King"); first + last of a longer name ("John Kennedy" -> "John F. Kennedy"), first + middle
     initials + last ("William H. Armstrong"), initials + last ("J. Kennedy", "J. H. Dearle"); given
     names ("Barack" -> "Barack Obama") only with same-document evidence.
   - acronym: initials of the capitalised content words of the long form, with or without the
     connectors (of, and, for ...), all-caps words kept whole ("US Geological Survey" -> USGS), or an
     acronym declared in parentheses. The short side must be written in capitals.
   - containment (types other than PERSON and LOCATION): the short key is a contiguous token run of the
     long key that
       * contains the head of the long name (the last word, or the word before the first "of"/"for"/
         "de"...): "Legislature" -> "Philippine Legislature", "House of Commons" -> "House of Commons
         of Canada"; a run that only keeps modifiers names something else ("Microsoft" is not
         "Microsoft Mobile", "Congress" is not "Library of Congress");
       * leaves only name-like extra words (capitalised or connectors): "Apple" never reaches "apple
         pie";
       * leaves no number or roman numeral ("World Cup" is not "2014 World Cup", "Legends" not
         "Legends II").
     Locations are never extended by containment: a place's name extended either way is usually
     another place (Albany / Albany County, Germany / East Germany, New York / New York City).
   Evidence, strongest first:
   - same document: in each document where the short id occurs with exactly one candidate entity,
     that document votes for it (a document with two candidates, e.g. two Smiths, votes for none).
     The winner needs strictly more votes than the runner-up and, except for acronyms, votes from at
     least half of the short id's documents (a short form mostly seen without the long one is an
     entity of its own: "Doctor Who" vs "Doctor Who Live").
   - across documents (only when the short id never co-occurs with any candidate): exactly one
     candidate entity in the whole corpus, by a specific rule: surnames and person short forms,
     multi-token contained names, acronyms of 3+ letters. Single-word heads of other types and given
     names need a shared document. The short id may not occur in more than twice as many documents
     as its long form (except acronyms): "Berg" in 50 documents is not the "Anna Berg" of one.
   Short forms are resolved from the longest to the shortest, so "Obama" sees "Barack Obama" and
   "Barack Hussein Obama" as one candidate once they are linked. An entity joins as a short form at
   most once, so a short form never bridges two different long entities.
4. Canonical id: per cluster, a merge-override target first, then typed over OTHER, full names over
   short forms, most mentions, most tokens, smallest id. Independent of row order.
5. Overrides (from_id, to_id, action): "merge" forces the two ids together (to_id canonical); "split"
   forbids the two ids from ever ending in the same cluster, whatever path would join them (undoing
   a merge = a split; the next run restores separate entities). Ids absent from the mentions are
   ignored.

Candidate generation is sub-quadratic: long forms publish "handles" (their token runs, initials,
first+last keys) and short forms are found by equality joins on (document, handle) and on handle;
handles shared by more than `max_block` long entities are not used across documents (such a short form
is ambiguous anyway). `NameLinker.stats` reports the pairs examined.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Protocol

import polars as pl

from kg_assets.core import schemas

OTHER = "OTHER"

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
# Very common country aliases that no rule can derive (the "+A for America" pattern, Britain).
GEO_ALIASES = {
    "US": "UNITED STATES", "USA": "UNITED STATES", "UNITED STATES OF AMERICA": "UNITED STATES",
    "UK": "UNITED KINGDOM", "GREAT BRITAIN": "UNITED KINGDOM", "BRITAIN": "UNITED KINGDOM",
    "USSR": "SOVIET UNION", "UAE": "UNITED ARAB EMIRATES",
}
GEO_TYPES = ["LOCATION", OTHER]
ORG_TYPES = ["ORGANIZATION", OTHER]

MAX_TOKENS = 10  # longer "names" are phrases: they can be linked by key but publish no handles
MIN_SHORT_CHARS = 4  # the seed rule: the shorter side of a containment has at least 4 characters
MAX_ACRONYM = 10
COVERAGE = 0.5  # same-document votes must cover this share of the short id's documents
SPECIFICITY_RATIO = 2.0  # across documents: docs(short) <= ratio * docs(long)

# method -> (score with same-document evidence, score across documents)
SCORES = {
    "acronym": (0.9, 0.75),
    "person_short_form": (0.9, 0.75),
    "containment": (0.85, 0.7),
}
RULE_METHOD = {"acronym": "acronym", "declared_acronym": "acronym", "surname": "person_short_form",
               "person_short_form": "person_short_form", "first_name": "person_short_form",
               "containment": "containment"}
RULE_LABEL = {"acronym": "acronym", "declared_acronym": "declared acronym", "surname": "surname",
              "person_short_form": "short form", "first_name": "given name", "containment": "contained name"}
RULE_RANK = {"declared_acronym": 0, "acronym": 1, "person_short_form": 2, "surname": 3, "containment": 4,
             "first_name": 5}


class Linker(Protocol):
    name: str

    def link(self, mentions: pl.DataFrame, overrides: pl.DataFrame | None = None) -> pl.DataFrame:
        """Redirect rows (ENTITY_ALIASES contract) for the given ENTITY_MENTIONS frame."""
        ...


class ExactIdLinker:
    name = "exact_id"

    def link(self, mentions: pl.DataFrame, overrides: pl.DataFrame | None = None) -> pl.DataFrame:
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


# ---------------------------------------------------------------------------------------------------
# Union-find with "cannot link" constraints and an audit trail of accepted edges.


def keep_created_at(redirects: pl.DataFrame, previous: pl.DataFrame) -> pl.DataFrame:
    """Stamp redirects with when each (from, to) link was first made; new links get now."""
    first_made = previous.select("from_id", "to_id", pl.col("created_at").cast(schemas.TS).alias("_first")).unique(["from_id", "to_id"])
    return schemas.conform(
        redirects.join(first_made, on=["from_id", "to_id"], how="left").with_columns(
            pl.coalesce("_first", pl.lit(datetime.now(UTC))).cast(schemas.TS).alias("created_at")
        ),
        schemas.ENTITY_ALIASES,
    )


class Clusters:
    """Union-find over entity indexes with "cannot link" pairs (split overrides) and the audit trail of
    accepted unions (a, b, method, score, evidence). Any linker can feed its pairs in and call
    `resolve_clusters`."""

    def __init__(self, n: int, splits: Iterable[tuple[int, int]] = ()):
        self.parent = list(range(n))
        self.forbid: dict[int, set[int]] = {}  # root -> ids its component may never contain
        self.bound: dict[int, set[int]] = {}  # root -> constrained ids its component contains
        for a, b in splits:
            if a == b:
                continue
            self.forbid.setdefault(a, set()).add(b)
            self.forbid.setdefault(b, set()).add(a)
            self.bound.setdefault(a, {a})
            self.bound.setdefault(b, {b})
        self.edges: list[tuple[int, int, str, float, str]] = []
        self.blocked = 0

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int, method: str, score: float, evidence: str) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        fa, fb = self.forbid.get(ra), self.forbid.get(rb)
        if (fa and fa & self.bound.get(rb, set())) or (fb and fb & self.bound.get(ra, set())):
            self.blocked += 1
            return False
        if rb < ra:
            ra, rb = rb, ra
        self.parent[rb] = ra
        if rb in self.forbid:
            self.forbid.setdefault(ra, set()).update(self.forbid.pop(rb))
        if rb in self.bound:
            self.bound.setdefault(ra, set()).update(self.bound.pop(rb))
        self.edges.append((a, b, method, score, evidence))
        return True


def resolve_clusters(
    ids: list[str],
    clusters: Clusters,
    rank: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Redirect rows from a union-find over `ids`: each non-canonical id -> its cluster's canonical id.

    `rank`: optional frame (idx, then sort columns, ascending = preferred) choosing the canonical id;
    without it the smallest id wins. method/score/evidence come from the first accepted edge touching
    the id."""
    n = len(ids)
    roots = [clusters.find(i) for i in range(n)]
    frame = pl.DataFrame({"idx": pl.Series(range(n), dtype=pl.Int64), "root": pl.Series(roots, dtype=pl.Int64),
                          "entity_id": pl.Series(ids, dtype=pl.String)})
    sizes = frame.group_by("root").len()
    frame = frame.join(sizes.filter(pl.col("len") > 1).select("root"), on="root", how="semi")
    if frame.height == 0:
        return schemas.empty(schemas.ENTITY_ALIASES)
    if rank is None:
        order = frame.sort(["root", "entity_id"])
    else:
        sort_cols = [c for c in rank.columns if c != "idx"]
        order = frame.join(rank, on="idx", how="left").sort(["root", *sort_cols, "entity_id"])
    canonical = order.group_by("root", maintain_order=True).first().select("root", pl.col("entity_id").alias("to_id"))
    first_edge: dict[int, int] = {}
    for k, (a, b, *_rest) in enumerate(clusters.edges):
        first_edge.setdefault(a, k)
        first_edge.setdefault(b, k)
    rows = frame.join(canonical, on="root").filter(pl.col("entity_id") != pl.col("to_id"))
    methods, scores, evidence = [], [], []
    for idx in rows["idx"].to_list():
        k = first_edge.get(idx)
        edge = clusters.edges[k] if k is not None else (idx, idx, "linked", 0.5, "")
        methods.append(edge[2])
        scores.append(float(edge[3]))
        evidence.append(edge[4])
    out = rows.select(pl.col("entity_id").alias("from_id"), "to_id").with_columns(
        pl.Series("method", methods, dtype=pl.String),
        pl.Series("score", scores, dtype=pl.Float64),
        pl.Series("evidence", evidence, dtype=pl.String),
    )
    return schemas.conform(out.sort("from_id"), schemas.ENTITY_ALIASES)


def _override_pairs(overrides: pl.DataFrame | None, index: dict[str, int]) -> tuple[list, list]:
    if overrides is None or overrides.height == 0:
        return [], []
    merges, splits = [], []
    rows = overrides.select("from_id", "to_id", pl.col("action").str.to_lowercase()).sort("from_id", "to_id", "action")
    for a, b, action in rows.iter_rows():
        if a not in index or b not in index or a == b:
            continue
        (merges if action == "merge" else splits if action == "split" else []).append((index[a], index[b]))
    return merges, splits


# ---------------------------------------------------------------------------------------------------
# Distinct entity ids and their matching keys.


def entity_nodes(mentions: pl.DataFrame) -> pl.DataFrame:
    """One row per entity id: idx, entity_id, entity_type, normalized_name, name (most frequent surface
    form, ties alphabetical), n_mentions, n_docs. Sorted by entity_id (idx = row number)."""
    m = mentions.lazy().select(
        "entity_id",
        pl.coalesce(pl.col("name"), pl.col("normalized_name"), pl.lit("")).alias("name"),
        pl.col("normalized_name").fill_null(""),
        pl.col("entity_type").fill_null(OTHER),
        pl.col("document_id").fill_null(""),
    ).filter(pl.col("entity_id").is_not_null())
    names = (
        m.group_by("entity_id", "name").len()
        .group_by("entity_id")
        .agg(pl.col("name").sort_by(["len", "name"], descending=[True, False]).first())
    )
    stats = m.group_by("entity_id").agg(
        pl.col("entity_type").min(),
        pl.col("normalized_name").min(),
        pl.len().cast(pl.Int64).alias("n_mentions"),
        pl.col("document_id").n_unique().cast(pl.Int64).alias("n_docs"),
    )
    return (stats.join(names, on="entity_id").sort("entity_id").with_row_index("idx")
            .with_columns(pl.col("idx").cast(pl.Int64)).collect())


def _drop_first(cond: pl.Expr) -> pl.Expr:
    return pl.when(cond).then(pl.col("tok").list.slice(1)).otherwise(pl.col("tok"))


def _drop_last(cond: pl.Expr) -> pl.Expr:
    return pl.when(cond).then(pl.col("tok").list.slice(0, pl.col("tok").list.len() - 1)).otherwise(pl.col("tok"))


def with_name_keys(nodes: pl.DataFrame, name: str = "name", entity_type: str = "entity_type") -> pl.DataFrame:
    """Add tok (folded tokens, original case), up (upper-case tokens), key, n_tok, key_chars,
    first_cap (the name starts with a capital or digit), is_acronym (one all-capitals token),
    declared (acronym declared in a trailing parenthesis, or null)."""
    s = pl.col(name).fill_null("").str.normalize("NFKD").str.replace_all(r"\p{M}", "").str.strip_chars()
    paren = s.str.extract(r"\(\s*([\p{Lu}][\p{Lu}\p{N}&.]{1,11})\s*\)\s*$", 1).str.replace_all(r"[^\p{L}\p{N}]", "")
    base = s.str.replace(r"\s*\([^()]*\)\s*$", "")
    base = pl.when(base.str.contains(r"[\p{L}\p{N}]")).then(base).otherwise(s)
    base = base.str.replace_all(r"['’`]s\b", "").str.replace_all(r"\b(\p{L})\.", "${1}")
    # runs of single capitals are one acronym: "U . S ." / "U S" -> "US" (a lone initial stays: "John F Kennedy")
    base = base.str.replace_all(r"\b(\p{Lu})\b", "${1}§")
    for _ in range(3):
        base = base.str.replace_all(r"§[\s.]+(\p{Lu})§", "${1}§")
    base = base.str.replace_all("§", "")
    out = nodes.lazy().with_columns(base.str.extract_all(r"[\p{L}\p{N}]+").alias("tok"), paren.alias("declared"))
    et = pl.col(entity_type)
    first_up = pl.col("tok").list.first().str.to_uppercase()
    last_up = pl.col("tok").list.last().str.to_uppercase()
    many = pl.col("tok").list.len() > 1
    capital_follows = pl.col("tok").list.slice(1).list.eval(pl.element().str.contains(r"^\p{Lu}")).list.any()
    for _ in range(3):
        # leading prepositions and articles are never part of a name ("in the North Bay"); before a person's
        # name, lower-case words are descriptions ("boss Steven Moffat") and titles are honorifics
        out = out.with_columns(_drop_first(many & (
            first_up.is_in(ARTICLES) | (first_up.is_in(PREPOSITIONS) & capital_follows)
            | ((et == "PERSON") & (first_up.is_in(HONORIFICS)
                                   | (pl.col("tok").list.first().str.contains(r"^\p{Ll}") & capital_follows)))
        )).alias("tok"))
    for _ in range(2):
        out = out.with_columns(_drop_last(many & et.is_in(ORG_TYPES) & last_up.is_in(CORPORATE_SUFFIXES))
                               .alias("tok"))
    up = pl.col("tok").list.eval(pl.element().str.to_uppercase())
    out = out.with_columns(up.alias("up"))
    key = pl.col("up").list.join(" ")
    geo = key.replace_strict(GEO_ALIASES, default=key, return_dtype=pl.String)
    out = out.with_columns(pl.when(et.is_in(GEO_TYPES)).then(geo).otherwise(key).alias("key"), key.alias("raw_key"))
    return out.with_columns(
        pl.col("tok").list.len().cast(pl.Int64).alias("n_tok"),
        pl.col("key").str.replace_all(" ", "").str.len_chars().cast(pl.Int64).alias("key_chars"),
        # name-like: starts with a capital (or a digit) and has a capitalised word ("15-inch" is not a name)
        (pl.col("tok").list.first().str.contains(r"^[\p{Lu}\p{N}]").fill_null(False)
         & pl.col("tok").list.eval(pl.element().str.contains(r"^\p{Lu}")).list.any().fill_null(False)).alias("first_cap"),
        ((pl.col("tok").list.len() == 1)
         & pl.col("tok").list.first().str.contains(rf"^\p{{Lu}}[\p{{Lu}}\p{{N}}]{{1,{MAX_ACRONYM - 1}}}$").fill_null(False)
         ).alias("is_acronym"),
    ).collect()


# ---------------------------------------------------------------------------------------------------
# Handles: the keys under which a long form can be found by a short form.


def _spans() -> pl.DataFrame:
    rows = [(n, start, length) for n in range(2, MAX_TOKENS + 1) for length in range(1, n)
            for start in range(0, n - length + 1)]
    return pl.DataFrame(rows, schema={"n_tok": pl.Int64, "start": pl.Int64, "length": pl.Int64}, orient="row")


def _handles(nodes: pl.DataFrame, short_keys: pl.DataFrame, short_acronyms: pl.DataFrame) -> pl.DataFrame:
    """(l, h_key, rule, global_ok) for long nodes, restricted to keys some short node has."""
    long = nodes.filter((pl.col("n_tok") >= 2) & (pl.col("n_tok") <= MAX_TOKENS)).select(
        "idx", "entity_type", "tok", "up", "n_tok")
    connectors = pl.element().str.to_lowercase().is_in(CONNECTORS)
    frames = []

    # token runs (containment, surname, trailing person runs, given names)
    # (locations publish no runs; the run strings are built first and only the matching ones get the
    # other columns back)
    spans = (
        long.lazy().filter(pl.col("entity_type") != "LOCATION").select("idx", "n_tok", "up")
        .join(_spans().lazy(), on="n_tok")
        .select("idx", "start", "length",
                pl.col("up").list.slice(pl.col("start"), pl.col("length")).list.join(" ").alias("h_key"))
        .join(short_keys.lazy(), on="h_key", how="semi")
        .join(long.lazy(), on="idx")
        .collect()
    )
    if spans.height:
        outside_tok = pl.concat_list(pl.col("tok").list.slice(0, pl.col("start")),
                                     pl.col("tok").list.slice(pl.col("start") + pl.col("length")))
        is_prep = pl.col("tok").list.eval(pl.element().str.to_lowercase().is_in(HEAD_CONNECTORS))
        first_prep = is_prep.list.arg_max()
        head = pl.when(is_prep.list.any() & (first_prep > 0)).then(first_prep - 1).otherwise(pl.col("n_tok") - 1)
        spans = spans.with_columns(
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
            spans = spans.with_columns(
                pl.when(at_place & (pl.col("head") > 0) & (pl.col("head") == pl.col("n_tok") - 1))
                .then(pl.col("head") - 1).otherwise(pl.col("head")).alias("head"))
        spans = spans.with_columns(
            pl.col("outside").list.eval(pl.element().str.contains(r"^[\p{Lu}\p{N}]") | connectors).list.all()
            .alias("extras_namelike"),
            pl.col("outside").list.eval(pl.element().str.contains(r"\p{N}|^[IVXLC]{1,4}$")).list.any()
            .alias("extras_numbered"),
            ((pl.col("start") <= pl.col("head")) & (pl.col("head") < pl.col("start") + pl.col("length")))
            .alias("has_head"),
        )
        et = pl.col("entity_type")
        rule = (
            pl.when(et == "PERSON").then(
                pl.when(pl.col("is_suffix") & (pl.col("length") == 1)).then(pl.lit("surname"))
                .when(pl.col("is_suffix")).then(pl.lit("person_short_form"))
                .when(pl.col("is_prefix")).then(pl.lit("first_name")))
            .when(et == "LOCATION").then(None)  # Albany / Albany County, Germany / East Germany: other places
            .otherwise(
                pl.when(pl.col("extras_namelike") & pl.col("has_head") & ~pl.col("after_connector")
                        & ~pl.col("extras_numbered")).then(pl.lit("containment")))
        )
        global_ok = (
            pl.when(pl.col("rule").is_in(["surname", "person_short_form"])).then(True)
            .when(pl.col("rule") == "containment").then(pl.col("length") >= 2)
            .otherwise(False)
        )
        spans = spans.with_columns(rule.alias("rule")).filter(pl.col("rule").is_not_null())
        frames.append(spans.select(pl.col("idx").alias("l"), "h_key", "rule", global_ok.alias("global_ok")))

    # person: first + last of a longer name, first + middle initials + last, initials + last
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
    frames.append(fl.select(pl.col("idx").alias("l"), "h_key", pl.lit("person_short_form").alias("rule"),
                            pl.lit(True).alias("global_ok")))

    # acronyms: initials of capitalised content words (variants: connectors, all-caps tokens whole)
    if short_acronyms.height:
        e = pl.element()
        is_conn = e.str.to_lowercase().is_in(CONNECTORS)
        content = e.str.contains(r"^[\p{Lu}\p{N}]") & ~is_conn
        initial = e.str.slice(0, 1).str.to_uppercase()
        whole = pl.when(e.str.contains(r"^\p{Lu}{2,4}$")).then(e).otherwise(initial)

        def letters(keep: pl.Expr, letter: pl.Expr) -> pl.Expr:
            return pl.col("tok").list.eval(pl.when(keep).then(letter).otherwise(pl.lit(""))).list.join("")

        acr = long.lazy().select(
            "idx",
            letters(content, initial).alias("a1"),
            letters(content, whole).alias("a2"),
            letters(content | is_conn, initial).alias("a3"),
            letters(content | is_conn, whole).alias("a4"),
            pl.col("tok").list.eval(content).list.sum().alias("n_content"),
        ).filter(pl.col("n_content") >= 2).collect()
        acr = acr.unpivot(index="idx", on=["a1", "a2", "a3", "a4"], value_name="h_key").select("idx", "h_key")
        acr = acr.filter(pl.col("h_key").str.len_chars().is_between(2, MAX_ACRONYM)).unique()
        acr = acr.join(short_acronyms, on="h_key", how="semi")
        frames.append(acr.select(pl.col("idx").alias("l"), "h_key", pl.lit("acronym").alias("rule"),
                                 (pl.col("h_key").str.len_chars() >= 3).alias("global_ok")))
    declared = nodes.filter(pl.col("declared").is_not_null() & (pl.col("n_tok") >= 1)).select(
        pl.col("idx").alias("l"), pl.col("declared").str.to_uppercase().alias("h_key"),
        pl.lit("declared_acronym").alias("rule"), pl.lit(True).alias("global_ok"))
    frames.append(declared.join(short_acronyms, on="h_key", how="semi"))
    frames = [f.with_columns(pl.col("l").cast(pl.Int64), pl.col("global_ok").cast(pl.Boolean)) for f in frames]
    return pl.concat(frames).unique()


# ---------------------------------------------------------------------------------------------------


class NameLinker:
    """Rule-based name linker (see the module docstring). `stats` describes the last `link` call."""

    name = "name_rules"

    def __init__(self, max_block: int = 32, coverage: float = COVERAGE, specificity_ratio: float = SPECIFICITY_RATIO):
        self.max_block = max_block
        self.coverage = coverage
        self.specificity_ratio = specificity_ratio
        self.stats: dict[str, float | int] = {}

    def __call__(self, mentions: pl.DataFrame, overrides: pl.DataFrame | None = None) -> pl.DataFrame:
        return self.link(mentions, overrides)

    def link(self, mentions: pl.DataFrame, overrides: pl.DataFrame | None = None) -> pl.DataFrame:
        t0 = time.perf_counter()
        stats: dict[str, float | int] = {"mentions": mentions.height}
        self.stats = stats
        if mentions.height == 0:
            return schemas.empty(schemas.ENTITY_ALIASES)
        nodes = with_name_keys(entity_nodes(mentions))
        ids = nodes["entity_id"].to_list()
        n = len(ids)
        stats["entities"] = n
        index = {e: i for i, e in enumerate(ids)} if overrides is not None and overrides.height else {}
        merges, splits = _override_pairs(overrides, index)
        uf = Clusters(n, splits)
        names = nodes["name"].to_list()
        node_docs = (
            mentions.select("entity_id", pl.col("document_id").fill_null(""))
            .unique()
            .join(nodes.select("entity_id", "idx"), on="entity_id")
            .select("idx", pl.col("document_id").alias("doc"))
        )
        stats["entity_documents"] = node_docs.height

        # 1. overrides and name variants (equivalences)
        for a, b in merges:
            uf.union(a, b, "override", 1.0, f'override: merge "{names[a]}" into "{names[b]}"')
        self._equivalences(nodes, node_docs, uf, names, stats)
        group = [uf.find(i) for i in range(n)]
        stats["seconds_keys"] = round(time.perf_counter() - t0, 3)

        # 2. short forms
        attached = self._short_forms(nodes, node_docs, uf, group, names, stats)

        # 3. canonical choice and resolved redirects
        merge_targets = {b for _, b in merges}
        rank = nodes.select(
            "idx",
            (~pl.col("idx").is_in(list(merge_targets))).alias("r0"),
            (pl.col("entity_type") == OTHER).alias("r1"),
            pl.Series("r2", [group[i] in attached for i in range(n)], dtype=pl.Boolean),
            (-pl.col("n_mentions")).alias("r3"),
            (-pl.col("n_tok")).alias("r4"),
        )
        out = resolve_clusters(ids, uf, rank)
        stats["redirects"] = out.height
        stats["blocked_by_split"] = uf.blocked
        stats["seconds"] = round(time.perf_counter() - t0, 3)
        return out

    # -- name variants -------------------------------------------------------------------------------

    def _equivalences(self, nodes: pl.DataFrame, node_docs: pl.DataFrame, uf: Clusters, names: list[str],
                      stats: dict) -> None:
        keyed = nodes.filter(pl.col("key") != "").select("idx", "key", "raw_key", "entity_type", "first_cap", "is_acronym")
        same = (
            keyed.sort("idx").group_by("key", "entity_type").agg("idx", "raw_key")
            .filter(pl.col("idx").list.len() > 1).sort("key", "entity_type")
        )
        count = 0
        for key, _et, members, raw in same.iter_rows():
            a = members[0]
            for b, raw_b in zip(members[1:], raw[1:], strict=True):
                if raw_b != raw[0] and (raw_b in GEO_ALIASES or raw[0] in GEO_ALIASES):
                    count += uf.union(b, a, "geo_alias", 0.95, f'country alias: "{names[b]}" = "{names[a]}"')
                else:
                    count += uf.union(b, a, "name_variant", 0.95,
                                      f'same name after folding: "{names[b]}" = "{names[a]}" ({key})')
        # OTHER joins the only typed entity with its key
        typed = (
            keyed.filter(pl.col("entity_type") != OTHER)
            .group_by("key").agg(pl.col("entity_type").n_unique().alias("n_types"), pl.col("idx").min().alias("target"))
            .filter(pl.col("n_types") == 1)
        )
        # ... when it is written as a name ("jury" typed OTHER and "jury" typed PERSON are common nouns) and
        # never in a document that also has the typed one: a type disagreement inside one document is a
        # distinction ("Spanish" the language next to "Spanish" for Spain), across documents it is noise
        other = (keyed.filter((pl.col("entity_type") == OTHER) & (pl.col("first_cap") | pl.col("is_acronym")))
                 .join(typed, on="key"))
        if other.height:
            typed_docs = (keyed.filter(pl.col("entity_type") != OTHER).select("key", "idx")
                          .join(node_docs, on="idx").select("key", "doc"))
            shared = (other.select("idx", "key").join(node_docs, on="idx")
                      .join(typed_docs, on=["key", "doc"], how="semi").select("idx").unique())
            other = other.join(shared, on="idx", how="anti")
        other = other.sort("idx")
        for idx, target in other.select("idx", "target").iter_rows():
            count += uf.union(idx, target, "name_variant", 0.85,
                              f'untyped "{names[idx]}" matches the only typed entity "{names[target]}"')
        stats["links_name_variant"] = count

    # -- short forms ---------------------------------------------------------------------------------

    def _short_forms(self, nodes, node_docs, uf: Clusters, group: list[int], names: list[str], stats: dict) -> set[int]:
        shorts = nodes.filter(
            (pl.col("n_tok") >= 1) & (pl.col("n_tok") < MAX_TOKENS) & (pl.col("key") != "")
            & (pl.col("first_cap") | pl.col("is_acronym"))
        ).with_columns(
            # the key of a short form is its token run (geo aliases already handled by equivalence)
            pl.col("up").list.join(" ").alias("skey"),
        )
        short_keys = shorts.filter(pl.col("key_chars") >= MIN_SHORT_CHARS).select(pl.col("skey").alias("h_key")).unique()
        short_acr = shorts.filter(pl.col("is_acronym")).select(pl.col("skey").alias("h_key")).unique()
        handles = _handles(nodes, short_keys, short_acr)
        stats["handles"] = handles.height
        attached: set[int] = set()
        if handles.height == 0:
            stats["candidate_pairs"] = 0
            return attached
        ltype = nodes.select(pl.col("idx").alias("l"), pl.col("entity_type").alias("l_type"),
                             pl.col("n_docs").alias("l_docs"))
        handles = handles.join(ltype, on="l")
        s = shorts.select(
            pl.col("idx").alias("s"), pl.col("skey").alias("h_key"), pl.col("entity_type").alias("s_type"),
            "n_tok", "key_chars", "is_acronym",
        )
        rule_ok = (
            pl.when(pl.col("rule").is_in(["acronym", "declared_acronym"])).then(pl.col("is_acronym"))
            .otherwise(pl.col("key_chars") >= MIN_SHORT_CHARS)
        )
        same_type = pl.col("s_type") == pl.col("l_type")

        # same-document candidates: join on (document, handle)
        hd = handles.join(node_docs.rename({"idx": "l"}), on="l")
        sd = s.join(node_docs.rename({"idx": "s"}), on="s")
        in_doc = (
            sd.join(hd, on=["doc", "h_key"])
            .filter((pl.col("s") != pl.col("l")) & rule_ok & same_type)
            .select("s", "l", "doc", "rule", "n_tok", "global_ok")
        )
        # across documents: join on handle, skipping handles shared by too many long entities
        block = handles.group_by("h_key").agg(pl.col("l").n_unique().alias("block"))
        capped = block.filter(pl.col("block") > self.max_block)
        glob_h = handles.filter(pl.col("global_ok")).join(capped, on="h_key", how="anti")
        glob = (
            s.join(glob_h, on="h_key")
            .filter((pl.col("s") != pl.col("l")) & rule_ok & same_type)
            .select("s", "l", "rule", "n_tok", "l_docs")
        )
        ambiguous_short = s.join(capped, on="h_key", how="semi").select("s")
        stats["candidate_pairs_in_document"] = in_doc.height
        stats["candidate_pairs_global"] = glob.height
        stats["candidate_pairs"] = in_doc.height + glob.height
        stats["capped_handles"] = capped.height

        grp = pl.DataFrame({"s": pl.Series(range(len(group)), dtype=pl.Int64), "g": pl.Series(group, dtype=pl.Int64)})
        in_doc = in_doc.join(grp, on="s")
        glob = glob.join(grp, on="s")
        # groups with any same-document candidate never use the across-documents path
        doc_groups = in_doc.select("g").unique()
        glob = glob.join(doc_groups, on="g", how="anti").join(
            ambiguous_short.join(grp, on="s").select("g").unique(), on="g", how="anti")
        g_docs = node_docs.join(grp.rename({"s": "idx"}), on="idx").group_by("g").agg(
            pl.col("doc").n_unique().alias("g_docs"))
        rank = pl.col("rule").replace_strict(RULE_RANK, return_dtype=pl.Int64)
        in_doc = in_doc.with_columns(rank.alias("rank"))
        glob = glob.with_columns(rank.alias("rank"))

        links = {"acronym": 0, "person_short_form": 0, "containment": 0}
        levels = sorted(set(in_doc["n_tok"].to_list()) | set(glob["n_tok"].to_list()), reverse=True)
        for level in levels:
            decisions = []
            rows = in_doc.filter(pl.col("n_tok") == level)
            if rows.height:
                decisions += self._same_document(rows, uf, g_docs, attached)
            rows = glob.filter(pl.col("n_tok") == level)
            if rows.height:
                decisions += self._across_documents(rows, uf, g_docs, attached)
            for g, s_idx, l_idx, rule, doc, votes, n_docs in sorted(decisions, key=lambda d: (d[0], d[1], d[2])):
                if g in attached:
                    continue
                method = RULE_METHOD[rule]
                what = RULE_LABEL[rule]
                score = SCORES[method][0 if doc is not None else 1]
                if doc is not None:
                    evidence = (f'same document {doc}: "{names[s_idx]}" is the {what} of "{names[l_idx]}" '
                                f"({votes} of {n_docs} documents agree)")
                else:
                    evidence = f'"{names[s_idx]}" is the {what} of "{names[l_idx]}", the only candidate in any document'
                if uf.union(s_idx, l_idx, method, score, evidence):
                    attached.add(g)
                    links[method] += 1
        for method, count in links.items():
            stats[f"links_{method}"] = count
        return attached

    @staticmethod
    def _roots(rows: pl.DataFrame, uf: Clusters) -> pl.DataFrame:
        ls = rows["l"].unique().to_list()
        gs = rows["g"].unique().to_list()
        lr = pl.DataFrame({"l": pl.Series(ls, dtype=pl.Int64), "root": pl.Series([uf.find(x) for x in ls], dtype=pl.Int64)})
        gr = pl.DataFrame({"g": pl.Series(gs, dtype=pl.Int64), "g_root": pl.Series([uf.find(x) for x in gs], dtype=pl.Int64)})
        return rows.join(lr, on="l").join(gr, on="g").filter(pl.col("root") != pl.col("g_root"))

    def _same_document(self, rows: pl.DataFrame, uf: Clusters, g_docs: pl.DataFrame, attached: set[int]) -> list:
        rows = self._roots(rows.filter(~pl.col("g").is_in(list(attached))), uf)
        if rows.height == 0:
            return []
        per_doc = rows.group_by("g", "doc").agg(pl.col("root").n_unique().alias("n_roots"))
        unique_docs = per_doc.filter(pl.col("n_roots") == 1).select("g", "doc")
        voted = rows.join(unique_docs, on=["g", "doc"], how="semi")
        votes = (
            voted.group_by("g", "root").agg(
                pl.col("doc").n_unique().alias("votes"),
                pl.col("rank").min().alias("best_rank"),
                pl.struct("rank", "doc", "s", "l", "rule").sort_by("rank", "doc", "s", "l").first().alias("rep"),
            )
            .sort(["g", "votes", "best_rank", "root"], descending=[False, True, False, False])
        )
        ranked = votes.group_by("g", maintain_order=True).agg(
            pl.col("votes").first().alias("top"),
            pl.col("votes").get(1, null_on_oob=True).fill_null(0).alias("second"),
            pl.col("rep").first(),
        ).join(g_docs, on="g")
        acronym = pl.col("rep").struct.field("rule").is_in(["acronym", "declared_acronym"])
        ok = ranked.filter(
            (pl.col("top") > pl.col("second"))
            & (acronym | (pl.col("top") >= self.coverage * pl.col("g_docs")))
        ).unnest("rep")
        return list(ok.select("g", "s", "l", "rule", "doc", "top", "g_docs").iter_rows())

    def _across_documents(self, rows: pl.DataFrame, uf: Clusters, g_docs: pl.DataFrame, attached: set[int]) -> list:
        rows = self._roots(rows.filter(~pl.col("g").is_in(list(attached))), uf)
        if rows.height == 0:
            return []
        per_g = (
            rows.sort("rank", "s", "l")
            .group_by("g").agg(
                pl.col("root").n_unique().alias("n_roots"),
                pl.col("l_docs").max().alias("l_docs"),
                pl.col("s").first(), pl.col("l").first(), pl.col("rule").first(),
            )
            .filter(pl.col("n_roots") == 1)
            .join(g_docs, on="g")
        )
        acronym = pl.col("rule").is_in(["acronym", "declared_acronym"])
        ok = per_g.filter(acronym | (pl.col("g_docs") <= self.specificity_ratio * pl.col("l_docs")))
        return [(g, s, l, rule, None, 0, n) for g, s, l, rule, n in ok.select("g", "s", "l", "rule", "g_docs").iter_rows()]


# ---------------------------------------------------------------------------------------------------
# Baselines (the reference rules), for the comparison table.


def _rank_by_frequency(nodes: pl.DataFrame) -> pl.DataFrame:
    return nodes.select("idx", (-pl.col("n_mentions")).alias("r0"),
                        (-pl.col("normalized_name").str.len_chars().cast(pl.Int64)).alias("r1"))


class _BaselineLinker:
    """The shared frame of the baselines: nodes, override handling, resolution; `_link` adds the pairs."""

    name = "baseline"

    def __call__(self, mentions, overrides=None):
        return self.link(mentions, overrides)

    def link(self, mentions: pl.DataFrame, overrides: pl.DataFrame | None = None) -> pl.DataFrame:
        if mentions.height == 0:
            return schemas.empty(schemas.ENTITY_ALIASES)
        nodes = entity_nodes(mentions)
        ids = nodes["entity_id"].to_list()
        merges, splits = _override_pairs(overrides, {e: i for i, e in enumerate(ids)})
        uf = Clusters(len(ids), splits)
        for a, b in merges:
            uf.union(a, b, "override", 1.0, "override: merge")
        self._link(nodes, ids, uf)
        return resolve_clusters(ids, uf, _rank_by_frequency(nodes))

    def _link(self, nodes: pl.DataFrame, ids: list[str], uf: Clusters) -> None:
        raise NotImplementedError


class ExactNameLinker(_BaselineLinker):
    """Baseline: ids with the same normalized name are one entity, whatever their types."""

    name = "exact_name"

    def _link(self, nodes: pl.DataFrame, ids: list[str], uf: Clusters) -> None:
        groups = nodes.filter(pl.col("normalized_name") != "").group_by("normalized_name").agg(pl.col("idx").sort()) \
            .filter(pl.col("idx").list.len() > 1).sort("normalized_name")
        for key, members in groups.iter_rows():
            for b in members[1:]:
                uf.union(b, members[0], "exact_name", 1.0, f"same normalized name {key}")


class ContainmentLinker(_BaselineLinker):
    """Baseline, the seed rule: same type, the shorter normalized name (>= 4 characters) contained in
    the longer one, case-insensitive; each id goes to its best container (most mentions, longest)."""

    name = "containment"

    def _link(self, nodes: pl.DataFrame, ids: list[str], uf: Clusters) -> None:
        text = [s.replace("_", " ") for s in nodes["normalized_name"].to_list()]
        types = nodes["entity_type"].to_list()
        counts = nodes["n_mentions"].to_list()
        # block on 4-grams: a contained name's first 4-gram occurs in its container
        grams: dict[tuple[str, str], list[int]] = {}
        for i, t in enumerate(text):
            for g in {t[k:k + 4] for k in range(len(t) - 3)}:
                grams.setdefault((types[i], g), []).append(i)
        for i in sorted(range(len(text)), key=lambda k: ids[k]):
            t = text[i]
            if len(t) < MIN_SHORT_CHARS:
                continue
            best = None
            for j in grams.get((types[i], t[:4]), []):
                if j != i and len(text[j]) > len(t) and t in text[j]:
                    cand = (-counts[j], -len(text[j]), ids[j])
                    if best is None or cand < best[0]:
                        best = (cand, j)
            if best is not None:
                j = best[1]
                uf.union(i, j, "containment", 0.8, f'"{t}" contained in "{text[j]}"')


class FuzzyLinker(_BaselineLinker):
    """Baseline: RapidFuzz WRatio >= threshold between names of the same type sharing a token
    (token blocks larger than `max_block` are skipped), transitively."""

    name = "fuzzy_wratio"

    def __init__(self, threshold: float = 80.0, max_block: int = 200):
        self.threshold = threshold
        self.max_block = max_block

    def _link(self, nodes: pl.DataFrame, ids: list[str], uf: Clusters) -> None:
        from rapidfuzz import fuzz, process

        text = [s.replace("_", " ") for s in nodes["normalized_name"].to_list()]
        blocks = (
            nodes.select("idx", "entity_type", pl.col("normalized_name").str.split("_").alias("tok"))
            .explode("tok").filter(pl.col("tok").str.len_chars() > 0).unique()
            .group_by("entity_type", "tok").agg(pl.col("idx").sort())
            .filter(pl.col("idx").list.len().is_between(2, self.max_block))
            .sort("entity_type", "tok")
        )
        for _et, tok, members in blocks.iter_rows():
            names = [text[i] for i in members]
            for a in range(len(members) - 1):
                for _match, score, b in process.extract_iter(names[a], names[a + 1:], scorer=fuzz.WRatio,
                                                             score_cutoff=self.threshold):
                    b += a + 1
                    uf.union(members[a], members[b], "fuzzy", float(score) / 100,
                             f'WRatio {score:.0f}: "{names[a]}" ~ "{names[b]}"')


exact_name_linker = ExactNameLinker()
containment_linker = ContainmentLinker()
fuzzy_linker = FuzzyLinker()

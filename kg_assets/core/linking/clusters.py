"""Clusters of entity ids and the redirects they resolve to, shared by every linker.

A linker reads the distinct entity ids of the mentions (`entity_nodes`), feeds the pairs it accepts into
`Clusters` (a union-find that honours split overrides and keeps the evidence of each union) and turns the
result into resolved redirects with `resolve_clusters`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

import polars as pl

from kg_assets.core import schemas

OTHER = "OTHER"


class Linker(Protocol):
    """What the pipeline's linking step calls (`NameLinker`, or a `KG_LINKER=module:attr` plug-in).

    `link` takes every mention (ENTITY_MENTIONS contract) and the manual decisions of `kg link` (LINK_OVERRIDES
    contract, or None) and returns redirect rows (ENTITY_ALIASES contract: from_id, to_id, method, score,
    evidence), resolved: every non-canonical id points straight at its canonical one, never at itself.
    `name` and `version` are shown in the linked_entities asset's metadata. A linker may also say which mention
    columns it reads (`mention_columns`, a tuple of ENTITY_MENTIONS names): the pipeline then reads only those,
    which at millions of mentions is most of the step's memory (the descriptions are whole sentences); a
    linker that does not say gets every column."""

    name: str
    version: str

    def link(self, mentions: pl.DataFrame, overrides: pl.DataFrame | None = None) -> pl.DataFrame:
        """Redirect rows (ENTITY_ALIASES contract) for the given ENTITY_MENTIONS frame."""
        ...


def mention_columns(linker: Linker) -> list[str]:
    """The ENTITY_MENTIONS columns `linker` reads: those it declares, else every one (an empty list)."""
    declared = getattr(linker, "mention_columns", None)
    unknown = sorted(set(declared or ()) - set(schemas.ENTITY_MENTIONS))
    if unknown:
        raise ValueError(f"linker {linker.name} {linker.version} reads mention columns that do not exist: {', '.join(unknown)}")
    return list(declared or ())


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


def keep_created_at(redirects: pl.DataFrame, previous: pl.DataFrame) -> pl.DataFrame:
    """Stamp redirects with when each (from, to) link was first made; new links get now."""
    first_made = previous.select("from_id", "to_id", pl.col("created_at").cast(schemas.TS).alias("_first")).unique(["from_id", "to_id"])
    return schemas.conform(
        redirects.join(first_made, on=["from_id", "to_id"], how="left").with_columns(
            pl.coalesce("_first", pl.lit(datetime.now(UTC))).cast(schemas.TS).alias("created_at")
        ),
        schemas.ENTITY_ALIASES,
    )


# ---------------------------------------------------------------------------------------------------
# Union-find with "cannot link" constraints and an audit trail of accepted edges.


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
    without it the smallest id wins. method/score/evidence come from the first accepted edge between the
    id and its canonical id, else from the first accepted edge touching the id (its first hop towards it)."""
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
    direct_edge: dict[tuple[int, int], int] = {}
    for k, (a, b, *_rest) in enumerate(clusters.edges):
        first_edge.setdefault(a, k)
        first_edge.setdefault(b, k)
        direct_edge.setdefault((min(a, b), max(a, b)), k)
    index = dict(zip(frame["entity_id"].to_list(), frame["idx"].to_list()))
    rows = frame.join(canonical, on="root").filter(pl.col("entity_id") != pl.col("to_id"))
    methods, scores, evidence = [], [], []
    for idx, to_id in rows.select("idx", "to_id").iter_rows():
        target = index[to_id]
        k = direct_edge.get((min(idx, target), max(idx, target)), first_edge.get(idx))
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


def override_pairs(overrides: pl.DataFrame | None, index: dict[str, int]) -> tuple[list, list]:
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
# Distinct entity ids: the nodes every linker works on.


def mention_weight(mentions: pl.DataFrame) -> pl.Expr:
    """How many mentions a row stands for: its `mention_count` where rows were counted
    (`Warehouse.entity_mention_counts`), else one."""
    return pl.col("mention_count").cast(pl.Int64) if "mention_count" in mentions.columns else pl.lit(1, pl.Int64)


def mention_total(mentions: pl.DataFrame) -> int:
    """How many mentions `mentions` stands for, counted rows or not (`mention_weight`)."""
    return int(mentions["mention_count"].sum()) if "mention_count" in mentions.columns else mentions.height


@dataclass(frozen=True)
class LinkerInput:
    """What `NameLinker` reads of the mentions, made once: `nodes` (`entity_nodes`), `node_doc_counts` (idx, doc,
    n, weak: each id's mentions per document, `doc` numbering the documents from 1 in id order, `weak` when none
    of them is typed with confidence WEAK_BELOW or more), `document_ids` (the ids the numbers stand for, in order)
    and `mentions` (how many). Built from a mention frame here (`linker_input`), or by the warehouse in SQL
    (`WarehouseReads.linker_input`), which hands over numbers where the frame has a string per mention: at
    300,000 documents, six million (id, document) rows."""

    nodes: pl.DataFrame
    node_doc_counts: pl.DataFrame
    document_ids: pl.Series
    mentions: int


# Below this confidence a type is a guess from context alone (the heuristic's place preposition, 0.6; a lone
# given name, 0.55; a year after a name, 0.6), not from the name itself or a cue about it (0.7 and up).
WEAK_BELOW = 0.7


def linker_input(mentions: pl.DataFrame) -> LinkerInput:
    """The `LinkerInput` of an ENTITY_MENTIONS frame (every mention, or counted: `mention_weight`)."""
    nodes = entity_nodes(mentions)
    document_id = pl.col("document_id").fill_null("")
    document_ids = mentions.select(document_id.unique().sort())["document_id"]
    confidence = pl.col("confidence") if "confidence" in mentions.columns else pl.lit(None, pl.Float64)
    counts = (
        mentions.select("entity_id", document_id.rank("dense").cast(pl.UInt32).alias("doc"), confidence.alias("conf"),
                        mention_weight(mentions).alias("w"))
        .group_by("entity_id", "doc").agg(pl.col("w").sum().cast(pl.Int64).alias("n"),
                                          (pl.col("conf").max().fill_null(1.0) < WEAK_BELOW).alias("weak"))
        .join(nodes.select("entity_id", "idx"), on="entity_id").select("idx", "doc", "n", "weak")
    )
    return LinkerInput(nodes, counts, document_ids, mention_total(mentions))


def entity_nodes(mentions: pl.DataFrame) -> pl.DataFrame:
    """One row per entity id: idx, entity_id, entity_type, normalized_name, name (most frequent surface
    form, ties alphabetical), n_mentions, n_docs. Sorted by entity_id (idx = row number). `mentions` may be
    counted rows (`mention_weight`)."""
    m = mentions.lazy().select(
        "entity_id",
        pl.coalesce(pl.col("name"), pl.col("normalized_name"), pl.lit("")).alias("name"),
        pl.col("normalized_name").fill_null(""),
        pl.col("entity_type").fill_null(OTHER),
        pl.col("document_id").fill_null(""),
        mention_weight(mentions).alias("_w"),
    ).filter(pl.col("entity_id").is_not_null())
    names = (
        m.group_by("entity_id", "name").agg(pl.col("_w").sum().alias("len"))
        .group_by("entity_id")
        .agg(pl.col("name").sort_by(["len", "name"], descending=[True, False]).first())
    )
    stats = m.group_by("entity_id").agg(
        pl.col("entity_type").min(),
        pl.col("normalized_name").min(),
        pl.col("_w").sum().cast(pl.Int64).alias("n_mentions"),
        pl.col("document_id").n_unique().cast(pl.Int64).alias("n_docs"),
    )
    return (stats.join(names, on="entity_id").sort("entity_id").with_row_index("idx")
            .with_columns(pl.col("idx").cast(pl.Int64)).collect())

"""Baseline linkers, the reference rules the `NameLinker` is compared with (`benchmarks/linking.py --eval`).

- `ExactIdLinker`: the same normalized name and type already share an id (`normalize.entity_id`), so
  it redirects nothing.
- `exact_name_linker`: equal normalized name, any type.
- `containment_linker`: the seed rule: same type, case-insensitive containment, shorter side >= 4
  characters.
- `fuzzy_linker`: RapidFuzz WRatio >= 80 within token blocks.
"""

from __future__ import annotations

import polars as pl
from rapidfuzz import fuzz, process

from kg_assets.core import schemas
from kg_assets.core.linking.clusters import Clusters, entity_nodes, override_pairs, resolve_clusters
from kg_assets.core.linking.name_keys import MIN_SHORT_CHARS


class ExactIdLinker:
    """Baseline: only what normalization already joins (one id per type and normalized name)."""

    name = "exact_id"

    def link(self, mentions: pl.DataFrame, overrides: pl.DataFrame | None = None) -> pl.DataFrame:
        return schemas.empty(schemas.ENTITY_ALIASES)


def _rank_by_frequency(nodes: pl.DataFrame) -> pl.DataFrame:
    return nodes.select("idx", (-pl.col("n_mentions")).alias("r0"),
                        (-pl.col("normalized_name").str.len_chars().cast(pl.Int64)).alias("r1"))


class _BaselineLinker:
    """The shared frame of the baselines: nodes, override handling, resolution; `_link` adds the pairs."""

    name = "baseline"

    def link(self, mentions: pl.DataFrame, overrides: pl.DataFrame | None = None) -> pl.DataFrame:
        if mentions.height == 0:
            return schemas.empty(schemas.ENTITY_ALIASES)
        nodes = entity_nodes(mentions)
        ids = nodes["entity_id"].to_list()
        merges, splits = override_pairs(overrides, {e: i for i, e in enumerate(ids)})
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

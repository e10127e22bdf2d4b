"""`KnowledgeGraph`: search, entity profiles, neighbourhoods, context blocks and export over one warehouse.

    from kg_assets.query import KnowledgeGraph

    with KnowledgeGraph("data/warehouse.duckdb") as kg:     # one read-only connection for many calls
        kg.search("entity:Sarah").to_frame()
        kg.profile("Sarah Chen", hops=1)
        kg.context("Sarah Chen met Alan Okafor at QDL.", max_tokens=500).text

Without `with`, every call opens and closes its own read-only connection, so a writer (a `kg run`) is
never blocked for longer than one call.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from pathlib import Path

import polars as pl

from kg_assets.core.chat import messages_at
from kg_assets.query import matching
from kg_assets.query.lookup import build_entity_lookup
from kg_assets.query.models import (
    Alias, AttributeVersion, EntityProfile, GraphEdge, GraphNode, MemoryHit, Relation, SearchHit, SearchResult,
    SourceSnippet,
    Subgraph,
)
from kg_assets.storage.graph_reads import GraphReads, WarehouseNotBuilt
from kg_assets.storage.warehouse import Warehouse

Moment = str | datetime | date | None


class EntityNotFound(LookupError):
    """No current entity has this id, name or alias."""


def _attributes(card: dict) -> dict[str, str]:
    return {a["key"]: a["value"] for a in card["attributes"]}


class EntitySearchOff(RuntimeError):
    """Entity search is turned off (KG_ENTITY_SEARCH_ENABLED=false, seed 002's entitySearchEnabled)."""


class KnowledgeGraph:
    def __init__(self, db_path: str | os.PathLike[str] | Warehouse | None = None, *, entity_search: bool = True):
        # A Warehouse (e.g. a DuckLake from the settings) or the path of a DuckDB file. `entity_search=False`
        # (KG_ENTITY_SEARCH_ENABLED=false) makes `search` refuse with EntitySearchOff.
        self.warehouse = db_path if isinstance(db_path, Warehouse) else Warehouse(db_path)
        self.entity_search = entity_search
        self._reads: GraphReads | None = None
        self._connection: contextlib.ExitStack | None = None

    # ---- connections -----------------------------------------------------------------------------
    def __enter__(self) -> KnowledgeGraph:
        stack = contextlib.ExitStack()
        self._reads = self._prepare(stack.enter_context(self._connect()))
        self._connection = stack
        return self

    def __exit__(self, *exc) -> None:
        if self._connection is not None:
            self._connection.close()
        self._reads = self._connection = None

    def _connect(self):
        if not self.warehouse.exists():
            raise WarehouseNotBuilt(f"no warehouse at {self.warehouse.path}; run `kg run` first")
        return self.warehouse.connect(read_only=True)

    @staticmethod
    def _prepare(con, lookup: bool = True) -> GraphReads:
        """Reads on `con`; with `lookup`, the entity lookup that name matching needs (rebuilt in memory, about
        a second, when the stored one is stale)."""
        reads = GraphReads(con)
        if lookup and not reads.stored_lookup_is_fresh():
            reads.use_lookup_frame(build_entity_lookup(reads.lookup_sources()))
        return reads

    @contextlib.contextmanager
    def _open(self, lookup: bool = True) -> Iterator[GraphReads]:
        if self._reads is not None:
            yield self._reads
            return
        with self._connect() as con:
            yield self._prepare(con, lookup)

    # ---- search ----------------------------------------------------------------------------------
    def search(self, query: str, *, types: Sequence[str] = (), limit: int = matching.DEFAULT_LIMIT,
               as_of: Moment = None, memories: int = 0, snippet_chars: int = 240) -> SearchResult:
        """Seed-style search: `entity:NAME`, `attr:key=value`, `attr:key`, or a bare name.

        With `memories=N`, also the N documents or chat messages best linked to the hits (seed 002's
        searchMemories): 1.0 for one an attribute value of a hit was read from (the queried key's, for
        `attr:`), 0.7 for one that mentions a hit; an attribute link is never replaced by a mention, and the
        snippet shows what links them."""
        if not self.entity_search:
            raise EntitySearchOff("entity search is off (KG_ENTITY_SEARCH_ENABLED=false): set it to true to search "
                                  "entities by entity:NAME, attr:KEY=VALUE or a bare name")
        parsed = matching.parse_query(query)
        moment = matching.parse_time(as_of)
        if limit < 1:
            raise ValueError("limit must be at least 1")
        wanted = [t.strip().upper() for t in types if t and t.strip()]
        if memories < 0:
            raise ValueError("memories must be 0 or more")
        with self._open() as reads:
            hits = self._search(reads, parsed, wanted, limit, moment)
            found = self._memories(reads, hits, parsed.key if parsed.kind == "attr" else None, moment, memories,
                                   snippet_chars) if memories and hits else []
        return SearchResult(query=query, kind=parsed.kind, as_of=moment, hits=hits, memories=found)

    @staticmethod
    def _memories(reads: GraphReads, hits: list[SearchHit], attr_key: str | None, moment: datetime | None,
                  limit: int, snippet_chars: int) -> list[MemoryHit]:
        links = reads.memory_links([h.entity_id for h in hits], attr_key, moment)
        if links.height == 0:
            return []
        order = {h.entity_id: i for i, h in enumerate(hits)}
        names = {h.entity_id: h.name for h in hits}
        # where in the document the link is: the value or the mention in its chunk (else the chunk's start)
        links = links.with_columns(
            (pl.col("chunk_start") + pl.coalesce(
                "anchor_start", pl.col("text").str.to_lowercase().str.find(pl.col("anchor").str.to_lowercase(), literal=True),
                pl.lit(0))).alias("char_start"),
            pl.when(pl.col("source") == "entity_attr").then(1.0).otherwise(0.7).alias("score"),
            pl.col("entity_id").replace_strict(order, return_dtype=pl.Int64).alias("hit_order"),
        )
        chats = links.filter(pl.col("source_type") == "chat")["document_id"].unique().to_list()
        messages = reads.current_messages_of(chats)
        placed = messages_at(messages, links.select("document_id", "char_start")) if chats else None
        links = links.with_columns(
            (placed["message_id"] if placed is not None else pl.Series([None] * links.height, dtype=pl.String))
            .alias("message_id"))
        content = {(d, m): c for d, m, c in messages.select("document_id", "message_id", "content").iter_rows()}
        best = (links.sort(["score", "hit_order", "document_time", "document_id", "chunk_index"],
                           descending=[True, False, True, False, False], nulls_last=True)
                .unique(["document_id", "message_id"], keep="first", maintain_order=True).head(limit))
        found = []
        for row in best.iter_rows(named=True):
            text = content.get((row["document_id"], row["message_id"])) or row["text"]  # a message: all of it
            found.append(MemoryHit(
                document_id=row["document_id"], message_id=row["message_id"], title=row["title"],
                document_time=row["document_time"], score=row["score"], source=row["source"],
                entity_id=row["entity_id"], entity_name=names[row["entity_id"]], why=row["detail"],
                snippet=matching.snippet(text, [row["anchor"]], snippet_chars)))
        return found

    def _search(self, reads: GraphReads, parsed: matching.Query, types: list[str], limit: int,
                moment: datetime | None) -> list[SearchHit]:
        if parsed.kind == "attr":
            scored = self._attribute_hits(reads, parsed, types, limit, moment)
        else:
            scored = self._name_hits(reads, parsed.text, types, limit)
        cards = {c["entity_id"]: c for c in reads.entity_cards(list(scored), moment).iter_rows(named=True)}
        return [
            SearchHit(entity_id=entity_id, name=cards[entity_id]["name"], entity_type=cards[entity_id]["entity_type"],
                      score=score, match=match, why=why(cards[entity_id]["name"]),
                      attributes=_attributes(cards[entity_id]), mention_count=cards[entity_id]["mention_count"],
                      document_count=cards[entity_id]["document_count"])
            for entity_id, (score, match, why) in scored.items() if entity_id in cards
        ]

    @staticmethod
    def _name_hits(reads: GraphReads, text: str, types: list[str], limit: int) -> dict:
        """entity_id -> (score, match, why(name)), best first: exact, partial, then fuzzy to fill the limit."""
        folded = matching.fold(text)
        scored: dict = {}
        for entity_id, rank, surface in reads.name_matches(
                folded, matching.normalized_name(text), matching.tokens(text), types, limit).iter_rows():
            score, match = matching.name_match_score(rank)
            scored[entity_id] = (score, match, _name_why(match, surface, text))
        if len(scored) < limit:
            choices = reads.surfaces(types).filter(~pl.col("entity_id").is_in(list(scored)))
            for entity_id, surface, similarity, score in matching.fuzzy_matches(
                    folded, choices, limit - len(scored)).iter_rows():
                scored[entity_id] = (score, "fuzzy", _name_why("fuzzy", surface, text, similarity))
        return scored

    @staticmethod
    def _attribute_hits(reads: GraphReads, parsed: matching.Query, types: list[str], limit: int,
                        moment: datetime | None) -> dict:
        exact: set[str] = set()
        partial = None
        if parsed.value is not None:
            partial = matching.normalize_value(parsed.value)
            # A value naming a linked entity is stored as that entity's canonical name: look it up the same way.
            named = reads.names_for_key(matching.normalized_name(parsed.value))
            equivalent = matching.equivalent_values(parsed.value, reads.attribute_values(parsed.key, moment))
            exact = {partial, *(matching.normalize_value(v) for v in (*named, *equivalent))}
        rows = reads.attribute_matches(parsed.key, sorted(exact), partial, types, limit, moment)
        scored = {}
        for entity_id, rank, value, valid_from, valid_until in rows.iter_rows():
            score = matching.EXACT_SCORE if rank == 0 else matching.PARTIAL_SCORE
            scored[entity_id] = (score, matching.ATTR_MATCHES[rank],
                                 _attribute_why(parsed, rank, value, valid_from, valid_until, moment))
        return scored

    # ---- one entity --------------------------------------------------------------------------------
    def _resolve(self, reads: GraphReads, entity: str) -> tuple[str, list[SearchHit]]:
        """The entity an id, name or alias names: (entity_id, other entities named exactly as well). Among
        exact hits a typed entity comes before an OTHER one, then the most mentioned."""
        entity_id = reads.canonical_id(entity)
        if entity_id is not None:
            return entity_id, []
        hits = self._search(reads, matching.Query("entity", text=entity), [], 5, None)
        exact = [h for h in hits if h.score == matching.EXACT_SCORE]
        if not exact:
            closest = "; ".join(f"{h.name} ({h.entity_type}, {h.entity_id})" for h in hits) or "nothing close"
            raise EntityNotFound(f"no entity is named {entity!r}; closest: {closest}")
        # a typed entity before one typed OTHER (the extractor could not tell), then search order
        exact.sort(key=lambda h: h.entity_type == "OTHER")
        return exact[0].entity_id, exact[1:]

    def profile(self, entity: str, *, hops: int = 0, as_of: Moment = None, max_relations: int = 20,
                max_sources: int = 5, snippet_chars: int = 240, max_nodes: int = 40) -> EntityProfile:
        """Everything known about one entity; `hops` > 0 adds its neighbourhood."""
        moment = matching.parse_time(as_of)
        with self._open() as reads:
            entity_id, also = self._resolve(reads, entity)
            row = reads.entity(entity_id).row(0, named=True)
            card = reads.entity_cards([entity_id], moment).row(0, named=True)
            aliases = [Alias(**a) for a in reads.alias_evidence(entity_id).iter_rows(named=True)]
            history = [AttributeVersion(key=h["attr_key"], **{k: h[k] for k in (
                "value", "valid_from", "valid_until", "is_current", "confidence", "source_document_ids")})
                for h in reads.attribute_history(entity_id).iter_rows(named=True)]
            relations = reads.relations(entity_id, max_relations)
            sources = reads.source_chunks(entity_id, max_sources)
            names = [row["name"], *(row["aliases"] or [])]
            neighbourhood = self._neighbourhood(reads, entity_id, hops, max_nodes) if hops > 0 else None
        totals = dict(relations.unique("direction").select("direction", "total").iter_rows())
        return EntityProfile(
            **{k: row[k] for k in ("entity_id", "name", "entity_type", "description", "mention_count",
                                   "document_count", "degree", "first_seen", "last_seen")},
            aliases=aliases,
            attributes=_attributes(card),
            attribute_history=history,
            relations=[Relation(**r) for r in relations.drop("total").iter_rows(named=True)],
            relations_total={"out": totals.get("out", 0), "in": totals.get("in", 0)},
            sources=[SourceSnippet(document_id=s["document_id"], title=s["title"], document_time=s["document_time"],
                                   chunk_id=s["chunk_id"], snippet=matching.snippet(s["text"], names, snippet_chars))
                     for s in sources.iter_rows(named=True)],
            documents_total=sources["documents"][0] if sources.height else 0,
            neighbourhood=neighbourhood,
            also_named=[f"{h.name} ({h.entity_type}, {h.entity_id})" for h in also],
        )

    # ---- subgraphs ---------------------------------------------------------------------------------
    def neighbourhood(self, entity: str, *, hops: int = 1, max_nodes: int = 40) -> Subgraph:
        with self._open() as reads:
            entity_id, _ = self._resolve(reads, entity)
            return self._neighbourhood(reads, entity_id, hops, max_nodes)

    @staticmethod
    def _neighbourhood(reads: GraphReads, center: str, hops: int, max_nodes: int) -> Subgraph:
        """Breadth first up to `hops`, keeping at each hop the neighbours most strongly tied to the
        frontier (summed edge weight) while fewer than `max_nodes` nodes are kept."""
        hop_of = {center: 0}
        frontier = [center]
        for hop in range(1, hops + 1):
            if not frontier or len(hop_of) >= max_nodes:
                break
            edges = reads.incident_edges(frontier)
            ties = pl.concat([
                edges.select(pl.col("target_id").alias("node_id"), "weight"),
                edges.select(pl.col("source_id").alias("node_id"), "weight"),
            ]).filter(~pl.col("node_id").is_in(list(hop_of))).group_by("node_id").agg(pl.col("weight").sum())
            chosen = ties.sort(["weight", "node_id"], descending=[True, False]).head(max_nodes - len(hop_of))
            frontier = chosen["node_id"].to_list()
            hop_of.update({node_id: hop for node_id in frontier})
        return _subgraph(reads, reads.nodes(list(hop_of)), hop_of)

    def core(self, *, top: int = 25) -> Subgraph:
        """The most connected core: the `top` nodes of highest degree and the edges among them."""
        with self._open(lookup=False) as reads:  # no name is matched
            return _subgraph(reads, reads.most_connected_nodes(top), {})

    # ---- context and export --------------------------------------------------------------------------
    def context(self, text: str, *, max_tokens: int = 800, as_of: Moment = None, max_sources: int = 5,
                snippet_chars: int = 300):
        """A bounded context block on the entities `text` names (see `kg_assets.query.context`)."""
        from kg_assets.query.context import build_context

        with self._open() as reads:
            return build_context(reads, text, max_tokens=max_tokens, as_of=matching.parse_time(as_of),
                                 max_sources=max_sources, snippet_chars=snippet_chars)

    def export(self, fmt: str, out: str | os.PathLike[str], *, as_of: Moment = None):
        """Write the graph (current, or as the documents dated up to as_of describe it) as fmt."""
        from kg_assets.query.export import export_graph

        with self._open() as reads:
            return export_graph(reads, fmt, Path(out), matching.parse_time(as_of))


def _subgraph(reads: GraphReads, nodes: pl.DataFrame, hop_of: dict[str, int]) -> Subgraph:
    ids = nodes["node_id"].to_list()
    return Subgraph(
        nodes=[GraphNode(**n, hop=hop_of.get(n["node_id"])) for n in nodes.iter_rows(named=True)],
        edges=[GraphEdge(**{k: e[k] for k in GraphEdge.model_fields}) for e in reads.edges_among(ids).iter_rows(named=True)],
    )


def _name_why(match: str, surface: str, query: str, similarity: float | None = None):
    def why(name: str) -> str:
        what = "name" if surface == name else "alias"
        if match == "fuzzy":
            return f'{what} "{surface}" is {similarity:.0f}% similar to "{query}"'
        return {
            "exact": f'{what} "{surface}" is "{query}"',
            "prefix": f'{what} "{surface}" starts with "{query}"',
            "token": f'{what} "{surface}" has the words of "{query}"',
            "containment": f'{what} "{surface}" contains "{query}"',
        }[match]
    return why


def _attribute_why(parsed: matching.Query, rank: int, value: str, valid_from: datetime, valid_until: datetime | None,
                   moment: datetime | None):
    when = ""
    if moment is not None:
        until = valid_until.date().isoformat() if valid_until else "now"
        when = f" (valid {valid_from.date().isoformat()} to {until})"
    if parsed.value is None:
        text = f'{parsed.key} = "{value}"{when}'
    elif rank == 0:
        text = f'{parsed.key} = "{value}"' + ("" if matching.normalize_value(value) == matching.normalize_value(
            parsed.value) else f' (named "{parsed.value}")') + when
    else:
        text = f'{parsed.key} "{value}" contains "{parsed.value}"{when}'
    return lambda name: text

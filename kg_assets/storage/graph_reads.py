"""Read-only SQL behind search, profiles, context blocks, pictures and export (`kg_assets.query`).

Every user-supplied string is a bound parameter; the only names formatted into SQL are this module's
own constants (the lookup relation and the attribute source). Prefix and containment use
`starts_with` / `contains`, never LIKE, so `%` and `_` in a query are literal characters.

The entity lookup (`kg.entity_lookup`: one row per entity name or alias with its match keys) is built
in Python by `kg_assets.query.lookup`; `write_entity_lookup` stores it with a fingerprint of the
entities it was built from, and a reader whose stored lookup is missing or stale registers a fresh
in-memory frame under the same columns instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import duckdb
import polars as pl

from kg_assets.storage.reads import MOST_CONNECTED_NODES, Keys
from kg_assets.storage.reads import fetch_frame as _frame
from kg_assets.storage.warehouse import SCHEMA, Warehouse

LOOKUP_TABLE = f"{SCHEMA}.entity_lookup"
LOOKUP_STATE_TABLE = f"{SCHEMA}.entity_lookup_state"
_MEMORY_LOOKUP = "_entity_lookup"
_REQUIRED_TABLES = ("entities", "entity_aliases", "graph_nodes", "graph_edges", "entity_attributes", "chunks",
                    "documents", "entity_mentions")

# What a stored lookup was built from: any change of a current entity's name, type or aliases changes it.
_FINGERPRINT_SQL = f"""SELECT count(*)::VARCHAR || ':' || coalesce(sum(hash(entity_id, name, entity_type, aliases)), 0)::VARCHAR
                       FROM {SCHEMA}.entities WHERE valid_until IS NULL"""
# Time of a document = its date, else when it was ingested (the rule of consolidation and attributes).
_DOCUMENT_TIME = "coalesce(d.document_date, d.ingested_at)"


class WarehouseNotBuilt(RuntimeError):
    """The DuckDB file has no built graph (no `kg run` yet)."""


def write_entity_lookup(warehouse: Warehouse, build: Callable[[pl.DataFrame], pl.DataFrame]) -> int:
    """Rebuild kg.entity_lookup with `build(current entities)` and record the entities' fingerprint,
    all in one transaction (so the fingerprint describes exactly the entities the lookup was built from)."""
    def body(con) -> int:
        lookup = build(GraphReads(con).lookup_sources())
        con.register("_lookup_rows", lookup)
        try:
            con.execute(f"CREATE OR REPLACE TABLE {LOOKUP_TABLE} AS SELECT * FROM _lookup_rows")
        finally:
            con.unregister("_lookup_rows")
        con.execute(f"CREATE OR REPLACE TABLE {LOOKUP_STATE_TABLE} AS SELECT ({_FINGERPRINT_SQL}) AS fingerprint, "
                    "now() AS built_at")
        return lookup.height
    return warehouse.write(body)


def _words(expr: str) -> str:
    """`expr` as its words between spaces, so containment matches whole words: "cto" is not inside
    "director"."""
    return f"(' ' || trim(regexp_replace({expr}, '[^\\p{{L}}\\p{{N}}]+', ' ', 'g')) || ' ')"


class GraphReads:
    """The read queries of one open read-only connection."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        present = {row[0] for row in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = $s", {"s": SCHEMA}).fetchall()}
        missing = [t for t in _REQUIRED_TABLES if t not in present]
        if missing:
            raise WarehouseNotBuilt(f"the warehouse has no {', '.join(SCHEMA + '.' + t for t in missing)}; run `kg run` first")
        self._has_stored_lookup = {"entity_lookup", "entity_lookup_state"} <= present
        self.lookup = LOOKUP_TABLE

    # ---- the entity lookup -------------------------------------------------------------------
    def stored_lookup_is_fresh(self) -> bool:
        if not self._has_stored_lookup:
            return False
        stored = self.con.execute(f"SELECT fingerprint FROM {LOOKUP_STATE_TABLE}").fetchall()
        return bool(stored) and stored[0][0] == self.con.execute(_FINGERPRINT_SQL).fetchall()[0][0]

    def lookup_sources(self) -> pl.DataFrame:
        """Current entities with their names and aliases: what the lookup is built from."""
        return _frame(self.con, f"""SELECT entity_id, name, entity_type, aliases FROM {SCHEMA}.entities
                                    WHERE valid_until IS NULL ORDER BY entity_id""")

    def use_lookup_frame(self, lookup: pl.DataFrame) -> None:
        self.con.register(_MEMORY_LOOKUP, lookup)
        self.lookup = _MEMORY_LOOKUP

    # ---- attributes: current, or valid at a time -------------------------------------------------
    @staticmethod
    def _attributes(as_of: datetime | None) -> str:
        # The views and the macro hold the validity rule; the time itself is bound as $as_of.
        return f"{SCHEMA}.entity_attributes_current" if as_of is None else f"{SCHEMA}.entity_attributes_at($as_of)"

    def entity_cards(self, entity_ids: Sequence[str], as_of: datetime | None = None) -> pl.DataFrame:
        """entity_id, name, entity_type, mention_count, document_count, attributes (list of {key, value})."""
        params: dict = {"ids": Keys(entity_ids)}
        if as_of is not None:
            params["as_of"] = as_of
        return _frame(self.con, f"""
            WITH attrs AS (
                SELECT entity_id, list(struct_pack(key := attr_key, value := value) ORDER BY attr_key) AS attributes
                FROM {self._attributes(as_of)} WHERE entity_id IN (SELECT v FROM _ids) GROUP BY entity_id)
            SELECT e.entity_id, e.name, e.entity_type, e.mention_count, e.document_count,
                   coalesce(a.attributes, []) AS attributes
            FROM {SCHEMA}.entities e LEFT JOIN attrs a USING (entity_id)
            WHERE e.valid_until IS NULL AND e.entity_id IN (SELECT v FROM _ids)""", params)

    # ---- search --------------------------------------------------------------------------------
    def name_matches(self, folded: str, norm_key: str, tokens: Sequence[str], types: Sequence[str],
                     limit: int) -> pl.DataFrame:
        """Best exact / prefix / token / containment match per entity (rank 0 = exact), best first."""
        return _frame(self.con, f"""
            WITH matched AS (
                SELECT entity_id, surface, is_name,
                       CASE WHEN (norm_key = $norm AND $norm <> '') OR folded = $folded THEN 0
                            WHEN starts_with(folded, $folded) THEN 1
                            WHEN len($tokens::VARCHAR[]) > 0 AND list_has_all(tokens, $tokens::VARCHAR[]) THEN 2
                            WHEN contains(folded, $folded) THEN 3 END AS rank
                FROM {self.lookup}
                WHERE (len($types::VARCHAR[]) = 0 OR list_contains($types::VARCHAR[], entity_type))),
            best AS (
                SELECT entity_id, min(rank) AS rank, arg_min(surface, (rank, NOT is_name, surface)) AS surface
                FROM matched WHERE rank IS NOT NULL GROUP BY entity_id)
            SELECT b.entity_id, b.rank, b.surface FROM best b
            JOIN {SCHEMA}.entities e ON e.entity_id = b.entity_id AND e.valid_until IS NULL
            ORDER BY b.rank, e.mention_count DESC, e.name, b.entity_id
            LIMIT $limit""",
            {"folded": folded, "norm": norm_key, "tokens": list(tokens), "types": list(types), "limit": limit})

    def surfaces(self, types: Sequence[str]) -> pl.DataFrame:
        """entity_id, surface, folded of every name and alias (the fuzzy matcher's choices)."""
        return _frame(self.con, f"""SELECT entity_id, surface, folded FROM {self.lookup}
                                    WHERE len($types::VARCHAR[]) = 0 OR list_contains($types::VARCHAR[], entity_type)""",
                      {"types": list(types)})

    def names_for_key(self, norm_key: str) -> list[str]:
        """Canonical names of the entities one of whose names or aliases has this normalized key."""
        rows = self.con.execute(f"""SELECT DISTINCT e.name FROM {self.lookup} l
                                    JOIN {SCHEMA}.entities e ON e.entity_id = l.entity_id AND e.valid_until IS NULL
                                    WHERE l.norm_key = $norm AND $norm <> '' ORDER BY 1""", {"norm": norm_key}).fetchall()
        return [r[0] for r in rows]

    def attribute_values(self, key: str, as_of: datetime | None = None) -> list[str]:
        """The distinct values attribute `key` has (current, or valid at as_of)."""
        params: dict = {"key": key}
        if as_of is not None:
            params["as_of"] = as_of
        rows = self.con.execute(f"SELECT DISTINCT value FROM {self._attributes(as_of)} WHERE attr_key = $key ORDER BY 1",
                                params).fetchall()
        return [value for (value,) in rows]

    def attribute_matches(self, key: str, exact_values: Sequence[str], partial_value: str | None,
                          types: Sequence[str], limit: int, as_of: datetime | None = None) -> pl.DataFrame:
        """Entities whose attribute `key` (current, or valid at as_of) equals one of `exact_values`
        (rank 0), or starts with / contains `partial_value` (rank 1); every value of the key when both
        are empty."""
        params: dict = {"key": key, "exact": list(exact_values), "partial": partial_value, "types": list(types),
                        "limit": limit}
        if as_of is not None:
            params["as_of"] = as_of
        return _frame(self.con, f"""
            WITH ranked AS (
                SELECT a.entity_id, a.value, a.valid_from, a.valid_until,
                       CASE WHEN len($exact::VARCHAR[]) = 0 AND $partial IS NULL THEN 0
                            WHEN list_contains($exact::VARCHAR[], a.normalized_value) THEN 0
                            WHEN $partial IS NOT NULL AND contains({_words('a.normalized_value')},
                                                                   {_words('$partial')}) THEN 1 END AS rank
                FROM {self._attributes(as_of)} a WHERE a.attr_key = $key)
            SELECT r.entity_id, r.rank, r.value, r.valid_from, r.valid_until FROM ranked r
            JOIN {SCHEMA}.entities e ON e.entity_id = r.entity_id AND e.valid_until IS NULL
            WHERE r.rank IS NOT NULL AND (len($types::VARCHAR[]) = 0 OR list_contains($types::VARCHAR[], e.entity_type))
            ORDER BY r.rank, e.mention_count DESC, e.name, r.entity_id
            LIMIT $limit""", params)

    # ---- memories: the documents and messages behind entities (seed 002) ------------------------
    def memory_links(self, entity_ids: Sequence[str], attr_key: str | None = None,
                     as_of: datetime | None = None) -> pl.DataFrame:
        """Chunks linking the entities to documents: 'entity_attr' rows, the source chunks of their attribute
        values (current, or valid at as_of; only `attr_key` when given), with `detail` the value; and 'keyword'
        rows, the chunks mentioning them (any id redirected to them), with `detail` the surface form and
        `anchor_start` its offset in the chunk when the extractor gave one. With each chunk's document, title,
        time, text and the chunk's offset in the document's text."""
        params: dict = {"ids": Keys(entity_ids), "key": attr_key}
        if as_of is not None:
            params["as_of"] = as_of
        return _frame(self.con, f"""
            WITH ids AS (SELECT v AS entity_id FROM _ids),
            attr AS (
                SELECT a.entity_id, 'entity_attr' AS source, a.attr_key || ' = ' || a.value AS detail, a.value AS anchor,
                       NULL::BIGINT AS anchor_start, unnest(a.source_chunk_ids) AS chunk_id
                FROM {self._attributes(as_of)} a JOIN ids USING (entity_id)
                WHERE $key IS NULL OR a.attr_key = $key),
            named AS (
                SELECT coalesce(al.to_id, m.entity_id) AS entity_id, 'keyword' AS source,
                       'mentions "' || m.name || '"' AS detail, m.name AS anchor, m.char_start AS anchor_start, m.chunk_id
                FROM {SCHEMA}.entity_mentions m
                LEFT JOIN {SCHEMA}.entity_aliases al ON al.from_id = m.entity_id
                WHERE coalesce(al.to_id, m.entity_id) IN (SELECT entity_id FROM ids)),
            links AS (SELECT * FROM attr UNION ALL SELECT * FROM named)
            SELECT l.entity_id, l.source, l.detail, l.anchor, l.anchor_start, c.chunk_id, c.document_id, c.chunk_index,
                   c.char_start AS chunk_start, c.text, d.title, d.source_type, {_DOCUMENT_TIME} AS document_time
            FROM links l JOIN {SCHEMA}.chunks c USING (chunk_id)
            JOIN {SCHEMA}.documents d ON d.document_id = c.document_id AND d.valid_until IS NULL
            ORDER BY l.source, document_time DESC, c.document_id, c.chunk_index""", params)

    def current_messages_of(self, document_ids: Sequence[str]) -> pl.DataFrame:
        """The current chat messages of these documents (MESSAGES columns used to place a span)."""
        return _frame(self.con, f"""
            SELECT document_id, message_id, user_id, sent_at, char_start, char_end, content
            FROM {SCHEMA}.messages WHERE valid_until IS NULL AND document_id IN (SELECT v FROM _ids)""",
            {"ids": Keys(document_ids)})

    # ---- one entity ----------------------------------------------------------------------------
    def canonical_id(self, entity_id: str) -> str | None:
        """The current entity an id names: itself, or the entity it was merged into."""
        rows = self.con.execute(f"""
            SELECT coalesce(a.to_id, $id) FROM (SELECT $id AS id) q
            LEFT JOIN {SCHEMA}.entity_aliases a ON a.from_id = q.id
            WHERE EXISTS (SELECT 1 FROM {SCHEMA}.entities e WHERE e.valid_until IS NULL
                          AND e.entity_id = coalesce(a.to_id, $id))""", {"id": entity_id}).fetchall()
        return rows[0][0] if rows else None

    def entity(self, entity_id: str) -> pl.DataFrame:
        return _frame(self.con, f"""
            SELECT e.entity_id, e.name, e.entity_type, e.description, e.aliases, e.mention_count, e.document_count,
                   e.first_seen, e.last_seen, coalesce(n.degree, 0) AS degree
            FROM {SCHEMA}.entities e
            LEFT JOIN {SCHEMA}.graph_nodes n ON n.node_id = e.entity_id AND n.valid_until IS NULL
            WHERE e.entity_id = $id AND e.valid_until IS NULL""", {"id": entity_id})

    def alias_evidence(self, entity_id: str) -> pl.DataFrame:
        """Per surface form of the entity's mentions: the extracted id that carried it, its mentions, and
        the linking decision that merged that id (method/score/evidence null for the entity's own id)."""
        return _frame(self.con, f"""
            WITH ids AS (
                SELECT $id AS from_id, NULL::VARCHAR AS method, NULL::DOUBLE AS score, NULL::VARCHAR AS evidence
                UNION ALL
                SELECT from_id, method, score, evidence FROM {SCHEMA}.entity_aliases WHERE to_id = $id)
            SELECT m.name AS alias, i.from_id, i.method, i.score, i.evidence, count(*) AS mentions
            FROM {SCHEMA}.entity_mentions m JOIN ids i ON m.entity_id = i.from_id
            GROUP BY ALL ORDER BY mentions DESC, alias, from_id""", {"id": entity_id})

    def attribute_history(self, entity_id: str) -> pl.DataFrame:
        return _frame(self.con, f"""
            SELECT attr_key, value, valid_from, valid_until, version, is_current, confidence, observation_count,
                   source_document_ids
            FROM {SCHEMA}.entity_attributes_history WHERE entity_id = $id ORDER BY attr_key, valid_from""",
            {"id": entity_id})

    def relations(self, entity_id: str, limit: int) -> pl.DataFrame:
        """Current edges in and out of the entity, strongest first, with the other end's name and type
        and `total` = how many edges that direction has in all."""
        return _frame(self.con, f"""
            WITH incident AS (
                SELECT CASE WHEN source_id = $id THEN 'out' ELSE 'in' END AS direction,
                       CASE WHEN source_id = $id THEN target_id ELSE source_id END AS other_id,
                       relation_type, weight, keywords, description, document_ids
                FROM {SCHEMA}.graph_edges WHERE valid_until IS NULL AND (source_id = $id OR target_id = $id)),
            ranked AS (
                SELECT *, count(*) OVER (PARTITION BY direction) AS total,
                       row_number() OVER (PARTITION BY direction ORDER BY weight DESC, relation_type, other_id) AS n
                FROM incident)
            SELECT r.direction, r.relation_type, r.other_id, n.label AS other_name, n.entity_type AS other_type,
                   r.weight, r.keywords, r.description, r.document_ids, r.total
            FROM ranked r
            LEFT JOIN {SCHEMA}.graph_nodes n ON n.node_id = r.other_id AND n.valid_until IS NULL
            WHERE r.n <= $limit ORDER BY r.direction DESC, r.n""", {"id": entity_id, "limit": limit})

    def source_chunks(self, entity_id: str, limit: int) -> pl.DataFrame:
        """The entity's source documents, newest first, one chunk each (its first), with `documents` =
        how many documents there are in all."""
        return _frame(self.con, f"""
            WITH chunk_ids AS (
                SELECT unnest(source_chunk_ids) AS chunk_id FROM {SCHEMA}.entities
                WHERE entity_id = $id AND valid_until IS NULL),
            firsts AS (
                SELECT c.document_id, c.chunk_id, c.chunk_index, c.text, c.section_path
                FROM chunk_ids s JOIN {SCHEMA}.chunks c USING (chunk_id)
                QUALIFY row_number() OVER (PARTITION BY c.document_id ORDER BY c.chunk_index) = 1)
            SELECT f.document_id, d.title, {_DOCUMENT_TIME} AS document_time, f.chunk_id, f.section_path, f.text,
                   count(*) OVER () AS documents
            FROM firsts f JOIN {SCHEMA}.documents d ON d.document_id = f.document_id AND d.valid_until IS NULL
            ORDER BY document_time DESC, f.document_id LIMIT $limit""", {"id": entity_id, "limit": limit})

    # ---- subgraphs -----------------------------------------------------------------------------
    def incident_edges(self, node_ids: Sequence[str]) -> pl.DataFrame:
        """Current edges touching any of the nodes."""
        return _frame(self.con, f"""
            SELECT source_id, target_id, relation_type, weight FROM {SCHEMA}.graph_edges
            WHERE valid_until IS NULL AND (source_id IN (SELECT v FROM _ids)
                                           OR target_id IN (SELECT v FROM _ids))""", {"ids": Keys(node_ids)})

    def edges_among(self, node_ids: Sequence[str]) -> pl.DataFrame:
        """Current edges with both ends among the nodes, strongest first."""
        return _frame(self.con, f"""
            SELECT edge_id, source_id, target_id, relation_type, weight, keywords FROM {SCHEMA}.graph_edges
            WHERE valid_until IS NULL AND source_id IN (SELECT v FROM _ids)
              AND target_id IN (SELECT v FROM _ids)
            ORDER BY weight DESC, relation_type, source_id, target_id""", {"ids": Keys(node_ids)})

    def nodes(self, node_ids: Sequence[str]) -> pl.DataFrame:
        return _frame(self.con, f"""
            SELECT node_id, label, entity_type, degree, mention_count FROM {SCHEMA}.graph_nodes
            WHERE valid_until IS NULL AND node_id IN (SELECT v FROM _ids) ORDER BY node_id""",
            {"ids": Keys(node_ids)})

    def most_connected_nodes(self, limit: int) -> pl.DataFrame:
        return _frame(self.con, MOST_CONNECTED_NODES, {"limit": int(limit)})

    # ---- context -------------------------------------------------------------------------------
    def span_matches(self, spans: pl.DataFrame) -> pl.DataFrame:
        """Join candidate text spans (span_id, norm_key, link_key) to the names and aliases with the same
        normalized name or linking key, with the entity's mention_count and entity_type."""
        self.con.register("_spans", spans)
        try:
            return _frame(self.con, f"""
                WITH matched AS (  -- two equality joins (hash joins), not one join on an OR
                    SELECT s.span_id, l.entity_id, l.surface FROM _spans s
                    JOIN {self.lookup} l ON l.norm_key = s.norm_key WHERE s.norm_key <> ''
                    UNION
                    SELECT s.span_id, l.entity_id, l.surface FROM _spans s
                    JOIN {self.lookup} l ON l.link_key = s.link_key WHERE s.link_key <> '')
                SELECT m.span_id, m.entity_id, m.surface, e.mention_count, e.entity_type FROM matched m
                JOIN {SCHEMA}.entities e ON e.entity_id = m.entity_id AND e.valid_until IS NULL""")
        finally:
            self.con.unregister("_spans")

    def shared_chunks(self, entity_ids: Sequence[str], limit: int) -> pl.DataFrame:
        """Chunks that mention the most of the entities (then the newest), with their text and document."""
        return _frame(self.con, f"""
            WITH s AS (
                SELECT entity_id, unnest(source_chunk_ids) AS chunk_id FROM {SCHEMA}.entities
                WHERE valid_until IS NULL AND entity_id IN (SELECT v FROM _ids)),
            counted AS (SELECT chunk_id, list(DISTINCT entity_id) AS entity_ids FROM s GROUP BY chunk_id)
            SELECT k.chunk_id, c.document_id, d.title, {_DOCUMENT_TIME} AS document_time, c.text, k.entity_ids
            FROM counted k JOIN {SCHEMA}.chunks c USING (chunk_id)
            JOIN {SCHEMA}.documents d ON d.document_id = c.document_id AND d.valid_until IS NULL
            ORDER BY len(k.entity_ids) DESC, document_time DESC, k.chunk_id LIMIT $limit""",
            {"ids": Keys(entity_ids), "limit": limit})

    # ---- export --------------------------------------------------------------------------------
    def current_graph(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Current nodes (with document_count) and edges, as stored."""
        nodes = _frame(self.con, f"""
            SELECT n.node_id, n.label AS name, n.entity_type, n.description, n.aliases, n.mention_count,
                   e.document_count, n.degree, n.first_seen, n.last_seen, n.source_chunk_ids
            FROM {SCHEMA}.graph_nodes n
            LEFT JOIN {SCHEMA}.entities e ON e.entity_id = n.node_id AND e.valid_until IS NULL
            WHERE n.valid_until IS NULL ORDER BY n.node_id""")
        edges = _frame(self.con, f"""
            SELECT edge_id, source_id, target_id, relation_type, weight, keywords, description, source_chunk_ids,
                   document_ids
            FROM {SCHEMA}.graph_edges WHERE valid_until IS NULL ORDER BY source_id, target_id, relation_type""")
        return nodes, edges

    def chunk_nodes(self, chunk_ids: Sequence[str]) -> pl.DataFrame:
        """The chunks provenance edges point at: chunk_id, document_id, chunk_index, section_path, offsets."""
        return _frame(self.con, f"""
            SELECT chunk_id, document_id, chunk_index, section_path, char_start, char_end, token_count
            FROM {SCHEMA}.chunks WHERE chunk_id IN (SELECT v FROM _ids) ORDER BY chunk_id""",
            {"ids": Keys(chunk_ids)})

    def attributes(self, as_of: datetime | None = None) -> pl.DataFrame:
        """Attribute rows current (or valid at as_of) of current entities."""
        return _frame(self.con, f"""
            SELECT a.entity_id, a.attr_key, a.value, a.valid_from, a.valid_until, a.confidence,
                   a.source_document_ids, a.source_chunk_ids
            FROM {self._attributes(as_of)} a
            WHERE EXISTS (SELECT 1 FROM {SCHEMA}.entities e WHERE e.entity_id = a.entity_id AND e.valid_until IS NULL)
            ORDER BY a.entity_id, a.attr_key""", None if as_of is None else {"as_of": as_of})

    def consolidation_inputs(self, as_of: datetime) -> dict[str, pl.DataFrame]:
        """What consolidation reads, restricted to current documents dated at or before as_of: mentions,
        relations, documents, and the stored linking redirects."""
        dated = f"""SELECT document_id FROM {SCHEMA}.documents d
                    WHERE d.valid_until IS NULL AND {_DOCUMENT_TIME} <= $as_of"""
        params = {"as_of": as_of}
        return {
            "mentions": _frame(self.con, f"SELECT * FROM {SCHEMA}.entity_mentions WHERE document_id IN ({dated})", params),
            "relations": _frame(self.con, f"SELECT * FROM {SCHEMA}.local_relations WHERE document_id IN ({dated})", params),
            "documents": _frame(self.con, f"""SELECT document_id, document_date, ingested_at FROM {SCHEMA}.documents d
                                              WHERE document_id IN ({dated}) AND valid_until IS NULL""", params),
            "redirects": _frame(self.con, f"SELECT * FROM {SCHEMA}.entity_aliases"),
        }

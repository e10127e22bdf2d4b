"""SQL of incremental consolidation: a digest of what each consolidated row is made from, and the input rows of
the keys whose digest changed.

An entity row is a function of its group of mentions (those whose extracted id redirects to it) and their
documents' times; an edge of the relations whose redirected ends and mapped type are its key, between current
entities; a node of its entity row, its summary and its degree. Each digest is `rows:sum(hash(input row))` over
that group, computed by DuckDB over the whole table without fetching it, so a consolidation finds the keys the
new, changed or deleted documents (or a new linking decision) touched, and rebuilds those only, in batches.
The digests of the last consolidation are in `kg.consolidation_digests`; with none there, every key is rebuilt.
The attribute history is kept the same way, per canonical entity, with digests computed in Polars
(`core.temporal.attribute_digests`: its inputs are resolved against every entity's names first).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from kg_assets.core.consolidate import key_batches
from kg_assets.storage.reads import Keys, execute, fetch_frame, fetch_scalar
from kg_assets.storage.warehouse import SCHEMA, Warehouse

ENTITY_KEY = ("entity_id",)
EDGE_KEY = ("source_id", "target_id", "relation_type")
NODE_KEY = ("node_id",)
_DOCUMENT_TIMES = f"""(SELECT document_id, coalesce(document_date, ingested_at) AS seen_at
                       FROM {SCHEMA}.documents WHERE valid_until IS NULL)"""
# a mention with its canonical id (`key`), the inputs of its entity row (core.consolidate.build_entities);
# `{mentions}` is the table or a filtered scan of it
_MENTIONS_OF = f"""SELECT coalesce(r.to_id, m.entity_id) AS entity_key, m.*, d.seen_at
                   FROM {{mentions}} m LEFT JOIN _redirects r ON r.from_id = m.entity_id
                   LEFT JOIN {_DOCUMENT_TIMES} d ON d.document_id = m.document_id"""
_MENTIONS = _MENTIONS_OF.format(mentions=f"{SCHEMA}.entity_mentions")
_MENTION_INPUTS = "m.entity_id, m.name, m.normalized_name, m.entity_type, m.document_id, m.chunk_id, m.description, seen_at"
# a relation with its edge key under the redirects and the relation schema (`_types`: raw -> mapped type; a
# dropped type has no row), between two current entities
_RELATIONS_OF = """SELECT coalesce(rs.to_id, l.source_id) AS source_key, coalesce(rt.to_id, l.target_id) AS target_key,
                          t.mapped AS type_key, l.*
                   FROM {relations} l JOIN _types t ON t.relation_type = l.relation_type
                   LEFT JOIN _redirects rs ON rs.from_id = l.source_id
                   LEFT JOIN _redirects rt ON rt.from_id = l.target_id"""
_RELATIONS = _RELATIONS_OF.format(relations=f"{SCHEMA}.local_relations")
_KNOWN_ENDS = f"""source_key <> target_key
    AND source_key IN (SELECT entity_id FROM {SCHEMA}.entities WHERE valid_until IS NULL)
    AND target_key IN (SELECT entity_id FROM {SCHEMA}.entities WHERE valid_until IS NULL)"""
_RELATION_INPUTS = "chunk_id, document_id, source_id, target_id, relation_type, keywords, description"
_NODE_INPUTS = ("e.name, e.entity_type, e.description, e.aliases, e.mention_count, e.first_seen, e.last_seen, "
                "e.source_chunk_ids")
_DEGREES = f"""(SELECT node_id, count(*) AS degree FROM (
                   SELECT source_id AS node_id FROM {SCHEMA}.graph_edges WHERE valid_until IS NULL
                   UNION ALL SELECT target_id FROM {SCHEMA}.graph_edges WHERE valid_until IS NULL) GROUP BY node_id)"""


def _digest(inputs: str) -> str:
    return f"count(*)::VARCHAR || ':' || sum(hash({inputs}))::VARCHAR"


ATTRIBUTES = "entity_attributes"  # the attribute history's digests (keys: canonical entity ids)
ATTRIBUTE_TABLES = ("entity_attributes", "attribute_supersessions")
KEY_SEPARATOR = "\x1f"  # the unit separator: never part of an id or a relation type
_SEP = "chr(31)"
KEYS = {"entities": ENTITY_KEY, "graph_edges": EDGE_KEY, "graph_nodes": NODE_KEY}
# What each key is made from now: key (an edge's three columns joined by U+001F), rows, digest.
_DIGESTS = {
    "entities": f"""SELECT entity_key AS key, count(*) AS rows, {_digest(_MENTION_INPUTS)} AS digest
                    FROM ({_MENTIONS}) m GROUP BY entity_key""",
    "graph_edges": f"""SELECT concat_ws({_SEP}, source_key, target_key, type_key) AS key, count(*) AS rows,
                              {_digest(_RELATION_INPUTS)} AS digest
                       FROM ({_RELATIONS}) WHERE {_KNOWN_ENDS} GROUP BY source_key, target_key, type_key""",
    # what a node shows of its entity's current row, its summary and its degree
    "graph_nodes": f"""SELECT e.entity_id AS key, 1 AS rows,
                              hash({_NODE_INPUTS}, s.summary, coalesce(d.degree, 0))::VARCHAR AS digest
                       FROM {SCHEMA}.entities e
                       LEFT JOIN {SCHEMA}.entity_summaries s ON s.entity_id = e.entity_id
                       LEFT JOIN {_DEGREES} d ON d.node_id = e.entity_id
                       WHERE e.valid_until IS NULL""",
}


def _changed_sql(table: str) -> str:
    """The keys of `table` to rebuild (key, rows, digest: NULL for a key that is gone, replace_all), computed in
    DuckDB: those whose digest differs from the stored one. When the stored digests are not one per current row
    (rows deleted by hand, or digests cleared), each current row counts as changed instead, so every key is
    rebuilt and a row whose inputs are gone is closed."""
    table_key = f"concat_ws({_SEP}, {', '.join(KEYS[table])})" if len(KEYS[table]) > 1 else KEYS[table][0]
    return f"""WITH new AS ({_DIGESTS[table]}),
        in_step AS (SELECT (SELECT count(*) FROM {SCHEMA}.consolidation_digests WHERE table_name = $t)
                           = (SELECT count(*) FROM {SCHEMA}.{table} WHERE valid_until IS NULL) AS ok),
        old AS (SELECT key, digest FROM {SCHEMA}.consolidation_digests WHERE table_name = $t
                                                                        AND (SELECT ok FROM in_step)
                UNION ALL SELECT {table_key}, NULL FROM {SCHEMA}.{table}
                          WHERE valid_until IS NULL AND NOT (SELECT ok FROM in_step))
        SELECT coalesce(n.key, o.key) AS key, coalesce(n.rows, 0) AS rows, n.digest,
               NOT (SELECT ok FROM in_step) AS replace_all
        FROM new n FULL JOIN old o ON n.key = o.key
        WHERE n.digest IS DISTINCT FROM o.digest OR NOT (SELECT ok FROM in_step) ORDER BY 1"""


class ConsolidationStore:
    """The digests and input rows of one warehouse's consolidated tables."""

    def __init__(self, warehouse: Warehouse, redirects: pl.DataFrame, relation_types: pl.DataFrame | None = None):
        self.wh = warehouse
        self.redirects = redirects.select("from_id", "to_id")
        # raw relation_type -> mapped (relation_type, mapped), for edges
        self.relation_types = relation_types

    def _fetch(self, sql: str, params: dict | None = None, keys: pl.DataFrame | None = None) -> pl.DataFrame:
        """`sql` over the warehouse with the redirects (`_redirects`), the relation types (`_types`) and any `keys`
        (`_keys`) registered as tables; not streamed (`fetch_frame`): a batch's rows are bounded by its size, and the
        changed keys are one short row per key."""
        frames = {"_redirects": self.redirects, "_types": self.relation_types, "_keys": keys}
        frames = {name: frame for name, frame in frames.items() if frame is not None}
        with self.wh.connect(read_only=True) as con:
            for name, frame in frames.items():
                con.register(name, frame)
            try:
                return fetch_frame(con, sql, params, streamed=False)
            finally:
                for name in frames:
                    con.unregister(name)

    def rebuild(self, table: str, build: Callable[[pl.DataFrame], pl.DataFrame], batch_rows: int) -> dict[str, int]:
        """Rebuild the rows of `table` (entities, graph_edges or graph_nodes) whose inputs changed since the last
        consolidation: `build(keys)` makes the rows of a batch of keys (a frame of the key columns; about
        `batch_rows` input rows, KG_CONSOLIDATION_BATCH_ROWS, which bounds the memory, not the corpus), which become
        those keys' current rows; then their new digests are stored. A run stopped before that rebuilds the same
        keys again. Returns the keys rebuilt, the rows written and closed, and the current rows."""
        key = list(KEYS[table])
        changed = self._fetch(_changed_sql(table), {"t": table})
        written = closed = 0
        for batch in key_batches(split_key(changed, key), batch_rows):
            stats = self.wh.replace_current_keys(table, key, build(batch.select(key)), batch.select(key))
            written, closed = written + stats["written"], closed + stats["closed"]
        current = self._store_digests(table, changed)
        return {"rebuilt_keys": changed.height, "written": written, "closed": closed, "current": current}

    def _store_digests(self, table: str, changed: pl.DataFrame) -> int:
        """Store the changed keys' digests (a gone key's goes; all of the table's when they were not in step with
        it); returns the table's digests now, which are its current rows."""
        replace_all = changed.height > 0 and changed["replace_all"][0]
        rows = changed.filter(pl.col("digest").is_not_null()).select(pl.lit(table).alias("table_name"), "key", "digest")

        def body(con) -> int:
            if replace_all:
                execute(con, f"DELETE FROM {SCHEMA}.consolidation_digests WHERE table_name = $t", {"t": table})
            elif changed.height:
                execute(con, f"""DELETE FROM {SCHEMA}.consolidation_digests
                                 WHERE table_name = $t AND key IN (SELECT v FROM _ids)""",
                        {"t": table, "ids": Keys(changed["key"])})
            self.wh._insert(con, "consolidation_digests", rows)
            return int(fetch_scalar(con, f"SELECT count(*) FROM {SCHEMA}.consolidation_digests WHERE table_name = $t",
                                    {"t": table}))
        return self.wh.write(body)

    # ---- the attribute history, per canonical entity ------------------------------------------------
    def changed_attribute_entities(self, digests: pl.DataFrame) -> tuple[pl.DataFrame, bool]:
        """(entity_id, digest: null for an entity with no observations left) of the entities whose attribute rows
        must be made again, given every entity's `digests` now; and whether every row must be (replace_all: the
        stored digests are not those of the entities the table holds, after rows written or deleted by hand, or
        digests cleared for a full rebuild). An entity whose observations make no row has no stored digest, so it is
        made again (into no rows) at each consolidation."""
        with self.wh.connect(read_only=True) as con:
            con.register("_new", digests.select("entity_id", "digest"))
            try:
                # a digest is stored for each entity with rows, and only for those
                uncovered = fetch_scalar(con, f"""SELECT count(*) FROM
                    (SELECT DISTINCT entity_id FROM {SCHEMA}.entity_attributes) a
                    FULL JOIN (SELECT key FROM {SCHEMA}.consolidation_digests WHERE table_name = $t) d
                    ON d.key = a.entity_id WHERE a.entity_id IS NULL OR d.key IS NULL""", {"t": ATTRIBUTES})
                changed = fetch_frame(con, f"""
                    WITH old AS (SELECT key, digest FROM {SCHEMA}.consolidation_digests WHERE table_name = $t)
                    SELECT coalesce(n.entity_id, o.key) AS entity_id, n.digest FROM _new n FULL JOIN old o
                    ON n.entity_id = o.key WHERE n.digest IS DISTINCT FROM o.digest OR $all ORDER BY 1""",
                                      {"t": ATTRIBUTES, "all": uncovered > 0})
            finally:
                con.unregister("_new")
        return changed, uncovered > 0

    def replace_attribute_rows(self, changed: pl.DataFrame, replace_all: bool, attributes: pl.DataFrame,
                               supersessions: pl.DataFrame) -> dict[str, int]:
        """Make `attributes` and `supersessions` the rows of the `changed` entities (every row, when replace_all)
        and store their digests, in one transaction; returns the tables' rows after."""
        scope = "" if replace_all else " WHERE entity_id IN (SELECT v FROM _ids)"
        ids = {} if replace_all else {"ids": Keys(changed["entity_id"])}
        digests = changed.filter(pl.col("entity_id").is_in(attributes["entity_id"].implode())).select(
            pl.lit(ATTRIBUTES).alias("table_name"), pl.col("entity_id").alias("key"), "digest")

        def body(con) -> dict[str, int]:
            for table in ATTRIBUTE_TABLES:
                execute(con, f"DELETE FROM {SCHEMA}.{table}{scope}", ids or None)
            execute(con, f"DELETE FROM {SCHEMA}.consolidation_digests WHERE table_name = $t"
                         f"{'' if replace_all else ' AND key IN (SELECT v FROM _ids)'}", {"t": ATTRIBUTES, **ids})
            self.wh._insert(con, "entity_attributes", attributes)
            self.wh._insert(con, "attribute_supersessions", supersessions)
            self.wh._insert(con, "consolidation_digests", digests)
            return {"rows": int(fetch_scalar(con, f"SELECT count(*) FROM {SCHEMA}.entity_attributes")),
                    "current": int(fetch_scalar(con, f"SELECT count(*) FROM {SCHEMA}.entity_attributes "
                                                     "WHERE valid_until IS NULL")),
                    "supersessions": int(fetch_scalar(con, f"SELECT count(*) FROM {SCHEMA}.attribute_supersessions"))}
        return self.wh.write(body)

    # ---- the input rows of some keys --------------------------------------------------------------
    def extracted_ids(self, entity_ids: Sequence[str] | pl.Series) -> pl.Series:
        """The extracted ids whose canonical id is one of `entity_ids`: each id not redirected elsewhere, and every
        id redirected to one. A batch's input rows are filtered on these in the table's own scan, before any join:
        a batch then costs a scan of one column, not the joins over every row (which made a consolidation's
        batches quadratic in the corpus)."""
        keys = pl.Series("v", entity_ids, dtype=pl.String)
        moved = self.redirects.filter(pl.col("from_id") != pl.col("to_id"))["from_id"]
        pointing = self.redirects.filter(pl.col("to_id").is_in(keys.implode()))["from_id"]
        return pl.concat([keys.filter(~keys.is_in(moved.implode())), pointing]).unique()

    def mentions_of(self, entity_ids: Sequence[str], columns: Sequence[str]) -> pl.DataFrame:
        """`columns` of every mention whose canonical id is one of `entity_ids`, as extracted."""
        select = ", ".join(f'm."{c}"' for c in columns)
        read = ", ".join(f'"{c}"' for c in dict.fromkeys([*columns, "entity_id", "document_id"]))
        scan = f"(SELECT {read} FROM {SCHEMA}.entity_mentions WHERE entity_id IN (SELECT v FROM _ids))"
        return self._fetch(f"SELECT {select} FROM ({_MENTIONS_OF.format(mentions=scan)}) m",
                           {"ids": Keys(self.extracted_ids(entity_ids))})

    def relations_of(self, keys: pl.DataFrame, columns: Sequence[str]) -> pl.DataFrame:
        """`columns` of every local relation that makes one of the edges `keys` (source_id, target_id,
        relation_type), as extracted (ids and type before redirects and schema)."""
        select = ", ".join(f'"{c}"' for c in columns)
        read = ", ".join(f'"{c}"' for c in dict.fromkeys([*columns, "source_id", "target_id", "relation_type"]))
        scan = f"""(SELECT {read} FROM {SCHEMA}.local_relations WHERE source_id IN (SELECT v FROM _sources)
                                                               AND target_id IN (SELECT v FROM _targets))"""
        return self._fetch(f"""SELECT {select} FROM ({_RELATIONS_OF.format(relations=scan)}) r
                               WHERE EXISTS (SELECT 1 FROM _keys k WHERE k.source_id = r.source_key
                                             AND k.target_id = r.target_key AND k.relation_type = r.type_key)""",
                           {"sources": Keys(self.extracted_ids(keys["source_id"].unique())),
                            "targets": Keys(self.extracted_ids(keys["target_id"].unique()))},
                           keys=keys.select(EDGE_KEY))

    def entities_of(self, entity_ids: Sequence[str]) -> pl.DataFrame:
        return self.wh._read(f"""SELECT * EXCLUDE (valid_from, valid_until) FROM {SCHEMA}.entities
                                 WHERE valid_until IS NULL AND entity_id IN (SELECT v FROM _ids)""",
                             {"ids": Keys(entity_ids)})

    def summaries_of(self, entity_ids: Sequence[str]) -> pl.DataFrame:
        return self.wh._read(f"SELECT * FROM {SCHEMA}.entity_summaries WHERE entity_id IN (SELECT v FROM _ids)",
                             {"ids": Keys(entity_ids)})

    def edges_at(self, node_ids: Sequence[str]) -> pl.DataFrame:
        """source_id and target_id of the current edges at any of `node_ids` (their degrees)."""
        return self.wh._read(f"""SELECT source_id, target_id FROM {SCHEMA}.graph_edges WHERE valid_until IS NULL
                                 AND (source_id IN (SELECT v FROM _ids) OR target_id IN (SELECT v FROM _ids))""",
                             {"ids": Keys(node_ids)})


def split_key(changed: pl.DataFrame, key: Sequence[str]) -> pl.DataFrame:
    """The changed keys as their key columns (an edge's three from its joined key) and rows."""
    if len(key) == 1:
        return changed.select(pl.col("key").alias(key[0]), "rows")
    parts = pl.col("key").str.split_exact(KEY_SEPARATOR, len(key) - 1).struct.rename_fields(list(key))
    return changed.select(parts.alias("_k"), "rows").unnest("_k")


def clear_digests(warehouse: Warehouse) -> None:
    """Forget every digest: the next consolidation rebuilds every key (a full rebuild)."""
    warehouse.write(lambda con: con.execute(f"DELETE FROM {SCHEMA}.consolidation_digests"))

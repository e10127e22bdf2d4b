"""SQL of the user-facts memory: messages, learned and manual facts, chat users, and forgetting a user.

`forget_user` is the one place that knows every table a chat message reaches. It deletes, in one
transaction, everything the user wrote or that was made from it: their messages (every version), facts,
extraction outcomes and chat-user row; the chat documents they wrote in (every version, since each holds
their text) with those documents' chunks, mentions, relations, attribute observations, chunk extractions
and LLM call rows; and every entity, alias, node, edge, attribute and supersession row built from those
documents (history included). The entity lookup tables are dropped; readers rebuild them in memory. The
next `kg run` reads the documents again without the user's messages (the tombstone in kg.forgotten_users)
and rebuilds what the other speakers said. Every value is a bound parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from kg_assets.core import schemas
from kg_assets.storage.reads import Keys, fetch_frame, fetch_scalar
from kg_assets.storage.warehouse import SCHEMA, Warehouse, now_utc

# Identity of a message version: an edit of any of these closes the row and opens a new one.
MESSAGE_IDENTITY = ("document_id", "message_id", "user_id", "display_name", "sent_at", "content", "reply_to")
_USER_TABLES = ("fact_extractions", "message_facts", "manual_facts", "user_facts", "chat_users")
_DOCUMENT_TABLES = ("chunks", "entity_mentions", "local_relations", "attribute_observations", "chunk_extractions",
                    "llm_calls", "documents")


@dataclass(frozen=True)
class ForgetReport:
    user_id: str
    messages: int  # message rows deleted (every version)
    facts: int  # user_facts rows deleted
    document_ids: list[str]  # chat documents deleted, to be read again without the user
    derived_rows: int  # entity, alias, node, edge and attribute rows deleted


class FactStore:
    """Reads and writes of the fact tables of one warehouse."""

    def __init__(self, warehouse: Warehouse):
        self.wh = warehouse

    # ---- reads --------------------------------------------------------------------------------
    def forgotten_user_ids(self) -> frozenset[str]:
        """Users with a tombstone; an empty set when no warehouse exists yet."""
        if not self.wh.exists():
            return frozenset()
        with self.wh.connect(read_only=True) as con:
            present = fetch_scalar(con, "SELECT count(*) FROM information_schema.tables WHERE table_schema = $s "
                                        "AND table_name = 'forgotten_users'", {"s": SCHEMA})
            if not present:  # a warehouse written before tombstones existed
                return frozenset()
            return frozenset(fetch_frame(con, f"SELECT user_id FROM {SCHEMA}.forgotten_users")["user_id"].to_list())

    def current_messages(self) -> pl.DataFrame:
        return schemas.conform(self.wh._rows("messages", current_only=True), schemas.MESSAGES)

    def known_facts(self, exclude_documents: Sequence[str]) -> pl.DataFrame:
        """Fact inputs a run over `exclude_documents` starts from: manual facts and other conversations' facts."""
        rows = self.wh._read(
            f"""SELECT * FROM {SCHEMA}.manual_facts
                UNION ALL BY NAME
                SELECT * FROM {SCHEMA}.message_facts WHERE document_id NOT IN (SELECT v FROM _ids)""",
            {"ids": Keys(exclude_documents)},
        )
        return schemas.conform(rows, schemas.FACT_INPUTS)

    def fact_inputs(self) -> pl.DataFrame:
        """Every fact the memory is rebuilt from: learned from current messages, plus manual ones."""
        rows = self.wh._read(
            f"""SELECT * FROM {SCHEMA}.manual_facts
                UNION ALL BY NAME
                SELECT f.* FROM {SCHEMA}.message_facts f WHERE EXISTS (
                    SELECT 1 FROM {SCHEMA}.messages m WHERE m.valid_until IS NULL AND m.document_id = f.document_id
                      AND m.message_id = f.extracted_from_message_id)"""
        )
        return schemas.conform(rows, schemas.FACT_INPUTS)

    def extraction_outcomes(self) -> pl.DataFrame:
        return schemas.conform(self.wh._rows("fact_extractions"), schemas.FACT_EXTRACTIONS)

    def memory(self) -> pl.DataFrame:
        """Every row of kg.user_facts."""
        return schemas.conform(self.wh._rows("user_facts"), schemas.USER_FACTS)

    def user_facts(self, user_id: str) -> pl.DataFrame:
        rows = self.wh._read(f"SELECT * FROM {SCHEMA}.user_facts WHERE user_id = $u ORDER BY valid_from, fact_id",
                             {"u": user_id})
        return schemas.conform(rows, schemas.USER_FACTS)

    def chat_user(self, user_id: str) -> dict | None:
        rows = self.wh._read(f"SELECT * FROM {SCHEMA}.chat_users WHERE user_id = $u", {"u": user_id})
        return rows.row(0, named=True) if rows.height else None

    def is_known_user(self, user_id: str) -> bool:
        return bool(self.wh._read(
            f"""SELECT 1 FROM {SCHEMA}.messages WHERE user_id = $u UNION ALL
                SELECT 1 FROM {SCHEMA}.manual_facts WHERE user_id = $u UNION ALL
                SELECT 1 FROM {SCHEMA}.forgotten_users WHERE user_id = $u LIMIT 1""", {"u": user_id}).height)

    # ---- integrity (asset checks) ---------------------------------------------------------------
    def duplicate_active_facts(self) -> pl.DataFrame:
        """(user_id, facts) where one user has several active facts of one key (fact_key is not shown: it
        is made of the fact's words)."""
        return self.wh._read(
            f"""SELECT user_id, count(*) AS active_facts, min(fact_id) AS first_fact_id FROM {SCHEMA}.user_facts
                WHERE is_active GROUP BY user_id, fact_key HAVING count(*) > 1 ORDER BY 1, 3""")

    def facts_without_messages(self) -> pl.DataFrame:
        """Automatic facts whose message is not a current message."""
        return self.wh._read(
            f"""SELECT f.fact_id, f.user_id, f.document_id, f.extracted_from_message_id FROM {SCHEMA}.user_facts f
                WHERE f.source = 'auto_extraction' AND NOT EXISTS (
                    SELECT 1 FROM {SCHEMA}.messages m WHERE m.valid_until IS NULL AND m.document_id = f.document_id
                      AND m.message_id = f.extracted_from_message_id)
                ORDER BY 1""")

    def forgotten_user_rows(self) -> pl.DataFrame:
        """Rows of forgotten users in any fact or message table (user_id, table, rows)."""
        parts = " UNION ALL ".join(
            f"SELECT user_id, '{table}' AS in_table, count(*) AS rows FROM {SCHEMA}.{table} "
            f"WHERE user_id IN (SELECT user_id FROM {SCHEMA}.forgotten_users) GROUP BY user_id"
            for table in ("messages", *_USER_TABLES)
        )
        return self.wh._read(f"SELECT * FROM ({parts}) ORDER BY 1, 2")

    # ---- writes -------------------------------------------------------------------------------
    def write_messages(self, messages: pl.DataFrame, document_ids: Sequence[str]) -> dict[str, int]:
        return self.wh.replace_current_partitions("messages", MESSAGE_IDENTITY, messages, document_ids)

    def add_manual_fact(self, row: dict) -> None:
        self.wh.upsert_rows("manual_facts", "fact_id", pl.DataFrame([row], schema=schemas.USER_FACTS))

    def write_memory(self, user_facts: pl.DataFrame) -> None:
        self.wh.replace_tables({"user_facts": user_facts})

    def write_chat_users(self, chat_users: pl.DataFrame) -> None:
        self.wh.replace_tables({"chat_users": chat_users})

    def forget_user(self, user_id: str) -> ForgetReport:
        """Tombstone `user_id` and delete everything they wrote or that was made from it (module docstring)."""
        u = {"u": user_id}

        def body(con) -> ForgetReport:
            con.execute(f"DELETE FROM {SCHEMA}.forgotten_users WHERE user_id = $u", u)
            con.execute(f"INSERT INTO {SCHEMA}.forgotten_users VALUES ($u, $ts)", {**u, "ts": now_utc()})
            docs = fetch_frame(con, f"SELECT DISTINCT document_id FROM {SCHEMA}.messages WHERE user_id = $u ORDER BY 1",
                               u)["document_id"].to_list()
            messages = fetch_scalar(con, f"SELECT count(*) FROM {SCHEMA}.messages WHERE user_id = $u", u)
            facts = fetch_scalar(con, f"SELECT count(*) FROM {SCHEMA}.user_facts WHERE user_id = $u", u)
            con.execute(f"DELETE FROM {SCHEMA}.messages WHERE user_id = $u", u)
            for table in _USER_TABLES:
                con.execute(f"DELETE FROM {SCHEMA}.{table} WHERE user_id = $u", u)
            derived = self._delete_derived(con, docs) if docs else 0
            return ForgetReport(user_id, int(messages), int(facts), docs, derived)
        return self.wh.write(body)

    @staticmethod
    def _delete_derived(con, docs: list[str]) -> int:
        d = {"d": docs}
        con.execute(f"""CREATE TEMP TABLE _forget_chunks AS
                        SELECT chunk_id FROM {SCHEMA}.chunks WHERE document_id IN (SELECT unnest($d))""", d)
        con.execute(f"""CREATE TEMP TABLE _forget_entities AS
                        SELECT DISTINCT entity_id FROM {SCHEMA}.entity_mentions WHERE document_id IN (SELECT unnest($d))
                        UNION SELECT entity_id FROM {SCHEMA}.entities
                        WHERE list_has_any(source_chunk_ids, (SELECT list(chunk_id) FROM _forget_chunks))
                        UNION SELECT entity_id FROM {SCHEMA}.entity_attributes
                        WHERE list_has_any(source_document_ids, $d)""", d)
        # Aliases that merged into those entities (or out of them) name them too.
        con.execute(f"""INSERT INTO _forget_entities
                        SELECT from_id FROM {SCHEMA}.entity_aliases WHERE to_id IN (SELECT entity_id FROM _forget_entities)
                        UNION SELECT to_id FROM {SCHEMA}.entity_aliases WHERE from_id IN (SELECT entity_id FROM _forget_entities)""")
        derived = 0
        ids = "(SELECT entity_id FROM _forget_entities)"
        chunk_list = "(SELECT list(chunk_id) FROM _forget_chunks)"
        for statement in (
            f"DELETE FROM {SCHEMA}.entities WHERE entity_id IN {ids} OR list_has_any(source_chunk_ids, {chunk_list})",
            f"DELETE FROM {SCHEMA}.entity_aliases WHERE from_id IN {ids} OR to_id IN {ids}",
            f"DELETE FROM {SCHEMA}.graph_nodes WHERE node_id IN {ids} OR list_has_any(source_chunk_ids, {chunk_list})",
            f"""DELETE FROM {SCHEMA}.graph_edges WHERE source_id IN {ids} OR target_id IN {ids}
                OR list_has_any(source_chunk_ids, {chunk_list}) OR list_has_any(document_ids, $d)""",
            f"DELETE FROM {SCHEMA}.attribute_supersessions WHERE entity_id IN {ids}",
            f"DELETE FROM {SCHEMA}.entity_attributes WHERE entity_id IN {ids} OR list_has_any(source_document_ids, $d)",
        ):
            derived += int(fetch_scalar(con, statement, d if "$d" in statement else None) or 0)
        for table in _DOCUMENT_TABLES:  # documents last: every version holds the user's text
            con.execute(f"DELETE FROM {SCHEMA}.{table} WHERE document_id IN (SELECT unnest($d))", d)
        # the consolidated rows deleted here are no longer what their digests describe: the next run rebuilds all
        con.execute(f"DELETE FROM {SCHEMA}.consolidation_digests")
        con.execute(f"DROP TABLE IF EXISTS {SCHEMA}.entity_lookup")
        con.execute(f"DROP TABLE IF EXISTS {SCHEMA}.entity_lookup_state")
        con.execute("DROP TABLE _forget_chunks")
        con.execute("DROP TABLE _forget_entities")
        return derived

    def unforget_user(self, user_id: str) -> int | None:
        """Remove the tombstone and close the current rows of every chat document, so the next run reads
        them again with the user's messages. Returns the number of chat documents to read again, or None
        when the user was not forgotten."""
        def body(con) -> int | None:
            removed = fetch_scalar(con, f"DELETE FROM {SCHEMA}.forgotten_users WHERE user_id = $u", {"u": user_id})
            if not removed:
                return None
            return int(fetch_scalar(
                con, f"""UPDATE {SCHEMA}.documents SET valid_until = $ts
                         WHERE valid_until IS NULL AND source_type = 'chat'""", {"ts": now_utc()}) or 0)
        return self.wh.write(body)

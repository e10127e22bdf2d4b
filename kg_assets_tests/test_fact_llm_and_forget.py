"""The LLM fact path through the shared engine (real openai/instructor client over HTTP to the local test
server), and `kg facts forget`: nothing the user wrote stays in any table or in the LLM cache."""

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from kg_assets.cli import main
from kg_assets.definitions import build_definitions
from kg_assets.extractors.factory import build_extractor
from kg_assets.settings import FactSettings
from kg_assets.testing.openai_server import Reply
from kg_assets.core.chunking import CHUNKER_VERSION
from kg_assets.testing.scripted_llm import SAMPLE_NAMES, extraction_responder, fact_message, is_fact_request
from kg_assets_tests.conftest import LLM_TEST_SETTINGS, project_settings

SECRET = "Zanzibarquux"  # written by u-zed only


@pytest.fixture
def llm_facts(project, openai_server):
    """The project extracting entities and facts with the test server's scripted model, every message offered."""
    # The scripted model also finds the secret (and a person u-zed names) as entities, so forgetting is
    # checked on derived rows (entities, nodes, marts) as well as on raw text.
    openai_server.set_responder(extraction_responder({**SAMPLE_NAMES, SECRET: "ORGANIZATION", "Mira Quell": "PERSON"}))
    project.settings = project_settings(project.inbox, project.warehouse.path, facts=FactSettings(rate=1.0),
                                        **{**LLM_TEST_SETTINGS, "base_url": openai_server.base_url})
    project.defs = build_definitions(project.settings)
    project.server = openai_server
    return project


def fact_requests(server) -> list[str]:
    return [fact_message(r) for r in server.requests if is_fact_request(r)]


def test_a_malformed_fact_answer_fails_that_message_only_and_the_next_run_asks_again(llm_facts):
    server = llm_facts.server
    server.respond_when(lambda r: is_fact_request(r) and fact_message(r).startswith("I moved to Lisbon"),
                        Reply.malformed(), times=1)
    assert llm_facts.run_all().success
    outcomes = dict(llm_facts.sql("SELECT message_id, outcome FROM kg.fact_extractions").iter_rows())
    assert outcomes.pop("m-0017") == "error" and set(outcomes.values()) == {"ok"}
    assert len(fact_requests(server)) == 26
    lena = llm_facts.sql("SELECT content FROM kg.user_facts WHERE user_id = 'u-lena' AND is_active")["content"].to_list()
    assert "moved to Lisbon in August" not in lena and "runs support for Qubitline at the Quantum Dynamics Lab" in lena
    calls = llm_facts.sql("SELECT message_id, status, prompt_version, output_format, cost_usd FROM kg.llm_calls "
                          "WHERE message_id IS NOT NULL")
    assert calls.height == 26 and calls.filter(pl.col("status") == "parse_error")["message_id"].to_list() == ["m-0017"]
    assert set(calls["output_format"]) == {"facts"} and calls.filter(pl.col("status") == "ok")["cost_usd"].min() > 0
    # The failed message makes its chat stale, so `kg run` and the nightly refresh take it again.
    version = build_extractor(llm_facts.settings.extractor).version
    assert llm_facts.warehouse.stale_documents(version, CHUNKER_VERSION) == ["chat/support_chat.jsonl"]

    server.clear_records()
    assert llm_facts.run_all().success
    assert [m[:17] for m in fact_requests(server)] == ["I moved to Lisbon"]  # only the failed one is asked again
    assert llm_facts.sql("SELECT count(*) FROM kg.fact_extractions WHERE outcome <> 'ok'").item() == 0
    lisbon = llm_facts.sql("SELECT * FROM kg.user_facts WHERE content = 'moved to Lisbon in August'").row(0, named=True)
    assert (lisbon["extractor"], lisbon["is_active"]) == ("facts-llm", True)
    known = [r for r in server.requests if is_fact_request(r)][0]["messages"][-1]["content"]
    assert "- [work] runs support for Qubitline at the Quantum Dynamics Lab" in known  # known facts in the prompt


def _zed_chat(project) -> None:
    lines = [
        {"user_id": "u-zed", "message_id": "z-1", "timestamp": "2025-10-25T10:00:00Z",
         "content": f"I keep a pet axolotl named {SECRET} in my kitchen."},
        {"user_id": "u-amy", "message_id": "z-2", "timestamp": "2025-10-25T10:01:00Z",
         "content": "Nice! I work as a baker in Leeds and I have two cats."},
        {"user_id": "u-zed", "message_id": "z-3", "timestamp": "2025-10-25T10:02:00Z",
         "content": f"My sister Mira Quell says {SECRET} Holdings sponsors the aquarium in Porto."},
    ]
    (project.inbox / "chat" / "pets.jsonl").write_text("".join(json.dumps(m) + "\n" for m in lines))


def _warehouse_hits(project) -> list[str]:
    """Every text column of every table and view of the warehouse that contains the secret."""
    columns = project.sql(
        "SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema IN ('kg', 'kg_marts') AND (data_type LIKE 'VARCHAR%' OR data_type LIKE 'MAP%' "
        "OR data_type LIKE 'STRUCT%')")
    # one query for all of them (a connection per column cost this test 20 s)
    found = " UNION ALL ".join(
        f"SELECT '{schema}.{table}.{column}' AS hit WHERE EXISTS (SELECT 1 FROM {schema}.\"{table}\" "
        f"WHERE contains(lower(CAST(\"{column}\" AS VARCHAR)), $s))"
        for schema, table, column, _ in columns.iter_rows())
    return sorted(project.sql(found, s=SECRET.lower())["hit"].to_list())


def _cache_hits(cache: Path) -> list[str]:
    with sqlite3.connect(cache) as con:
        hits = []
        for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            for row in con.execute(f'SELECT * FROM "{table}"'):
                if any(SECRET.lower() in str(value).lower() for value in row):
                    hits.append(table)
                    break
    return hits


def test_forget_leaves_nothing_the_user_wrote_anywhere_until_unforgotten(llm_facts, capsys):
    _zed_chat(llm_facts)
    db = str(llm_facts.warehouse.path)
    cache = Path(db).with_name("llm_cache.sqlite")
    assert llm_facts.run_all(with_dbt=True).success
    assert main(["facts", "remember", "u-zed", f"I named my boat {SECRET} too", "--db", db]) == 0
    before = _warehouse_hits(llm_facts)
    # The search finds the secret where it lives before the forget, raw and derived.
    assert {"kg.messages.content", "kg.documents.text", "kg.chunks.text", "kg.user_facts.content",
            "kg.manual_facts.content", "kg.entities.name", "kg.graph_nodes.label"} <= set(before)
    assert "kg_marts.entity_profile.name" in before and _cache_hits(cache)
    profile = llm_facts.sql("SELECT * FROM kg_marts.user_profile WHERE user_id = 'u-amy'").row(0, named=True)
    assert (profile["message_count"], profile["conversation_count"], profile["manual_facts"]) == (1, 1, 0)
    assert profile["active_facts"] == sum(profile["facts_by_type"].values()) > 0

    assert main(["facts", "forget", "u-zed", "--db", db]) == 0
    assert "u-zed is forgotten" in capsys.readouterr().out
    assert _warehouse_hits(llm_facts) == [] and _cache_hits(cache) == []
    assert llm_facts.sql("SELECT count(*) FROM kg.user_facts WHERE user_id = 'u-amy'").item() > 0  # others keep theirs

    # Reprocessing the chat honours the tombstone; the other speaker's messages come back.
    assert llm_facts.run_all(with_dbt=True).success
    assert _warehouse_hits(llm_facts) == [] and _cache_hits(cache) == []
    assert llm_facts.sql("SELECT DISTINCT user_id FROM kg.messages WHERE document_id = 'chat/pets.jsonl'").rows() == [("u-amy",)]
    amy = llm_facts.sql("SELECT content FROM kg.user_facts WHERE user_id = 'u-amy' AND is_active")["content"].to_list()
    assert "works as a baker in Leeds" in amy
    assert llm_facts.sql("SELECT count(*) FROM kg_marts.user_profile WHERE user_id = 'u-zed'").item() == 0
    assert main(["facts", "list", "u-zed", "--db", db]) == 0
    assert "u-zed is forgotten" in capsys.readouterr().out
    assert main(["facts", "remember", "u-zed", "I like boats", "--db", db]) == 2

    assert main(["facts", "unforget", "u-zed", "--db", db]) == 0
    assert llm_facts.run_all().success
    assert "kg.messages.content" in _warehouse_hits(llm_facts)
    assert llm_facts.sql("SELECT count(*) FROM kg.user_facts WHERE user_id = 'u-zed' AND is_active").item() > 0


def test_an_attribute_read_from_a_chat_message_takes_that_message_time(llm_facts):
    (llm_facts.inbox / "chat" / "news.jsonl").write_text("".join(json.dumps(m) + "\n" for m in [
        {"user_id": "u-amy", "message_id": "n-1", "timestamp": "2024-01-05T09:00:00Z", "content": "Happy new year, all."},
        {"user_id": "u-amy", "message_id": "n-2", "timestamp": "2024-03-20T16:30:00Z",
         "content": "Big news today: Marcus Webb joined Quantum Dynamics Lab as CTO."},
    ]))
    assert llm_facts.run_all().success
    rows = llm_facts.sql(
        "SELECT a.valid_from FROM kg.entity_attributes a JOIN kg.entities e ON e.entity_id = a.entity_id "
        "AND e.valid_until IS NULL WHERE e.name = 'Marcus Webb' AND a.attr_key = 'employer' "
        "AND list_contains(a.source_document_ids, 'chat/news.jsonl')")
    # Not the chat file's first timestamp (2024-01-05): the message that says it, earlier than any other source.
    assert rows["valid_from"].to_list() == [datetime(2024, 3, 20, 16, 30, tzinfo=UTC)]

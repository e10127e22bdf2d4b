"""LLM extraction end to end through Dagster, against a real local OpenAI-compatible HTTP server."""

import json

import polars as pl
import pytest

from kg_assets.core.extraction.prompts import PROMPT_VERSION
from kg_assets.testing.openai_server import Reply
from kg_assets.testing.scripted_llm import SAMPLE_NAMES, chunk_text, extraction_responder, is_gleaning

from kg_assets_tests.conftest import engine_chunks


def _metadata(result, asset="entity_mentions"):
    (mat,) = [m for m in result.get_asset_materialization_events() if m.asset_key.to_user_string() == asset][:1]
    return {k: v.value for k, v in mat.materialization.metadata.items()}


def _check(result, name):
    return next(c for c in result.get_asset_check_evaluations() if c.check_name == name)


@pytest.mark.parametrize("fmt", ["tuple", "structured"])
def test_extraction_runs_through_dagster_in_both_formats(llm_project, fmt):
    project = llm_project.configure(output_format=fmt)
    result = project.run_all()
    assert result.success
    server = project.server
    if fmt == "structured":
        assert all(r.get("tools") for r in server.requests), "instructor sends the schema as a tool"
        tools = {json.dumps(r["tools"], sort_keys=True) for r in server.requests}
        assert len(tools) == 1, "one schema for every request"
        (tool,) = json.loads(tools.pop())
        assert tool["function"]["name"] == "ExtractionOut"
        assert set(tool["function"]["parameters"]["properties"]) == {"entities", "relations", "attributes", "more"}
        assert "gleaning" not in json.dumps(tool)
    else:
        assert not any(r.get("tools") for r in server.requests)
    mentions = project.sql("SELECT DISTINCT name, entity_type, extractor FROM kg.entity_mentions")
    assert set(mentions["extractor"]) == {"llm"}
    found = dict(zip(mentions["name"], mentions["entity_type"]))
    assert {n: found.get(n) for n in SAMPLE_NAMES} == SAMPLE_NAMES
    attrs = project.sql("SELECT entity_name, attr_key, value FROM kg.attribute_observations")
    assert ("Marcus Webb", "employer", "Quantum Dynamics Lab") in attrs.rows()
    # every request is logged with its tokens and cost; metadata shows the spend
    calls = project.sql("SELECT status, prompt_tokens, completion_tokens, cost_usd, output_format FROM kg.llm_calls")
    assert calls.height == server.calls and set(calls["status"]) == {"ok"} and set(calls["output_format"]) == {fmt}
    meta = _metadata(result)
    assert meta["llm_calls"] == server.calls and meta["llm_cache_hits"] == 0
    assert meta["prompt_tokens"] == calls["prompt_tokens"].sum() > 0
    assert meta["estimated_cost_usd"] == pytest.approx(calls["cost_usd"].sum(), abs=1e-6) and meta["estimated_cost_usd"] > 0  # rounded
    assert "LLM" in meta["engine"] and fmt in meta["engine"]
    chunks = project.sql("SELECT count(*) AS n FROM kg.chunks")["n"][0]
    assert server.calls == chunks, "a complete first answer needs no gleaning pass (KG_LLM_GLEANING=auto)"
    # prompt_version is carried on the call rows; extractor_version on every mention row
    assert project.sql("SELECT DISTINCT prompt_version FROM kg.llm_calls")["prompt_version"].to_list() == [PROMPT_VERSION]
    version = project.sql("SELECT DISTINCT extractor_version FROM kg.entity_mentions")["extractor_version"].to_list()
    assert len(version) == 1 and version[0].startswith(f"llm-9/{PROMPT_VERSION}/{fmt}/")


def test_a_rerun_makes_no_llm_calls_and_a_rebuilt_warehouse_is_served_from_the_cache(llm_project):
    project = llm_project
    assert project.run_all().success
    paid = project.server.calls
    assert paid > 0
    result = project.run_all()
    assert result.success and project.server.calls == paid, "unchanged chunks are not extracted again"
    mentions = project.sql("SELECT * EXCLUDE (mention_id) FROM kg.entity_mentions ORDER BY ALL")
    # Lose the warehouse entirely: the cache still answers every request, for free.
    with project.warehouse.transaction() as con:
        for table in ("documents", "chunks", "entity_mentions", "local_relations", "chunk_extractions", "attribute_observations"):
            con.execute(f"DELETE FROM kg.{table}")
    result = project.run_all()
    assert result.success and project.server.calls == paid
    meta = _metadata(result)
    assert meta["llm_calls"] == 0 and meta["llm_cache_hits"] == paid and meta["estimated_cost_usd"] == 0
    assert project.sql("SELECT * EXCLUDE (mention_id) FROM kg.entity_mentions ORDER BY ALL").equals(mentions)


def test_gleaning_finds_what_the_first_pass_missed(llm_project):
    project = llm_project.configure(gleaning="always")
    first = {"Sarah Chen": "PERSON"}
    project.server.set_responder(extraction_responder(names=first, missed={"Quantum Dynamics Lab": "ORGANIZATION"}))
    assert project.run_all().success
    passes = dict(project.sql("SELECT DISTINCT name, gleaning_pass FROM kg.entity_mentions").iter_rows())
    assert passes == {"Sarah Chen": 0, "Quantum Dynamics Lab": 1}
    gleaning = [r for r in project.server.requests if is_gleaning(r)]
    assert gleaning and all("PERSON: Sarah Chen" in r["messages"][-1]["content"] for r in gleaning if "Sarah Chen" in chunk_text(r))


def test_gleaning_stops_when_the_model_reports_nothing_missing(llm_project):
    project = llm_project.configure(max_gleanings=3, gleaning="always")
    missed_once = {"Quantum Dynamics Lab": "ORGANIZATION"}
    project.server.set_responder(extraction_responder(names={"Sarah Chen": "PERSON"}, missed=missed_once))
    assert project.run_all().success
    per_chunk = project.sql("SELECT passes, count(*) AS n FROM kg.chunk_extractions GROUP BY passes")
    # a chunk whose gleaning found something asks once more and then stops; others stop after one gleaning pass
    assert set(per_chunk["passes"]) <= {2, 3} and per_chunk.filter(pl.col("passes") == 3).height == 1
    assert project.server.calls == project.sql("SELECT sum(passes) AS n FROM kg.chunk_extractions")["n"][0]


def test_malformed_and_truncated_answers_keep_what_parses_and_record_the_rest(llm_project):
    project = llm_project
    normal = extraction_responder()

    def respond(request):
        text = chunk_text(request)
        if "Northwind Robotics moved its headquarters" in text and not is_gleaning(request):
            return Reply(content="I cannot comply with this format, sorry.\nentity: Northwind", finish_reason="stop")
        if "Lumen Lens" in text and not is_gleaning(request):
            d = "<|#|>"
            return Reply(content=f"entity{d}Lumen Analytics{d}ORGANIZATION{d}A startup\nentity{d}Priya Natarajan{d}PERSON{d}Founder\nrelation{d}Priya Nata",
                         finish_reason="length")
        return normal(request)

    project.server.set_responder(respond)
    result = project.run_all()
    assert result.success
    status = project.sql("SELECT c.document_id, e.status, e.error, e.bad_lines, e.complete FROM kg.chunk_extractions e JOIN kg.chunks c USING (chunk_id)")
    broken = status.filter(pl.col("document_id") == "news/northwind_relocates_hq.md")
    assert broken.filter(pl.col("status") == "error").height >= 1
    assert broken.filter(pl.col("status") == "error")["error"].str.contains("unparseable tuple output").all()
    truncated = status.filter((pl.col("bad_lines") > 0) & (pl.col("status") == "ok"))
    assert truncated.height >= 1 and not truncated["complete"].any()
    kept = project.sql("SELECT DISTINCT name FROM kg.entity_mentions WHERE name IN ('Priya Natarajan', 'Lumen Analytics')")
    assert kept.height == 2, "the valid lines before the cut are kept"
    regleaned = [r for r in project.server.requests if is_gleaning(r) and "re-emit" in r["messages"][-1]["content"]]
    assert regleaned and "relation<|#|>Priya Nata" in regleaned[0]["messages"][-1]["content"]
    assert _check(result, "extraction_health").passed  # a few failures stay under the threshold
    errors = project.sql("SELECT count(*) AS n FROM kg.llm_calls WHERE status = 'parse_error'")["n"][0]
    assert errors >= 1


def test_health_check_fails_when_most_chunks_cannot_be_parsed(llm_project):
    project = llm_project
    project.server.set_responder(lambda request: Reply.malformed())
    result = project.run_all()
    check = _check(result, "extraction_health")
    assert not check.passed
    assert check.metadata["failed_share"].value > 0.9


def test_rate_limits_are_retried_and_the_call_succeeds(llm_project):
    project = llm_project
    project.server.script(Reply.rate_limited(retry_after=0.05), Reply.rate_limited(retry_after=0.05))
    assert project.run_all().success
    assert project.sql("SELECT count(*) AS n FROM kg.chunk_extractions WHERE status <> 'ok'")["n"][0] == 0
    statuses = [r.status for r in project.server.records]
    assert statuses.count(429) == 2
    assert project.server.calls == 2 + project.sql("SELECT count(*) AS n FROM kg.llm_calls")["n"][0]


def test_timeouts_are_recorded_per_chunk_and_a_rerun_redoes_only_those(llm_project):
    project = llm_project.configure(timeout_s=0.5, max_retries=0)
    normal = extraction_responder()
    slow_doc = "Levant Quantum Workshop"
    project.server.set_responder(lambda r: Reply.timeout(3) if slow_doc in chunk_text(r) else normal(r))
    assert project.run_all().success
    failed = project.sql("SELECT chunk_id, error FROM kg.chunk_extractions WHERE status = 'error'")
    assert failed.height >= 1 and failed["error"].str.contains("APITimeoutError").all()
    assert project.sql("SELECT count(*) AS n FROM kg.llm_calls WHERE status = 'error'")["n"][0] == failed.height
    before = project.server.calls
    project.server.set_responder(normal)
    result = project.run_all()
    assert result.success
    assert project.server.calls - before == failed.height, "only the failed chunks are asked again"
    assert _metadata(result)["chunks_extracted"] == failed.height
    assert project.sql("SELECT count(*) AS n FROM kg.chunk_extractions WHERE status = 'error'")["n"][0] == 0


def test_concurrency_is_bounded_by_configuration(llm_project):
    project = llm_project.configure(concurrency=3)
    project.server.latency_s = 0.05
    assert project.run_all().success
    assert project.server.peak_in_flight == 3


def test_unknown_types_become_other_and_orphan_relations_are_dropped(llm_project):
    project = llm_project
    d = "<|#|>"

    def respond(request):
        if is_gleaning(request):
            return Reply(content="<|COMPLETE|>")
        return Reply(content="\n".join([
            f"entity{d}Sarah Chen{d}SCIENTIST{d}A researcher",
            f"entity{d}Quantum Dynamics Lab{d}ORG{d}A lab",
            f"relation{d}Sarah Chen{d}Quantum Dynamics Lab{d}works at{d}x{d}1.7",
            f"relation{d}Sarah Chen{d}Nobody Mentioned{d}knows{d}x{d}0.5",
            "<|COMPLETE|>",
        ]))

    project.server.set_responder(respond)
    assert project.run_all().success
    types = dict(project.sql("SELECT DISTINCT name, entity_type FROM kg.entity_mentions").iter_rows())
    assert types == {"Sarah Chen": "OTHER", "Quantum Dynamics Lab": "ORGANIZATION"}
    rel = project.sql("SELECT DISTINCT target_name, relation_type, strength FROM kg.local_relations")
    assert rel.rows() == [("Quantum Dynamics Lab", "WORKS_AT", 1.0)]


@pytest.mark.process
def test_cancelling_a_run_stops_llm_calls_writes_nothing_and_the_rerun_pays_only_for_the_rest(llm_project, tmp_path):
    import os
    import shutil
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from kg_assets.storage.llm_cache import LLMCache

    project = llm_project
    normal = extraction_responder()
    project.server.set_responder(lambda r: normal(r) if "Quantum" in chunk_text(r) else Reply(content="<|COMPLETE|>", delay_s=60))
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(Path(__file__).resolve().parents[1] / "dagster.yaml", home)
    # The CLI reads its settings from the environment: the same ones the fixture gave the project.
    # Fact extraction off, as in the fixture: this test counts and cancels entity-extraction requests.
    env = {**os.environ, "DAGSTER_HOME": str(home), "OPENAI_BASE_URL": project.server.base_url, "KG_LLM_TIMEOUT_S": "5",
           "KG_SUMMARY_MIN_FRAGMENTS": "0", "FACT_EXTRACTION_ENABLED": "false"}
    kg = Path(sys.executable).parent / "kg"
    # --no-marts: the marts play no part in a cancelled extraction (test_cli runs them in `kg run`)
    args = [kg, "run", "--no-marts", "--inbox", project.inbox, "--db", project.warehouse.path]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while project.server.in_flight < 5 and time.monotonic() < deadline:
        time.sleep(0.1)
    # Count the answers once none has arrived for a second: the fast chunks have finished both passes, and the
    # client has had time to cache the last answer (sent by the server is not yet received by the client).
    paid_before_cancel, quiet_since = -1, time.monotonic()
    while time.monotonic() - quiet_since < 1.0 and time.monotonic() < deadline:
        if (answered_now := project.server.calls - project.server.in_flight) != paid_before_cancel:
            paid_before_cancel, quiet_since = answered_now, time.monotonic()
        time.sleep(0.05)
    assert project.server.in_flight >= 5 and paid_before_cancel > 0
    interrupted = time.monotonic()
    proc.send_signal(signal.SIGINT)  # what Dagster's run termination sends to a run worker
    output, _ = proc.communicate(timeout=60)
    assert time.monotonic() - interrupted < 15, "in-flight calls are abandoned, not awaited"
    assert proc.returncode != 0, output[-2000:]
    for table in ("entity_mentions", "local_relations", "chunk_extractions", "attribute_observations"):
        assert project.sql(f"SELECT count(*) AS n FROM kg.{table}")["n"][0] == 0, f"half-written {table}"
    answered = project.server.calls - project.server.in_flight  # the process is gone: no answer arrives after this
    with LLMCache(Path(project.warehouse.path).with_name("llm_cache.sqlite")) as cache:
        cached = cache.unexported_calls().filter(pl.col("status") == "ok").height
    # every answer that arrived before the cancel is kept (answers can still land between the count and the signal)
    assert paid_before_cancel <= cached <= answered, (paid_before_cancel, cached, answered)

    project.server.set_responder(normal)
    calls_before_rerun = project.server.calls
    rerun = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stdout[-3000:]
    chunks = project.sql("SELECT count(*) AS n FROM kg.chunks")["n"][0]
    hits = project.sql("SELECT count(*) AS n FROM kg.llm_calls WHERE status = 'cache_hit'")["n"][0]
    assert hits >= paid_before_cancel
    assert project.server.calls - calls_before_rerun == chunks - hits, "cached calls are free"
    assert project.sql("SELECT count(*) AS n FROM kg.chunk_extractions WHERE status = 'ok'")["n"][0] == chunks


def test_health_check_fails_when_a_run_extracts_nothing(llm_project):
    project = llm_project
    project.server.set_responder(lambda request: Reply(content="<|COMPLETE|>"))  # valid, but empty
    result = project.run_all()
    check = _check(result, "extraction_health")
    assert not check.passed
    assert check.metadata["empty_share"].value == 1.0 and check.metadata["failed"].value == 0


def test_entities_with_many_description_fragments_get_a_cached_llm_summary(llm_project):
    from kg_assets.testing.scripted_llm import is_summary

    project = llm_project.configure(summary_min_fragments=3)
    normal = extraction_responder()
    failing = "Boston"
    project.server.set_responder(
        lambda r: Reply.server_error() if is_summary(r) and failing in r["messages"][-1]["content"].splitlines()[0] else normal(r))
    project.configure(max_retries=0)
    assert project.run_all().success
    # the summaries are their own asset (kg.entity_summaries, in the llm pool); graph nodes show them
    fragments = project.sql("""SELECT e.name, count(DISTINCT m.description) AS n, any_value(g.description) AS description
                               FROM kg.entities e JOIN kg.entity_mentions m USING (entity_id)
                               JOIN kg.graph_nodes g ON g.node_id = e.entity_id AND g.valid_until IS NULL
                               WHERE e.valid_until IS NULL GROUP BY e.name""")
    many = fragments.filter(pl.col("n") >= 3)
    assert many.height >= 2
    for name, _, description in many.iter_rows():
        if name == failing:
            assert "|" in description, "a failed summary keeps the deterministic merged description"
        else:
            assert description.startswith(f"Summary of {name}"), name
    for name, _, description in fragments.filter(pl.col("n") < 3).iter_rows():
        assert not description.startswith("Summary"), name
    text_calls = project.sql("SELECT count(*) AS n FROM kg.llm_calls WHERE output_format = 'text' AND status = 'ok'")["n"][0]
    assert text_calls == many.height - 1
    assert project.warehouse.row_count("entity_summaries") == many.height - 1
    calls = project.server.calls
    project.server.set_responder(normal)
    assert project.consolidate().success
    assert project.server.calls == calls + 1, "cached summaries are free; only the failed one is asked again"


def test_gleaning_runs_only_where_the_first_answer_asks_for_it(llm_project):
    project = llm_project
    normal = extraction_responder()

    def respond(request):
        answer = normal(request)
        if not is_gleaning(request) and "Sarah Chen" in chunk_text(request):
            return Reply(content=answer.content.replace("<|COMPLETE|>", "<|CONTINUE|>"))  # "more remain"
        return answer

    project.server.set_responder(respond)
    assert project.run_all().success
    passes = project.sql("""SELECT c.text LIKE '%Sarah Chen%' AS asked, e.passes, count(*) AS n
                            FROM kg.chunk_extractions e JOIN kg.chunks c USING (chunk_id) GROUP BY ALL ORDER BY ALL""")
    assert passes.rows() == [(False, 1, passes["n"][0]), (True, 2, passes["n"][1])]
    chunks = project.sql("SELECT count(*) AS n FROM kg.chunks")["n"][0]
    assert project.server.calls == chunks + passes["n"][1] < 2 * chunks


def test_extraction_leaves_the_garbage_collector_as_it_found_it(tmp_path):
    """The engine freezes the objects that exist before a run, so full collections do not rescan them and
    stall the event loop; afterwards, also when a chunk failed, they must be collectable again."""
    import gc

    from kg_assets.extractors.llm.engine import LLMExtractor
    from kg_assets.settings import LLMSettings
    from kg_assets.testing.openai_server import FakeOpenAIServer

    chunks = engine_chunks({"c1": "Sarah Chen leads the lab.", "c2": "Broken chunk about Sarah Chen."})
    with FakeOpenAIServer(responder=extraction_responder(names={"Sarah Chen": "PERSON"})) as server:
        server.respond_when("Broken chunk", Reply.error(400, "bad request"))
        settings = LLMSettings(base_url=server.base_url, api_key="test", cache_path=str(tmp_path / "cache.sqlite"))
        frozen_before = gc.get_freeze_count()
        result = LLMExtractor(settings).extract(chunks)
    assert gc.get_freeze_count() == frozen_before == 0
    assert dict(result.chunk_status.select("chunk_id", "status").iter_rows()) == {"c1": "ok", "c2": "error"}
    assert result.mentions.select("chunk_id", "name").rows() == [("c1", "Sarah Chen")]


def test_the_engine_states_its_attribute_cap_in_the_prompt_and_keeps_that_many(tmp_path):
    from kg_assets.extractors.llm.engine import LLMExtractor
    from kg_assets.settings import LLMSettings
    from kg_assets.testing.openai_server import FakeOpenAIServer

    d = "<|#|>"
    facts = [f"attribute{d}Sarah Chen{d}skill_{i}{d}value {i}{d}0.9" for i in range(5)]
    answer = "\n".join([f"entity{d}Sarah Chen{d}PERSON{d}A researcher.", *facts, "<|CONTINUE|>"])
    with FakeOpenAIServer(responder=lambda request: Reply(content=answer)) as server:
        settings = LLMSettings(base_url=server.base_url, api_key="test", cache_path=str(tmp_path / "cache.sqlite"),
                               max_attributes=3)
        result = LLMExtractor(settings).extract(engine_chunks({"c1": "Sarah Chen knows many things."}))
        systems = [r["messages"][0]["content"] for r in server.requests]
    assert len(systems) == 2  # the answer asked for more: one gleaning pass
    assert all("at most 3." in s for s in systems)
    assert result.attributes["attr_key"].to_list() == ["skill_0", "skill_1", "skill_2"]


def test_the_engine_version_follows_the_settings_that_change_the_rows():
    from kg_assets.extractors.llm.engine import LLMExtractor
    from kg_assets.settings import LLMSettings

    base = LLMSettings()
    versions = {LLMExtractor(s).version for s in (
        base, LLMSettings(max_attributes=3), LLMSettings(entity_types=("PERSON", "OTHER")),
        LLMSettings(unknown_types="drop"), LLMSettings(orphan_relations="add"), LLMSettings(max_entities=5),
        LLMSettings(max_relations=5), LLMSettings(temperature=0.5), LLMSettings(max_completion_tokens=500),
        LLMSettings(completion_ratio=1.0),
    )}
    assert len(versions) == 10
    assert LLMExtractor(LLMSettings(concurrency=2, cache_path="elsewhere.sqlite")).version == LLMExtractor(base).version


def test_stage_timer_wraps_every_stage_and_the_requests_inside_the_event_loop(tmp_path, openai_server):
    """The benchmark's timing hook: each stage is entered and left in order, never nested in another one
    (so per-stage seconds add up), and the requests stage runs inside the engine's event loop."""
    import asyncio
    from contextlib import contextmanager

    from kg_assets.extractors.llm.engine import LLMExtractor
    from kg_assets.settings import LLMSettings

    openai_server.set_responder(extraction_responder(names={"Sarah Chen": "PERSON"}))
    chunks = pl.DataFrame({
        "chunk_id": ["c1", "c2"], "document_id": ["d1", "d1"], "chunk_index": [0, 1],
        "text": ["Sarah Chen leads the lab.", "Sarah Chen gave a talk."], "section_path": [None, None],
        "content_hash": ["h1", "h2"], "headings": [[], []],
    }, schema_overrides={"section_path": pl.String, "headings": pl.List(pl.String)})
    entered: list[str] = []
    open_stages: list[str] = []
    in_loop: dict[str, bool] = {}

    @contextmanager
    def stage(name):
        assert open_stages in ([], ["requests"]), f"{name} inside {open_stages}"
        entered.append(name)
        open_stages.append(name)
        try:
            asyncio.get_running_loop()
            in_loop[name] = True
        except RuntimeError:
            in_loop[name] = False
        try:
            yield
        finally:
            assert open_stages.pop() == name

    settings = LLMSettings(base_url=openai_server.base_url, api_key="test", cache_path=str(tmp_path / "cache.sqlite"))
    LLMExtractor(settings, stage_timer=stage).extract(chunks)
    assert entered[0] == "requests" and entered[-1] == "frames" and entered.count("requests") == 1
    per_chunk = {"build prompt": 2, "hash prompt": 2, "parse answer": 2, "sanitize": 2}
    assert {name: entered.count(name) for name in per_chunk} == per_chunk
    assert entered.count("cache") == 2 * 4  # per request: lookup, call logged as sent, store, call log
    assert in_loop["requests"] and not in_loop["frames"]

"""What a small local model answers, through the real openai / instructor client and the local test server: an
echo of the prompt, a loop, an empty answer (blank, `{ }`), a terminator inside prose, an
answer cut by the token cap, records copied from the prompt's example, and a model slower than the timeout.

None of them passes for an extraction: each is detected, gets its own call status, is never served from the
cache as a good answer and is asked again by the next run; a loop is never gleaned after.
"""

from pathlib import Path

import pytest
from bpe_openai import get_encoding as encoding

from kg_assets.commands import run_report
from kg_assets.core.extraction import prompts
from kg_assets.core.tokens import DEFAULT_ENCODING
from kg_assets.extractors.llm.engine import LLMExtractor
from kg_assets.extractors.llm.progress import progress_message
from kg_assets.settings import LLMSettings
from kg_assets.testing.openai_requests import prompt_tokens_of
from kg_assets.testing.openai_server import Reply, count_tokens
from kg_assets.testing.scripted_llm import extraction_responder

from kg_assets_tests.conftest import engine_chunks

D = "<|#|>"
TEXT = "Sarah Chen leads the Quantum Dynamics Lab in Boston."
CHUNKS = {"c1": TEXT}
SAMPLE_CORPUS = Path(__file__).resolve().parents[1] / "data" / "inbox"


def _settings(server, tmp_path, fmt="tuple", **kw) -> LLMSettings:
    return LLMSettings(base_url=server.base_url, api_key="test", cache_path=str(tmp_path / "cache.sqlite"),
                       output_format=fmt, **kw)


def _extract(settings, chunks=CHUNKS):
    engine = LLMExtractor(settings)
    return engine, engine.extract(engine_chunks(chunks))


def _rerun_asks_again(server, settings):
    """The next run asks the model again (the bad answer was not cached) and keeps its good answer."""
    server.set_responder(extraction_responder())
    before = server.calls
    _, again = _extract(settings)
    assert server.calls - before == 1
    assert set(again.chunk_status["status"]) == {"ok"}
    assert "Sarah Chen" in set(again.mentions["name"])


@pytest.mark.parametrize(("fmt", "answer"), [("tuple", ""), ("tuple", " \n\n "),
                                             ("structured", "{}"), ("structured", {"more": False})])
def test_an_empty_first_answer_is_a_failure_of_its_own_never_cached(openai_server, tmp_path, fmt, answer):
    settings = _settings(openai_server, tmp_path, fmt)
    openai_server.set_responder(lambda request: Reply(content=answer))
    engine, result = _extract(settings)
    assert result.chunk_status["status"].to_list() == ["error"]
    assert "EmptyAnswer" in result.chunk_status["error"][0]
    assert engine.calls["status"].to_list() == ["empty"]
    _rerun_asks_again(openai_server, settings)


@pytest.mark.parametrize(("fmt", "answer"), [("tuple", "<|COMPLETE|>"),
                                             ("structured", {"entities": [], "relations": [], "attributes": []})])
def test_saying_that_the_text_names_nothing_is_an_answer(openai_server, tmp_path, fmt, answer):
    """The prompt's own way to say there is nothing: the chunk is ok without a mention (the extraction_health
    check counts such chunks), and the answer is cached."""
    settings = _settings(openai_server, tmp_path, fmt)
    openai_server.set_responder(lambda request: Reply(content=answer))
    engine, result = _extract(settings)
    assert result.chunk_status["status"].to_list() == ["ok"] and result.mentions.height == 0
    assert engine.calls["status"].to_list() == ["ok"]
    _extract(settings)
    assert openai_server.calls == 1


def test_an_answer_that_echoes_the_prompt_is_degenerate_and_asked_again(openai_server, tmp_path):
    """Gemma 3 270M on llama.cpp: the answer repeats the system prompt, whose instruction line holds
    '<|COMPLETE|>' mid-line; that ended the answer before, so the chunk was 'ok' with no entity."""
    settings = _settings(openai_server, tmp_path)
    openai_server.set_responder(lambda request: Reply(content=request["messages"][0]["content"]))
    engine, result = _extract(settings)
    assert result.chunk_status["status"].to_list() == ["error"]
    assert "DegenerateAnswer" in result.chunk_status["error"][0]
    assert result.mentions.height == 0, "neither the template lines nor the example become entities"
    assert engine.calls["status"].to_list() == ["degenerate"]
    _rerun_asks_again(openai_server, settings)


def test_a_terminator_inside_prose_ends_nothing(openai_server, tmp_path):
    answer = (f"Output one record per line, nothing else, then <|COMPLETE|> when done.\n"
              f"entity{D}Sarah Chen{D}PERSON{D}Leads the lab.\n"
              f"entity{D}Quantum Dynamics Lab{D}ORGANIZATION{D}A lab in Boston.\n<|COMPLETE|>\n")
    openai_server.set_responder(lambda request: Reply(content=answer))
    engine, result = _extract(_settings(openai_server, tmp_path))
    assert set(result.mentions["name"]) == {"Sarah Chen", "Quantum Dynamics Lab"}
    assert result.chunk_status["complete"].to_list() == [True]


def test_an_answer_cut_by_the_cap_is_cut_whatever_it_holds(openai_server, tmp_path):
    """finish_reason 'length' with a terminator in the text: not complete, so a gleaning pass follows."""
    whole = extraction_responder()
    openai_server.set_responder(lambda request: Reply.truncated(whole(request).content)
                                if openai_server.calls == 1 else Reply(content="<|COMPLETE|>"))
    engine, result = _extract(_settings(openai_server, tmp_path))
    assert result.chunk_status["complete"].to_list() == [False]
    assert openai_server.calls == 2, "the cut answer is gleaned after"
    assert "Sarah Chen" in set(result.mentions["name"])


def test_the_prompt_example_names_nobody_in_the_sample_corpus():
    corpus = "\n".join(p.read_text(errors="replace") for p in SAMPLE_CORPUS.rglob("*") if p.is_file())
    assert "Sarah Chen" in corpus  # the old example's person
    for entity in prompts._EXAMPLE.entities:
        assert entity.name not in corpus
        assert entity.name in prompts.system_prompt("tuple", max_attributes=30)


@pytest.mark.parametrize("fmt", ["tuple", "structured"])
def test_records_copying_the_example_are_dropped_and_counted_even_when_the_text_names_them(
        openai_server, tmp_path, fmt):
    person, org = prompts._EXAMPLE.entities
    text = f"{person.name} met Sarah Chen at {org.name}."
    copied = {"name": person.name, "type": "PERSON", "description": person.description}
    real = {"name": "Sarah Chen", "type": "PERSON", "description": "Met a colleague."}
    if fmt == "tuple":
        answer = "\n".join(D.join(["entity", e["name"], e["type"], e["description"]]) for e in (copied, real))
        answer += "\n<|COMPLETE|>"
    else:
        answer = {"entities": [copied, real]}
    openai_server.set_responder(lambda request: Reply(content=answer))
    engine, result = _extract(_settings(openai_server, tmp_path, fmt), {"c1": text})
    assert set(result.mentions["name"]) == {"Sarah Chen"}
    assert engine.example_copies_dropped == 1


def _looping(line: str):
    """A model that repeats `line` until the request's max_tokens, as a server does: cut, 'length'; streamed,
    a piece every 5 ms."""
    def respond(request: dict) -> Reply:
        cap = request["max_tokens"]
        ids = encoding(DEFAULT_ENCODING).encode_ordinary(line * (cap // max(1, count_tokens(line)) + 2))[:cap]
        return Reply(content=encoding(DEFAULT_ENCODING).decode(ids), finish_reason="length", completion_tokens=cap,
                     piece_delay_s=0.005)
    return respond


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("line", [f"entity{D}Sarah Chen{D}PERSON{D}Leads the lab.\n", "the lab the lab "])
def test_a_looping_model_is_stopped_early_or_at_the_chunks_budget_and_never_gleaned_after(openai_server, tmp_path,
                                                                                          line, stream):
    settings = _settings(openai_server, tmp_path, max_gleanings=2, gleaning="always", stream=stream)
    openai_server.set_responder(_looping(line))
    chunks = {"c1": TEXT, "c2": "Marcus Webb joined Northwind Robotics in Pittsburgh. " * 8}
    engine, result = _extract(settings, chunks)
    assert openai_server.calls == 2, "one request per chunk: no gleaning after a loop"
    used = engine.calls.sort("chunk_id")["completion_tokens"].to_list()
    budgets = [settings.completion_budget(count_tokens(chunks[c])) for c in sorted(chunks)]
    # the two chunks are asked at once: their requests arrive in either order
    assert sorted(r["max_tokens"] for r in openai_server.requests) == sorted(budgets)
    if stream:  # read as it comes: the stream is closed where the loop shows, far under the budget
        assert all(u < b / 3 for u, b in zip(used, budgets)), (used, budgets)
        # the server sees the stream closed at its next write, which may come after the engine's answer
        assert openai_server.wait_until_idle()
        assert all(r.client_left for r in openai_server.records)
        assert engine.calls["error"].str.contains("stream stopped").all()
    else:  # KG_LLM_STREAM=false: the whole answer, cut at the chunk's budget
        assert used == budgets and max(used) <= settings.max_completion_tokens // 3, "well under the 2,000-token cap"
    assert set(engine.calls["status"]) == {"degenerate"}
    if "entity" in line:  # what parsed before the loop is kept
        assert result.chunk_status["status"].to_list() == ["ok", "ok"]
        assert set(result.mentions["name"]) == {"Sarah Chen"}
    else:
        assert result.chunk_status["status"].to_list() == ["error", "error"]
        assert result.chunk_status["error"].str.contains("DegenerateAnswer").all()


def test_the_budget_follows_the_chunk_within_the_ceiling():
    settings = LLMSettings(completion_ratio=2.0, max_completion_tokens=1000)
    assert settings.completion_budget(10) == 256 + 20
    assert settings.completion_budget(300) == 856
    assert settings.completion_budget(600) == 1000


@pytest.mark.parametrize("fmt", ["tuple", "structured"])
def test_a_timed_out_request_is_not_resent_and_the_error_names_the_setting(openai_server, tmp_path, fmt):
    settings = _settings(openai_server, tmp_path, fmt, timeout_s=0.5, max_retries=3)
    openai_server.set_responder(lambda request: Reply.timeout(2))
    engine, result = _extract(settings)
    assert openai_server.calls == 1, "the server may still be computing the answer: no second request behind it"
    error = result.chunk_status["error"][0]
    assert "APITimeoutError" in error and "KG_LLM_TIMEOUT_S=0.5" in error and "1 attempt" in error, error
    assert engine.calls["status"].to_list() == ["error"]


def test_other_faults_are_still_retried(openai_server, tmp_path):
    settings = _settings(openai_server, tmp_path, max_retries=2)
    normal = extraction_responder()
    openai_server.set_responder(lambda request: Reply.server_error() if openai_server.calls == 1 else normal(request))
    engine, result = _extract(settings)
    assert openai_server.calls == 2 and result.chunk_status["status"].to_list() == ["ok"]


def test_kg_llm_check_reports_format_latency_speed_and_a_timeout(openai_server, kg_cli, tmp_path):
    from kg_assets.commands.llm import PROBE_NAMES

    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "test", "KG_LLM_TIMEOUT_S": "5"}
    openai_server.set_responder(extraction_responder(names={n: "OTHER" for n in PROBE_NAMES}))
    openai_server.latency_s = 0.2
    good = kg_cli("llm", "check", env=env, cwd=tmp_path)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "follows the format: 3 of 3 names" in good.stdout
    assert "completion tokens/s" in good.stdout and "KG_LLM_TIMEOUT_S=" in good.stdout
    assert openai_server.calls == 1 and not (tmp_path / "data").exists(), "one request, nothing written"

    openai_server.set_responder(lambda request: Reply(content=request["messages"][0]["content"]))  # an echo
    bad = kg_cli("llm", "check", env=env, cwd=tmp_path)
    assert bad.returncode == 1
    assert "does not follow the format: status degenerate" in bad.stdout


def test_bad_answers_are_counted_in_the_metadata_and_the_run_summary_and_redone_by_the_rerun(llm_project, capsys):
    import shutil

    shutil.rmtree(llm_project.inbox)
    llm_project.inbox.mkdir()
    (llm_project.inbox / "fine.md").write_text("# Lab news\n\nSarah Chen leads the Quantum Dynamics Lab in Boston.\n")
    (llm_project.inbox / "echo.md").write_text("# Hiring\n\nMarcus Webb joined Northwind Robotics in Pittsburgh.\n")
    (llm_project.inbox / "blank.md").write_text("# Visit\n\nLumen Analytics opened an office in Boston.\n")
    normal = extraction_responder()

    def respond(request):
        text = request["messages"][-1]["content"]
        if "Northwind" in text:
            return Reply(content=request["messages"][0]["content"])  # the prompt echoed
        return Reply(content="") if "Lumen" in text else normal(request)

    llm_project.server.set_responder(respond)
    result = llm_project.run_all()
    assert result.success
    (mat,) = [m for m in result.get_asset_materialization_events()
              if m.asset_key.to_user_string() == "entity_mentions"][:1]
    meta = {k: v.value for k, v in mat.materialization.metadata.items()}
    assert (meta["llm_empty_answers"], meta["llm_degenerate_answers"], meta["llm_errors"]) == (1, 1, 2)
    calls = dict(llm_project.sql("SELECT document_id, status FROM kg.llm_calls").iter_rows())
    assert calls == {"fine.md": "ok", "echo.md": "degenerate", "blank.md": "empty"}
    echo_error = llm_project.sql("SELECT error FROM kg.llm_calls WHERE document_id = 'echo.md'")["error"][0]
    assert echo_error.startswith("stream stopped: the answer repeats 3 lines of the prompt"), "not read to its end"
    spend = llm_project.warehouse.llm_spend(result.run_id)
    assert (spend["empty"], spend["degenerate"]) == (1, 1)  # what `kg run` prints as "LLM bad answers"
    run_report.print_bad_answers(llm_project.warehouse.bad_llm_answers(result.run_id))  # and under it, each chunk
    named = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0].split()[0] for line in named] == ["blank.md", "echo.md"], named
    assert ": empty: empty answer: blank" in named[0] and ": degenerate: stream stopped: the answer repeats 3 lines" in named[1]

    llm_project.server.set_responder(normal)
    before = llm_project.server.calls
    assert llm_project.run_all().success
    assert llm_project.server.calls - before == 2, "only the two bad answers are asked again"
    assert set(llm_project.sql("SELECT status FROM kg.chunk_extractions")["status"]) == {"ok"}


def test_progress_says_chunks_done_and_the_time_left():
    assert progress_message(40, 150, 80) == "extracted 40/150 chunks in 1m20s; about 3m40s left"
    assert progress_message(150, 150, 3700) == "extracted 150/150 chunks in 1h01m"
    assert progress_message(0, 3, 31) == "extracted 0/3 chunks in 31s"


def test_a_slow_server_gets_progress_reports_while_no_chunk_finishes(openai_server, tmp_path):
    settings = _settings(openai_server, tmp_path, concurrency=1)
    openai_server.latency_s = 0.6
    messages: list[str] = []
    engine = LLMExtractor(settings, progress=messages.append, progress_every_s=0.25)
    engine.extract(engine_chunks({"c1": TEXT, "c2": "Marcus Webb joined Northwind Robotics."}))
    assert "extracted 0/2 chunks" in messages[0], "reported before the first chunk finished"
    assert any(m.startswith("extracted 1/2 chunks") and "left" in m for m in messages), "with the time left"
    assert messages[-1].startswith("extracted 2/2 chunks")


def test_a_stream_that_ends_without_usage_is_counted_here(openai_server, tmp_path):
    # llama-cpp-python's server ignores stream_options.include_usage: the call log counted 0 tokens for every call
    answer = f"entity{D}Sarah Chen{D}PERSON{D}Leads the lab.\n<|COMPLETE|>"
    openai_server.set_responder(lambda request: Reply(content=answer, stream_usage=False))
    engine, result = _extract(_settings(openai_server, tmp_path, max_gleanings=0))
    assert openai_server.records[0].pieces_streamed > 0  # it was streamed
    call = engine.calls.row(0, named=True)
    assert call["status"] == "ok" and set(result.mentions["name"]) == {"Sarah Chen"}
    assert call["completion_tokens"] == count_tokens(answer)
    # the prompt, counted as a server would count it (the test server's own count, per message)
    server_count = prompt_tokens_of(openai_server.records[0].body)
    assert abs(call["prompt_tokens"] - server_count) <= 0.05 * server_count, (call["prompt_tokens"], server_count)


def test_kg_llm_check_without_an_llm_says_how_to_configure_one(kg_cli, tmp_path):
    result = kg_cli("llm", "check", cwd=tmp_path)
    assert result.returncode == 1
    assert "no LLM is configured (set OPENAI_BASE_URL or OPENAI_API_KEY, see docs/llm.md)" in result.stdout


def test_the_run_report_lists_the_first_failures_and_says_how_to_see_the_rest(capsys):
    import polars as pl

    failed = pl.DataFrame({"document_id": [f"d{i % 3}.md" for i in range(25)], "chunk_index": list(range(25)),
                           "status": ["error"] * 25, "error": ["APITimeoutError: " + "x" * 200] * 25})
    run_report.print_failed_chunks(failed)
    out = capsys.readouterr().out
    assert "failed chunks            25  (in 3 documents)" in out
    assert out.count(" chunk ") == run_report.SHOWN_CHUNKS and "… 5 more: kg sql" in out
    assert "x" * 200 not in out  # each error shortened; the whole one is in kg.chunk_extractions
    bad = pl.DataFrame({"document_id": ["d.md"] * 21, "item": [f"chunk {i}" for i in range(21)],
                        "status": ["empty"] * 21, "error": [None] * 21})
    run_report.print_bad_answers(bad)
    assert "… 1 more: kg sql \"SELECT * FROM kg.llm_calls WHERE status IN ('empty', 'degenerate')\"" in capsys.readouterr().out


def test_a_failed_dbt_test_is_reported_with_what_its_metadata_says(capsys):
    import dagster as dg

    check = dg.AssetCheckResult(asset_key=dg.AssetKey(["marts", "entity_profile"]), check_name="unique_entity_id",
                                passed=False, metadata={"failed_row_count": 2})
    run_report.print_checks([check, dg.AssetCheckResult(asset_key=dg.AssetKey("documents"), check_name="ok", passed=True)])
    out = capsys.readouterr().out
    assert "checks           1/2 passed" in out
    assert "FAILED marts/entity_profile:unique_entity_id: failed_row_count 2" in out

"""Every fault the local test server can inject, in both answer formats, through the real client.

A fault on one document's chunks fails those chunks only: they get an error row, every call gets a status,
the run goes on, and the rerun asks the model again for exactly those chunks. The whole matrix runs on the
extraction engine; one fault per format also runs through Dagster, where the rows land in the warehouse.
"""

import shutil

import dagster as dg
import pytest

from kg_assets.extractors.llm.engine import LLMExtractor
from kg_assets.settings import LLMSettings
from kg_assets.testing.openai_server import FAULTS
from kg_assets.testing.scripted_llm import chunk_text, extraction_responder

from kg_assets_tests.conftest import engine_chunks

DOCUMENTS = {
    "fine.md": "# Lab news\n\nSarah Chen leads the Quantum Dynamics Lab in Boston.\n",
    "faulty.md": "# Hiring\n\nMarcus Webb joined Northwind Robotics in Pittsburgh.\n",
}
EXTRACTION = [dg.AssetKey(k) for k in ("documents", "chunks", "entity_mentions", "local_relations",
                                        "attribute_observations", "chunk_extractions", "llm_calls")]

# fault -> what the failed chunk's error names, in each format; the faults themselves are the test server's
EXPECTED_ERRORS = {
    "429 with Retry-After": {"tuple": "RateLimitError", "structured": "RateLimitError"},
    "500": {"tuple": "InternalServerError", "structured": "InternalServerError"},
    "timeout": {"tuple": "APITimeoutError", "structured": "APITimeoutError"},
    "dropped connection": {"tuple": "APIConnectionError", "structured": "APIConnectionError"},
    "truncated": {"tuple": "truncated", "structured": "ParseFailure"},
    "malformed": {"tuple": "ParseFailure", "structured": "ParseFailure"},
    "empty": {"tuple": "EmptyAnswer", "structured": "ParseFailure"},
    "wrong schema": {"tuple": "ParseFailure", "structured": "ParseFailure"},
}


def test_the_matrix_covers_every_fault_the_server_can_inject():
    assert set(EXPECTED_ERRORS) == set(FAULTS)


def _call_status(error: str) -> str:
    if "EmptyAnswer" in error:
        return "empty"
    return "parse_error" if "ParseFailure" in error or "truncated" in error else "error"


@pytest.mark.parametrize("fault", list(EXPECTED_ERRORS))
@pytest.mark.parametrize("fmt", ["tuple", "structured"])
def test_the_engine_fails_only_the_faulty_chunk_and_asks_again_only_for_it(openai_server, tmp_path, fmt, fault):
    settings = LLMSettings(base_url=openai_server.base_url, api_key="test", cache_path=str(tmp_path / "cache.sqlite"),
                           output_format=fmt, timeout_s=0.5, max_retries=1)
    chunks = engine_chunks({"c_fine": DOCUMENTS["fine.md"], "c_faulty": DOCUMENTS["faulty.md"]},
                           documents={"c_fine": "fine.md", "c_faulty": "faulty.md"})
    make_fault, expected = FAULTS[fault], EXPECTED_ERRORS[fault]
    normal = extraction_responder()
    openai_server.set_responder(lambda r: make_fault() if "Northwind" in chunk_text(r) else normal(r))

    engine = LLMExtractor(settings)
    result = engine.extract(chunks)
    status = dict(result.chunk_status.select("document_id", "status").iter_rows())
    assert status == {"fine.md": "ok", "faulty.md": "error"}
    error = result.chunk_status.filter(status="error")["error"][0]
    assert expected[fmt] in error, error
    calls = engine.calls
    assert calls["status"].null_count() == 0, "every call has a status"
    assert dict(calls.select("document_id", "status").iter_rows()) == {"fine.md": "ok", "faulty.md": _call_status(error)}
    assert set(result.mentions["name"]) == {"Sarah Chen", "Quantum Dynamics Lab", "Boston"}

    openai_server.set_responder(normal)
    before = openai_server.calls
    again = LLMExtractor(settings).extract(chunks)
    assert openai_server.calls - before == 1, "only the failed chunk is asked again; the other comes from the cache"
    assert set(again.chunk_status["status"]) == {"ok"}
    assert {"Marcus Webb", "Northwind Robotics"} <= set(again.mentions["name"])


@pytest.fixture
def small_llm_project(llm_project):
    shutil.rmtree(llm_project.inbox)
    llm_project.inbox.mkdir()
    for name, text in DOCUMENTS.items():
        (llm_project.inbox / name).write_text(text)
    return llm_project


def _run(project):
    return project.run_plan(project.plan(), asset_selection=EXTRACTION)


@pytest.mark.parametrize(("fmt", "fault"), [("tuple", "500"), ("structured", "malformed")])
def test_a_fault_fails_only_its_chunks_and_the_rerun_redoes_only_them(small_llm_project, fmt, fault):
    project = small_llm_project.configure(output_format=fmt, timeout_s=0.5, max_retries=1)
    make_fault, expected = FAULTS[fault], EXPECTED_ERRORS[fault]
    normal = extraction_responder()
    project.server.set_responder(lambda r: make_fault() if "Northwind" in chunk_text(r) else normal(r))

    result = _run(project)
    assert result.success and result.is_node_success("extraction"), "one failed chunk does not fail the step"
    status = dict(project.sql("SELECT document_id, status FROM kg.chunk_extractions").iter_rows())
    assert status == {"fine.md": "ok", "faulty.md": "error"}
    error = project.sql("SELECT error FROM kg.chunk_extractions WHERE status = 'error'")["error"][0]
    assert expected[fmt] in error, error
    calls = project.sql("SELECT document_id, status FROM kg.llm_calls")
    assert calls["status"].null_count() == 0, "every call has a status"
    assert dict(calls.iter_rows()) == {"fine.md": "ok", "faulty.md": _call_status(error)}
    names = set(project.sql("SELECT name FROM kg.entity_mentions")["name"])
    assert names == {"Sarah Chen", "Quantum Dynamics Lab", "Boston"}

    project.server.set_responder(normal)
    before = project.server.calls
    assert _run(project).success
    assert project.server.calls - before == 1, "only the failed chunk is asked again"
    assert set(project.sql("SELECT status FROM kg.chunk_extractions")["status"]) == {"ok"}
    assert {"Marcus Webb", "Northwind Robotics"} <= set(project.sql("SELECT name FROM kg.entity_mentions")["name"])

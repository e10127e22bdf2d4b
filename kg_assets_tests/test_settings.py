"""One typed Settings model: environment -> settings, errors naming the variable, the docs' configuration table,
resources built from it, the API key kept out of run config, and an inbox that run config cannot move."""

import json
import re
from pathlib import Path

import dagster as dg
import pytest
from pydantic_settings import SettingsError

from kg_assets.definitions import build_definitions
from kg_assets.defs.partitions import range_tags
from kg_assets.settings import Settings, env_variables
from kg_assets_tests.conftest import project_settings

CONFIGURATION = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"


@pytest.fixture
def clean_env(monkeypatch):
    for name in env_variables():
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_every_variable_reaches_its_typed_field(clean_env, tmp_path):
    env = {
        "KG_INBOX": str(tmp_path / "in"), "KG_DUCKDB_PATH": str(tmp_path / "w.duckdb"), "KG_DUCKDB_LOCK_TIMEOUT_S": "7.5",
        "KG_CHUNK_TOKENS": "300", "KG_EXTRACTOR": "llm", "KG_LLM_FORMAT": "structured", "KG_LLM_RPM": "",
        "KG_ENTITY_TYPES": "person, protein,DISEASE", "KG_MAX_EMPTY_CHUNK_SHARE": "0.9", "OPENAI_BASE_URL": "http://h/v1",
    }
    for name, value in env.items():
        clean_env.setenv(name, value)
    settings = Settings.from_env()
    assert settings.ingest.inbox_dir == str(tmp_path / "in") and settings.ingest.chunk_tokens == 300
    assert settings.warehouse.db_path == str(tmp_path / "w.duckdb") and settings.warehouse.lock_timeout_s == 7.5
    assert settings.extractor.engine == "llm" and settings.extractor.output_format == "structured"
    assert settings.extractor.requests_per_minute is None, "an empty variable keeps the default"
    assert settings.extractor.entity_types == ["PERSON", "PROTEIN", "DISEASE"]
    assert settings.extractor.cache_path == str(tmp_path / "llm_cache.sqlite"), "the cache sits beside the warehouse"
    assert settings.checks.max_empty_chunk_share == 0.9 and settings.checks.max_failed_chunk_share == 0.2
    # command-line options win over the environment
    moved = Settings.from_env({"KG_DUCKDB_PATH": str(tmp_path / "other" / "w.duckdb")})
    assert moved.extractor.cache_path == str(tmp_path / "other" / "llm_cache.sqlite")
    assert moved.extractor.output_format == "structured"


@pytest.mark.parametrize("name, value, expected", [
    ("KG_EXTRACTOR", "bogus", "expected auto, heuristic, llm or module:attr"),
    ("KG_LLM_FORMAT", "xml", "'tuple' or 'structured'"),
    ("KG_CHUNK_TOKENS", "many", "integer"),
])
def test_a_bad_value_fails_when_definitions_load_and_names_its_variable(clean_env, name, value, expected):
    from kg_assets.definitions import defs

    clean_env.setenv(name, value)
    for load in (Settings.from_env, defs):
        with pytest.raises(SettingsError) as error:
            load()
        assert f"{name}={value!r}" in str(error.value) and expected in str(error.value)


def test_the_configuration_table_lists_exactly_the_variables_the_settings_read():
    text = CONFIGURATION.read_text()
    table = text[text.index("## Environment variables"):text.index("## One typed model")]
    documented = set(re.findall(r"`((?:KG|OPENAI|FACT)_[A-Z0-9_]+)`", table))
    assert documented == set(env_variables())


def test_resources_are_the_settings_models_and_the_engine_takes_the_same_object(tmp_path):
    settings = project_settings(tmp_path / "in", tmp_path / "w.duckdb", base_url="http://127.0.0.1:9/v1", concurrency=3)
    resources = build_definitions(settings).resources
    extractor = resources["extractor"]
    assert extractor.concurrency == 3 and extractor.cache_path == str(tmp_path / "llm_cache.sqlite")
    engine = extractor.build_extractor()
    assert engine.settings is extractor, "no field is copied from the resource into another settings object"
    assert resources["check_thresholds"].max_failed_chunk_share == 0.2
    assert resources["warehouse"].get().path == str(tmp_path / "w.duckdb")


def test_the_api_key_reaches_the_server_but_never_run_config_or_the_instance(llm_project, clean_env, tmp_path):
    secret = "sk-test-4f1c9e-do-not-store"
    clean_env.setenv("OPENAI_API_KEY", secret)
    clean_env.setenv("OPENAI_BASE_URL", llm_project.server.base_url)
    clean_env.setenv("KG_INBOX", str(llm_project.inbox))
    clean_env.setenv("KG_DUCKDB_PATH", str(llm_project.warehouse.path))
    clean_env.setenv("KG_SUMMARY_MIN_FRAGMENTS", "0")
    project = llm_project
    project.defs = build_definitions(Settings.from_env())
    # What the UI shows as the resource's configured values: the variable's name, not its value.
    shown = project.defs.resources["extractor"].get_resource_definition().config_schema.default_value_as_json_str
    assert secret not in shown and json.loads(shown)["api_key"] == {"env": "OPENAI_API_KEY"}
    (tmp_path / "instance").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "instance")) as instance:
        project.instance = instance
        result = project.run_all()
        assert result.success
        assert {r.headers.get("Authorization") for r in project.server.records} == {f"Bearer {secret}"}
        run = instance.get_run_by_id(result.run_id)
        assert secret not in repr(run.run_config) and secret not in repr(instance.all_logs(result.run_id))
    # neither the instance (run and event storage, job snapshots) nor the warehouse, cache or logs
    stored = [p for p in tmp_path.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    assert stored == []


def test_run_config_cannot_move_the_inbox(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text("Nobody should read this file.")
    days = project.register_days()
    job = project.defs.resolve_job_def("kg_pipeline")
    for config in ({"inbox_dir": str(elsewhere)}, {"chunk_tokens": 5}):
        with pytest.raises(dg.DagsterInvalidConfigError, match="unexpected config entry"):
            job.execute_in_process(instance=project.instance, tags=range_tags(days[0], days[-1]),
                                   run_config={"resources": {"settings": {"config": config}}},
                                   asset_selection=[dg.AssetKey("documents")])
    assert not project.warehouse.exists(), "nothing ran"
    # Without that config the same run reads its key inside the configured inbox only.
    assert project.execute(documents=["secret.txt"], asset_selection=[dg.AssetKey("documents")]).success
    row = project.sql("SELECT status, text FROM kg.documents WHERE document_id = 'secret.txt'").row(0, named=True)
    assert row["status"] == "error" and row["text"] is None

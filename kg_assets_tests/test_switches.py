"""Seed 002's switches: KG_ENTITY_EXTRACTION_ENABLED (entityExtractionEnabled) and KG_ENTITY_SEARCH_ENABLED
(entitySearchEnabled). Off: the pipeline still ingests but extracts no entity; `kg search` refuses clearly."""

import dagster as dg
import pytest

from kg_assets.definitions import build_definitions
from kg_assets.query import EntitySearchOff, KnowledgeGraph
from kg_assets.settings import Settings

from kg_assets_tests.conftest import project_settings


def test_switches_come_from_the_environment():
    settings = Settings.from_env({"KG_ENTITY_EXTRACTION_ENABLED": "false", "KG_ENTITY_SEARCH_ENABLED": "false"})
    assert settings.extractor.entity_extraction_enabled is False and settings.search.entity_search_enabled is False
    assert Settings().extractor.entity_extraction_enabled and Settings().search.entity_search_enabled


def test_with_entity_extraction_off_the_pipeline_ingests_but_extracts_nothing(project):
    project.defs = build_definitions(project_settings(project.inbox, project.warehouse.path,
                                                      entity_extraction_enabled=False))
    result = project.run_all()
    assert result.success
    counts = project.sql("""SELECT (SELECT count(*) FROM kg.documents) AS documents, (SELECT count(*) FROM kg.chunks) AS chunks,
        (SELECT count(*) FROM kg.messages) AS messages, (SELECT count(*) FROM kg.entity_mentions) AS mentions,
        (SELECT count(*) FROM kg.local_relations) AS relations, (SELECT count(*) FROM kg.chunk_extractions) AS extracted,
        (SELECT count(*) FROM kg.entities) AS entities""").row(0, named=True)
    assert counts["documents"] > 0 and counts["chunks"] > 0 and counts["messages"] > 0, counts
    assert counts["mentions"] == counts["relations"] == counts["extracted"] == counts["entities"] == 0, counts
    meta = project.instance.get_latest_materialization_event(dg.AssetKey("entity_mentions")).asset_materialization.metadata
    assert meta["extractor"].value == "off" and "KG_ENTITY_EXTRACTION_ENABLED=false" in meta["engine"].value
    # turned back on, the next run extracts every chunk
    project.defs = build_definitions(project_settings(project.inbox, project.warehouse.path))
    assert project.run_all().success
    assert project.sql("SELECT count(*) AS n FROM kg.chunk_extractions")["n"][0] == counts["chunks"]


def test_with_entity_extraction_off_earlier_extractions_stay(built):
    before = built.sql("SELECT * FROM kg.entity_mentions ORDER BY mention_id")
    built.defs = build_definitions(project_settings(built.inbox, built.warehouse.path, entity_extraction_enabled=False))
    (built.inbox / "notes" / "extra.md").write_text("# Extra\n\nAda Lovelace met Charles Babbage in London.")
    assert built.run_all().success
    assert built.sql("SELECT * FROM kg.entity_mentions ORDER BY mention_id").equals(before)
    assert built.sql("SELECT count(*) AS n FROM kg.chunks WHERE document_id = 'notes/extra.md'")["n"][0] == 1


def test_entity_search_off_refuses_in_the_library_and_in_kg_search(built, kg_cli):
    with pytest.raises(EntitySearchOff, match="KG_ENTITY_SEARCH_ENABLED=false"):
        KnowledgeGraph(built.warehouse, entity_search=False).search("entity:Sarah")
    on = kg_cli("search", "entity:Sarah", "--db", built.warehouse.path)
    assert on.returncode == 0 and "Sarah Chen" in on.stdout
    off = kg_cli("search", "entity:Sarah", "--db", built.warehouse.path, env={"KG_ENTITY_SEARCH_ENABLED": "false"})
    assert off.returncode == 1 and off.stdout == ""
    assert off.stderr.strip() == ("kg search: entity search is off (KG_ENTITY_SEARCH_ENABLED=false): set it to true "
                                  "to search entities by entity:NAME, attr:KEY=VALUE or a bare name")

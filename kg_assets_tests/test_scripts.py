"""Names in every script (issue 20, item 6): normalization and ids keep the letters of any script with Latin
unchanged, the offline extractor reads capitalised Cyrillic names, an LLM's Chinese and Russian answers
become searchable entities (seed 002's `entity:阿尔托`, `attr:国籍=芬兰`), and a document in which nothing
could be extracted is a visible warning."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest

from kg_assets.commands import run_report
from kg_assets.core.extraction.sanitize import attr_key
from kg_assets.core.normalize import entity_id, normalize_name, normalize_name_expr
from kg_assets.extractors.heuristic import HeuristicExtractor
from kg_assets.query.matching import Query, normalize_key, parse_query
from kg_assets.testing.openai_server import Reply
from kg_assets.testing.scripted_llm import chunk_text, extraction_responder, is_gleaning, records, to_tuples
from kg_assets_tests.conftest import engine_chunks

RUSSIAN = "Владимир Иванов работает в компании Яндекс в Москве."
CHINESE = "阿尔托是一位建筑师。阿尔托的国籍是芬兰。"


@pytest.mark.parametrize(("name", "key"), [
    ("Владимир Иванов", "ВЛАДИМИР_ИВАНОВ"),  # Cyrillic: upper-cased, й kept (not folded to и)
    ("Андрей Йорк", "АНДРЕЙ_ЙОРК"),
    ("Αθήνα", "ΑΘΗΝΑ"),  # Greek: accents folded, so the capitals written without them meet
    ("ΑΘΗΝΑ", "ΑΘΗΝΑ"),
    ("阿尔托", "阿尔托"),  # Chinese: no case, kept as it is
    ("ＡＢＣ株式会社", "ABC株式会社"),  # NFKC: fullwidth Latin is plain Latin
    ("محمد بن سلمان", "محمد_بن_سلمان"),  # Arabic
    ("हिन्दी", "हिन्दी"),  # Devanagari: the virama and vowel sign (marks) stay
    ("the Яндекс", "ЯНДЕКС"),
])
def test_names_of_every_script_keep_their_letters(name, key):
    assert normalize_name(name) == key
    assert pl.select(normalize_name_expr(pl.lit(name))).item() == key


@pytest.mark.parametrize(("name", "key", "entity"), [
    # keys and ids as on main before this change: Latin is unchanged
    ("Sarah Chen", "SARAH_CHEN", "entity_2058ecdf788241"),
    ("the Company", "COMPANY", None),
    ("John's team", "JOHN_TEAM", None),
    ("Zoë", "ZOE", None),
    ("Søren Kierkegaard", "S_REN_KIERKEGAARD", None),  # a Latin letter without a plain form stays a separator
    ("Yandex (Яндекс)", "YANDEX_ЯНДЕКС", None),
])
def test_latin_names_are_unchanged(name, key, entity):
    assert normalize_name(name) == key
    assert pl.select(normalize_name_expr(pl.lit(name))).item() == key
    if entity:
        assert entity_id("PERSON", key) == entity


def test_ids_and_attribute_keys_of_other_scripts_are_distinct_and_searchable():
    ids = {entity_id("PERSON", normalize_name(n)) for n in ("Владимир Иванов", "Иван Петров", "阿尔托", "Αλβάρ Άαλτο")}
    assert len(ids) == 4 and entity_id("PERSON", "") not in ids
    assert attr_key("国籍") == normalize_key("国籍") == "国籍"
    assert attr_key("Место работы") == normalize_key("Место работы") == "место_работы"
    assert attr_key("HQ-location") == normalize_key("HQ-location") == "hq_location"
    assert parse_query("attr:国籍=芬兰") == Query("attr", key="国籍", value="芬兰")
    assert parse_query("entity:阿尔托") == Query("entity", text="阿尔托")


def test_offline_extractor_finds_capitalised_cyrillic_and_greek_names():
    result = HeuristicExtractor().extract(engine_chunks({"c1": RUSSIAN, "c2": "Ο Γιώργος ζει στην Αθήνα."}))
    names = set(result.mentions["name"])
    assert {"Владимир Иванов", "Яндекс", "Москве", "Αθήνα"} <= names
    assert result.mentions.filter(pl.col("normalized_name") == "").height == 0
    assert (result.chunk_status["status"] == "ok").all()


def test_a_document_with_text_but_no_entity_is_a_warning(project, capsys):
    for path in list(project.inbox.iterdir()):
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    (project.inbox / "ru.txt").write_text(RUSSIAN + "\n", encoding="utf-8")
    (project.inbox / "zh.txt").write_text(CHINESE + "\n", encoding="utf-8")  # no capitals: the heuristic finds nothing
    result = project.run_all()
    assert result.success
    mentions = project.sql("SELECT DISTINCT document_id, name FROM kg.entity_mentions")
    assert {"Владимир Иванов", "Яндекс", "Москве"} <= set(mentions["name"])
    assert project.warehouse.documents_without_entities()["document_id"].to_list() == ["zh.txt"]
    (mat,) = [m for m in result.get_asset_materialization_events() if m.asset_key.to_user_string() == "entity_mentions"]
    assert mat.materialization.metadata["documents_without_entities"].value == 1
    assert mat.materialization.metadata["no_entity_documents"].value == ["zh.txt"]
    capsys.readouterr()
    assert run_report.print_documents_without_entities(project.warehouse) == 1
    out = capsys.readouterr().out
    assert "no entity found           1" in out and "WARNING" in out and "zh.txt (1 chunk)" in out


NAMES = {"阿尔托": "PERSON", "芬兰": "LOCATION", "Владимир Иванов": "PERSON", "Яндекс": "ORGANIZATION",
         "Москве": "LOCATION"}
ATTRIBUTES = [{"entity": "阿尔托", "key": "国籍", "value": "芬兰", "confidence": 0.95},
              {"entity": "Владимир Иванов", "key": "Место работы", "value": "Яндекс", "confidence": 0.9}]


def scripted_answers(request: dict) -> Reply:
    """The scripted model, answering in the scripts of the text: names as written, keys in the text's language."""
    text = chunk_text(request)
    if is_gleaning(request) or not text:
        return extraction_responder(names=NAMES)(request)
    entities, relations, _ = records(text, NAMES)
    attributes = [a for a in ATTRIBUTES if a["entity"] in text]
    if request.get("tools"):
        return Reply(content=json.dumps({"entities": entities, "relations": relations, "attributes": attributes}))
    return Reply(content=to_tuples(entities, relations, attributes))


def llm_warehouse(llm_project, texts: dict[str, str]):
    project = llm_project
    for path in list(project.inbox.iterdir()):
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    for name, text in texts.items():
        (project.inbox / name).write_text(text + "\n", encoding="utf-8")
    project.server.set_responder(scripted_answers)
    assert project.run_all().success
    return project


def search(kg_cli, project, *query: str) -> list[dict]:
    found = kg_cli("search", *query, "--db", project.warehouse.path, "--json")
    assert found.returncode == 0, found.stderr
    return json.loads(found.stdout)


def names(hits) -> list[str]:
    hits = hits["hits"] if isinstance(hits, dict) else hits
    return [hit["name"] for hit in hits]


def test_llm_answers_in_chinese_and_russian_become_searchable_entities(llm_project, kg_cli):
    project = llm_warehouse(llm_project, {"zh.txt": CHINESE, "ru.txt": RUSSIAN})
    entities = dict(project.sql("SELECT name, entity_type FROM kg.entities").iter_rows())
    assert entities == NAMES
    keys = set(project.sql("SELECT DISTINCT attr_key FROM kg.attribute_observations")["attr_key"])
    assert keys == {"国籍", "место_работы"}
    assert names(search(kg_cli, project, "entity:Владимир Иванов"))[:1] == ["Владимир Иванов"]
    assert names(search(kg_cli, project, "entity:владимир"))[:1] == ["Владимир Иванов"]  # case folded
    assert names(search(kg_cli, project, "attr:Место работы=Яндекс")) == ["Владимир Иванов"]
    assert names(search(kg_cli, project, "entity:芬兰"))[:1] == ["芬兰"]


def test_seed_002_examples_entity_and_attr_prefixes(llm_project, kg_cli):
    project = llm_warehouse(llm_project, {"aalto.txt": CHINESE})
    assert names(search(kg_cli, project, "entity:阿尔托"))[:1] == ["阿尔托"]
    assert names(search(kg_cli, project, "attr:国籍=芬兰")) == ["阿尔托"]
    assert names(search(kg_cli, project, "attr:国籍")) == ["阿尔托"]

"""User facts as Dagster assets, on real DuckDB files and a real Dagster instance: messages, learned facts,
chat users, supersession after a chat edit, retraction, manual facts and the `kg facts` commands."""

import json
from datetime import UTC, datetime

import polars as pl

from kg_assets.cli import main
from kg_assets.definitions import build_definitions
from kg_assets.settings import FactSettings
from kg_assets_tests.conftest import project_settings

CHAT = "chat/support_chat.jsonl"


def every_message(project, **extractor):
    """The project with FACT_EXTRACTION_RATE=1.0 (the sample chat is short; the default 0.3 samples 3 messages)."""
    project.defs = build_definitions(project_settings(project.inbox, project.warehouse.path,
                                                      facts=FactSettings(rate=1.0), **extractor))
    return project


def append_messages(project, path: str, *messages: dict) -> None:
    target = project.inbox / path
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf-8") as handle:
        for message in messages:
            handle.write(json.dumps(message) + "\n")


def active_facts(project, user_id: str) -> pl.DataFrame:
    return project.sql("SELECT * FROM kg.user_facts WHERE user_id = $u AND is_active ORDER BY valid_from, fact_id", u=user_id)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def test_the_sample_chat_becomes_messages_facts_and_linked_users(project):
    every_message(project)
    assert project.run_all().success
    messages = project.sql("SELECT * FROM kg.messages WHERE valid_until IS NULL ORDER BY message_id")
    assert messages.height == 26 and messages["document_id"].unique().to_list() == [CHAT]
    m17 = messages.row(16, named=True)
    assert (m17["message_id"], m17["user_id"], m17["sent_at"]) == ("m-0017", "u-lena", at("2025-10-21T07:58:44Z"))
    assert m17["content"].startswith("I moved to Lisbon in August")

    lena = active_facts(project, "u-lena")
    lisbon = lena.filter(pl.col("content") == "moved to Lisbon in August").row(0, named=True)
    # The fact carries its message's time, not the file's first timestamp (2025-10-20 08:02).
    assert lisbon["valid_from"] == at("2025-10-21T07:58:44Z")
    assert (lisbon["extracted_from_message_id"], lisbon["fact_key"], lisbon["source"]) == (
        "m-0017", "location/residence", "auto_extraction")
    assert lisbon["extraction_context"] == m17["content"][:200]
    assert "runs support for Qubitline at the Quantum Dynamics Lab" in lena["content"].to_list()
    kenji = active_facts(project, "u-kenji")
    munich = kenji.filter(pl.col("content") == "is moving to Munich in January").row(0, named=True)
    assert (munich["temporal"], munich["fact_key"]) == ("future", "location/next_residence")

    users = project.sql("SELECT * FROM kg.chat_users ORDER BY user_id")
    assert users["user_id"].to_list() == ["u-ana", "u-kenji", "u-lena"]
    lena_user = users.row(2, named=True)
    assert (lena_user["name"], lena_user["name_source"], lena_user["message_count"]) == ("Lena Ortiz", "self_introduction", 12)
    entity = project.sql("SELECT name, entity_type FROM kg.entities WHERE entity_id = $e AND valid_until IS NULL",
                         e=lena_user["entity_id"])
    assert entity.rows() == [("Lena Ortiz", "PERSON")]
    assert users.row(0, named=True)["name"] == "Ana Ribeiro"  # "Hi, I'm Ana Ribeiro, a PhD student at ..."
    outcomes = project.sql("SELECT outcome, count(*) AS n FROM kg.fact_extractions GROUP BY 1")
    assert outcomes.rows() == [("ok", 26)]


def test_the_default_rate_samples_the_same_messages_on_every_run(project):
    assert project.run_all().success
    first = project.sql("SELECT message_id, outcome FROM kg.fact_extractions ORDER BY message_id")
    sampled = first.filter(pl.col("outcome") != "not_sampled")["message_id"].to_list()
    assert sampled == ["m-0006", "m-0015", "m-0025"]  # sha256 of the id below 0.3
    assert project.run_all().success
    assert project.sql("SELECT message_id, outcome FROM kg.fact_extractions ORDER BY message_id").equals(first)


def test_fact_extraction_can_be_switched_off(project):
    project.defs = build_definitions(project_settings(project.inbox, project.warehouse.path,
                                                      facts=FactSettings(enabled=False)))
    assert project.run_all().success
    assert project.sql("SELECT DISTINCT outcome FROM kg.fact_extractions").rows() == [("disabled",)]
    assert project.sql("SELECT count(*) FROM kg.user_facts").item() == 0
    assert project.sql("SELECT count(*) FROM kg.messages").item() == 26


def test_a_display_name_links_the_speaker_to_the_person_entity(project):
    append_messages(project, "chat/lab_channel.jsonl",
                    {"user_id": "u-sarah", "display_name": "Sarah Chen", "message_id": "s-1",
                     "timestamp": "2025-10-22T10:00:00Z", "content": "Morning all, the calibration archive is back online."})
    every_message(project)
    assert project.run_all().success
    user = project.sql("SELECT * FROM kg.chat_users WHERE user_id = 'u-sarah'").row(0, named=True)
    assert (user["name"], user["name_source"], user["entity_name"]) == ("Sarah Chen", "display_name", "Sarah Chen")
    text = project.sql("SELECT text FROM kg.documents WHERE document_id = 'chat/lab_channel.jsonl' AND valid_until IS NULL").item()
    assert text.startswith("[2025-10-22T10:00:00Z] Sarah Chen (u-sarah): Morning all")


def test_a_chat_edit_that_contradicts_a_fact_supersedes_it_and_an_edited_message_is_versioned(project, capsys):
    every_message(project)
    assert project.run_all().success
    lisbon = active_facts(project, "u-lena").filter(pl.col("content") == "moved to Lisbon in August").row(0, named=True)

    append_messages(project, CHAT, {"user_id": "u-lena", "message_id": "m-0027", "timestamp": "2025-11-03T09:00:00Z",
                                    "content": "I moved to Madrid last week for the new office."})
    assert project.run_all().success
    facts = project.sql("SELECT * FROM kg.user_facts WHERE user_id = 'u-lena' AND fact_key = 'location/residence' "
                        "ORDER BY valid_from")
    old, new = facts.rows(named=True)
    assert (old["fact_id"], old["is_active"], old["valid_until"], old["superseded_by"]) == (
        lisbon["fact_id"], False, at("2025-11-03T09:00:00Z"), new["fact_id"])
    assert (new["content"], new["is_active"], new["supersedes"]) == ("moved to Madrid for the new office", True, lisbon["fact_id"])
    # What was learned before is reused, not learned again.
    assert old["learned_at"] == lisbon["learned_at"]
    assert project.sql("SELECT count(*) FROM kg.messages WHERE valid_until IS NOT NULL").item() == 0

    lines = (project.inbox / CHAT).read_text().splitlines()
    lines[-1] = lines[-1].replace("Madrid", "Valencia")
    (project.inbox / CHAT).write_text("\n".join(lines) + "\n")
    assert project.run_all().success
    versions = project.sql("SELECT content, valid_until IS NULL AS current FROM kg.messages WHERE message_id = 'm-0027' "
                           "ORDER BY valid_from")
    assert versions["current"].to_list() == [False, True] and "Valencia" in versions["content"][1]
    residence = project.sql("SELECT content FROM kg.user_facts WHERE user_id = 'u-lena' AND fact_key = 'location/residence' "
                            "AND is_active").item()
    assert residence == "moved to Valencia for the new office"
    assert project.sql("SELECT count(*) FROM kg.user_facts WHERE contains(content, 'Madrid')").item() == 0

    capsys.readouterr()
    assert main(["facts", "list", "u-lena", "--history", "--db", str(project.warehouse.path)]) == 0
    listed = capsys.readouterr().out
    assert listed.startswith("u-lena (Lena Ortiz, person entity entity_")
    assert "moved to Valencia for the new office" in listed
    history = listed.split("history:")[1]
    assert "moved to Lisbon in August" in history and "until 2025-11-03" in history
    assert main(["facts", "context", "u-lena", "--max-chars", "120", "--db", str(project.warehouse.path)]) == 0
    block = capsys.readouterr().out.rstrip("\n")
    assert block.startswith("User: Lena Ortiz\nKnown facts:\n- ") and len(block) <= 120
    assert "moved to Lisbon" not in block  # superseded facts are history, not context


def test_a_deleted_chat_retracts_its_messages_and_facts(project):
    every_message(project)
    assert project.run_all().success
    assert main(["facts", "remember", "u-lena", "I speak Portuguese", "--db", str(project.warehouse.path)]) == 0
    (project.inbox / CHAT).unlink()
    plan = project.plan()  # the planner sees the deletion; the documents step retires the chat
    assert plan.deleted == (CHAT,), plan
    assert project.run_plan(plan).success
    assert project.sql("SELECT count(*) FROM kg.messages WHERE valid_until IS NULL").item() == 0
    assert project.sql("SELECT count(*) FROM kg.messages").item() == 26  # closed, kept as history
    assert project.sql("SELECT count(*) FROM kg.message_facts").item() == 0
    assert project.sql("SELECT content, source FROM kg.user_facts").rows() == [("speaks Portuguese", "manual")]


def test_manual_facts_survive_reruns_and_are_never_set_aside_for_automatic_ones(project, capsys):
    db = str(project.warehouse.path)
    assert main(["facts", "remember", "u-lena", "I moved to Lisbon in August", "--db", db]) == 0
    assert main(["facts", "teach", "u-lena", "is the support lead for Qubitline", "--by", "admin-ops", "--type", "work",
                 "--db", db]) == 0
    every_message(project)
    for _ in range(2):
        assert project.run_all().success
        facts = project.sql("SELECT * FROM kg.user_facts WHERE user_id = 'u-lena' AND contains(content, 'Lisbon')")
        manual = facts.filter(pl.col("source") == "manual").row(0, named=True)
        auto = facts.filter(pl.col("source") == "auto_extraction").row(0, named=True)
        assert (manual["is_active"], manual["confidence"], manual["importance"]) == (True, 1.0, 0.8)
        # The chat said it first; the manual statement replaces it instead of being set aside as its duplicate.
        assert (auto["is_active"], auto["superseded_by"], manual["dedup_guard"]) == (False, manual["fact_id"], "manual")
    admin = project.sql("SELECT * FROM kg.user_facts WHERE source = 'admin'").row(0, named=True)
    assert (admin["taught_by"], admin["fact_type"], admin["is_active"]) == ("admin-ops", "work", True)
    capsys.readouterr()
    assert main(["facts", "list", "u-lena", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "[location] moved to Lisbon in August\n      manual, since" in out  # type from the offline cues
    assert "admin by admin-ops" in out


def test_remember_refuses_what_is_no_fact(project, capsys):
    assert main(["facts", "remember", "u-lena", "   ", "--db", str(project.warehouse.path)]) == 2
    assert "not a storable fact" in capsys.readouterr().err
    # what chat extraction would skip (the seed's extractability rules) is refused, unless forced
    assert main(["facts", "remember", "u-lena", "hi", "--db", str(project.warehouse.path)]) == 2
    assert ("'hi' is not a storable fact: chat extraction would skip it (shorter than 20 characters); --force stores it"
            in capsys.readouterr().err)
    assert not project.warehouse.exists(), "nothing was written"
    assert main(["facts", "remember", "u-lena", "hi", "--force", "--db", str(project.warehouse.path)]) == 0
    assert project.sql("SELECT count(*) FROM kg.user_facts WHERE content = 'hi'").item() == 1
    # an unknown user is the same answer from list and context
    capsys.readouterr()
    for action in ("list", "context"):
        assert main(["facts", action, "u-nobody", "--db", str(project.warehouse.path)]) == 2
        assert f"kg facts {action}: no messages or facts of 'u-nobody'" in capsys.readouterr().err


def test_remember_says_when_a_fact_duplicates_one_they_have(project, capsys):
    db = str(project.warehouse.path)
    assert main(["facts", "remember", "u-lena", "I'm allergic to peanuts", "--db", db]) == 0
    assert capsys.readouterr().out.rstrip().endswith("it adds to their facts")
    assert main(["facts", "remember", "u-lena", "I'm allergic to peanuts", "--db", db]) == 0
    first = project.sql("SELECT fact_id FROM kg.user_facts WHERE is_active AND content = 'is allergic to peanuts'").item()
    said = capsys.readouterr().out
    assert f"a duplicate (exact 1.00) of their fact 'is allergic to peanuts' ({first}), which stays" in said, said
    assert "adds to their facts" not in said

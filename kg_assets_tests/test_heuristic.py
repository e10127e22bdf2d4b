"""The offline heuristic extractor: real behaviour on small texts (no Dagster, no DuckDB)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from kg_assets.core import schemas
from kg_assets.core.normalize import entity_id, stable_hash
from kg_assets.extractors.heuristic import HeuristicExtractor, split_sentences
from kg_assets.extractors.heuristic.relations import MAX_PAIRS_PER_SENTENCE

LEAD = "Dr. Sarah Chen leads the AI team at Quantum Dynamics Lab in Boston."


def chunks(*texts: str | None) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "chunk_id": [f"chunk_{i}" for i in range(len(texts))],
            "document_id": [f"doc_{i}.md" for i in range(len(texts))],
            "text": list(texts),
            "section_path": ["Intro"] * len(texts),
            "content_hash": [f"hash_{i}" for i in range(len(texts))],
        },
        schema={
            "chunk_id": pl.String,
            "document_id": pl.String,
            "text": pl.String,
            "section_path": pl.String,
            "content_hash": pl.String,
        },
    )


def extract(*texts: str | None):
    return HeuristicExtractor().extract(chunks(*texts))


def types_by_name(mentions: pl.DataFrame) -> dict[str, str]:
    return dict(mentions.select("normalized_name", "entity_type").iter_rows())


def test_lead_sentence_entities_and_relation():
    result = extract(LEAD)
    types = types_by_name(result.mentions)
    assert types["SARAH_CHEN"] == "PERSON"
    assert types["QUANTUM_DYNAMICS_LAB"] == "ORGANIZATION"
    assert types["BOSTON"] == "LOCATION"
    # the honorific is a cue, not part of the name
    assert "Dr. Sarah Chen" not in result.mentions["name"].to_list()

    rel = result.relations.filter(
        (pl.col("source_name") == "Sarah Chen") & (pl.col("target_name") == "Quantum Dynamics Lab")
    )
    assert rel.height == 1
    row = rel.row(0, named=True)
    # she leads the team, which is at the lab: no verb of hers acts on the lab itself (heuristic-11)
    assert row["relation_type"] == "RELATED_TO"
    assert row["strength"] == 0.5
    assert row["keywords"][0].startswith("leads ai team")
    assert row["source_id"] == entity_id("PERSON", "SARAH_CHEN")
    assert row["target_id"] == entity_id("ORGANIZATION", "QUANTUM_DYNAMICS_LAB")
    assert row["description"] == LEAD
    assert row["relation_id"].startswith("relation_")


def test_offsets_slice_back_and_ids_match_normalize():
    text = "Intro line.\n\n" + LEAD + " Chen joined Northwind Robotics Inc. in 2019."
    mentions = extract(text).mentions
    assert mentions.height >= 5
    for row in mentions.iter_rows(named=True):
        assert text[row["char_start"] : row["char_end"]] == row["name"]
        assert row["entity_id"] == entity_id(row["entity_type"], row["normalized_name"])
        assert row["mention_id"] == "mention_" + stable_hash("chunk_0", row["entity_id"], str(row["char_start"]))
        assert row["gleaning_pass"] == 0
        assert row["extractor"] == "heuristic"
        assert row["extractor_version"] == HeuristicExtractor().version
        assert 0 < row["confidence"] <= 1
        assert row["name"] in row["description"] or len(row["description"]) == 300
    assert mentions["mention_id"].n_unique() == mentions.height


def test_surname_after_full_person_name_is_person():
    text = "Sarah Chen founded the company in 2019. Later, Chen moved to Berlin."
    mentions = extract(text).mentions
    chen = mentions.filter(pl.col("name") == "Chen")
    assert chen.height == 1
    assert chen["entity_type"][0] == "PERSON"
    assert chen["normalized_name"][0] == "CHEN"  # keeps its own name


def test_surname_before_any_person_is_not_forced_to_person():
    text = "Berlin welcomed Chen last year. Sarah Chen founded the company."
    types = dict(extract(text).mentions.select("name", "entity_type").iter_rows())
    assert types["Chen"] == "OTHER"  # the rule only looks back
    assert types["Sarah Chen"] == "PERSON"


def test_corporate_suffix_is_organization_and_keeps_the_dot():
    text = "She later joined Northwind Robotics Inc. as its first engineer."
    mentions = extract(text).mentions
    row = mentions.filter(pl.col("normalized_name") == "NORTHWIND_ROBOTICS_INC").row(0, named=True)
    assert row["entity_type"] == "ORGANIZATION"
    assert row["name"] == "Northwind Robotics Inc."


def test_sentence_split_keeps_us_and_abbreviations():
    text = "She moved to the U.S. in 2010 with Dr. Lee. Then she joined Google Inc. The rest is history."
    sentences = [text[s:e] for s, e in split_sentences(text)]
    assert sentences == [
        "She moved to the U.S. in 2010 with Dr. Lee.",
        "Then she joined Google Inc.",
        "The rest is history.",
    ]
    names = extract(text).mentions["name"].to_list()
    assert "U.S." in names


def test_sentence_initial_function_words_are_not_entities():
    text = "The report was late. However, Google shipped it. This worked. In Paris, They met."
    names = set(extract(text).mentions["name"].to_list())
    assert names == {"Google", "Paris"}


def test_leading_the_is_stripped_from_spans():
    text = "The Quantum Dynamics Lab opened. We visited The Quantum Dynamics Lab yesterday."
    mentions = extract(text).mentions
    # at a sentence start the capital says nothing; inside a sentence "The" is part of the name as written
    # ("in The Hague"), and the entity is the same either way
    assert mentions["name"].to_list() == ["Quantum Dynamics Lab", "The Quantum Dynamics Lab"]
    assert mentions["entity_id"].n_unique() == 1


def test_acronym_in_parentheses_takes_the_span_type():
    text = "Quantum Dynamics Lab (QDL) hired Sarah Chen. QDL is growing."
    mentions = extract(text).mentions
    qdl = mentions.filter(pl.col("name") == "QDL")
    assert qdl.height == 2
    assert set(qdl["entity_type"].to_list()) == {"ORGANIZATION"}


def test_gazetteer_event_and_location_cues():
    text = "Engineers from Northwind presented PyTorch results at NeurIPS 2025 near Lisbon."
    types = dict(extract(text).mentions.select("name", "entity_type").iter_rows())
    assert types["PyTorch"] == "TECHNOLOGY"
    assert types["NeurIPS 2025"] == "EVENT"
    assert types["Lisbon"] == "LOCATION"  # preposition cue, not in the gazetteer
    assert types["Northwind"] == "LOCATION"  # documented limit: "from X" reads as a place
    assert "Engineers" not in types  # sentence-initial common word with no support


def test_every_country_is_a_location_wherever_it_stands():
    # ISO 3166 names (pycountry), the inverted ones cut to their head; before, a country that no preposition
    # marked ("Lebanon agreed ...", "Portugal and Chile") was OTHER unless it was one of the few dozen listed
    text = "Lebanon agreed to the plan. Portugal and Chile signed it, and Iran objected. Turkey abstained."
    types = dict(extract(text).mentions.select("name", "entity_type").iter_rows())
    assert {types[c] for c in ("Lebanon", "Portugal", "Chile", "Iran", "Turkey")} == {"LOCATION"}, types


def test_custom_gazetteer_and_entity_types():
    ex = HeuristicExtractor(
        entity_types=("PERSON", "ORGANIZATION", "OTHER"), gazetteer={"Northwind": "ORGANIZATION"}
    )
    result = ex.extract(chunks("Engineers at Northwind use DuckDB in Boston."))
    types = dict(result.mentions.select("name", "entity_type").iter_rows())
    assert types == {"Northwind": "ORGANIZATION", "DuckDB": "OTHER", "Boston": "OTHER"}


def test_the_version_follows_the_settings_that_change_the_output():
    default = HeuristicExtractor()
    assert default.version.startswith("heuristic-15/") and default.version == HeuristicExtractor().version
    versions = {
        default.version,
        HeuristicExtractor(entity_types=("PERSON", "ORGANIZATION", "OTHER")).version,
        HeuristicExtractor(gazetteer={"Northwind": "ORGANIZATION"}).version,
        HeuristicExtractor(gazetteer={"Northwind": "LOCATION"}).version,
    }
    assert len(versions) == 4  # rows made with other types or another gazetteer are re-extracted


def test_a_verb_relates_its_subject_to_its_object_not_to_a_name_behind_the_object():
    result = extract("Jordan Reyes maintains Qubitline Studio. Lena Ortiz, who maintains the project at Quantum "
                     "Dynamics Lab, signed a contract with Northwind Robotics. Marcus Webb acquired the startup "
                     "Helix Sensors. Sarah Chen works at the lab of Alan Okafor.")
    types = {(r["source_name"], r["target_name"]): r["relation_type"] for r in result.relations.iter_rows(named=True)}
    assert types[("Jordan Reyes", "Qubitline Studio")] == "MAINTAINS"
    assert types[("Lena Ortiz", "Quantum Dynamics Lab")] == "RELATED_TO"  # she maintains the project
    assert types[("Marcus Webb", "Helix Sensors")] == "ACQUIRED"  # "the startup Helix Sensors" is the object
    assert types[("Sarah Chen", "Alan Okafor")] == "RELATED_TO"  # she works at the lab, not at Okafor


def test_verb_with_preposition_and_cooccurrence():
    result = extract("Maria Lopez works at Acme Analytics and Beta Systems.")
    rels = {(r["source_name"], r["target_name"]): r for r in result.relations.iter_rows(named=True)}
    assert rels[("Maria Lopez", "Acme Analytics")]["relation_type"] == "WORKS_AT"
    co = rels[("Acme Analytics", "Beta Systems")]
    assert co["relation_type"] == "RELATED_TO"
    assert co["strength"] == 0.5


def test_relations_per_sentence_are_bounded_and_distinct():
    text = (
        "Alice Smith, Bob Jones, Carol White, Dan Brown, Eve Black and Frank Green met in Paris. "
        "Google, Google and Google met Microsoft."
    )
    result = extract(text)
    per_sentence = result.relations.group_by("description").len()
    assert MAX_PAIRS_PER_SENTENCE == 3
    assert per_sentence["len"].max() == 3  # seven entities in the first sentence, capped at three pairs
    assert result.relations.filter(pl.col("source_id") == pl.col("target_id")).height == 0
    assert result.relations["relation_id"].n_unique() == result.relations.height
    assert result.mentions.filter(pl.col("name") == "Google").height == 3  # every mention kept


def test_empty_and_whitespace_chunks_are_ok_with_no_mentions():
    result = extract("", "   \n\t ")
    assert result.mentions.height == 0
    assert result.relations.height == 0
    status = result.chunk_status
    assert status["status"].to_list() == ["ok", "ok"]
    assert status["mention_count"].to_list() == [0, 0]


def test_bad_chunk_is_an_error_row_and_the_batch_goes_on():
    result = extract(LEAD, None, "Sarah Chen moved to Berlin.")
    status = {r["chunk_id"]: r for r in result.chunk_status.iter_rows(named=True)}
    assert status["chunk_1"]["status"] == "error"
    assert "NoneType" in status["chunk_1"]["error"]
    assert status["chunk_1"]["mention_count"] == 0
    for cid in ("chunk_0", "chunk_2"):
        assert status[cid]["status"] == "ok"
        assert status[cid]["error"] is None
        assert status[cid]["mention_count"] > 0
    assert status["chunk_0"]["chunk_hash"] == "hash_0"
    chunk_0_relations = result.relations.filter(pl.col("chunk_id") == "chunk_0")
    assert status["chunk_0"]["relation_count"] == chunk_0_relations.height
    assert set(result.mentions["chunk_id"].unique()) == {"chunk_0", "chunk_2"}
    assert result.chunk_status["extracted_at"].null_count() == 0


@pytest.mark.parametrize(
    ("attr", "schema"),
    [
        ("mentions", schemas.ENTITY_MENTIONS),
        ("relations", schemas.LOCAL_RELATIONS),
        ("chunk_status", schemas.CHUNK_EXTRACTIONS),
        ("attributes", schemas.ATTRIBUTE_OBSERVATIONS),
    ],
)
@pytest.mark.parametrize("texts", [(LEAD,), ()])
def test_output_columns_match_contracts(attr, schema, texts):
    frame = getattr(extract(*texts), attr)
    assert frame.schema == pl.Schema(schema)


def test_deterministic_ids_across_runs():
    a = extract(LEAD)
    b = extract(LEAD)
    assert a.mentions["mention_id"].to_list() == b.mentions["mention_id"].to_list()
    assert a.relations["relation_id"].to_list() == b.relations["relation_id"].to_list()


def test_attributive_mentions_are_not_relation_endpoints():
    result = extract("The Boston-based startup Acme Analytics acquired Beta Systems.")
    assert "Boston" in result.mentions["name"].to_list()  # still a mention
    rows = result.relations.select("source_name", "target_name", "relation_type").iter_rows()
    pairs = set(rows)
    assert pairs == {("Acme Analytics", "Beta Systems", "ACQUIRED")}


# --- attribute observations ----------------------------------------------------------------------

SAMPLE_INBOX = Path(__file__).resolve().parents[1] / "data" / "inbox"

APPOSITIVE = "Marcus Webb, a senior engineer at Northwind Robotics, walked through the integration roadmap."
JOINED = "Marcus Webb left Northwind Robotics and joined Quantum Dynamics Lab as Chief Technology Officer in June 2025."
HQ_BOSTON = "Northwind Robotics is headquartered in Boston, Massachusetts, where it employs roughly 240 people."
HQ_MOVED = "Northwind Robotics moved its headquarters from Boston to Pittsburgh in July 2025."
HQ_NOW = "Northwind is now headquartered in Pittsburgh, and it will keep a sales office in Boston."
FOUNDED = "Priya Natarajan founded Lumen Analytics in Toronto this month."


def facts(*texts: str) -> set[tuple[str, str, str]]:
    return set(extract(*texts).attributes.select("entity_name", "attr_key", "value").iter_rows())


def by_key(result, name: str, key: str) -> list[dict]:
    rows = result.attributes.filter((pl.col("entity_name") == name) & (pl.col("attr_key") == key))
    return list(rows.iter_rows(named=True))


def test_sample_appositive_gives_employer_and_role():
    result = extract(APPOSITIVE)
    (employer,) = by_key(result, "Marcus Webb", "employer")
    assert employer["value"] == "Northwind Robotics"
    assert employer["confidence"] == 0.7
    assert [r["value"] for r in by_key(result, "Marcus Webb", "role")] == ["senior engineer"]
    # the cue types the mentions it relies on
    types = dict(result.mentions.select("name", "entity_type").iter_rows())
    assert types["Marcus Webb"] == "PERSON"
    assert types["Northwind Robotics"] == "ORGANIZATION"


def test_sample_joined_gives_the_new_employer_and_role_but_not_the_one_left():
    result = extract(JOINED)
    assert [r["value"] for r in by_key(result, "Marcus Webb", "employer")] == ["Quantum Dynamics Lab"]
    assert by_key(result, "Marcus Webb", "employer")[0]["confidence"] == 0.8
    assert [r["value"] for r in by_key(result, "Marcus Webb", "role")] == ["Chief Technology Officer"]


def test_sample_headquarters_then_the_move():
    result = extract(HQ_BOSTON, HQ_MOVED)
    rows = result.attributes.filter(pl.col("attr_key") == "headquarters").sort("chunk_id")
    assert rows.select("chunk_id", "entity_name", "value").rows() == [
        ("chunk_0", "Northwind Robotics", "Boston"),
        ("chunk_1", "Northwind Robotics", "Pittsburgh"),  # the place after "to", not the one left
    ]
    assert ("Northwind", "headquarters", "Pittsburgh") in facts(HQ_NOW)


def test_sample_founder_and_founding_place():
    assert facts(FOUNDED) == {
        ("Lumen Analytics", "founder", "Priya Natarajan"),
        ("Lumen Analytics", "founded_in", "Toronto"),
    }


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Sarah Chen joined Acme Analytics in 2020.", ("Sarah Chen", "employer", "Acme Analytics")),
        ("Sarah Chen joins Acme Analytics as a senior engineer.", ("Sarah Chen", "role", "senior engineer")),
        ("Maria Lopez works at Acme Analytics.", ("Maria Lopez", "employer", "Acme Analytics")),
        ("Maria Lopez works for Acme Analytics.", ("Maria Lopez", "employer", "Acme Analytics")),
        ("Sarah Chen has worked at Acme Analytics since 2016.", ("Sarah Chen", "employer", "Acme Analytics")),
        ("Sarah Chen was hired by Acme Analytics in 2020.", ("Sarah Chen", "employer", "Acme Analytics")),
        ("Sarah Chen is employed by Acme Analytics.", ("Sarah Chen", "employer", "Acme Analytics")),
        ("Sarah Chen moved to Acme Analytics in 2021.", ("Sarah Chen", "employer", "Acme Analytics")),
        ("Sarah Chen is the chief technology officer of Acme Analytics.", ("Sarah Chen", "role", "chief technology officer")),
        ("Sarah Chen, Acme Analytics's CTO, spoke.", ("Sarah Chen", "employer", "Acme Analytics")),
        ("Acme Analytics's CTO, Sarah Chen, spoke.", ("Sarah Chen", "role", "CTO")),
        ("Google CEO Sundar Pichai spoke.", ("Sundar Pichai", "employer", "Google")),
        ("Dr. Sarah Chen of the Quantum Dynamics Lab spoke.", ("Sarah Chen", "employer", "Quantum Dynamics Lab")),
        ("Alan Okafor, director of QDL and a professor of physics at the Massachusetts Institute of Technology, spoke.",
         ("Alan Okafor", "employer", "Massachusetts Institute of Technology")),
        ("Acme Analytics is headquartered in Austin.", ("Acme Analytics", "headquarters", "Austin")),
        ("Acme Analytics, based in Toronto, builds dashboards.", ("Acme Analytics", "headquarters", "Toronto")),
        ("Acme Analytics relocated its headquarters to Austin.", ("Acme Analytics", "headquarters", "Austin")),
        ("Acme Analytics opened its headquarters in Austin.", ("Acme Analytics", "headquarters", "Austin")),
        ("Acme Analytics has its HQ in Austin.", ("Acme Analytics", "headquarters", "Austin")),
        ("Sarah Chen works for Acme Analytics, which is headquartered in Austin.",
         ("Acme Analytics", "headquarters", "Austin")),
        ("Lena Ortiz moved to Lisbon in August.", ("Lena Ortiz", "located_in", "Lisbon")),
        ("Lena Ortiz, who leads user support, moved from Boston to Lisbon.", ("Lena Ortiz", "located_in", "Lisbon")),
        ("Sarah Chen lives in Lisbon.", ("Sarah Chen", "located_in", "Lisbon")),
        ("Sarah Chen relocated to Lisbon.", ("Sarah Chen", "located_in", "Lisbon")),
        ("Acme Analytics was founded in 2016 by Dr. Tom Brennan.", ("Acme Analytics", "founder", "Tom Brennan")),
        ("Acme Analytics, founded by Sarah Chen, builds dashboards.", ("Acme Analytics", "founder", "Sarah Chen")),
        ("Founded in 2014 by Alan Okafor, Acme Analytics builds dashboards.", ("Acme Analytics", "founder", "Alan Okafor")),
        ("Priya Natarajan, founder of Lumen Analytics, spoke.", ("Lumen Analytics", "founder", "Priya Natarajan")),
        ("Priya Natarajan, founder of Lumen Analytics, spoke.", ("Priya Natarajan", "employer", "Lumen Analytics")),
    ],
)
def test_each_cue(text, fact):
    assert fact in facts(text)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Marcus Webb left Northwind Robotics.", ("Marcus Webb", "employer", "Northwind Robotics")),
        ("Sarah Chen left Northwind Robotics.", ("Sarah Chen", "employer", "Northwind Robotics")),
        ("Sarah Chen, a former engineer at Northwind Robotics, spoke.", ("Sarah Chen", "employer", "Northwind Robotics")),
        ("Sarah Chen, a former engineer at Northwind Robotics, joined Quantum Dynamics Lab.",
         ("Sarah Chen", "employer", "Northwind Robotics")),
        ("Sarah Chen previously worked at Northwind Robotics.", ("Sarah Chen", "employer", "Northwind Robotics")),
        ("Sarah Chen was a senior engineer at Northwind Robotics.", ("Sarah Chen", "employer", "Northwind Robotics")),
        ("Sarah Chen spent six years as a research scientist at the University of Toronto.",
         ("Sarah Chen", "employer", "University of Toronto")),
        ("Sarah Chen will join Northwind Robotics.", ("Sarah Chen", "employer", "Northwind Robotics")),
        ("Sarah Chen joined the Northwind Robotics team.", ("Sarah Chen", "employer", "Northwind Robotics")),
        ("Sarah Chen left Acme Analytics and Bob Smith joined Beta Systems.", ("Sarah Chen", "employer", "Beta Systems")),
        ("Acme Analytics was headquartered in Boston until 2020.", ("Acme Analytics", "headquarters", "Boston")),
        ("Acme Analytics moved its headquarters from Boston to Austin.", ("Acme Analytics", "headquarters", "Boston")),
        ("Quantum Dynamics Lab will hire two engineers under Sarah Chen, one based in Europe.",
         ("Quantum Dynamics Lab", "headquarters", "Europe")),
        ("Bob Smith said she works at Acme Analytics.", ("Bob Smith", "employer", "Acme Analytics")),
    ],
)
def test_negative_cues(text, fact):
    assert fact not in facts(text)


def test_a_location_after_joined_is_not_an_employer():
    result = extract("Sarah Chen joined Berlin last year.", "Müller joined by video from Zurich.")
    assert result.attributes.height == 0


def test_the_appositive_attaches_to_the_person_it_follows():
    got = facts("Sarah Chen met Marcus Webb, a senior engineer at Northwind Robotics, in Boston.")
    assert ("Marcus Webb", "employer", "Northwind Robotics") in got
    assert not any(name == "Sarah Chen" for name, _, _ in got)


def test_verb_cues_take_the_clause_subject():
    assert facts("Sarah Chen, who met Bob Smith, joined Acme Analytics.") == {("Sarah Chen", "employer", "Acme Analytics")}
    assert facts("Bob Smith met Sarah Chen and joined Acme Analytics.") == {("Bob Smith", "employer", "Acme Analytics")}
    assert facts("Sarah Chen and Bob Smith joined Acme Analytics.") == {
        ("Sarah Chen", "employer", "Acme Analytics"),
        ("Bob Smith", "employer", "Acme Analytics"),
    }


def test_acronym_defined_in_the_chunk_gives_the_full_name_as_value():
    text = "The Quantum Dynamics Lab (QDL) grew fast. Later, Sarah Chen joined QDL as CTO."
    assert ("Sarah Chen", "employer", "Quantum Dynamics Lab") in facts(text)
    assert ("Sarah Chen", "employer", "QDL") in facts("Sarah Chen joined QDL as CTO.")


def test_attribute_ids_are_consistent_with_mentions_and_counted_in_status():
    texts = (APPOSITIVE + " " + JOINED, HQ_BOSTON, "Nothing to see here.")
    result = extract(*texts)
    attrs = result.attributes
    assert attrs.height >= 4
    mention_ids = set(result.mentions.select("chunk_id", "entity_id", "name").iter_rows())
    for row in attrs.iter_rows(named=True):
        assert (row["chunk_id"], row["entity_id"], row["entity_name"]) in mention_ids
        assert row["observation_id"] == "observation_" + stable_hash(
            row["chunk_id"], row["entity_id"], row["attr_key"], row["value"].casefold()
        )
        assert row["gleaning_pass"] == 0
        assert row["extractor"] == "heuristic"
        assert row["extractor_version"] == HeuristicExtractor().version
        assert row["document_id"] == "doc_" + row["chunk_id"].split("_")[1] + ".md"
    webb = result.mentions.filter(pl.col("name") == "Marcus Webb")["entity_id"].unique().to_list()
    assert webb == [entity_id("PERSON", "MARCUS_WEBB")]
    assert attrs["observation_id"].n_unique() == attrs.height
    counts = dict(attrs.group_by("chunk_id").len().iter_rows())
    status = {r["chunk_id"]: r for r in result.chunk_status.iter_rows(named=True)}
    for cid, row in status.items():
        assert row["attribute_count"] == counts.get(cid, 0)
        assert row["passes"] == 0
    assert extract(*texts).attributes["observation_id"].to_list() == attrs["observation_id"].to_list()


def test_same_fact_twice_in_a_chunk_is_one_row_with_the_best_confidence():
    text = "Sarah Chen, a senior engineer at Acme Analytics, spoke. Sarah Chen works at Acme Analytics."
    rows = by_key(extract(text), "Sarah Chen", "employer")
    assert len(rows) == 1
    assert rows[0]["confidence"] == 0.8


def test_attribute_types_follow_entity_types():
    ex = HeuristicExtractor(entity_types=("PERSON", "ORGANIZATION", "OTHER"))
    result = ex.extract(chunks(HQ_BOSTON + " " + APPOSITIVE))
    keys = set(result.attributes["attr_key"].to_list())
    assert "headquarters" not in keys  # no LOCATION type, no place values
    assert "employer" in keys


@pytest.mark.skipif(not SAMPLE_INBOX.is_dir(), reason="sample corpus not present")
def test_sample_corpus_employer_history_is_clean():
    from kg_assets.core.chunking import ChunkingConfig, chunk_documents
    from kg_assets.core.documents import read_document
    from kg_assets.core.files.inbox import scan_inbox

    rows = [read_document(SAMPLE_INBOX, key) for key in scan_inbox(SAMPLE_INBOX)]
    docs = pl.DataFrame(rows, infer_schema_length=None)
    result = HeuristicExtractor().extract(chunk_documents(docs, ChunkingConfig()))
    attrs = result.attributes.join(docs.select("document_id", "document_date"), on="document_id")
    assert attrs.schema == pl.Schema({**schemas.ATTRIBUTE_OBSERVATIONS, "document_date": docs.schema["document_date"]})
    webb = attrs.filter((pl.col("entity_name") == "Marcus Webb") & (pl.col("attr_key") == "employer"))
    moved = pl.datetime(2025, 6, 18, time_zone="UTC")
    before = set(webb.filter(pl.col("document_date") < moved)["value"].to_list())
    after = set(webb.filter(pl.col("document_date") >= moved)["value"].to_list())
    assert before == {"Northwind Robotics"}
    assert "Quantum Dynamics Lab" in after and "Northwind Robotics" not in after
    hq = attrs.filter((pl.col("entity_name") == "Northwind Robotics") & (pl.col("attr_key") == "headquarters"))
    assert hq.sort("document_date")["value"].to_list()[0] == "Boston"
    assert set(hq.filter(pl.col("document_date") > pl.datetime(2025, 7, 1, time_zone="UTC"))["value"]) == {"Pittsburgh"}
    assert ("Lumen Analytics", "founder", "Priya Natarajan") in set(attrs.select("entity_name", "attr_key", "value").iter_rows())


# -- chat ------------------------------------------------------------------------------------------------


def chat_text(*messages: tuple[str, str | None, str]) -> str:
    """(user_id, display name, content) messages rendered as core.chat renders a chat document."""
    import json

    from kg_assets.core.chat import parse_chat

    lines = [json.dumps({"user_id": u, "message_id": f"m{i}", "timestamp": f"2025-10-20T08:0{i}:00Z", "content": c,
                         **({"display_name": n} if n else {})}) for i, (u, n, c) in enumerate(messages)]
    return parse_chat("\n".join(lines)).text


def test_chat_greetings_and_pronoun_contractions_are_no_entities():
    text = chat_text(("u-ana", None, "Hi, I'm Ana Ribeiro, a PhD student at the University of Porto."),
                     ("u-lena", None, "Great, welcome! I'd say the Driftwood plugin needs DuckDB 1.2."),
                     ("u-ana", None, "Perfect. I'll try it."), ("u-lena", None, "Good"))
    names = set(extract(text).mentions["name"])
    assert not names & {"Good", "Great", "Perfect", "I'd", "I'll", "I'm", "I'm Ana Ribeiro", "u-ana"}
    assert {"Ana Ribeiro", "University of Porto", "DuckDB"} <= names


def test_a_first_person_pronoun_in_a_chat_message_is_its_speaker():
    text = chat_text(("u-ana", None, "Hi, I'm Ana Ribeiro from Porto."),
                     ("u-lena", "Lena Ortiz", "I moved to Lisbon in August."),
                     ("u-ana", None, "My advisor Beatriz Lima uses Qubitline."),
                     ("u-kim", None, "I know Jordan Reyes."))  # no name for u-kim: its "I" gives nothing
    result = extract(text)
    m = result.mentions
    lena = m.filter(pl.col("name") == "Lena Ortiz").sort("char_start")
    # the speaker in the line prefix (at its offsets there) and the pronoun "I" of that line
    assert [text[s:e] for s, e in lena.select("char_start", "char_end").iter_rows()] == ["Lena Ortiz", "I"]
    assert set(lena["entity_type"]) == {"PERSON"} and m.filter(pl.col("name") == "Ana Ribeiro").height == 3
    assert ("Lena Ortiz", "located_in", "Lisbon") in set(result.attributes.select("entity_name", "attr_key", "value").iter_rows())
    pairs = set(result.relations.select("source_name", "target_name").iter_rows())
    assert ("Ana Ribeiro", "Beatriz Lima") in pairs
    assert not any("Jordan Reyes" in p and "Ana Ribeiro" in p for p in pairs)
    # a speaker is related to nothing just for speaking
    assert not any(p[0] == "Lena Ortiz" and p[1] != "Lisbon" for p in pairs)


def test_an_acronym_in_parentheses_after_a_person_does_not_become_a_person():
    m = extract("Participants: Prof. Alan Okafor (QDL), Dr. Sarah Chen (QDL) and Quantum Dynamics Lab (QDL) staff.").mentions
    assert set(m.filter(pl.col("name") == "QDL")["entity_type"]) <= {"ORGANIZATION", "OTHER"}
    assert m.filter((pl.col("name") == "QDL") & (pl.col("entity_type") == "ORGANIZATION")).height >= 1


def test_a_weakly_typed_short_form_of_an_organisation_in_the_chunk_is_that_organisation():
    text = ("Marcus Webb left Northwind Robotics and joined the Quantum Dynamics Lab. He started at QDL in June, "
            "after nine years at Northwind. Webb now lives in Cambridge.")
    types = {n: t for n, t in extract(text).mentions.select("name", "entity_type").iter_rows()}
    assert types["QDL"] == types["Northwind"] == "ORGANIZATION"
    assert types["Cambridge"] == "LOCATION"

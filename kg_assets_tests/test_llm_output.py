"""LLM output handling: tuple parsing with partial recovery, sanitizing, and rows with stable ids."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import pytest

from kg_assets.core import schemas
from kg_assets.core.extraction.prompts import DEFAULT_ENTITY_TYPES as TYPES
from kg_assets.core.extraction.prompts import ExtractionOut, from_structured
from kg_assets.core.extraction.records import Attribute, Entity, ParsedOutput, Relation, merge_passes
from kg_assets.core.extraction.rows import ChunkRecords, build_rows
from kg_assets.core.extraction.sanitize import attr_key, relation_type_from_keywords, row_records, sanitize
from kg_assets.core.extraction.tuple_format import parse_tuples, render, templates
from kg_assets.core.normalize import entity_id, normalize_name, stable_hash

D = "<|#|>"
TEXT = "Dr. Sarah Chen leads the AI team at Quantum Dynamics Lab in Boston. The lab was founded in 2015."


def ent(name, etype="PERSON", desc="", gleaning_pass=0):
    return Entity(name, etype, desc, gleaning_pass)


def rel(src, tgt, kw="", strength=1.0, desc="", gleaning_pass=0):
    return Relation(src, tgt, kw, desc, strength, gleaning_pass)


def att(entity, key, value, confidence=None, gleaning_pass=0):
    return Attribute(entity, key, value, confidence, gleaning_pass)


# ---------------------------------------------------------------------------------------------- parsing


def test_partial_recovery_keeps_good_lines_and_reports_bad_ones():
    raw = "\n".join(
        [
            f"entity{D}Sarah Chen{D}PERSON{D}Leads the AI team.",
            f"entity{D}Quantum Dynamics Lab{D}ORGANIZATION{D}Research lab in Boston.",
            "entity<|#|>",  # garbage: wrong field count
            f"entity{D}Boston{D}LOCATION{D}City.",
            f"widget{D}foo{D}bar{D}baz",  # garbage: unknown record kind
            f"relation{D}Sarah Chen{D}Quantum Dynamics Lab{D}works at{D}Chen leads its AI team.{D}0.9",
            f"attribute{D}Quantum Dynamics Lab{D}founded_year{D}2015{D}1.0",
            f"relation{D}Quantum Dynamics Lab{D}Boston{D}located in{D}The lab is in Bos",  # truncated, no terminator
        ]
    )
    parsed = parse_tuples(raw)
    assert [e.name for e in parsed.entities] == ["Sarah Chen", "Quantum Dynamics Lab", "Boston"]
    assert [(r.source, r.target, r.strength) for r in parsed.relations] == [("Sarah Chen", "Quantum Dynamics Lab", 0.9)]
    assert [(a.entity, a.key, a.value, a.confidence) for a in parsed.attributes] == [
        ("Quantum Dynamics Lab", "founded_year", "2015", 1.0)
    ]
    assert parsed.record_count == 5
    assert 2 <= len(parsed.bad_lines) <= 3
    assert parsed.bad_lines[:2] == ["entity<|#|>", f"widget{D}foo{D}bar{D}baz"]
    assert parsed.bad_lines[-1].endswith("The lab is in Bos")
    assert parsed.complete is False and parsed.nothing_missing is False


def test_a_complete_answer_keeps_its_last_record_even_without_optional_fields():
    raw = f"relation{D}A{D}B{D}uses{D}A uses B\n{COMPLETE_TAG}"
    assert parse_tuples(raw).relations[0].strength == 1.0
    # same line without terminator and without trailing newline: probably cut off
    assert parse_tuples(f"relation{D}A{D}B{D}uses{D}A uses B").bad_lines
    # ... but a finished line (newline) or one with every field is fine
    assert parse_tuples(f"relation{D}A{D}B{D}uses{D}A uses B\n").relations
    assert parse_tuples(f"attribute{D}A{D}role{D}CEO{D}0.9").attributes[0].confidence == 0.9
    assert parse_tuples(f"entity{D}A{D}PERSON{D}desc cut").entities


COMPLETE_TAG = "<|COMPLETE|>"


@pytest.mark.parametrize(
    "line",
    [
        f"entity{D}Sarah Chen{D}PERSON",  # wrong field count (no description delimiter)
        f"entity{D}A{D}PERSON{D}d{D}extra",
        f"relation{D}A{D}B",
        f"relation{D}A{D}B{D}kw{D}d{D}0.5{D}more",
        f"attribute{D}A{D}key",
        f"thing{D}A{D}PERSON{D}d",  # unknown kind
        f"entity{D}  {D}PERSON{D}d",  # empty name
        f'entity{D}""{D}PERSON{D}d',  # empty after unquoting
        f"entity{D}A{D}{D}d",  # empty type
        f"relation{D}{D}B{D}kw{D}d{D}0.5",
        f"relation{D}A{D}B{D}kw{D}d{D}strong",  # unparseable strength
        f"relation{D}A{D}B{D}kw{D}d{D}nan",
        f"attribute{D}A{D}role{D}CEO{D}high",  # unparseable confidence
        f"attribute{D}A{D}role{D}{D}0.5",  # empty value
        "entity | Sarah Chen",
    ],
)
def test_malformed_records_are_bad_lines(line):
    parsed = parse_tuples(line + "\n" + COMPLETE_TAG)
    assert parsed.record_count == 0
    assert parsed.bad_lines == [line.strip()]
    assert parsed.complete and not parsed.nothing_missing


def test_code_fences_numbering_bullets_quotes_and_terminator_on_the_last_line():
    raw = (
        "Here is the extraction:\n"
        "```text\n"
        f"1. entity{D}\"Sarah Chen\"{D}PERSON{D}Leads the team.\n"
        f"2)entity{D}“Acme Labs”{D}'ORGANIZATION'{D}A lab.\n"
        f"- relation{D}Sarah Chen{D}Acme Labs{D}works at{D}Chen works there.{D}80%\n"
        f"  * attribute{D}Acme Labs{D}founded_year{D}2015{D}1{COMPLETE_TAG}\n"
        "```\n"
    )
    parsed = parse_tuples(raw)
    assert not parsed.bad_lines
    assert [(e.name, e.type) for e in parsed.entities] == [("Sarah Chen", "PERSON"), ("Acme Labs", "ORGANIZATION")]
    assert parsed.relations[0].strength == pytest.approx(0.8)
    assert parsed.attributes[0].value == "2015" and parsed.attributes[0].confidence == 1.0
    assert parsed.complete


def test_lightrag_style_hash_separated_records_and_delimiter_variants():
    raw = (
        '("entity"<|>"Sarah Chen"<|>"PERSON"<|>"Researcher")##("entity"<|>"Acme"<|>"ORG"<|>"Lab")##'
        '("relationship"<|>"Sarah Chen"<|>"Acme"<|>"works at"<|>"She works there"<|>0.7)##\n'
        "attribute|#|Acme|#|headquarters|#|Boston|#|0.9\n"
        "<|COMPLETE|>"
    )
    parsed = parse_tuples(raw)
    assert not parsed.bad_lines
    assert [e.name for e in parsed.entities] == ["Sarah Chen", "Acme"]
    assert parsed.relations[0].keywords == "works at" and parsed.relations[0].strength == 0.7
    assert parsed.attributes[0].key == "headquarters" and parsed.attributes[0].value == "Boston"
    # '##' inside a description is not a record separator
    desc = parse_tuples(f"entity{D}C#{D}TECHNOLOGY{D}Language ## by Microsoft\n").entities[0]
    assert desc.description == "Language ## by Microsoft"


def test_rendered_records_parse_back_to_the_same_records():
    parsed = ParsedOutput(
        entities=[ent("Sarah Chen", "PERSON", "Leads the team."), ent("Acme", "ORGANIZATION", "A lab.")],
        relations=[rel("Sarah Chen", "Acme", "works at, leads", 0.9, "Chen leads it.")],
        attributes=[att("Acme", "founded_year", "2015", 1.0), att("Acme", "headquarters", "Boston")],
    )
    raw = render(parsed)
    assert raw.splitlines()[-2:] == [f"attribute{D}Acme{D}headquarters{D}Boston", COMPLETE_TAG]  # no confidence given
    back = parse_tuples(raw)
    assert (back.entities, back.relations, back.attributes) == (parsed.entities, parsed.relations, parsed.attributes)
    assert back.complete and not back.bad_lines
    assert templates().splitlines() == [
        f"entity{D}NAME{D}TYPE{D}DESCRIPTION",
        f"relation{D}SOURCE{D}TARGET{D}KEYWORDS{D}DESCRIPTION{D}STRENGTH",
        f"attribute{D}ENTITY{D}KEY{D}VALUE{D}CONFIDENCE",
    ]


def test_records_after_the_terminator_are_ignored():
    parsed = parse_tuples(f"entity{D}A{D}PERSON{D}d\n<|COMPLETE|>\nentity{D}B{D}PERSON{D}d\n")
    assert [e.name for e in parsed.entities] == ["A"]


@pytest.mark.parametrize(
    ("raw", "complete", "nothing"),
    [
        ("<|COMPLETE|>", True, True),
        ("  \n<|COMPLETE|>\n", True, True),
        ("No further entities were found.\n<|complete|>", True, True),  # prose is not a record
        ("```\n<|COMPLETE|>\n```", True, True),
        (f"entity{D}A{D}PERSON{D}d\n<|COMPLETE|>", True, False),
        (f"entity{D}A{D}PERSON\n<|COMPLETE|>", True, False),  # a failed record is not "nothing"
        ("", False, False),
        ("Nothing was missed.", False, False),
    ],
)
def test_nothing_missing_detection(raw, complete, nothing):
    parsed = parse_tuples(raw)
    assert parsed.complete is complete
    assert parsed.nothing_missing is nothing


def test_gleaning_pass_is_carried_by_records_but_not_in_the_tool_schema():
    parsed = parse_tuples(f"entity{D}A{D}PERSON{D}d\nrelation{D}A{D}B{D}kw{D}d\n", gleaning_pass=2)
    assert parsed.entities[0].gleaning_pass == 2 and parsed.relations[0].gleaning_pass == 2
    schema = str(ExtractionOut.model_json_schema())
    assert "gleaning" not in schema


def test_from_structured_and_lenient_validation():
    out = ExtractionOut.model_validate(
        {
            "entities": [{"name": "Acme", "type": "ORG", "description": None}],
            "relations": [{"source": "Acme", "target": "Boston", "keywords": ["located in", "hq"], "strength": None}],
            "attributes": [{"entity": "Acme", "key": "founded_year", "value": 2015, "confidence": "0.9"}],
        }
    )
    parsed = from_structured(out, gleaning_pass=1)
    assert parsed.complete and not parsed.nothing_missing and not parsed.bad_lines
    assert parsed.entities[0].description == ""
    assert parsed.relations[0].keywords == "located in, hq" and parsed.relations[0].strength == 1.0
    assert parsed.attributes[0].value == "2015" and parsed.attributes[0].confidence == 0.9
    assert {r.gleaning_pass for r in parsed.entities + parsed.relations + parsed.attributes} == {1}
    assert from_structured(ExtractionOut()).nothing_missing


def test_merge_passes_concatenates_in_order():
    p0 = parse_tuples(f"entity{D}A{D}PERSON{D}d\nbroken{D}x\n<|COMPLETE|>")
    p1 = parse_tuples(f"entity{D}B{D}PERSON{D}d\n<|COMPLETE|>", gleaning_pass=1)
    p2 = parse_tuples("<|COMPLETE|>", gleaning_pass=2)
    merged = merge_passes([p0, p1, p2])
    assert [(e.name, e.gleaning_pass) for e in merged.entities] == [("A", 0), ("B", 1)]
    assert merged.bad_lines == [f"broken{D}x"]
    assert merged.complete and merged.nothing_missing
    assert not merge_passes([]).complete
    # the same answer read as another pass (e.g. served from the cache) carries that pass
    raw = f"entity{D}C{D}PERSON{D}d\n<|COMPLETE|>"
    tagged, first = parse_tuples(raw, gleaning_pass=3), parse_tuples(raw)
    assert tagged.entities[0].gleaning_pass == 3 and first.entities[0].gleaning_pass == 0
    assert tagged.complete and tagged.entities[0].name == "C"


# --------------------------------------------------------------------------------------------- sanitize


def test_sanitize_maps_aliases_and_unknown_types():
    parsed = ParsedOutput(
        entities=[
            ent("Acme", "org"), ent("Boston", "GPE"), ent("Paris", "place"), ent("Ada", "Per"),
            ent("Rust", "tech"), ent("Ada Lovelace", "persons"), ent("Thing", "GADGET"), ent("Kubernetes", "Technology"),
        ]
    )
    clean, stats = sanitize(parsed, entity_types=TYPES)
    assert [(e.name, e.type) for e in clean.entities] == [
        ("Acme", "ORGANIZATION"), ("Boston", "LOCATION"), ("Paris", "LOCATION"), ("Ada", "PERSON"),
        ("Rust", "TECHNOLOGY"), ("Ada Lovelace", "PERSON"), ("Thing", "OTHER"), ("Kubernetes", "TECHNOLOGY"),
    ]
    assert stats["aliased_type"] == 6 and stats["unknown_type"] == 1 and stats["dropped_entities"] == 0

    dropped, stats = sanitize(parsed, entity_types=TYPES, unknown_types="drop")
    assert "Thing" not in [e.name for e in dropped.entities]
    assert stats["unknown_type"] == 1 and stats["dropped_entities"] == 1

    no_other, stats = sanitize(parsed, entity_types=("PERSON", "ORGANIZATION"))
    assert [e.name for e in no_other.entities] == ["Acme", "Ada", "Ada Lovelace"]
    assert stats["unknown_type"] == 5 and stats["dropped_entities"] == 5


def test_custom_entity_types_are_accepted_when_configured_and_other_when_not():
    parsed = ParsedOutput(
        entities=[ent("BRCA1", "protein"), ent("breast cancer", "DISEASE"), ent("Novartis", "ORGANIZATION")],
        relations=[rel("BRCA1", "breast cancer", "associated with")],
    )
    bio, stats = sanitize(parsed, entity_types=("PROTEIN", "DISEASE", "ORGANIZATION", "OTHER"))
    assert [e.type for e in bio.entities] == ["PROTEIN", "DISEASE", "ORGANIZATION"]
    assert stats["unknown_type"] == 0 and len(bio.relations) == 1
    default, stats = sanitize(parsed, entity_types=TYPES)
    assert [e.type for e in default.entities] == ["OTHER", "OTHER", "ORGANIZATION"]
    assert stats["unknown_type"] == 2
    # a configured custom type wins over the alias table (COMPANY is an alias of ORGANIZATION otherwise)
    custom, _ = sanitize(ParsedOutput(entities=[ent("Acme", "company")]), entity_types=("COMPANY",))
    assert custom.entities[0].type == "COMPANY"


def test_sanitize_drops_empty_and_pronoun_names_and_merges_duplicates():
    parsed = ParsedOutput(
        entities=[
            ent("John Doe", "PERSON", "An engineer."),
            ent("he", "PERSON"), ent("They", "ORGANIZATION"), ent("  ", "PERSON"), ent("!!!", "OTHER"),
            ent("x" * 200, "OTHER"),
            ent("john  doe", "PERSON", "Works at the Company.", gleaning_pass=1),
            ent("John Doe", "ORGANIZATION", "An engineer."),  # other type: first type kept
            ent("the Company", "ORGANIZATION", "Employer."),
            ent("Company", "ORGANIZATION", "Employer of John Doe."),
        ]
    )
    clean, stats = sanitize(parsed, entity_types=TYPES)
    assert [(e.name, e.type, e.gleaning_pass) for e in clean.entities] == [
        ("John Doe", "PERSON", 0), ("the Company", "ORGANIZATION", 0)
    ]
    assert clean.entities[0].description == "An engineer. Works at the Company."
    assert clean.entities[1].description == "Employer of John Doe."  # the longer one contains the shorter
    assert stats["dropped_entities"] == 5
    assert stats["merged_entities"] == 3 and stats["type_conflicts"] == 1


def test_merged_descriptions_stay_bounded():
    parsed = ParsedOutput(entities=[ent("A", "PERSON", f"Fact {i}: " + "y" * 90) for i in range(20)])
    clean, _ = sanitize(parsed, entity_types=TYPES)
    assert len(clean.entities[0].description) <= 500


def test_orphan_relations_are_dropped_or_added():
    parsed = ParsedOutput(
        entities=[ent("Sarah Chen"), ent("Acme Labs", "ORGANIZATION")],
        relations=[
            rel("sarah chen", "the Acme Labs", "works at"),  # endpoints match by normalized name
            rel("Sarah Chen", "Boston", "lives in", gleaning_pass=1),
            rel("Sarah Chen", "she", "is"),
        ],
        attributes=[att("Zurich", "population", "400000")],
    )
    dropped, stats = sanitize(parsed, entity_types=TYPES)
    assert [(r.source, r.target) for r in dropped.relations] == [("Sarah Chen", "Acme Labs")]  # canonical names
    assert stats["orphan_relations_dropped"] == 2 and stats["orphan_attributes_dropped"] == 1
    assert stats["entities_added"] == 0 and len(dropped.entities) == 2

    added, stats = sanitize(parsed, entity_types=TYPES, orphan_relations="add")
    assert [(e.name, e.type, e.gleaning_pass) for e in added.entities][2:] == [("Boston", "OTHER", 1), ("Zurich", "OTHER", 0)]
    assert [(r.target, r.gleaning_pass) for r in added.relations] == [("Acme Labs", 0), ("Boston", 1)]
    assert len(added.attributes) == 1
    assert stats["entities_added"] == 2 and stats["orphan_relations_dropped"] == 1  # the pronoun endpoint

    strict, stats = sanitize(parsed, entity_types=("PERSON", "ORGANIZATION"), orphan_relations="add")
    assert len(strict.relations) == 1 and stats["entities_added"] == 0  # cannot add without OTHER


def test_self_relations_and_relation_duplicates():
    parsed = ParsedOutput(
        entities=[ent("Sarah Chen"), ent("Acme", "ORGANIZATION")],
        relations=[
            rel("Sarah Chen", "Sarah Chen", "is"),
            rel("Sarah Chen", "Chen, Sarah", "same"),  # different normalized name: orphan, not self
            rel("Sarah Chen", "Acme", "works at, employment", 0.6, "She works at Acme."),
            rel("sarah chen", "ACME", "Works at; job", 0.9, "Employed by Acme.", gleaning_pass=1),
            rel("Sarah Chen", "Acme", "founded", 0.5),
            rel("Acme", "Sarah Chen", "employs", 0.7),
        ],
    )
    clean, stats = sanitize(parsed, entity_types=TYPES)
    assert stats["self_relations_dropped"] == 1 and stats["orphan_relations_dropped"] == 1
    assert stats["merged_relations"] == 1
    works = clean.relations[0]
    assert works.keywords == "works at, employment, job" and works.strength == 0.9 and works.gleaning_pass == 0
    assert works.description == "She works at Acme. Employed by Acme."
    assert [relation_type_from_keywords(r.keywords) for r in clean.relations] == ["WORKS_AT", "FOUNDED", "EMPLOYS"]


def test_clamping_defaults_and_attribute_cleanup():
    parsed = ParsedOutput(
        entities=[ent("Acme", "ORGANIZATION"), ent("Bob")],
        relations=[rel("Bob", "Acme", "works at", 1.7), rel("Acme", "Bob", "employs", -0.2), rel("Bob", "Acme", "x", float("nan"))],
        attributes=[
            att("Acme", "Founded Year", "2015"),  # missing confidence -> default
            att("acme", "founded_year", " 2015 ", 0.95),  # duplicate -> merged, max confidence
            att("Bob", "role", "CTO", 3.0),
            att("Bob", "!!!", "x", 0.5),  # key normalizes to nothing
            att("Bob", "employer", '""', 0.5),  # empty value
        ],
    )
    clean, stats = sanitize(parsed, entity_types=TYPES, default_confidence=0.7)
    assert [r.strength for r in clean.relations] == [1.0, 0.0, 1.0]
    assert [(a.entity, a.key, a.value, a.confidence) for a in clean.attributes] == [
        ("Acme", "founded_year", "2015", 0.95), ("Bob", "role", "CTO", 1.0)
    ]
    assert stats["clamped"] == 4 and stats["confidence_defaulted"] == 1
    assert stats["merged_attributes"] == 1 and stats["dropped_attributes"] == 2


def test_caps_apply_to_entities_first_then_relations_and_attributes():
    parsed = ParsedOutput(
        entities=[ent(f"Person {i}") for i in range(10)],
        relations=[rel(f"Person {i}", f"Person {i + 1}", "knows") for i in range(9)],
        attributes=[att(f"Person {i}", "role", "engineer", 0.9) for i in range(10)],
    )
    clean, stats = sanitize(parsed, entity_types=TYPES, max_entities=5, max_relations=2, max_attributes=3)
    assert [e.name for e in clean.entities] == [f"Person {i}" for i in range(5)]
    assert [(r.source, r.target) for r in clean.relations] == [("Person 0", "Person 1"), ("Person 1", "Person 2")]
    assert [a.entity for a in clean.attributes] == ["Person 0", "Person 1", "Person 2"]
    assert stats["capped_entities"] == 5
    assert stats["capped_relations"] == 7  # 5 lost an endpoint to the entity cap, 2 over max_relations
    assert stats["capped_attributes"] == 7


def test_sanitize_reports_every_stat_and_keeps_flags():
    parsed = parse_tuples(f"entity{D}A{D}PERSON{D}d\nbroken{D}x\n<|COMPLETE|>")
    clean, stats = sanitize(parsed, entity_types=TYPES)
    assert clean.complete and clean.bad_lines == [f"broken{D}x"]
    assert set(stats) >= {
        "unknown_type", "dropped_entities", "merged_entities", "orphan_relations_dropped", "entities_added",
        "clamped", "capped_entities", "capped_relations", "capped_attributes",
    }
    assert all(v == 0 for v in stats.values())


# ----------------------------------------------------------------------------------------------- frames


def test_helpers():
    assert relation_type_from_keywords("works at, employment") == "WORKS_AT"
    assert relation_type_from_keywords("  ") == "RELATED_TO"
    assert relation_type_from_keywords(None) == "RELATED_TO"
    assert relation_type_from_keywords("; co-founded") == "CO_FOUNDED"
    assert relation_type_from_keywords("situé à") == "SITUE_A"
    assert relation_type_from_keywords(["", "AI/ML research, uses"]) == "AI_ML_RESEARCH"  # commas and semicolons split
    assert attr_key("Founded Year") == "founded_year"
    assert attr_key("HQ-location") == "hq_location"
    assert attr_key("foundedYear") == "founded_year"


@dataclass
class ChunkParse:
    chunk_id: str
    document_id: str
    text: str
    parsed: ParsedOutput


def _chunk(raw: str, chunk_id="chunk_1", text=TEXT, types=TYPES) -> ChunkParse:
    clean, _ = sanitize(parse_tuples(raw), entity_types=types)
    return ChunkParse(chunk_id, "doc/a.md", text, clean)


def to_frames(chunks: list[ChunkParse], extractor="x", extractor_version="1"):
    """Answers through the engine's path: records for the row builder, then the rows."""
    records = [ChunkRecords(c.chunk_id, c.document_id, None, *row_records(c.parsed, c.text)) for c in chunks]
    result = build_rows(records, extractor=extractor, extractor_version=extractor_version)
    return result.mentions, result.relations, result.attributes


RAW = "\n".join(
    [
        f"entity{D}Sarah Chen{D}person{D}Leads the AI team.",
        f"entity{D}QUANTUM DYNAMICS LAB{D}ORG{D}Research lab.",
        f"entity{D}Boston{D}LOCATION{D}City.",
        f"entity{D}Neural networks{D}CONCEPT{D}Not in this text.",
        f"relation{D}Sarah Chen{D}Quantum Dynamics Lab{D}works at; leads, Works at{D}Leads its AI team.{D}0.9",
        f"relation{D}quantum dynamics lab{D}boston{D}{D}In Boston.{D}0.6",
        f"attribute{D}Quantum Dynamics Lab{D}Founded Year{D}2015{D}1.0",
        f"attribute{D}Sarah Chen{D}employer{D}Quantum Dynamics Lab",
        "<|COMPLETE|>",
    ]
)


def test_to_frames_conform_to_the_contracts():
    mentions, relations, attributes = to_frames([_chunk(RAW)], extractor="openai", extractor_version="v1")
    assert mentions.schema == pl.Schema(schemas.ENTITY_MENTIONS)
    assert relations.schema == pl.Schema(schemas.LOCAL_RELATIONS)
    assert attributes.schema == pl.Schema(schemas.ATTRIBUTE_OBSERVATIONS)
    assert (mentions.height, relations.height, attributes.height) == (3, 2, 2), "Neural networks is not in the text"
    for frame in (mentions, relations, attributes):
        assert frame["extractor"].unique().to_list() == ["openai"]
        assert frame["extractor_version"].unique().to_list() == ["v1"]
        assert frame["chunk_id"].unique().to_list() == ["chunk_1"]
        assert frame["document_id"].unique().to_list() == ["doc/a.md"]


def test_to_frames_ids_follow_the_shared_normalization():
    mentions, relations, attributes = to_frames([_chunk(RAW)], extractor="openai", extractor_version="v1")
    for row in mentions.iter_rows(named=True):
        assert row["normalized_name"] == normalize_name(row["name"])
        assert row["entity_id"] == entity_id(row["entity_type"], normalize_name(row["name"]))
        start = "" if row["char_start"] is None else str(row["char_start"])
        assert row["mention_id"] == "mention_" + stable_hash("chunk_1", row["entity_id"], start)
    lab = entity_id("ORGANIZATION", "QUANTUM_DYNAMICS_LAB")
    assert lab in mentions["entity_id"].to_list()
    # the heuristic extractor's ids meet these ones: same type + normalized name, same entity
    from kg_assets.extractors.heuristic import HeuristicExtractor

    chunks = pl.DataFrame({"chunk_id": ["c"], "document_id": ["d"], "text": [TEXT], "section_path": [None], "content_hash": ["h"]})
    heuristic_ids = set(HeuristicExtractor().extract(chunks).mentions["entity_id"].to_list())
    assert {entity_id("PERSON", "SARAH_CHEN"), lab} <= heuristic_ids
    assert {entity_id("PERSON", "SARAH_CHEN"), lab} <= set(mentions["entity_id"].to_list())


def test_seed_normalization_through_to_ids():
    raw = "\n".join(
        [
            f"entity{D}John Doe{D}PERSON{D}An engineer.",
            f"entity{D}john doe{D}PERSON{D}Same person.",
            f"entity{D}the Company{D}ORGANIZATION{D}His employer.",
            f"entity{D}John's team{D}ORGANIZATION{D}A team.",
            f"relation{D}JOHN DOE{D}Company{D}works at{D}d{D}1",
            "<|COMPLETE|>",
        ]
    )
    text = "John Doe works at the Company. john doe leads John's team."
    mentions, relations, _ = to_frames([_chunk(raw, text=text)], extractor="llm", extractor_version="1")
    assert mentions["normalized_name"].to_list() == ["JOHN_DOE", "COMPANY", "JOHN_TEAM"]
    assert mentions["entity_id"].to_list() == [
        entity_id("PERSON", "JOHN_DOE"), entity_id("ORGANIZATION", "COMPANY"), entity_id("ORGANIZATION", "JOHN_TEAM")
    ]
    r = relations.row(0, named=True)
    assert (r["source_id"], r["target_id"]) == (entity_id("PERSON", "JOHN_DOE"), entity_id("ORGANIZATION", "COMPANY"))
    assert (r["source_name"], r["target_name"], r["relation_type"]) == ("John Doe", "the Company", "WORKS_AT")


def test_to_frames_offsets_slice_back_to_the_name():
    mentions, _, _ = to_frames([_chunk(RAW)], extractor="openai", extractor_version="v1")
    assert "Neural networks" not in mentions["name"].to_list(), "a name the text does not contain is dropped"
    for row in mentions.iter_rows(named=True):
        assert TEXT[row["char_start"]:row["char_end"]].lower() == row["name"].lower()
    lab = mentions.filter(pl.col("normalized_name") == "QUANTUM_DYNAMICS_LAB").row(0, named=True)
    assert TEXT[lab["char_start"]:lab["char_end"]] == "Quantum Dynamics Lab"


def test_offsets_prefer_whole_words_and_tolerate_line_breaks():
    text = "The Laboratory hired staff.\nThe Lab itself moved to New\nYork."
    raw = f"entity{D}Lab{D}ORGANIZATION{D}d\nentity{D}New York{D}LOCATION{D}d\n<|COMPLETE|>"
    mentions, _, _ = to_frames([_chunk(raw, text=text)], extractor="x", extractor_version="1")
    spans = {r["name"]: text[r["char_start"]:r["char_end"]] for r in mentions.iter_rows(named=True)}
    assert spans == {"Lab": "Lab", "New York": "New\nYork"}
    assert mentions.filter(pl.col("name") == "Lab")["char_start"].item() == text.index("Lab ")


def test_to_frames_relations_resolve_to_the_chunk_entities():
    mentions, relations, attributes = to_frames([_chunk(RAW)], extractor="openai", extractor_version="v1")
    ids = dict(zip(mentions["name"], mentions["entity_id"], strict=True))
    rows = relations.sort("relation_type", descending=True).iter_rows(named=True)
    works, related = list(rows)
    assert (works["source_id"], works["target_id"]) == (ids["Sarah Chen"], ids["Quantum Dynamics Lab"])
    assert works["relation_type"] == "WORKS_AT" and works["keywords"] == ["works at", "leads"] and works["strength"] == 0.9
    assert works["relation_id"] == "relation_" + stable_hash("chunk_1", ids["Sarah Chen"], ids["Quantum Dynamics Lab"], "WORKS_AT")
    assert (related["source_id"], related["target_id"]) == (ids["Quantum Dynamics Lab"], ids["Boston"])
    assert related["relation_type"] == "RELATED_TO" and related["keywords"] == []
    assert set(relations["source_id"]) | set(relations["target_id"]) <= set(mentions["entity_id"])
    by_key = {r["attr_key"]: r for r in attributes.iter_rows(named=True)}
    assert by_key["founded_year"]["entity_id"] == ids["Quantum Dynamics Lab"]
    assert by_key["founded_year"]["value"] == "2015" and by_key["founded_year"]["confidence"] == 1.0
    assert by_key["employer"]["entity_name"] == "Sarah Chen" and by_key["employer"]["confidence"] == 0.8  # default
    fy = by_key["founded_year"]
    assert fy["observation_id"] == "observation_" + stable_hash("chunk_1", fy["entity_id"], "founded_year", "2015")


def test_to_frames_keeps_gleaning_passes_and_is_safe_without_sanitize():
    p0 = parse_tuples(f"entity{D}Sarah Chen{D}PERSON{D}d\n<|COMPLETE|>")
    p1 = parse_tuples(
        f"entity{D}Boston{D}LOCATION{D}d\nentity{D}sarah chen{D}PERSON{D}again\n"
        f"relation{D}Sarah Chen{D}Boston{D}lives in{D}d{D}0.8\nrelation{D}Sarah Chen{D}Boston{D}lives in{D}d{D}0.8\n"
        f"relation{D}Sarah Chen{D}Nowhere{D}x{D}d{D}0.8\nrelation{D}Boston{D}Boston{D}x{D}d{D}0.8\n"
        f"attribute{D}Boston{D}country{D}USA\nattribute{D}Boston{D}country{D}USA\nattribute{D}Ghost{D}k{D}v\n<|COMPLETE|>",
        gleaning_pass=1,
    )
    merged = merge_passes([p0, p1])
    mentions, relations, attributes = to_frames([ChunkParse("c1", "d", TEXT, merged)])
    assert mentions.select("name", "gleaning_pass").rows() == [("Sarah Chen", 0), ("Boston", 1)]  # one per entity
    assert mentions["mention_id"].n_unique() == 2 and mentions["confidence"].to_list() == [None, None]
    assert relations.height == 1 and relations["gleaning_pass"].to_list() == [1]
    assert attributes.height == 1 and attributes["confidence"].to_list() == [None]


def test_to_frames_over_many_chunks_and_empty_input():
    a = _chunk(RAW, chunk_id="c1")
    b = _chunk(RAW, chunk_id="c2")
    mentions, relations, attributes = to_frames([a, b], extractor="x", extractor_version="1")
    assert mentions.height == 6 and mentions["mention_id"].n_unique() == 6  # 3 grounded entities a chunk
    assert mentions.filter(pl.col("chunk_id") == "c1")["entity_id"].to_list() == mentions.filter(
        pl.col("chunk_id") == "c2"
    )["entity_id"].to_list()
    assert relations["relation_id"].n_unique() == 4 and attributes["observation_id"].n_unique() == 4
    empty = to_frames([])
    assert [f.height for f in empty] == [0, 0, 0]
    assert empty[0].schema == pl.Schema(schemas.ENTITY_MENTIONS)
    assert empty[2].schema == pl.Schema(schemas.ATTRIBUTE_OBSERVATIONS)
    nothing = to_frames([ChunkParse("c", "d", "text", ParsedOutput())])
    assert [f.height for f in nothing] == [0, 0, 0]


def test_custom_types_reach_the_frames():
    text = "BRCA1 mutations raise the risk of breast cancer."
    raw = f"entity{D}BRCA1{D}PROTEIN{D}Gene product.\nentity{D}breast cancer{D}disease{D}Cancer.\n<|COMPLETE|>"
    mentions, _, _ = to_frames(
        [_chunk(raw, text=text, types=("PROTEIN", "DISEASE"))], extractor="x", extractor_version="1"
    )
    assert mentions["entity_type"].to_list() == ["PROTEIN", "DISEASE"]
    assert mentions["entity_id"].to_list()[0] == entity_id("PROTEIN", "BRCA1")


def test_a_terminator_counts_on_its_own_line_or_ending_a_record_never_inside_prose():
    echoed = f"Output one record per line, nothing else, then {COMPLETE_TAG} ({COMPLETE_TAG} if more):\n"
    parsed = parse_tuples(echoed + f"entity{D}A{D}PERSON{D}d\n")
    assert [e.name for e in parsed.entities] == ["A"] and not parsed.complete
    assert parse_tuples(echoed + f"entity{D}A{D}PERSON{D}d\n{COMPLETE_TAG}\n").complete
    assert parse_tuples(f"entity{D}A{D}PERSON{D}d{COMPLETE_TAG}").complete


def test_an_answer_cut_by_the_cap_is_never_complete():
    parsed = parse_tuples(f"entity{D}A{D}PERSON{D}d\n{COMPLETE_TAG}", truncated=True)
    assert [e.name for e in parsed.entities] == ["A"]
    assert not parsed.complete and not parsed.nothing_missing and parsed.needs_gleaning


def test_template_lines_are_an_echo_not_records():
    parsed = parse_tuples(templates() + f"\nentity{D}A{D}PERSON{D}d\n{COMPLETE_TAG}")
    assert [e.name for e in parsed.entities] == ["A"] and not parsed.relations and not parsed.attributes
    assert parsed.echoed_lines == 3 and not parsed.bad_lines


@pytest.mark.parametrize("raw", [f"entity{D}A{D}PERSON{D}d\n" * 5, "Intro.\n" + "and the lab " * 40])
def test_an_unfinished_answer_that_repeats_itself_is_degenerate_and_not_gleaned(raw):
    parsed = parse_tuples(raw, truncated=True)
    assert parsed.degenerate and not parsed.needs_gleaning
    assert parse_tuples(raw + f"\n{COMPLETE_TAG}").degenerate is None  # finished: duplicates are merged later
    assert parse_tuples(f"entity{D}A{D}PERSON{D}d\n-----------------------", truncated=True).degenerate is None

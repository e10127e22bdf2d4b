"""Extraction prompts: content, context layout, gleaning requests, cache keys and real token budgets."""

from __future__ import annotations

import bpe_openai
import pytest

from kg_assets.core.extraction.prompts import (
    DEFAULT_ENTITY_TYPES,
    MAX_FAILED_LINES,
    MAX_FOUND_ENTITIES,
    MAX_HEADINGS,
    PROMPT_VERSION,
    build_gleaning_messages,
    build_messages,
    count_message_tokens,
    prompt_hash,
    system_prompt,
)
from kg_assets.core.extraction.tuple_format import COMPLETE, parse_tuples

# A realistic 2,000-character chunk (prose with names, numbers, a list) and a 20-heading document.
_PARAGRAPHS = [
    "Quantum Dynamics Lab (QDL) was founded in 2015 by Dr. Sarah Chen and Marcus Webb in Cambridge, "
    "Massachusetts. The lab started as a spin-off of the Massachusetts Institute of Technology and "
    "focused on error-corrected superconducting qubits for chemistry simulations.",
    "In March 2021 the lab signed a three-year research partnership with Northwind Robotics, a Seattle "
    "company led by CEO Priya Raman. Under the agreement, Northwind provides cryogenic control hardware "
    "while QDL contributes its open-source compiler, Qubitron, which is written in Rust and runs on DuckDB "
    "for experiment tracking.",
    "Sarah Chen, who previously worked at IBM Research in Zurich, serves as chief scientist. Marcus Webb "
    "heads the engineering group of 40 people and manages the lab's second site in Toronto, opened in "
    "2023 with support from the Canadian Institute for Advanced Research.",
    "- Funding: $48 million Series B led by Lakeside Ventures (2022)\n"
    "- Flagship product: the QDL-7 processor, 127 qubits\n"
    "- Conference: results presented at the IEEE Quantum Week 2024 in Montreal",
    "The European Commission later invited QDL to join the Quantum Flagship programme, and Chen testified "
    "before the U.S. Senate Committee on Commerce about export controls for quantum hardware. Critics such "
    "as the Electronic Frontier Foundation argued that the proposed rules would slow academic collaboration.",
    "In 2025 Priya Raman announced that Northwind Robotics would open a joint test facility with QDL in Boston, "
    "and Lakeside Ventures partner Tomás Oliveira joined the QDL board. Analysts at Gartner expect the "
    "partnership to expand into pharmaceutical research with Novartis by 2026, although no contract has "
    "been signed and both companies declined to comment on the size of a possible deal.",
    "Employees describe a flat culture: weekly reading groups, a shared lab notebook in Notion and an "
    "annual retreat in Banff, Alberta, where teams from Cambridge, Toronto and Seattle plan the next year. New hires are paired with a mentor for their first six months.",
]
CHUNK = "\n\n".join(_PARAGRAPHS)
CHUNK = CHUNK[:2000]
HEADINGS = [
    "Quantum Dynamics Lab: Company Profile",
    "History and Founding",
    "Founders and Leadership Team",
    "Research Programmes",
    "Superconducting Qubits",
    "Error Correction Roadmap",
    "Partnerships and Industry Collaborations",
    "Northwind Robotics Agreement",
    "Open-Source Software: Qubitron Compiler",
    "Funding History and Investors",
    "Products and Hardware",
    "International Sites: Toronto and Zurich",
    "Policy, Regulation and Export Controls",
    "Conferences and Publications",
    "Criticism and Public Debate",
    "Outlook for 2026",
    "Appendix A: Timeline",
    "Appendix B: Glossary",
    "References",
    "External Links",
]
SECTION = "Quantum Dynamics Lab: Company Profile > Partnerships and Industry Collaborations"
FOUND = [
    ("Quantum Dynamics Lab", "ORGANIZATION"), ("QDL", "ORGANIZATION"), ("Sarah Chen", "PERSON"),
    ("Marcus Webb", "PERSON"), ("Cambridge", "LOCATION"), ("Massachusetts", "LOCATION"),
    ("Massachusetts Institute of Technology", "ORGANIZATION"), ("Northwind Robotics", "ORGANIZATION"),
    ("Seattle", "LOCATION"), ("Priya Raman", "PERSON"), ("Qubitron", "TECHNOLOGY"), ("Rust", "TECHNOLOGY"),
    ("DuckDB", "TECHNOLOGY"), ("IBM Research", "ORGANIZATION"), ("Zurich", "LOCATION"), ("Toronto", "LOCATION"),
    ("Canadian Institute for Advanced Research", "ORGANIZATION"), ("Lakeside Ventures", "ORGANIZATION"),
    ("QDL-7", "PRODUCT"), ("IEEE Quantum Week 2024", "EVENT"), ("Montreal", "LOCATION"),
    ("European Commission", "ORGANIZATION"), ("Quantum Flagship", "EVENT"),
]
FAILED = [
    "relation<|#|>Sarah Chen<|#|>IBM Research<|#|>worked at<|#|>Chen previously worked at IBM Research in",
    "attribute<|#|>Northwind Robotics<|#|>headquarters",
]

MAX_ATTRIBUTES = 30  # the engine's default cap; the prompt states whatever cap the engine has

FIRST_PASS_BUDGET = 1100
GLEANING_BUDGET = 1300


@pytest.fixture(scope="module")
def enc():
    return bpe_openai.get_encoding("o200k_base")


def tokens(enc, messages) -> int:
    # content tokens + 3 per message + 3 reply priming: OpenAI's accounting for chat requests
    return sum(len(enc.encode_ordinary(m["content"])) + 3 for m in messages) + 3


def test_the_sample_chunk_is_realistic():
    assert len(CHUNK) == 2000
    assert len(HEADINGS) > MAX_HEADINGS


@pytest.mark.parametrize("fmt", ["tuple", "structured"])
def test_token_budgets_with_the_real_tokenizer(enc, fmt):
    first = build_messages(CHUNK, fmt=fmt, max_attributes=MAX_ATTRIBUTES, section_path=SECTION, headings=HEADINGS)
    glean = build_gleaning_messages(
        CHUNK, fmt=fmt, max_attributes=MAX_ATTRIBUTES, found_entities=FOUND, failed_lines=FAILED, section_path=SECTION,
        headings=HEADINGS,
    )
    system_only = tokens(enc, first[:1])
    first_total, glean_total = tokens(enc, first), tokens(enc, glean)
    print(f"\n[{fmt}] system={system_only} first_pass={first_total} gleaning={glean_total}")
    assert first_total <= FIRST_PASS_BUDGET
    assert glean_total <= GLEANING_BUDGET
    assert first_total + glean_total <= 2500
    assert system_only <= 435  # 420 before the example's names were invented ones (rarer words, more tokens)
    assert count_message_tokens(first) == first_total  # the module's counter agrees


def test_gleaning_at_its_caps_still_fits_the_budget(enc):
    many = [(f"Research Partner Organisation {i}", "ORGANIZATION") for i in range(100)] + [
        (f"Person Number {i}", "PERSON") for i in range(100)
    ]
    failed = [f"relation<|#|>A{i}<|#|>B{i}<|#|>" + "x" * 1000 for i in range(50)]
    glean = build_gleaning_messages(
        CHUNK, fmt="tuple", max_attributes=MAX_ATTRIBUTES, found_entities=many, failed_lines=failed,
        section_path=SECTION, headings=HEADINGS,
    )
    user = glean[1]["content"]
    listed = user.count("Research Partner Organisation ")
    assert 0 < listed <= MAX_FOUND_ENTITIES
    assert "Person Number" not in user  # the list is cut in order, not sampled
    assert f"(+{200 - listed} more not listed)" in user
    assert user.count("relation<|#|>A") == MAX_FAILED_LINES
    assert "x" * 250 not in user  # failed lines are clipped
    total = tokens(enc, glean)
    print(f"\n[tuple] gleaning at caps={total}")
    assert total <= GLEANING_BUDGET


def test_found_entities_are_grouped_by_type_and_capped_by_count():
    short = [(f"E{i}", "OTHER") for i in range(100)]
    user = build_gleaning_messages("t", fmt="tuple", max_attributes=MAX_ATTRIBUTES, found_entities=short)[1]["content"]
    assert user.count("; E") == MAX_FOUND_ENTITIES - 1
    assert "(+40 more not listed)" in user


def test_system_prompt_states_types_rules_and_tuple_format():
    system, user = build_messages("Alice met Bob.", fmt="tuple", max_attributes=MAX_ATTRIBUTES)
    assert system["role"] == "system" and user["role"] == "user"
    s = system["content"]
    assert "knowledge graph specialist" in s
    assert ", ".join(DEFAULT_ENTITY_TYPES) in s
    for line in (
        "entity<|#|>NAME<|#|>TYPE<|#|>DESCRIPTION",
        "relation<|#|>SOURCE<|#|>TARGET<|#|>KEYWORDS<|#|>DESCRIPTION<|#|>STRENGTH",
        "attribute<|#|>ENTITY<|#|>KEY<|#|>VALUE<|#|>CONFIDENCE",
        COMPLETE,
    ):
        assert line in s
    for word in ("pronouns", "snake_case", "employer", "founded_year", "0-1"):
        assert word in s
    assert "Alice met Bob." in user["content"]


def test_the_worked_example_parses_with_our_own_parser():
    s = system_prompt("tuple", max_attributes=MAX_ATTRIBUTES)
    example = s[s.index("Output:\n", s.index("Example")) + len("Output:\n"):]
    parsed = parse_tuples(example)
    assert parsed.complete and not parsed.bad_lines
    assert len(parsed.entities) >= 2 and parsed.relations and parsed.attributes
    names = {e.name for e in parsed.entities}
    assert all(r.source in names and r.target in names for r in parsed.relations)
    assert all(e.name in s[s.index("Example"):s.index("Output:\n", s.index("Example"))] for e in parsed.entities)


def test_custom_entity_types_are_listed_and_the_example_is_marked_illustrative():
    types = ["protein", "DISEASE", "LEGAL_TERM"]
    s = build_messages("x", fmt="tuple", max_attributes=MAX_ATTRIBUTES, entity_types=types)[0]["content"]
    assert "Entity types: PROTEIN, DISEASE, LEGAL_TERM (skip entities that fit none)" in s
    assert "illustrative" in s
    default = system_prompt("tuple", max_attributes=MAX_ATTRIBUTES)
    assert "illustrative" not in default and "(OTHER if none fits)" in default
    with pytest.raises(ValueError):
        build_messages("x", fmt="tuple", max_attributes=MAX_ATTRIBUTES, entity_types=[])
    with pytest.raises(ValueError):
        build_messages("x", fmt="json", max_attributes=MAX_ATTRIBUTES)  # type: ignore[arg-type]


def test_structured_prompt_names_fields_without_the_tuple_format():
    s = system_prompt("structured", max_attributes=MAX_ATTRIBUTES)
    assert "<|#|>" not in s and COMPLETE not in s
    for f in ("entities: name, type, description", "relations:", "attributes:", "strength", "confidence"):
        assert f in s


def test_user_message_holds_a_compact_outline_and_the_section_path():
    user = build_messages(CHUNK, fmt="tuple", max_attributes=MAX_ATTRIBUTES, section_path=SECTION,
                          headings=HEADINGS)[1]["content"]
    outline = user.splitlines()[0]
    assert outline.startswith("Document outline: ")
    assert HEADINGS[MAX_HEADINGS - 1] in outline and HEADINGS[MAX_HEADINGS] not in outline
    assert f"(+{len(HEADINGS) - MAX_HEADINGS} more)" in outline
    assert f"Section: {SECTION}" in user
    assert CHUNK in user
    bare = build_messages("Alice met Bob.", fmt="tuple", max_attributes=MAX_ATTRIBUTES)[1]["content"]
    assert "outline" not in bare and "Section" not in bare
    long = build_messages("x", fmt="tuple", max_attributes=MAX_ATTRIBUTES, headings=["H" * 500])[1]["content"]
    assert len(long.splitlines()[0]) < 100  # one absurd heading does not blow the budget


def test_max_attributes_reaches_the_prompt():
    assert "at most 3." in system_prompt("tuple", max_attributes=3)
    assert "at most 3." in build_gleaning_messages("t", fmt="structured", max_attributes=3, found_entities=[])[0]["content"]


def test_gleaning_is_a_fresh_request_listing_what_was_found():
    glean = build_gleaning_messages(
        "Alice met Bob at Acme.", fmt="tuple", max_attributes=MAX_ATTRIBUTES,
        found_entities=[("Alice", "person"), ("Bob", "PERSON"), ("Alice", "PERSON"), ("", "PERSON")],
        failed_lines=FAILED[:1], section_path="Intro",
    )
    assert [m["role"] for m in glean] == ["system", "user"]
    first = build_messages("Alice met Bob at Acme.", fmt="tuple", max_attributes=MAX_ATTRIBUTES)
    assert glean[0] == first[0]  # same system prompt
    user = glean[1]["content"]
    assert "Alice met Bob at Acme." in user and "Section: Intro" in user
    assert "Already extracted:\nPERSON: Alice; Bob\n" in user
    assert user.count("Alice") == 2  # once in the text, once in the list
    assert FAILED[0] in user and "re-emit" in user
    assert f"answer only {COMPLETE}" in user and "ONLY entities, relations and attributes missed" in user
    structured = build_gleaning_messages("t", fmt="structured", max_attributes=MAX_ATTRIBUTES,
                                         found_entities=[("Alice", "PERSON")], failed_lines=FAILED)
    assert "empty lists" in structured[1]["content"]
    assert "re-emit" not in structured[1]["content"]  # no tuple lines in structured mode
    nothing = build_gleaning_messages("t", fmt="tuple", max_attributes=MAX_ATTRIBUTES, found_entities=[])[1]["content"]
    assert "Already extracted" not in nothing and "malformed" not in nothing


def test_prompt_hash_is_a_stable_cache_key():
    msgs = build_messages("Alice met Bob.", fmt="tuple", max_attributes=MAX_ATTRIBUTES)
    params = {"temperature": 0.0, "max_tokens": 1500}
    key = prompt_hash(msgs, "gpt-4o-mini", params)
    assert len(key) == 64 and int(key, 16) >= 0
    reordered = [{"content": m["content"], "role": m["role"]} for m in msgs]
    assert prompt_hash(reordered, "gpt-4o-mini", {"max_tokens": 1500, "temperature": 0.0}) == key
    assert prompt_hash(msgs, "gpt-4o", params) != key
    assert prompt_hash(msgs, "gpt-4o-mini", {**params, "temperature": 0.2}) != key
    assert prompt_hash(msgs, "gpt-4o-mini", {**params, "seed": 1}) != key
    other_text = build_messages("Alice met Carol.", fmt="tuple", max_attributes=MAX_ATTRIBUTES)
    assert prompt_hash(other_text, "gpt-4o-mini", params) != key
    other_format = build_messages("Alice met Bob.", fmt="structured", max_attributes=MAX_ATTRIBUTES)
    assert prompt_hash(other_format, "gpt-4o-mini", params) != key
    other_cap = build_messages("Alice met Bob.", fmt="tuple", max_attributes=MAX_ATTRIBUTES + 1)
    assert prompt_hash(other_cap, "gpt-4o-mini", params) != key
    assert PROMPT_VERSION.startswith("kg-extract-")


def test_prompt_hash_covers_the_prompt_version(monkeypatch):
    from kg_assets.core.extraction import prompts

    msgs = build_messages("Alice met Bob.", fmt="tuple", max_attributes=MAX_ATTRIBUTES)
    before = prompt_hash(msgs, "m", {})
    monkeypatch.setattr(prompts, "PROMPT_VERSION", prompts.PROMPT_VERSION + "-next")
    assert prompts.prompt_hash(msgs, "m", {}) != before

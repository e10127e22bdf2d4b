"""Working memory across a document's chunks (seed 003) and fair scheduling across documents (seed 000),
against the real openai client over HTTP and the local test server."""

import polars as pl
import pytest

from kg_assets.core.extraction.working_memory import WorkingMemory, block_tokens, render
from kg_assets.storage.llm_cache import LLMCache
from kg_assets.extractors.llm.engine import LLMExtractor
from kg_assets.extractors.llm.passes import cached_first_passes
from kg_assets.settings import LLMSettings
from kg_assets.testing.openai_server import FakeOpenAIServer
from kg_assets.testing.scripted_llm import chunk_text, extraction_responder

NAMES = {"Sarah Chen": "PERSON", "Acme Labs": "ORGANIZATION", "Marcus Webb": "PERSON", "Lisbon": "LOCATION"}


def _chunks(documents: dict[str, list[str]], sections: dict[str, list[str | None]] | None = None) -> pl.DataFrame:
    rows = []
    for document_id, texts in documents.items():
        for index, text in enumerate(texts):
            section = (sections or {}).get(document_id, [None] * len(texts))[index]
            rows.append({"chunk_id": f"{document_id}#{index}", "document_id": document_id, "chunk_index": index,
                         "text": text, "section_path": section, "content_hash": f"{document_id}{index}", "headings": []})
    return pl.DataFrame(rows, schema_overrides={"section_path": pl.String, "headings": pl.List(pl.String)})


def _settings(server: FakeOpenAIServer, tmp_path, **kw) -> LLMSettings:
    return LLMSettings(base_url=server.base_url, api_key="test", cache_path=str(tmp_path / "cache.sqlite"), **kw)


def _memory_block(request: dict) -> str:
    user = request["messages"][-1]["content"]
    head = user.split("Text:", 1)[0]
    return head.split("Entities named earlier in this document", 1)[1] if "Entities named earlier" in head else ""


# ---- the pure memory ---------------------------------------------------------------------------------


def test_memory_lists_the_most_recent_entities_that_fit_its_token_budget():
    memory = WorkingMemory(budget_tokens=10_000)
    memory.enter("Intro")
    memory.remember([("Sarah Chen", "PERSON"), ("Acme Labs", "organization")])
    memory.remember([("Lisbon", "LOCATION"), ("sarah chen", "PERSON")])  # named again: most recent, one entry
    assert memory.known() == (("sarah chen", "PERSON"), ("Lisbon", "LOCATION"), ("Acme Labs", "ORGANIZATION"))

    many = [(f"Person Number {i}", "PERSON") for i in range(200)]
    small = WorkingMemory(budget_tokens=60)
    small.enter(None)
    small.remember(many)
    known = small.known()
    assert 0 < len(known) < len(many)
    assert block_tokens(known) <= 60 < block_tokens(known + (many[0],))
    assert known[0] == many[-1]  # newest first
    assert WorkingMemory(budget_tokens=0).known() == ()


def test_a_new_top_level_section_evicts_all_but_the_previous_chunks_entities():
    memory = WorkingMemory(budget_tokens=10_000)
    memory.enter("Part 1")
    memory.remember([("Sarah Chen", "PERSON")])
    memory.enter("Part 1 > Details")  # a subsection is no boundary
    memory.remember([("Acme Labs", "ORGANIZATION")])
    assert {n for n, _ in memory.known()} == {"Sarah Chen", "Acme Labs"}
    memory.enter("Part 2")
    assert memory.known() == (("Acme Labs", "ORGANIZATION"),)  # the bridge into the next section
    memory.remember([("Lisbon", "LOCATION")])
    memory.enter("Part 3")
    assert memory.known() == (("Lisbon", "LOCATION"),)


def test_the_block_groups_names_by_type():
    block = render([("Sarah Chen", "PERSON"), ("Acme Labs", "ORGANIZATION"), ("Marcus Webb", "PERSON")])
    assert block.splitlines()[1:] == ["PERSON: Sarah Chen; Marcus Webb", "ORGANIZATION: Acme Labs"]
    assert render([]) == ""


# ---- the engine --------------------------------------------------------------------------------------


def test_later_chunks_of_a_document_are_told_what_earlier_chunks_named(tmp_path):
    documents = {"report": ["Sarah Chen founded Acme Labs.", "She moved to Lisbon.", "The lab grew."],
                 "other": ["Marcus Webb writes."]}
    with FakeOpenAIServer(responder=extraction_responder(names=NAMES)) as server:
        result = LLMExtractor(_settings(server, tmp_path)).extract(_chunks(documents))
        blocks = {chunk_text(r): _memory_block(r) for r in server.requests}
    assert blocks["Sarah Chen founded Acme Labs."] == ""  # a document's first chunk knows nothing yet
    assert "Sarah Chen" in blocks["She moved to Lisbon."] and "Acme Labs" in blocks["She moved to Lisbon."]
    assert "Lisbon" in blocks["The lab grew."] and "Sarah Chen" in blocks["The lab grew."]
    assert blocks["Marcus Webb writes."] == ""  # memory never crosses documents
    assert result.chunk_status["status"].to_list() == ["ok"] * 4


def test_working_memory_off_sends_no_memory_and_changes_the_extractor_version(tmp_path):
    documents = {"report": ["Sarah Chen founded Acme Labs.", "She moved to Lisbon."]}
    with FakeOpenAIServer(responder=extraction_responder(names=NAMES)) as server:
        settings = _settings(server, tmp_path, working_memory_tokens=0)
        LLMExtractor(settings).extract(_chunks(documents))
        assert all(_memory_block(r) == "" for r in server.requests)
    assert LLMExtractor(settings).version != LLMExtractor(settings.model_copy(update={"working_memory_tokens": 200})).version


def test_a_rerun_sends_the_same_prompts_so_every_chunk_is_a_cache_hit(tmp_path):
    documents = {"report": ["Sarah Chen founded Acme Labs.", "She moved to Lisbon.", "The lab grew."]}
    chunks = _chunks(documents, {"report": ["Part 1", "Part 1", "Part 2"]})
    with FakeOpenAIServer(responder=extraction_responder(names=NAMES)) as server:
        settings = _settings(server, tmp_path)
        first = LLMExtractor(settings).extract(chunks)
        sent = server.calls
        again = LLMExtractor(settings).extract(chunks)
        assert server.calls == sent == 3
    assert again.calls["status"].to_list() == ["cache_hit"] * 3
    assert again.mentions.sort("mention_id").equals(first.mentions.sort("mention_id"))
    engine = LLMExtractor(settings)
    with LLMCache(settings.cache_path) as cache:  # what `kg estimate` counts as already cached
        assert cached_first_passes(engine, list(chunks.iter_rows(named=True)), cache) == [True, True, True]
        changed = chunks.with_columns(pl.when(pl.col("chunk_index") == 1).then(pl.lit("She moved to Porto."))
                                      .otherwise("text").alias("text"))
        # The changed chunk misses, and so does the chunk after it: its memory would come from a new answer.
        assert cached_first_passes(engine, list(changed.iter_rows(named=True)), cache) == [True, False, False]


@pytest.mark.parametrize("memory_tokens", [200, 0], ids=["working memory", "no working memory"])
def test_a_short_document_is_not_queued_behind_a_long_one(tmp_path, memory_tokens):
    """Seed 000's fairness: with 4 slots, a 40-chunk document made first must not take every slot before
    a 2-chunk document starts (before: its requests were numbers 41 and 42 of 42)."""
    documents = {"long": [f"Sarah Chen wrote part {i}." for i in range(40)],
                 "short": ["Marcus Webb replied.", "Marcus Webb moved to Lisbon."]}
    with FakeOpenAIServer(responder=extraction_responder(names=NAMES), latency_s=0.02) as server:
        settings = _settings(server, tmp_path, concurrency=4, working_memory_tokens=memory_tokens)
        chunks = _chunks(documents)
        result = LLMExtractor(settings).extract(chunks)
        order = [chunk_text(r) for r in server.requests]  # the order the server received them
    assert result.chunk_status["chunk_id"].to_list() == chunks["chunk_id"].to_list(), "rows keep the chunks' order"
    assert len(order) == 42
    short_positions = [order.index(text) + 1 for text in documents["short"]]
    assert max(short_positions) <= 4, short_positions


# ---- what the model is shown: only names that made rows ----------------------------------------------


def _found_block(request: dict) -> str:
    user = request["messages"][-1]["content"]
    return user.split("Already extracted:", 1)[1].split("Give ONLY", 1)[0] if "Already extracted:" in user else ""


def test_memory_and_gleaning_list_only_names_that_made_rows(tmp_path):
    """A name the run dropped (a pronoun, a name not in the chunk, a nationality word, a role word) is never
    shown to the model again, and a titled name is shown as the person its row names."""
    from kg_assets.testing.openai_server import Reply
    from kg_assets.testing.scripted_llm import is_gleaning

    first = "US President Barack Obama met the Editor and a Syrian delegation in Lisbon."
    second = "The talks went on."
    d = "<|#|>"
    answer = "\n".join([
        f"entity{d}US President Barack Obama{d}PERSON{d}The president.",  # row: the PERSON Barack Obama
        f"entity{d}Lisbon{d}LOCATION{d}A city.",  # kept as it is
        f"entity{d}She{d}PERSON{d}A pronoun.",  # sanitize drops a pronoun
        f"entity{d}Atlantis Corp{d}ORGANIZATION{d}Not in this text.",  # not in the chunk: no row
        f"entity{d}Syrian{d}ORGANIZATION{d}A nationality word.",  # a demonym: no row
        f"entity{d}Editor{d}PERSON{d}A role word.",  # a role word alone: no row
        f"relation{d}Barack Obama{d}Lisbon{d}visited{d}He was there.{d}0.9",
        "<|COMPLETE|>",
    ])

    def responder(request: dict):
        text = chunk_text(request)
        if is_gleaning(request) or text != first:
            return Reply(content="<|COMPLETE|>")
        return Reply(content=answer)

    with FakeOpenAIServer(responder=responder) as server:
        settings = _settings(server, tmp_path, gleaning="always", max_gleanings=1)
        result = LLMExtractor(settings).extract(_chunks({"doc": [first, second]}))
        requests = server.requests
    assert sorted(result.mentions["name"].to_list()) == ["Barack Obama", "Lisbon"]

    gleaning = [r for r in requests if is_gleaning(r) and chunk_text(r) == first]
    memory = [r for r in requests if not is_gleaning(r) and chunk_text(r) == second]
    assert len(gleaning) == 1 and len(memory) == 1
    for shown in (_found_block(gleaning[0]), _memory_block(memory[0])):
        assert _listed(shown) == {("PERSON", "Barack Obama"), ("LOCATION", "Lisbon")}, shown
        for dropped in ("US President", "She", "Atlantis", "Syrian", "Editor"):
            assert dropped not in shown, (dropped, shown)


def _listed(block: str) -> set[tuple[str, str]]:
    """(type, name) of a block's "TYPE: name; name" lines."""
    return {(t, n.strip()) for line in block.splitlines() if ": " in line and line.split(": ", 1)[0].isupper()
            for t, names in [line.split(": ", 1)] for n in names.split(";")}

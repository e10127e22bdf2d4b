"""Seed 002's searchMemories: `kg search --memories N` / `KnowledgeGraph.search(memories=N)` returns the documents
and chat messages linked to the matching entities, attribute-linked (1.0) before mention-linked (0.7), each with
the snippet that links it. On the built sample warehouse, through the real query layer and CLI."""

from kg_assets.query import KnowledgeGraph


def _attribute_sources(built, entity_id: str, key: str | None = None) -> set[str]:
    rows = built.sql("SELECT DISTINCT unnest(source_document_ids) AS d FROM kg.entity_attributes "
                     "WHERE valid_until IS NULL AND entity_id = $id AND ($key IS NULL OR attr_key = $key)",
                     id=entity_id, key=key)
    return set(rows["d"])


def test_attribute_linked_memories_come_before_mention_linked_ones(built):
    result = KnowledgeGraph(built.warehouse).search("entity:Sarah Chen", limit=1, memories=50)
    (hit,) = result.hits
    memories = result.memories
    scores = [m.score for m in memories]
    assert scores == sorted(scores, reverse=True) and set(scores) == {1.0, 0.7}
    linked = [m for m in memories if m.score == 1.0]
    assert {m.source for m in linked} == {"entity_attr"} and all(" = " in m.why for m in linked)
    assert {m.document_id for m in linked} == _attribute_sources(built, hit.entity_id)
    mentioned = [m for m in memories if m.score == 0.7]
    assert {m.source for m in mentioned} == {"keyword"} and all(m.why.startswith("mentions ") for m in mentioned)
    # an attribute link is never replaced by a mention: one memory per document (or message)
    keys = [(m.document_id, m.message_id) for m in memories]
    assert len(keys) == len(set(keys))
    assert not {m.document_id for m in mentioned} & {m.document_id for m in linked}
    documents = built.sql("SELECT DISTINCT document_id FROM kg.entity_mentions m LEFT JOIN kg.entity_aliases a "
                          "ON a.from_id = m.entity_id WHERE coalesce(a.to_id, m.entity_id) = $id", id=hit.entity_id)
    assert {m.document_id for m in memories} == set(documents["document_id"]) | {m.document_id for m in linked}
    # the snippet shows the value that links it where the chunk writes it so (a value linked to an entity is
    # stored under the entity's name: "Quantum Dynamics Lab" read from "QDL" shows the chunk's start)
    assert any(m.why.split(" = ", 1)[1].lower() in m.snippet.lower() for m in linked)
    assert KnowledgeGraph(built.warehouse).search("entity:Sarah Chen", limit=1).memories == []


def test_an_attr_query_links_the_documents_its_key_was_read_from(built):
    result = KnowledgeGraph(built.warehouse).search("attr:employer=Northwind Robotics", memories=100)
    assert result.hits
    linked = [m for m in result.memories if m.score == 1.0]
    assert linked and all(m.why.startswith("employer = ") for m in linked)
    sources = set().union(*(_attribute_sources(built, h.entity_id, "employer") for h in result.hits))
    assert {m.document_id for m in linked} <= sources


def test_memories_in_a_chat_log_are_its_messages(built):
    result = KnowledgeGraph(built.warehouse).search("entity:Ana Ribeiro", limit=1, memories=20)
    in_chat = [m for m in result.memories if m.document_id.startswith("chat/")]
    assert len(in_chat) > 1 and all(m.message_id for m in in_chat)
    content = dict(built.sql("SELECT message_id, content FROM kg.messages WHERE valid_until IS NULL").iter_rows())
    for m in in_chat:
        assert m.snippet.rstrip("…") in content[m.message_id] or content[m.message_id].startswith(m.snippet[:60])


def test_kg_search_prints_the_memories(built, kg_cli):
    out = kg_cli("search", "entity:Sarah Chen", "--limit", "1", "--memories", "3", "--db", built.warehouse.path)
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    at = lines.index("Memories (3: linked by an attribute value 1.0, by a mention 0.7)")
    assert lines[at + 1].startswith("  1.00  [") and lines[at + 2].strip().startswith('"')
    assert "Memories" not in kg_cli("search", "entity:Sarah Chen", "--db", built.warehouse.path).stdout

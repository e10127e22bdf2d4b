"""`kg context`: the entities a text names, as a bounded block for a prompt (no LLM call).

Finding entities. Every run of up to `linking.MAX_TOKENS` words of the text is keyed the way the
pipeline keys names: its normalized name (`normalize_name`) and its linking key (`with_name_keys`:
honorifics, corporate suffixes, possessives, dotted initials folded). A run matches a current entity
when a key equals the key of the entity's name or of one of its aliases (the names linking merged into
it). A run must be written as a name (it starts with a capital or a digit) unless it spells a name
exactly, and matched runs do not overlap: the longest wins, so "Quantum Dynamics Lab" is not also
"Dynamics Lab".

Relevance, in this order: how often the text names the entity, how many of the other named entities
it is related to, how often the corpus mentions it.

The block has three sections: the entities with their current attributes (or those valid at as_of),
the strongest relations among them, and source snippets (the chunks that mention the most of them,
newest first, one per document) with their document ids. It holds at most `max_tokens` tokens of the
project's offline tokenizer (o200k): entities may take 45% of the budget, relations up to 70% with
them, sources the rest; budget one section leaves unused goes to the next, then to whatever is left.
Snippets shrink with the budget (to about two per sources' share), down to 60 characters.
"""

from __future__ import annotations

from datetime import datetime

import polars as pl

from kg_assets.core.chunking import ChunkingConfig
from kg_assets.core.tokens import count_tokens as count_encoded
from kg_assets.core.linking.name_keys import MAX_TOKENS
from kg_assets.core.normalize import normalize_name_expr
from kg_assets.query import matching
from kg_assets.query.lookup import link_keys
from kg_assets.query.models import ContextBlock, ContextEntity
from kg_assets.storage.graph_reads import GraphReads

SECTION_SHARES = (0.45, 0.70, 1.0)  # cumulative budget shares: entities, + relations, + sources
MAX_ENTITIES = 30
MAX_RELATIONS = 40
MIN_SNIPPET_CHARS = 60
SOURCE_LINE_OVERHEAD = 12  # tokens of a source line besides its snippet: the document id, quotes


def count_tokens(text: str) -> int:
    return count_encoded(text, ChunkingConfig().encoding)


def find_entities(reads: GraphReads, text: str) -> pl.DataFrame:
    """entity_id, mentions_in_text for every current entity the text names."""
    spans = matching.text_spans(text, MAX_TOKENS)
    if spans.height == 0:
        return pl.DataFrame(schema={"entity_id": pl.String, "mentions_in_text": pl.Int64})
    spans = spans.with_columns(normalize_name_expr(pl.col("text")).alias("norm_key"),
                               pl.col("text").str.contains(r"^[\p{Lu}\p{N}]").alias("name_like"))
    # Only runs written as names are matched by linking key; any run may spell a name exactly (norm_key).
    names = spans.filter("name_like").with_columns(pl.lit("OTHER").alias("entity_type"))
    spans = spans.join(names.select("span_id", link_keys(names, "text", "entity_type").alias("link_key")),
                       on="span_id", how="left").with_columns(pl.col("link_key").fill_null(""))
    matches = reads.span_matches(spans.select("span_id", "norm_key", "link_key")).join(spans, on="span_id")
    named = matches.filter(pl.col("name_like") | (pl.col("text") == pl.col("surface")))
    # A name several entities carry is read as a typed one before one typed OTHER, then the one the
    # corpus mentions most.
    read_as = (matching.pick_spans(named)
               .with_columns((pl.col("entity_type") == "OTHER").alias("_untyped"))
               .sort(["span_id", "_untyped", "mention_count", "entity_id"], descending=[False, False, True, False])
               .unique("span_id", keep="first"))
    return (read_as.group_by("entity_id").agg(pl.len().cast(pl.Int64).alias("mentions_in_text"))
            .sort("entity_id"))


def rank_entities(found: pl.DataFrame, cards: pl.DataFrame, edges: pl.DataFrame) -> pl.DataFrame:
    """Found entities with their cards and links_in_text, most relevant first."""
    links = pl.concat([edges.select(pl.col("source_id").alias("entity_id"), pl.col("target_id").alias("other")),
                       edges.select(pl.col("target_id").alias("entity_id"), pl.col("source_id").alias("other"))])
    links = links.group_by("entity_id").agg(pl.col("other").n_unique().cast(pl.Int64).alias("links_in_text"))
    return (found.join(cards, on="entity_id").join(links, on="entity_id", how="left")
            .with_columns(pl.col("links_in_text").fill_null(0))
            .sort(["mentions_in_text", "links_in_text", "mention_count", "name", "entity_id"],
                  descending=[True, True, True, False, False]))


def _entity_line(row: dict) -> str:
    attributes = "; ".join(f"{a['key']} = {a['value']}" for a in row["attributes"])
    return f"- {row['name']} ({row['entity_type']})" + (f": {attributes}" if attributes else "")


def _relation_line(row: dict, names: dict[str, str]) -> str:
    keywords = f"; {', '.join(row['keywords'][:4])}" if row["keywords"] else ""
    return (f"- {names[row['source_id']]} -[{row['relation_type']}]-> {names[row['target_id']]} "
            f"(weight {row['weight']}{keywords})")


def _fill(sections: list[list[str]], budget: int) -> list[list[int]]:
    """Which lines of each section fit: each section first up to its cumulative share, then leftovers."""
    chosen: list[list[int]] = [[] for _ in sections]
    used = 0
    for cap in [[int(share * budget) for share in SECTION_SHARES], [budget] * len(sections)]:
        for s, lines in enumerate(sections):
            for i, line in enumerate(lines):
                cost = count_tokens(line) + 1
                if i not in chosen[s] and used + cost <= cap[s]:
                    chosen[s].append(i)
                    used += cost
    return [sorted(c) for c in chosen]


def _render(header: str, sections: list[list[str]], chosen: list[list[int]]) -> str:
    titles = ("Entities", "Relations", "Sources")
    parts = [header]
    for title, lines, keep in zip(titles, sections, chosen):
        if keep:
            parts += [f"## {title}", *(lines[i] for i in keep)]
    return "\n".join(parts)


def _header(counts: list[int], as_of: datetime | None) -> str:
    when = f" as of {as_of.isoformat()}" if as_of else ""
    nouns = (("entity", "entities"), ("relation", "relations"), ("source", "sources"))
    said = ", ".join(f"{n} {one if n == 1 else many}" for n, (one, many) in zip(counts, nouns, strict=True))
    return f"# Knowledge graph context{when}: {said}"


def _source_lines(reads: GraphReads, ranked: pl.DataFrame, max_sources: int, snippet_chars: int) -> list[str]:
    """One snippet per document from the chunks that mention the most of the entities, around the most
    relevant entity each chunk names."""
    names = dict(ranked.select("entity_id", "name").iter_rows())
    lines: list[str] = []
    documents: set[str] = set()
    for chunk in reads.shared_chunks(list(names), max_sources * 4).iter_rows(named=True):
        if chunk["document_id"] in documents or len(lines) == max_sources:
            continue
        documents.add(chunk["document_id"])
        around = [names[e] for e in names if e in set(chunk["entity_ids"])]
        lines.append(f'- [{chunk["document_id"]}] "{matching.snippet(chunk["text"], around, snippet_chars)}"')
    return lines


def build_context(reads: GraphReads, text: str, *, max_tokens: int, as_of: datetime | None, max_sources: int,
                  snippet_chars: int) -> ContextBlock:
    if max_tokens < 32:
        raise ValueError("max_tokens must be at least 32")
    found = find_entities(reads, text)
    ids = found["entity_id"].to_list()
    edges = reads.edges_among(ids).head(MAX_RELATIONS)
    ranked = rank_entities(found, reads.entity_cards(ids, as_of), edges)
    names = dict(ranked.select("entity_id", "name").iter_rows())
    # Small budgets get shorter snippets: about two source lines fit the sources' share (~4 characters a token).
    line_tokens = (1 - SECTION_SHARES[1]) * max_tokens / 2 - SOURCE_LINE_OVERHEAD
    width = max(MIN_SNIPPET_CHARS, min(snippet_chars, int(4 * line_tokens)))
    sections = [
        [_entity_line(r) for r in ranked.head(MAX_ENTITIES).iter_rows(named=True)],
        [_relation_line(e, names) for e in edges.iter_rows(named=True)],
        _source_lines(reads, ranked, max_sources, width) if ids else [],
    ]
    reserve = count_tokens(_header([len(s) for s in sections], as_of)) + 1
    chosen = _fill(sections, max_tokens - reserve)
    block = _render(_header([len(c) for c in chosen], as_of), sections, chosen)
    while count_tokens(block) > max_tokens and any(chosen):
        # Token merges across line breaks can differ from the per-line count: drop the last line until it fits.
        chosen[max(s for s, c in enumerate(chosen) if c)].pop()
        block = _render(_header([len(c) for c in chosen], as_of), sections, chosen)
    entities = [ContextEntity(**{k: r[k] for k in ("entity_id", "name", "entity_type", "mentions_in_text",
                                                    "links_in_text", "mention_count")},
                              attributes={a["key"]: a["value"] for a in r["attributes"]})
                for r in ranked.iter_rows(named=True)]
    return ContextBlock(text=block, tokens=count_tokens(block), max_tokens=max_tokens, entities=entities,
                        included_entities=len(chosen[0]), included_relations=len(chosen[1]),
                        included_sources=len(chosen[2]))

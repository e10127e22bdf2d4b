"""`kg eval extraction` and `kg eval linking` (and, from their modules, `kg eval facts` and `kg eval graph`):
quality on annotated data (shared/eval formats)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from kg_assets.commands import eval_graph, facts
from kg_assets.commands.common import load_settings


def register(subparsers) -> None:
    evaluate = subparsers.add_parser("eval", help="evaluate extraction, linking, user facts or the whole graph "
                                                  "on annotated data")
    what = evaluate.add_subparsers(dest="what", required=True)
    extraction = what.add_parser("extraction", help="entity and relation P/R/F1 on DOCS.jsonl")
    extraction.add_argument("docs", help="documents with gold entities and relations (shared/eval format)")
    extraction.add_argument("--limit", type=int, help="only the first N documents")
    extraction.set_defaults(func=extraction_command)

    linking = what.add_parser("linking", help="pairwise and B-cubed P/R/F1 of entity linking on MENTIONS.jsonl")
    linking.add_argument("mentions", help="mentions with gold clusters, or documents with gold entities (shared/eval formats)")
    linking.add_argument("--out", help="write one {mention_id, cluster} line per mention here")
    linking.add_argument("--per-document", action="store_true",
                         help="link each document on its own (for gold that only clusters within documents)")
    linking.set_defaults(func=linking_command)
    facts.register_eval(what)
    eval_graph.register_eval(what)


def extraction_command(args: argparse.Namespace) -> int:
    """Extraction quality on annotated documents (shared/eval format): last line is one JSON object."""
    settings = load_settings(args)
    import json

    import polars as pl

    from kg_assets.core.chunking import chunk_documents
    from kg_assets.evaluation.extraction import score_document, summarize
    from kg_assets.core.linking import apply_redirects
    from kg_assets.extractors.factory import build_extractor, describe_extractor
    started = time.perf_counter()
    gold = [json.loads(line) for line in Path(args.docs).read_text().splitlines() if line.strip()]
    gold = gold[: args.limit] if args.limit else gold
    extractor = settings.extractor
    engine = build_extractor(extractor, run_id=f"eval-{int(time.time())}")
    docs = pl.DataFrame({
        "document_id": [str(d["doc_id"]) for d in gold], "text": [d["text"] for d in gold], "status": ["ok"] * len(gold),
        "headings": [[] for _ in gold],
    })
    chunks = chunk_documents(docs, settings.ingest.chunking()).join(docs.select("document_id", "headings"), on="document_id")
    print(f"kg eval extraction: {len(gold)} documents, {chunks.height} chunks, {describe_extractor(extractor, engine)}", file=sys.stderr)
    result = engine.extract(chunks)
    linker = configured_linker(settings)
    counts = []
    for doc in gold:
        mentions = result.mentions.filter(pl.col("document_id") == str(doc["doc_id"]))
        redirects = linker.link(mentions)
        linked = apply_redirects(mentions, redirects, ["entity_id"])
        entities = linked.group_by("entity_id").agg(pl.col("normalized_name").first(), pl.col("entity_type").first())
        relations = apply_redirects(result.relations.filter(pl.col("document_id") == str(doc["doc_id"])), redirects,
                                    ["source_id", "target_id"])
        counts.append(score_document(doc, entities, relations))
    calls = result.calls.filter(pl.col("status") != "cache_hit")
    summary = {
        **summarize(counts),
        "documents": len(gold),
        "extractor": engine.name,
        "extractor_version": engine.version,
        "linker_version": linker.version,
        "llm_calls": calls.height,
        "cache_hits": result.calls.height - calls.height,
        "prompt_tokens": int(calls["prompt_tokens"].sum() or 0),
        "completion_tokens": int(calls["completion_tokens"].sum() or 0),
        "seconds": round(time.perf_counter() - started, 2),
    }
    print(json.dumps(summary))
    return 0


def configured_linker(settings):
    """The linker the pipeline would use (KG_LINKER: the name rules or a plug-in), so an eval scores what runs."""
    from kg_assets.defs.resources import GraphResource

    return GraphResource(**settings.graph.model_dump()).build_linker()


def linking_command(args: argparse.Namespace) -> int:
    """Linking quality on annotated mentions: writes one cluster per mention, last line is one JSON object."""
    import json

    from kg_assets.evaluation.linking import link_eval_mentions, read_mentions, redocred_mentions, score_linking

    linker = configured_linker(load_settings(args))
    first = json.loads(Path(args.mentions).open().readline())
    # Documents with gold entities (Re-DocRED format) give within-document clusters: link per document.
    per_document = args.per_document or "entities" in first
    mentions = redocred_mentions(args.mentions) if "entities" in first else read_mentions(args.mentions)
    scores = {**score_linking(mentions, linker, per_document=per_document), "linker": linker.name,
              "linker_version": linker.version}
    if args.out:
        clusters = link_eval_mentions(mentions, linker, per_document=per_document)
        with open(args.out, "w") as out:
            for mention_id, cluster in clusters.select("mention_id", "cluster").iter_rows():
                out.write(json.dumps({"mention_id": mention_id, "cluster": cluster}) + "\n")
    print(json.dumps(scores))
    return 0

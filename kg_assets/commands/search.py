"""`kg search | show | context | export | picture`: the graph without SQL (all on `kg_assets.query`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import datetime

from kg_assets.commands.common import add_db_option, load_settings
from kg_assets.query import EntityNotFound, EntitySearchOff, KnowledgeGraph, WarehouseNotBuilt
from kg_assets.query.export import FORMATS
from kg_assets.query.matching import DEFAULT_LIMIT
from kg_assets.query.models import EntityProfile, SearchResult
from kg_assets.storage.warehouse import Warehouse


def _day(moment: datetime | None) -> str:
    return moment.date().isoformat() if moment else "now"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _attributes(values: dict[str, str]) -> str:
    return "; ".join(f"{k} = {v}" for k, v in values.items())


def format_search(result: SearchResult) -> str:
    when = f" as of {result.as_of.isoformat()}" if result.as_of else ""
    lines = [f'kg search "{result.query}"{when}: {_count(len(result.hits), "hit")}']
    for hit in result.hits:
        lines.append(f"  {hit.score:.2f}  {hit.name}  [{hit.entity_type}]  {hit.entity_id}")
        lines.append(f"        {hit.match}: {hit.why}")
        facts = _attributes(hit.attributes)
        lines.append(f"        {_count(hit.mention_count, 'mention')} in {_count(hit.document_count, 'document')}"
                     + (f"; {facts}" if facts else ""))
    if result.memories:
        lines.append(f"Memories ({len(result.memories)}: linked by an attribute value 1.0, by a mention 0.7)")
    for m in result.memories:
        where = f"{m.document_id} message {m.message_id}" if m.message_id else m.document_id
        lines.append(f"  {m.score:.2f}  [{where}] {_day(m.document_time)}  {m.entity_name}: {m.why}")
        lines.append(f"        \"{m.snippet}\"")
    return "\n".join(lines)


def format_profile(profile: EntityProfile) -> str:
    p = profile
    lines = [f"{p.name}  [{p.entity_type}]  {p.entity_id}",
             f"  {_count(p.mention_count, 'mention')} in {_count(p.document_count, 'document')}, "
             f"{_count(p.degree, 'relation')}; "
             f"first seen {_day(p.first_seen)}, last seen {_day(p.last_seen)}"]
    if p.also_named:
        lines.append(f"  (the name also names: {'; '.join(p.also_named)})")
    if p.description:
        lines.append(f"  {p.description[:300]}")
    lines.append("Aliases (surface form, mentions, how it was linked)")
    # One line per surface form: several extracted ids may carry it ("QDL" typed OTHER and ORGANIZATION), each
    # linked its own way; --json keeps one row per id.
    by_form: dict[str, list] = {}
    for a in p.aliases:
        by_form.setdefault(a.alias, []).append(a)
    for form, rows in by_form.items():
        hows = list(dict.fromkeys("its own id" if a.method is None else f"{a.method} {a.score:.2f}: {a.evidence}"
                                  for a in rows))
        lines.append(f"  {form}  ({sum(a.mentions for a in rows)})  {'; '.join(hows)}")
    lines.append("Attributes" + (f" ({_attributes(p.attributes)})" if p.attributes else ": none"))
    for h in p.attribute_history:
        lines.append(f"  {h.key} = {h.value}  {_day(h.valid_from)} .. {_day(h.valid_until)}"
                     f"{'  (current)' if h.is_current else ''}  from {', '.join(h.source_document_ids)}")
    for direction, arrow in (("out", "->"), ("in", "<-")):
        shown = [r for r in p.relations if r.direction == direction]
        lines.append(f"Relations {direction} ({len(shown)} of {p.relations_total[direction]}, strongest first)")
        for r in shown:
            keywords = f"; {', '.join(r.keywords[:4])}" if r.keywords else ""
            lines.append(f"  {arrow} [{r.relation_type}] {r.other_name} ({r.other_type})  weight {r.weight}{keywords}")
    lines.append(f"Sources ({len(p.sources)} of {p.documents_total} documents, newest first)")
    for s in p.sources:
        lines.append(f"  [{s.document_id}] {_day(s.document_time)}  {s.title or ''}")
        lines.append(f"     \"{s.snippet}\"")
    if p.neighbourhood is not None:
        hops = max((n.hop or 0) for n in p.neighbourhood.nodes)
        lines.append(f"Neighbourhood: {len(p.neighbourhood.nodes)} entities within {hops} hops, "
                     f"{len(p.neighbourhood.edges)} relations among them")
        for hop in range(1, hops + 1):
            names = [f"{n.label} ({n.entity_type})" for n in p.neighbourhood.nodes if n.hop == hop]
            lines.append(f"  hop {hop}: {', '.join(names)}")
    return "\n".join(lines)


def _run(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Bad input exits 2 and a missing warehouse or entity, or entity search turned off, exits 1, each with one
    clear line."""
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except ValueError as exc:
            print(f"kg {args.command}: {exc}", file=sys.stderr)
            return 2
        except (EntityNotFound, WarehouseNotBuilt, EntitySearchOff) as exc:
            print(f"kg {args.command}: {exc}", file=sys.stderr)
            return 1
    return run


def _db(args: argparse.Namespace) -> Warehouse:
    """The warehouse `kg run` writes: the DuckLake when KG_WAREHOUSE_BACKEND selects it, else --db, else
    KG_DUCKDB_PATH, else the default file."""
    return Warehouse.from_settings(load_settings(args).warehouse)


def _graph(args: argparse.Namespace) -> KnowledgeGraph:
    settings = load_settings(args)
    return KnowledgeGraph(Warehouse.from_settings(settings.warehouse), entity_search=settings.search.entity_search_enabled)


def _json(model) -> str:
    return json.dumps(model.model_dump(mode="json"), ensure_ascii=False, indent=2)


@_run
def cmd_search(args: argparse.Namespace) -> int:
    result = _graph(args).search(" ".join(args.query), types=args.type or (), limit=args.limit,
                                 as_of=args.as_of, memories=args.memories)
    print(_json(result) if args.json else format_search(result))
    return 0


@_run
def cmd_show(args: argparse.Namespace) -> int:
    from kg_assets.query.picture import render_subgraph

    with _graph(args) as kg:
        hops = args.hops if args.hops or not args.svg else 1
        profile = kg.profile(" ".join(args.entity), hops=hops, as_of=args.as_of, max_relations=args.relations,
                             max_sources=args.sources)
    if args.svg:
        render_subgraph(profile.neighbourhood, args.svg, title=f"{profile.name} ({profile.entity_type}), {hops} hop(s)")
    print(_json(profile) if args.json else format_profile(profile))
    if args.svg:
        print(f"picture: {args.svg}", file=sys.stderr)
    return 0


@_run
def cmd_context(args: argparse.Namespace) -> int:
    if args.file:
        text = open(args.file, encoding="utf-8").read()
    elif args.text == ["-"]:
        text = sys.stdin.read()
    else:
        text = " ".join(args.text)
    if not text.strip():
        raise ValueError("no text: give TEXT, - (standard input) or --file FILE")
    block = _graph(args).context(text, max_tokens=args.max_tokens, as_of=args.as_of,
                                            max_sources=args.sources)
    print(_json(block) if args.json else block.text)
    return 0


@_run
def cmd_export(args: argparse.Namespace) -> int:
    result = _graph(args).export(args.format, args.out, as_of=args.as_of)
    when = f" as of {result.as_of.isoformat()}" if result.as_of else ""
    print(f"kg export {result.format}{when}: {result.nodes:,} nodes, {result.edges:,} edges, "
          f"{result.provenance_edges:,} EXTRACTED_FROM edges to {result.chunks:,} chunks -> {', '.join(result.paths)}")
    return 0


@_run
def cmd_picture(args: argparse.Namespace) -> int:
    from kg_assets.query.picture import render_core

    print(f"picture: {render_core(_db(args), args.out, top=args.top)}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    def command(name: str, help: str, func) -> argparse.ArgumentParser:
        parser = subparsers.add_parser(name, help=help, description=help)
        add_db_option(parser)
        parser.set_defaults(func=func)
        return parser

    def as_of(parser: argparse.ArgumentParser, what: str) -> None:
        parser.add_argument("--as-of", metavar="TIMESTAMP", help=f"{what} (ISO date or timestamp, UTC if no zone)")

    search = command("search", "search entities: entity:NAME, attr:KEY=VALUE, attr:KEY, or a bare name", cmd_search)
    search.add_argument("query", nargs="+", help="e.g. entity:Sarah, attr:employer=QDL, attr:role, Sarah Chen")
    search.add_argument("--type", action="append", metavar="TYPE", help="only entities of this type (repeatable)")
    search.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help=f"most hits to return (default {DEFAULT_LIMIT})")
    search.add_argument("--memories", type=int, default=0, metavar="N",
                        help="also the N documents or chat messages linked to the hits: by an attribute value read "
                             "from them (1.0) before those mentioning them (0.7)")
    as_of(search, "attributes valid at this time instead of the current ones")
    search.add_argument("--json", action="store_true", help="print JSON")

    show = command("show", "profile of one entity: aliases and why, attributes and history, relations, sources",
                   cmd_show)
    show.add_argument("entity", nargs="+", help="entity id, name or alias")
    show.add_argument("--hops", type=int, default=0, help="add the neighbourhood within N hops")
    show.add_argument("--relations", type=int, default=20, help="relations listed per direction (default 20)")
    show.add_argument("--sources", type=int, default=5, help="source documents listed (default 5)")
    show.add_argument("--svg", metavar="FILE", help="draw the neighbourhood to FILE (.svg or .png; 1 hop unless --hops)")
    as_of(show, "attributes valid at this time")
    show.add_argument("--json", action="store_true", help="print JSON")

    context = command("context", "context block for a prompt on the entities a text names (no LLM call)", cmd_context)
    context.add_argument("text", nargs="*", help="the text, or - to read standard input")
    context.add_argument("--file", help="read the text from FILE")
    context.add_argument("--max-tokens", type=int, default=800, help="token budget of the block (default 800)")
    context.add_argument("--sources", type=int, default=5, help="source snippets at most (default 5)")
    as_of(context, "attributes valid at this time")
    context.add_argument("--json", action="store_true", help="print JSON (block, entities, counts)")

    export = command("export", "write the graph as GraphML, node-link JSON, Neo4j import CSV or Parquet", cmd_export)
    export.add_argument("format", choices=FORMATS)
    export.add_argument("out", help="file (graphml, json) or folder (neo4j, parquet)")
    as_of(export, "the graph as the documents dated up to this time describe it")

    picture = command("picture", "draw the graph's most connected core to an SVG or PNG file", cmd_picture)
    picture.add_argument("out", help="FILE.svg or FILE.png")
    picture.add_argument("--top", type=int, default=25, help="entities of highest degree to draw (default 25)")

"""Search, context and export speed on a built warehouse (`kg_assets.query`).

    .venv/bin/python benchmarks/search.py --db /tmp/…/warehouse.duckdb [--queries 200] [--seed 0]
                                          [--lookup stored|memory] [--export-dir DIR]

Queries are drawn from the warehouse's own data (seeded): `entity:` queries from current entity names
(a third the full name, a third a prefix of it, a third the name with one letter dropped, which takes
the fuzzy path), `attr:` queries from current attribute values (`attr:key=value`, and `attr:key`), and
context texts from chunk texts, cut to 2,000 characters. Each kind runs `--queries` times through one
open `KnowledgeGraph` (a notebook or a service), after two warm-up calls; then 50 `entity:` queries
with a connection opened per call (what one `kg search` process does besides starting Python); then
the whole graph is exported once per format.

`--lookup stored` (default) first builds kg.entity_lookup with `refresh_entity_lookup` (timed: the
pipeline's cost) on the file itself, which must not be in use; `--lookup memory` leaves the file alone
and every connection builds the lookup in memory.

Prints a Markdown table (p50 / p95 / max in ms) and writes benchmarks/out/search.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"

from kg_assets.query import KnowledgeGraph, refresh_entity_lookup  # noqa: E402
from kg_assets.query.export import FORMATS  # noqa: E402

CONTEXT_CHARS = 2000


def draw(db: Path, n: int, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    with duckdb.connect(str(db), read_only=True) as con:
        names = [r[0] for r in con.execute(
            "SELECT name FROM kg.entities WHERE valid_until IS NULL AND length(name) >= 4 ORDER BY entity_id").fetchall()]
        values = con.execute("""SELECT attr_key, value FROM kg.entity_attributes WHERE valid_until IS NULL
                                ORDER BY attribute_id""").fetchall()
        keys = sorted({k for k, _ in values})
        chunks = [r[0] for r in con.execute("SELECT text FROM kg.chunks ORDER BY chunk_id").fetchall()]
    entity = []
    for i in range(n):
        name = rng.choice(names)
        if i % 3 == 1:
            name = name[: max(2, len(name) // 2)]
        elif i % 3 == 2:
            cut = rng.randrange(1, len(name) - 1)
            name = name[:cut] + name[cut + 1:]
        entity.append(f"entity:{name}")
    attr = [f"attr:{k}={v}" if i % 4 else f"attr:{rng.choice(keys)}"
            for i, (k, v) in enumerate(rng.choice(values) for _ in range(n))] if values else []
    texts = []
    for _ in range(n):
        text = rng.choice(chunks)
        while len(text) < CONTEXT_CHARS:
            text += "\n" + rng.choice(chunks)
        texts.append(text[:CONTEXT_CHARS])
    return {"entity": entity, "attr": attr, "context": texts}


def timed(call, items: list) -> list[float]:
    for item in items[:2]:
        call(item)
    times = []
    for item in items:
        started = time.perf_counter()
        call(item)
        times.append((time.perf_counter() - started) * 1000)
    return times


def summary(times: list[float]) -> dict:
    ordered = sorted(times)
    return {"n": len(times), "p50_ms": round(statistics.median(ordered), 1),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1), "max_ms": round(ordered[-1], 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, type=Path, help="a warehouse built by kg run")
    parser.add_argument("--queries", type=int, default=200, help="queries per kind (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lookup", choices=["stored", "memory"], default="stored")
    parser.add_argument("--export-dir", type=Path, help="where exports go (default a temp folder, removed)")
    args = parser.parse_args(argv)

    report: dict = {"db": str(args.db), "lookup": args.lookup}
    with duckdb.connect(str(args.db), read_only=True) as con:
        report["graph"] = dict(zip(("entities", "edges", "chunks"), con.execute(
            """SELECT (SELECT count(*) FROM kg.entities WHERE valid_until IS NULL),
                      (SELECT count(*) FROM kg.graph_edges WHERE valid_until IS NULL),
                      (SELECT count(*) FROM kg.chunks)""").fetchall()[0]))
    if args.lookup == "stored":
        started = time.perf_counter()
        rows = refresh_entity_lookup(args.db)
        report["lookup_build"] = {"rows": rows, "seconds": round(time.perf_counter() - started, 2)}
    queries = draw(args.db, args.queries, args.seed)
    results = {}
    started = time.perf_counter()
    with KnowledgeGraph(args.db) as kg:
        report["open_s"] = round(time.perf_counter() - started, 3)
        results["entity: search"] = timed(kg.search, queries["entity"])
        if queries["attr"]:
            results["attr: search"] = timed(kg.search, queries["attr"])
        results["context, 2,000 characters"] = timed(lambda text: kg.context(text, max_tokens=800), queries["context"])
        results["show (profile)"] = timed(lambda q: kg.profile(q.removeprefix("entity:"), max_sources=5)
                                          if kg.search(q, limit=1).hits else None, queries["entity"][::3][:50])
    results["entity: search, connection per call"] = timed(lambda q: KnowledgeGraph(args.db).search(q),
                                                           queries["entity"][:50])
    report["latency"] = {kind: summary(times) for kind, times in results.items()}

    exports = {}
    with tempfile.TemporaryDirectory() as scratch, KnowledgeGraph(args.db) as kg:
        folder = args.export_dir or Path(scratch)
        for fmt in FORMATS:
            started = time.perf_counter()
            result = kg.export(fmt, folder / (f"graph.{fmt}" if fmt in ("graphml", "json") else fmt))
            exports[fmt] = {"seconds": round(time.perf_counter() - started, 2), "nodes": result.nodes,
                            "edges": result.edges, "bytes": sum(Path(p).stat().st_size for p in result.paths)}
    report["export"] = exports

    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "search.json").write_text(json.dumps(report, indent=2) + "\n")
    graph = report["graph"]
    print(f"warehouse {args.db}: {graph['entities']:,} entities, {graph['edges']:,} edges, {graph['chunks']:,} chunks; "
          f"lookup {args.lookup}" + (f" (built in {report['lookup_build']['seconds']} s, {report['lookup_build']['rows']:,} rows)"
                                     if "lookup_build" in report else ""))
    print("\n| query | n | p50 ms | p95 ms | max ms |\n|---|---:|---:|---:|---:|")
    for kind, s in report["latency"].items():
        print(f"| {kind} | {s['n']} | {s['p50_ms']} | {s['p95_ms']} | {s['max_ms']} |")
    print("\n| export | seconds | size |\n|---|---:|---:|")
    for fmt, e in exports.items():
        print(f"| {fmt} | {e['seconds']} | {e['bytes'] / 1e6:.1f} MB |")
    print(f"\nresults: {OUT / 'search.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`kg eval graph DOCS.jsonl MENTIONS.jsonl [--out DIR]`, per the contract in shared/eval/README.md.

Each document of DOCS becomes `DIR/inbox/<name>.txt` (the name: `kg_assets.evaluation.graph.inbox_file_name`,
the doc_id itself when it is a plain file name, else a safe form plus a hash of it), and `kg run` itself (its
parser and `run_command`, so the same planning and definitions, with whatever extractor is configured) builds
a fresh embedded warehouse `DIR/warehouse.duckdb` from that inbox, with its Dagster instance in
`DIR/dagster_home`, without the dbt marts (`--no-marts`: views over the graph, which the score does not read).
The graph's current entities are then scored against the gold mentions
(kg_assets/evaluation/graph.py); the last line printed is one JSON object. The run's own report goes to
stderr, so stdout holds that line alone.

DIR is a temporary folder removed afterwards unless --out names one (which must be new or empty). The
warehouse is always the embedded file, whatever KG_WAREHOUSE_BACKEND says; the LLM cache is KG_LLM_CACHE
when set (answers cached before are reused), else a fresh one beside the warehouse.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

# The Dagster instance of the run: the project's dagster.yaml without run monitoring (no daemon watches it).
DAGSTER_YAML = """telemetry:
  enabled: false
concurrency:
  pools:
    default_limit: 1
    granularity: op
"""


def register_eval(eval_subparsers: argparse._SubParsersAction) -> None:
    """Add `kg eval graph` to the `kg eval` subcommands."""
    graph = eval_subparsers.add_parser(
        "graph", help="whole-graph node precision, cluster recall and fragmentation: kg run on DOCS.jsonl, "
                      "scored against MENTIONS.jsonl")
    graph.add_argument("docs", metavar="DOCS.jsonl", help="documents, one {doc_id, text} a line (shared/eval format)")
    graph.add_argument("mentions", metavar="MENTIONS.jsonl",
                       help="gold mentions, one {text, gold_cluster, ...} a line, clusters across documents")
    graph.add_argument("--out", metavar="DIR",
                       help="build in this new or empty folder and keep it (inbox/, warehouse.duckdb, dagster_home/); "
                            "default a temporary folder, removed afterwards")
    graph.set_defaults(func=cmd_eval_graph)


def _read(path: str, reader):
    with open(path, encoding="utf-8") as handle:
        return reader(handle)


@contextlib.contextmanager
def _folder(out: str | None) -> Iterator[Path]:
    if out is None:
        with tempfile.TemporaryDirectory(prefix="kg-eval-graph-") as folder:
            yield Path(folder)
        return
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    yield folder


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """Set these variables for the block, then put the environment back as it was (`kg run` itself puts
    DAGSTER_HOME and Dagster's event batching variables in it)."""
    before = dict(os.environ)
    os.environ.update(values)
    try:
        yield
    finally:
        for name in set(os.environ) - set(before):
            del os.environ[name]
        for name, value in before.items():
            if os.environ.get(name) != value:
                os.environ[name] = value


def run_pipeline(folder: Path) -> int:
    """`kg run --inbox FOLDER/inbox --db FOLDER/warehouse.duckdb --dagster-home FOLDER/dagster_home` in this
    process, its report on stderr; returns its exit code."""
    from kg_assets.commands import run

    home = folder / "dagster_home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text(DAGSTER_YAML)
    parser = argparse.ArgumentParser(prog="kg")
    run.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["run", "--inbox", str(folder / "inbox"), "--db", str(folder / "warehouse.duckdb"),
                              "--dagster-home", str(home), "--log-level", "WARNING", "--no-marts"])
    with _environment({"KG_WAREHOUSE_BACKEND": "duckdb", "DAGSTER_HOME": str(home)}), \
            contextlib.redirect_stdout(sys.stderr):
        return args.func(args)


def cmd_eval_graph(args: argparse.Namespace) -> int:
    """Whole-graph scores of a `kg run` over DOCS against MENTIONS: last line is one JSON object."""
    import polars as pl

    from kg_assets.evaluation.graph import graph_scores, inbox_file_name, read_documents, read_mentions
    from kg_assets.storage.warehouse import Warehouse

    started = time.perf_counter()
    inputs = {}
    for name, path, reader in (("documents", args.docs, read_documents), ("mentions", args.mentions, read_mentions)):
        try:
            inputs[name] = _read(path, reader)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            print(f"kg eval graph: cannot read {path}: {exc}", file=sys.stderr)
            return 2
    documents, mentions = inputs["documents"], inputs["mentions"]
    if args.out and Path(args.out).exists() and (not Path(args.out).is_dir() or any(Path(args.out).iterdir())):
        print(f"kg eval graph: --out {args.out} is not a new or empty folder", file=sys.stderr)
        return 2
    with _folder(args.out) as folder:
        inbox = folder / "inbox"
        inbox.mkdir()
        for doc_id, text in documents:
            (inbox / inbox_file_name(doc_id)).write_text(text, encoding="utf-8")
        print(f"kg eval graph: {len(documents)} documents into {inbox}, {mentions.height} gold mentions "
              f"in {mentions['gold_cluster'].n_unique()} clusters; running kg run", file=sys.stderr, flush=True)
        code = run_pipeline(folder)
        warehouse = Warehouse(folder / "warehouse.duckdb")
        if code == 2 or not warehouse.exists():
            print(f"kg eval graph: kg run exited {code} and built no warehouse to score", file=sys.stderr)
            return code or 1
        entities = warehouse.current_entities(["entity_id", "name", "entity_type", "aliases"])
        engines = warehouse.entity_mentions(["extractor", "extractor_version"], distinct=True).sort(pl.all())
    summary = {
        **graph_scores(entities, mentions),
        "documents": len(documents),
        "extractor": ",".join(engines["extractor"].unique(maintain_order=True).to_list()) or None,
        "extractor_version": ",".join(engines["extractor_version"].unique(maintain_order=True).to_list()) or None,
        "seconds": round(time.perf_counter() - started, 2),
    }
    if code:
        print(f"kg eval graph: kg run exited {code} (see its report above); the graph it built is scored",
              file=sys.stderr)
    if args.out:
        print(f"kg eval graph: kept {Path(args.out) / 'warehouse.duckdb'}", file=sys.stderr)
    print(json.dumps(summary))
    return code

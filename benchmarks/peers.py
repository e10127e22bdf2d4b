"""Peers side by side: nano-graphrag, LightRAG and kg_assets on one corpus with one instant stub LLM.

    .venv/bin/python benchmarks/peers.py [--docs 100] [--chars 2000] [--seed 0]
                                         [--peers nano-graphrag lightrag kg_assets] [--cache DIR]
                                         [--chunk-tokens 600] [--overlap 80] [--timeout 3600] [--keep]

1. Installs each peer at a pinned version (PEERS below, with the rest of its dependencies pinned by
   benchmarks/peer_runners/<peer>.constraints.txt) with pip into its own virtualenv under --cache
   (default ~/.cache/kg_assets_peers/; never the project's venv), once: a venv whose marker file names
   the same pins is reused.
2. Writes tiktoken's BPE files (o200k_base, cl100k_base) into <cache>/tiktoken from the project's own
   bpe-openai package (bpe_openai/data/*.tiktoken.gz, checked against tiktoken's expected sha256) and
   points TIKTOKEN_CACHE_DIR there: nothing is downloaded at run time, and the runners make any tiktoken
   download attempt an error.
3. Generates one corpus (benchmarks/generate_corpus.py) and runs each pipeline on it in its own process:
   the peers through benchmarks/peer_runners/<peer>_runner.py with their venv's python (in-process, the
   stub LLM passed as their completion function, a hashed-vector stub embedder), kg_assets as
   ``kg run`` on the corpus as inbox with KG_EXTRACTOR=kg_assets.extractors.stub:ZipfStubExtractor.
   All three get the same 3 entities and 2 relations per chunk (kg_assets/extractors/zipf_stub.py).
4. Prints one Markdown table: wall seconds and peak RSS of each process (wait4), chunks, LLM calls and
   prompt tokens per chunk, graph size; plus the load average and the machine. Writes
   benchmarks/out/peers.json.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
RUNNERS = HERE / "peer_runners"
sys.path.insert(0, str(HERE))

from generate_corpus import generate  # noqa: E402

KG = Path(sys.executable).with_name("kg")
KG_STUB = "kg_assets.extractors.stub:ZipfStubExtractor"
DEFAULT_CACHE = Path.home() / ".cache" / "kg_assets_peers"

# Pinned versions, verified to install and run on Python 3.11 (December 2026).
PEERS = {
    "nano-graphrag": {"requirement": "nano-graphrag==0.0.8.2", "runner": "nano_graphrag_runner.py"},
    "lightrag": {"requirement": "lightrag-hku==1.5.7", "runner": "lightrag_runner.py"},
}
ALL = [*PEERS, "kg_assets"]

TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
TIKTOKEN_SHA256 = {  # tiktoken_ext/openai_public.py's expected_hash
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}


# ---- setup -----------------------------------------------------------------------------------------

def constraints_file(peer: str) -> Path:
    return RUNNERS / f"{peer}.constraints.txt"


def install(peer: str, cache: Path) -> Path:
    """The peer's venv python, installing the pinned peer into <cache>/<peer> when it is not there yet."""
    venv = cache / peer
    python = venv / "bin" / "python"
    spec = PEERS[peer]["requirement"]
    constraints = constraints_file(peer)
    pins = spec + "\n" + (constraints.read_text() if constraints.exists() else "")
    marker = venv / ".kg_assets_peer"
    if python.exists() and marker.exists() and marker.read_text() == pins:
        return python
    print(f"[{peer}] installing {spec} into {venv} ...", flush=True)
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    cmd = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", spec]
    if constraints.exists():
        cmd += ["-c", str(constraints)]
    subprocess.run(cmd, check=True)
    warm_up(peer, python, cache)
    marker.write_text(pins)
    return python


def warm_up(peer: str, python: Path, cache: Path) -> None:
    """Run the peer once on 3 documents: checks the install, and fills the caches a first run writes
    (nano-graphrag's graspologic compiles numba functions into its site-packages, 10 s), so that no
    measured run pays them."""
    with tempfile.TemporaryDirectory(prefix=f"kg_peers_warmup_{peer}_") as tmp:
        folder = Path(tmp)
        generate(folder / "corpus", 3, seed=12345)
        env = clean_env(TIKTOKEN_CACHE_DIR=str(tiktoken_cache(cache)))
        env.pop("PYTHONPATH", None)
        subprocess.run([str(python), str(RUNNERS / PEERS[peer]["runner"]), str(folder / "corpus"), str(folder / "store"),
                        str(folder / "report.json")], env=env, cwd=folder, check=True, stdout=subprocess.DEVNULL)


def tiktoken_cache(cache: Path) -> Path:
    """A TIKTOKEN_CACHE_DIR holding o200k_base and cl100k_base, taken from the bpe-openai package."""
    folder = cache / "tiktoken"
    folder.mkdir(parents=True, exist_ok=True)
    data = resources.files("bpe_openai") / "data"
    for name, sha256 in TIKTOKEN_SHA256.items():
        target = folder / hashlib.sha1(TIKTOKEN_URL.format(name).encode()).hexdigest()  # tiktoken's cache key
        if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == sha256:
            continue
        content = gzip.decompress((data / f"{name}.tiktoken.gz").read_bytes())
        if hashlib.sha256(content).hexdigest() != sha256:
            raise SystemExit(f"bpe_openai's {name} does not match tiktoken's expected sha256")
        target.write_bytes(content)
    return folder


# ---- one process -----------------------------------------------------------------------------------

def measured(cmd: list[str], log: Path, env: dict[str, str], cwd: Path, timeout: float | None) -> dict:
    """Run ``cmd``; wall seconds, exit code and peak RSS (MB) of the process and the children it waited for."""
    started = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True)
        timed_out = threading.Event()

        def stop() -> None:
            timed_out.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, stop) if timeout else None
        if timer:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        if timer:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    state = "timeout" if timed_out.is_set() else "ok" if proc.returncode == 0 else f"failed (exit {proc.returncode})"
    return {"status": state, "seconds": round(seconds, 2), "peak_mb": round(usage.ru_maxrss / 1024, 1),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "log": str(log)}


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "KG_", "LLM_", "EMBEDDING_")) and k not in {"PYTHONSTARTUP"}}
    env.update(extra)
    return env


def run_peer(peer: str, python: Path, corpus: Path, work: Path, tiktoken_dir: Path, args, logs: Path) -> dict:
    folder = work / peer
    folder.mkdir()
    out = folder / "report.json"
    cmd = [str(python), str(RUNNERS / PEERS[peer]["runner"]), str(corpus), str(folder / "store"), str(out),
           "--chunk-tokens", str(args.chunk_tokens), "--overlap", str(args.overlap)]
    env = clean_env(TIKTOKEN_CACHE_DIR=str(tiktoken_dir))
    env.pop("PYTHONPATH", None)  # the peer's venv only (the runner loads zipf_stub.py by its path)
    result = measured(cmd, logs / f"peers_{peer}.log", env, folder, args.timeout)
    if result["status"] == "ok":
        result.update(json.loads(out.read_text()))
    elif (folder / "progress.json").exists():  # stopped: how far it got
        progress = json.loads((folder / "progress.json").read_text())
        result["progress"] = {"chunks_extracted": progress["calls"].get("extract", 0), "after_s": progress["seconds"]}
    result["version"] = PEERS[peer]["requirement"].split("==")[1]
    return result


def documents_for(chunks: int, chars: int, seed: int, chunk_tokens: int, overlap: int) -> int:
    """Documents that fixed-size token chunking (nano-graphrag's and LightRAG's) cuts into about ``chunks`` chunks."""
    import math
    import random

    from bpe_openai import get_encoding
    from generate_corpus import Pools, render

    encoding, rng, pools = get_encoding("o200k_base"), random.Random(seed), Pools(seed)
    sample = [len(encoding.encode(render(rng, pools, chars, rng.random() < 0.25))) for _ in range(50)]
    per_doc = sum(max(1, math.ceil((n - overlap) / (chunk_tokens - overlap))) for n in sample) / len(sample)
    return max(1, round(chunks / per_doc))


def dbt_manifest() -> None:
    """The dbt manifest `kg run` reads (git-ignored): prepared as scripts/dev.sh does when it is missing."""
    if (ROOT / "dbt" / "target" / "manifest.json").exists():
        return
    print("[kg_assets] preparing the dbt manifest ...", flush=True)
    env = {**os.environ, "PATH": f"{KG.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run([sys.executable, "-c", "from dagster_dbt import DbtProject; p = DbtProject(project_dir='dbt', "
                    "profiles_dir='dbt'); p.preparer.prepare(p)"], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)


def run_kg_assets(corpus: Path, work: Path, args, logs: Path) -> dict:
    folder = work / "kg_assets"
    home = folder / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    db = folder / "warehouse.duckdb"
    env = clean_env(KG_EXTRACTOR=KG_STUB, KG_CHUNK_TOKENS=str(args.chunk_tokens),
                    KG_CHUNK_OVERLAP_TOKENS=str(args.overlap))
    cmd = [str(KG), "run", "--inbox", str(corpus), "--db", str(db), "--dagster-home", str(home), "--log-level", "INFO"]
    result = measured(cmd, logs / "peers_kg_assets.log", env, home, args.timeout)
    result["version"] = _kg_version()
    result["db"] = str(db)
    if result["status"] == "ok":
        # what kg_assets' LLM extractor would send for these chunks (a dry run, not timed)
        estimate = subprocess.run([str(KG), "estimate", "--inbox", str(corpus), "--db", str(folder / "estimate.duckdb")],
                                  capture_output=True, text=True, env=clean_env(KG_CHUNK_TOKENS=str(args.chunk_tokens),
                                  KG_CHUNK_OVERLAP_TOKENS=str(args.overlap)), cwd=home)
        result["estimate"] = _parse_estimate(estimate.stdout)
    return result


def _kg_version() -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or "?"
    except OSError:
        return "?"


def _parse_estimate(text: str) -> dict:
    """The lines of `kg estimate`'s report this table quotes."""
    out: dict = {}
    for line in text.splitlines():
        for key in ("chunks", "LLM calls", "prompt tokens / chunk"):
            if line.strip().startswith(key + " "):
                out.setdefault(key, line.strip()[len(key):].strip())
    return out


def kg_counts(db: Path) -> dict:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        one = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
        return {"chunks": one("SELECT count(*) FROM kg.chunks"),
                "mentions": one("SELECT count(*) FROM kg.entity_mentions"),
                "graph": {"nodes": one("SELECT count(*) FROM kg.graph_nodes WHERE valid_until IS NULL"),
                          "edges": one("SELECT count(*) FROM kg.graph_edges WHERE valid_until IS NULL")}}
    finally:
        con.close()


# ---- report ----------------------------------------------------------------------------------------

def _calls_and_tokens(r: dict) -> tuple[str, str, str]:
    chunks = r.get("chunks") or 0
    if r["pipeline"] == "kg_assets":
        est = r.get("estimate", {})
        calls = f"0 (in-process stub; LLM extractor: {est.get('LLM calls', '?')} for {est.get('chunks', '?').split()[0]} chunks)"
        return calls, f"– (LLM extractor: {est.get('prompt tokens / chunk', '?')})", "–"
    calls = sum(r.get("calls", {}).values())
    tokens = sum(r.get("prompt_tokens", {}).values())
    detail = ", ".join(f"{k} {v / chunks:.2f}" for k, v in r.get("calls", {}).items()) if chunks else ""
    per_kind = ", ".join(f"{k} {v / chunks:,.0f}" for k, v in r.get("prompt_tokens", {}).items()) if chunks else ""
    return (f"{calls / chunks:.2f} ({detail})" if chunks else "–", f"{tokens / chunks:,.0f} ({per_kind})" if chunks else "–",
            f"{calls:,}")


def markdown(results: list[dict]) -> str:
    head = ("| pipeline | version | documents | chunks | wall s | peak RSS MB | CPU s | LLM calls / chunk | "
            "prompt tokens / chunk | graph nodes / edges |\n|---|---|---:|---:|---:|---:|---:|---|---|---:|")
    rows = []
    for r in results:
        wall = f"{r['seconds']:.1f}" if r["status"] == "ok" else f"{r['status']} after {r['seconds']:.0f}"
        if r.get("progress"):
            wall += f" ({r['progress']['chunks_extracted']:,} chunks extracted by then)"
        calls, tokens, _ = _calls_and_tokens(r) if r["status"] == "ok" else ("–", "–", "–")
        graph = r.get("graph")
        graph = f"{graph['nodes']:,} / {graph['edges']:,}" if graph else "–"
        chunks = f"{r['chunks']:,}" if r.get("chunks") else "–"
        rows.append(f"| {r['pipeline']} | {r.get('version', '')} | {r.get('documents', '–'):,} | {chunks} "
                    f"| {wall} | {r['peak_mb']:,.0f} | {r['cpu_s']:.1f} | {calls} | {tokens} | {graph} |")
    return "\n".join([head, *rows])


def machine() -> str:
    mem = ""
    try:
        kb = int(next(line for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal")).split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{os.cpu_count()} cores{mem}, {platform.platform()}, Python {platform.python_version()}"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="nano-graphrag, LightRAG and kg_assets on one corpus, one stub LLM.")
    parser.add_argument("--docs", type=int, default=100, help="documents in the corpus (default 100)")
    parser.add_argument("--chunks", type=int,
                        help="instead of --docs: as many documents as make about this many fixed-size chunks "
                             "(the peers' chunking; kg_assets also starts a chunk at each section)")
    parser.add_argument("--chars", type=int, default=2000, help="approximate characters per document (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    parser.add_argument("--peers", nargs="+", choices=ALL, default=ALL, help="which pipelines to run (default all)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                        help=f"where the peers' venvs and the tiktoken files go (default {DEFAULT_CACHE})")
    parser.add_argument("--chunk-tokens", type=int, default=600,
                        help="chunk size in tokens for every pipeline (default 600, kg_assets' default)")
    parser.add_argument("--overlap", type=int, default=80, help="chunk overlap in tokens (default 80, kg_assets' default)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per pipeline before it is killed (0: none)")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder (corpus, stores, warehouse)")
    parser.add_argument("--install-only", action="store_true", help="install the peers and the tiktoken files, run nothing")
    args = parser.parse_args(argv)
    if args.chunks:
        args.docs = documents_for(args.chunks, args.chars, args.seed, args.chunk_tokens, args.overlap)

    args.cache.mkdir(parents=True, exist_ok=True)
    pythons = {peer: install(peer, args.cache) for peer in args.peers if peer in PEERS}
    tiktoken_dir = tiktoken_cache(args.cache)
    if args.install_only:
        print(f"installed: {', '.join(f'{p} {v}' for p, v in pythons.items())}; TIKTOKEN_CACHE_DIR={tiktoken_dir}")
        return 0
    if "kg_assets" in args.peers and not KG.exists():
        print(f"peers: {KG} not found; install the project into this interpreter's environment", file=sys.stderr)
        return 2
    if "kg_assets" in args.peers:
        dbt_manifest()

    work = Path(tempfile.mkdtemp(prefix=f"kg_peers_{args.docs}_"))
    logs = OUT / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    corpus = work / "corpus"
    paths = generate(corpus, args.docs, chars=args.chars, seed=args.seed)
    started_at = datetime.now(UTC)
    load_before = load()
    print(f"corpus: {len(paths):,} documents at {corpus}; load average {load_before}", flush=True)
    results = []
    for peer in args.peers:  # kg_assets last: the parent stays small, and wait4's peak is the child's own
        print(f"[{peer}] running ...", flush=True)
        if peer in PEERS:
            result = run_peer(peer, pythons[peer], corpus, work, tiktoken_dir, args, logs)
        else:
            result = run_kg_assets(corpus, work, args, logs)
        result["pipeline"] = peer
        result.setdefault("documents", len(paths))
        result["load_after"] = load()
        print(f"[{peer}] {result['status']} in {result['seconds']:.1f}s, peak {result['peak_mb']:,.0f} MB, "
              f"load {result['load_after']}; log {result['log']}", flush=True)
        results.append(result)
    for result in results:
        if result["pipeline"] == "kg_assets" and result["status"] == "ok":
            result.update(kg_counts(Path(result["db"])))
    load_after = load()

    report = {"started_at": started_at.isoformat(timespec="seconds"), "machine": machine(),
              "load_before": load_before, "load_after": load_after, "docs": args.docs, "chars": args.chars,
              "seed": args.seed, "chunk_tokens": args.chunk_tokens, "overlap": args.overlap, "results": results}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "peers.json").write_text(json.dumps(report, indent=2) + "\n")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print(f"{started_at:%Y-%m-%d %H:%M} UTC, {machine()}; load average (1, 5, 15 min) {load_before} before, "
          f"{load_after} after; {args.docs:,} documents of ~{args.chars:,} characters, seed {args.seed}, "
          f"chunks of {args.chunk_tokens} tokens with {args.overlap} overlap")
    print()
    print(markdown(results))
    print(f"\nresults: {OUT / 'peers.json'}; logs: {logs}" + (f"; kept {work}" if args.keep else ""))
    return 0 if all(r["status"] == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

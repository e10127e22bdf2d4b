"""Throughput of the LLM extraction engine against a local OpenAI-compatible server with injected latency.

For each latency L, a `FakeOpenAIServer` (kg_assets.testing.openai_server) is started in this process with
``latency_s=L`` and a scripted "model" that answers extraction prompts from a gazetteer of the synthetic
chunks' names (10-25 entity lines, a relation chain and a few attributes per chunk, the gleaning pass adds
the entities the first pass left out). The engine, ``LLMExtractor(LLMSettings(...)).extract(chunks)``, runs
in a fresh subprocess, so its wall time, CPU time and peak RSS belong to that configuration alone and the
server's CPU is not counted in the client's. Then the same chunks are extracted again with the same cache
(the rerun: no request should reach the server).

Throughput ceiling at latency L and concurrency C: at most C requests are in flight, each taking at
least L, and a chunk needs k requests (the first pass plus the gleaning passes actually sent), so
chunks/s <= C / (k * L). The issue's "160 chunks/s" is C / L (k = 1, C = 32, L = 0.2 s). With
``--gleaning auto`` (the engine's default) a gleaning pass is sent only after a cut, unparseable or
"more remain" answer, so k is 1.00 on these chunks and both ceilings coincide; ``--gleaning always``
sends one on every chunk (k = 2). Both are reported, k as measured.

Usage::

    .venv/bin/python benchmarks/llm_extraction.py [--chunks 2000] [--latencies 0 0.2]
        [--concurrency 32] [--format tuple|structured] [--profile]
        [--chunks-per-document K] [--working-memory-tokens N]

``--chunks-per-document K`` groups the chunks into documents of K chunks (chunk i is chunk i mod K of
document i div K, all in one section), so the working memory (``--working-memory-tokens``, the engine's
``working_memory_tokens``; 0 turns it off) carries each document's earlier entities into its later
prompts, and a document's chunks are sent one after another.

Writes benchmarks/out/llm_extraction.json (and, with --profile, benchmarks/out/llm_extraction_<L>.prof).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"

TOKEN_TARGET = 2500  # prompt tokens per 2,000-character chunk, first pass + one gleaning pass


# ---- synthetic chunks and their gazetteer ---------------------------------------------------------

def make_chunks(n: int, chars: int = 2000, seed: int = 0, per_document: int = 1):
    """(chunks frame, {chunk text: (names, missed, attributes)}) for `n` chunks, `per_document` a document.

    Text comes from generate_corpus.render (the documents `run.py` benchmarks with); the entities each
    document was written about are recorded while it is rendered, so the gazetteer is exact.
    """
    import polars as pl
    from generate_corpus import MARKDOWN_SHARE, REAL_TECH, Pools, render

    class CastPools(Pools):
        def __init__(self, seed: int) -> None:
            super().__init__(seed)
            self.cast: list[tuple[str, object]] = []

        def draw(self, rng, kind, k):
            picked = super().draw(rng, kind, k)
            self.cast.extend((kind, e) for e in picked)
            return picked

    real_tech = set(REAL_TECH)
    pools = CastPools(seed)
    rng = random.Random(f"llm-bench-{seed}")
    rows, lookup = [], {}
    for i in range(n):
        markdown = rng.random() < MARKDOWN_SHARE
        pools.cast = []
        text = render(rng, pools, chars, markdown).strip()
        names: dict[str, str] = {}
        for kind, entity in pools.cast:
            for name, etype in _gazetteer_names(kind, entity.first, real_tech):
                if name in text:
                    names.setdefault(name, etype)
        # The first pass "misses" about one entity in six; the gleaning pass finds them.
        picker = random.Random(f"{seed}-{i}")
        missed_keys = set(picker.sample(sorted(names), max(1, len(names) // 6))) if len(names) > 3 else set()
        first = {k: v for k, v in names.items() if k not in missed_keys}
        missed = {k: v for k, v in names.items() if k in missed_keys}
        lines = text.splitlines()
        headings = [line.lstrip("#").strip() for line in lines if line.startswith("#")]
        title = headings[0] if headings else lines[0]
        document, index = divmod(i, per_document)
        document_id = f"batch_{document // 1000:03d}/doc_{document:06d}.{'md' if markdown else 'txt'}"
        section = title if not markdown or len(headings) < 2 else f"{title} > {headings[-1]}"
        rows.append({
            "chunk_id": "chunk_" + hashlib.sha256(f"{document_id}:{index}".encode()).hexdigest()[:24],
            "document_id": document_id,
            "chunk_index": index,
            "text": text,
            "section_path": section if per_document == 1 else f"Document {document}",
            "content_hash": hashlib.sha256(text.encode()).hexdigest(),
            "headings": headings,
        })
        lookup[text] = (first, missed, _attributes(text, first))
    frame = pl.DataFrame(rows, schema={
        "chunk_id": pl.String, "document_id": pl.String, "chunk_index": pl.Int32, "text": pl.String,
        "section_path": pl.String, "content_hash": pl.String, "headings": pl.List(pl.String),
    })
    return frame, lookup


def _gazetteer_names(kind: str, first: str, real_tech: set[str]) -> list[tuple[str, str]]:
    if kind == "people":
        return [(re.sub(r"^(Dr|Prof|Ms|Mr)\. ", "", first), "PERSON")]
    if kind == "organizations":
        return [(re.sub(r" \([A-Z]+\)$", "", first), "ORGANIZATION")]
    if kind == "places":
        return [(part.strip(), "LOCATION") for part in first.split(",")]
    if kind == "technologies":
        return [(first, "TECHNOLOGY" if first in real_tech else "PRODUCT")]
    return [(first, "EVENT")]


_ATTRIBUTE_PATTERNS = [  # (regex after the entity name, key, group holding the value)
    (r" joined (.+?) in ", "employer", 1),
    (r", ([a-z ]+?) at (.+?), said", "role", 1),
    (r" was appointed ([a-z ]+?) of ", "role", 1),
    (r" is headquartered in ([^.]+?)\.", "headquarters", 1),
    (r" opened a new office in ([^.]+?)\.", "office_location", 1),
    (r" founded .+? in (\d{4})\.", "founded_company_in", 1),
]


def _attributes(text: str, names: dict[str, str], limit: int = 8) -> list[dict]:
    out, seen = [], set()
    for name, etype in names.items():
        if etype not in ("PERSON", "ORGANIZATION"):
            continue
        for pattern, key, group in _ATTRIBUTE_PATTERNS:
            m = re.search(re.escape(name) + pattern, text)
            if m and (name, key) not in seen:
                seen.add((name, key))
                out.append({"entity": name, "key": key, "value": m.group(group).strip(), "confidence": 0.9})
    return out[:limit]


class BenchResponder:
    """`extraction_responder` with a per-chunk gazetteer (constant cost per request) plus attributes."""

    def __init__(self, lookup: dict) -> None:
        self.lookup = lookup
        self.unknown = 0

    def __call__(self, request: dict):
        from kg_assets.testing.scripted_llm import chunk_text, extraction_responder, is_gleaning

        text = chunk_text(request)
        if text not in self.lookup:
            self.unknown += 1
        names, missed, attributes = self.lookup.get(text, ({}, {}, []))
        reply = extraction_responder(names=names, missed=missed)(request)
        if attributes and not is_gleaning(request):
            if request.get("tools"):
                body = json.loads(reply.content)
                body["attributes"] = body["attributes"] + attributes
                reply.content = json.dumps(body)
            else:
                d = "<|#|>"
                lines = [d.join(["attribute", a["entity"], a["key"], a["value"], str(a["confidence"])]) for a in attributes]
                head, _, _ = reply.content.rpartition("<|COMPLETE|>")
                reply.content = head + "\n".join(lines) + "\n<|COMPLETE|>"
        return reply


# ---- the worker: one extraction in a fresh process ------------------------------------------------

class StageClock:
    """The engine's `stage_timer`: seconds and entries per stage, and, while the requests run, how late a
    10 ms sleep wakes up on the engine's event loop (its lag) and the wall and CPU time of that phase."""

    def __init__(self) -> None:
        self.timers: dict[str, list[float]] = {}  # stage -> [seconds, entries]
        self.lag: list[float] = []
        self.marks: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str):
        if name == "requests":
            with self._requests_phase():
                yield
            return
        slot = self.timers.setdefault(name, [0.0, 0])
        started = time.perf_counter()
        try:
            yield
        finally:
            slot[0] += time.perf_counter() - started
            slot[1] += 1

    @contextmanager
    def _requests_phase(self):
        import asyncio

        async def monitor():
            while True:
                t = time.perf_counter()
                await asyncio.sleep(0.01)
                self.lag.append(time.perf_counter() - t - 0.01)

        task = asyncio.get_running_loop().create_task(monitor())
        self.marks["loop_start"], self.marks["cpu_loop_start"] = time.perf_counter(), _cpu_self()
        try:
            yield
        finally:
            self.marks["requests_done"], self.marks["cpu_requests_done"] = time.perf_counter(), _cpu_self()
            task.cancel()


def worker(cfg: dict) -> dict:
    """Run LLMExtractor.extract once, timing its stages through the engine's stage_timer; returns
    measurements (JSON-able)."""
    import gc

    import polars as pl

    import kg_assets.extractors.llm.engine as eng

    chunks = pl.read_parquet(cfg["parquet"]).head(cfg["n"])
    clock = StageClock()
    lag, marks = clock.lag, clock.marks
    gc_time = {"s": 0.0, "collections": [0, 0, 0], "gen2_s": 0.0}
    gc_started = [0.0]

    def on_gc(phase, info):  # time spent in the cyclic garbage collector (blocks the event loop too)
        if phase == "start":
            gc_started[0] = time.perf_counter()
        else:
            took = time.perf_counter() - gc_started[0]
            gc_time["s"] += took
            gc_time["collections"][info["generation"]] += 1
            if info["generation"] == 2:
                gc_time["gen2_s"] += took

    gc.callbacks.append(on_gc)

    settings = eng.LLMSettings(
        base_url=cfg["base_url"], api_key="bench", concurrency=cfg["concurrency"], max_gleanings=1,
        cache_path=cfg["cache_path"], output_format=cfg["format"], gleaning=cfg.get("gleaning", "auto"),
        working_memory_tokens=cfg["working_memory_tokens"],
    )
    extractor = eng.LLMExtractor(settings, run_id="bench", stage_timer=clock.stage)
    rss_before_mb = _peak_rss_mb("VmRSS")
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    profiler = None
    if cfg.get("profile"):
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    started = time.perf_counter()
    result = extractor.extract(chunks)
    wall = time.perf_counter() - started
    if profiler is not None:
        profiler.disable()
    ru1 = resource.getrusage(resource.RUSAGE_SELF)

    calls = result.calls
    status = result.chunk_status
    sent = calls.filter(pl.col("status") != "cache_hit")
    lat = sent["latency_ms"] if sent.height else pl.Series([], dtype=pl.Float64)
    out = {
        "n": chunks.height,
        "chars_per_chunk": round(chunks["text"].str.len_chars().mean(), 1),
        "wall_s": wall,
        "cpu_user_s": ru1.ru_utime - ru0.ru_utime,
        "cpu_sys_s": ru1.ru_stime - ru0.ru_stime,
        "peak_rss_mb": _peak_rss_mb("VmHWM"),
        "rss_before_extract_mb": rss_before_mb,
        "requests_phase_s": marks.get("requests_done", started) - marks.get("loop_start", started),
        "requests_phase_cpu_s": marks.get("cpu_requests_done", 0.0) - marks.get("cpu_loop_start", 0.0),
        "gc": gc_time,
        "call_status": dict(calls.group_by("status").len().iter_rows()),
        "chunk_status": dict(status.group_by("status").len().iter_rows()),
        "prompt_tokens": int(calls["prompt_tokens"].sum()),
        "completion_tokens": int(calls["completion_tokens"].sum()),
        "sent_prompt_tokens": int(sent["prompt_tokens"].sum()) if sent.height else 0,
        "sent_completion_tokens": int(sent["completion_tokens"].sum()) if sent.height else 0,
        "client_latency_ms": {
            "mean": float(lat.mean()) if len(lat) else None,
            "p50": float(lat.quantile(0.5)) if len(lat) else None,
            "p95": float(lat.quantile(0.95)) if len(lat) else None,
            "max": float(lat.max()) if len(lat) else None,
        },
        "loop_lag_ms": {
            "mean": 1000 * sum(lag) / len(lag) if lag else None,
            "p95": 1000 * sorted(lag)[int(0.95 * (len(lag) - 1))] if lag else None,
            "max": 1000 * max(lag) if lag else None,
        },
        "mentions": result.mentions.height,
        "relations": result.relations.height,
        "attributes": result.attributes.height,
        "timers": {k: {"s": v[0], "calls": v[1]} for k, v in clock.timers.items() if v[1]},
    }
    if profiler is not None:
        import io
        import pstats

        profiler.dump_stats(cfg["profile"])
        for sort in ("tottime", "cumulative"):
            buf = io.StringIO()
            pstats.Stats(profiler, stream=buf).sort_stats(sort).print_stats(30)
            out[f"profile_top_{sort}"] = buf.getvalue()
    return out


def bare_client(cfg: dict) -> dict:
    """The engine's requests sent by the bare `openai.AsyncOpenAI` client (no cache, parsing or frames)."""
    import asyncio

    import openai
    import polars as pl

    from kg_assets.core.extraction.prompts import build_gleaning_messages, build_messages
    from kg_assets.extractors.llm.engine import LLMSettings

    chunks = pl.read_parquet(cfg["parquet"]).head(cfg["n"])
    requests = []
    for row in chunks.iter_rows(named=True):
        kw = {"fmt": "tuple", "max_attributes": LLMSettings().max_attributes, "section_path": row["section_path"],
              "headings": row["headings"] or ()}
        requests.append(build_messages(row["text"], **kw))
        if cfg.get("gleaning") == "always":  # with "auto" these answers never ask for a gleaning pass
            requests.append(build_gleaning_messages(row["text"], found_entities=[], **kw))

    async def go() -> list[float]:
        client = openai.AsyncOpenAI(base_url=cfg["base_url"], api_key="bench", timeout=60, max_retries=4)
        semaphore = asyncio.Semaphore(cfg["concurrency"])
        latencies: list[float] = []

        async def one(messages):
            async with semaphore:
                t = time.perf_counter()
                await client.chat.completions.create(model="gpt-4o-mini", messages=messages, temperature=0.0,
                                                     max_tokens=2000)
                latencies.append(time.perf_counter() - t)

        try:
            await asyncio.gather(*(one(m) for m in requests))
        finally:
            await client.close()
        return latencies

    cpu0, started = _cpu_self(), time.perf_counter()
    latencies = asyncio.run(go())
    wall, cpu = time.perf_counter() - started, _cpu_self() - cpu0
    return {"requests": len(requests), "wall_s": wall, "cpu_s": cpu, "requests_per_s": len(requests) / wall,
            "cpu_ms_per_request": 1000 * cpu / len(requests),
            "latency_ms_mean": 1000 * sum(latencies) / len(latencies)}


def run_worker(cfg: dict) -> dict:
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(cfg)],
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-5000:])
        raise SystemExit(f"worker failed with exit code {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- one configuration ----------------------------------------------------------------------------

def measure(latency: float, args, parquet: Path, lookup: dict, workdir: Path) -> dict:
    from kg_assets.core.extraction.prompts import count_message_tokens
    from kg_assets.testing.openai_server import FakeOpenAIServer, prompt_tokens_of
    from kg_assets.testing.scripted_llm import chunk_text, is_gleaning

    cache_path = workdir / f"cache_L{latency:g}.sqlite"
    responder = BenchResponder(lookup)
    row: dict = {"latency_s": latency, "concurrency": args.concurrency, "format": args.format,
                 "gleaning": args.gleaning, "load_before": os.getloadavg()[0]}
    with FakeOpenAIServer(responder=responder, latency_s=latency) as server:
        cfg = {"parquet": str(parquet), "n": args.chunks, "base_url": server.base_url, "cache_path": str(cache_path),
               "concurrency": args.concurrency, "format": args.format, "gleaning": args.gleaning,
               "working_memory_tokens": args.working_memory_tokens}
        cpu0 = _cpu_self()
        first = run_worker(cfg)
        server_cpu = _cpu_self() - cpu0
        records = server.records
        n = first["n"]
        row.update(first)
        row["server_calls"] = server.calls
        row["calls_per_chunk"] = server.calls / n
        row["peak_in_flight"] = server.peak_in_flight
        row["server_cpu_s"] = server_cpu
        row["server_duration_ms_mean"] = 1000 * _mean([r.duration for r in records if r.duration is not None])
        done = [r for r in records if r.end is not None]
        span = max(r.end for r in done) - min(r.start for r in done) if done else 0.0
        # time-average number of requests open at the server (from their headers' arrival), first to last
        row["mean_in_flight"] = sum(r.end - r.start for r in done) / span if span > 0 else None
        row["unknown_chunk_requests"] = responder.unknown
        # prompt tokens per chunk, first pass + gleaning, by the engine's own counter (OpenAI's rule)
        per_chunk: dict[str, list[int]] = {}
        first_tokens, glean_tokens, server_usage = [], [], 0
        for r in records:
            body = r.body or {}
            tokens = count_message_tokens(body.get("messages") or [])
            server_usage += prompt_tokens_of(body)
            (glean_tokens if is_gleaning(body) else first_tokens).append(tokens)
            per_chunk.setdefault(chunk_text(body), []).append(tokens)
        totals = sorted(sum(v) for v in per_chunk.values())
        row["prompt_tokens_per_chunk"] = {
            "first_pass_mean": _mean(first_tokens), "gleaning_mean": _mean(glean_tokens),
            "both_mean": _mean(totals), "both_p95": totals[int(0.95 * (len(totals) - 1))] if totals else None,
            "both_max": totals[-1] if totals else None, "target": TOKEN_TARGET,
            "server_usage_total": server_usage,
        }
        row["completion_tokens_per_chunk"] = first["sent_completion_tokens"] / n
        server.clear_records()

        if args.bare_client:
            row["bare_client"] = run_worker({**cfg, "bare": True})
            row["bare_client"]["server_calls"] = server.calls
            server.clear_records()

        if args.profile:
            prof_path = OUT / f"llm_extraction_L{latency:g}.prof"
            pcache = workdir / f"cache_L{latency:g}_profile.sqlite"
            profiled = run_worker({**cfg, "cache_path": str(pcache), "profile": str(prof_path)})
            row["profiled"] = {k: profiled[k] for k in ("wall_s", "cpu_user_s", "cpu_sys_s", "timers",
                                                       "profile_top_tottime", "profile_top_cumulative")}
            row["profiled"]["path"] = str(prof_path.relative_to(ROOT))
            server.clear_records()

        rerun = run_worker(cfg)
        row["rerun"] = {"wall_s": rerun["wall_s"], "server_calls": server.calls, "call_status": rerun["call_status"],
                        "chunks_per_s": rerun["n"] / rerun["wall_s"], "peak_rss_mb": rerun["peak_rss_mb"],
                        "cpu_s": rerun["cpu_user_s"] + rerun["cpu_sys_s"], "timers": rerun["timers"]}
    wall = row["wall_s"]
    row["chunks_per_s"] = n / wall
    if latency > 0:
        row["ceiling_k"] = args.concurrency / (row["calls_per_chunk"] * latency)
        row["ceiling_1"] = args.concurrency / latency
        row["share_of_k"] = row["chunks_per_s"] / row["ceiling_k"]
        row["share_of_1"] = row["chunks_per_s"] / row["ceiling_1"]
    return row


def _peak_rss_mb(field: str = "VmHWM") -> float:
    """This process's peak (VmHWM) or current (VmRSS) resident memory in MB.

    Not ru_maxrss: Linux keeps that across fork + exec, so a child would report the parent's size.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_self() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _mean(xs) -> float | None:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else None


# ---- report ---------------------------------------------------------------------------------------

def _f(x, spec=".1f", none="n/a") -> str:
    return none if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.0f}%"


def _num(value) -> str:
    return "–" if value is None else f"{value:.0f}"


def report(rows: list[dict], args) -> str:
    memory = f"{args.working_memory_tokens} tokens" if args.working_memory_tokens else "off"
    out = [f"LLM extraction, {args.format} format, concurrency {args.concurrency}, max_gleanings 1 "
           f"(gleaning {args.gleaning}), {args.chunks_per_document} chunk(s) per document, working memory {memory}; "
           f"ceilings C / L (the issue's) and C / (k L), k = calls per chunk", ""]
    out += ["| latency s | chunks | wall s | chunks/s | ceiling C/L | % of it | ceiling C/(kL) | % of it "
            "| calls/chunk | prompt tok/chunk | completion tok/chunk | client latency ms mean / p95 | open mean / in-flight peak "
            "| peak RSS MB | client CPU s | server CPU s | rerun calls | rerun s |",
            "|" + "---|" * 18]
    for r in rows:
        pt = r["prompt_tokens_per_chunk"]
        lat = r["client_latency_ms"]
        out.append(
            f"| {r['latency_s']:g} | {r['n']} | {r['wall_s']:.1f} | {r['chunks_per_s']:.1f} "
            f"| {_f(r.get('ceiling_1'), '.0f', '∞')} | {_pct(r.get('share_of_1'))} "
            f"| {_f(r.get('ceiling_k'), '.0f', '∞')} | {_pct(r.get('share_of_k'))} "
            f"| {r['calls_per_chunk']:.2f} | {pt['both_mean']:.0f} | {r['completion_tokens_per_chunk']:.0f} "
            f"| {_f(lat['mean'], '.0f')} / {_f(lat['p95'], '.0f')} | {_f(r['mean_in_flight'], '.1f')} / {r['peak_in_flight']} | {r['peak_rss_mb']:.0f} "
            f"| {r['cpu_user_s'] + r['cpu_sys_s']:.1f} | {r['server_cpu_s']:.1f} "
            f"| {r['rerun']['server_calls']} | {r['rerun']['wall_s']:.1f} |")
    out += ["", "Prompt tokens per chunk (count_message_tokens, o200k_base, OpenAI's +3 per message rule):", "",
            "| latency s | chars/chunk | first pass | gleaning pass | both: mean | p95 | max | target |",
            "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        pt = r["prompt_tokens_per_chunk"]
        ok = "ok" if pt["both_max"] is not None and pt["both_max"] <= TOKEN_TARGET else "OVER"
        out.append(f"| {r['latency_s']:g} | {r['chars_per_chunk']:.0f} | {pt['first_pass_mean']:.0f} | {_num(pt['gleaning_mean'])} "
                   f"| {pt['both_mean']:.0f} | {pt['both_p95']} | {pt['both_max']} | <= {TOKEN_TARGET} ({ok}) |")
    out += ["", "Where the client's time goes (synchronous work on the event loop, seconds over the run):", ""]
    names = sorted({k for r in rows for k in r["timers"]})
    out += ["| latency s | wall s | requests phase s | its CPU s | server ms/request | loop lag ms mean / p95 / max "
            "| GC s (gen 2) | " + " | ".join(names) + " |", "|" + "---|" * (7 + len(names))]
    for r in rows:
        lag = r["loop_lag_ms"]
        cells = [_f(r["timers"].get(k, {}).get("s"), ".2f", "-") for k in names]
        out.append(f"| {r['latency_s']:g} | {r['wall_s']:.1f} | {r['requests_phase_s']:.1f} | {r['requests_phase_cpu_s']:.1f} "
                   f"| {_f(r['server_duration_ms_mean'], '.0f')} "
                   f"| {_f(lag['mean'], '.1f')} / {_f(lag['p95'], '.1f')} / {_f(lag['max'], '.0f')} "
                   f"| {r['gc']['s']:.2f} ({r['gc']['gen2_s']:.2f}) | " + " | ".join(cells) + " |")
    bare = [r for r in rows if "bare_client" in r]
    if bare:
        out += ["", "The same requests sent by the bare openai.AsyncOpenAI client under the same semaphore "
                "(no cache, parsing or frames):", "",
                "| latency s | requests | wall s | requests/s | = chunks/s | CPU ms/request | latency ms mean "
                "| engine requests phase: CPU ms/request |", "|---|---|---|---|---|---|---|---|"]
        for r in bare:
            b = r["bare_client"]
            out.append(f"| {r['latency_s']:g} | {b['requests']} | {b['wall_s']:.1f} | {b['requests_per_s']:.0f} "
                       f"| {b['requests_per_s'] / r['calls_per_chunk']:.0f} | {b['cpu_ms_per_request']:.2f} "
                       f"| {b['latency_ms_mean']:.0f} | {1000 * r['requests_phase_cpu_s'] / r['server_calls']:.2f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        cfg = json.loads(argv[1])
        print(json.dumps(bare_client(cfg) if cfg.get("bare") else worker(cfg)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=2000, help="chunks per configuration (default 2000)")
    parser.add_argument("--latencies", type=float, nargs="+", default=[0.0, 0.2], help="server latency per request, s")
    parser.add_argument("--concurrency", type=int, default=32, help="LLMSettings.concurrency (default 32)")
    parser.add_argument("--format", choices=["tuple", "structured"], default="tuple")
    parser.add_argument("--gleaning", choices=["auto", "always"], default="auto",
                        help="auto: a gleaning pass only where the first answer asks for one (default); always: every chunk")
    parser.add_argument("--chars", type=int, default=2000, help="approximate characters per chunk (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunks-per-document", type=int, default=1, help="chunks per document (default 1)")
    parser.add_argument("--working-memory-tokens", type=int, default=200,
                        help="the engine's working-memory budget (default 200, the engine's; 0: off)")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="where the fresh SQLite caches go (default: a temp folder under $TMPDIR); "
                             "e.g. /dev/shm to take fsync out of the picture")
    parser.add_argument("--bare-client", action="store_true",
                        help="also send the same requests with the bare openai client (no engine) for comparison")
    parser.add_argument("--profile", action="store_true",
                        help="also run each configuration once more under cProfile (not in the main table)")
    args = parser.parse_args(argv)

    OUT.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    chunks, lookup = make_chunks(args.chunks, args.chars, args.seed, args.chunks_per_document)
    per_chunk = [len(a) + len(b) for a, b, _ in lookup.values()]
    print(f"{chunks.height} chunks, {chunks['text'].str.len_chars().mean():.0f} chars and "
          f"{sum(per_chunk) / len(per_chunk):.1f} gazetteer entities on average "
          f"(min {min(per_chunk)}, max {max(per_chunk)}), made in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory(prefix="kg_llm_bench_", dir=args.cache_dir) as tmp:
        workdir = Path(tmp)
        parquet = workdir / "chunks.parquet"
        chunks.write_parquet(parquet)
        for latency in args.latencies:
            print(f"latency {latency:g}s: load {os.getloadavg()[0]:.2f}, running ...", file=sys.stderr)
            row = measure(latency, args, parquet, lookup, workdir)
            print(f"  {row['chunks_per_s']:.1f} chunks/s in {row['wall_s']:.1f}s, {row['server_calls']} calls, "
                  f"rerun {row['rerun']['server_calls']} calls in {row['rerun']['wall_s']:.1f}s", file=sys.stderr)
            rows.append(row)
    table = report(rows, args)
    print(table)
    result = {
        "created_at": datetime.now(UTC).isoformat(), "argv": argv, "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "cache_dir": str(args.cache_dir or tempfile.gettempdir()),
        "engine_sha256": hashlib.sha256((ROOT / "kg_assets/extractors/llm/engine.py").read_bytes()).hexdigest()[:16],
        "ceiling_formula": "chunks/s <= concurrency / (calls_per_chunk * latency_s); issue's figure: concurrency / latency_s",
        "rows": rows, "table": table,
    }
    (OUT / "llm_extraction.json").write_text(json.dumps(result, indent=2, default=str))
    print(f"\nwrote {(OUT / 'llm_extraction.json').relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

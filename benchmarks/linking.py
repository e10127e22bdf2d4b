"""Entity linking benchmark: NameLinker time and peak memory on synthetic mentions, and the linkers'
scores on the shared evaluation files.

    .venv/bin/python benchmarks/linking.py                          # sizes 10000 100000
    .venv/bin/python benchmarks/linking.py --sizes 10000 100000 1000000
    .venv/bin/python benchmarks/linking.py --eval                   # score table on ../shared/eval

Each size runs in a fresh subprocess (peak resident memory = its ru_maxrss, which includes the
generated mentions); the generation is not timed, only `NameLinker.link` (wall seconds, and the
process CPU seconds, steadier on a shared machine). Results: a Markdown table on stdout and
`benchmarks/out/linking.json` (`benchmarks/out/linking_eval.json` for --eval).

Synthetic mentions: documents of ~20 mentions drawn from an entity universe with Zipf popularity
(s = 1.1). Persons appear as full name first, then surname, honorific + surname or full name again,
sometimes with a middle initial; organizations as full name (with or without a corporate suffix) and
their acronym; locations by name; a share of location names are also person surnames (homonyms across
types) and 3% of mentions are typed OTHER. Each document also names 0-4 one-off entities (the long
tail of names seen once).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"
EVAL_DIR = ROOT.parent / "shared" / "eval"

ONSETS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br", "ch", "cl",
          "dr", "fr", "gr", "kr", "pl", "sh", "st", "th", "tr"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou"]
CODAS = ["", "", "n", "r", "s", "l", "m", "t", "nd", "rk", "st", "x"]
ORG_HEADS = ["Systems", "Labs", "Institute", "Group", "Partners", "Foundation", "Bank", "Motors", "Energy",
             "Networks", "Pharmaceuticals", "University", "Agency", "Council", "Studios", "Airlines", "Dynamics"]
ORG_SUFFIXES = ["Inc.", "Corp.", "Ltd", "LLC", "GmbH", "plc"]
HONORIFICS = ["Dr.", "Mr.", "Mrs.", "Ms.", "Prof."]


def _word(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(syllables)).capitalize()


def _pools(rng: random.Random, n_entities: int) -> dict[str, list[str]]:
    return {
        "firsts": [_word(rng, rng.choice([1, 2])) for _ in range(max(200, n_entities // 50))],
        "lasts": [_word(rng, rng.choice([2, 3])) for _ in range(max(500, n_entities // 3))],
        "org_words": [_word(rng, rng.choice([2, 3])) for _ in range(max(300, n_entities // 5))],
    }


def _entity(rng: random.Random, pools: dict[str, list[str]]) -> dict:
    r = rng.random()
    if r < 0.45:
        middle = rng.choice(pools["firsts"]) if rng.random() < 0.2 else None
        return {"type": "PERSON", "first": rng.choice(pools["firsts"]), "last": rng.choice(pools["lasts"]),
                "middle": middle}
    if r < 0.75:
        words = [rng.choice(pools["org_words"]) for _ in range(rng.choice([1, 2, 2, 3]))] + [rng.choice(ORG_HEADS)]
        return {"type": "ORGANIZATION", "words": words,
                "suffix": rng.choice(ORG_SUFFIXES) if rng.random() < 0.3 else None}
    if r < 0.95:
        # a fifth of the places carry a person's surname (homonyms across types)
        name = rng.choice(pools["lasts"]) if rng.random() < 0.2 else _word(rng, rng.choice([2, 3]))
        if rng.random() < 0.25:
            name = f"{name} {rng.choice(['Valley', 'Springs', 'Harbor', 'Falls'])}"
        return {"type": "LOCATION", "name": name}
    return {"type": "EVENT", "name": f"{_word(rng, 2)} {rng.choice(['Summit', 'Festival', 'Crisis', 'Accord'])}"}


def _surface(rng: random.Random, e: dict, first: bool) -> str:
    t = e["type"]
    if t == "PERSON":
        full = f"{e['first']} {e['middle'][0]}. {e['last']}" if e["middle"] and rng.random() < 0.5 else f"{e['first']} {e['last']}"
        if first:
            return full
        r = rng.random()
        return e["last"] if r < 0.5 else f"{rng.choice(HONORIFICS)} {e['last']}" if r < 0.65 else full
    if t == "ORGANIZATION":
        name = " ".join(e["words"])
        acronym = "".join(w[0] for w in e["words"]).upper()
        if first:
            return f"{name} {e['suffix']}" if e["suffix"] else name
        r = rng.random()
        return acronym if r < 0.35 and len(acronym) >= 2 else f"{name} {e['suffix']}" if e["suffix"] and r < 0.5 else name
    return e["name"]


def generate(size: int, seed: int = 0):
    """~size ENTITY_MENTIONS rows (documents of ~20 mentions, Zipf entity popularity)."""
    import polars as pl

    from kg_assets.core.normalize import normalize_name_expr, with_entity_ids

    rng = random.Random(seed)
    n_entities = max(500, size // 4)
    pools = _pools(rng, n_entities)
    entities = [_entity(rng, pools) for _ in range(n_entities)]
    weights = [1.0 / (k + 1) ** 1.1 for k in range(n_entities)]
    cum, total = [], 0.0
    for w in weights:
        total += w
        cum.append(total)
    rows_doc, rows_name, rows_type, rows_gold = [], [], [], []
    doc = 0
    fresh = 0
    while len(rows_name) < size:
        picked = {rng.choices(range(n_entities), cum_weights=cum)[0] for _ in range(rng.randint(4, 10))}
        tail = [_entity(rng, pools) for _ in range(rng.randint(0, 4))]  # the long tail of one-off names
        for k, e in [(k, entities[k]) for k in sorted(picked)] + [(f"t{fresh + j}", t) for j, t in enumerate(tail)]:
            for j in range(rng.choice([1, 1, 2, 3, 4])):
                rows_doc.append(f"doc{doc:07d}")
                rows_name.append(_surface(rng, e, j == 0))
                rows_type.append("OTHER" if rng.random() < 0.03 else e["type"])
                rows_gold.append(f"e{k}")
        fresh += len(tail)
        doc += 1
    n = min(size, len(rows_name))
    frame = pl.DataFrame({"document_id": rows_doc[:n], "name": rows_name[:n], "entity_type": rows_type[:n],
                          "gold_cluster": rows_gold[:n]})
    frame = frame.with_row_index("row").with_columns(
        pl.format("m{}", "row").alias("mention_id"), pl.col("document_id").alias("chunk_id"),
        normalize_name_expr(pl.col("name")).alias("normalized_name"),
    ).drop("row")
    return with_entity_ids(frame, "entity_type", "normalized_name", "entity_id")


def worker(size: int, seed: int) -> dict:
    from kg_assets.core.linking import NameLinker

    started = time.perf_counter()
    mentions = generate(size, seed)
    generated = time.perf_counter() - started
    linker = NameLinker()
    started, cpu_started = time.perf_counter(), time.process_time()
    redirects = linker.link(mentions)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "size": size, "mentions": mentions.height, "documents": mentions["document_id"].n_unique(),
        "entity_ids": mentions["entity_id"].n_unique(), "redirects": redirects.height,
        "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2), "generate_seconds": round(generated, 2), "peak_mb": round(peak_kb / 1024),
        "stats": linker.stats,
    }


def run_sizes(sizes: list[int], seed: int) -> int:
    results = []
    for size in sizes:
        proc = subprocess.run([sys.executable, __file__, "--worker", str(size), "--seed", str(seed)],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return proc.returncode
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(f"size {size}: {results[-1]['seconds']} s, {results[-1]['peak_mb']} MB", file=sys.stderr)
    print("| mentions | documents | entity ids | redirects | candidate pairs | link s (wall) | CPU s | peak MB "
          "| s / 100k mentions |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['mentions']:,} | {r['documents']:,} | {r['entity_ids']:,} | {r['redirects']:,} | "
              f"{r['stats'].get('candidate_pairs', 0):,} | {r['seconds']} | {r['cpu_seconds']} | {r['peak_mb']:,} | "
              f"{r['seconds'] / r['mentions'] * 100_000:.2f} |")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "linking.json").write_text(json.dumps({"seed": seed, "cpu_count": os.cpu_count(), "results": results}, indent=2))
    return 0


def run_eval() -> int:
    from kg_assets.core.linking import NameLinker
    from kg_assets.evaluation.baselines import ExactIdLinker, containment_linker, exact_name_linker, fuzzy_linker
    from kg_assets.evaluation.linking import read_mentions, redocred_mentions, score_linking

    sets = []
    if (EVAL_DIR / "ecbplus_dev_mentions.jsonl").exists():
        sets.append(("ECB+ dev (cross-document)", read_mentions(EVAL_DIR / "ecbplus_dev_mentions.jsonl"), False))
    if (EVAL_DIR / "redocred_dev200.jsonl").exists():
        red = redocred_mentions(EVAL_DIR / "redocred_dev200.jsonl")
        sets.append(("Re-DocRED dev200 (per document)", red, True))
        sets.append(("Re-DocRED dev200 (whole corpus)", red, False))
    if not sets:
        print(f"no evaluation files in {EVAL_DIR}", file=sys.stderr)
    # the generator's own truth: a sanity check of the rules on data they were written for, not evidence
    synthetic = generate(20_000, seed=1).rename({"document_id": "doc_id", "name": "text", "entity_type": "type"})
    sets.append(("synthetic 20k (generator truth)", synthetic, False))
    rows = []
    for label, mentions, per_document in sets:
        for linker in (ExactIdLinker(), exact_name_linker, containment_linker, fuzzy_linker, NameLinker()):
            rows.append({"data": label, **score_linking(mentions, linker, per_document=per_document)})
    print("| data | linker | pairwise P | pairwise R | pairwise F1 | B3 P | B3 R | B3 F1 | clusters (gold) | s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['data']} | {r['linker']} | {r['pairwise_precision']:.3f} | {r['pairwise_recall']:.3f} | "
              f"{r['pairwise_f1']:.3f} | {r['bcubed_precision']:.3f} | {r['bcubed_recall']:.3f} | "
              f"**{r['bcubed_f1']:.3f}** | {r['predicted_clusters']} ({r['gold_clusters']}) | {r['seconds']} |")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "linking_eval.json").write_text(json.dumps(rows, indent=2))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="mentions per run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval", action="store_true", help="score the linkers on ../shared/eval instead")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.seed)))
        return 0
    if args.eval:
        return run_eval()
    return run_sizes(args.sizes, args.seed)


if __name__ == "__main__":
    sys.exit(main())

"""User-facts benchmark: the pure fact pipeline on synthetic chat messages, offline.

    .venv/bin/python benchmarks/facts.py                                   # 10,000 and 100,000 messages
    .venv/bin/python benchmarks/facts.py --sizes 10000 100000 --rates 0.3 1.0 --messages-per-user 100

For each size and rate, a fresh subprocess generates chat logs, then runs the pure part of what the fact assets run:
parse every chat `.jsonl` (kg_assets/core/chat.py), then `learn_facts` with the offline heuristic extractor
(sampling, extractability, extraction, validation, dedup and supersession in each user's memory), then the
from-scratch rebuild of all decisions (`build_user_facts`, what a consolidation does). Generation is not
timed. Reported: seconds per phase (wall and process CPU), messages per second over the whole pipeline, peak
resident memory of the subprocess (ru_maxrss, including the generated data) and facts kept. Results: a
Markdown table on stdout and `benchmarks/out/facts.json`.

Synthetic chats: conversations of 40 messages between 2-5 users drawn from a pool (`--messages-per-user`
sets the pool size); a user's messages mix greetings, questions, chatter and first-person statements built
from templates (where they live and move, work and change jobs, family, hobbies, likes and dislikes, plans),
so facts repeat, contradict earlier ones and get superseded as in a long-running chat.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"

CITIES = ["Lisbon", "Boston", "Porto", "Zurich", "Munich", "Denver", "Austin", "Osaka", "Lyon", "Leeds", "Quito",
          "Perth", "Oslo", "Cork", "Graz", "Split"]
EMPLOYERS = ["a bakery", "the city hospital", "Northwind", "a small law firm", "QDL", "a bike shop", "the library",
             "a startup", "the local school", "an insurance company"]
JOBS = ["nurse", "teacher", "software engineer", "accountant", "chef", "mechanic", "designer", "pharmacist"]
HOBBIES = ["hiking", "painting", "chess", "knitting", "surfing", "baking bread", "bird watching", "rock climbing",
           "playing the piano", "gardening", "fishing", "photography"]
LIKES = ["dark roast coffee", "spicy food", "jazz records", "old horror movies", "mystery novels", "green tea",
         "board games", "rainy days"]
FAMILY = ["two younger sisters", "a brother in the navy", "three kids", "a teenage son", "twin daughters",
          "a big family", "an older sister"]
PETS = ["a dog named Rex", "two cats", "a parrot", "a golden retriever", "three chickens"]
TEMPLATES = [
    "I live in {city} with my partner.", "I moved to {city} last year, so everything is still new.",
    "I work at {employer} as a {job}.", "I just started a new job at {employer}!",
    "I love {hobby} on weekends, it keeps me sane.", "My favorite thing is {hobby}, I do it every week.",
    "I really like {like}.", "I don't like {like} at all, never have.", "I have {family}.",
    "I have {pet} and they are the best.", "I'm planning to move to {city} next spring.",
    "I used to live in {city} when I was a kid.", "I'm a {job}, I have been for ten years.",
    "Honestly I stopped {hobby} after my injury.", "We are going to {city} for a wedding next month.",
]
CHATTER = ["Hi everyone, how is it going today?", "Haha that is so true!", "What do you all do for fun?",
           "Thanks, that helps a lot!", "Does anyone know a good place to eat around here?", "ok", "lol",
           "I think that is a great idea, let's do it.", "Sounds good to me, see you then.",
           "!remind me in two hours", "Where did you grow up?", "That's awesome, congrats!!"]
EPOCH = datetime(2025, 1, 1, tzinfo=UTC)


def _content(rng: random.Random) -> str:
    if rng.random() < 0.45:
        return rng.choice(CHATTER)
    text = rng.choice(TEMPLATES).format(city=rng.choice(CITIES), employer=rng.choice(EMPLOYERS), job=rng.choice(JOBS),
                                        hobby=rng.choice(HOBBIES), like=rng.choice(LIKES), family=rng.choice(FAMILY),
                                        pet=rng.choice(PETS))
    if rng.random() < 0.3:  # a second statement or a question in the same message
        text += " " + rng.choice(CHATTER if rng.random() < 0.5 else TEMPLATES).format(
            city=rng.choice(CITIES), employer=rng.choice(EMPLOYERS), job=rng.choice(JOBS), hobby=rng.choice(HOBBIES),
            like=rng.choice(LIKES), family=rng.choice(FAMILY), pet=rng.choice(PETS))
    return text


def generate_chats(n_messages: int, messages_per_user: int, seed: int = 0) -> dict[str, str]:
    """Conversation id -> chat .jsonl text, n_messages in total."""
    rng = random.Random(seed)
    users = [f"u-{i:06d}" for i in range(max(2, n_messages // messages_per_user))]
    chats: dict[str, str] = {}
    sent = 0
    clock = EPOCH
    while sent < n_messages:
        conversation = f"chat/c{len(chats):06d}.jsonl"
        members = rng.sample(users, rng.randint(2, 5))
        lines = []
        for k in range(min(40, n_messages - sent)):
            clock += timedelta(seconds=rng.randint(5, 900))
            user = rng.choice(members)
            lines.append(json.dumps({"user_id": user, "message_id": f"{conversation}#{k}",
                                     "timestamp": clock.isoformat(), "content": _content(rng),
                                     "display_name": f"User {user[2:]}"}))
            sent += 1
        chats[conversation] = "\n".join(lines)
    return chats


def run_one(n_messages: int, rate: float, messages_per_user: int, seed: int) -> dict:
    import polars as pl

    from kg_assets.core.chat import messages_frame, parse_chat
    from kg_assets.core.facts.memory import build_user_facts
    from kg_assets.core.facts.pipeline import learn_facts
    from kg_assets.extractors.facts.heuristic import HeuristicFactExtractor

    chats = generate_chats(n_messages, messages_per_user, seed)
    timings: dict[str, tuple[float, float]] = {}

    def timed(name, fn):
        wall, cpu = time.perf_counter(), time.process_time()
        value = fn()
        timings[name] = (time.perf_counter() - wall, time.process_time() - cpu)
        return value

    messages = timed("parse", lambda: pl.concat([messages_frame(c, parse_chat(t)) for c, t in chats.items()]))
    learned = timed("learn", lambda: learn_facts(messages, HeuristicFactExtractor(), rate=rate, learned_at=EPOCH))
    rebuilt = timed("rebuild", lambda: build_user_facts(learned.facts))
    assert rebuilt.sort("fact_id").equals(learned.facts.sort("fact_id")), "a rebuild must decide the same"
    facts = learned.facts
    total = timings["parse"][0] + timings["learn"][0]
    return {
        "messages": messages.height,
        "users": messages["user_id"].n_unique(),
        "conversations": len(chats),
        "rate": rate,
        "outcomes": learned.outcomes(),
        "facts": facts.height,
        "active": facts.filter(pl.col("is_active")).height,
        "duplicates": facts.filter(pl.col("duplicate_of").is_not_null()).height,
        "superseded": facts.filter(pl.col("superseded_by").is_not_null()).height,
        "seconds": {k: round(v[0], 3) for k, v in timings.items()},
        "cpu_seconds": {k: round(v[1], 3) for k, v in timings.items()},
        "messages_per_second": round(messages.height / total) if total else None,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rates", type=float, nargs="+", default=[0.3, 1.0])
    parser.add_argument("--messages-per-user", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", nargs=2, metavar=("SIZE", "RATE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(int(args.child[0]), float(args.child[1]), args.messages_per_user, args.seed)))
        return 0
    results = []
    for rate in args.rates:
        for size in args.sizes:
            child = subprocess.run(
                [sys.executable, __file__, "--child", str(size), str(rate), "--messages-per-user",
                 str(args.messages_per_user), "--seed", str(args.seed)],
                capture_output=True, text=True, check=False)
            if child.returncode:
                print(child.stderr, file=sys.stderr)
                return 1
            results.append(json.loads(child.stdout.strip().splitlines()[-1]))
            r = results[-1]
            print(f"rate {rate}: {r['messages']:,} messages done in {sum(r['seconds'].values()):.1f}s", file=sys.stderr)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "facts.json").write_text(json.dumps(results, indent=2))
    print("| rate | messages | users | read (ok) | facts | active | duplicates | superseded | parse s | learn s "
          "| rebuild s | messages/s | peak RSS |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        s = r["seconds"]
        print(f"| {r['rate']} | {r['messages']:,} | {r['users']:,} | {r['outcomes'].get('ok', 0):,} | {r['facts']:,} "
              f"| {r['active']:,} | {r['duplicates']:,} | {r['superseded']:,} | {s['parse']:.2f} | {s['learn']:.2f} "
              f"| {s['rebuild']:.2f} | {r['messages_per_second']:,} | {r['peak_rss_mb']:,} MB |")
    for rate in args.rates:
        by_size = {r["messages"]: r for r in results if r["rate"] == rate}
        if len(by_size) > 1:
            small, large = min(by_size), max(by_size)
            grow = lambda r: r["seconds"]["parse"] + r["seconds"]["learn"]  # noqa: E731
            print(f"\nrate {rate}: {large / small:.0f}x the messages took "
                  f"{grow(by_size[large]) / grow(by_size[small]):.1f}x the time (parse + learn)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

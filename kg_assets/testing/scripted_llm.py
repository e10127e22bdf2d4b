"""A scripted 'model' for the fake OpenAI server: it answers extraction prompts from a small gazetteer.

It reads the chunk text out of the prompt exactly as a model would see it, names the gazetteer entries
that occur in it (first pass) and, on a gleaning request, those listed in `missed` that were not yet
extracted. Answers come in the requested format: tuple lines or a tool call for instructor.
"""

from __future__ import annotations

import json
import re

from kg_assets.core.extraction.prompts import SUMMARY_SYSTEM
from kg_assets.testing.openai_server import Reply

SAMPLE_NAMES = {
    "Sarah Chen": "PERSON",
    "Marcus Webb": "PERSON",
    "Quantum Dynamics Lab": "ORGANIZATION",
    "Northwind Robotics": "ORGANIZATION",
    "Lumen Analytics": "ORGANIZATION",
    "Boston": "LOCATION",
    "Pittsburgh": "LOCATION",
    "DuckDB": "TECHNOLOGY",
    "Qubitline": "PRODUCT",
}
_TEXT = re.compile(r'Text:\n"""\n(.*?)\n"""', re.S)


def chunk_text(request: dict) -> str:
    match = _TEXT.search(request["messages"][-1]["content"])
    return match.group(1) if match else ""


def is_gleaning(request: dict) -> bool:
    return "missed so far" in request["messages"][-1]["content"]


def is_summary(request: dict) -> bool:
    return request["messages"][0]["content"] == SUMMARY_SYSTEM


def records(text: str, names: dict[str, str]) -> tuple[list[dict], list[dict], list[dict]]:
    found = sorted((text.find(n), n) for n in names if n in text)
    # A description per chunk, as a model would give: fragments differ from chunk to chunk.
    context = " ".join(text.split())[:48]
    entities = [{"name": n, "type": names[n], "description": f"{n}, as in: {context}"} for _, n in found]
    relations = [
        {"source": a["name"], "target": b["name"], "keywords": "related to", "description": f"{a['name']} and {b['name']}.", "strength": 0.8}
        for a, b in zip(entities, entities[1:])
    ]
    attributes = []
    if "Marcus Webb" in text and "joined Quantum Dynamics Lab" in text:
        attributes.append({"entity": "Marcus Webb", "key": "employer", "value": "Quantum Dynamics Lab", "confidence": 0.95})
    return entities, relations, attributes


def to_tuples(entities, relations, attributes) -> str:
    d = "<|#|>"
    lines = [d.join(["entity", e["name"], e["type"], e["description"]]) for e in entities]
    lines += [d.join(["relation", r["source"], r["target"], r["keywords"], r["description"], str(r["strength"])]) for r in relations]
    lines += [d.join(["attribute", a["entity"], a["key"], a["value"], str(a["confidence"])]) for a in attributes]
    return "\n".join([*lines, "<|COMPLETE|>"])


def is_fact_request(request: dict) -> bool:
    tools = request.get("tools") or []
    return bool(tools) and tools[0].get("function", {}).get("name") == "FactsOut"


def fact_message(request: dict) -> str:
    """The chat message a user-fact request asks about (the prompt carries it as a JSON string)."""
    line = request["messages"][-1]["content"].split("Message (JSON string): ", 1)[1]
    return json.loads(line)


def fact_context(request: dict) -> str | None:
    """The other person's question a user-fact request carries as context, if any."""
    for line in request["messages"][-1]["content"].splitlines():
        if line.startswith("Previous message, a question said by the other person"):
            return json.loads(line.split("(JSON string): ", 1)[1])
    return None


def fact_answer(request: dict) -> Reply:
    """A user-fact tool call: what the offline heuristic finds in the message (with the question it answers)."""
    from kg_assets.extractors.facts.heuristic import heuristic_facts

    facts = [{"type": f.fact_type, "content": f.content, "confidence": f.confidence, "importance": f.importance,
              "temporal": f.temporal} for f in heuristic_facts(fact_message(request), fact_context(request))]
    return Reply(content=json.dumps({"facts": facts}))


def extraction_responder(names: dict[str, str] = SAMPLE_NAMES, missed: dict[str, str] | None = None):
    """Responder: first pass finds `names` in the text; gleaning finds `missed` ones not yet listed; a user-fact
    request gets the heuristic's facts of its message."""

    def respond(request: dict) -> Reply:
        if is_fact_request(request):
            return fact_answer(request)
        if is_summary(request):
            entity = request["messages"][-1]["content"].splitlines()[0].removeprefix("Entity: ")
            return Reply(content=f"Summary of {entity}.")
        text = chunk_text(request)
        if is_gleaning(request):
            already = request["messages"][-1]["content"].split('"""')[-1]  # what follows the text
            extra = {n: t for n, t in (missed or {}).items() if n in text and n not in already}
            entities, relations, attributes = records(text, extra)
        else:
            entities, relations, attributes = records(text, names)
        if request.get("tools"):
            return Reply(content=json.dumps({"entities": entities, "relations": relations, "attributes": attributes}))
        return Reply(content=to_tuples(entities, relations, attributes))

    return respond


def main() -> None:
    """Serve the scripted model on a fixed port, for trying `kg run` against an LLM by hand:

        python -m kg_assets.testing.scripted_llm --port 8765 [--latency 0.2]
        OPENAI_BASE_URL=http://127.0.0.1:8765/v1 OPENAI_API_KEY=test kg run
    """
    import argparse
    import signal
    import threading

    from kg_assets.testing.openai_server import FakeOpenAIServer

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every answer")
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with FakeOpenAIServer(extraction_responder(), port=args.port, latency_s=args.latency) as server:
        print(f"scripted OpenAI-compatible model at {server.base_url}", flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
        print(f"served {server.calls} requests", flush=True)


if __name__ == "__main__":
    main()

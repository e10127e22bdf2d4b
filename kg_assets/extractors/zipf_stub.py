"""The instant stub LLM's answer for one chunk, the same for kg_assets and its peers: 3 entities, 2 relations.

Standard library only, so the peer benchmark's runners (``benchmarks/peer_runners/``) load this file by its
path inside nano-graphrag's and LightRAG's own virtualenvs, where kg_assets is not installed, and every
pipeline gets the same entities for the same chunk text:

- the RNG is seeded by sha256 of the chunk text (its first 8 bytes as an integer);
- the 3 entities are 3 distinct names drawn with Zipf-Mandelbrot weights (rank + OFFSET) ** -EXPONENT
  from a fixed pool of POOL_SIZE names (built once from the fixed seed POOL_SEED), so a few names recur in
  many chunks and most in a handful, as with a real corpus;
- the 2 relations are entity 0 -> 1 and entity 1 -> 2.

Each pipeline's format is written elsewhere: kg_assets' ``ZipfStubExtractor`` (``stub.py``) makes rows,
the peer runners tuple-delimited answers with the delimiters read from the peer's own prompt module
(:func:`tuple_answer`).
"""

from __future__ import annotations

import hashlib
import itertools
import random
from typing import NamedTuple

POOL_SIZE = 2000
POOL_SEED = "kg-assets-zipf-stub-pool-1"
EXPONENT = 1.1
OFFSET = 2.7
ENTITIES, RELATIONS = 3, 2
TYPES = ("PERSON", "ORGANIZATION", "LOCATION", "EVENT")

_FIRST = ("Ada", "Bram", "Cleo", "Dario", "Elin", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Liam",
          "Mara", "Nils", "Olga", "Pavel", "Quinn", "Rosa", "Sami", "Tove", "Uma", "Viktor", "Wren", "Yara")
_LAST = ("Achebe", "Brandt", "Castillo", "Dufour", "Eklund", "Fischer", "Gallo", "Haddad", "Ivanova", "Jensen",
         "Kowalski", "Lindqvist", "Moreau", "Novak", "Okafor", "Petrov", "Quispe", "Rossi", "Sato", "Tanaka")
_ROOT = ("Aster", "Borealis", "Cobalt", "Delta", "Ember", "Fjord", "Granite", "Helix", "Iris", "Juniper",
         "Krypton", "Lumen", "Meridian", "Nimbus", "Onyx", "Polaris", "Quartz", "Raven", "Solstice", "Tundra")
_ORG = ("Labs", "Systems", "Institute", "Group", "Analytics", "Foundation", "Robotics", "Partners")
_PLACE = ("Harbor", "Valley", "Springs", "Heights", "Point", "Falls", "Bay", "Ridge")
_EVENT = ("Summit", "Forum", "Conference", "Workshop", "Expo")


class Entity(NamedTuple):
    name: str
    type: str  # one of TYPES
    description: str


class Relation(NamedTuple):
    source: int  # index into the chunk's entities
    target: int
    description: str
    keywords: str
    strength: float


def _pool() -> list[tuple[str, str]]:
    rng = random.Random(POOL_SEED)
    per_type = POOL_SIZE // len(TYPES)
    names = {
        "PERSON": [f"{f} {i}. {l}" for f in _FIRST for i in "ABCDEFGHJKLMNPRSTW" for l in _LAST],
        "ORGANIZATION": [f"{a} {b} {o}" for a in _ROOT for b in _ROOT if a != b for o in _ORG],
        "LOCATION": [f"{d}{r} {p}" for d in ("", "North ", "South ", "East ", "West ", "New ", "Old ")
                     for r in _ROOT for p in _PLACE],
        "EVENT": [f"{r} {e} {y}" for r in _ROOT for e in _EVENT for y in range(2018, 2027)],
    }
    out = []
    for kind in TYPES:
        rng.shuffle(names[kind])
        out += [(name, kind) for name in names[kind][:per_type]]
    rng.shuffle(out)  # the most frequent ranks are not all of one type
    return out


POOL = _pool()
_CUM = list(itertools.accumulate(1.0 / ((rank + OFFSET) ** EXPONENT) for rank in range(1, POOL_SIZE + 1)))


def seed_of(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "big")


def draw(text: str) -> tuple[list[Entity], list[Relation]]:
    """The 3 entities and 2 relations of the chunk ``text`` (deterministic)."""
    rng = random.Random(seed_of(text))
    picked: list[int] = []
    while len(picked) < ENTITIES:
        (index,) = rng.choices(range(POOL_SIZE), cum_weights=_CUM, k=1)
        if index not in picked:
            picked.append(index)
    entities = [Entity(POOL[i][0], POOL[i][1], f"{POOL[i][0]} ({POOL[i][1].lower()}) is named in the text.")
                for i in picked]
    relations = [Relation(a, b, f"{entities[a].name} works with {entities[b].name}.", "works with",
                          float(rng.randint(1, 9)))
                 for a, b in ((0, 1), (1, 2))]
    return entities, relations


def tuple_answer(text: str, *, tuple_delimiter: str, record_delimiter: str, completion_delimiter: str,
                 style: str, entity_types: dict[str, str] | None = None) -> str:
    """The answer in a peer's tuple-delimited format for the chunk ``text``.

    ``style="nano-graphrag"``: ``("entity"<td>"NAME"<td>"TYPE"<td>"description")`` records and
    ``("relationship"<td>"SRC"<td>"TGT"<td>"description"<td>strength)``, joined by the record delimiter,
    ending with the completion delimiter (nano-graphrag's and LightRAG 1.x's older prompt).
    ``style="lightrag"``: LightRAG's newer lines ``entity<td>name<td>type<td>description`` and
    ``relation<td>source<td>target<td>keywords<td>description``, one per line, then the completion
    delimiter. ``entity_types`` maps TYPES to the peer's own type names.
    """
    entities, relations = draw(text)
    kind = entity_types or {}
    if style == "nano-graphrag":
        td = tuple_delimiter
        records = [f'("entity"{td}"{e.name}"{td}"{kind.get(e.type, e.type)}"{td}"{e.description}")' for e in entities]
        records += [f'("relationship"{td}"{entities[r.source].name}"{td}"{entities[r.target].name}"{td}'
                    f'"{r.description}"{td}{r.strength:g})' for r in relations]
        return f"{record_delimiter}\n".join(records) + f"\n{completion_delimiter}"
    if style == "lightrag":
        td = tuple_delimiter
        lines = [f"entity{td}{e.name}{td}{kind.get(e.type, e.type)}{td}{e.description}" for e in entities]
        lines += [f"relation{td}{entities[r.source].name}{td}{entities[r.target].name}{td}{r.keywords}{td}"
                  f"{r.description}" for r in relations]
        return "\n".join(lines) + f"\n{completion_delimiter}"
    raise ValueError(f"unknown style {style!r}")

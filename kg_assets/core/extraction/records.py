"""Records as read from a model's answer, before they are cleaned and turned into rows.

Plain slotted dataclasses, not pydantic models: they cost a fraction of a validated model per record,
and everything after the answer (merging passes, sanitizing, building rows) works on them. Every record
remembers the pass that produced it (``gleaning_pass``: 0 for the first pass, k for the k-th gleaning
pass), set when the answer is parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(slots=True)
class Entity:
    name: str
    type: str
    description: str = ""
    gleaning_pass: int = 0


@dataclass(slots=True)
class Relation:
    source: str  # entity names, as the model wrote them
    target: str
    keywords: str = ""
    description: str = ""
    strength: float = 1.0
    gleaning_pass: int = 0


@dataclass(slots=True)
class Attribute:
    entity: str
    key: str
    value: str
    confidence: float | None = None
    gleaning_pass: int = 0


@dataclass
class ParsedOutput:
    """One answer (or several passes merged) for one chunk."""

    entities: list[Entity] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    attributes: list[Attribute] = field(default_factory=list)
    bad_lines: list[str] = field(default_factory=list)
    complete: bool = False  # the terminator was seen (tuple) / the response validated (structured)
    nothing_missing: bool = False  # terminator and no record at all: a gleaning pass may stop
    more_requested: bool = False  # the model said records remain (<|CONTINUE|> / more=true)
    echoed_lines: int = 0  # lines that repeat the prompt (its template lines, its instructions)
    example_copies: int = 0  # records that copied the prompt's example, dropped
    degenerate: str | None = None  # why the answer looks like a loop or an echo of the prompt, if it does

    @property
    def needs_gleaning(self) -> bool:
        """A follow-up pass is needed: the answer was cut, had unparseable records, or said more remain; never
        after a degenerate answer (a loop or an echo of the prompt), which another request would repeat."""
        return (self.more_requested or not self.complete or bool(self.bad_lines)) and self.degenerate is None

    @property
    def record_count(self) -> int:
        return len(self.entities) + len(self.relations) + len(self.attributes)


def merge_passes(outputs: Sequence[ParsedOutput]) -> ParsedOutput:
    """Concatenate the passes of one chunk in order (records keep their own gleaning_pass).

    ``complete`` is whether every pass was complete; ``nothing_missing`` is the last pass's flag.
    """
    merged = ParsedOutput(complete=bool(outputs) and all(o.complete for o in outputs))
    for o in outputs:
        merged.entities.extend(o.entities)
        merged.relations.extend(o.relations)
        merged.attributes.extend(o.attributes)
        merged.bad_lines.extend(o.bad_lines)
    merged.nothing_missing = bool(outputs) and outputs[-1].nothing_missing
    return merged

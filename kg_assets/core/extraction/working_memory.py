"""Working memory across the chunks of one document (seed 003's episodic working memory).

A chunk is extracted with the entities that earlier chunks of its document already named, so the model
reuses "Sarah Chen" instead of inventing "Dr. Chen" as a new entity three chunks later. The memory is
bounded: it holds at most what fits in ``budget_tokens`` of prompt (most recently named first), and it is
evicted at a section boundary, when the chunk's top-level section differs from the previous chunk's. The
entities of the chunk just before the boundary stay as a bridge into the next section, as the seed's
transitional summary does; everything older goes.

Pure: no I/O, no model. The engine feeds it, for each finished chunk, the (name, type) pairs that made rows
(``rows.row_names``: after the sanitizer and the row builder's rules), so a name the run dropped (not in the
chunk, a nationality or role word, a pronoun) is never suggested to the model again, and a titled person is
remembered by the name of its row ("Barack Obama", not "US President Barack Obama").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kg_assets.core.tokens import count_tokens

SECTION_SEPARATOR = " > "  # how chunking joins a section path
MAX_NAME_CHARS = 60


def top_section(section_path: str | None) -> str:
    return (section_path or "").split(SECTION_SEPARATOR, 1)[0].strip()


def render(entities: Sequence[tuple[str, str]]) -> str:
    """The prompt block for (name, type) pairs, grouped by type in first-seen order; "" when empty."""
    groups: dict[str, list[str]] = {}
    for name, entity_type in entities:
        groups.setdefault(entity_type, []).append(name)
    if not groups:
        return ""
    lines = [f"{entity_type}: " + "; ".join(names) for entity_type, names in groups.items()]
    return ("Entities named earlier in this document (use these exact names when the text refers to them; "
            "list them only if this text mentions them):\n" + "\n".join(lines))


def block_tokens(entities: Sequence[tuple[str, str]]) -> int:
    return count_tokens(render(entities)) if entities else 0


@dataclass
class WorkingMemory:
    """Entities named so far in one document, most recent last; bounded by a prompt-token budget."""

    budget_tokens: int
    _entities: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    _last_chunk: list[tuple[str, str]] = field(default_factory=list)
    _section: str | None = None

    def enter(self, section_path: str | None) -> None:
        """Start the next chunk; a new top-level section evicts all but the previous chunk's entities."""
        section = top_section(section_path)
        if self._section is not None and section != self._section:
            bridge = {_key(name, entity_type): (name, entity_type) for name, entity_type in self._last_chunk}
            self._entities = bridge
        self._section = section

    def remember(self, entities: Iterable[tuple[str, str]]) -> None:
        """The entities of the chunk just extracted; a name named again becomes the most recent."""
        named = []
        for name, entity_type in entities:
            name, entity_type = " ".join(str(name).split())[:MAX_NAME_CHARS], str(entity_type).strip().upper()
            if not name:
                continue
            key = _key(name, entity_type)
            self._entities.pop(key, None)
            self._entities[key] = (name, entity_type)
            named.append((name, entity_type))
        self._last_chunk = named

    def known(self) -> tuple[tuple[str, str], ...]:
        """What goes into the next prompt: the most recent entities whose block fits the budget."""
        if self.budget_tokens <= 0 or not self._entities:
            return ()
        recent = list(reversed(self._entities.values()))
        low, high = 0, len(recent)  # the block grows with every entity, so the largest fitting prefix is a bisection
        while low < high:
            middle = (low + high + 1) // 2
            if block_tokens(recent[:middle]) <= self.budget_tokens:
                low = middle
            else:
                high = middle - 1
        return tuple(recent[:low])


def _key(name: str, entity_type: str) -> tuple[str, str]:
    return name.casefold(), entity_type

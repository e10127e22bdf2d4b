"""A capitalised "The" inside a sentence belongs to the name after it: "the courts in The Hague", "according
to The Times", a film called "The Red Elvis". Spans never start with "The" (at the start of a sentence its
capital says nothing), so the mention gets it back where the word before it is lower case or a comma, the
"The" standing right before the mention, maybe after an opening quote. The entity id does not change (the
normalized name drops a leading article); the name as written, which readers and gold data match, does.
"""

from __future__ import annotations

import re

from kg_assets.core.extraction.rows import MentionRecord

_THE_BEFORE = re.compile(r"(?:[a-z][\w'’-]*|,)[ \t]+[\"“‘']?(The )\Z")
_LOOKBACK = 60


def with_inner_the(text: str, mentions: list[MentionRecord]) -> list[MentionRecord]:
    """The mentions, each right after a capitalised "The" inside a sentence with that "The" in its name."""
    out = []
    for m in mentions:
        s = m.char_start
        hit = None if not m.name or s is None or s < 4 else _THE_BEFORE.search(text, max(0, s - _LOOKBACK), s)
        if hit is None:
            out.append(m)
            continue
        start = hit.start(1)
        out.append(MentionRecord(text[start:s] + m.name, m.entity_type, m.description, m.confidence, start,
                                 m.char_end, m.gleaning_pass))
    return out

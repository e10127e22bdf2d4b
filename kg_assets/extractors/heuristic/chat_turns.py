"""Chat lines for the heuristic extractor: who speaks, and who "I" is.

A chat document's text puts ``[time] Speaker (user-id): `` before every line (`core.chat`). In a chunk
with such lines:

* The prefix is not prose. It is blanked before sentences and mentions are read, so each message
  starts its own sentence: a greeting word ("Good", "Great", "Perfect") is then a sentence-initial
  word with no cue and is dropped like any other.
* The speaker is an entity: a display name gives a PERSON mention at its offsets in the prefix [0.9].
  Prefix mentions take part in no relation: a speaker is not related to everything they mention.
* A speaker without a display name is named by a self-introduction in their own message earlier in the
  chunk: ``I'm X``, ``I am X``, ``my name is X``, ``this is X`` right before a name that ends the clause
  (``I'm Ana Ribeiro, a PhD student``, not ``I'm on Qubitline 1.5``); that name is a PERSON [0.85].
* A first-person pronoun in a message (``I``, ``I'm``, ``I'd``, ``I'll``, ``I've``, ``me``, ``my``,
  ``mine``, ``myself``) refers to its speaker: when the speaker has a name it is a PERSON mention of
  that name at the pronoun's offsets [0.85] (so ``text[start:end]`` is the pronoun, not the name), and it
  takes part in relations and attribute cues like the name would. Without a known name it gives nothing.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from kg_assets.core.chat import ChatLine, chat_lines
from kg_assets.extractors.heuristic.lexicon import word_key
from kg_assets.extractors.heuristic.mentions import Span

CONF_SPEAKER = 0.9
CONF_SELF = 0.85
_PRONOUN_RE = re.compile(r"(?<![\w'’])(?:I(?:['’](?:m|d|ll|ve))?|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself)(?![\w'’])")
_INTRO_RE = re.compile(r"(?:\bI['’]m|\bI am|\b[Mm]y name is|^[Tt]his is)\s+$")
_CLAUSE_END_RE = re.compile(r"\s*(?:[,.!;?)]|$| and\b| from\b| here\b)")


@dataclass(frozen=True)
class ChatChunk:
    text: str  # the chunk text with every line prefix blanked (same length, same offsets)
    lines: list[ChatLine]


def read_chat(text: str) -> ChatChunk | None:
    """The chunk's chat lines and the text to read sentences from; None when the chunk is no chat."""
    lines = chat_lines(text)
    if not lines:
        return None
    chars = list(text)
    for line in lines:
        # a blank line where the prefix was: every message is a block of its own
        chars[line.start] = "\n"
        chars[line.start + 1:line.content_start] = " " * (line.content_start - line.start - 1)
    return ChatChunk("".join(chars), lines)


def _line_of(lines: list[ChatLine], starts: list[int], offset: int) -> ChatLine | None:
    k = bisect_right(starts, offset) - 1
    if k < 0:
        return None
    line = lines[k]
    return line if line.content_start <= offset <= line.end else None


def speaker_spans(chat: ChatChunk, spans: list[Span], sentences: list[tuple[int, int]]) -> list[Span]:
    """Retype self-introduced names and add one speaker span per first-person pronoun; `spans` are the
    mentions found in `chat.text`. Returns all spans in text order."""
    lines = chat.lines
    starts = [line.start for line in lines]
    names: dict[str, str] = {line.user_id: line.display_name for line in lines if line.display_name}
    by_start = sorted(spans, key=lambda sp: sp.start)
    pronouns = list(_PRONOUN_RE.finditer(chat.text))
    for sp in by_start:
        line = _line_of(lines, starts, sp.start)
        if line is None:
            continue
        before = chat.text[line.content_start:sp.start]
        if _INTRO_RE.search(before) and _CLAUSE_END_RE.match(chat.text, sp.end) and len(sp.words) <= 3:
            sp.etype, sp.conf, sp.cue = "PERSON", CONF_SELF, "self_introduction"
            names.setdefault(line.user_id, sp.name)
    sent_starts = [s for s, _ in sentences]
    out = list(spans)
    for m in pronouns:
        line = _line_of(lines, starts, m.start())
        name = names.get(line.user_id) if line is not None else None  # an introduction anywhere in the chunk
        if name is None:
            continue
        sp = Span()
        sp.start, sp.end, sp.name = m.start(), m.end(), name
        sp.words = tuple(word_key(w) for w in name.split())
        sp.sent = max(0, bisect_right(sent_starts, m.start()) - 1)
        sp.prev1 = sp.prev2 = None
        sp.etype, sp.conf, sp.cue = "PERSON", CONF_SELF, "speaker"
        out.append(sp)
    out.sort(key=lambda sp: sp.start)
    return out


def speaker_names(chat: ChatChunk) -> list[tuple[str, int, int, str]]:
    """(display name, start, end, time) of every line prefix with a display name."""
    return [(line.display_name, line.name_start, line.name_end, line.sent_at)
            for line in chat.lines if line.display_name]

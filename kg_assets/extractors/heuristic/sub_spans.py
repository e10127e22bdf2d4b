"""Splitting one capitalised-span match into name sub-spans (the "Mentions" rules of `mentions.py`).

A match such as ``Dr. Sarah Chen of Northwind Robotics`` is cut at titles and honorifics (which mark the
next span a person's), sentence-opener and function words, possessives and connectors that do not belong
to a name; a trailing year joins the span before it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kg_assets.extractors.heuristic.lexicon import CONNECTORS, HONORIFICS, STOPWORDS, TITLES_ANYWHERE, is_clock_word

Token = tuple[int, int, str]  # start and end offsets in the match, the word


class SubSpan(NamedTuple):
    tokens: list[Token]
    honor: bool  # a title or honorific stands right before it
    year: bool  # its last token is a trailing year
    prev: tuple[str | None, str | None]  # the two lower-case tokens before it inside the match
    first_in_match: bool
    has_of: bool  # it kept an inner of/for/on


# (the span so far, the pending connectors, the word after them, whether the span has of/for/on) -> keep them
KeepConnector = Callable[[list[Token], list[str], str, bool], bool]


def match_tokens(group: str) -> list[Token]:
    """The match's tokens with their offsets: tokens are separated by exactly one blank character, so a plain
    split keeps exact offsets."""
    tokens: list[Token] = []
    pos = 0
    for word in group.replace("\t", " ").replace("\u00a0", " ").split(" "):
        tokens.append((pos, pos + len(word), word))
        pos += len(word) + 1
    return tokens


def split_sub_spans(tokens: list[Token], keep_connector: KeepConnector) -> list[SubSpan]:
    """The name sub-spans of a match's tokens, in order."""
    splitter = _Splitter(keep_connector)
    for index, token in enumerate(tokens):
        splitter.take(index, token, tokens)
    splitter.flush()
    return splitter.spans


class _Splitter:
    """Walks the tokens once: the span being built, the connectors waiting for the next word, and the cues
    (title before it, the words before it) that the finished span keeps."""

    def __init__(self, keep_connector: KeepConnector) -> None:
        self.keep_connector = keep_connector
        self.spans: list[SubSpan] = []
        self.cur: list[Token] = []
        self.pending: list[str] = []
        self.honor_pending = False
        self.cur_honor = False
        self.cur_has_of = False
        self.prev_word: str | None = None  # lowercase previous token inside the match
        self.prev_prev: str | None = None
        self.cur_prev: tuple[str | None, str | None] = (None, None)
        self.cur_first = False
        self.year = False

    def take(self, index: int, token: Token, tokens: list[Token]) -> None:
        start, end, word = token
        lower = word.lower()
        key = lower.rstrip(".")
        if lower in CONNECTORS and not word[0].isupper():
            self._connector(lower)
        elif word.isdigit():
            self._number(token, lower)
        elif key in TITLES_ANYWHERE or (key in HONORIFICS and not self.cur):
            # the next span is a person's when a capitalised word follows the title
            self._end_span(lower, honor_next=index + 1 < len(tokens) and tokens[index + 1][2][0].isupper())
        elif (lower in STOPWORDS and not (word.isupper() and len(word) > 1)) or is_clock_word(word):
            self._end_span(lower, honor_next=False)  # a stop word or a dateline's clock word ("UTC", "SUN")
        else:
            self._word(index, start, end, word, lower)

    def flush(self) -> None:
        if self.cur:
            self.spans.append(SubSpan(self.cur, self.cur_honor, self.year, self.cur_prev, self.cur_first,
                                      self.cur_has_of))
        self.cur = []
        self.year = False
        self.cur_has_of = False

    def _step(self, lower: str) -> None:
        self.prev_prev, self.prev_word = self.prev_word, lower

    def _connector(self, lower: str) -> None:
        """A lower-case connector waits for the next word, which decides whether the span keeps it."""
        if self.cur:
            self.pending.append(lower)
        else:
            self.honor_pending = False
        self._step(lower)

    def _number(self, token: Token, lower: str) -> None:
        """A number ends the span; right after a name (no connector between) it is its trailing year."""
        if self.cur and not self.pending:
            self.cur.append(token)
            self.year = True
        self.flush()
        self.pending = []
        self._step(lower)

    def _end_span(self, lower: str, honor_next: bool) -> None:
        """A title, honorific or stop word ends the span and is not part of any name."""
        self.flush()
        self.pending = []
        self.honor_pending = honor_next
        self._step(lower)

    def _word(self, index: int, start: int, end: int, word: str, lower: str) -> None:
        """A name word: without its possessive, it joins the span (across the pending connectors if they belong
        to a name) or starts one; a possessive ends the span after it."""
        possessive = False
        if lower.endswith(("'s", "’s")) and len(word) > 2:
            end -= 2
            word = word[:-2]
            possessive = True
        while word and word[-1] in "'’":
            end -= 1
            word = word[:-1]
            possessive = True
        if not word:
            self.flush()
            self.pending = []
            return
        if self.cur and self.pending:
            if self.keep_connector(self.cur, self.pending, word, self.cur_has_of):
                if self.pending[0] in ("of", "for", "on"):
                    self.cur_has_of = True
            else:
                self.flush()
        self.pending = []
        if not self.cur:
            self.cur_honor = self.honor_pending
            self.cur_prev = (self.prev_word, self.prev_prev)
            self.cur_first = index == 0
            self.honor_pending = False
        self.cur.append((start, end, word))
        self._step(lower)
        if possessive:
            self.flush()

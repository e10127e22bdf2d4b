"""A chunk's typed mentions as the attribute cues see them: which subject a cue belongs to, and which
weakly typed mentions a cue may retype.

Subjects and objects
    Appositive, possessive, ``X of ORG``, ``based in`` and ``founded by`` take the mention right
    before the cue. Verb cues take the clause subject: walking back from the cue in the sentence, the
    first mention that starts a clause (sentence start, after punctuation, a conjunction such as ``and``
    / ``while`` / ``after``, a reporting verb, with titles and role words skipped) or is followed by
    ``who``/``which``/``that``; mentions after a verb or preposition are objects and skipped (``Sarah
    Chen met Bob Lee and joined Acme`` -> Sarah Chen; ``Sarah Chen left Acme and Bob Lee joined Beta`` ->
    Bob Lee only). Coordinated subjects all get it (``Sarah Chen and Bob Lee joined Acme``). The subject
    must have the cue's type (or be retyped, below); a pronoun between it and the cue (``Bob said she
    works at Acme``) means nothing is emitted. Objects are the mention starting right after the cue
    (an optional ``the``/title skipped), never an attributive one (``joined the Acme team``).

Retyping
    Cues retype *weak* mentions (typed only by the preposition cue or the fallback, rules 7 and 8 of
    ``mentions``) when the cue says what they are, together with every weak mention of the same name in
    the chunk (and, for a new PERSON, later weak mentions of its last word) [0.7]: the subject of a role appositive / possessive / copula / ``X
    works at`` / ``X joined Y as <Role>`` / ``X lives in`` -> PERSON, their organisation and the object
    of ``works at``, ``employed by``, ``hired by``, ``founded`` -> ORGANIZATION (after a bare ``joined``
    only an ALL-CAPS acronym), the subject of ``headquartered in`` / ``moved its headquarters`` and the
    organisation of ``founded by`` -> ORGANIZATION, a 2-4 word object of ``founded by`` -> PERSON, a
    weak mention followed by ``, who`` -> PERSON; the subject of ``moved to`` / ``hired by`` / a bare
    ``joined`` only when it looks like a personal name (2-3 plain Titlecase words, none a gazetteer,
    head or role word: ``Lena Ortiz``, not ``Boston Dynamics``).
"""

from __future__ import annotations

import re

from kg_assets.extractors.heuristic.cue_patterns import (
    COORD_GAP_RE,
    IN_AFTER_RE,
    LAST_TOKEN_RE,
    NAME_TOKEN_RE,
    RELATIVE_RE,
)
from kg_assets.extractors.heuristic.lexicon import (
    FUNCTION_WORDS,
    HEAD_TYPES,
    HONORIFICS,
    ROLE_WORDS,
    SUBJECT_OPENERS,
    SUBJECT_PRONOUNS,
    WORD_RE,
    word_key,
)
from kg_assets.extractors.heuristic.mentions import STRONG, Span, defines_acronym

CONF_CONTEXT = 0.7  # a weak mention retyped by a cue ("X, a senior engineer at Y")
_WEAK_CUES = frozenset({"fallback", "preposition"})  # typed by nothing but position: a cue may retype them

Wants = dict[str, bool | str]  # acceptable subject types -> may a weak mention be retyped to it (True, "name")


class CueContext:
    """One chunk: its text, sentences and typed mentions, with what attribute cues ask of them."""

    def __init__(
        self, text: str, spans: list[Span], sentences: list[tuple[int, int]], allowed: frozenset[str],
        gazetteer: dict[str, str],
    ) -> None:
        self.text, self.spans, self.sentences = text, spans, sentences
        self.allowed, self.gazetteer = allowed, gazetteer
        self.by_start = {sp.start: k for k, sp in enumerate(spans)}
        self.full_name = self._defined_acronyms()
        self.retyped = False  # a weak mention took a cue's type: the chunk is read again

    # --- types -----------------------------------------------------------------------
    def _defined_acronyms(self) -> dict[str, str]:
        """Acronyms defined in this chunk ("Quantum Dynamics Lab (QDL)"): values name the full name."""
        text, spans = self.text, self.spans
        full_name: dict[str, str] = {}
        for k in range(1, len(spans)):
            sp, prev = spans[k], spans[k - 1]
            if defines_acronym(text, prev, sp):
                full_name.setdefault(sp.name, prev.name)
        return full_name

    def value_of(self, k: int) -> str:
        name = self.spans[k].name
        return self.full_name.get(name, name)

    @staticmethod
    def weak(sp: Span) -> bool:
        return sp.cue in _WEAK_CUES and sp.conf < STRONG

    def name_like(self, sp: Span) -> bool:
        """Two or three plain Titlecase words, none a known place/company, head or role word."""
        toks = sp.name.split()
        return 2 <= len(toks) <= 3 and all(
            NAME_TOKEN_RE.fullmatch(t) is not None
            and word_key(t) not in self.gazetteer
            and word_key(t) not in HEAD_TYPES
            and word_key(t) not in ROLE_WORDS
            for t in toks
        )

    def fits(self, k: int, etype: str, can_retype: bool | str) -> bool:
        """``can_retype``: True lets any weak mention take ``etype``, "name" only a name-like one."""
        sp = self.spans[k]
        if sp.etype == etype:
            return True
        if etype not in self.allowed or not self.weak(sp):
            return False
        return can_retype is True or (can_retype == "name" and self.name_like(sp))

    def settle(self, k: int, etype: str) -> None:
        """Give a weak mention the type its cue implies, with every weak mention of the same name."""
        sp = self.spans[k]
        if sp.etype == etype:
            return
        self.retyped = True
        name = sp.name
        last = name.rsplit(None, 1)[-1] if etype == "PERSON" and len(sp.words) > 1 else None
        for other in self.spans:
            if other.name == name and (other is sp or self.weak(other)):
                other.etype, other.conf, other.cue = etype, CONF_CONTEXT, "context"
            elif last is not None and other.name == last and other.start > sp.start and self.weak(other):
                other.etype, other.conf, other.cue = "PERSON", CONF_CONTEXT, "surname"

    def org_is_role(self, k: int) -> bool:
        """A weak span made of role words ("Chief", "Senior Engineer") is a title, not an employer."""
        sp = self.spans[k]
        return self.weak(sp) and any(w in ROLE_WORDS for w in sp.words)

    # --- positions in the sentence ----------------------------------------------------------------
    def sentence_start(self, k: int) -> int:
        return self.sentences[self.spans[k].sent][0]

    def next_spans(self, k: int, limit: int = 3, max_gap: int = 120):
        """Up to ``limit`` non-modifier spans after ``k`` in its sentence, within ``max_gap`` chars."""
        spans = self.spans
        sent = spans[k].sent
        j = k + 1
        found = 0
        while j < len(spans) and found < limit and spans[j].sent == sent and spans[j].start - spans[k].end <= max_gap:
            if not spans[j].modifier:
                found += 1
                yield j
            j += 1

    def prev_word(self, k: int, pos: int) -> str:
        m = LAST_TOKEN_RE.search(self.text, self.sentence_start(k), pos)
        return m.group(1).lower() if m else ""

    def subject_position(self, sent_start: int, start: int) -> bool:
        text = self.text
        pos = start
        for _ in range(4):
            before = text[sent_start:pos]
            if not before.strip():
                return True
            m = LAST_TOKEN_RE.search(before)
            if m is None:
                return True  # punctuation: a clause or list starts here
            tok = m.group(1)
            low = tok.lower().rstrip(".")
            if low in HONORIFICS or low in ROLE_WORDS:
                pos = sent_start + m.start(1)  # "CEO Diane Holloway", "engineer Marcus Webb"
                continue
            if low in SUBJECT_OPENERS:
                return True
            return tok[:1].isupper() and low not in FUNCTION_WORDS
        return False

    def clause_subject(self, obj: int, cue_start: int, wants: Wants) -> tuple[list[int], str | None]:
        """The subject of the clause a cue belongs to: the nearest mention before the cue that starts
        a clause (or is followed by who/which/that), with its coordinated partners ("A and B joined").
        ``wants`` maps acceptable types to whether a weak mention may be retyped to it."""
        text, spans = self.text, self.spans
        sent = spans[obj].sent
        ss = self.sentences[sent][0]
        k = obj - 1
        while k >= 0 and spans[k].sent == sent:
            sp = spans[k]
            if sp.end > cue_start or sp.modifier:
                k -= 1
                continue
            for w in WORD_RE.findall(text, sp.end, cue_start):
                if w.lower() in SUBJECT_PRONOUNS:
                    return [], None  # the clause has its own (pronoun) subject
            rel = RELATIVE_RE.match(text, sp.end) is not None
            if rel or self.subject_position(ss, sp.start):
                etype = next((t for t, r in wants.items() if self.fits(k, t, r)), None)
                if etype is None:
                    return [], None
                group = [k]
                if not rel:
                    head = k
                    j = k - 1
                    while j >= 0 and spans[j].sent == sent:
                        sj = spans[j]
                        if sj.modifier:
                            j -= 1
                            continue
                        if sj.etype == etype and COORD_GAP_RE.fullmatch(text, sj.end, spans[head].start):
                            group.append(j)
                            head = j
                            j -= 1
                            continue
                        break
                    if len(group) > 1 and not self.subject_position(ss, spans[head].start):
                        group = [k]
                return group, etype
            k -= 1
        return [], None

    def adjacent_subject(self, obj: int, cue_start: int, gap_re: re.Pattern, back: int = 3) -> int | None:
        spans = self.spans
        sent = spans[obj].sent
        k = obj - 1
        tried = 0
        while k >= 0 and spans[k].sent == sent and tried < back:
            sp = spans[k]
            if sp.end > cue_start or sp.modifier:
                k -= 1
                continue
            if gap_re.fullmatch(self.text, sp.end, cue_start):
                return k
            tried += 1
            k -= 1
        return None

    def place_after(self, k: int) -> int | None:
        """A LOCATION mention right after ``k`` behind ", in" ("founded QDL in Boston")."""
        im = IN_AFTER_RE.match(self.text, self.spans[k].end)
        loc = self.by_start.get(im.end()) if im else None
        return loc if loc is not None and self.spans[loc].etype == "LOCATION" else None

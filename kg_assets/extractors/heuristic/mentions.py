"""Mention finding and typing for the heuristic extractor.

Mentions
    A mention is a span of capitalised tokens (``Sarah``, ``DuckDB``, ``NASA``, ``U.S.``, ``Inc.``,
    ``Coca-Cola``, ``AT&T``, ``O'Brien``, ``iPhone``) separated by single spaces. Inner connectors are
    kept only where they usually belong to a name: particles (``de``, ``van``, ``von der``, ``da``) and
    ``&`` always; ``of``/``for``/``on`` after an organisation/event/place head word (``Bank of America``,
    ``Center for Disease Control``, ``Conference on Machine Learning``) and ``of`` after a single token
    (``Statue of Liberty``); ``and`` only inside a span that already holds ``of``/``for``/``on``
    (``Ministry of Science and Technology``). A trailing year joins the span (``NeurIPS 2025``).
    Function words and sentence openers (``The``, ``A``, ``In``, ``This``,
    ``However``, ``He``, ``They`` ...), weekday names (``Saturday's``) and capitalised time zones and weekday
    abbreviations of datelines (``UTC``, ``SUN``) never belong to a span, so a leading ``The`` is
    stripped; spans made only of month names (``March``, ``May 2024``), one-character spans and spans
    whose name normalises to nothing are dropped. Capitalised words of the other cased scripts start
    spans too (Greek, Cyrillic: ``Владимир Иванов``, ``Яндекс``); scripts without case (Chinese, Arabic)
    have no capitals to find, so the heuristic finds no names in them. A possessive ``'s`` ends a span and
    is not part of the name. ``char_start``/``char_end`` index the chunk text: ``text[s:e] == name``.

Types (first rule that fires; confidence in brackets)
    1. honorific/title before the span (``Dr.``, ``Prof.``, ``Mr.``, ``Ms.``, ``Sir``, ``CEO``, ``CTO``,
       ``President``, ``Senator`` ...) -> PERSON, the title is not part of the name [0.85]
    2. gazetteer (every country of ISO 3166, and a built-in few dozen well-known cities, companies, technologies, products,
       concepts; extendable with ``gazetteer=``), exact name, case-insensitive [0.9]
    3. head word in a span of 2+ words, scanned from the end: corporate/institution heads (``Inc``,
       ``Corp``, ``Ltd``, ``LLC``, ``GmbH``, ``Company``, ``Lab``, ``University``, ``Institute``, ``Bank``,
       ``Ministry``, ``Robotics``, ``Analytics``, ``Systems``, ``Technologies`` ...) -> ORGANIZATION [0.8];
       event heads (``Summit``, ``Conference``, ``Festival``, ``War``, ``Olympics``, ``Championship`` ...)
       -> EVENT [0.75]; place heads (``River``, ``Lake``, ``Valley``, ``Island``, ``Republic`` ...) ->
       LOCATION [0.75]
    4. 2-4 words starting with a common given name (``Sarah Chen``) -> PERSON [0.7]
    5. single common given name (``Sarah``) -> PERSON [0.55]
    6. name + year (``NeurIPS 2025``) -> EVENT [0.6]
    6b. a noun for a person in lower case right before it (``the journalist Jane Roe``, ``his wife Ann``:
       ``lexicon.PERSON_NOUNS``) -> PERSON [0.75] (heuristic-13)
    7. place preposition right before (``in``, ``at``, ``from``, ``near``, ``to`` ...; not in
       "according to", nor "to" after a verb that takes a recipient: "spoke to", "lost to"; heuristic-14)
       -> LOCATION [0.6]
    8. otherwise OTHER [0.4]
    Within one chunk: an ALLCAPS acronym in parentheses right after a span whose capitalised words it
    abbreviates (``Quantum Dynamics Lab (QDL)``, not ``Alan Okafor (QDL)``) takes that span's type (unless it is strongly typed itself) and is not a relation endpoint
    in that sentence (no relation between a name and its own acronym); a weakly typed mention
    (confidence < 0.7) whose exact name got a strong type elsewhere in the chunk takes it [0.7]; one typed
    only by a preposition or by nothing that is the initials of a strongly typed organisation of the chunk
    (``at QDL`` next to ``Quantum Dynamics Lab``), or its name before an organisation head word (``at
    Northwind`` next to ``Northwind Robotics``), is ORGANIZATION [0.7]; a
    single-word mention equal to the last word of an earlier PERSON span (``Chen`` after ``Sarah Chen``)
    is PERSON [0.7] and keeps its own name, and so is one equal to its first word (``Jordan`` after ``Jordan
    Reyes``) unless a place preposition comes before it; when the word is also a strongly typed place
    (``Jordan`` the country), only as the subject of a verb (``Jordan promised``, not ``Amman, Jordan``).
    A name followed by a version number (``Qubitline 1.4``, ``Python 3.11``) is TECHNOLOGY [0.75] unless a
    stronger rule typed it. A sentence-initial single word with no cue at all
    (``Researchers found ...``; a word that opens a line counts as sentence-initial) is dropped unless the
    same name also occurs mid-sentence in the chunk, and a single word with no cue but a preposition that the
    chunk also writes in lower case is a common word, dropped (``common_words.py``).
    Types outside ``entity_types`` become OTHER (or the mention is dropped when OTHER is not allowed
    either). A sentence-initial single word directly followed by ``is headquartered in`` / ``moved its
    headquarters`` is kept (it is an organisation subject).
"""

from __future__ import annotations

import re
from bisect import bisect_right

from kg_assets.core.title_words import TITLE_HEADS, TITLE_MODIFIERS
from kg_assets.extractors.heuristic.common_words import follows_colon, opens_line, without_common_words
from kg_assets.extractors.heuristic.lexicon import (
    BASE_AFTER,
    CONNECTORS,
    DETERMINERS,
    FUNCTION_WORDS,
    GIVEN_NAMES,
    HEAD_TYPES,
    MONTHS,
    NOT_PLACE_BEFORE_PREP,
    PARTICLES,
    PERSON_NOUNS,
    PLACE_PREPOSITIONS,
    PROTOCOL_WORDS,
    RECIPIENT_BEFORE_TO,
    REPORTING,
    UPPER,
    VERB_FORMS,
    WORD_RE,
    is_verb_form,
    word_key,
)
from kg_assets.extractors.heuristic.sub_spans import SubSpan, match_tokens, split_sub_spans

_CACHE_LIMIT = 200_000  # distinct span strings remembered per finder

CONF_HONORIFIC = 0.85
CONF_GAZETTEER = 0.9
CONF_GIVEN_NAME = 0.7
CONF_CHUNK_CONTEXT = 0.7  # acronym / same name / surname of an earlier PERSON in the chunk
CONF_SINGLE_GIVEN = 0.55
CONF_YEAR_EVENT = 0.6
CONF_PREPOSITION = 0.6
CONF_VERSIONED = 0.75
CONF_PERSON_NOUN = 0.75  # a noun for a person in lower case right before the name: "the journalist Jane Roe"
CONF_FALLBACK = 0.4
STRONG = 0.7  # a type this sure is not overridden by context in the chunk

_SP = "[ \t\u00a0]"
# Capitals that start a name: the lexicon's Latin ones, and the other cased scripts' (Greek, Cyrillic).
_UPPER = UPPER + "\u0386\u0388-\u038f\u0391-\u03ab\u0400-\u042f"
_ABBR_DOT = (
    r"(?:Inc|Corp|Ltd|Co|Jr|Sr|Bros|St|Mt|Ft|Dr|Prof|Mr|Mrs|Ms|Mx|Gen|Sen|Rep|Rev|Capt|Lt|Col|Sgt"
    r"|Gov|Pres|Hon)\."
)
_CAPWORD = (
    rf"(?:{_ABBR_DOT}"
    rf"|(?:[{_UPPER}]\.){{2,}}"  # U.S., U.K., U.S.A.
    rf"|[{_UPPER}]\.(?={_SP}[{_UPPER}])"  # middle initial: John F. Kennedy
    # Sarah, DuckDB, Coca-Cola, AT&T, O'Brien, and a lower-case particle inside a hyphenated name: Port-au-Prince
    rf"|[{_UPPER}][\w'’]*(?:[&-][{_UPPER}0-9][\w'’]*|-[a-z]{{1,4}}-[{_UPPER}][\w'’]*)*(?![\w&])"
    rf"|[a-z]{{1,3}}[{_UPPER}][\w'’]*(?![\w&]))"  # iPhone, eBay, macOS
)
_CONN = r"(?:of|for|on|and|de|du|da|di|del|della|der|den|van|von|la|le|y|&)(?:[ \t](?:the|der|den|de|la))?"
# the Arabic article of a surname after a given name: "Bashar al-Assad", "Abu Bakr al-Baghdadi" (heuristic-14)
_ARTICLE = rf"(?:al|el|ad|ar|as|ash|at|az|an|ud|ul|ur)-[{_UPPER}][\w'’]*(?![\w&])"
_SPAN_RE = re.compile(
    rf"(?<![\w'’]){_CAPWORD}(?:{_SP}(?:{_CONN}{_SP})?{_CAPWORD}|(?<!The){_SP}{_ARTICLE})*(?:{_SP}(?:1[5-9]|20)\d\d(?!\w))?"
)
_NEXT_WORD_RE = re.compile(r"[ \t]+([a-z][a-z'’-]*)")
_HAS_WORD_RE = re.compile(r"\w")
# a version number right after a name: "Qubitline 1.4", "Python 3.11.2" (not "1.5 billion")
_VERSION_AFTER_RE = re.compile(
    rf"{_SP}v?\d+(?:\.\d+)+(?![\d\w]|\.\d)(?!{_SP}*(?:%|percent|per\b|[mb]illion|trillion|bn\b))")
# A sentence-initial single word followed by one of these is an organisation subject, not noise.
_HQ_SUBJECT_RE = re.compile(
    r"\s+(?:(?:is|was)\s+(?:now\s+|currently\s+)?headquartered\s+in|(?:moved|relocated)\s+(?:its|their)\s+"
    r"(?:headquarters|HQ|head\s+office))\b"
)


def defines_acronym(text: str, prev: "Span", sp: "Span") -> bool:
    """``sp`` is an ALL-CAPS acronym in parentheses right after ``prev`` whose letters are the initials of
    its capitalised words: "Quantum Dynamics Lab (QDL)", not "Alan Okafor (QDL)"."""
    return (
        len(sp.words) == 1
        and sp.name.isupper()
        and text[sp.start - 1:sp.start] == "("
        and text[sp.end:sp.end + 1] == ")"
        and not text[prev.end:sp.start - 1].strip()
        and "".join(w[0] for w in prev.name.split() if w[:1].isupper()) == sp.name
    )


class Span:
    """One mention candidate in a chunk: its place, words, the cues around it and its current type."""

    __slots__ = (
        "start", "end", "name", "words", "honor", "year", "prev1", "prev2",
        "sent", "initial", "modifier", "etype", "conf", "cue", "has_conn",
    )

    def __init__(self) -> None:
        self.honor = False
        self.year = False
        self.prev1: str | None = None
        self.prev2: str | None = None
        self.initial = False
        self.modifier = False
        self.has_conn = False


def _after_title(sub: SubSpan) -> SubSpan:
    """A name with an Arabic article ("Syrian President Bashar al-Assad") loses the title before it here, as the
    row builder's title rule, which wants capitalised words, would not: the name is a person's (heuristic-14)."""
    toks = sub.tokens
    if len(toks) < 3 or not any(t[2][:1].islower() and "-" in t[2] for t in toks):
        return sub
    last = max((i for i, t in enumerate(toks) if word_key(t[2]) in TITLE_HEADS), default=-1)
    if last < 0 or last >= len(toks) - 2:
        return sub
    return sub._replace(tokens=toks[last + 1:], honor=True, first_in_match=False, prev=(word_key(toks[last][2]), None))


def _protocol_only(name: str) -> bool:
    """COMPLETE, SYSTEM, "USER ASSISTANT": protocol words quoted by a document, never an entity."""
    words = WORD_RE.findall(name)
    return bool(words) and all(word_key(w) in PROTOCOL_WORDS for w in words)


class MentionFinder:
    """Finds and types the mentions of a chunk (rules above); one per extractor, it caches span splits."""

    def __init__(self, allowed: frozenset[str], gazetteer: dict[str, str]) -> None:
        self._allowed = allowed
        self._gazetteer = gazetteer  # word_key(name) -> type
        self._decomp_cache: dict[str, tuple[tuple, ...]] = {}

    def find(self, text: str, sentences: list[tuple[int, int]]) -> list[Span]:
        """The typed mentions of one chunk in text order (``sentences`` from ``split_sentences``)."""
        spans = [sp for sp in self._spans(text, sentences, [s for s, _ in sentences]) if not _protocol_only(sp.name)]
        if spans:
            self._resolve_in_chunk(text, spans)
            spans = without_common_words(text, spans)  # "Officials", "Politics" beside "officials", "politics"
        return spans

    def _decompose(self, group: str) -> tuple[tuple, ...]:
        """Split one capitalised-span match into name sub-spans (cached: surface strings repeat a lot).

        Each sub-span is (rel_start, rel_end, words, honorific, year, prev1, prev2, first_in_match,
        has_of, base_type) with offsets relative to the match and base_type the context-free type cue
        (None when only the words around the match can decide).
        """
        cached = self._decomp_cache.get(group)
        if cached is not None:
            return cached
        subs = [_after_title(sub) for sub in split_sub_spans(match_tokens(group), self._keep_connector)]
        result = tuple(record for sub in subs if (record := self._sub_span_record(group, sub)) is not None)
        if len(self._decomp_cache) >= _CACHE_LIMIT:
            self._decomp_cache.clear()
        self._decomp_cache[group] = result
        return result

    def _sub_span_record(self, group: str, sub: SubSpan) -> tuple | None:
        """A sub-span as `_decompose` gives it; None for a one-character or all-digit name, or one made only
        of month names."""
        start = sub.tokens[0][0]
        end = sub.tokens[-1][1]
        name = group[start:end]
        if len(name) < 2 or name.isdigit():
            return None
        name_toks = sub.tokens[:-1] if sub.year else sub.tokens
        words = tuple(word_key(t[2]) for t in name_toks if t[2] not in CONNECTORS)
        if not words or all(wd in MONTHS for wd in words):
            return None
        base = self._own_type(name, words, sub.honor, sub.year, sub.has_of)
        p1, p2 = sub.prev
        return start, end, words, sub.honor, sub.year, p1, p2, sub.first_in_match, sub.has_of, base

    def _spans(self, text: str, sentences: list[tuple[int, int]], sent_starts: list[int]) -> list[Span]:
        spans: list[Span] = []
        for m in _SPAN_RE.finditer(text):
            ms = m.start()
            for sub in self._decompose(m.group()):
                rs, re_, words, honor, has_year, p1, p2, first_in_match, has_of, base = sub
                start = ms + rs
                end = ms + re_
                sp = Span()
                sp.start, sp.end, sp.name = start, end, text[start:end]
                sp.words = words
                sp.honor = honor
                sp.year = has_year
                sp.has_conn = has_of
                sent = bisect_right(sent_starts, start) - 1
                if sent < 0:
                    sent = 0
                sp.sent = sent
                if first_in_match:
                    ss = sentences[sent][0]
                    before = text[max(ss, start - 40):start]
                    if not before:
                        p1 = p2 = None
                    elif not before[-1].isspace():
                        p1, p2 = before[-1], None  # glued to punctuation, e.g. "(QDL" or "“Boston"
                    else:
                        parts = before.split()
                        p1 = parts[-1].lower() if parts else None
                        p2 = parts[-2].lower() if len(parts) > 1 else None
                    sp.initial = (_HAS_WORD_RE.search(text, ss, start) is None or opens_line(text, start)
                                  or follows_colon(text, start))
                sp.prev1, sp.prev2 = p1, p2
                # attributive use: "the AI team", "Boston-based"
                if text[end:end + 1] == "-" and text[end + 1:end + 2].islower():
                    sp.modifier = True
                elif p1 in DETERMINERS:
                    nm = _NEXT_WORD_RE.match(text, end)
                    if nm is not None:
                        nw = nm.group(1)
                        if (
                            nw not in FUNCTION_WORDS
                            and nw not in VERB_FORMS
                            and nw not in REPORTING
                            and not (len(nw) >= 5 and nw.endswith("ed"))
                        ):
                            sp.modifier = True
                if (base is None or base[1] < CONF_VERSIONED) and _VERSION_AFTER_RE.match(text, end):
                    base = ("TECHNOLOGY", CONF_VERSIONED, "version")
                if base is not None:
                    sp.etype, sp.conf, sp.cue = base
                elif p1 in PERSON_NOUNS and not has_of and not has_year and len(words) <= 4:
                    sp.etype, sp.conf, sp.cue = "PERSON", CONF_PERSON_NOUN, "person_noun"
                elif (p1 in PLACE_PREPOSITIONS and p2 not in NOT_PLACE_BEFORE_PREP
                      and not (p1 == "to" and p2 in RECIPIENT_BEFORE_TO)):
                    sp.etype, sp.conf, sp.cue = "LOCATION", CONF_PREPOSITION, "preposition"
                else:
                    sp.etype, sp.conf, sp.cue = "OTHER", CONF_FALLBACK, "fallback"
                spans.append(sp)
        return spans

    def _keep_connector(self, cur: list, pending: list[str], right: str, has_of: bool) -> bool:
        first = pending[0]
        if first in PARTICLES or first == "&":
            return True
        last = word_key(cur[-1][2])
        if first in ("of", "for", "on"):
            if last in HEAD_TYPES:
                return True
            if first == "of" and last in TITLE_HEADS and word_key(right) in TITLE_MODIFIERS:
                return True  # a title ("Secretary of State John Kerry"), which the row builder splits off
            return (
                first == "of"
                and len(cur) == 1
                and last not in GIVEN_NAMES
                and word_key(right) not in self._gazetteer
            )
        if first == "and":
            return has_of and word_key(right) not in self._gazetteer
        return False

    def _own_type(
        self, name: str, words: tuple[str, ...], honor: bool, year: bool, has_of: bool
    ) -> tuple[str, float, str] | None:
        """Rules 1-6 of the module docstring; None leaves it to the preposition cue or the fallback."""
        head = None
        if len(words) >= 2:
            for wd in reversed(words):
                ht = HEAD_TYPES.get(wd)
                if ht is not None:
                    head = ht
                    break
        if honor:
            if head is not None and head[0] == "ORGANIZATION":
                return head[0], head[1], "head"
            return "PERSON", CONF_HONORIFIC, "honorific"
        g = self._gazetteer.get(word_key(name))
        if g is not None:
            return g, CONF_GAZETTEER, "gazetteer"
        if head is not None:
            return head[0], head[1], "head"
        if 2 <= len(words) <= 4 and words[0] in GIVEN_NAMES and not has_of and not year:
            return "PERSON", CONF_GIVEN_NAME, "given_name"
        if len(words) == 1 and words[0] in GIVEN_NAMES:
            return "PERSON", CONF_SINGLE_GIVEN, "given_name"
        if year:
            return "EVENT", CONF_YEAR_EVENT, "year"
        return None

    @staticmethod
    def _given_name_alone(text: str, sp: Span) -> bool:
        """A lone word that is the given name of a person named earlier in the chunk reads as that person, unless
        it follows a place preposition; a strongly typed place ("Jordan" the country) only as a verb's subject."""
        if sp.prev1 in PLACE_PREPOSITIONS or sp.cue == "preposition":
            return False
        if sp.conf < STRONG:
            return True
        after = _NEXT_WORD_RE.match(text, sp.end)
        return (sp.prev1 is None or not sp.prev1.endswith(",")) and after is not None and (
            is_verb_form(after.group(1)) or after.group(1) in BASE_AFTER - {"to"})

    def _resolve_in_chunk(self, text: str, spans: list[Span]) -> None:
        # acronym in parentheses right after a span takes that span's type
        for k in range(1, len(spans)):
            sp, prev = spans[k], spans[k - 1]
            if defines_acronym(text, prev, sp):
                sp.modifier = True  # an alias of the span before it, not a relation endpoint there
                if sp.conf < STRONG:
                    sp.etype, sp.conf, sp.cue = prev.etype, max(prev.conf, CONF_CHUNK_CONTEXT), "acronym"
        # same exact name typed strongly elsewhere in the chunk
        strong: dict[str, tuple[str, float]] = {}
        for sp in spans:
            if sp.conf >= STRONG:
                cur = strong.get(sp.name)
                if cur is None or sp.conf > cur[1]:
                    strong[sp.name] = (sp.etype, sp.conf)
        # the short forms of an organisation named in the chunk: its initials ("QDL" for "Quantum Dynamics
        # Lab") and its name before an organisation head ("Northwind" for "Northwind Robotics")
        org_short: dict[str, tuple[str, float]] = {}
        for sp in spans:
            if sp.etype == "ORGANIZATION" and sp.conf >= STRONG and len(sp.words) >= 2 and not sp.has_conn:
                initials = "".join(w[0] for w in sp.name.split() if w[:1].isupper())
                if len(initials) >= 2:
                    org_short.setdefault(initials, ("ORGANIZATION", sp.conf))
                if sp.words[-1] in HEAD_TYPES and HEAD_TYPES[sp.words[-1]][0] == "ORGANIZATION":
                    org_short.setdefault(sp.name.rsplit(None, 1)[0], ("ORGANIZATION", sp.conf))
        person_last: dict[str, int] = {}  # last word of a PERSON span -> first offset seen
        person_first: dict[str, int] = {}  # and its first word
        for sp in spans:
            if sp.conf < STRONG:
                hit = strong.get(sp.name)
                if hit is not None:
                    sp.etype, sp.conf, sp.cue = hit[0], CONF_CHUNK_CONTEXT, "same_name"
                elif sp.cue in ("preposition", "fallback") and sp.name in org_short:
                    sp.etype, sp.conf, sp.cue = "ORGANIZATION", CONF_CHUNK_CONTEXT, "org_short_form"
            if sp.etype == "PERSON" and len(sp.words) >= 2:
                last = sp.name.rsplit(None, 1)[-1]
                person_last.setdefault(last, sp.start)
                if last[:1].islower() and "-" in last:  # "Assad" of "Bashar al-Assad"
                    person_last.setdefault(last.split("-", 1)[1], sp.start)
                parts = sp.name.split()
                if len(parts) >= 3 and parts[-2] in PARTICLES:  # "de Maiziere" of "Thomas de Maiziere"
                    person_last.setdefault(parts[-2] + " " + last, sp.start)
                person_first.setdefault(sp.name.split(None, 1)[0], sp.start)
        if person_last:
            for sp in spans:
                if sp.cue in ("honorific", "acronym") or sp.etype == "PERSON":
                    continue
                if len(sp.words) == 2 and sp.words[0] in PARTICLES:  # "De Maiziere" after "Thomas de Maiziere"
                    if person_last.get(sp.words[0] + " " + sp.name.split(None, 1)[1], sp.start) < sp.start:
                        sp.etype, sp.conf, sp.cue = "PERSON", CONF_CHUNK_CONTEXT, "surname"
                    continue
                if len(sp.words) != 1:
                    continue
                if person_last.get(sp.name, sp.start) < sp.start:
                    sp.etype, sp.conf, sp.cue = "PERSON", CONF_CHUNK_CONTEXT, "surname"
                elif person_first.get(sp.name, sp.start) < sp.start and self._given_name_alone(text, sp):
                    sp.etype, sp.conf, sp.cue = "PERSON", CONF_CHUNK_CONTEXT, "given_name_alone"
        # sentence-initial single words with no cue need support elsewhere in the chunk
        if any(sp.initial and sp.cue == "fallback" and len(sp.words) == 1 for sp in spans):
            mid = {sp.name for sp in spans if not sp.initial}
            spans[:] = [
                sp
                for sp in spans
                if not (
                    sp.initial
                    and sp.cue == "fallback"
                    and len(sp.words) == 1
                    and sp.name not in mid
                    and _HQ_SUBJECT_RE.match(text, sp.end) is None  # "Northwind is headquartered in ..."
                )
            ]
        allowed = self._allowed
        if any(sp.etype not in allowed for sp in spans):
            keep = []
            for sp in spans:
                if sp.etype not in allowed:
                    if "OTHER" not in allowed:
                        continue
                    sp.etype = "OTHER"
                keep.append(sp)
            spans[:] = keep


"""Attribute observations for the heuristic extractor: cues read over a chunk's typed mentions.

Attributes (``attribute_observations``; sentence-level cues over the typed mentions; confidence in brackets)
    employer (PERSON -> organisation name) and role (PERSON -> role text as written):
      * ``X joined|joins|rejoined ORG`` [0.8], with ``as <Role>`` after it also role [0.8] (``joined
        Quantum Dynamics Lab as Chief Technology Officer``); ``will join`` / ``joining`` are not current
      * ``X works|working at|for ORG``, ``X has worked at ORG`` [0.8], simple past ``X worked at ORG`` [0.6];
        ``X was employed|hired|recruited by ORG`` [0.8]; never after ``former(ly)``, ``previously``,
        ``had``, ``once``, ``never``, ``no longer``
      * ``X moved|relocated to ORG`` [0.7] (to a LOCATION it is located_in)
      * appositive ``X, (a|an|the|our|who is) [<modifiers>] <role word> [of <words>] at|of|for|with ORG``
        [0.7] (``Marcus Webb, a senior engineer at Northwind Robotics``; a second ``and a professor of
        physics at MIT`` too); possessive ``X, ORG's <role>,`` and ``ORG's <role>, X`` [0.7];
        pre-nominal ``ORG <role> X`` (``Northwind chief executive Diane Holloway``) [0.7]; copula ``X
        is|remains|became|serves as|was named|was appointed (the|a) <role> at|of|for ORG`` [0.75];
        ``X of (the) ORG`` for an already typed PERSON and ORGANIZATION [0.6, no role]. Role words:
        engineer, scientist, researcher, director, manager, officer, executive, CEO/CTO/..., founder,
        professor, lead, head, president, chair, chief, developer, analyst, partner, ... (ROLE_WORDS); a
        role phrase with ``former``/``ex``/``previous``/``retired``/... or a function word before its
        role word is ignored, and so is its employer (``X, a former engineer at ORG`` gives nothing).
      * ``X left ORG``, ``X spent six years as ... at ORG``, ``X was a ... at ORG`` give nothing.
    headquarters (ORGANIZATION -> place): ``ORG is (now) headquartered in LOC`` [0.8] (not after ``was``),
      ``ORG moved|relocated its headquarters (from A) to LOC`` [0.8] (the place after ``to``), ``ORG's
      headquarters|HQ|head office (is) in LOC`` [0.7] (not ``former``/``old``), ``ORG, (now) based in
      LOC`` / ``ORG is based in LOC`` (right after the organisation) [0.7], ``ORG moved to LOC`` [0.6].
    located_in (PERSON -> place): ``X moved|relocated (from A) to LOC`` [0.8], ``X lives|resides in LOC``
      [0.8], ``X (, who) is based in LOC`` [0.7].
    founder (ORGANIZATION -> person name): ``X (co-)founded ORG`` [0.8], ``ORG (was) founded (in 2016) by
      X`` and ``ORG, the ... company founded by X`` [0.8], ``Founded in 2014 by X, ORG ...`` [0.8], a
      role phrase with ``founder`` (``X, founder of ORG``, ``X is the founder and director of ORG``)
      [as the role cue]; founded_in (ORGANIZATION -> place): ``X founded ORG in LOC``, ``ORG, founded by
      X in LOC``, ``ORG was founded in LOC`` [0.7] (kept apart from headquarters, which may change).
    Values: the object's surface name; an ALL-CAPS acronym defined in the same chunk as ``Full Name
    (ACR)`` (initials must match) gives the full name. The same fact twice in a chunk is one row with the
    best confidence (the row builder's observation id). entity_id/entity_name are the subject mention's.

Which mention is a cue's subject, and which weak mentions a cue retypes:
:mod:`kg_assets.extractors.heuristic.cue_context`.
"""

from __future__ import annotations

import re

from kg_assets.core.extraction.rows import ObservationRecord
from kg_assets.extractors.heuristic.cue_context import CueContext, Wants
from kg_assets.extractors.heuristic.cue_patterns import (
    APPOS_AND_GAP_RE,
    APPOS_GAP_RE,
    AS_ROLE_RE,
    BASED_GAP_RE,
    COMMA_GAP_RE,
    CUE_RE,
    FOUNDED_GAP_RE,
    OF_GAP_RE,
    ORG_ROLE_PERSON_RE,
    POSS_ROLE_RE,
    POSS_TO_PERSON_RE,
    WHO_PLURAL_RE,
    WHO_RE,
)
from kg_assets.extractors.heuristic.lexicon import FOUNDER_WORDS, FUNCTION_WORDS, PAST_MARKERS, ROLE_WORDS

CONF_ATTR_VERB = 0.8  # explicit verb: joined, works at, headquartered in, founded, moved to, lives in
CONF_ATTR_COPULA = 0.75  # "X is the CTO of Y"
CONF_ATTR_APPOSITIVE = 0.7  # "X, a senior engineer at Y", "Y's CTO, X", "based in", "headquarters in"
CONF_ATTR_WEAK = 0.6  # "X of Y", simple past "worked at", an organisation "moved to" a place


class AttributeReader(CueContext):
    """The attribute observations of one chunk, read from cues over its typed mentions (rules above).

    A cue may retype a weakly typed mention; when that happened the chunk is read once more, so every
    cue sees the final types. Cues before their object are dispatched by kind through ``_CUE_HANDLERS``;
    cues after their subject (appositives, possessives) are read mention by mention.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.out: list[ObservationRecord] = []

    def read(self) -> list[ObservationRecord]:
        if len(self.spans) < 2:
            return []
        cues = []  # (match, object span idx): cue matches do not depend on types, read them once
        for m in CUE_RE.finditer(self.text):
            obj = self.by_start.get(m.end())
            if obj is not None:
                cues.append((m, obj))
        self._read_pass(cues)
        if self.retyped:
            self._read_pass(cues)
        return self.out

    def _read_pass(self, cues: list[tuple[re.Match, int]]) -> None:
        self.out = []
        # 1) cues right before their object
        for m, obj in cues:
            if self.spans[obj].modifier or m.start() < self.sentence_start(obj):
                continue
            kind = next(k for k in _CUE_HANDLERS if m.group(k) is not None)
            _CUE_HANDLERS[kind](self, m, obj)
        # 2) cues right after their subject: appositives, possessives, "X of ORG", "X, who"
        for k, sp in enumerate(self.spans):
            if sp.modifier:
                continue
            after = self.text[sp.end:sp.end + 4]
            if (after[:1] == "," or after == " of ") and self.fits(k, "PERSON", True):
                self._person_then_role(k, after[:1] == ",")
            if after and after[0] in "'’ " and self.fits(k, "ORGANIZATION", True) and not self.org_is_role(k):
                self._organization_role_person(k)

    # --- emitting ---------------------------------------------------------------------------------
    def emit(self, subj: int, key: str, value: str, conf: float) -> None:
        value = " ".join(value.split())
        if value and value.casefold() != self.spans[subj].name.casefold():
            self.out.append(ObservationRecord(subj, key, value, conf))

    def emit_role(self, subjects: list[int], org: int, role: str | None, conf: float) -> None:
        """employer (+ role, + founder when the role says so) for each subject."""
        for s in subjects:
            self.emit(s, "employer", self.value_of(org), conf)
            if role:
                self.emit(s, "role", role, conf)
        if role and FOUNDER_WORDS.intersection(role.lower().split()):
            for s in subjects:
                self.emit(org, "founder", self.spans[s].name, conf)

    @staticmethod
    def role_ok(role: str | None) -> str | None:
        if not role:
            return None
        words = role.lower().split()
        if any(w in PAST_MARKERS for w in words) or not any(w in ROLE_WORDS for w in words):
            return None
        for w in words:
            if w in ROLE_WORDS:
                break
            if w in FUNCTION_WORDS:
                return None
        return " ".join(role.split())

    # --- cues before their object ----------------------------------------------------------------
    def _employment(self, obj: int, subjects: list[int], role: str | None, conf: float) -> None:
        self.settle(obj, "ORGANIZATION")
        for s in subjects:
            self.settle(s, "PERSON")
        self.emit_role(subjects, obj, role, conf)

    def _on_join(self, m: re.Match, obj: int) -> None:
        o = self.spans[obj]
        role_m = AS_ROLE_RE.match(self.text, o.end)
        role = self.role_ok(role_m.group("role")) if role_m else None
        if not self.fits(obj, "ORGANIZATION", role is not None or (len(o.words) == 1 and o.name.isupper())):
            return
        subj, _ = self.clause_subject(obj, m.start(), {"PERSON": True if role is not None else "name"})
        if subj:
            self._employment(obj, subj, role, CONF_ATTR_VERB)

    def _on_work(self, m: re.Match, obj: int) -> None:  # "works at", "was hired by"
        cs = m.start()
        before = self.prev_word(obj, cs)
        if before in PAST_MARKERS or before in ("never", "longer"):
            return
        conf = CONF_ATTR_VERB
        work = m.group("work")
        if work is not None and work.startswith("worked") and before not in ("has", "have"):
            conf = CONF_ATTR_WEAK  # simple past: maybe not current
        if not self.fits(obj, "ORGANIZATION", True):
            return
        subj, _ = self.clause_subject(obj, cs, {"PERSON": True if work is not None else "name"})
        if subj:
            self._employment(obj, subj, None, conf)

    def _on_copula(self, m: re.Match, obj: int) -> None:
        role = self.role_ok(m.group("crole"))
        if role is None or not self.fits(obj, "ORGANIZATION", True):
            return
        subj, _ = self.clause_subject(obj, m.start(), {"PERSON": True})
        if subj:
            self._employment(obj, subj, role, CONF_ATTR_COPULA)

    def _on_headquarters(self, m: re.Match, obj: int) -> None:  # "headquartered in", "moved its headquarters to"
        if self.spans[obj].etype != "LOCATION":
            return
        cs = m.start()
        before = self.prev_word(obj, cs)
        if before in PAST_MARKERS or before in ("was", "were", "old", "original"):
            return
        subj, _ = self.clause_subject(obj, cs, {"ORGANIZATION": True})
        explicit = m.group("hqmove") is not None or m.group("hq").startswith("headquartered")
        conf = CONF_ATTR_VERB if explicit else CONF_ATTR_APPOSITIVE
        for s in subj:
            self.settle(s, "ORGANIZATION")
            self.emit(s, "headquarters", self.value_of(obj), conf)

    def _on_move(self, m: re.Match, obj: int) -> None:
        o = self.spans[obj]
        if o.etype not in ("ORGANIZATION", "LOCATION"):
            return
        wants: Wants = {"PERSON": "name"}
        if o.etype == "LOCATION":
            wants["ORGANIZATION"] = False
        subj, stype = self.clause_subject(obj, m.start(), wants)
        for s in subj:
            self.settle(s, "PERSON" if stype == "PERSON" else self.spans[s].etype)
            if o.etype == "ORGANIZATION":
                self.emit(s, "employer", self.value_of(obj), CONF_ATTR_APPOSITIVE)
            elif stype == "PERSON":
                self.emit(s, "located_in", self.value_of(obj), CONF_ATTR_VERB)
            else:
                self.emit(s, "headquarters", self.value_of(obj), CONF_ATTR_WEAK)

    def _on_based(self, m: re.Match, obj: int) -> None:
        if self.spans[obj].etype != "LOCATION":
            return
        s = self.adjacent_subject(obj, m.start(), BASED_GAP_RE, back=1)
        if s is not None and self.spans[s].etype == "PERSON":
            self.emit(s, "located_in", self.value_of(obj), CONF_ATTR_APPOSITIVE)
        elif s is not None and self.spans[s].etype == "ORGANIZATION":
            self.emit(s, "headquarters", self.value_of(obj), CONF_ATTR_APPOSITIVE)

    def _on_lives(self, m: re.Match, obj: int) -> None:
        if self.spans[obj].etype != "LOCATION":
            return
        subj, _ = self.clause_subject(obj, m.start(), {"PERSON": True})
        for s in subj:
            self.settle(s, "PERSON")
            self.emit(s, "located_in", self.value_of(obj), CONF_ATTR_VERB)

    def _on_founded(self, m: re.Match, obj: int) -> None:  # "X founded ORG (in LOC)"
        if not self.fits(obj, "ORGANIZATION", True):
            return
        subj, _ = self.clause_subject(obj, m.start(), {"PERSON": False})
        if not subj:
            return
        self.settle(obj, "ORGANIZATION")
        for s in subj:
            self.emit(obj, "founder", self.spans[s].name, CONF_ATTR_VERB)
        loc = self.place_after(obj)
        if loc is not None:
            self.emit(obj, "founded_in", self.value_of(loc), CONF_ATTR_APPOSITIVE)

    def _on_founded_by(self, m: re.Match, obj: int) -> None:  # "ORG (was) founded by X (in LOC)"
        o = self.spans[obj]
        cs = m.start()
        if not self.fits(obj, "PERSON", 2 <= len(o.words) <= 4):  # "founded by Alan Okafor": a person
            return
        org = self.adjacent_subject(obj, cs, FOUNDED_GAP_RE)
        if org is None and not self.text[self.sentence_start(obj):cs].strip(" \t\n\"'“‘(-—–*#>"):
            # "Founded in 2014 by Alan Okafor, QDL develops ..."
            org = next(
                (j for j in self.next_spans(obj, 1) if COMMA_GAP_RE.fullmatch(self.text, o.end, self.spans[j].start)),
                None,
            )
        if org is None or not self.fits(org, "ORGANIZATION", True):
            return
        self.settle(org, "ORGANIZATION")
        self.settle(obj, "PERSON")
        self.emit(org, "founder", o.name, CONF_ATTR_VERB)
        loc = self.place_after(obj)
        if loc is not None:
            self.emit(org, "founded_in", self.value_of(loc), CONF_ATTR_APPOSITIVE)

    def _on_founded_in(self, m: re.Match, obj: int) -> None:  # "ORG was founded in LOC"
        if self.spans[obj].etype != "LOCATION":
            return
        org = self.adjacent_subject(obj, m.start(), FOUNDED_GAP_RE)
        if org is not None and self.fits(org, "ORGANIZATION", True):
            self.settle(org, "ORGANIZATION")
            self.emit(org, "founded_in", self.value_of(obj), CONF_ATTR_APPOSITIVE)

    # --- cues after their subject ----------------------------------------------------------------
    def _person_then_role(self, k: int, comma: bool) -> None:
        """"X, a senior engineer at ORG", "X, ORG's CTO,", "X of ORG", "X, who ..." (X may be a PERSON)."""
        text, spans = self.text, self.spans
        sp = spans[k]
        for j in self.next_spans(k):
            am = APPOS_GAP_RE.fullmatch(text, sp.end, spans[j].start)
            if am is None:
                continue
            role = self.role_ok(am.group("role"))
            if role is None or not self.fits(j, "ORGANIZATION", True):
                break
            self.settle(k, "PERSON")
            self.settle(j, "ORGANIZATION")
            self.emit_role([k], j, role, CONF_ATTR_APPOSITIVE)
            # "..., director of QDL and a professor of physics at MIT"
            for j2 in self.next_spans(j, 2):
                bm = APPOS_AND_GAP_RE.fullmatch(text, spans[j].end, spans[j2].start)
                if bm is not None:
                    role2 = self.role_ok(bm.group("role"))
                    if role2 is not None and self.fits(j2, "ORGANIZATION", True):
                        self.settle(j2, "ORGANIZATION")
                        self.emit_role([k], j2, role2, CONF_ATTR_APPOSITIVE)
                    break
            break
        else:
            j = next(self.next_spans(k, 1), None)
            if j is not None and COMMA_GAP_RE.fullmatch(text, sp.end, spans[j].start):
                # "Marcus Webb, QDL's chief technology officer, built ..."
                pm = POSS_ROLE_RE.match(text, spans[j].end)
                role = self.role_ok(pm.group("role")) if pm else None
                if role and self.fits(j, "ORGANIZATION", True) and not self.org_is_role(j):
                    self.settle(k, "PERSON")
                    self.settle(j, "ORGANIZATION")
                    self.emit_role([k], j, role, CONF_ATTR_APPOSITIVE)
            elif (
                j is not None
                and sp.etype == "PERSON"
                and spans[j].etype == "ORGANIZATION"
                and OF_GAP_RE.fullmatch(text, sp.end, spans[j].start)
            ):
                self.emit_role([k], j, None, CONF_ATTR_WEAK)  # "Dr. Sarah Chen of the Quantum Dynamics Lab"
        if (comma and self.weak(sp) and "PERSON" in self.allowed and WHO_RE.match(text, sp.end)
                and not WHO_PLURAL_RE.match(text, sp.end)):
            self.settle(k, "PERSON")  # "Lena Ortiz, who leads user support"

    def _organization_role_person(self, k: int) -> None:
        """"QDL's CTO, Marcus Webb", "Lumen's chief technology officer, Daniel Osei", "Northwind chief
        executive Diane Holloway" (k may be the ORGANIZATION)."""
        j = next(self.next_spans(k, 1), None)
        if j is None or not self.fits(j, "PERSON", True):
            return
        text, start, end = self.text, self.spans[k].end, self.spans[j].start
        pm = POSS_TO_PERSON_RE.fullmatch(text, start, end) or ORG_ROLE_PERSON_RE.fullmatch(text, start, end)
        role = self.role_ok(pm.group("role")) if pm else None
        if role:
            self.settle(k, "ORGANIZATION")
            self.settle(j, "PERSON")
            self.emit_role([j], k, role, CONF_ATTR_APPOSITIVE)


# The kinds of CUE_RE (its named groups, "crole" aside), in the order they are tried.
_CUE_HANDLERS = {
    "join": AttributeReader._on_join,
    "work": AttributeReader._on_work,
    "hired": AttributeReader._on_work,
    "copula": AttributeReader._on_copula,
    "hqmove": AttributeReader._on_headquarters,
    "move": AttributeReader._on_move,
    "hq": AttributeReader._on_headquarters,
    "based": AttributeReader._on_based,
    "lives": AttributeReader._on_lives,
    "founded": AttributeReader._on_founded,
    "foundedby": AttributeReader._on_founded_by,
    "foundedin": AttributeReader._on_founded_in,
}

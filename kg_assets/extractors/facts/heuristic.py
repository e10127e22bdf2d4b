"""Offline heuristic fact extractor: first-person statements -> third-person facts (no model, no network).

Statements
    The message is cut into sentences (``. ! ?`` before a space, except after Dr./Prof./Mr./Ms./St.; ``;``;
    line breaks; " - ") and each sentence into clauses before a new first-person subject (", I ...", "and I
    ...", "but my ...", "because I ...", ", before that I ...", but not an appositive ", our CTO, ..."),
    before "and" + a listed verb that continues the subject ("I have two dogs and work as a nurse", which
    becomes "I work as a nurse"), and in unpunctuated run-ons before "I ..." unless the word before it
    takes a clause ("think", "that", "when" ...); "my wife and I ..." is one subject, not two clauses.
    Leading interjections and short comments before a comma
    ("Oh wow, ...", "Yes, ...") are dropped, unless the comment names someone ("Marcus Webb, our CTO, ...").
    A leading time adverbial ("Before that", "Back then", "Now") is kept for the tense only. A clause is a
    statement when it then starts with I, I'm, I've, my, we, we're or our (or "me and my"), or when its
    predicate is the speaker's: a subject that is no pronoun, then be + my/our ("Chess is my favorite game").
Skipped
    questions (ending in ``?``), except a statement before the question in the same sentence ("I'm 46 how
    about you?": the question starts at a wh-word or at an auxiliary before "you"); conditionals and plans
    of speech ("I'd ...", "I'll ...", "we'll ...", "let's ...", but a wish "I'd like to / I would love to"
    is kept); opinions and meta-talk ("I think", "I guess", "I hope", "I agree", "I know / remember /
    realize ...", "I love that", "I have to say" ...); passing pleasantries ("I'm good", "I'm doing well",
    "I'm sorry", "I just got home / back"); clauses about the other person (they name "you"); vague ones: a
    bare verb, no concrete word, one concrete word and an object that points elsewhere ("is curious about
    that"), or at most 4 words ending in a word that needs more (a preposition, article, auxiliary or
    conjunction: "used to go to").
Facts
    ``content``: the clause in third person (person.py), without time adverbials ("last week", "years
    ago", "these days") and stance or degree adverbs ("actually", "honestly", "pretty", "a little") unless
    nothing would be left, cut before a trailing "because / but / so / which / when / if ..." part when the
    head keeps 2 concrete words; over 99 characters it is dropped. The tense is read from the whole clause.
    ``type``: the first cue class that fires: life events, work (also "runs / leads ... at <Name>"),
    relationship, family, location, hobby, preference, then event time words, else general.
    ``temporal``: future (will, going to, plan to, next ...), timeless (born, from), past (used to, ago,
    last ..., before that, a past-tense main verb), else present. ``confidence``: 0.6 when hedged (maybe,
    probably, kind of) or said of "we", 1.0 for plain "I am / I have / I work / I live / my ... is"
    statements, else 0.8. ``importance``: 1.0 for major life facts (marriage, children, job, where they
    live, health, death), 0.8 for family, relationships, places, school and events, 0.5 for hobbies and
    general facts, 0.3 for other likes and dislikes (0.8 for allergies and diets). At most 3 facts: the
    most important ones, kept in message order.
The known facts of a request are not needed: the memory sets repeated facts aside as duplicates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kg_assets.core.facts.dedup import LIGHT_WORDS
from kg_assets.core.facts.person import IRREGULAR_PAST, to_third_person
from kg_assets.core.facts.records import FactAnswer, FactRequest, RawFact
from kg_assets.core.facts.rules import MAX_FACT_CHARS, MAX_FACTS_PER_MESSAGE
from kg_assets.core.facts.words import STOP_WORDS, stem

EXTRACTOR_NAME = "facts-heuristic"
EXTRACTOR_VERSION = "facts-heuristic-2"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SENTENCE = re.compile(
    r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bProf\.)(?<!\bSt\.)(?<!\bvs\.)(?<=[.!?])[\"')\]]*\s+"
    r"|[;\n]+|\s+-{1,2}\s+|(?<=[!?])(?=[A-Z])"
)
_FIRST_PERSON_START = re.compile(r"^(?:i|i'm|im|i've|ive|i'd|i'll|my|we|we're|we've|our|me and my)\b", re.I)
_VERBS = (
    "work works live lives have has own owns play plays love loves like likes enjoy enjoys go goes study studies "
    "teach teaches run runs write writes read reads watch watches cook cooks paint paints build builds fix fixes "
    "make makes drive drives take takes collect collects volunteer volunteers raise raises speak speaks sing sings "
    "dance dances swim swims hike hikes travel travels ride rides grow grows bake bakes knit knits coach coaches "
    "am was used got just also still"
)
_CLAUSE_BREAK = re.compile(
    r",?\s+(?:and|but|so|because|since|while|although|though|as|plus|cause|cuz)\s+(?=(?:i|i'm|i've|my|we|we're|our)\b)"
    r"|,\s+(?=(?:before that|after that|since then|back then|then|now|today|these days),?\s+(?:i|i'm|i've|my|we)\b)"
    r"|,\s+(?=(?:i|i'm|i've|we|we're)\b)|,\s+(?=(?:my|our)\b(?![^,.]{0,30},))"  # not an appositive ", our CTO,"
    r"|\s+and\s+(?=(?:also\s+)?(?:" + "|".join(_VERBS.split()) + r")\b)",
    re.I,
)
_POSSESSIVE_NP = re.compile(r"^\s*(?:my|our)(?:\s+[\w'-]+){1,2}\s*$", re.I)
_RUN_ON_I = re.compile(r"(?<=[A-Za-z0-9])\s(?=(?:I|i|I'm|i'm|Im|im|I've|i've)\s)")
_COMPLEMENT_WORDS = frozenset(
    "that if when because so and but or think know guess hope wish as what where how why before after until than "
    "since while cause whether thought said knew feel bet sure glad sorry hear see say mean like unless though once "
    "which who then where whenever wherever believe realized realize remember forgot than".split()
)
_FILLER = re.compile(
    r"^(?:(?:yes|yeah|yep|yup|no|nope|nah|oh|ohh|ah|ahh|aw|aww|well|haha+|hah|lol|lmao|wow|hmm+|um+|uh|sure|ok|okay|"
    r"actually|honestly|also|and|but|so|well|anyway|anyways|definitely|absolutely|right|true|cool|nice|great|"
    r"awesome|same|me too|same here|ha|hey|hi|hello|oh my|omg|agreed|exactly|totally|indeed|of course|"
    r"funny|good|interesting|really|wow that's|that's|that is|it's|it is|sounds|what|how|not)\b[\s,!.]*)+",
    re.I,
)
_NAME_INSIDE = re.compile(r"\s[A-Z]")
_LEAD_TIME = re.compile(
    r"^(?:before that|after that|back then|since then|these days|nowadays|now|today|currently|recently|lately|"
    r"at the moment|right now|as a kid|as a child|growing up|years ago|last (?:year|month|week|summer)|"
    r"next (?:year|month|week|summer)|in \d{4})\s*,?\s+(?=(?:i|i'm|i've|my|we|we're|our)\b)",
    re.I,
)
_LEAD_COMMENT = re.compile(r"^([^,]{1,40}),\s+(?=(?:i|i'm|i've|my|we|we're|our)\b)", re.I)
_SKIP_START = re.compile(
    r"^(?:we'll|we will|we can|we could|we should|we would|we'd|let's|"
    r"(?:i'd|i would)(?! (?:really )?(?:like|love) to)|i'll|i will|i could|i should|i might|i may|i must|i can't wait|"
    r"i (?:really |do |don't |just |also )?(?:think|guess|bet|hope|wish|agree|disagree|understand|see|mean|believe|"
    r"suppose|imagine|wonder|doubt|feel like|feel that|feel the same|remember|recall|realize|realized|"
    r"(?:know|knew)(?! (?-i:(?!I\b)[A-Z]))|"  # but knowing someone by name is a fact
    r"hear you|get it|get that|appreciate|recommend|suggest|love that|like that|love it|like it|love this|"
    r"like this|love your|like your|have to say|have to go|have a question|was just|was wondering|was thinking|"
    r"am just|'m just|can imagine|can see|can tell|can't imagine|cannot imagine|can't believe|don't know|"
    r"am not sure|'m not sure|am sure|'m sure|am glad|'m glad|am happy to|'m happy to|am sorry|'m sorry|"
    r"have heard|'ve heard|have never heard|'ve never heard|have to check|need to check|totally|completely)|"
    r"me too|me neither|my pleasure|my bad|my god|my goodness|my gosh)\b",
    re.I,
)
_TRANSIENT = re.compile(
    r"^(?:i'm|im|i am|i feel|i've been|i have been)\s+(?:so\s+|very\s+|really\s+|pretty\s+|just\s+|doing\s+|"
    r"feeling\s+)*(?:good|fine|great|well|ok|okay|alright|sorry|glad|sure|here|back|ready|excited for|jealous|"
    r"happy for|happy to hear|on my way|about to|off to|going to go)\b"
    r"|^i just (?:got (?:home|back|here|there|in|off|up|out)|came|woke|wanted)\b",
    re.I,
)
# A question that follows a statement in one unpunctuated sentence ("I'm 46 how about you?"): it starts at a
# wh-word, or at an auxiliary or modal before "you" (subject-auxiliary inversion).
_QUESTION_OPENER = re.compile(
    r"\s(?=(?:what|how|where|when|why|who|which|whats)\b"
    r"|(?:do|does|did|are|is|was|were|have|has|had|can|could|would|will|should|may|might)\s+(?:you|u|ya)\b)",
    re.I,
)
# A statement whose predicate is the speaker's ("Poker is my game of choice", "Tacos are my favorite"): a
# subject of one to five words that is no pronoun, demonstrative or wh-word, then be + my/our.
_POSSESSIVE_PREDICATE = re.compile(
    r"^(?!(?:it|that|this|these|those|there|here|he|she|they|what|which|who|you|your|one|mine|its|that's|it's)\b)"
    r"[\w'&-]+(?:\s+[\w'&-]+){0,4}\s+(?:is|are|was|were)\s+(?:my|our)\s+\w",
    re.I,
)
_YOU = re.compile(r"\b(?:you|your|you're|yours|yourself|u)\b", re.I)
_VAGUE = frozenset(
    "it that this them stuff thing things those one everything something anything lot lots too also well way kind "
    "sort bit much many more most some any good great fun nice cool awesome amazing interesting time times "
    "sometimes day days".split()
)
# A short clause that stops at a word which needs something after it is cut off ("used to go to", "was
# leaning towards", "knows there's"): prepositions that are no verb particle, articles, possessive and demonstrative
# determiners, auxiliaries and modals, conjunctions.
_DANGLING_END = re.compile(
    r"\b(?:about|at|by|for|from|into|of|to|with|without|toward|towards|through|among|like|than|"
    r"a|an|the|my|your|their|his|her|our|its|this|these|every|"
    r"is|are|was|were|be|been|am|has|have|had|does|did|can|could|will|would|should|may|might|must|"
    r"and|or|but|because|if|as|that|there's|it's|that's)$",
    re.I,
)
_MAX_DANGLING_WORDS = 4  # longer clauses may end in a relative clause ("someone to talk about books with")
_VAGUE_END = re.compile(r"\b(?:it|that|this|them|there|those|these)$", re.I)
_HEDGE = re.compile(r"\b(?:maybe|probably|perhaps|kind of|kinda|sort of|pretty sure|possibly|might|i think)\b", re.I)
_FUTURE = re.compile(
    r"\b(?:will|going to|gonna|plan(?:ning)? to|about to|hope to|hoping to|want to|wants to|intend to|"
    r"next (?:week|month|year|summer|winter|spring|fall|weekend|semester)|soon|someday|one day)\b"
    r"|\b(?:is|am|'m) (?:moving|starting|getting married|having a baby|graduating|retiring|relocating)\b",
    re.I,
)
_TIMELESS = re.compile(r"\b(?:was born|born in|(?:is|am|'m) (?:originally )?from|come from|comes from)\b", re.I)
_PAST = re.compile(
    r"\b(?:used to|ago|last (?:week|month|year|summer|winter|spring|fall|night|weekend|time)|yesterday|"
    r"when (?:i|we) (?:was|were)|as a (?:kid|child)|growing up|grew up|back then|before that|in the past|once)\b",
    re.I,
)
_ADVERBS = frozenset("just also really recently finally never once actually only still already".split())
_EXPLICIT = re.compile(
    r"^(?:i am|i'm|im|i have|i've|i work|i live|i own|my \w+ (?:is|are))\b",
    re.I,
)

# Cue classes, checked in this order; a clause gets the first class with a cue (whole words, lowercase).
_LIFE_EVENT = re.compile(
    r"\b(?:got (?:married|engaged|divorced|promoted|fired|laid off|hired|accepted)|graduated|had (?:a|my|our) "
    r"(?:baby|son|daughter|first)|gave birth|passed away|died|retired|was promoted|got a new job|"
    r"(?:had|have had) (?:surgery|an accident)|broke (?:my|his|her) \w+|adopted|won (?:a|the|first))\b",
    re.I,
)
_WORK = _words(
    "job jobs work works worked working career employer employed boss office company coworker coworkers colleague "
    "colleagues shift shifts nurse teacher teaching engineer doctor lawyer manager developer programmer accountant "
    "chef waiter waitress cashier retail sales salesman mechanic farmer firefighter police officer soldier army navy "
    "military marine marines retired retire retirement promotion promoted hired fired intern internship business "
    "clients customers paycheck salary unemployed profession professor student students school college university "
    "degree major studying study class classes graduate graduated semester homework phd masters teach "
    "hospital restaurant store shop factory startup contractor freelance freelancer"
)
_WORK_AT = re.compile(r"\b(?:run|runs|lead|leads|manage|manages|head|heads|teach|teaches|handle|handles)\b[^,.;]*"
                      r"\b(?:at|for) (?:the )?[A-Z]")
_RELATIONSHIP = _words(
    "girlfriend boyfriend partner fiance fiancee married marriage wedding divorced divorce dating date single "
    "engaged friend friends bestie roommate roommates neighbor neighbors ex relationship"
)
_FAMILY = _words(
    "mom mother mum dad father parent parents son sons daughter daughters kid kids child children baby babies "
    "brother brothers sister sisters sibling siblings wife husband grandma grandmother grandpa grandfather "
    "grandparents grandkids grandchildren grandson granddaughter aunt uncle cousin cousins niece nephew family "
    "pregnant twins stepson stepdaughter stepmom stepdad"
)
_LOCATION = re.compile(
    r"\b(?:live|lives|lived|living|moved|move to|moving to|relocated|from|grew up|born in|hometown|"
    r"visit|visited|visiting|travel(?:ed|led)? to|trip to|vacation in|stay(?:ed)? in|city|town|state|country|"
    r"neighborhood|apartment|house|farm|beach|mountains)\b",
    re.I,
)
_HOBBY = _words(
    "hobby hobbies play plays playing played game games gaming soccer football basketball baseball softball tennis "
    "golf hockey volleyball running run jog jogging swim swimming yoga gym workout exercise lifting hike hiking "
    "camping camp fishing fish hunting hunt surfing surf skiing ski biking bike cycling climbing dance dancing "
    "guitar piano drums violin cello flute sing singing band choir paint painting draw drawing knit knitting "
    "crochet sew sewing photography photos write writing poetry poems craft crafts read reading books book novels "
    "garden gardening cook cooking bake baking collect collecting volunteer volunteering chess puzzles anime "
    "comics travel traveling travelling movies films shows tv music concerts video videogames sports team"
)
_PREFERENCE = re.compile(
    r"\b(?:like|likes|liked|love|loves|loved|enjoy|enjoys|enjoyed|prefer|prefers|favorite|favourite|hate|hates|"
    r"dislike|dislikes|can't stand|fan of|into|allergic|vegetarian|vegan|obsessed)\b",
    re.I,
)
_EVENT_TIME = re.compile(
    r"\b(?:recently|just|last (?:week|month|year|weekend|night)|yesterday|ago|this (?:week|weekend|month|year)|"
    r"next (?:week|month|year|weekend)|birthday|anniversary|wedding|funeral|tomorrow|tonight)\b",
    re.I,
)
_MAJOR = re.compile(
    r"\b(?:married|divorc\w*|engaged|pregnant|baby|babies|kids|children|son|sons|daughter|daughters|born|died|"
    r"passed away|cancer|disease|disabled|disability|diabetes|job|career|work(?:s|ed)? (?:at|as|for|in)|"
    r"retired|live[sd]? in|moved|graduated|degree|wife|husband)\b",
    re.I,
)
_STRONG_PREFERENCE = re.compile(r"\b(?:allergic|vegetarian|vegan|religio\w*|church|faith|sober)\b", re.I)
_TAIL = re.compile(r"(?:,\s+|\s+)(?:because|but|so|which|when|if|although|though|since|while|and that|and it|maybe|"
                   r"cause|cuz|until|unless|whereas)\s+|,\s+(?:and|or|though|too)\b|\s+-\s+", re.I)
_MIN_HEAD_WORDS = 2  # a main clause cut before "because ..." must keep this many concrete words


@dataclass(frozen=True, slots=True)
class _Statement:
    clause: str  # starts with its first-person subject
    time_lead: str  # a time adverbial before the subject ("Before that, "), for the tense
    content: str
    words: frozenset[str]


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.replace("\u2019", "'")) if s and s.strip()]


def _run_on_parts(text: str) -> list[str]:
    """Cut an unpunctuated run-on before a new "I ..." clause ("Really I have not done that")."""
    parts, start = [], 0
    for match in _RUN_ON_I.finditer(text):
        previous = text[start:match.start()].split()
        if previous and previous[-1].lower().strip(",") not in _COMPLEMENT_WORDS:
            parts.append(text[start:match.start()])
            start = match.start() + 1
    parts.append(text[start:])
    return parts


def _clauses(sentence: str) -> list[str]:
    """The clauses of one sentence; a verb-led clause after "and" inherits "I"."""
    out: list[str] = []
    start = 0
    for match in _CLAUSE_BREAK.finditer(sentence):
        if _POSSESSIVE_NP.match(sentence[start:match.start()]) and match.group().strip().lower() == "and":
            continue  # a compound subject: "My wife and I run a bakery"
        out.extend(_run_on_parts(sentence[start:match.start()]))
        start = match.end()
    out.extend(_run_on_parts(sentence[start:]))
    clauses = []
    for k, clause in enumerate(c.strip(" ,") for c in out):
        if k and clause and not _FIRST_PERSON_START.match(_LEAD_TIME.sub("", clause)):
            clause = "I " + clause
        clauses.append(clause)
    return [c for c in clauses if c]


def _strip_lead(clause: str) -> str:
    """The clause without a leading interjection or short comment before its subject."""
    lead = _LEAD_COMMENT.match(clause)
    # "Oh wow, I ..." loses its comment; "Marcus Webb, our CTO, ..." names someone else and stays.
    if lead and not _FIRST_PERSON_START.match(lead.group(1)) and not _NAME_INSIDE.search(lead.group(1)):
        clause = clause[lead.end():]
    if not _FIRST_PERSON_START.match(clause):
        clause = _FILLER.sub("", clause).strip(" ,")
    return clause


# Time adverbials: the tense is read from the whole clause before they are taken out of the content, so a
# fact states what is true and `temporal` says when.
_TIME_ADVERBIAL = re.compile(
    r",?\s*\b(?:(?:last|next|this|that) (?:week|month|year|summer|winter|spring|fall|autumn|weekend|night|"
    r"morning|evening|semester|time)|(?:(?:a|an|one|two|three|four|five|six|ten|a few|few|several|many|\d+) )?"
    r"(?:days?|weeks?|months?|years?|decades?|while) ago|long ago|these days|nowadays|right now|at the moment|"
    r"at this (?:point|time)|yesterday|today|tonight|tomorrow|lately|recently|currently)\b",
    re.I,
)
# Stance and degree adverbs say how the speaker feels about the statement or how much, not what it states.
_STANCE_ADVERB = re.compile(
    r"\s*\b(?:actually|definitely|honestly|totally|basically|literally|seriously|truly|certainly|absolutely|"
    r"pretty much|kind of|kinda|sort of|pretty|a little|a bit|fairly|rather|extremely|super|incredibly|"
    r"somewhat|slightly)\b,?",
    re.I,
)


def _bare(content: str) -> str:
    """The content without time adverbials and stance adverbs; the content itself if nothing would be left."""
    bare = " ".join(_STANCE_ADVERB.sub("", _TIME_ADVERBIAL.sub("", content)).split()).strip(" ,")
    return bare if len(bare.split()) >= 2 else content


def _shorten(content: str) -> str | None:
    """The main clause: the content up to a trailing subordinate part when the head still says something;
    None when nothing under the length limit is left."""
    for match in _TAIL.finditer(content):
        head = content[: match.start()].rstrip(" ,")
        if len(_concrete_words(head)) >= _MIN_HEAD_WORDS:
            content = head
            break
    return content if len(content) < MAX_FACT_CHARS else None


def _concrete_words(content: str) -> list[str]:
    return [w for w in re.findall(r"[\w']+", content.lower())
            if w not in STOP_WORDS and w not in _VAGUE and stem(w) not in LIGHT_WORDS]


def _is_vague(content: str) -> bool:
    """A bare verb ("said"), no concrete word, or one concrete word and an object that points elsewhere
    ("is curious about that")."""
    concrete = len(_concrete_words(content))
    return (len(content.split()) < 2 or concrete == 0 or (concrete == 1 and bool(_VAGUE_END.search(content)))
            or (len(content.split()) <= _MAX_DANGLING_WORDS and bool(_DANGLING_END.search(content))))


def _statements(text: str) -> list[_Statement]:
    found = []
    for sentence in _sentences(text):
        if sentence.endswith("?"):
            opener = _QUESTION_OPENER.search(sentence)
            if opener is None:
                continue
            sentence = sentence[: opener.start()]  # the statement before the question, if any
        for raw in _clauses(sentence):
            stripped = _strip_lead(raw).rstrip(" .!,")
            clause = _LEAD_TIME.sub("", stripped)
            if not (_FIRST_PERSON_START.match(clause) or _POSSESSIVE_PREDICATE.match(clause)) or clause.endswith("?"):
                continue
            if _SKIP_START.match(clause) or _TRANSIENT.match(clause) or _YOU.search(clause):
                continue
            content = _shorten(_bare(to_third_person(clause)))
            if content is None or _is_vague(content):
                continue
            words = frozenset(re.findall(r"[\w']+", clause.lower()))
            found.append(_Statement(clause, stripped[: len(stripped) - len(clause)], content, words))
    return found


def _fact_type(statement: _Statement) -> str:
    clause, words = statement.clause, statement.words
    if _LIFE_EVENT.search(clause):
        return "event"
    if words & _WORK or _WORK_AT.search(clause):
        return "work"
    if words & _RELATIONSHIP:
        return "relationship"
    if words & _FAMILY:
        return "family"
    if _LOCATION.search(clause):
        return "location"
    if words & _HOBBY:
        return "hobby"
    if _PREFERENCE.search(clause):
        return "preference"
    if _EVENT_TIME.search(clause):
        return "event"
    return "general"


def _main_verb(clause: str) -> str:
    """The first word after the subject ("I", "we", "my sister") and any adverbs, lowercase."""
    words = re.findall(r"[\w']+", clause.lower())
    k = 2 if words[:1] in (["my"], ["our"]) else 1
    while k < len(words) and words[k] in _ADVERBS:
        k += 1
    return words[k] if k < len(words) else ""


def _temporal(clause: str) -> str:
    if _FUTURE.search(clause):
        return "future"
    if _TIMELESS.search(clause):
        return "timeless"
    if _PAST.search(clause):
        return "past"
    verb = _main_verb(_LEAD_TIME.sub("", clause))
    if verb in IRREGULAR_PAST or (verb.endswith("ed") and verb not in {"need", "feed", "seed", "breed", "bleed"}):
        return "past"
    return "present"


def _confidence(clause: str) -> float:
    if _HEDGE.search(clause) or re.match(r"^(?:we|we're|we've|our)\b", clause, re.I):
        return 0.6
    return 1.0 if _EXPLICIT.match(clause) else 0.8


def _importance(fact_type: str, clause: str) -> float:
    if _MAJOR.search(clause):
        return 1.0
    if fact_type in {"family", "relationship", "location", "event", "work"}:
        return 0.8
    if fact_type == "preference":
        return 0.8 if _STRONG_PREFERENCE.search(clause) else 0.3
    return 0.5


def heuristic_facts(text: str) -> list[RawFact]:
    """At most 3 facts of one message, by the module's rules."""
    facts = []
    seen: set[str] = set()
    for statement in _statements(text):
        if statement.content.lower() in seen:
            continue
        seen.add(statement.content.lower())
        fact_type = _fact_type(statement)
        facts.append(RawFact(fact_type, statement.content, _confidence(statement.clause),
                             _importance(fact_type, statement.clause),
                             _temporal(statement.time_lead + statement.clause)))
    if len(facts) > MAX_FACTS_PER_MESSAGE:
        ranked = sorted(range(len(facts)), key=lambda i: (-facts[i].importance, -facts[i].confidence, i))
        keep = set(ranked[:MAX_FACTS_PER_MESSAGE])
        facts = [f for i, f in enumerate(facts) if i in keep]
    return facts


class HeuristicFactExtractor:
    """The offline `FactExtractor`: `heuristic_facts` for every request."""

    name = EXTRACTOR_NAME
    version = EXTRACTOR_VERSION

    def extract_facts(self, requests: list[FactRequest]) -> list[FactAnswer]:
        return [FactAnswer(tuple(heuristic_facts(r.content))) for r in requests]

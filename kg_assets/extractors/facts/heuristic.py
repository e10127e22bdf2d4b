"""Offline heuristic fact extractor: first-person statements -> third-person facts (no model, no network).

Statements
    The message is cut into sentences (``. ! ?`` before a space, except after Dr./Prof./Mr./Ms./St.; ``;``;
    line breaks; " - ") and each sentence into clauses before a new first-person subject (", I ...", "and I
    ...", "but my ...", "because I ...", "even though I ...", ", before that I ...", but not an appositive ",
    our CTO, ..."), before "and" + a listed verb, or + a frequency or time adverb and a verb, that continues
    the subject ("I have two dogs and work as a nurse", "I retired and now spend ..."), and in unpunctuated
    run-ons before "I ..." or "my <noun> is / has ..." unless the word before it takes a clause ("think",
    "that", "when" ...) or, before "my", is a preposition ("one of my kids was"); "my wife and I ..." is one
    subject, not two clauses. A clause after a condition or time limit ("as soon as I ...", "even if I ...",
    "while I ...") is no statement. Leading interjections and short comments before a comma ("Oh wow, ...",
    "Yes, ...") are dropped, unless the comment names someone ("Marcus Webb, our CTO, ..."). A leading time
    adverbial ("Before that", "Back then", "Now") is kept for the tense only. A clause is a statement when it
    then starts with I, I'm, I've, my, we, we're, our, "me and my" or "mine is", or when its predicate is the
    speaker's: a subject that is no pronoun, then be + (one of) my/our ("Chess is my favorite game", "Squash
    is one of my favorites"); "That's my ..." is said of something else.
Skipped
    questions (ending in ``?``), except a statement before the question in the same sentence ("I'm 46 how
    about you?", "I'm left handed, yourself?": the question starts at a wh-word, at an auxiliary before
    "you", or at "you"); conditionals and plans of speech ("I'd ...", "I'll ...", "we'll ...", "let's ...",
    but a wish "I'd like to / I would love ..." is kept); opinions and meta-talk, also after an adverb or a
    negation ("I think", "I don't think", "I can't believe", "I still don't know", "I agree", "I know /
    remember / realize ...", "I love that" but not "I love that band", "I'm just kidding", "I have to
    say" ...); passing pleasantries ("I'm good", "I'm doing well", "I'm sorry", "I just got home / back",
    "my week was great"); elliptical answers ("I am, for years now": the predicate is the question's, see
    Answers); clauses about the other person (they name "you"), whose main part before a trailing
    "so you ..." still counts; vague ones: a bare verb, no concrete word, one concrete word and an object that
    points elsewhere ("is curious about that"), or at most 4 words ending in a word that needs more (a
    preposition, article, auxiliary or conjunction: "used to go to").
Facts
    ``content``: the clause in third person (person.py), without time adverbials ("last week", "years
    ago", "these days", "now"), stance or degree adverbs ("actually", "honestly", "pretty", "very") and
    trailing particles ("haha", "though", "as well") unless nothing would be left, cut before a trailing
    "because / but / so / which / when / if ..." part or a new clause with a subject pronoun ("and it was
    fun") when the head keeps 2 concrete words; over 99 characters it is dropped. The tense is read from the
    whole clause. Type, tense, confidence and importance: cues.py. At most 3 facts: the most important ones,
    kept in message order.
Answers
    When the request's context is the other speaker's yes/no question and the message answers yes ("Do you have
    any pets?" - "Yep, two dogs."), the question made a first-person statement (core/facts/answers.py: "I have
    pets"), or after a no its negation ("I do not have pets"), goes through the same rules as a statement of the
    message and comes first.
The known facts of a request are not needed: the memory sets repeated facts aside as duplicates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kg_assets.core.facts.answers import answered_statement
from kg_assets.core.facts.dedup import LIGHT_WORDS
from kg_assets.core.facts.person import to_third_person
from kg_assets.core.facts.records import FactAnswer, FactRequest, RawFact
from kg_assets.core.facts.rules import MAX_FACT_CHARS, MAX_FACTS_PER_MESSAGE
from kg_assets.core.facts.words import STOP_WORDS, stem
from kg_assets.extractors.facts.cues import confidence, fact_type, importance, temporal

EXTRACTOR_NAME = "facts-heuristic"
EXTRACTOR_VERSION = "facts-heuristic-4"


_SENTENCE = re.compile(
    r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bProf\.)(?<!\bSt\.)(?<!\bvs\.)(?<=[.!?])[\"')\]]*\s+"
    r"|[;\n]+|\s+-{1,2}\s+|(?<=[!?])(?=[A-Z])"
)
_FIRST_PERSON_START = re.compile(
    r"^(?:i|i'm|im|i've|ive|i'd|i'll|my|we|we're|we've|our|me and my|(?:mine|ours) (?:is|are|was|were))\b", re.I)
_VERBS = (
    "work works live lives have has own owns play plays love loves like likes enjoy enjoys go goes study studies "
    "teach teaches run runs write writes read reads watch watches cook cooks paint paints build builds fix fixes "
    "make makes drive drives take takes collect collects volunteer volunteers raise raises speak speaks sing sings "
    "dance dances swim swims hike hikes travel travels ride rides grow grows bake bakes knit knits coach coaches "
    "am was used got just also still"
)
_CLAUSE_BREAK = re.compile(
    r",?\s+(?:as soon as|as long as|as much as|even though|even if|even when|so that|now that|ever since|"
    r"and|but|so|because|since|while|although|though|as|plus|cause|cuz)\s+(?=(?:i|i'm|i've|my|we|we're|our)\b)"
    r"|,\s+(?=(?:before that|after that|since then|back then|then|now|today|these days),?\s+(?:i|i'm|i've|my|we)\b)"
    r"|,\s+(?=(?:i|i'm|i've|we|we're)\b)|,\s+(?=(?:my|our)\b(?![^,.]{0,30},))"  # not an appositive ", our CTO,"
    r"|\s+and\s+(?=(?:also\s+)?(?:" + "|".join(_VERBS.split()) + r")\b"
    r"|(?:now|then|also|still|usually|always|often|sometimes|never|currently)\s+(?!(?:a|an|the|my|our|his|her|their|"
    r"then|now|i|we|you|he|she|they|it|that|this)\b)[a-z]+\s)",
    re.I,
)
_CONDITION_WORDS = frozenset({"as soon as", "as long as", "even if", "even when", "so that", "while"})
_POSSESSIVE_NP = re.compile(r"^\s*(?:my|our)(?:\s+[\w'-]+){1,2}\s*$", re.I)
_RUN_ON_I = re.compile(
    r"(?<=[A-Za-z0-9])\s(?=(?:I|i|I'm|i'm|Im|im|I've|i've)\s"
    # or a new "my <noun> is / has ..." clause ("I'm ok my husband is a doctor")
    r"|(?:my|My)\s+[\w'-]+(?:\s+[\w'-]+)?\s+(?:is|are|was|were|has|have|had)\s)"
)
_COMPLEMENT_WORDS = frozenset(
    "that if when because so and but or think know guess hope wish as what where how why before after until than "
    "since while cause whether thought said knew feel bet sure glad sorry hear see say mean like unless though once "
    "which who then where whenever wherever believe realized realize remember forgot than".split()
)
_PREPOSITIONS = frozenset(
    "of with to for at in on about from by into onto over under after before around near without like than "
    "through between among behind".split()
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
    r"(?:i'd|i would)(?! (?:really )?(?:like|love)\b)|i'll|i will|i could|i should|i might|i may|i must|i can't wait|"
    r"i(?:\s+(?:(?:really|do|don't|do not|didn't|did not|can't|cannot|can not|just|also|still|honestly|"
    r"personally|truly|sometimes|never)\s+)*|(?='))"  # "I'm sure" as well as "I still don't know"
    r"(?:think|guess|bet|hope|wish|agree|disagree|understand|see|mean|believe|suppose|imagine|wonder|doubt|"
    r"feel like|feel that|feel the same|remember|recall|realize|realized|"
    r"(?:know|knew)(?! (?-i:(?!I\b)[A-Z]))|"  # but knowing someone by name is a fact
    r"hear you|get it|get that|appreciate|recommend|suggest|(?:love|like) (?:that|this)(?! (?!you\b|is\b|was\b)\w)|"
    r"love it|like it|love your|like your|have to say|have to go|have a question|was just|was wondering|was thinking|"
    r"(?:am|'m) just (?:saying|kidding|joking|teasing|asking|wondering|curious)|"
    r"can imagine|can see|can tell|can't imagine|cannot imagine|can't believe|don't know|"
    r"am not sure|'m not sure|am sure|'m sure|am glad|'m glad|am happy to|'m happy to|am sorry|'m sorry|"
    r"have heard|'ve heard|have never heard|'ve never heard|have to check|need to check|totally|completely)|"
    r"me too|me neither|my pleasure|my bad|my god|my goodness|my gosh)\b",
    re.I,
)
_TRANSIENT = re.compile(
    r"^(?:i'm|im|i am|i feel|i've been|i have been)\s+(?:so\s+|very\s+|really\s+|pretty\s+|just\s+|doing\s+|"
    r"feeling\s+)*(?:good|fine|great|well|ok|okay|alright|sorry|glad|sure|here|back|ready|excited for|jealous|"
    r"happy for|happy to hear|on my way|about to|off to|going to go)\b"
    r"|^i just (?:got (?:home|back|here|there|in|off|up|out)|came|woke|wanted)\b"
    # how a stretch of time went ("My week was great", "My weekend has been busy")
    r"|^my (?:day|week|weekend|morning|afternoon|evening|night|month|year|summer|holiday|holidays) "
    r"(?:is|was|has been|had been|went|is going|has gone)\b",
    re.I,
)
# A question that follows a statement in one unpunctuated sentence ("I'm 46 how about you?"): it starts at a
# wh-word, at an auxiliary or modal before "you" (subject-auxiliary inversion), or at "you" itself (a
# declarative question "I love jazz you don't?" or a tag ", yourself?").
_QUESTION_OPENER = re.compile(
    r"\s(?=(?:what|how|where|when|why|who|which|whats)\b"
    r"|(?:do|does|did|are|is|was|were|have|has|had|can|could|would|will|should|may|might)\s+(?:you|u|ya)\b"
    r"|(?:and\s+)?(?:you|u|yourself)\b)",
    re.I,
)
# What is left hanging when a question is cut off ("I'd love to cook it for | you?").
_HANGING_WORD = re.compile(r"(?:[\s,]+(?:for|to|with|of|at|about|from|by|and|or|but|so|than|like))+\s*$", re.I)
# A statement whose predicate is the speaker's ("Poker is my game of choice", "Tacos are my favorite", "Squash
# is one of my favorites"): a subject of one to five words that is no pronoun, demonstrative or wh-word, then
# be, maybe an adverb and a quantifier ("one of", "another of"), then my/our.
_POSSESSIVE_PREDICATE = re.compile(
    r"^(?!(?:it|that|this|these|those|there|here|he|she|they|what|which|who|you|your|one|mine|its|that's|it's)\b)"
    r"[\w'&-]+(?:\s+[\w'&-]+){0,4}\s+(?:is|are|was|were)\s+(?:\w+ly\s+|still\s+|also\s+)?"
    r"(?:(?:one|another one|another|some|two|three|a few|all|none|both) of\s+|among\s+)?(?:my|our)\s+\w",
    re.I,
)
# An elliptical answer ("I am, for years now", "I do too"): the predicate is the question's, not the clause's.
_ELLIPTICAL = re.compile(r"^(?:i|we)(?:'m|'ve|\s+(?:\w+ly\s+)?(?:do|did|am|was|were|have|had|can|could|will|would))"
                         r"(?:\s+(?:too|not|indeed|yes))?\s*(?:,|$)", re.I)
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
_TAIL = re.compile(r"(?:,\s+|\s+)(?:because|but|so|which|when|if|although|though|since|while|and that|and it|maybe|"
                   r"cause|cuz|until|unless|whereas)\s+|,\s+(?:and|or|though|too)\b|\s+-\s+"
                   # a new clause with a subject pronoun: "... and it was fun", "..., there are many"
                   r"|(?:,\s*|\s+(?:and|but|so|or)\s+)(?=(?:he|she|they|it|there|he's|she's|they're|it's|there's|"
                   r"that's|its)\s)", re.I)
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
    """Cut an unpunctuated run-on before a new "I ..." or "my <noun> is ..." clause ("Really I have not done
    that"), unless the word before it takes a clause ("think", "that") or, before "my", is a preposition
    ("one of my kids was ...")."""
    parts, start = [], 0
    for match in _RUN_ON_I.finditer(text):
        previous = text[start:match.start()].split()
        word = previous[-1].lower().strip(",") if previous else ""
        before_my = text[match.end():match.end() + 2].lower() == "my"
        if word and word not in _COMPLEMENT_WORDS and not (before_my and word in _PREPOSITIONS):
            parts.append(text[start:match.start()])
            start = match.start() + 1
    parts.append(text[start:])
    return parts


def _clauses(sentence: str) -> list[str]:
    """The clauses of one sentence; a verb-led clause after "and" inherits "I"."""
    out: list[str] = []
    start, keep = 0, True
    for match in _CLAUSE_BREAK.finditer(sentence):
        if _POSSESSIVE_NP.match(sentence[start:match.start()]) and match.group().strip().lower() == "and":
            continue  # a compound subject: "My wife and I run a bakery"
        if keep:
            out.extend(_run_on_parts(sentence[start:match.start()]))
        start = match.end()
        # a condition or a time limit ("as soon as I am old enough", "even if I lose") states no fact
        keep = match.group().strip(" ,").lower() not in _CONDITION_WORDS
    if keep:
        out.extend(_run_on_parts(sentence[start:]))
    clauses = []
    for k, clause in enumerate(c.strip(" ,") for c in out):
        if k and clause and not _FIRST_PERSON_START.match(_LEAD_TIME.sub("", clause)):
            clause = "I " + clause
        clauses.append(clause)
    return [c for c in clauses if c]


_DEMONSTRATIVE_IS_MY = re.compile(r"^(?:that|this|it|that's|it's|thats|its)(?:\s+(?:is|was))?\s+(?:my|our)\b", re.I)


def _strip_lead(clause: str) -> str:
    """The clause without a leading interjection or short comment before its subject."""
    lead = _LEAD_COMMENT.match(clause)
    # "Oh wow, I ..." loses its comment; "Marcus Webb, our CTO, ..." names someone else and stays.
    if lead and not _FIRST_PERSON_START.match(lead.group(1)) and not _NAME_INSIDE.search(lead.group(1)):
        clause = clause[lead.end():]
    if not _FIRST_PERSON_START.match(clause):
        if _DEMONSTRATIVE_IS_MY.match(clause):
            return ""  # "That's my baby", "It is my favorite": said of something else, not a statement of theirs
        clause = _FILLER.sub("", clause).strip(" ,")
    return clause


# Time adverbials: the tense is read from the whole clause before they are taken out of the content, so a
# fact states what is true and `temporal` says when.
_TIME_ADVERBIAL = re.compile(
    r",?\s*\b(?:just )?(?:(?:last|next|this|that) (?:week|month|year|summer|winter|spring|fall|autumn|weekend|night|"
    r"morning|evening|semester|time)|(?:(?:a|an|one|two|three|four|five|six|ten|a few|few|several|many|\d+) )?"
    r"(?:days?|weeks?|months?|years?|decades?|while) ago|long ago|these days|nowadays|right now|at the moment|"
    r"at this (?:point|time)|yesterday|today|tonight|tomorrow|lately|recently|currently)\b",
    re.I,
)
# Stance and degree adverbs say how the speaker feels about the statement or how much, not what it states.
_STANCE_ADVERB = re.compile(
    r"\s*\b(?:actually|definitely|honestly|totally|basically|literally|seriously|truly|certainly|absolutely|"
    r"pretty much|kind of|kinda|sort of|pretty|(?:a little|a bit)(?! of\b)|fairly|rather|extremely|super|"
    r"incredibly|somewhat|slightly|very|for sure)\b,?",
    re.I,
)


# "now" or "then" between the subject and the verb ("I retired and now teach" gives "I now teach"): out, so the
# verb is inflected ("teaches").
_SUBJECT_ADVERB = re.compile(r"^(i|we)\s+(?:now|then)\s+(?=[a-z])", re.I)
# Words that close a spoken sentence without adding to it: laughter, "though", "either", "as well", "or something".
_TRAILING_PARTICLE = re.compile(
    r"(?:[\s,]+(?:ha(?:ha)+|he(?:he)+|lol|lmao|though|anyway|anyways|either|as well|or something|and stuff|"
    r"and all|i guess|i think|honestly|haha+|hah))+[\s.!,]*$",
    re.I,
)


def _bare(clause: str) -> str:
    """The clause in third person without time adverbials and stance adverbs (taken out before the verb is
    inflected, so "I very rarely go" is "rarely goes"); the whole clause if nothing would be left."""
    bare = _TIME_ADVERBIAL.sub("", _SUBJECT_ADVERB.sub(r"\1 ", clause))
    bare = _TRAILING_PARTICLE.sub("", _STANCE_ADVERB.sub("", bare))
    bare = to_third_person(" ".join(bare.split()).strip(" ,"))
    return bare if len(bare.split()) >= 2 else to_third_person(clause)


def _shorten(content: str) -> str | None:
    """The main clause: the content up to a trailing subordinate part when the head still says something;
    None when nothing under the length limit is left."""
    for match in _TAIL.finditer(content):
        head = content[: match.start()].rstrip(" ,")
        if len(_concrete_words(head)) >= _MIN_HEAD_WORDS:
            content = head
            break
    return content if len(content) < MAX_FACT_CHARS else None


def _before_you(clause: str) -> str | None:
    """The clause, or its main part before a trailing part that turns to the other person ("I just sent my old
    phone, so you should get it soon"); None when the main part itself is about them."""
    you = _YOU.search(clause)
    if you is None:
        return clause
    for match in _TAIL.finditer(clause, 0, you.start()):
        head = clause[: match.start()].rstrip(" ,")
        if len(_concrete_words(to_third_person(head))) >= _MIN_HEAD_WORDS:
            return head
    return None


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
            # the statement before the question, if any, without a word left hanging ("I'd love to cook it for")
            sentence = _HANGING_WORD.sub("", sentence[: opener.start()])
        for raw in _clauses(sentence):
            stripped = _strip_lead(raw).rstrip(" .!,")
            clause = _LEAD_TIME.sub("", stripped)
            if not (_FIRST_PERSON_START.match(clause) or _POSSESSIVE_PREDICATE.match(clause)) or clause.endswith("?"):
                continue
            if _SKIP_START.match(clause) or _TRANSIENT.match(clause) or _ELLIPTICAL.match(clause):
                continue
            clause = _before_you(clause)
            if clause is None:
                continue
            content = _shorten(_bare(clause))
            if content is None or _is_vague(content):
                continue
            words = frozenset(re.findall(r"[\w']+", clause.lower()))
            found.append(_Statement(clause, stripped[: len(stripped) - len(clause)], content, words))
    return found


def heuristic_facts(text: str, context: str | None = None) -> list[RawFact]:
    """At most 3 facts of one message, by the module's rules; `context`: the other speaker's question turn the
    message answers, if any."""
    facts = []
    seen: set[str] = set()
    answered = answered_statement(context, text)
    for statement in (_statements(answered + ".") if answered else []) + _statements(text):
        if statement.content.lower() in seen:
            continue
        seen.add(statement.content.lower())
        kind = fact_type(statement.clause, statement.words)
        facts.append(RawFact(kind, statement.content, confidence(statement.clause), importance(kind, statement.clause),
                             temporal(statement.time_lead + statement.clause, statement.clause)))
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
        return [FactAnswer(tuple(heuristic_facts(r.content, r.context))) for r in requests]

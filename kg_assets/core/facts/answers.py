"""A short answer to the other speaker's yes/no question states the question's content.

B asks "Do you have any pets?" and A answers "Yes, I do!": A has pets ("No." - A has no pets). The answer alone says nothing, so the
pipeline gives the extractor the turn before a message as its context when another speaker asked a question
there (`previous_questions`), and this module reads the pair by grammar only:

* `yes_no_question`: the last question of that turn, when it is a yes/no question to the listener: an
  auxiliary or modal before "you" (subject-auxiliary inversion: "do / did / are / were / have / can / would
  you ..."), maybe after a lead ("So, do you ...", "Very carefully, did you ..."). An alternative question
  ("Are you left or right handed?") has no yes/no answer; a question about someone else ("Does your sister
  ...") is not about the listener.
* `answer_polarity`: "yes" for an answer that opens with an affirmative word ("yes / yeah / yep / sure / of
  course ...", maybe after a short comment: "Thanks, yes I did") or an elliptical "I do / I am / I have / I did ..." (the auxiliary ends its clause), "no" for
  "no / nope / not really / I don't / I'm not / I haven't ...", None for anything else.
* `question_statement`: the question turned into a first-person statement: the auxiliary goes behind the
  subject ("are you" -> "I am", "have you" -> "I have", "can you" -> "I can", "did you go" -> "I went"),
  "you / your / yours / yourself" become "I or me / my / mine / myself", the asker's own "I / me / my" become
  "you / your", and the words that only a question carries leave ("ever", "any" before a noun).
* `denied_statement`: the same statement negated ("have you ever been" -> "I have never been", "do you ski" ->
  "I do not ski"): annotators write what a no tells as well ("I have never owned a business").
* `answered_statement`: the statement after a yes, the denied one after a no, else None.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

CONTEXT_MAX_CHARS = 500  # the tail of the question turn given as context (the question ends a turn)

_AUX_FORMS = {"do": "", "does": "", "did": "did", "are": "am", "am": "am", "were": "was", "was": "was",
              "have": "have", "has": "have", "can": "can", "could": "could", "will": "will", "would": "would"}
_AUX = "|".join(sorted(_AUX_FORMS, key=len, reverse=True))
_LEAD_WORDS = r"(?:so|and|but|oh|well|then|also|or|hey|hi|hello|ok|okay|now)"
# the question starts at the turn's start, after punctuation or dashes, or after a lead word
_YES_NO = re.compile(
    r"(?:^|[,.;:!]+\s*|\s-+\s|\.{2,}\s*|\b" + _LEAD_WORDS + r"\s+)(?P<aux>" + _AUX + r")\s+(?:you|u)\s+(?P<rest>[^?]*?)"
    r"\s*\?+[\s\W]*$",
    re.I,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_ALTERNATIVE = re.compile(r"\bor\b|\bwhether\b", re.I)

_INTERJECTION = r"(?:oh|ah|aw|well|haha\w*|hah|lol|wow|hmm+|um+|uh|so|and|but|why|ha|hehe|omg|ya know)"
_ADVERB = r"(?:\w+ly|sure|still|really|do|just|also|too|both|even)"
_NEGATION = r"(?:not|n't|never)"
_ELLIPTIC_AUX = r"(?:do|am|have|did|can|will|would|was|were|could|had|'m|'ve)"
_YES = re.compile(
    r"^(?:" + _INTERJECTION + r"[\s,!.]+)*(?:"
    r"(?:yes+|yeah+|yea|yep|yup|ya|yah|yess|sure|of course|definitely|absolutely|certainly|indeed|totally|you bet|"
    r"i sure do|i sure am|i sure have|i sure did)(?![\s,!.]+not\b)(?![\s,!.]+(?:i|we)\s+(?:don't|do not|am not|haven't|"
    r"have not|didn't|did not|can't|cannot|wasn't|won't)\b)\b"
    r"|i(?:\s+" + _ADVERB + r")?\s*" + _ELLIPTIC_AUX + r"(?:\s+(?:too|also|indeed|yes|now))?(?=\s*(?:[,.!;]|$|-|\s+"
    r"(?:but|and|though|lol|haha\w*)\b)))",
    re.I,
)
_NO = re.compile(
    r"^(?:" + _INTERJECTION + r"[\s,!.]+)*(?:no+|nope|nah|not really|not yet|not at all|never|"
    r"i(?:\s+" + _ADVERB + r")?\s*(?:don't|do not|dont|am not|'m not|haven't|have not|havent|didn't|did not|didnt|"
    r"can't|cannot|can not|won't|wasn't|was not|never))\b",
    re.I,
)

# a short comment before the yes ("Thanks for asking! Yes, ...", "Between you and me yes ...")
_COMMENT_BEFORE_YES = re.compile(
    r"^[^,.!?]{1,30}[,.!]+\s*(?=(?:yes|yeah|yep)\b)|^\w+(?:\s\w+){0,3}\s+(?=(?:yes|yeah)\b)", re.I)
# the listener's words as the answerer says them, and the asker's words as the answerer hears them
_SWAP = {"your": "my", "yours": "mine", "yourself": "myself", "ur": "my", "you're": "I'm", "youre": "I'm",
         "you've": "I've", "you'll": "I'll", "you'd": "I'd",
         "i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself", "i'm": "you're",
         "i've": "you've", "i'll": "you'll", "i'd": "you'd", "im": "you're"}
# "you" is the subject of an embedded clause before a verb-like word, else an object ("for you" -> "for me")
_SUBJECT_NEXT = frozenset(
    "are were was have had do did don't didn't can can't could will would should might may must "
    "want like love need know think go went get got".split())
_SUBJECT_AFTER = frozenset(
    "when if while because that before after as and but so what whether once until unless since".split())
_YOU_BE = {"are": "am", "were": "was"}
_QUESTION_ONLY = re.compile(
    r"\b(?:ever|eveer)\b\s*|\bany\b\s*(?=[a-z])(?!(?:of|more|longer|good|better|other|one|way|time|thing)\b)", re.I)
_BASE_PAST = {
    "go": "went", "have": "had", "get": "got", "make": "made", "take": "took", "see": "saw", "come": "came",
    "grow": "grew", "buy": "bought", "begin": "began", "bring": "brought", "build": "built", "catch": "caught",
    "choose": "chose", "draw": "drew", "drink": "drank", "drive": "drove", "eat": "ate", "fall": "fell",
    "feel": "felt", "find": "found", "fly": "flew", "forget": "forgot", "give": "gave", "hold": "held",
    "keep": "kept", "know": "knew", "leave": "left", "lose": "lost", "meet": "met", "pay": "paid", "ride": "rode",
    "run": "ran", "say": "said", "sell": "sold", "send": "sent", "sing": "sang", "sit": "sat", "sleep": "slept",
    "spend": "spent", "speak": "spoke", "swim": "swam", "teach": "taught", "tell": "told", "think": "thought",
    "throw": "threw", "win": "won", "write": "wrote", "read": "read", "hear": "heard", "become": "became",
    "break": "broke", "do": "did", "be": "was", "put": "put", "cut": "cut", "hit": "hit", "let": "let",
    "set": "set", "quit": "quit", "wear": "wore", "wake": "woke", "understand": "understood", "stand": "stood",
}


def yes_no_question(turn: str | None) -> tuple[str, str] | None:
    """(auxiliary, rest) of the last question of `turn` when it is a yes/no question to the listener."""
    if not turn:
        return None
    sentences = [s for s in _SENTENCE_END.split(turn.replace("\u2019", "'").strip()) if s.strip()]
    questions = [s for s in sentences if s.rstrip().endswith("?")]
    if not questions:
        return None
    match = _YES_NO.search(questions[-1])
    if match is None or _ALTERNATIVE.search(match.group("rest")):
        return None
    return match.group("aux").lower(), match.group("rest")


def answer_polarity(answer: str) -> str | None:
    """'yes' for an affirmative answer, 'no' for a negative one, None when it opens with neither."""
    text = _COMMENT_BEFORE_YES.sub("", " ".join(answer.replace("\u2019", "'").split()), count=1)
    if _NO.match(text):
        return "no"
    if _YES.match(text):
        return "yes"
    return None


def _past(verb: str) -> str:
    low = verb.lower()
    if low in _BASE_PAST:
        return _BASE_PAST[low]
    if low.endswith("e"):
        return verb + "d"
    if len(low) > 2 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


def _swap_persons(rest: str) -> str:
    words = rest.split()
    out = []
    for i, word in enumerate(words):
        core = word.strip(",.!;:\"'")
        low = core.lower()
        if low in ("you", "u"):
            after = words[i + 1].strip(",.!").lower() if i + 1 < len(words) else ""
            before = words[i - 1].strip(",.!").lower() if i else ""
            swapped = "I" if after in _SUBJECT_NEXT or before in _SUBJECT_AFTER else "me"
            if swapped == "I" and after in _YOU_BE:
                words[i + 1] = _YOU_BE[after]
        elif low in _SWAP:
            swapped = _SWAP[low]
        else:
            out.append(word)
            continue
        out.append(word.replace(core, swapped, 1) if core else word)
    return " ".join(out)


def question_statement(aux: str, rest: str) -> str | None:
    """The first-person statement a yes answer to "<aux> you <rest>?" makes; None when nothing is left."""
    rest = " ".join(_QUESTION_ONLY.sub("", _swap_persons(rest)).split()).strip(" ,")
    if not rest:
        return None
    form = _AUX_FORMS[aux]
    if form == "did":  # "did you go to college" -> "I went to college"
        verb, _, tail = rest.partition(" ")
        return " ".join(["I", _past(verb), tail]).strip()
    return " ".join(w for w in ("I", form, rest) if w)


def denied_statement(aux: str, rest: str) -> str | None:
    """The first-person statement a no answer to "<aux> you <rest>?" makes ("have you ever been" -> "I have
    never been", "do you ski" -> "I do not ski")."""
    negation = "never" if aux in ("have", "has") and re.search(r"\bever\b", rest, re.I) else "not"
    rest = " ".join(_QUESTION_ONLY.sub("", _swap_persons(rest)).split()).strip(" ,")
    if not rest:
        return None
    return " ".join(["I", {"": "do"}.get(_AUX_FORMS[aux], _AUX_FORMS[aux]), negation, rest])


def answered_statement(context: str | None, answer: str) -> str | None:
    """What the answerer states by answering the other speaker's yes/no question: its statement after a yes, the
    denied statement after a no; None when the context asks no yes/no question or the answer is neither."""
    question = yes_no_question(context)
    polarity = answer_polarity(answer) if question else None
    if polarity == "yes":
        return question_statement(*question)
    if polarity == "no":
        return denied_statement(*question)
    return None


def previous_questions(messages: Iterable[Mapping]) -> dict[tuple[str, str], str]:
    """The context of each message that answers another speaker's question, by (document_id, message_id): the
    turn it replies to (`reply_to`) or else the turn before it in its conversation (log order: line number, then
    time), when another user wrote it and it asks something; its last CONTEXT_MAX_CHARS characters."""
    by_document: dict[str, list[Mapping]] = {}
    for message in messages:
        by_document.setdefault(message["document_id"], []).append(message)
    contexts: dict[tuple[str, str], str] = {}
    for document_id, rows in by_document.items():
        rows = sorted(rows, key=lambda m: (m.get("line_number") is None, m.get("line_number") or 0,
                                           m.get("sent_at") is None, m.get("sent_at") or 0, m["message_id"]))
        by_id = {m["message_id"]: m for m in rows}
        for before, message in zip([None, *rows], rows):
            previous = by_id.get(message.get("reply_to") or "", before)
            if previous is None or previous["user_id"] == message["user_id"] or "?" not in previous["content"]:
                continue
            contexts[(document_id, message["message_id"])] = previous["content"][-CONTEXT_MAX_CHARS:]
    return contexts

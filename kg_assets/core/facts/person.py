"""First person to third person, the seed's storage form: "I love hiking" -> "loves hiking".

A leading "I" or "we" is dropped and the verb after it (past any adverbs) takes the third person singular
("I am" -> "is", "I have" -> "has", "I watch" -> "watches", "I don't" -> "does not"; past forms and
modals stay). Any other first-person word becomes its "they" form ("my" -> "their", "me" -> "them").
"""

from __future__ import annotations

import re

_CONTRACTIONS = {
    "i'm": "I am", "im": "I am", "i've": "I have", "ive": "I have", "i'll": "I will", "i'd": "I would",
    "we're": "we are", "we've": "we have", "we'll": "we will", "we'd": "we would",
    "don't": "do not", "dont": "do not", "doesn't": "does not", "didn't": "did not", "didnt": "did not",
    "can't": "cannot", "cant": "cannot", "won't": "will not", "isn't": "is not", "aren't": "are not",
    "wasn't": "was not", "weren't": "were not", "haven't": "have not", "havent": "have not",
    "hasn't": "has not", "hadn't": "had not", "wouldn't": "would not", "couldn't": "could not",
    "shouldn't": "should not",
}
_OBJECT_FORMS = {"my": "their", "mine": "theirs", "me": "them", "myself": "themselves", "our": "their",
                 "ours": "theirs", "us": "them", "ourselves": "themselves", "we": "they", "i": "they"}
_ADVERBS = frozenset(
    "never really also just usually always still only often sometimes recently actually currently mostly rarely "
    "definitely absolutely totally already even kind sort of both all finally truly seriously honestly basically "
    "literally personally generally normally mainly primarily probably perhaps maybe hardly barely "
    "occasionally regularly".split()
)
_MODALS = frozenset("can cannot could will would shall should may might must".split())
_IRREGULAR = {"am": "is", "are": "is", "were": "was", "have": "has", "do": "does", "go": "goes", "be": "is"}
IRREGULAR_PAST = frozenset(
    "was were had did went got made took saw came grew bought began began brought built caught chose drew drank "
    "drove ate fell felt fought found flew forgot gave hung held hurt kept knew laid led left lent let lost meant "
    "met paid put quit ran rode rang rose said sold sent set shook shot shut sang sank sat slept spent spoke stood "
    "stole stuck struck swam swore taught told thought threw understood woke wore won wrote read heard became "
    "broke".split()
)
_TOKEN = re.compile(r"(\s*)([\w']+|[^\w'\s])")
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves"})


def third_singular(verb: str) -> str:
    """The he/she form of a base verb; past forms, modals and already inflected forms are kept."""
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _MODALS or low in IRREGULAR_PAST or low.endswith("ed") or low in {"is", "was", "has", "does"}:
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(low) > 2 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _expand(text: str) -> list[tuple[str, str]]:
    """(leading space, word) pairs with contractions expanded, so the original spacing survives."""
    pairs: list[tuple[str, str]] = []
    for space, token in _TOKEN.findall(text.replace("\u2019", "'")):
        low = token.lower()
        if low in _CONTRACTIONS:
            first, *rest = _CONTRACTIONS[low].split()
            pairs.append((space, first))
            pairs.extend((" ", word) for word in rest)
        else:
            pairs.append((space, "I" if low == "i" else token))
    return pairs


def to_third_person(text: str) -> str:
    """Third-person form of a first-person statement, without a trailing period; other text unchanged."""
    pairs = _expand(text.strip())
    lead_converted = bool(pairs) and pairs[0][1].lower() in FIRST_PERSON
    if pairs and pairs[0][1].lower() in {"i", "we"}:
        pairs = pairs[1:]
        if pairs:
            pairs[0] = ("", pairs[0][1])
        i = 0
        while i < len(pairs) and pairs[i][1].lower() in _ADVERBS:
            i += 1
        if i < len(pairs) and pairs[i][1].isalpha():
            verb = pairs[i][1]
            following = pairs[i + 1][1].lower() if i + 1 < len(pairs) else ""
            pairs[i] = (pairs[i][0], "had" if verb.lower() == "would" and following == "been" else third_singular(verb))
    words = [w for _, w in pairs]
    for k, word in enumerate(words):
        low = word.lower()
        if low in _OBJECT_FORMS and _is_pronoun(words, k):
            words[k] = _OBJECT_FORMS[low]
            following = words[k + 1].lower() if k + 1 < len(words) else ""
            if words[k] == "they" and following in {"am", "was"}:
                words[k + 1] = "are" if following == "am" else "were"
    result = "".join(space + word for (space, _), word in zip(pairs, words)).strip().rstrip(".!").strip()
    return result[:1].lower() + result[1:] if lead_converted else result


def _is_pronoun(words: list[str], k: int) -> bool:
    """Whether words[k] is the pronoun it looks like: "US" is a country, "World War I" a numeral."""
    word = words[k]
    if word == "US":
        return False
    return not (word == "I" and k > 0 and words[k - 1][:1].isupper() and words[k - 1] != "I")


def is_first_person(text: str) -> bool:
    words = re.findall(r"[^\W\d_]+", text.replace("\u2019", " ").replace("'", " "))
    return any(w.lower() in FIRST_PERSON and _is_pronoun(words, k) for k, w in enumerate(words))

"""Words of a fact: the tokenizer, stop words and suffix stripping shared by dedup guards, fact keys and scoring.

Content words follow the scoring rule of ``shared/eval/README.md``: lowercase; pronouns, "user", articles,
auxiliaries and other stop words dropped; a trailing "ing", "ed", "es" or "s" stripped from a word longer
than the suffix plus 3 (the first suffix of that list the word ends with and is long enough for).
"""

from __future__ import annotations

import re
from functools import lru_cache

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_SUFFIXES = ("ing", "ed", "es", "s")

PRONOUNS = frozenset(
    "i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself she her "
    "hers herself it its itself they them their theirs themselves one user i'm i've i'd i'll we're we've we'd "
    "we'll you're you've you'd you'll he's he'd he'll she's she'd she'll it's it'd they're they've they'd they'll "
    "im ive id ill".split()
)
ARTICLES = frozenset({"a", "an", "the"})
AUXILIARIES = frozenset(
    "am is are was were be been being have has had having do does did doing will would shall should can could "
    "may might must isn't aren't wasn't weren't haven't hasn't hadn't don't doesn't didn't won't wouldn't "
    "shan't shouldn't can't cannot couldn't mightn't mustn't ain't 's 're 've 'd 'll 'm".split()
)
OTHER_STOP_WORDS = frozenset(
    "and or but if so than then too very just also only own same such no nor not now again further once here "
    "there when where why how what which who whom whose that that's this these those all any both each few more "
    "most other some of at by for with about against between into through during before after above below to "
    "from up down in out on off over under as until while because really quite lot lots much many well yes "
    "yeah oh ok okay still even ever always never already yet".split()
)
STOP_WORDS = PRONOUNS | ARTICLES | AUXILIARIES | OTHER_STOP_WORDS


def tokens(text: str) -> list[str]:
    """Lowercase word tokens; typographic apostrophes count as apostrophes."""
    return _TOKEN.findall(text.lower().replace("\u2019", "'"))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The scoring rule's suffix stripping ("hiking" -> "hik", "likes" -> "like", "goes" stays)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) > len(suffix) + 3:
            return word[: -len(suffix)]
    return word


def content_word_list(text: str) -> list[str]:
    """Stemmed words of `text` that carry content, in order (stop words dropped, possessive 's removed)."""
    out = []
    for token in tokens(text):
        if token in STOP_WORDS:
            continue
        if token.endswith("'s"):
            token = token[:-2]
        token = token.replace("'", "")
        if token and token not in STOP_WORDS:
            out.append(stem(token))
    return out


def content_words(text: str) -> frozenset[str]:
    return frozenset(content_word_list(text))


def set_f1(a: frozenset[str], b: frozenset[str]) -> float:
    """F1 of two word sets (0 when either is empty)."""
    if not a or not b:
        return 0.0
    common = len(a & b)
    return 2 * common / (len(a) + len(b))

"""Offline heuristic entity/relation extractor: a documented, deterministic baseline (no model, no network).

It reads capitalisation, a few lexical cues and a small gazetteer. It is fast (compiled regexes, one
pass per chunk, rows built once per batch by the shared row builder) and honest about what it cannot do.

Per chunk (``extractor``): ``sentences`` splits the text, ``mentions`` finds and types the names,
``attributes`` reads attribute cues (``cue_context`` finds their subjects and may retype weakly typed
mentions; ``cue_patterns`` holds the patterns), ``relations`` pairs the mentions of a sentence;
``lexicon`` holds the word lists and the built-in gazetteer; in chat chunks ``chat_turns`` reads the
line prefixes (speakers) and resolves first-person pronouns to them. Each module's docstring states its rules.

Known limits
    No coreference beyond the rules above (pronouns are ignored, except first-person ones in chat messages), no lowercase entities (``python``),
    no nested entities; unknown organisations without a head word are OTHER, and ``at Acme`` /
    ``from Acme`` even reads as LOCATION; people whose given name is not in the list are OTHER unless
    a title precedes them; sentence-initial capitalised common words can leak in when they form
    multi-word spans; ALL-CAPS headings and title
    case headings produce spurious spans; ``Chen of Northwind`` stays one span; plural nouns ending in -s
    are not read as verbs unless their base form is in the verb list; irregular verbs outside the list
    give RELATED_TO; relation direction ignores passive voice (``acquired by`` keeps the textual order
    but says so in its type); names in scripts without case (Chinese, Arabic) are not found, and an
    inflected Cyrillic name is its own mention (``Москве`` is not ``Москва``).
    Attributes: only the listed cues; an acronym is a different value from its full name unless the chunk
    defines it (``QDL`` vs ``Quantum Dynamics Lab``); pronoun subjects (``She moved to Lisbon``) and
    sentence-initial single names without support give nothing; a name broken over a line (PDF text,
    ``Quantum\nDynamics Lab``) is two mentions; coordinated objects (``works at A and B``) give the first
    only; two employers in one appositive are both emitted; tense beyond the listed markers is not read.
"""

from kg_assets.extractors.heuristic.extractor import HeuristicExtractor
from kg_assets.extractors.heuristic.sentences import split_sentences

__all__ = ["HeuristicExtractor", "split_sentences"]

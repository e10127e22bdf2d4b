"""The heuristic extractor: per chunk, sentences, then mentions, attributes and relations; the rows of a
batch come from the shared row builder (:func:`kg_assets.core.extraction.rows.build_rows`).
"""

from __future__ import annotations

import polars as pl

from kg_assets.core.extraction.figures import add_figure_node
from kg_assets.core.extraction.prompts import DEFAULT_ENTITY_TYPES
from kg_assets.core.extraction.rows import ChunkRecords, ExtractionResult, MentionRecord, build_rows
from kg_assets.extractors.base import settings_digest
from kg_assets.extractors.heuristic.articles import with_inner_the
from kg_assets.extractors.heuristic.attributes import AttributeReader
from kg_assets.extractors.heuristic.credits import without_credits
from kg_assets.extractors.heuristic.chat_turns import CONF_SPEAKER, read_chat, speaker_names, speaker_spans
from kg_assets.extractors.heuristic.headlines import names_in_headlines
from kg_assets.extractors.heuristic.leading_verbs import without_leading_verbs
from kg_assets.extractors.heuristic.leading_words import without_leading_common_words
from kg_assets.extractors.heuristic.lexicon import BUILTIN_GAZETTEER, word_key
from kg_assets.extractors.heuristic.mentions import MentionFinder
from kg_assets.extractors.heuristic.name_pairs import without_name_pairs
from kg_assets.extractors.heuristic.quoted_titles import quoted_titles
from kg_assets.extractors.heuristic.relations import relations
from kg_assets.extractors.heuristic.sentences import split_sentences

MAX_DESCRIPTION = 300  # a mention's description is its sentence, cut to this many characters


class HeuristicExtractor:
    """Rule-based extractor; see the package docstring for the rules and their limits."""

    name = "heuristic"
    # a pure function of its chunks, so a step may run its batches in worker processes (extractors/workers.py)
    runs_in_processes = True
    # 2: attribute observations, cue-based retyping of weak mentions; 3: ids from the shared row builder;
    # 4: chat speakers and first-person pronouns, pronoun contractions are no names, acronyms in
    # parentheses take the type of the span whose initials they are. A PDF figure's chunk (kind 'figure')
    # also gives a FIGURE node: text chunks' rows are as before, so the version stays; 5: the row builder
    # gives a lower-case description an id per document (rows made before are stale); 6: the row builder
    # makes no row for a nationality or religion word ("Syrian", "Germans", "Muslim") or a role word, and
    # keeps a person apart from a title before the name ("US President Barack Obama"); a verb that opens a
    # sentence is no part of a name ("Ask Sarah Chen", "Went": `leading_verbs`); 7: time zones and weekdays are
    # no names nor parts of names ("UTC", "SUN", "Saturday's"); the row builder makes no row for a phrase that
    # describes people by nationality or faith ("Six Israelis", "Franco-German", "German MPs"); a capitalised
    # common word is no name (a line start is a sentence start; "Politics" beside "politics": `common_words`);
    # "of" and a title word stay with a title ("Secretary of State John Kerry"), and the row builder's title rule
    # reaches further (places and organisations, titles after a name, "US Secretary"); in a Title-Case line a
    # span is a name only as far as the text names it elsewhere (`headlines`); a capitalised "The" inside a
    # sentence is part of the name as written ("in The Hague": `articles`; the entity id is unchanged); 8: a
    # lower-case particle inside a hyphenated name ("Port-au-Prince"), a word after a colon opens a sentence, an
    # adverb or adjective alone is no name ("Personally", "Expensive": `common_words`); 9: a Markdown heading is a
    # Title-Case line ("## Northwind Responds"), a quantity before "of" opens no name ("Two of QDL"), the row
    # builder makes no row for an office of two or three words ("Chief Technology Officer", "Research Engineer");
    # 10: a title in quotes is one name ("Away from Her": `quoted_titles`), a hyphenated pair of names before a
    # noun is none ("Japan-Russia talks": `name_pairs`); 11: a verb acts on its own object, a version makes a
    # technology, a lone given name after the full name; 12: a common word that opens a sentence is no part of the
    # name after it ("Former CIA", "Understanding Islam": `leading_words`); 13: a credit line names no entity of the
    # story ("Author: ... Editor: ...", "ab / cd (AFP, dpa)": `credits`), a lower-case noun for a person before a
    # name types it PERSON ("the journalist Jane Roe"), adjectives in -al and abstract nouns in -ism alone are no
    # names, a nationality adjective before a name the chunk names alone is no part of it ("Shiite Iran"); 14: one
    # type per person, "to" after a verb of speaking names no place, the Arabic article; 15: a proper adjective before a noun
    # for a place ("the Alpine country"), a section label ("Interview", "China Opinion:") and a plural noun for people
    # ("Lawmakers") alone are no names, a religion after "in" is no place (`common_words`); "Chamber" and "Corps" head
    # an organisation's name ("Chamber of Commerce and Industry")
    code_version = "heuristic-15"

    def __init__(
        self,
        entity_types: tuple[str, ...] = DEFAULT_ENTITY_TYPES,
        gazetteer: dict[str, str] | None = None,
    ) -> None:
        self.entity_types = tuple(t.upper() for t in entity_types)
        self._allowed = frozenset(self.entity_types)
        self._gazetteer: dict[str, str] = {word_key(k): v.upper() for k, v in BUILTIN_GAZETTEER.items()}
        if gazetteer:
            self._gazetteer.update({word_key(k): v.upper() for k, v in gazetteer.items()})
        self._mentions = MentionFinder(self._allowed, self._gazetteer)
        # The types and the gazetteer change what is found, so they are part of the version.
        self.version = f"{self.code_version}/{settings_digest(entity_types=self.entity_types, gazetteer=gazetteer or {})}"

    # --- public ----------------------------------------------------------------------------------
    def extract(self, chunks: pl.DataFrame) -> ExtractionResult:
        records = []
        for row in chunks.iter_rows(named=True):
            chunk = ChunkRecords(row["chunk_id"], row["document_id"], row.get("content_hash"))
            try:
                chunk.mentions, chunk.relations, chunk.observations = self._extract_text(row.get("text"))
                add_figure_node(chunk, row, row.get("text") or "")
            except Exception as exc:  # one bad chunk never fails the batch
                chunk.error = f"{type(exc).__name__}: {exc}"
            records.append(chunk)
        return build_rows(records, extractor=self.name, extractor_version=self.version)

    def _extract_text(self, text: object):
        """Mention, relation and observation records of one chunk (relations and observations point at
        mentions by index)."""
        if not isinstance(text, str):
            raise TypeError(f"chunk text must be a string, got {type(text).__name__}")
        if not text.strip():
            return [], [], []
        chat = read_chat(text)
        if chat is not None:  # line prefixes are not prose; the sentences are read from the messages
            text = chat.text
        sentences = split_sentences(text)
        if not sentences:
            return [], [], []
        spans = self._mentions.find(text, sentences)
        if chat is not None and "PERSON" in self._allowed:
            spans = speaker_spans(chat, spans, sentences)
        if not spans:
            return [], [], []
        # Cues may retype weak mentions, so attributes are read before the mentions are written.
        observations = AttributeReader(text, spans, sentences, self._allowed, self._gazetteer).read()
        descriptions: dict[int, str] = {}

        def sentence_text(idx: int) -> str:
            d = descriptions.get(idx)
            if d is None:
                s, e = sentences[idx]
                d = descriptions[idx] = " ".join(text[s:e].split())[:MAX_DESCRIPTION]
            return d

        mentions = without_leading_verbs(text, [MentionRecord(sp.name, sp.etype, sentence_text(sp.sent), sp.conf,
                                                              sp.start, sp.end) for sp in spans])
        mentions = without_leading_common_words(text, mentions, self._gazetteer)  # "Stable Libya ..." names Libya
        mentions = names_in_headlines(text, mentions)  # "Netherlands Opens Up Labor Market" is "Netherlands"
        mentions = with_inner_the(text, mentions)  # "in The Hague"
        mentions = without_name_pairs(text, mentions, self._gazetteer)  # the "Japan-Russia" of "Japan-Russia talks"
        mentions = without_credits(text, mentions)  # "Author: Jane Roe / Editor: John Doe" names who wrote it
        if "OTHER" in self._allowed:
            mentions = quoted_titles(text, mentions)  # the film "Away from Her" is one name, not "Away"
        if chat is not None and "PERSON" in self._allowed:
            # the speakers named in line prefixes, after the spans: relations and observations index spans
            mentions += [MentionRecord(name, "PERSON", f"speaker in the chat at {sent_at}", CONF_SPEAKER, start, end)
                         for name, start, end, sent_at in speaker_names(chat)]
        return mentions, relations(text, spans, sentence_text), observations

"""The rule-based name linker the pipeline runs (`NameLinker`).

----------------
The linker works on DISTINCT entity ids (one node per id, with its most frequent surface form, mention
count and the documents it occurs in), never per mention. Every rule is a general statement about
names; none is tuned to a data set.

1. Matching key. The surface form is folded: diacritics, punctuation, possessives, dotted and spaced
   initials ("U.S." / "U . S ." -> US, while "John F. Kennedy" keeps its lone initial), leading
   articles and prepositions ("in the North Bay" -> North Bay), before a person's name honorifics (Dr,
   Prof, Mr, Mrs, Ms, Sir, President ...) and lower-case descriptions ("boss Steven Moffat"), after an
   organization's name corporate suffixes (Inc, Corp, Ltd, LLC, GmbH, Co, plc ...), after a one-word place
   name a natural feature ("Mediterranean Sea", "Gaza Strip"; not "River", nor after a compass word).
   Generational suffixes (Jr, Sr) are kept: they tell father and son apart. The entity keeps its own name:
   the key only decides matches. A trailing "(ABC)" leaves the key and becomes a declared acronym.
2. Name variants (equivalence, any documents). Ids of the same type with the same key are one entity
   ("Apple Inc." = "Apple", "Dr. Jane Smith" = "Jane Smith"), descriptions only inside their document
   (`description_scopes`: a lower-case "girl" has an id per document, and its key does not join it back; a
   concept in lower case, "machine learning", is a name, `normalize.is_description_expr`); a small table of
   very common country aliases that no rule derives (US / USA / United States, UK / Britain ...) joins
   locations. Types are resolved by votes (`type_vote.resolved_types`, the one place of the rule, name-rules-5): ids of one key
   written as a name with one reading are one entity whatever type was guessed ("Rwanda" LOCATION and
   OTHER, "DW" OTHER and LOCATION); a real type beats OTHER, a surname next to a person's full name reads
   PERSON ("Kagame" typed LOCATION beside "Paul Kagame"), and two readings stay apart (Jordan the
   LOCATION of some documents, the PERSON of others; two real types inside one document). The short
   forms below see each id with its reading. A full name
   typed OTHER joins the PERSON entity with its key, in its documents or across them and whatever other
   types the key has, when the corpus writes the surname alone as a PERSON in a document of that person
   ("Marcus Webb" OTHER -> "Marcus Webb" PERSON next to "Webb said"; `untyped_person_names`), or where a document
   types it PERSON surely (confidence 0.7 or more, or none given) in more mentions than it leaves it untyped
   (name-rules-13), or where a plain person's name (no function word, no title word) is typed PERSON surely
   anywhere in the corpus (name-rules-14). Different
   types never merge otherwise, except that an acronym read as a place and an organisation is the organisation
   when the corpus spells it out as one and as no place ("at QDL" beside "Quantum Dynamics Lab", name-rules-9).
   Variants only the corpus confirms (`variants.py`): a plural beside its singular ("Northwind Atlas Arms" =
   "Northwind Atlas Arm"), a name after its maker's ("Northwind Atlas Arm C2" = "Atlas Arm C2" where
   "Northwind" names an organisation), a name with a German umlaut or ß and the same name with it spelled out ("Zoe
   Mueller" = "Zoë Müller", name-rules-15; folding diacritics alone makes the one MULLER and the other MUELLER).
3. Short forms (directed: a short id joins at most one long entity of the SAME type). The short side
   must be written as a name (a capitalised word, not "15-inch" or "jury") and, except for acronyms,
   have at least 4 characters (the seed rule; a lone word of a person's name, 2, in the document that names the
   person: "Kim" beside "Jim Yong Kim", name-rules-11). Candidate long forms:
   - person_short_form (PERSON): the surname ("Obama" -> "Barack Obama") or a trailing run ("Luther
     King"); first + last of a longer name ("John Kennedy" -> "John F. Kennedy"), first + middle
     initials + last ("William H. Armstrong"), initials + last ("J. Kennedy", "J. H. Dearle"); a given
     name ("Barack" -> "Barack Obama"), one word ("Martin Luther" is not "Martin Luther King").
   - acronym: initials of the capitalised content words of the long form, with or without the
     connectors (of, and, for ...), all-caps words kept whole ("US Geological Survey" -> USGS) and
     roman numerals always whole ("World War II" is WWII, not WWI), or an acronym declared in
     parentheses. The short side must be written in capitals; none is one of the long name's words.
   - containment (types other than PERSON and LOCATION): the short key is a contiguous token run of the
     long key that
       * contains the head of the long name (the last word, or the word before the first "of"/"for"/
         "de"...): "Legislature" -> "Philippine Legislature", "House of Commons" -> "House of Commons
         of Canada"; a run that only keeps modifiers names something else ("Microsoft" is not
         "Microsoft Mobile", "Congress" is not "Library of Congress");
       * leaves only name-like extra words (capitalised or connectors): "Apple" never reaches "apple
         pie";
       * leaves no number or roman numeral ("World Cup" is not "2014 World Cup", "Legends" not
         "Legends II");
       * ends where a phrase of the long name ends, at its head, before a preposition or at its end:
         "Center for European Policy" is not "Center for European Policy Studies", "Council of Europe"
         not "Council of Europe and the OSCE".
   - no rule takes half of a hyphenated word: "Pacific" is not "Asia-Pacific", "Jean" not
     "Jean-Claude Duvalier" (an Arabic article before a person's name is no half: "Kutobi" is "Omar
     Al-Kutobi").
   - org_short_form (ORGANIZATION): the leading words of a company name when every word left out only
     says what kind of company it is (Robotics, Analytics, Systems, Labs, Group, Holdings ...:
     `name_keys.COMPANY_DESCRIPTORS`): "Northwind" -> "Northwind Robotics", while "Apex" is not "Apex
     Mobile". Only with same-document evidence, like single-word heads.
     Locations are never extended by containment: a place's name extended either way is usually
     another place (Albany / Albany County, Germany / East Germany, New York / New York City).
   Types: the short side has the long side's type, except that one typed OTHER (the extractor could not
   tell) may join another type by an acronym or an org_short_form, and a PERSON by a surname or given name in
   the document that names the person ("Xi" beside "Xi Jinping", name-rules-12): "QDL" (OTHER) -> "Quantum Dynamics
   Lab" (ORGANIZATION), and an ORGANIZATION by a contained name with its head in the document that names it ("the
   Commission" beside "European Commission", name-rules-13). Across documents that needs an acronym the corpus
   declares ("Name (ABC)").
   Evidence, strongest first:
   - same document: in each document where the short id occurs with exactly one candidate entity,
     that document votes for it (a document with two candidates, e.g. two Smiths, votes for none).
     The winner needs strictly more votes than the runner-up and, except for acronyms, votes from at
     least half of the short id's documents (a short form mostly seen without the long one is an
     entity of its own: "Doctor Who" vs "Doctor Who Live").
   - across documents (only when the short id never co-occurs with any candidate): exactly one
     candidate entity in the whole corpus, by a specific rule: surnames and person short forms,
     multi-token contained names, acronyms of 3+ letters. Single-word heads of other types need a
     shared document. A lone surname ("Merkel", typed PERSON or untyped) joins the only
     person of that surname in the corpus (name-rules-6, `type_vote.lone_word_evidence`), unless the
     corpus also writes the word as a person's given name ("Jordan" of "Jordan Reyes"), types it as a
     place, organisation or other thing at least as often as a person ("Washington"), or has another
     full name ending in it, typed PERSON or untyped ("Bush" with "George Bush" and "Jeb Bush"). A lone
     given name likewise joins the only person of that given name (name-rules-8: "Marcus" in a chat ->
     "Marcus Webb"), unless the corpus also writes it as a surname, mostly as another thing, or has another
     full name starting with it. The
     short id may not occur in more than twice as many documents as its long form (except acronyms):
     "Berg" in 50 documents is not the "Anna Berg" of one.
   Short forms are resolved from the longest to the shortest, so "Obama" sees "Barack Obama" and
   "Barack Hussein Obama" as one candidate once they are linked. An entity joins as a short form at
   most once, so a short form never bridges two different long entities.
4. Canonical id: per cluster, a merge-override target first, then typed over OTHER, full names over
   short forms, most mentions, most tokens, smallest id. Independent of row order.
5. Overrides (from_id, to_id, action): "merge" forces the two ids together (to_id canonical); "split"
   forbids the two ids from ever ending in the same cluster, whatever path would join them (undoing
   a merge = a split; the next run restores separate entities). Ids absent from the mentions are
   ignored.

Candidate generation is sub-quadratic: long forms publish "handles" (their token runs, initials,
first+last keys) and short forms are found by equality joins on (document, handle) and on handle;
handles shared by more than `max_block` long entities are not used across documents (such a short form
is ambiguous anyway). `NameLinker.stats` reports the pairs examined.
"""

from __future__ import annotations

import time

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.linking.clusters import OTHER, Clusters, LinkerInput, linker_input, override_pairs, resolve_clusters
from kg_assets.core.linking.name_keys import GEO_ALIASES, long_form_handles, with_name_keys
from kg_assets.core.linking.short_forms import (MIN_PERSON_WORD_CHARS, RULE_METHOD, SCORES, by_group, rule_ok,
                                                same_document_pairs, short_form_evidence, short_nodes, type_ok,
                                                untyped_person_word)
from kg_assets.core.linking.type_vote import lone_word_evidence, resolved_types, untyped_person_names
from kg_assets.core.linking.variants import maker_qualified_variants, plural_variants, umlaut_spellings
from kg_assets.core.normalize import is_description_expr

COVERAGE = 0.5  # same-document votes must cover this share of the short id's documents
SPECIFICITY_RATIO = 2.0  # across documents: docs(short) <= ratio * docs(long)



def description_scopes(nodes: pl.DataFrame, node_docs: pl.DataFrame) -> pl.DataFrame:
    """(idx, scope): the document of each description ("people", "the sect"; `normalize.is_description_expr`),
    null for a name. Like its id, a description's key means something only inside its document: "girl"
    of one story is not "the girl" of another, so equal keys join descriptions of one document only."""
    described = nodes.filter(is_description_expr(pl.col("name"), pl.col("entity_type"))).select("idx")
    return described.join(node_docs, on="idx").group_by("idx").agg(pl.col("doc").min().alias("scope"))


class NameLinker:
    """Rule-based name linker (see the module docstring). `stats` describes the last `link` call."""

    name = "name_rules"
    # 2: company short names, untyped acronyms across types, letters-only acronyms
    # 3: untyped full names of confirmed persons; descriptions before a lone word, appositions, country-first orgs
    # 4: lower-case descriptions keep their per-document ids (equal keys join them inside a document only)
    # 5: one entity per name whatever type was guessed (`resolved_types`: types by the votes of documents)
    # 5 (also): an acronym that is one of the long name's own words is none ("US" is not "US Secretary")
    # 6: a lone surname across documents also when untyped, unless the corpus writes it as a given name, types it
    #    mostly as another thing, or has another person (typed or not) of that surname; no short form from half
    #    of a hyphenated word, a truncated phrase, a multi-word given name or a roman numeral's initial
    # 7: a concept written in lower case ("machine learning", CONCEPT or TECHNOLOGY) is a name, joined across documents;
    #    "America" is a country alias; an untyped full name whose surname stands alone as a PERSON in its document is
    #    a person's; a surname's two real types beside its full name are no distinction ("Kagame" place and person);
    #    a natural feature after a one-word place name folds ("Mediterranean Sea" = "Mediterranean")
    # 8: a place read as an organisation elsewhere is one entity (metonymy), so is a full name most documents read
    #    as a person's; a plural beside its singular; a name beside the same name after its maker's; a lone given
    #    name across documents, as a lone surname
    # 9: an acronym read as a place and an organisation is the organisation the corpus spells it out as ("at QDL")
    # 10: a type guessed from context alone ("contribute to Qubitline") is no vote for a name the corpus types
    #     surely elsewhere (`resolved_types`)
    # 11: a lone word of a person's name shorter than 4 characters joins the person its document names ("Kim")
    # 12: an untyped lone word of a person's name joins the person its document names ("Xi"), as across documents
    # 13: an untyped full name is the person of that name where its document types it a person surely in more
    # mentions; an untyped name of an organisation's head joins the organisation its document names ("the
    # Commission")
    # 15: a name with a German umlaut is the same name with the umlaut spelled out ("Zoe Mueller" = "Zoë Müller")
    version = "name-rules-15"

    # what `link` reads of the mentions (not their descriptions, offsets or extractor), counted: one row per distinct
    # value with its `mention_count` decides the same as every mention (`clusters.mention_weight`)
    mention_columns = ("entity_id", "name", "normalized_name", "entity_type", "document_id", "confidence")
    reads_mention_counts = True
    # in the pipeline it is given what it reads of those columns already made, in DuckDB (`LinkerInput`)
    reads_linker_input = True

    def __init__(self, max_block: int = 32, coverage: float = COVERAGE, specificity_ratio: float = SPECIFICITY_RATIO):
        self.max_block = max_block
        self.coverage = coverage
        self.specificity_ratio = specificity_ratio
        self.stats: dict[str, float | int] = {}

    def link(self, mentions: pl.DataFrame | LinkerInput, overrides: pl.DataFrame | None = None) -> pl.DataFrame:
        """Redirects for an ENTITY_MENTIONS frame (every mention, or counted), or for the `LinkerInput` the
        warehouse makes of them (`reads_linker_input`)."""
        t0 = time.perf_counter()
        given = mentions if isinstance(mentions, LinkerInput) else linker_input(mentions)
        stats: dict[str, float | int] = {"mentions": given.mentions}
        self.stats = stats
        if given.nodes.height == 0:
            return schemas.empty(schemas.ENTITY_ALIASES)
        nodes = with_name_keys(given.nodes)
        ids = nodes["entity_id"].to_list()
        n = len(ids)
        stats["entities"] = n
        index = {e: i for i, e in enumerate(ids)} if overrides is not None and overrides.height else {}
        merges, splits = override_pairs(overrides, index)
        uf = Clusters(n, splits)
        names = nodes["name"].to_list()
        # Documents as integers in the order of their ids: the rules' many joins, groups and sorts on `doc` hash
        # and compare 4-byte numbers, not 64-character ids, and every min or tie-break by document is the same.
        self._document_ids = given.document_ids
        node_doc_counts = given.node_doc_counts
        node_docs = node_doc_counts.select("idx", "doc")
        stats["entity_documents"] = node_docs.height

        # 1. overrides and name variants (equivalences)
        for a, b in merges:
            uf.union(a, b, "override", 1.0, f'override: merge "{names[a]}" into "{names[b]}"')
        readings = self._equivalences(nodes, node_docs, node_doc_counts, uf, names, stats)
        group = [uf.find(i) for i in range(n)]
        stats["seconds_keys"] = round(time.perf_counter() - t0, 3)

        # 2. short forms, each id with the type its documents read it as
        read = nodes.join(readings.select("idx", "reading"), on="idx", how="left").with_columns(
            pl.coalesce("reading", "entity_type").alias("entity_type")).drop("reading")
        barred, rivals = lone_word_evidence(nodes, read)
        attached = self._short_forms(read, node_docs, uf, group, names, stats, barred, rivals)

        # 3. canonical choice and resolved redirects
        merge_targets = {b for _, b in merges}
        rank = nodes.select(
            "idx",
            (~pl.col("idx").is_in(list(merge_targets))).alias("r0"),
            (pl.col("entity_type") == OTHER).alias("r1"),
            pl.Series("r2", [group[i] in attached for i in range(n)], dtype=pl.Boolean),
            (-pl.col("n_mentions")).alias("r3"),
            (-pl.col("n_tok")).alias("r4"),
        )
        out = resolve_clusters(ids, uf, rank)
        stats["redirects"] = out.height
        stats["blocked_by_split"] = uf.blocked
        stats["seconds"] = round(time.perf_counter() - t0, 3)
        return out

    def _document_name(self, doc: int | None) -> str | None:
        """The document id a rule's `doc` number stands for (numbered from 1 in id order), for evidence text."""
        return None if doc is None else self._document_ids[doc - 1]

    # -- name variants -------------------------------------------------------------------------------

    def _equivalences(self, nodes: pl.DataFrame, node_docs: pl.DataFrame, node_doc_counts: pl.DataFrame,
                      uf: Clusters, names: list[str], stats: dict) -> pl.DataFrame:
        keyed = nodes.filter(pl.col("key") != "").select("idx", "key", "raw_key", "entity_type", "first_cap", "is_acronym",
                                                          "tok")
        same = (
            keyed.join(description_scopes(nodes, node_docs), on="idx", how="left")
            .sort("idx").group_by("key", "entity_type", "scope").agg("idx", "raw_key")
            .filter(pl.col("idx").list.len() > 1).sort("key", "entity_type", "scope", nulls_last=True)
        )
        count = 0
        for key, _et, _scope, members, raw in same.iter_rows():
            a = members[0]
            for b, raw_b in zip(members[1:], raw[1:], strict=True):
                if raw_b != raw[0] and (raw_b in GEO_ALIASES or raw[0] in GEO_ALIASES):
                    count += uf.union(b, a, "geo_alias", 0.95, f'country alias: "{names[b]}" = "{names[a]}"')
                else:
                    count += uf.union(b, a, "name_variant", 0.95,
                                      f'same name after folding: "{names[b]}" = "{names[a]}" ({key})')
        # one entity per name whatever type an extractor guessed: ids of one key with one resolved reading
        readings = resolved_types(keyed, node_doc_counts)
        groups = (readings.join(keyed.select("idx", "entity_type"), on="idx")
                  .join(node_doc_counts.group_by("idx").agg(pl.col("n").sum()), on="idx")
                  .sort(pl.col("entity_type") != pl.col("reading"), -pl.col("n"), "idx")
                  .group_by("key", "reading", maintain_order=True).agg("idx", "entity_type")
                  .filter(pl.col("idx").list.len() > 1).sort("key", "reading"))
        for key, reading, members, types in groups.iter_rows():
            a = members[0]
            for b, t in zip(members[1:], types[1:], strict=True):
                count += uf.union(b, a, "type_vote", 0.85,
                                  f'same name "{names[b]}" ({t}) read as {reading} by its documents ({key})')
        # name-rules-8: a plural beside its singular, a name beside the same name after its maker's
        for idx, target in plural_variants(readings).iter_rows():
            count += uf.union(idx, target, "name_variant", 0.85,
                              f'plural: "{names[idx]}" is the plural of "{names[target]}"')
        for idx, target in umlaut_spellings(nodes, readings).iter_rows():
            count += uf.union(idx, target, "name_variant", 0.9,
                              f'spelling: "{names[idx]}" is "{names[target]}" with its umlauts spelled out')
        for idx, target in maker_qualified_variants(readings).iter_rows():
            count += uf.union(idx, target, "maker_name", 0.8,
                              f'"{names[idx]}" is "{names[target]}" after the name of its maker')
        for idx, target, doc in untyped_person_names(keyed, node_docs, node_doc_counts).iter_rows():
            where = f"same document {self._document_name(doc)}" if doc is not None else "across documents"
            count += uf.union(idx, target, "person_name", 0.9 if doc is not None else 0.75,
                              f'{where}: untyped "{names[idx]}" is the person "{names[target]}", '
                              f'whose surname alone names a person next to it')
        stats["links_name_variant"] = count
        return readings

    # -- short forms ---------------------------------------------------------------------------------

    def _short_forms(self, nodes, node_docs, uf: Clusters, group: list[int], names: list[str], stats: dict,
                     barred: pl.DataFrame, rivals: pl.DataFrame) -> set[int]:
        shorts = short_nodes(nodes)
        short_keys = shorts.filter(pl.col("key_chars") >= MIN_PERSON_WORD_CHARS).select(pl.col("skey").alias("h_key")).unique()
        short_acr = shorts.filter(pl.col("is_acronym")).select(pl.col("skey").alias("h_key")).unique()
        handles = long_form_handles(nodes, short_keys, short_acr)
        stats["handles"] = handles.height
        attached: set[int] = set()
        if handles.height == 0:
            stats["candidate_pairs"] = 0
            return attached
        handles = handles.join(nodes.select(pl.col("idx").alias("l"), pl.col("entity_type").alias("l_type"),
                                            pl.col("n_docs").alias("l_docs")), on="l")
        s = shorts.select(
            pl.col("idx").alias("s"), pl.col("skey").alias("h_key"), pl.col("entity_type").alias("s_type"),
            "n_tok", "key_chars", "is_acronym",
        )
        in_doc = same_document_pairs(s, handles, node_docs)
        glob, capped = self._across_document_pairs(s, handles, barred, rivals, nodes)
        ambiguous_short = s.join(capped, on="h_key", how="semi").select("s")
        stats["candidate_pairs_in_document"] = in_doc.height
        stats["candidate_pairs_global"] = glob.height
        stats["candidate_pairs"] = in_doc.height + glob.height
        stats["capped_handles"] = capped.height
        in_doc, glob, g_docs = by_group(in_doc, glob, ambiguous_short, group, node_docs)
        links = self._link_by_level(in_doc, glob, uf, g_docs, attached, names)
        for method, count in links.items():
            stats[f"links_{method}"] = count
        return attached

    def _across_document_pairs(self, s: pl.DataFrame, handles: pl.DataFrame, barred: pl.DataFrame,
                               rivals: pl.DataFrame, nodes: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(s, l, rule, n_tok, l_docs, rival) candidates joined on the handle alone, and the handles shared by more
        than `max_block` long entities, which are not used across documents. A lone word is a surname across
        documents only when the corpus never writes it as a given name nor mostly as another thing, and a given name
        only when it never writes it as a surname (`lone_word_evidence`); then also when untyped, and the untyped
        full names ending (starting) in it are rivals (rows with `rival`, which count as candidates and are never
        joined)."""
        block = handles.group_by("h_key").agg(pl.col("l").n_unique().alias("block"))
        capped = block.filter(pl.col("block") > self.max_block)
        glob_h = handles.filter(pl.col("global_ok")).join(capped, on="h_key", how="anti")
        lone_word = pl.col("rule").is_in(["surname", "first_name"])
        glob = (
            s.join(glob_h, on="h_key")
            # across types, only an acronym the corpus declares reaches another document
            .filter((pl.col("s") != pl.col("l")) & rule_ok()
                    & ((type_ok() & ((pl.col("s_type") == pl.col("l_type")) | (pl.col("rule") == "declared_acronym")))
                       # an untyped lone word is the surname (given name) of the only person of it
                       | untyped_person_word()))
            .join(barred.select(pl.col("idx").alias("s"), "rule"), on=["s", "rule"], how="anti")
            .select("s", "l", "rule", "n_tok", "l_docs", pl.lit(False).alias("rival"))
        )
        rival_rows = (
            glob.filter(lone_word).select("s", "rule", "n_tok").unique()
            .join(s.select("s", "h_key"), on="s")
            .join(rivals.rename({"idx": "l"}), on=["h_key", "rule"])
            .filter(pl.col("s") != pl.col("l"))
            .join(nodes.select(pl.col("idx").alias("l"), pl.col("n_docs").alias("l_docs")), on="l")
            .select("s", "l", "rule", "n_tok", "l_docs", pl.lit(True).alias("rival"))
        )
        return pl.concat([glob, rival_rows]), capped

    def _link_by_level(self, in_doc: pl.DataFrame, glob: pl.DataFrame, uf: Clusters, g_docs: pl.DataFrame,
                       attached: set[int], names: list[str]) -> dict[str, int]:
        """Join short forms to their long forms from the longest short form to the shortest, same-document
        evidence and across documents; links per method."""
        links = dict.fromkeys(SCORES, 0)
        levels = sorted(set(in_doc["n_tok"].to_list()) | set(glob["n_tok"].to_list()), reverse=True)
        for level in levels:
            decisions = []
            rows = in_doc.filter(pl.col("n_tok") == level)
            if rows.height:
                decisions += self._same_document(rows, uf, g_docs, attached)
            rows = glob.filter(pl.col("n_tok") == level)
            if rows.height:
                decisions += self._across_documents(rows, uf, g_docs, attached)
            for g, s_idx, l_idx, rule, doc, votes, n_docs in sorted(decisions, key=lambda d: (d[0], d[1], d[2])):
                if g in attached:
                    continue
                method = RULE_METHOD[rule]
                score = SCORES[method][0 if doc is not None else 1]
                evidence = short_form_evidence(names, s_idx, l_idx, rule, self._document_name(doc), votes, n_docs)
                if uf.union(s_idx, l_idx, method, score, evidence):
                    attached.add(g)
                    links[method] += 1
        return links

    @staticmethod
    def _roots(rows: pl.DataFrame, uf: Clusters) -> pl.DataFrame:
        ls = rows["l"].unique().to_list()
        gs = rows["g"].unique().to_list()
        lr = pl.DataFrame({"l": pl.Series(ls, dtype=pl.Int64), "root": pl.Series([uf.find(x) for x in ls], dtype=pl.Int64)})
        gr = pl.DataFrame({"g": pl.Series(gs, dtype=pl.Int64), "g_root": pl.Series([uf.find(x) for x in gs], dtype=pl.Int64)})
        return rows.join(lr, on="l").join(gr, on="g").filter(pl.col("root") != pl.col("g_root"))

    def _same_document(self, rows: pl.DataFrame, uf: Clusters, g_docs: pl.DataFrame, attached: set[int]) -> list:
        rows = self._roots(rows.filter(~pl.col("g").is_in(list(attached))), uf)
        if rows.height == 0:
            return []
        per_doc = rows.group_by("g", "doc").agg(pl.col("root").n_unique().alias("n_roots"))
        unique_docs = per_doc.filter(pl.col("n_roots") == 1).select("g", "doc")
        voted = rows.join(unique_docs, on=["g", "doc"], how="semi")
        votes = (
            voted.group_by("g", "root").agg(
                pl.col("doc").n_unique().alias("votes"),
                pl.col("rank").min().alias("best_rank"),
                pl.struct("rank", "doc", "s", "l", "rule").sort_by("rank", "doc", "s", "l").first().alias("rep"),
            )
            .sort(["g", "votes", "best_rank", "root"], descending=[False, True, False, False])
        )
        ranked = votes.group_by("g", maintain_order=True).agg(
            pl.col("votes").first().alias("top"),
            pl.col("votes").get(1, null_on_oob=True).fill_null(0).alias("second"),
            pl.col("rep").first(),
        ).join(g_docs, on="g")
        acronym = pl.col("rep").struct.field("rule").is_in(["acronym", "declared_acronym"])
        ok = ranked.filter(
            (pl.col("top") > pl.col("second"))
            & (acronym | (pl.col("top") >= self.coverage * pl.col("g_docs")))
        ).unnest("rep")
        return list(ok.select("g", "s", "l", "rule", "doc", "top", "g_docs").iter_rows())

    def _across_documents(self, rows: pl.DataFrame, uf: Clusters, g_docs: pl.DataFrame, attached: set[int]) -> list:
        rows = self._roots(rows.filter(~pl.col("g").is_in(list(attached))), uf)
        if rows.height == 0:
            return []
        joinable = ~pl.col("rival")
        per_g = (
            rows.sort("rank", "s", "l")
            .group_by("g").agg(
                pl.col("root").n_unique().alias("n_roots"),
                pl.col("l_docs").filter(joinable).max().alias("l_docs"),
                pl.col("s").filter(joinable).first(), pl.col("l").filter(joinable).first(),
                pl.col("rule").filter(joinable).first(),
            )
            .filter((pl.col("n_roots") == 1) & pl.col("l").is_not_null())
            .join(g_docs, on="g")
        )
        acronym = pl.col("rule").is_in(["acronym", "declared_acronym"])
        ok = per_g.filter(acronym | (pl.col("g_docs") <= self.specificity_ratio * pl.col("l_docs")))
        return [(g, s, l, rule, None, 0, n) for g, s, l, rule, n in ok.select("g", "s", "l", "rule", "g_docs").iter_rows()]

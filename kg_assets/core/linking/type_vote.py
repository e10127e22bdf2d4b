"""The type vote (name-rules-5): one entity per name whatever type an extractor guessed.

The rule lives here and nowhere else; `NameLinker` unions the ids it reads as one (method `type_vote`).
`lone_word_evidence` (name-rules-6, 8) says which lone words the corpus lets read as a surname or a given name across
documents.
"""

from __future__ import annotations

import polars as pl

from kg_assets.core.linking.clusters import OTHER
from kg_assets.core.title_words import TITLE_HEADS, TITLE_MODIFIERS
from kg_assets.core.linking.name_keys import acronym_forms

# A name whose first word is an ordinal or a number names one of a series ("Twelfth Doctor"): no surname evidence.
ORDINAL_FIRST = (r"(?i)^(\S*\d\S*|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
                 r"|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|new|next|last|late|former)\s")


# Words that make a capitalised phrase a title, an office or a sentence rather than a person's name ("Doctor Who",
# "Prime Minister", "Game of Thrones"): function words and the words of titles (name-rules-14).
NOT_IN_A_PERSONS_NAME = frozenset("""
the a an of and or for to in on at by with from who whom whose what which where when why how this that these those
is are was were be been not no my your his her its our their i you he she it we they me him us them
doctor dr mr mrs ms sir lord lady king queen prince princess president minister chancellor general captain
""".split()) | TITLE_HEADS | TITLE_MODIFIERS


def _capitalised_name() -> pl.Expr:
    return pl.col("tok").list.eval(pl.element().str.contains(r"^\p{Lu}")).list.all()


def _plain_person_name() -> pl.Expr:
    """A full name of capitalised words that starts with a given name and has no function word nor title word
    ("Jane Roe", not "Doctor Who" nor "Prime Minister Office")."""
    return (_full_name_shaped() & _capitalised_name()
            & ~pl.col("tok").list.eval(pl.element().str.to_lowercase().is_in(list(NOT_IN_A_PERSONS_NAME))).list.any())


def _full_name_shaped() -> pl.Expr:
    """A key of two words or more that starts with a given name (a capital, then lower case), not a number, an
    ordinal or an acronym ("Twelfth Doctor", "W.H.O. Doctor" have no surname)."""
    return (pl.col("key").str.contains(" ") & ~pl.col("key").str.contains(ORDINAL_FIRST)
            & pl.col("tok").list.first().str.contains(r"^\p{Lu}\p{Ll}"))


def untyped_person_names(keyed: pl.DataFrame, node_docs: pl.DataFrame,
                         node_doc_counts: pl.DataFrame | None = None) -> pl.DataFrame:
    """(idx, target, doc) for each untyped (OTHER) full name that is the name of a PERSON entity.

    The heuristic types a person's name OTHER in many sentences, so "Marcus Webb" (OTHER) must join
    "Marcus Webb" (PERSON) even in the documents that have both, and even when one stray mention also
    types the name a place. A two-type name inside one document is otherwise a distinction ("Doctor Who"
    the show next to "Doctor Who" the character), so the PERSON reading needs the corpus's own evidence
    that the name is a person's: its surname written alone and typed PERSON in a document of the PERSON
    entity ("Webb said"), or written alone next to the untyped name itself, which no title of a show or
    product has. `doc` is the first shared document of
    the two ids (same-document evidence), or null when they never meet (evidence across documents)."""
    people = keyed.filter((pl.col("entity_type") == "PERSON") & ~pl.col("is_acronym"))
    full = people.filter(pl.col("key").str.contains(" ")).with_columns(
        pl.col("key").str.extract(r"(\S+)$").alias("surname"))
    surname_docs = (people.select(pl.col("key").alias("surname"), "idx").join(node_docs, on="idx")
                    .select("surname", "doc").unique())
    untyped = keyed.filter((pl.col("entity_type") == OTHER) & pl.col("first_cap") & ~pl.col("is_acronym")
                           & pl.col("key").str.contains(" "))
    # ... or the surname written alone, whatever its type, next to the untyped full name itself ("Reyes"
    # beside "Jordan Reyes"), when the full name starts with a given name (`resolved_types`)
    lone = (keyed.filter(pl.col("first_cap") & ~pl.col("is_acronym") & ~pl.col("key").str.contains(" "))
            .select(pl.col("key").alias("surname"), "idx").join(node_docs, on="idx").select("surname", "doc").unique())
    named = (full.filter(_full_name_shaped()).select("key", "surname").unique()
             .join(untyped.select("idx", "key"), on="key").join(node_docs, on="idx")
             .join(lone, on=["surname", "doc"], how="semi").select("key").unique())
    # ... or the corpus itself reads the name as a person's in at least two documents and in no fewer than it
    # leaves it untyped ("Lena Ortiz", PERSON in six documents, untyped in four); "Doctor Who", a person in one
    # document and untyped in two, stays the show
    def docs_of(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.select("key", "idx").join(node_docs, on="idx").group_by("key").agg(
            pl.col("doc").n_unique().alias("docs"))

    read_as_person = (docs_of(full.filter(_full_name_shaped()))
                      .join(docs_of(untyped).rename({"docs": "untyped_docs"}), on="key")
                      .filter((pl.col("docs") >= 2) & (pl.col("docs") >= pl.col("untyped_docs"))).select("key"))
    # ... or a document types the name a person's surely (not by a guess from context) in more of its mentions
    # than it leaves it untyped: "the journalist Jane Roe" in one passage, a plain "Jane Roe" in another
    # (name-rules-13)
    outnumbered = keyed.clear().select("key")
    if node_doc_counts is not None:
        sure = (full.filter(_full_name_shaped()).select("key", "idx").join(node_doc_counts, on="idx")
                .filter(~pl.col("weak")).group_by("key", "doc").agg(pl.col("n").sum().alias("person_n")))
        loose = (untyped.select("key", "idx").join(node_doc_counts, on="idx")
                 .group_by("key", "doc").agg(pl.col("n").sum().alias("untyped_n")))
        outnumbered = (sure.join(loose, on=["key", "doc"]).filter(pl.col("person_n") > pl.col("untyped_n"))
                       .select("key").unique())
        # ... or a plain person's name (no function word, no title word) that some document types a person's
        # surely: "President Jane Roe" in one passage, "Jane Roe's company" in another (name-rules-14)
        plain = (full.filter(_plain_person_name()).select("key", "idx").join(node_doc_counts, on="idx")
                 .filter(~pl.col("weak")).select("key").unique())
        outnumbered = pl.concat([outnumbered, plain]).unique()
    confirmed = pl.concat([
        full.join(node_docs, on="idx").join(surname_docs, on=["surname", "doc"], how="semi").select("key"),
        named,
        read_as_person,
        outnumbered,
    ]).unique().join(full.select("key", "idx"), on="key").group_by("key").agg(pl.col("idx").min().alias("target"))
    other = untyped.select("idx", "key").join(confirmed, on="key")
    shared = (other.join(node_docs, on="idx")
              .join(node_docs.rename({"idx": "target"}), on=["target", "doc"], how="semi")
              .group_by("idx").agg(pl.col("doc").min()))
    return (other.join(shared, on="idx", how="left").select("idx", "target", "doc")
            .sort("idx"))


def resolved_types(keyed: pl.DataFrame, node_doc_counts: pl.DataFrame) -> pl.DataFrame:
    """(idx, key, reading): the type each id written as a name is read as, by the votes of its documents.

    An extractor's type is a guess per mention, so the type of a name is decided from the evidence, in
    one place: in each document, a name is read as the real type (not OTHER) most of its mentions there
    have (ties: alphabetical), and as PERSON when the document names a person whose surname it is ("Kagame"
    next to "Paul Kagame"), or when it is an untyped full name whose surname the document types PERSON
    alone ("Warren Hill" beside "Hill said"; name-rules-7). An id is read as the reading most of its
    documents give (ties: its own type, then alphabetical); an id none of whose documents gives a real
    reading takes the reading most documents give that name across the corpus, when one reading leads
    (else it stays OTHER). Ids of one name with one reading are one entity; two readings of one name are
    kept apart (Jordan the place in some documents, Jordan the person next to "Michael Jordan" in others),
    and so are two real types inside one document, unless the document names the person whose surname it
    is (name-rules-7)."""
    names = keyed.filter((pl.col("first_cap") | pl.col("is_acronym")) & (pl.col("key") != "")).select(
        "idx", "key", "entity_type")
    # The votes are counted over every (id, document) row, two million at 100,000 documents: there `key` is a
    # number for the name (`codes`), which joins and groups hash and compare faster than its text (this function
    # 4.0 -> 2.0-2.2 s there, the same readings); `names` keeps the text, `coded` the number.
    codes = names.select("key").unique().with_columns(pl.col("key").rank("dense").cast(pl.UInt32).alias("code"))
    coded = names.join(codes, on="key").select("idx", pl.col("code").alias("key"), "entity_type")
    nd = _without_weak_guesses(coded.join(node_doc_counts, on="idx"))
    # each name's reading in a document: the real type most of its mentions there have (ties: alphabetical)
    votes = (nd.filter(pl.col("entity_type") != OTHER).group_by("key", "doc", "entity_type").agg(pl.col("n").sum())
             .filter(pl.col("n") == pl.col("n").max().over("key", "doc"))
             .group_by("key", "doc").agg(pl.col("entity_type").min().alias("voted")))
    shaped = _full_name_shaped()

    def coded_keys(frame: pl.DataFrame) -> pl.DataFrame:
        """(key, doc) rows of names with their code for `key`; a name no id of `names` has votes for none."""
        return frame.join(codes, on="key").select(pl.col("code").alias("key"), "doc")

    surnames = coded_keys(keyed.filter((pl.col("entity_type") == "PERSON") & shaped)
                          .select("idx", pl.col("key").str.extract(r"(\S+)$").alias("key"))
                          .join(node_doc_counts, on="idx").select("key", "doc").unique())
    # ... and an untyped full name is a person's where its surname stands alone typed PERSON beside it ("Warren
    # Hill" untyped, "Hill said" typed PERSON in the same story); a typed name keeps its type ("Champions League")
    lone_people = (keyed.filter((pl.col("entity_type") == "PERSON") & ~pl.col("key").str.contains(" "))
                   .select("idx", pl.col("key").alias("surname")).join(node_doc_counts, on="idx")
                   .select("surname", "doc").unique())
    # (capitalised words only: "Copies of Tolstoy" is no name of a person)
    capitalised = _capitalised_name()
    full_names = coded_keys(keyed.filter(shaped & capitalised & (pl.col("entity_type") == OTHER))
                            .select("idx", "key", pl.col("key").str.extract(r"(\S+)$").alias("surname"))
                            .join(node_doc_counts, on="idx").join(lone_people, on=["surname", "doc"], how="semi")
                            .select("key", "doc").unique())
    people = pl.concat([surnames, full_names]).unique().with_columns(pl.lit(True).alias("person"))
    doc_reading = (nd.select("key", "doc").unique().join(votes, on=["key", "doc"], how="left")
                   .join(people, on=["key", "doc"], how="left")
                   .select("key", "doc", pl.when(pl.col("person")).then(pl.lit("PERSON"))
                           .otherwise(pl.col("voted")).alias("reading"), pl.col("person").fill_null(False))
                   .filter(pl.col("reading").is_not_null()))
    # an untyped name is a person's only by a surname's evidence (or `untyped_person_names`): "Doctor Who"
    # the show stays apart from "Doctor Who" the character
    untyped_person = (pl.col("entity_type") == OTHER) & (pl.col("reading") == "PERSON")
    per_id = (nd.join(doc_reading, on=["key", "doc"]).filter(~untyped_person | pl.col("person"))
              .group_by("idx", "reading")
              .agg(pl.len().alias("docs"), pl.col("entity_type").first())
              .with_columns((pl.col("entity_type") == pl.col("reading")).alias("own"))
              .sort(["idx", "docs", "own", "reading"], descending=[False, True, True, False])
              .group_by("idx", maintain_order=True).agg(pl.col("reading").first()))
    by_key = (doc_reading.group_by("key", "reading").agg(pl.len().alias("docs"))
              .sort(["key", "docs", "reading"], descending=[False, True, False])
              .group_by("key", maintain_order=True).agg(
                  pl.col("reading").first().alias("key_reading"), pl.col("docs").first().alias("top"),
                  pl.col("docs").get(1, null_on_oob=True).fill_null(0).alias("second"))
              .filter(pl.col("top") > pl.col("second")).select("key", "key_reading"))
    by_key = by_key.join(coded, on="key").filter(
        ~((pl.col("entity_type") == OTHER) & (pl.col("key_reading") == "PERSON"))).select("idx", "key_reading")
    out = (coded.join(per_id, on="idx", how="left").join(by_key, on="idx", how="left")
           .select("idx", "key", "entity_type", pl.coalesce("reading", "key_reading", pl.lit(OTHER)).alias("reading")))
    # two real types of one name inside one document are a distinction ("Germany" the government and the
    # country); across documents a type disagreement is the extractor's noise, and so it is beside a person
    # whose surname the name is ("Kagame" typed a place once beside "Paul Kagame")
    surname_docs = doc_reading.filter(pl.col("person")).select("key", "doc")
    typed_docs = (nd.filter(pl.col("entity_type") != OTHER).join(surname_docs, on=["key", "doc"], how="anti")
                  .select("key", pl.col("entity_type").alias("reading"), "doc"))
    clash = (out.filter((pl.col("entity_type") != OTHER) & (pl.col("entity_type") != pl.col("reading")))
             .join(nd.filter(pl.col("entity_type") != OTHER).select("idx", "doc"), on="idx")  # where it is sure
             .join(typed_docs, on=["key", "reading", "doc"], how="semi")
             .select("idx").unique())
    out = (out.with_columns(pl.when(pl.col("idx").is_in(clash["idx"].implode())).then(pl.col("entity_type"))
                            .otherwise(pl.col("reading")).alias("reading"))
           .drop("key").join(names.select("idx", "key"), on="idx", maintain_order="left"))  # the text again
    out = _acronym_of_an_organisation(_one_place_or_organisation(out, node_doc_counts), keyed)
    return _people_by_full_name(out, keyed, node_doc_counts).select("idx", "key", "reading").sort("idx")


def _without_weak_guesses(nd: pl.DataFrame) -> pl.DataFrame:
    """`nd` with the votes of a guess from context alone turned into abstentions (read as OTHER) for a name that
    some document types surely: three documents that write "contribute to Qubitline" or "models in Qubitline" do
    not make a place of what nine others call "Qubitline 1.4" (name-rules-10). A name typed only by such guesses
    keeps them ("in Bonn" is all a story may say of Bonn)."""
    if "weak" not in nd.columns:
        return nd
    surely_typed = nd.filter((pl.col("entity_type") != OTHER) & ~pl.col("weak")).select("key").unique()
    abstains = pl.col("weak") & pl.col("key").is_in(surely_typed["key"].implode())
    return nd.with_columns(pl.when(abstains).then(pl.lit(OTHER)).otherwise(pl.col("entity_type")).alias("entity_type"))


# Readings an institution named after a place takes: "ETH Zurich" is typed a place in one document and an
# organisation in another, and is one thing.
METONYMY = ("LOCATION", "ORGANIZATION")


def _one_place_or_organisation(out: pl.DataFrame, node_doc_counts: pl.DataFrame) -> pl.DataFrame:
    """A name of two words or more read as a place by some ids and as an organisation by others (and as nothing
    else) is one entity, read as the reading most of its mentions have (ties: the place). A one-word place
    and an organisation of that name are usually two things, a city and its club ("Bremen" and Werder Bremen,
    "Spain" and its national team: every such merge on the DWIE dev articles was wrong), and so are a person
    and a place (Jordan the country, Jordan of "Jordan Reyes")."""
    mentions = node_doc_counts.group_by("idx").agg(pl.col("n").sum())
    readings = (out.filter((pl.col("reading") != OTHER) & pl.col("key").str.contains(" ")).join(mentions, on="idx")
                .group_by("key", "reading").agg(pl.col("n").sum()))
    both = (readings.group_by("key").agg(pl.col("reading").is_in(METONYMY).all().alias("metonymy"),
                                         pl.len().alias("readings"))
            .filter(pl.col("metonymy") & (pl.col("readings") == 2)).select("key"))
    winner = (readings.join(both, on="key").sort(["key", "n", "reading"], descending=[False, True, False])
              .group_by("key", maintain_order=True).agg(pl.col("reading").first().alias("winner")))
    return (out.join(winner, on="key", how="left")
            .with_columns(pl.when(pl.col("winner").is_not_null() & pl.col("reading").is_in(METONYMY))
                          .then(pl.col("winner")).otherwise(pl.col("reading")).alias("reading")).drop("winner"))


def _acronym_of_an_organisation(out: pl.DataFrame, keyed: pl.DataFrame) -> pl.DataFrame:
    """An acronym of three letters or more read as a place by some ids and as an organisation by others is the
    organisation when the corpus spells out an organisation of those initials and no place: "at QDL" reads as a
    place, "Quantum Dynamics Lab" says what QDL is (name-rules-9). A place that goes by its initials spells out a
    place ("UAE", "United Arab Emirates") and keeps both readings, as a one-word place and its club do."""
    acronyms = (out.join(keyed.filter(pl.col("is_acronym") & (pl.col("key").str.len_chars() >= 3)).select("idx"),
                         on="idx", how="semi")
                .filter(pl.col("reading").is_in(METONYMY)).group_by("key")
                .agg(pl.col("reading").n_unique().alias("readings")).filter(pl.col("readings") == 2)
                .select("key", pl.col("key").str.to_uppercase().alias("h_key")))
    if acronyms.height == 0:
        return out
    spelled_out = keyed.join(out.select("idx", "reading"), on="idx").filter(pl.col("reading").is_in(METONYMY))
    organisations = (acronym_forms(spelled_out.select("idx", "tok")).join(acronyms, on="h_key", how="semi")
                     .join(spelled_out.select("idx", "reading"), on="idx").group_by("h_key")
                     .agg((pl.col("reading") == "ORGANIZATION").all().alias("only_organisations"))
                     .filter("only_organisations").join(acronyms, on="h_key").select("key"))
    return out.with_columns(pl.when(pl.col("key").is_in(organisations["key"].implode())
                                    & pl.col("reading").is_in(METONYMY))
                            .then(pl.lit("ORGANIZATION")).otherwise(pl.col("reading")).alias("reading"))


def _given_name_shaped() -> pl.Expr:
    """A full name that starts with a given name: two words or more, the first a capital then lower case, no
    ordinal or number first ("Twelfth Doctor")."""
    return ((pl.col("n_tok") >= 2) & pl.col("tok").list.first().str.contains(r"^\p{Lu}\p{Ll}").fill_null(False)
            & ~pl.col("key").str.contains(ORDINAL_FIRST))


def lone_word_evidence(nodes: pl.DataFrame, read: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """What the corpus says about a lone word read as a person's surname or given name in documents that do not
    name the person (name-rules-6, name-rules-8). `nodes`: the ids with their extracted types; `read`: the same
    ids with the type their documents read them as (`resolved_types`).

    Returns `barred` (idx, rule): lone words that are no surname across documents, because the corpus also writes
    them as a person's given name ("Jordan" of "Jordan Reyes" next to "Michael Jordan"), and no given name across
    documents, because it also writes them as a person's surname; either way not when it types them as a place,
    an organisation or another thing at least as often as a person ("Washington"). And `rivals` (idx, h_key,
    rule): untyped full names starting with a given name, by their last word (surname) and by their first
    (first_name), which make a lone word ambiguous as much as a typed person does ("Bush" with "George Bush" and
    an untyped "Jeb Bush")."""
    lone = nodes.filter(pl.col("n_tok") == 1).select("idx", pl.col("up").list.first().alias("word"), "entity_type",
                                                     "n_mentions")
    people = read.filter((pl.col("entity_type") == "PERSON") & _given_name_shaped())
    given = people.select(pl.col("up").list.first().alias("word")).unique()
    surnames = people.select(pl.col("up").list.last().alias("word")).unique()
    typed = (lone.group_by("word").agg(
        pl.col("n_mentions").filter(pl.col("entity_type") == "PERSON").sum().alias("person"),
        pl.col("n_mentions").filter(~pl.col("entity_type").is_in(["PERSON", OTHER])).sum().alias("thing"))
        .filter((pl.col("thing") > 0) & (pl.col("thing") >= pl.col("person"))).select("word"))
    barred = pl.concat([
        lone.join(pl.concat([given, typed]).unique(), on="word", how="semi").select("idx", pl.lit("surname").alias("rule")),
        lone.join(pl.concat([surnames, typed]).unique(), on="word", how="semi")
        .select("idx", pl.lit("first_name").alias("rule")),
    ])
    untyped = read.filter((pl.col("entity_type") == OTHER) & _given_name_shaped())
    rivals = pl.concat([
        untyped.select("idx", pl.col("up").list.last().alias("h_key"), pl.lit("surname").alias("rule")),
        untyped.select("idx", pl.col("up").list.first().alias("h_key"), pl.lit("first_name").alias("rule")),
    ])
    return barred, rivals


def _people_by_full_name(out: pl.DataFrame, keyed: pl.DataFrame, node_doc_counts: pl.DataFrame) -> pl.DataFrame:
    """A full name that starts with a given name and that two or more documents type a person's, more than
    read it as anything else, is that person's in every document: "from Marcus Webb at Northwind", typed a
    place once, is no place of that name. A one-word name stays apart (Jordan the country, the person)."""
    shaped = keyed.filter(_full_name_shaped()).select("key").unique()
    person = pl.col("entity_type") == "PERSON"  # typed a person by the extractor, not only read as one
    docs = (out.filter(pl.col("reading") != OTHER).join(shaped, on="key", how="semi")
            .join(node_doc_counts, on="idx").group_by("key")
            .agg(pl.col("doc").filter(person).n_unique().alias("person"),
                 pl.col("doc").filter(pl.col("reading") != "PERSON").n_unique().alias("other")))
    people = docs.filter((pl.col("person") >= 2) & (pl.col("person") > pl.col("other")) & (pl.col("other") > 0))
    return out.with_columns(pl.when(pl.col("key").is_in(people["key"].implode()) & (pl.col("reading") != OTHER))
                            .then(pl.lit("PERSON")).otherwise(pl.col("reading")).alias("reading"))

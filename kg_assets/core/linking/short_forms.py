"""The short-form rules' parts, as `NameLinker` applies them: each rule's method, label, rank and scores, which pairs
a rule and the types allow (in a document or across documents), the pairs found in one document, the best candidate
per group, and the evidence text of a link. The rules themselves are described in `name_linker`."""

from __future__ import annotations

import polars as pl

from kg_assets.core.linking.clusters import OTHER
from kg_assets.core.linking.name_keys import MAX_TOKENS, MIN_SHORT_CHARS

# method -> (score with same-document evidence, score across documents)
SCORES = {
    "acronym": (0.9, 0.75),
    "person_short_form": (0.9, 0.75),
    "containment": (0.85, 0.7),
    "org_short_form": (0.85, 0.7),
}
RULE_METHOD = {"acronym": "acronym", "declared_acronym": "acronym", "surname": "person_short_form",
               "person_short_form": "person_short_form", "first_name": "person_short_form",
               "containment": "containment", "org_short_form": "org_short_form"}
RULE_LABEL = {"acronym": "acronym", "declared_acronym": "declared acronym", "surname": "surname",
              "person_short_form": "short form", "first_name": "given name", "containment": "contained name",
              "org_short_form": "short name"}
RULE_RANK = {"declared_acronym": 0, "acronym": 1, "person_short_form": 2, "surname": 3, "containment": 4,
             "org_short_form": 5, "first_name": 6}
# A lone word of a person's name may be this short in the document that names the person ("Xi", "Kim", "Zoë").
MIN_PERSON_WORD_CHARS = 2
# Rules by which a short form typed OTHER (untyped) may join a long form of another type.
UNTYPED_RULES = ["acronym", "declared_acronym", "org_short_form"]


def short_nodes(nodes: pl.DataFrame) -> pl.DataFrame:
    """The ids that may be a short form: written as a name (or an acronym), with `skey` their token run (geo
    aliases are already handled by equivalence)."""
    return nodes.filter(
        (pl.col("n_tok") >= 1) & (pl.col("n_tok") < MAX_TOKENS) & (pl.col("key") != "")
        & (pl.col("first_cap") | pl.col("is_acronym"))
    ).with_columns(pl.col("up").list.join(" ").alias("skey"))


def rule_ok(in_document: bool = False) -> pl.Expr:
    """An acronym rule needs a short side written in capitals; every other rule 4 characters or more (the seed's
    minimum), except a lone word of a person's name in the document that names the person: "Xi" beside "Xi
    Jinping", "Zoë" beside "Zoë Müller" (`MIN_PERSON_WORD_CHARS`)."""
    person_word = pl.col("rule").is_in(["surname", "first_name"]) & ~pl.col("is_acronym")
    return (
        pl.when(pl.col("rule").is_in(["acronym", "declared_acronym"])).then(pl.col("is_acronym"))
        .when(person_word & in_document).then(pl.col("key_chars") >= MIN_PERSON_WORD_CHARS)
        .otherwise(pl.col("key_chars") >= MIN_SHORT_CHARS)
    )


def untyped_person_word() -> pl.Expr:
    """An untyped lone word (OTHER) as the surname or given name of a PERSON."""
    return ((pl.col("s_type") == OTHER) & (pl.col("l_type") == "PERSON")
            & pl.col("rule").is_in(["surname", "first_name"]))


def untyped_org_head() -> pl.Expr:
    """An untyped name contained in an ORGANIZATION's name with its head ("the Commission" of "European Commission",
    "the University" of "University of Zurich")."""
    return (pl.col("s_type") == OTHER) & (pl.col("l_type") == "ORGANIZATION") & (pl.col("rule") == "containment")


def type_ok(in_document: bool = False) -> pl.Expr:
    """The short side has the long side's type, or is untyped (OTHER) and joins by an untyped rule; in the document
    that names a person, an untyped lone word of the name also joins the person (as it does across documents), and
    in the document that names an organisation, an untyped name of its head joins it (name-rules-13)."""
    return ((pl.col("s_type") == pl.col("l_type")) | ((pl.col("s_type") == OTHER) & pl.col("rule").is_in(UNTYPED_RULES))
            | ((untyped_person_word() | untyped_org_head()) & in_document))


def same_document_pairs(s: pl.DataFrame, handles: pl.DataFrame, node_docs: pl.DataFrame) -> pl.DataFrame:
    """(s, l, doc, rule, n_tok, global_ok) candidates joined on (document, handle)."""
    hd = handles.join(node_docs.rename({"idx": "l"}), on="l")
    sd = s.join(node_docs.rename({"idx": "s"}), on="s")
    return (
        sd.join(hd, on=["doc", "h_key"])
        .filter((pl.col("s") != pl.col("l")) & rule_ok(in_document=True) & type_ok(in_document=True))
        .select("s", "l", "doc", "rule", "n_tok", "global_ok")
    )


def by_group(in_doc: pl.DataFrame, glob: pl.DataFrame, ambiguous_short: pl.DataFrame, group: list[int],
              node_docs: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The candidates with the group `g` of their short id and the rank of their rule, and each group's
    number of documents. Groups with any same-document candidate, or an ambiguous short id, never use the
    across-documents path."""
    grp = pl.DataFrame({"s": pl.Series(range(len(group)), dtype=pl.Int64), "g": pl.Series(group, dtype=pl.Int64)})
    in_doc = in_doc.join(grp, on="s")
    glob = glob.join(grp, on="s")
    doc_groups = in_doc.select("g").unique()
    glob = glob.join(doc_groups, on="g", how="anti").join(
        ambiguous_short.join(grp, on="s").select("g").unique(), on="g", how="anti")
    g_docs = node_docs.join(grp.rename({"s": "idx"}), on="idx").group_by("g").agg(
        pl.col("doc").n_unique().alias("g_docs"))
    rank = pl.col("rule").replace_strict(RULE_RANK, return_dtype=pl.Int64)
    return in_doc.with_columns(rank.alias("rank")), glob.with_columns(rank.alias("rank")), g_docs


def short_form_evidence(names: list[str], s_idx: int, l_idx: int, rule: str, doc: str | None, votes: int,
                         n_docs: int) -> str:
    what = RULE_LABEL[rule]
    if doc is not None:
        return (f'same document {doc}: "{names[s_idx]}" is the {what} of "{names[l_idx]}" '
                f"({votes} of {n_docs} documents agree)")
    return f'"{names[s_idx]}" is the {what} of "{names[l_idx]}", the only candidate in any document'



"""Whole-graph scores (`kg eval graph`), per shared/eval/README.md: the nodes of a built graph against gold
entities that are linked across documents.

A node is a current row of kg.entities; its surface names are its name and aliases under `surface`
(case-folded, whitespace collapsed, surrounding quotes and punctuation stripped). A gold entity is a
`gold_cluster` of the mentions; a node reaches a gold entity when one of its surface names equals the
surface of one of that entity's mention texts.

- node_precision: share of nodes that reach some gold entity;
- cluster_recall: share of gold entities reached by at least one node (`_weighted`: each entity counted by
  its number of mentions);
- fragmentation: mean number of nodes reaching each reached gold entity (`_weighted`: as above);
- split_share: share of reached gold entities reached by more than one node;
- type_split_share: share of reached gold entities whose nodes carry more than one entity type.

Every score is a ratio of two integer counts (a denominator of 0 counts as 1), rounded to 4 places, so the
numbers equal those of the reference scorer shared/eval/graphscore.py on the same warehouse. Everything here
is a pure function of Polars frames; the command (kg_assets/commands/eval_graph.py) reads them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator

import polars as pl

# What `surface` strips from both ends, besides whitespace (the reference scorer's set).
STRIPPED = " \t\n\"'“”‘’.,;:()"
_SPACES = re.compile(r"\s+")
_ROUND = 4


def surface(name: str) -> str:
    """A name as the rule compares it: str.casefold (not lowercasing: "Straße" is "strasse"), runs of
    whitespace as one space, surrounding quotes and punctuation stripped."""
    return _SPACES.sub(" ", name.casefold()).strip(STRIPPED)


def _surfaces(column: str) -> pl.Expr:
    # Python's casefold and \s, element by element: Polars' lowercasing and regex classes differ on a few
    # characters, and the names of one graph are few enough.
    return pl.col(column).map_elements(surface, return_dtype=pl.String, skip_nulls=True)


def gold_surfaces(mentions: pl.DataFrame) -> pl.DataFrame:
    """(surface, gold_cluster), each pair once, from mention rows with `text` and `gold_cluster`."""
    return (mentions.select(_surfaces("text").alias("surface"), pl.col("gold_cluster").cast(pl.String))
            .unique())


def cluster_sizes(mentions: pl.DataFrame) -> pl.DataFrame:
    """(gold_cluster, mentions): every gold entity and its number of mentions."""
    return mentions.group_by(pl.col("gold_cluster").cast(pl.String)).agg(pl.len().cast(pl.Int64).alias("mentions"))


def node_surfaces(entities: pl.DataFrame) -> pl.DataFrame:
    """(row, entity_id, surface): the surface names of each node (name and aliases), each once per row.

    `row` numbers the rows of `entities` (entity_id, name, aliases), so that a node counts once however many
    of its names match."""
    names = (entities.with_row_index("row")
             .select("row", "entity_id",
                     pl.concat_list(pl.col("name"), pl.col("aliases").fill_null(pl.lit([], dtype=pl.List(pl.String))))
                     .alias("surface"))
             .explode("surface").filter(pl.col("surface").is_not_null()))
    return names.with_columns(_surfaces("surface")).unique(["row", "surface"])


def node_reach(entities: pl.DataFrame, mentions: pl.DataFrame) -> pl.DataFrame:
    """(row, entity_id, gold_cluster): every gold entity each node reaches, each pair once."""
    return (node_surfaces(entities).join(gold_surfaces(mentions), on="surface")
            .select("row", "entity_id", "gold_cluster").unique())


def cluster_nodes(entities: pl.DataFrame, mentions: pl.DataFrame) -> pl.DataFrame:
    """(gold_cluster, mentions, nodes, types) for every gold entity: its mentions, the distinct nodes that
    reach it and the distinct entity types those nodes carry (0 and 0 when no node reaches it)."""
    types = entities.select("entity_id", "entity_type").unique("entity_id", keep="last")
    reached = (node_reach(entities, mentions).select("gold_cluster", "entity_id").unique()
               .join(types, on="entity_id", how="left")
               .group_by("gold_cluster")
               .agg(pl.len().cast(pl.Int64).alias("nodes"),
                    pl.col("entity_type").n_unique().cast(pl.Int64).alias("types")))
    return (cluster_sizes(mentions).join(reached, on="gold_cluster", how="left")
            .with_columns(pl.col("nodes", "types").fill_null(0)).sort("gold_cluster"))


def _ratio(numerator: int, denominator: int) -> float:
    return round(numerator / max(1, denominator), _ROUND)


def graph_scores(entities: pl.DataFrame, mentions: pl.DataFrame) -> dict:
    """The whole-graph scores of current entity rows (entity_id, name, entity_type, aliases) against gold
    mentions (text, gold_cluster): the keys and order of shared/eval/graphscore.py."""
    clusters = cluster_nodes(entities, mentions)
    reached = clusters.filter(pl.col("nodes") > 0)
    split = reached.filter(pl.col("nodes") > 1)
    nodes_reaching = node_reach(entities, mentions)["row"].n_unique()
    gold_mentions = int(clusters["mentions"].sum())
    reached_mentions = int(reached["mentions"].sum())
    return {
        "nodes": entities.height,
        "gold_clusters": clusters.height,
        "gold_mentions": gold_mentions,
        "node_precision": _ratio(nodes_reaching, entities.height),
        "cluster_recall": _ratio(reached.height, clusters.height),
        "cluster_recall_weighted": _ratio(reached_mentions, gold_mentions),
        "fragmentation": _ratio(int(reached["nodes"].sum()), reached.height),
        "fragmentation_weighted": _ratio(int((reached["mentions"] * reached["nodes"]).sum()), reached_mentions),
        "split_share": _ratio(split.height, reached.height),
        "type_split_share": _ratio(split.filter(pl.col("types") > 1).height, reached.height),
    }


def _json_lines(lines: Iterable[str], keys: tuple[str, ...]) -> Iterator[tuple[int, tuple]]:
    """(line number, the values of `keys`) of each non-blank JSONL line; ValueError naming a malformed line."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            yield number, tuple(record[key] for key in keys)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {number} is not JSON: {exc.msg}") from exc
        except KeyError as exc:
            raise ValueError(f"line {number} lacks {exc.args[0]}") from exc
        except TypeError:
            raise ValueError(f"line {number} is not a JSON object") from None


def read_mentions(lines: Iterable[str]) -> pl.DataFrame:
    """(text, gold_cluster) of a MENTIONS.jsonl file; ValueError naming the line of the first malformed one."""
    texts: list[str] = []
    clusters: list[str] = []
    for number, (text, cluster) in _json_lines(lines, ("text", "gold_cluster")):
        if not isinstance(text, str) or not isinstance(cluster, str | int):
            raise ValueError(f"line {number}: text must be a string and gold_cluster a string or an integer")
        texts.append(text)
        clusters.append(str(cluster))
    return pl.DataFrame({"text": texts, "gold_cluster": clusters}, schema={"text": pl.String, "gold_cluster": pl.String})


def read_documents(lines: Iterable[str]) -> list[tuple[str, str]]:
    """(doc_id, text) of each line of a DOCS.jsonl file; ValueError naming the line of the first malformed
    one or of a doc_id seen before."""
    documents: list[tuple[str, str]] = []
    seen: set[str] = set()
    for number, (doc_id, text) in _json_lines(lines, ("doc_id", "text")):
        if not isinstance(doc_id, str | int) or isinstance(doc_id, bool) or not isinstance(text, str):
            raise ValueError(f"line {number}: doc_id must be a string or an integer and text a string")
        if str(doc_id) in seen:
            raise ValueError(f"line {number}: doc_id {doc_id!r} was seen before")
        seen.add(str(doc_id))
        documents.append((str(doc_id), text))
    return documents


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_NAME_CHARS = 100  # of the readable part of a file name that had to change


def inbox_file_name(doc_id: str) -> str:
    """`<doc_id>.txt` when the doc_id is a plain file name: letters, digits, ".", "_" and "-" only, not
    starting with "." and at most 100 characters. Otherwise every other character (a "/", a space, a
    non-ASCII letter ...) becomes "_", a leading "." becomes "_", the result is cut to 100 characters and
    "~" plus the first 12 hex digits of the SHA-256 of the doc_id are added, so that two doc_ids never share
    a file ("a/b" is "a_b~<hash>.txt", never "a_b.txt", the name of doc_id "a_b")."""
    if doc_id and not _UNSAFE.search(doc_id) and not doc_id.startswith(".") and len(doc_id) <= _NAME_CHARS:
        return f"{doc_id}.txt"
    readable = _UNSAFE.sub("_", doc_id)
    readable = ("_" + readable[1:] if readable.startswith(".") else readable)[:_NAME_CHARS]
    return f"{readable}~{hashlib.sha256(doc_id.encode('utf-8')).hexdigest()[:12]}.txt"

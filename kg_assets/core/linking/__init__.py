"""Entity linking: which extracted entity ids name the same real-world entity.

A linker returns redirects (from_id -> to_id with method, score and evidence) instead of rewriting
ids, so every merge is a row that can be audited and undone. Redirects are stored resolved: every
non-canonical id points straight at its canonical id (no chains, no cycles, never from == to).

- `clusters`: the `Linker` protocol, the distinct entity ids a linker works on (`entity_nodes`), the
  union-find that turns accepted pairs into resolved redirects (`Clusters`, `resolve_clusters`), and
  the redirects' use (`apply_redirects`, `keep_created_at`), the mention columns a linker reads
  (`mention_columns`).
- `name_keys`: the folded matching key of a name and the handles under which a long form is found.
- `name_linker`: `NameLinker`, the rule-based linker the pipeline runs. Pure Polars in and out.
- `values`: the same equivalences applied to attribute values (`value_classes`), so the attribute
  timeline compares "CTO" and "Chief Technology Officer" as the linker would.

Any object with a `name` and `link(mentions, overrides=None)` is a `Linker`: an embedding linker can be
plugged in later the same way (and may reuse `resolve_clusters` to turn its pairs into redirects). The
baselines it is compared with live with the scoring code, in `kg_assets.evaluation.baselines`.
"""

from kg_assets.core.linking.clusters import Linker, apply_redirects, keep_created_at, mention_columns, mention_total
from kg_assets.core.linking.name_linker import NameLinker

__all__ = ["Linker", "NameLinker", "apply_redirects", "keep_created_at", "mention_columns", "mention_total"]

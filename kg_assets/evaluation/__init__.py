"""Quality scores on annotated data (`kg eval`), and the baseline linkers they compare against.

- `extraction`: entity and relation precision/recall of an extractor on annotated documents.
- `linking`: pairwise and B-cubed scores of a linker on annotated mentions.
- `baselines`: the reference linkers (exact id, exact name, containment, RapidFuzz).
- `metrics`: precision, recall and F1.
"""

"""Extractor plug-ins (KG_EXTRACTOR=kg_assets_tests.extractor_plugins:...) that fail the way a worker process can:
the heuristic's rows, in worker processes (`runs_in_processes`), with a fault."""

import os
import threading
import time
from dataclasses import replace
from pathlib import Path

import polars as pl

from kg_assets.extractors.heuristic import HeuristicExtractor

DEATH_MARKER = "KG_TEST_EXTRACTION_DEATH_MARKER"


class DyingExtractor(HeuristicExtractor):
    """While the file $KG_TEST_EXTRACTION_DEATH_MARKER exists, the worker given the document it names dies on the
    spot, as one killed by the kernel would."""

    name = "heuristic"  # its rows are the heuristic's, compared with theirs

    def extract(self, chunks):
        marker = os.environ.get(DEATH_MARKER)
        if marker and os.path.exists(marker) and Path(marker).read_text() in chunks["document_id"].to_list():
            os._exit(9)
        return super().extract(chunks)


class SlowBulkyExtractor(HeuristicExtractor):
    """Two seconds a batch, and mentions whose descriptions are 1 MB: a finished batch's rows are more than a pipe
    holds, so a worker that sends them waits until they are read."""

    name = "slow-bulky"

    def extract(self, chunks):
        time.sleep(2)
        result = super().extract(chunks)
        return replace(result, mentions=result.mentions.with_columns(description=pl.lit("x" * 1_000_000)))


def dying_extractor(entity_types):
    return DyingExtractor(entity_types=entity_types)


def slow_bulky_extractor(entity_types):
    return SlowBulkyExtractor(entity_types=entity_types)


class UnpicklableExtractor(HeuristicExtractor):
    """Says it runs in processes, but holds what pickle cannot send (a lock, as a client or a connection would)."""

    def __init__(self, entity_types):
        super().__init__(entity_types=entity_types)
        self.lock = threading.Lock()


def unpicklable_extractor(entity_types):
    return UnpicklableExtractor(entity_types=entity_types)

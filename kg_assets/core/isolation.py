"""One document's content never fails the others: a per-document step runs each document through `isolate`,
and an exception raised by one document becomes that document's failure (step and message), which the step
records as the document's error row (status 'error', `error` "<step>: <exception>"). A rerun retries the
document when its file changes; the other documents' rows are written as usual."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

import polars as pl

T = TypeVar("T")
K = TypeVar("K")
MAX_MESSAGE = 500


@dataclass(frozen=True)
class DocumentFailure:
    document_id: str
    step: str
    error: str  # "<step>: <ExceptionType>: <message>", what the documents row's `error` holds

    @classmethod
    def of(cls, document_id: str, step: str, exc: BaseException) -> DocumentFailure:
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - 1] + "…"
        return cls(document_id, step, f"{step}: {message}")


def isolate(step: str, items: Iterable[tuple[str, K]], work: Callable[[K], T]) -> tuple[dict[str, T], list[DocumentFailure]]:
    """`work(item)` for each (document_id, item): the results by document, and the documents whose work raised.
    Only `Exception`s are caught: an interrupt still stops the step."""
    results: dict[str, T] = {}
    failures: list[DocumentFailure] = []
    for document_id, item in items:
        try:
            results[document_id] = work(item)
        except Exception as exc:  # noqa: BLE001 - the point: any content-triggered bug stays with its document
            failures.append(DocumentFailure.of(document_id, step, exc))
    return results, failures


def isolate_batch(step: str, frame: pl.DataFrame, work: Callable[[pl.DataFrame], T]) -> tuple[list[T], list[DocumentFailure]]:
    """`work` on all of `frame` (rows with a `document_id`) at once, as batching engines want; only when that
    raises, again per document, so the one that raises is found and the others are still done."""
    try:
        return [work(frame)], []
    except Exception:  # noqa: BLE001 - retried per document below, where the culprit gets the error
        groups = frame.partition_by("document_id", as_dict=True, maintain_order=True)
        results, failures = isolate(step, ((key[0], group) for key, group in groups.items()), work)
        return list(results.values()), failures


def failures_frame(failures: list[DocumentFailure]) -> pl.DataFrame:
    """document_id, step, error of the failures (what metadata tables and the documents rows show)."""
    return pl.DataFrame([f.__dict__ for f in failures], schema={"document_id": pl.String, "step": pl.String, "error": pl.String})

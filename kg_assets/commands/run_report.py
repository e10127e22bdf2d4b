"""What `kg run` reports after its run besides the row counts: failed chunks, documents with text in which
no entity was found (a warning, not a failure: e.g. a script the extractor cannot read), and the exit code.

Exit codes: 0 the run and its checks succeeded; 1 the run failed, or a check failed; 2 bad arguments or
settings; 3 the run succeeded but some chunks failed extraction (listed with their documents; a rerun redoes
exactly those chunks), unless --allow-failed-chunks; 130 interrupted while waiting for a pool.
"""

from __future__ import annotations

OK, FAILED, BAD_ARGUMENTS, FAILED_CHUNKS, INTERRUPTED = 0, 1, 2, 3, 130
SHOWN_CHUNKS = 20
SHOWN_ERROR_CHARS = 120  # the whole error is in kg.chunk_extractions


def add_options(parser) -> None:
    parser.add_argument("--allow-failed-chunks", action="store_true",
                        help=f"exit {OK}, not {FAILED_CHUNKS}, when some chunks failed extraction")


def print_failed_chunks(warehouse) -> int:
    """List the chunks whose extraction failed (the first few) and their documents; returns how many."""
    failed = warehouse.failed_chunks()
    documents = failed["document_id"].unique(maintain_order=True).to_list()
    print(f"  {'failed chunks':<16} {failed.height:>10,}" + (f"  (in {len(documents):,} documents)" if documents else ""))
    for document_id, chunk_index, _, error in failed.head(SHOWN_CHUNKS).iter_rows():
        print(f"    {document_id} chunk {chunk_index}: {_shorten(error)}")
    if failed.height > SHOWN_CHUNKS:
        print(f"    … {failed.height - SHOWN_CHUNKS:,} more: kg sql \"SELECT * FROM kg.chunk_extractions WHERE status <> 'ok'\"")
    return failed.height


def print_documents_without_entities(warehouse) -> int:
    """A warning line for the documents with text in which nothing was extracted, the first few listed."""
    empty = warehouse.documents_without_entities()
    print(f"  {'no entity found':<16} {empty.height:>10,}"
          + ("  (documents with text but no entity: WARNING)" if empty.height else ""))
    for document_id, chunks in empty.head(SHOWN_CHUNKS).iter_rows():
        print(f"    {document_id} ({chunks:,} chunk{'' if chunks == 1 else 's'})")
    if empty.height > SHOWN_CHUNKS:
        print(f"    … {empty.height - SHOWN_CHUNKS:,} more")
    return empty.height


def exit_code(run_succeeded: bool, failing_checks: int, failed_chunks: int, allow_failed_chunks: bool) -> int:
    """A failed run first; then failed chunks (the likelier cause of a failing extraction_health check)."""
    if not run_succeeded:
        return FAILED
    if failed_chunks and not allow_failed_chunks:
        return FAILED_CHUNKS
    return FAILED if failing_checks else OK


def _shorten(error: str | None) -> str:
    error = " ".join((error or "").split())
    return error if len(error) <= SHOWN_ERROR_CHARS else error[:SHOWN_ERROR_CHARS - 1] + "…"

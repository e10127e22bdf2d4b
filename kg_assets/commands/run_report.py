"""What `kg run` reports after its run besides the row counts: failed chunks, documents with text in which
no entity was found (a warning, not a failure: e.g. a script the extractor cannot read), and the exit code.

Exit codes: 0 the run and its checks succeeded; 1 the run failed, or a check failed (even when chunks failed
too: a failed check is never hidden behind them); 2 bad arguments or settings; 3 the run and every check
succeeded but some chunks failed extraction (listed with their documents; a rerun redoes exactly those chunks),
unless --allow-failed-chunks; 130 interrupted while waiting for a pool.
"""

from __future__ import annotations

from kg_assets.commands.common import plural

OK, FAILED, BAD_ARGUMENTS, FAILED_CHUNKS, INTERRUPTED = 0, 1, 2, 3, 130
SHOWN_CHUNKS = 20
SHOWN_ERROR_CHARS = 120  # the whole error is in kg.chunk_extractions


def add_options(parser) -> None:
    parser.add_argument("--allow-failed-chunks", action="store_true",
                        help=f"exit {OK}, not {FAILED_CHUNKS}, when some chunks failed extraction")


def headline(run_succeeded: bool, failing_checks: int, failed_chunks: int) -> str:
    """What `kg run` says happened, in one phrase: 'succeeded' only when nothing failed."""
    if not run_succeeded:
        return "FAILED"
    failures = [plural(n, what) for n, what in ((failing_checks, "failed check"), (failed_chunks, "failed chunk")) if n]
    return f"finished with {' and '.join(failures)}" if failures else "succeeded"


def print_failed_chunks(failed) -> None:
    """List the chunks whose extraction failed (the first few) and their documents."""
    documents = failed["document_id"].unique(maintain_order=True).to_list()
    where = f"  (in {plural(len(documents), 'document')})" if documents else ""
    print(f"  {'failed chunks':<16} {failed.height:>10,}{where}")
    for document_id, chunk_index, _, error in failed.head(SHOWN_CHUNKS).iter_rows():
        print(f"    {document_id} chunk {chunk_index}: {_shorten(error)}")
    if failed.height > SHOWN_CHUNKS:
        print(f"    … {failed.height - SHOWN_CHUNKS:,} more: kg sql \"SELECT * FROM kg.chunk_extractions WHERE status <> 'ok'\"")


def print_bad_answers(bad) -> None:
    """The chunks (or chat messages) whose LLM answer was empty or degenerate, the first few; the next run asks again."""
    for document_id, item, status, error in bad.head(SHOWN_CHUNKS).iter_rows():
        print(f"    {document_id} {item}: {status}" + (f": {_shorten(error)}" if error else ""))
    if bad.height > SHOWN_CHUNKS:
        print(f"    … {bad.height - SHOWN_CHUNKS:,} more: kg sql \"SELECT * FROM kg.llm_calls WHERE status IN ('empty', 'degenerate')\"")


def print_checks(checks) -> None:
    """The count of passed checks, then each failed one with its reason (the check's own, or its description)."""
    failing = [c for c in checks if not c.passed]
    print(f"  checks           {len(checks) - len(failing)}/{len(checks)} passed")
    for check in failing:
        reason = check.description or _metadata_reason(check.metadata)
        print(f"    FAILED {check.asset_key.to_user_string()}:{check.check_name}" + (f": {_shorten(reason)}" if reason else ""))


def _metadata_reason(metadata) -> str:
    # dbt's tests say what failed in their metadata, not their description
    for key in ("failed_row_count", "violations", "status"):
        if key in metadata:
            return f"{key} {getattr(metadata[key], 'value', metadata[key])}"
    return ""


def print_documents_without_entities(warehouse) -> int:
    """A warning line for the documents with text in which nothing was extracted, the first few listed."""
    empty = warehouse.documents_without_entities()
    print(f"  {'no entity found':<16} {empty.height:>10,}"
          + ("  (documents with text but no entity: WARNING)" if empty.height else ""))
    for document_id, chunks in empty.head(SHOWN_CHUNKS).iter_rows():
        print(f"    {document_id} ({plural(chunks, 'chunk')})")
    if empty.height > SHOWN_CHUNKS:
        print(f"    … {empty.height - SHOWN_CHUNKS:,} more")
    return empty.height


def exit_code(run_succeeded: bool, failing_checks: int, failed_chunks: int, allow_failed_chunks: bool) -> int:
    """A failed run or a failed check first (both listed above it); then failed chunks."""
    if not run_succeeded or failing_checks:
        return FAILED
    return FAILED_CHUNKS if failed_chunks and not allow_failed_chunks else OK


def _shorten(error: str | None) -> str:
    error = " ".join((error or "").split())
    return error if len(error) <= SHOWN_ERROR_CHARS else error[:SHOWN_ERROR_CHARS - 1] + "…"

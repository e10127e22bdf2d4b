"""The LLM call log, as every LLM-using step (extraction, summaries, fact extraction) reports it: copied from the
cache into kg.llm_calls, and each day's spend as partition metadata."""

import polars as pl

from kg_assets.defs.partitions import per_day_counts
from kg_assets.defs.tables import rounded
from kg_assets.storage.llm_cache import LLMCache


def spend_per_day(days, calls: pl.DataFrame) -> dict[str, dict[str, object]]:
    """Each day's LLM spend in this run: requests sent, cache hits, errors (of which empty answers and
    degenerate ones: loops or echoes of the prompt), tokens, latency, cost."""
    sent = calls.filter(pl.col("status") != "cache_hit")
    counts = per_day_counts(days, calls, llm_cache_hits=(pl.col("status") == "cache_hit").sum(),
                            llm_errors=pl.col("status").is_in(["error", "parse_error", "empty", "degenerate"]).sum(),
                            llm_empty_answers=(pl.col("status") == "empty").sum(),
                            llm_degenerate_answers=(pl.col("status") == "degenerate").sum())
    if calls.height == 0:
        return {day: {} for day in days}
    sums = per_day_counts(days, sent, llm_calls=pl.len(), prompt_tokens=pl.col("prompt_tokens").sum(),
                          completion_tokens=pl.col("completion_tokens").sum())
    stats = {row["arrival_day"]: row for row in sent.group_by("arrival_day").agg(
        p50=pl.col("latency_ms").median(), p95=pl.col("latency_ms").quantile(0.95), cost=pl.col("cost_usd").sum()
    ).iter_rows(named=True)}
    return {
        day: {**sums[day], **counts[day],
              "latency_p50_ms": rounded(stats.get(day, {}).get("p50"), 0),
              "latency_p95_ms": rounded(stats.get(day, {}).get("p95"), 0),
              "estimated_cost_usd": rounded(stats.get(day, {}).get("cost"), 6)}
        for day in days
    }


def export_calls(wh, cache_path: str) -> None:
    """Copy the LLM call log (this run's and any killed run's) from the cache into kg.llm_calls."""
    with LLMCache(cache_path) as cache:
        calls = cache.unexported_calls()
        wh.upsert_rows("llm_calls", "call_id", calls)
        cache.mark_exported(calls["call_id"].to_list())

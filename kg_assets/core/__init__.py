"""Pure logic over Polars frames: no Dagster, no DuckDB."""

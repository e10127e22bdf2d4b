"""The only layer that talks to DuckDB."""

"""Thin Dagster wiring, one module per domain; `kg_assets.definitions` merges them."""

"""Asset metadata describing the DuckDB tables an asset owns (shown in the UI's schema tab)."""

from __future__ import annotations

import dagster as dg
import polars as pl

from kg_assets.core import schemas
from kg_assets.storage.warehouse import SCHEMA


def table_metadata(*tables: str) -> dict[str, object]:
    first = tables[0]
    return {
        "dagster/table_name": f"{SCHEMA}.{first}",
        "dagster/column_schema": dg.TableSchema(
            columns=[dg.TableColumn(name, str(dtype)) for name, dtype in schemas.TABLES[first].items()]
        ),
        **({"tables": ", ".join(f"{SCHEMA}.{t}" for t in tables)} if len(tables) > 1 else {}),
    }


def markdown_table(frame: pl.DataFrame) -> dg.MetadataValue:
    """A small frame as a Markdown table for the UI ("none" when empty)."""
    if frame.height == 0:
        return dg.MetadataValue.md("none")
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in frame.iter_rows()]
    return dg.MetadataValue.md("\n".join(lines))


def rounded(value: float | None, digits: int) -> float:
    """Latencies and costs for the UI: a few digits, not float noise (0.0 when unknown)."""
    return round(float(value or 0.0), digits)

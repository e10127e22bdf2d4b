"""Asset metadata describing the DuckDB tables an asset owns (shown in the UI's schema tab)."""

from __future__ import annotations

import dagster as dg

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

"""PostgreSQL administration for the tests and benchmarks: the statements that cannot run in a transaction."""

from __future__ import annotations

import psycopg2


def pg_admin(server: str, sql: str) -> None:
    """Run `sql` (CREATE or DROP DATABASE) in autocommit on the `postgres` database of `server`, a libpq DSN
    without a database name."""
    con = psycopg2.connect(f"{server} dbname=postgres")
    con.autocommit = True
    try:
        con.cursor().execute(sql)
    finally:
        con.close()

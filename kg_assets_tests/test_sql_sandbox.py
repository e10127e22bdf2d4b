"""`kg sql` reads the warehouse and nothing else: no file written or read, no extension, no ATTACH."""

import duckdb
import pytest

from kg_assets.cli import main


@pytest.fixture
def sql(mutable, capsys):
    def run(query: str) -> tuple[int, str, str]:
        code = main(["sql", query, "--db", str(mutable)])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_a_normal_query_views_and_macros_still_work(sql, mutable):
    code, out, _ = sql("SELECT count(*) AS n FROM kg.entities WHERE valid_until IS NULL")
    assert code == 0 and "│ n" in out
    # A view and a macro stored in the file, as the dbt marts are (test_marts reads the real marts this way).
    with duckdb.connect(str(mutable)) as con:
        con.execute("CREATE SCHEMA kg_marts; CREATE MACRO kg_marts.doubled(x) AS x * 2;"
                    "CREATE VIEW kg_marts.people AS SELECT name FROM kg.entities WHERE entity_type = 'PERSON'")
    code, out, err = sql("SELECT count(*) AS n, max(kg_marts.doubled(length(name))) AS d FROM kg_marts.people")
    assert code == 0 and "│ n" in out, err
    code, out, err = sql("CREATE TEMP MACRO twice(x) AS x * 2; SELECT twice(21) AS answer")
    assert code == 0 and "42" in out, err


def test_copy_to_cannot_overwrite_a_file(sql, tmp_path):
    victim = tmp_path / "llm_cache.sqlite"
    victim.write_bytes(b"precious")
    code, _, err = sql(f"COPY (SELECT 1) TO '{victim}'")
    assert code == 1 and "PermissionException" in err
    assert victim.read_bytes() == b"precious"


@pytest.mark.parametrize("query", [
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv('https://example.invalid/x.csv')",
    "INSTALL httpfs",
    "LOAD httpfs",
    "ATTACH '{tmp}/other.duckdb' AS other",
    "SET enable_external_access = true",
    "SET autoinstall_known_extensions = true",
])
def test_files_urls_extensions_and_attach_are_refused(sql, tmp_path, query):
    code, out, err = sql(query.format(tmp=tmp_path))
    assert code == 1 and err.startswith("kg sql: ") and "root:" not in out
    assert not (tmp_path / "other.duckdb").exists()


def test_the_warehouse_cannot_be_written(sql):
    code, _, err = sql("DELETE FROM kg.entities")
    assert code == 1 and "read-only" in err

"""Runs the queries of pti-trace/analysis/queries on a Parquet dataset that
`pti-trace export --parquet` wrote, with DuckDB (one machine) or Spark (local mode here; the same
SQL on a cluster), and prints their results.

    python pti_query.py [--engine duckdb|spark] [--json] [--stats] DATASET [QUERY ...]

QUERY is a query's name (its file in queries/ without .sql: summary_ranks, kernels, ...) or the
path of a .sql file of your own; without one, every query of queries/ runs. Each table of the
dataset (api_call, device_op, annotation, counter, critical_event, thread, process) is a view of
the same name, with the partitions' columns `rank` and `host`. `--json` prints a line per query:
{"query", "columns", "rows"}; `--stats` prints the seconds and peak memory of this process on
stderr (DuckDB runs in it; Spark's JVM does not).

Needs the PyPI package `duckdb`, or `pyspark` and a Java runtime (Debian's openjdk-17-jre-headless).

May touch: nothing but reading the dataset (DuckDB in memory; Spark's local scratch space).
"""
import argparse
import json
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = ("process", "thread", "api_call", "device_op", "counter", "critical_event", "annotation")


def query_files(names):
    """(name, SQL) of each query asked for: every one of queries/ when none is."""
    directory = os.path.join(HERE, "queries")
    if not names:
        names = sorted(f[:-4] for f in os.listdir(directory) if f.endswith(".sql"))
    found = []
    for name in names:
        path = name if name.endswith(".sql") else os.path.join(directory, name + ".sql")
        if not os.path.isfile(path):
            sys.exit(f"pti_query: no query {name!r} (no file {path})")
        with open(path, encoding="utf-8") as f:
            found.append((os.path.basename(path)[:-4], f.read()))
    return found


def check_dataset(dataset):
    missing = [t for t in TABLES if not os.path.isdir(os.path.join(dataset, t))]
    if missing:
        sys.exit(f"pti_query: {dataset} is not a dataset of `pti-trace export --parquet` "
                 f"(no {', '.join(missing)})")


def plain(value):
    """A cell as JSON holds it: decimals and big integers as numbers."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    try:
        return int(value) if int(value) == value else float(value)
    except (TypeError, ValueError):
        return str(value)


def duckdb_engine(dataset):
    import duckdb

    db = duckdb.connect()
    for table in TABLES:
        glob = os.path.join(dataset, table, "*", "*", "*.parquet").replace("'", "''")
        db.execute(
            f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{glob}', hive_partitioning = true, "
            "hive_types = {'rank': BIGINT, 'host': VARCHAR})")

    def run(sql):
        result = db.execute(sql)
        columns = [d[0] for d in result.description]
        return columns, [[plain(v) for v in row] for row in result.fetchall()]

    return run, lambda: None


def spark_engine(dataset):
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("pti_query")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    for table in TABLES:
        spark.read.parquet(os.path.join(dataset, table)).createOrReplaceTempView(table)

    def run(sql):
        frame = spark.sql(sql)
        return frame.columns, [[plain(v) for v in row] for row in frame.collect()]

    return run, spark.stop


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--stats", action="store_true")
    parser.add_argument("dataset")
    parser.add_argument("queries", nargs="*")
    args = parser.parse_args()
    check_dataset(args.dataset)
    queries = query_files(args.queries)
    began = time.monotonic()
    run, stop = (duckdb_engine if args.engine == "duckdb" else spark_engine)(args.dataset)
    try:
        for name, sql in queries:
            columns, rows = run(sql)
            if args.json:
                print(json.dumps({"query": name, "columns": columns, "rows": rows}))
            else:
                print(f"-- {name}")
                print("\t".join(columns))
                for row in rows:
                    print("\t".join("" if v is None else str(v) for v in row))
    finally:
        stop()
    if args.stats:
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"pti_query: {args.engine}: {len(queries)} queries in "
              f"{time.monotonic() - began:.3f} s, peak RSS {peak_kb} kB", file=sys.stderr)


main()

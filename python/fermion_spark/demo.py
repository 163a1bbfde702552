"""The demo job: writes one table as Fermion and as Parquet (zstd), runs the same queries on
both, and prints results, timings and on-disk sizes side by side.

Run it with ``fermion-spark demo`` (or ``python -m fermion_spark.demo``).
"""
import argparse
import os
import tempfile
import time


def _sizes(spark, path):
    """Bytes on disk under ``path``, measured by Hadoop's FileSystem in the JVM."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    p = jvm.org.apache.hadoop.fs.Path(path)
    return p.getFileSystem(conf).getContentSummary(p).getLength()


def _timed(label, fn):
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    print(f"  {label:<44} {elapsed:7.2f} s", flush=True)
    return result, elapsed


def build_table(spark, rows):
    from pyspark.sql import functions as F
    return (spark.range(rows, numPartitions=4)
            .select(
                F.col("id"),
                (F.col("id") % 10000).alias("user_id"),
                F.timestamp_micros(F.lit(1767225600000000) + F.col("id") * 1000).alias("ts"),
                F.when(F.col("id") % 13 == 0, F.lit(None)).otherwise(F.col("id") % 2).cast("int").alias("label"),
                F.element_at(F.array(*[F.lit(c) for c in ["news", "sports", "music", "games", "travel"]]),
                             (F.col("id") % 5 + 1).cast("int")).alias("category"),
                (F.rand(7) * 100).alias("score"),
                *[(F.randn(i) * i).cast("float").alias(f"f{i}") for i in range(1, 11)],
                (F.col("id") / 100).cast("decimal(18,2)").alias("amount")))


def run(rows, workdir, master="local[*]"):
    from pyspark.sql import SparkSession
    from fermion_spark import configure_spark_with_fermion

    builder = (SparkSession.builder.master(master).appName("fermion-demo")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.parquet.compression.codec", "zstd"))
    spark = configure_spark_with_fermion(builder).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    fermion_path = os.path.join(workdir, "events.fermion")
    parquet_path = os.path.join(workdir, "events.parquet")
    print(f"Fermion demo: {rows:,} rows, 17 columns, in {workdir}", flush=True)
    df = build_table(spark, rows).cache()
    df.count()

    print("[1/3] writing", flush=True)
    _timed("write Fermion", lambda: df.write.format("fermion").mode("overwrite").save(fermion_path))
    _timed("write Parquet (zstd)", lambda: df.write.mode("overwrite").parquet(parquet_path))

    fermion = spark.read.format("fermion").load(fermion_path)
    parquet = spark.read.parquet(parquet_path)
    queries = {
        "count(*)": lambda t: t.count(),
        "avg(score) by category": lambda t: sorted(
            (r["category"], round(r["avg(score)"], 6)) for r in t.groupBy("category").avg("score").collect()),
        "label=1 and f3 > 2: count, sum(amount)": lambda t: tuple(
            t.where("label = 1 and f3 > 2").selectExpr("count(*)", "sum(amount)").collect()[0]),
        "max(ts), min(user_id)": lambda t: tuple(t.selectExpr("max(ts)", "min(user_id)").collect()[0]),
    }
    print("[2/3] querying", flush=True)
    ok = True
    for name, q in queries.items():
        q(fermion), q(parquet)  # warm-up
        f_result, _ = _timed(f"Fermion  {name}", lambda: q(fermion))
        p_result, _ = _timed(f"Parquet  {name}", lambda: q(parquet))
        same = f_result == p_result
        ok &= same
        print(f"    result: {f_result}  {'(same as Parquet)' if same else f'DIFFERS from Parquet: {p_result}'}", flush=True)

    print("[3/3] sizes", flush=True)
    f_size, p_size = _sizes(spark, fermion_path), _sizes(spark, parquet_path)
    print(f"  Fermion {f_size:>14,} bytes", flush=True)
    print(f"  Parquet {p_size:>14,} bytes (zstd)   Fermion/Parquet = {f_size / p_size:.2f}", flush=True)
    spark.stop()
    if not ok:
        raise SystemExit("Fermion and Parquet results differ")
    print("Demo finished: Fermion and Parquet agree on every query.", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="fermion-spark demo", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--workdir", default=None, help="where to write the tables (default: a temp dir)")
    parser.add_argument("--master", default="local[*]")
    args = parser.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="fermion-demo-")
    run(args.rows, workdir, args.master)


if __name__ == "__main__":
    main()

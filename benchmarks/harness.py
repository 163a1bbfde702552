"""Shared pieces of the Spark benchmarks: one SparkSession with Fermion, tables written as
Fermion, Parquet (zstd) and ORC (zstd) from the same DataFrame, timed queries with warm-ups and
repetitions, and markdown output. Every benchmark runs all formats side by side in one process."""
import gc
import os
import shutil
import statistics
import subprocess
import time

FORMATS = ("fermion", "parquet", "orc")

# 128 random float32 in [0, 1) per row (an embedding). An array of rand() calls is compiled by Spark's code
# generation; a higher-order `transform` over a sequence is interpreted (about 2 hours for 10M rows on 2 cores).
VECTOR_SQL = "array(" + ", ".join(f"cast(rand({i}) as float)" for i in range(128)) + ") as vec"


def session(app, master="local[2]", extra=None):
    from pyspark.sql import SparkSession
    from fermion_spark import configure_spark_with_fermion
    builder = (SparkSession.builder.master(master).appName(app)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "6g")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.parquet.compression.codec", "zstd")
               .config("spark.sql.orc.compression.codec", "zstd"))
    for k, v in (extra or {}).items():
        builder = builder.config(k, v)
    if os.environ.get("FERMION_BENCH_JFR"):  # a flight recording of the driver, to find where the time goes
        builder = builder.config("spark.driver.extraJavaOptions",
                                 f"-XX:StartFlightRecording=filename={os.environ['FERMION_BENCH_JFR']},"
                                 "settings=profile,dumponexit=true")
    spark = configure_spark_with_fermion(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def progress(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


_jar_digest = None


def jar_digest():
    """sha256 of the Fermion jar the benchmarks' sessions load (`fermion_spark.jar_path()`)."""
    global _jar_digest
    if _jar_digest is None:
        import hashlib
        from fermion_spark import jar_path
        with open(jar_path(), "rb") as f:
            _jar_digest = hashlib.sha256(f.read()).hexdigest()
    return _jar_digest


def reusable(path, fermion):
    """Whether a table a benchmark cached at `path` can be measured again: it exists and, when Fermion
    wrote it (`fermion`), the jar loaded now is the one that wrote it (see `mark_written`), since a
    writer change changes the bytes measured. A stale Fermion copy is deleted, so that it is written
    afresh rather than as a new version beside the old files."""
    if not os.path.exists(path):
        return False
    if not fermion:
        return True
    try:
        with open(path + ".jar-sha256") as f:
            if f.read().strip() == jar_digest():
                return True
    except FileNotFoundError:
        pass
    progress(f"{path}: written by another Fermion jar, writing it again")
    shutil.rmtree(path, ignore_errors=True)
    return False


def mark_written(path):
    """Records beside `path` (in `path.jar-sha256`) which jar wrote the Fermion table there."""
    with open(path + ".jar-sha256", "w") as f:
        f.write(jar_digest() + "\n")


def write_all(spark, df, base, name, fermion_options=None, formats=FORMATS, reuse=False):
    """Writes `df` in each of `formats` under base/name.<format>; returns {format: path}. With `reuse`,
    a copy already there is kept when `reusable`."""
    paths = {}
    for fmt in formats:
        path = os.path.join(base, f"{name}.{fmt}")
        paths[fmt] = path
        if reuse and reusable(path, fermion=fmt == "fermion"):
            continue
        w = df.write.mode("overwrite").format(fmt)
        for k, v in ((fermion_options or {}).items() if fmt == "fermion" else ()):
            w = w.option(k, v)
        start = time.perf_counter()
        w.save(path)
        progress(f"wrote {name} as {fmt} in {time.perf_counter() - start:.1f} s")
        if fmt == "fermion":
            mark_written(path)
    return paths


def size_of(spark, path):
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    return p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).getContentSummary(p).getLength()


def timed(fn, warmups=1, reps=3):
    """Median wall time of `fn` over `reps` runs after `warmups` runs, and its last result."""
    result = None
    for _ in range(warmups):
        result = fn()
    times = []
    for _ in range(reps):
        release_finished_queries()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def release_finished_queries():
    """Collects Python's garbage, untimed. A finished query's PySpark objects can be freed by
    Python's cycle collector alone, which runs only after enough Python allocations, and until
    then the JVM keeps what they refer to: the query's plan with its broadcast hash tables.
    Measured with TPC-H Q9 over Parquet (no Fermion in the session), the driver's heap after a full
    collection grew by about 340 MB a run (412 MB after the first, 2,130 MB after the sixth) and
    stayed at or below 435 MB with this call between runs; a Scala driver running the same queries
    stays flat without it."""
    gc.collect()


def timed_runs(fns, warmups=1, reps=5):
    """Wall times of every run of each of `fns` ({name: fn}): {name: [seconds per rep]}. The runs
    are interleaved round-robin, in the given order on even reps and reversed on odd ones, so that
    a slow moment of the machine (GC, page cache, another process) hits every format alike and no
    format always runs right after the same other one (and inherits its garbage). Before each timed
    run, `release_finished_queries`."""
    for _ in range(warmups):
        for fn in fns.values():
            fn()
    times = {k: [] for k in fns}
    order = list(fns)
    for rep in range(reps):
        for k in (order if rep % 2 == 0 else order[::-1]):
            release_finished_queries()
            start = time.perf_counter()
            fns[k]()
            times[k].append(time.perf_counter() - start)
    return times


def timed_side_by_side(fns, warmups=1, reps=5):
    """Median wall time of each of `fns` ({name: fn}), run as `timed_runs` runs them."""
    return {k: statistics.median(v) for k, v in timed_runs(fns, warmups, reps).items()}


def paired_ratio_quartiles(numerators, denominators):
    """The first and third quartiles of `numerators[i] / denominators[i]`: the ratio of two formats
    within each rep (run next to each other), so the machine's drift between reps cancels out. Half
    of the reps lie between the two."""
    ratios = [n / d for n, d in zip(numerators, denominators)]
    if len(ratios) < 2:  # one rep (a quick check): its ratio is both
        return ratios[0], ratios[0]
    q = statistics.quantiles(ratios, n=4, method="inclusive")
    return q[0], q[2]


def reader(spark, fmt):
    return spark.read.format(fmt)


def noop_scan(df):
    """Materialises every selected value as rows without writing anything."""
    df.write.format("noop").mode("overwrite").save()


def scan_metrics(df, names):
    """The values of Fermion scan metrics (`names`) of the last run of `df`'s plan."""
    scan = df._jdf.queryExecution().executedPlan().collectLeaves().head()
    m = scan.metrics()
    return {k: m.apply(k).value() for k in names}


def machine_line():
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True, text=True).stdout.strip()
    return f"{os.cpu_count()} cores ({cpu}), Spark local[2]"


def markdown_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def publish(spark, out, parts):
    """Writes the result markdown to `out`, prints it and stops the session."""
    text = "\n".join(parts)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    print(text)
    spark.stop()

"""The jar reaches separate executor JVMs: a write and a read on local-cluster[2,1,1024]."""
import os
import subprocess
import sys
import textwrap

from conftest import child_env

SCRIPT = textwrap.dedent("""
    import sys
    from pyspark.sql import SparkSession, functions as F
    from fermion_spark import configure_spark_with_fermion

    path = sys.argv[1]
    spark = configure_spark_with_fermion(
        SparkSession.builder.master("local-cluster[2,1,1024]").appName("fermion-local-cluster")
        .config("spark.ui.enabled", "false")).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.range(0, 100000, 1, 8).select("id", (F.col("id") % 7).alias("k"), F.col("id").cast("string").alias("s"))
    df.write.format("fermion").save(path)
    back = spark.read.format("fermion").load(path)
    result = back.groupBy("k").agg(F.count("*").alias("n"), F.sum("id").alias("total")).orderBy("k").collect()
    expected = df.groupBy("k").agg(F.count("*").alias("n"), F.sum("id").alias("total")).orderBy("k").collect()
    assert result == expected, (result, expected)
    pids = set(back.rdd.mapPartitions(lambda it: [__import__("os").getpid()]).collect())
    print("EXECUTOR_PIDS", len(pids))
    spark.stop()
""")


def test_write_and_read_on_separate_executor_jvms(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, str(script), str(tmp_path / "t")], capture_output=True, text=True, timeout=600,
                         env=child_env())
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-5000:]
    pids = [line for line in out.stdout.splitlines() if line.startswith("EXECUTOR_PIDS")]
    assert pids and int(pids[0].split()[1]) >= 2, out.stdout

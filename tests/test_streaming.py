"""Structured Streaming into Fermion (`writeStream.format("fermion")`): one dataset version per
micro-batch, exactly once across replays and across a query killed with SIGKILL and restarted
from its checkpoint."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

from pyspark.sql import functions as F

from conftest import child_env, error_of
from fermion_spark.dataset import FermionDataset


def write_inputs(directory, first, count, rows_per_file=50):
    """JSON files 0000.json ... each with ids file * 1000 + 0 .. rows_per_file - 1."""
    os.makedirs(directory, exist_ok=True)
    for f in range(first, first + count):
        with open(os.path.join(directory, f".{f:04d}.tmp"), "w") as out:
            for r in range(rows_per_file):
                out.write(json.dumps({"id": f * 1000 + r, "file": f}) + "\n")
        os.rename(os.path.join(directory, f".{f:04d}.tmp"), os.path.join(directory, f"{f:04d}.json"))


def expected_ids(files, rows_per_file=50):
    return sorted(f * 1000 + r for f in range(files) for r in range(rows_per_file))


def run_available_now(spark, source, out, checkpoint):
    q = (spark.readStream.schema("id bigint, file int").option("maxFilesPerTrigger", 1).json(source)
         .writeStream.format("fermion").option("checkpointLocation", checkpoint).trigger(availableNow=True)
         .start(out))
    q.awaitTermination(300)
    assert q.exception() is None, q.exception()


def versions(spark, out):
    return [r.version for r in spark.sql(f"DESCRIBE HISTORY fermion.`{out}`").orderBy("version").collect()]


def test_each_micro_batch_is_one_version_and_a_replayed_batch_lands_once(spark, tmp_path):
    source, out, checkpoint = str(tmp_path / "in"), str(tmp_path / "out"), str(tmp_path / "ck")
    write_inputs(source, 0, 4)
    run_available_now(spark, source, out, checkpoint)
    assert sorted(r.id for r in spark.read.format("fermion").load(out).collect()) == expected_ids(4)
    assert versions(spark, out) == [1, 2, 3, 4], "one version per micro-batch (one input file each)"
    # Spark lost its record of committing the last batch (a crash between the dataset's commit and
    # the checkpoint's): it runs the batch again, and the sink adds nothing.
    data_files = sorted(os.listdir(os.path.join(out, "data")))
    commits = os.path.join(checkpoint, "commits")
    last = max(int(n) for n in os.listdir(commits) if n.isdigit())
    for name in (str(last), f".{last}.crc"):  # the log entry and its checksum file
        if os.path.exists(os.path.join(commits, name)):
            os.remove(os.path.join(commits, name))
    run_available_now(spark, source, out, checkpoint)
    assert sorted(r.id for r in spark.read.format("fermion").load(out).collect()) == expected_ids(4)
    assert versions(spark, out) == [1, 2, 3, 4]
    assert sorted(os.listdir(os.path.join(out, "data"))) == data_files, "the replayed batch's files were removed"
    write_inputs(source, 4, 2)
    run_available_now(spark, source, out, checkpoint)
    assert sorted(r.id for r in spark.read.format("fermion").load(out).collect()) == expected_ids(6)
    assert versions(spark, out) == [1, 2, 3, 4, 5, 6]


def test_complete_mode_overwrites_and_update_mode_is_refused(spark, tmp_path):
    source, out = str(tmp_path / "in"), str(tmp_path / "out")
    write_inputs(source, 0, 3)
    counts = spark.readStream.schema("id bigint, file int").option("maxFilesPerTrigger", 1).json(source) \
        .groupBy((F.col("id") % 3).alias("k")).count()
    q = counts.writeStream.format("fermion").outputMode("complete") \
        .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start(out)
    q.awaitTermination(300)
    assert q.exception() is None, q.exception()
    got = {r.k: r["count"] for r in spark.read.format("fermion").load(out).collect()}
    assert got == {k: sum(1 for i in expected_ids(3) if i % 3 == k) for k in range(3)}
    assert {r.operation for r in spark.sql(f"DESCRIBE HISTORY fermion.`{out}`").collect()} == {"overwrite"}
    msg = error_of(lambda: counts.writeStream.format("fermion").outputMode("update")
                   .option("checkpointLocation", str(tmp_path / "ck2")).start(str(tmp_path / "out2"))
                   .awaitTermination(60))
    assert "update" in msg.lower(), msg


QUERY = textwrap.dedent("""
    import sys
    from pyspark.sql import SparkSession
    from fermion_spark import configure_spark_with_fermion
    source, out, checkpoint = sys.argv[1:4]
    spark = configure_spark_with_fermion(SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")).getOrCreate()
    q = (spark.readStream.schema("id bigint, file int").option("maxFilesPerTrigger", 1).json(source)
         .writeStream.format("fermion").option("checkpointLocation", checkpoint).start(out))
    print("started", flush=True)
    q.awaitTermination()
""")


def test_a_query_killed_and_restarted_loses_and_duplicates_nothing(spark, tmp_path):
    """20 micro-batches: the query is killed with SIGKILL after a few, wherever it is (writing
    files, committing, between the two commits), and restarted from its checkpoint."""
    source, out, checkpoint = str(tmp_path / "in"), str(tmp_path / "out"), str(tmp_path / "ck")
    write_inputs(source, 0, 20)
    proc = subprocess.Popen([sys.executable, "-c", QUERY, source, out, checkpoint],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True, env=child_env())
    try:
        deadline = time.time() + 240
        while time.time() < deadline:
            names = os.listdir(os.path.join(out, "_versions")) if os.path.isdir(os.path.join(out, "_versions")) else []
            if sum(1 for n in names if n.endswith(".manifest")) >= 6:
                break
            time.sleep(0.2)
        else:
            raise AssertionError("the query committed fewer than 6 versions in 240 s")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    before = spark.read.format("fermion").load(out).count()
    assert 6 * 50 <= before < 20 * 50
    run_available_now(spark, source, out, checkpoint)
    ids = [r.id for r in spark.read.format("fermion").load(out).collect()]
    assert sorted(ids) == expected_ids(20), "every input row exactly once"
    # Spark may group files differently after the restart: one version per micro-batch it committed.
    batches = [n for n in os.listdir(os.path.join(checkpoint, "commits")) if n.isdigit()]
    assert 6 <= len(batches) <= 20
    assert versions(spark, out) == list(range(1, len(batches) + 1)), "one version per micro-batch, none twice"
    # Read back as a stream, a fragment per micro-batch: the input files in their order.
    copy = str(tmp_path / "copy")
    assert stream_copy(spark, out, copy, str(tmp_path / "ck-copy"), startingVersion=1, maxFilesPerTrigger=1) is None
    # Every state of the copy lies between two consecutive versions of `out`: versions came in order.
    states = [set(ids_of(spark, out, v)) for v in versions(spark, out)]
    for v in versions(spark, copy):
        got = set(ids_of(spark, copy, v))
        assert any(states[k - 1] <= got <= states[k] if k else got <= states[0] for k in range(len(states))), v
    assert ids_of(spark, copy) == expected_ids(20)


def stream_copy(spark, source, out, checkpoint, **options):
    """Reads dataset `source` as a stream into dataset `out` until no data is left; returns the
    query's exception, if any."""
    reader = spark.readStream.format("fermion")
    for k, v in options.items():
        reader = reader.option(k, v)
    q = (reader.load(source).writeStream.format("fermion").option("checkpointLocation", checkpoint)
         .trigger(availableNow=True).start(out))
    try:
        q.awaitTermination(300)
    except Exception as e:  # noqa: BLE001 - the query's failure is what some tests look for
        return e
    return q.exception()


def ids_of(spark, path, version=None):
    reader = spark.read.format("fermion")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    return sorted(r.id for r in reader.load(path).select("id").collect())


def test_a_dataset_read_as_a_stream_in_version_order(spark, tmp_path):
    src, out, ck = str(tmp_path / "src"), str(tmp_path / "out"), str(tmp_path / "ck")
    spark.range(0, 100, 1, 2).write.format("fermion").save(src)  # version 1: two fragments
    assert stream_copy(spark, src, out, ck, maxFilesPerTrigger=1) is None
    assert ids_of(spark, out) == list(range(100))
    assert versions(spark, out) == [1, 2], "the starting version read whole, a fragment per micro-batch"
    spark.range(100, 150, 1, 1).write.format("fermion").mode("append").save(src)
    spark.range(150, 160, 1, 1).write.format("fermion").mode("append").save(src)
    FermionDataset(spark, src).compact()  # the same rows in new fragments: nothing new for the stream
    spark.range(160, 170, 1, 1).write.format("fermion").mode("append").save(src)
    assert stream_copy(spark, src, out, ck, maxFilesPerTrigger=1) is None
    assert ids_of(spark, out) == list(range(170)), "each appended row once, nothing of the compaction"
    # micro-batches followed the source's versions in order
    assert [ids_of(spark, out, v)[-1] for v in range(3, 6)] == [149, 159, 169]
    # a delete stops the stream unless told to skip it
    spark.sql(f"DELETE FROM fermion.`{src}` WHERE id < 10")
    spark.range(170, 175, 1, 1).write.format("fermion").mode("append").save(src)
    err = stream_copy(spark, src, out, ck)
    assert err is not None and "ignoreDeletes" in str(err), err
    assert ids_of(spark, out) == list(range(170))
    assert stream_copy(spark, src, out, str(tmp_path / "ck2"), startingVersion=7, ignoreDeletes="true") is None
    assert ids_of(spark, out) == list(range(170)) + list(range(170, 175))


def test_stream_options_starting_version_latest_changes_and_rows_per_trigger(spark, tmp_path):
    src = str(tmp_path / "src")
    spark.range(0, 10, 1, 1).write.format("fermion").save(src)
    out1, out2 = str(tmp_path / "o1"), str(tmp_path / "o2")
    assert stream_copy(spark, src, out1, str(tmp_path / "c1"), startingVersion="latest") is None
    assert not os.path.isdir(os.path.join(out1, "_versions")), "nothing after the start: nothing written"
    for k in range(3):
        spark.range(10 + 10 * k, 20 + 10 * k, 1, 1).write.format("fermion").mode("append").save(src)
    assert stream_copy(spark, src, out2, str(tmp_path / "c2"), startingVersion="2", maxRowsPerTrigger="15") is None
    assert ids_of(spark, out2) == list(range(10, 40))
    assert versions(spark, out2) == [1, 2, 3], "10-row fragments, one per micro-batch under 15 rows"
    spark.sql(f"UPDATE fermion.`{src}` SET id = id + 1000 WHERE id = 0")
    err = stream_copy(spark, src, out2, str(tmp_path / "c2"))
    assert err is not None and "ignoreChanges" in str(err), err
    out3 = str(tmp_path / "o3")
    assert stream_copy(spark, src, out3, str(tmp_path / "c3"), startingVersion="5", ignoreChanges="true") is None
    assert ids_of(spark, out3) == [1000], "the rows the update wrote"
    msg = error_of(lambda: spark.readStream.format("fermion").option("maxFilesPerTrigger", "0").load(src)
                   .writeStream.format("memory").queryName("bad").start().awaitTermination(30))
    assert "maxFilesPerTrigger" in msg, msg


def test_streaming_into_and_out_of_catalog_tables(spark, tmp_path, drop):
    source = str(tmp_path / "in")
    write_inputs(source, 0, 3)
    spark.sql(f"CREATE TABLE st_sink (id BIGINT, file INT) USING fermion LOCATION '{tmp_path / 't'}'")
    drop("st_sink")
    q = (spark.readStream.schema("id bigint, file int").json(source).writeStream
         .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).toTable("st_sink"))
    q.awaitTermination(300)
    assert q.exception() is None, q.exception()
    assert sorted(r.id for r in spark.table("st_sink").collect()) == expected_ids(3)
    q = (spark.readStream.table("st_sink").writeStream.format("fermion")
         .option("checkpointLocation", str(tmp_path / "ck2")).trigger(availableNow=True).start(str(tmp_path / "copy")))
    q.awaitTermination(300)
    assert q.exception() is None, q.exception()
    assert ids_of(spark, str(tmp_path / "copy")) == expected_ids(3)

"""Fermion datasets on S3, through Hadoop's S3A (hadoop-aws 3.5.0), against a local S3-compatible
server that the tests start (tests/s3_server.py: moto, which refuses a second `If-None-Match: *`
PUT with 412 like S3). The same commit-protocol checks as on the local file system
(test_datasets.py, and the Scala CommitProtocolSuite on local disk and HDFS): concurrent writer
processes, conflicting deletes, a killed writer, time travel, tags, cleanup; plus what is
particular to object stores: manifests published by conditional PUT, the latest version found
without listing, the typed error on a store without conditional writes, an external manifest
store, and the requests a 10,000-column read makes."""
import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from urllib.parse import unquote

import pytest
from pyspark.sql import functions as F

from conftest import ROOT, child_env, s3a_jars
from fermion_spark import errors as fermion_errors
from fermion_spark.dataset import FermionDataset

BUCKET = "fermion-test"


def s3_path(name="t"):
    return f"s3a://{BUCKET}/{name}-{uuid.uuid4().hex[:8]}"


def key_of(path):
    return path.split(f"s3a://{BUCKET}/", 1)[1]


def ids(df):
    return sorted(r[0] for r in df.select("id").collect())


def requests_on(reqs, key_prefix):
    """Requests naming an object under `key_prefix` (GET/HEAD/PUT/DELETE) or listing under it."""
    out = []
    for r in reqs:
        path = unquote(r["path"])
        query = unquote(r["query"])
        if path.startswith(f"/{BUCKET}/{key_prefix}") or (path.rstrip("/") == f"/{BUCKET}" and f"prefix={key_prefix}" in query):
            out.append(r)
    return out


def is_list(r):
    return r["method"] == "GET" and "list-type" in r["query"]


def test_write_read_delete_time_travel_on_s3(spark, s3):
    path = s3_path()
    spark.range(0, 1000, 1, 2).write.format("fermion").save(path)
    spark.range(1000, 1500, 1, 1).write.format("fermion").mode("append").save(path)
    ds = FermionDataset(spark, path)
    assert ds.delete("id % 10 = 0") == 150
    assert ids(spark.read.format("fermion").load(path)) == [i for i in range(1500) if i % 10]
    assert ids(spark.read.format("fermion").option("versionAsOf", 1).load(path)) == list(range(1000))
    ds.create_tag("first", 1)
    with pytest.raises(Exception, match="already exists"):
        ds.create_tag("first", 2)
    assert ids(spark.read.format("fermion").option("tag", "first").load(path)) == list(range(1000))
    assert [r.version for r in ds.versions().orderBy("version").collect()] == [1, 2, 3]

    # every manifest and tag was published with a conditional PUT, none through a rename (copy)
    s3.reset()
    spark.range(1500, 1600).write.format("fermion").mode("append").save(path)
    reqs = s3.requests()
    puts = [r for r in requests_on(reqs, key_of(path) + "/_versions/") if r["method"] == "PUT"]
    manifest_puts = [r for r in puts if r["path"].endswith(".manifest")]
    assert len(manifest_puts) == 1 and manifest_puts[0]["ifNoneMatch"] == "*", puts
    assert not [r for r in reqs if "x-amz-copy-source" in r["query"] or r["method"] == "COPY"]

    # the latest version is found without listing _versions/
    s3.reset()
    assert spark.read.format("fermion").load(path).count() == 1450
    reqs = s3.requests()
    version_lists = [r for r in requests_on(reqs, key_of(path) + "/_versions") if is_list(r)]
    assert not version_lists, version_lists
    print(f"[s3] latest-version read of a 4-version dataset: {len(requests_on(reqs, key_of(path) + '/_versions'))} "
          f"requests under _versions/, {len(reqs)} in all")


def test_cleanup_on_s3(spark, s3):
    path = s3_path()
    for i in range(4):
        spark.range(i * 100, i * 100 + 100, 1, 1).write.format("fermion").mode("append").save(path)
    ds = FermionDataset(spark, path)
    ds.delete("id < 50")
    ds.compact(target_rows=1000)
    ds.create_tag("two", 2)
    removed = ds.cleanup(retain_hours=0, allow_short_retention=True)
    assert removed["versions"] == 4 and removed["files"] > 0, removed
    assert [r.version for r in ds.versions().orderBy("version").collect()] == [2, 6]
    assert ids(spark.read.format("fermion").load(path)) == list(range(50, 400))
    assert ids(spark.read.format("fermion").option("tag", "two").load(path)) == list(range(200))
    with pytest.raises(fermion_errors.FermionVersionNotFoundError):
        spark.read.format("fermion").option("versionAsOf", 3).load(path).collect()
    spark.range(400, 410).write.format("fermion").mode("append").save(path)
    assert ds.latest_version() == 7 and spark.read.format("fermion").load(path).count() == 360


WRITER = textwrap.dedent("""
    import json, os, sys
    from pyspark.sql import SparkSession
    from fermion_spark import configure_spark_with_fermion
    path, worker, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    cfg = json.loads(os.environ["FERMION_TEST_S3"])
    b = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    jars = cfg["jars"]
    b = b.config("spark.jars", ",".join(jars)).config("spark.driver.extraClassPath", os.pathsep.join(jars))
    for k, v in cfg["settings"].items():
        b = b.config("spark.hadoop." + k, v)
    spark = configure_spark_with_fermion(b).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    from fermion_spark.dataset import FermionDataset
    from fermion_spark.errors import FermionCommitConflictError
    ds = FermionDataset(spark, path)
    for i in range(rounds):
        start = 1_000_000 + worker * 10_000 + i * 100
        spark.range(start, start + 100, 1, 1).write.format("fermion").mode("append").save(path)
        print("appended", start, flush=True)
        victim = worker * 100 + i  # a row of the shared first fragment: concurrent deletes conflict
        try:
            ds.delete(f"id = {victim}")
            print("deleted", victim, flush=True)
        except FermionCommitConflictError:
            print("conflict", victim, flush=True)
    spark.stop()
""")


def writer_env(s3, settings=None):
    return child_env({"FERMION_TEST_S3": json.dumps({"jars": s3a_jars(), "settings": {**s3.settings, **(settings or {})}})})


def test_concurrent_writer_processes_on_s3(spark, s3, tmp_path):
    """N writer processes x M rounds, each round an append (always compatible) and a delete of a
    row of one shared fragment (concurrent deletes of one fragment conflict): every append lands
    once, every reported delete took effect, every conflicting delete left its row."""
    writers, rounds = 2, 4  # each writer a PySpark JVM, the test's cost; two race for every version
    path = s3_path()
    spark.range(0, 1000, 1, 1).write.format("fermion").save(path)  # version 1: one fragment
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    procs = [subprocess.Popen([sys.executable, str(script), path, str(w), str(rounds)], env=writer_env(s3),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(writers)]
    outs = [p.communicate(timeout=900) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
    expected = set(range(1000))
    appended = deleted = conflicts = 0
    kept = []
    for out, _ in outs:
        for line in out.splitlines():
            word, n = line.split()
            n = int(n)
            if word == "appended":
                expected |= set(range(n, n + 100))
                appended += 1
            elif word == "deleted":
                expected.discard(n)
                deleted += 1
            else:
                kept.append(n)
                conflicts += 1
    assert appended == writers * rounds and deleted + conflicts == writers * rounds
    got = ids(spark.read.format("fermion").load(path))
    assert len(got) == len(set(got)), "no row twice"
    assert set(got) == expected, "every append once, every reported delete applied"
    assert all(k in got for k in kept), "a conflicting delete committed nothing"
    ds = FermionDataset(spark, path)
    latest = ds.latest_version()
    assert latest == 1 + appended + deleted, (latest, appended, deleted)
    history = ds.versions().orderBy("version").collect()
    assert [r.version for r in history] == list(range(1, latest + 1))
    assert history[0].operation == "create" and sum(1 for r in history if r.operation == "append") == appended
    for v in range(1, latest + 1):  # every version stays readable
        spark.read.format("fermion").option("versionAsOf", v).load(path).count()
    print(f"[s3] {writers} writer processes x {rounds} rounds: {appended} appends and {deleted} deletes committed, "
          f"{conflicts} deletes refused as conflicts; latest version {latest}, {len(got)} rows as expected")


KILLED = textwrap.dedent("""
    import json, os, sys
    from pyspark.sql import SparkSession
    from fermion_spark import configure_spark_with_fermion
    path = sys.argv[1]
    cfg = json.loads(os.environ["FERMION_TEST_S3"])
    b = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
    jars = cfg["jars"]
    b = b.config("spark.jars", ",".join(jars)).config("spark.driver.extraClassPath", os.pathsep.join(jars))
    for k, v in cfg["settings"].items():
        b = b.config("spark.hadoop." + k, v)
    spark = configure_spark_with_fermion(b).getOrCreate()
    i = 0
    while True:
        spark.range(i * 10_000, (i + 1) * 10_000, 1, 2).selectExpr("id", "uuid() as u").write.format("fermion").mode("append").save(path)
        print("committed", i, flush=True)
        i += 1
""")


def test_a_killed_writer_leaves_every_version_readable_on_s3(spark, s3, tmp_path):
    path = s3_path()
    spark.range(0).selectExpr("id", "uuid() as u").write.format("fermion").save(path)
    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    errors = open(tmp_path / "killed.err", "w")
    p = subprocess.Popen([sys.executable, str(script), path], env=writer_env(s3),
                         stdout=subprocess.PIPE, stderr=errors, text=True)
    committed = 0
    deadline = time.time() + 300
    while committed < 3 and time.time() < deadline:  # kill it while it writes its fourth version
        line = p.stdout.readline()
        if not line:
            break
        committed += line.startswith("committed")
    time.sleep(1.5)
    p.kill()
    p.communicate()
    errors.close()
    assert committed >= 3, (tmp_path / "killed.err").read_text()[-3000:]
    df = spark.read.format("fermion").load(path)
    n = df.count()
    assert n % 10_000 == 0 and n >= 30_000
    assert df.select(F.countDistinct("id")).collect()[0][0] == n
    v = FermionDataset(spark, path).latest_version()
    for old in range(1, v + 1):
        spark.read.format("fermion").option("versionAsOf", old).load(path).count()
    spark.range(10).selectExpr("id", "uuid() as u").write.format("fermion").mode("append").save(path)  # the next writer carries on
    assert FermionDataset(spark, path).latest_version() == v + 1


def test_store_without_conditional_writes_needs_an_external_store(spark, s3, tmp_path):
    bucket = s3.create_bucket("fermion-noncond")
    hconf = spark.sparkContext._jsc.hadoopConfiguration()
    # S3A's switch for stores without If-None-Match: as S3A sees them, this bucket has no conditional create
    hconf.set(f"fs.s3a.bucket.{bucket}.create.conditional.enabled", "false")
    path = f"s3a://{bucket}/t-{uuid.uuid4().hex[:8]}"
    with pytest.raises(fermion_errors.FermionCommitStoreError, match="fermion.commitStore"):
        spark.range(10).write.format("fermion").save(path)
    assert not spark.sparkContext._jvm.org.apache.hadoop.fs.Path(path + "/_versions").getFileSystem(hconf).exists(
        spark.sparkContext._jvm.org.apache.hadoop.fs.Path(path + "/data")), "refused before any task wrote"
    store = tmp_path / "manifest-store"
    hconf.set("fermion.commitStore", "external")
    hconf.set("fermion.externalStore.dir", store.as_uri())
    try:
        spark.range(0, 100).write.format("fermion").save(path)
        spark.range(100, 200).write.format("fermion").mode("append").save(path)
        ds = FermionDataset(spark, path)
        ds.delete("id < 10")
        assert ids(spark.read.format("fermion").load(path)) == list(range(10, 200))
        assert ds.latest_version() == 3
        entries = list((store).rglob("*.manifest"))
        assert len(entries) == 3, entries  # the store holds one entry per version
    finally:
        hconf.unset("fermion.commitStore")
        hconf.unset("fermion.externalStore.dir")


def test_ten_thousand_column_read_makes_a_bounded_number_of_requests(spark, s3):
    """A 10,000-column dataset of one data file on S3 (250 random doubles per column, about 2 KB a
    column, one 20 MB stripe): count the S3 requests of reads of 1, 10 and 100 columns spread evenly
    over the file. The 10 are 2 MB apart, so each is a read of its own; the 100 are 200 KB apart,
    within the 1 MiB coalescing gap, so they merge into few reads.

    Counted with S3A's classic input stream (`fs.s3a.input.stream.type=classic`, set for this bucket
    only), which sends Fermion's reads as they are. Hadoop 3.5's default stream, the Analytics
    Accelerator Library, adds a HEAD per file, reads in 8 MB blocks and caches them across streams
    of one file system, so its counts depend on what was read before and say nothing of Fermion's."""
    hconf = spark.sparkContext._jsc.hadoopConfiguration()
    bucket = "fermion-classic"
    hconf.set(f"fs.s3a.bucket.{bucket}.input.stream.type", "classic")
    s3.create_bucket(bucket)
    cols = 10_000
    df = spark.range(0, 250, 1, 1).selectExpr("id", *[f"rand({i}) AS c{i}" for i in range(1, cols)])

    def measure(path, ks, show=()):
        df.write.format("fermion").option("compression", "none").option("stripeBytes", "256m").save(path)
        data = path.split("/", 3)[3] + "/data/"

        def read(k):
            columns = [f"c{1 + i * (cols - 1) // k}" for i in range(k)]
            s3.reset()
            rows = spark.read.format("fermion").load(path).select(*columns).collect()
            assert len(rows) == 250 and len(rows[0]) == k
            reqs = s3.requests()
            on_data = [r for r in reqs if data in unquote(r["path"])]
            if k in show:
                for r in reqs:
                    print("[s3]   ", k, r["method"], unquote(r["path"]).rsplit("/", 2)[-2:], unquote(r["query"])[-30:], r["range"])
            return {"all": len(reqs), "data file": len(on_data), "data HEAD": sum(r["method"] == "HEAD" for r in on_data),
                    "metadata": len(reqs) - len(on_data)}

        read(1)  # warm up: the first query of a path also sets up the file system
        return {k: read(k) for k in ks}

    counts = measure(f"s3a://{bucket}/wide-{uuid.uuid4().hex[:8]}", (1, 10, 100), show=(1,))
    per_file = counts[1]["data file"] - 1
    per_column = (counts[10]["data file"] - counts[1]["data file"]) / 9
    print(f"[s3] classic stream, requests per query: {counts}")
    print(f"[s3] per file opened: {per_file} requests besides the column's; per column read (columns 2 MB apart): "
          f"{per_column:.2f}; 100 columns 200 KB apart: {counts[100]['data file']} requests on the data file; "
          f"dataset metadata per query: {counts[1]['metadata']} requests")
    assert counts[1]["data HEAD"] == 0, "the length comes from the listing: no HEAD per file"
    assert per_file <= 2, counts  # the tail (footer, schema, CIT, CMBs near the end), maybe one CMB read
    assert per_column <= 1.0, counts  # its chunk; the CMBs come in one read
    assert counts[100]["data file"] <= 100 / 4, counts  # merged reads
    assert counts[100]["metadata"] == counts[1]["metadata"] <= 6, "dataset metadata requests do not grow with columns"

"""End-to-end tests: PySpark driving the installed fermion-spark wheel (jar inside)."""
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from fermion_spark import configure_spark_with_fermion


ROOT = Path(__file__).resolve().parent.parent


def s3a_jars():
    """hadoop-aws 3.5.0 and the AWS SDK v2 modules it needs, resolved from Maven Central once by
    dev/s3a-jars (cached in build/). Test-only: the Fermion jar does not ship them."""
    out = subprocess.run([str(ROOT / "dev" / "s3a-jars")], check=True, capture_output=True, text=True).stdout
    jars = [line for line in out.splitlines() if line.endswith(".jar")]
    assert any("hadoop-aws-" in j for j in jars), out
    return jars


def child_env(extra=None):
    """The environment of the processes a test starts (writers, CLI runs, a local cluster): their
    short-lived JVMs start sooner and leave more of the machine's two cores to the rest of the
    tests with the C1 compiler only and the serial collector. The session's own JVM, which runs
    most tests, also compiles with C1 only and uses the parallel collector (see the spark fixture)."""
    env = dict(os.environ)
    env["JDK_JAVA_OPTIONS"] = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    env.update(extra or {})
    return env


def with_s3a(builder, jars):
    """Puts the S3A jars on spark.jars and the driver and executor class paths."""
    return (builder.config("spark.jars", ",".join(jars))
            .config("spark.driver.extraClassPath", os.pathsep.join(jars))
            .config("spark.executor.extraClassPath", os.pathsep.join(jars)))


@pytest.fixture(scope="session")
def spark():
    warehouse = tempfile.mkdtemp(prefix="fermion-warehouse-")
    builder = (with_s3a(SparkSession.builder, s3a_jars()).master("local[2]").appName("fermion-e2e")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.warehouse.dir", warehouse)
               .config("spark.sql.parquet.compression.codec", "zstd")
               # C1 only: on test-sized data C2's compilations of Spark cost more CPU than they
               # save (the suite alone: 625 -> 555 s on two cores). The parallel collector instead
               # of G1: the suite alone, 574 -> 522 s.
               .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC"))
    session = configure_spark_with_fermion(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


class S3Server:
    """The local S3-compatible server (tests/s3_server.py: moto) and the S3A settings that reach it."""

    def __init__(self, endpoint, proc):
        self.endpoint = endpoint
        self.proc = proc
        self.settings = {
            "fs.s3a.endpoint": endpoint,
            "fs.s3a.endpoint.region": "us-east-1",
            "fs.s3a.path.style.access": "true",
            "fs.s3a.connection.ssl.enabled": "false",
            "fs.s3a.access.key": "testing",
            "fs.s3a.secret.key": "testing",
            "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        }

    def create_bucket(self, name):
        import boto3
        boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id="testing",
                     aws_secret_access_key="testing", region_name="us-east-1").create_bucket(Bucket=name)
        return name

    def requests(self):
        """The S3 requests received since the last reset: dicts of method, path, query, range."""
        return json.load(urllib.request.urlopen(self.endpoint + "/__fermion__/requests"))

    def reset(self):
        urllib.request.urlopen(urllib.request.Request(self.endpoint + "/__fermion__/reset", method="POST")).read()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def s3(spark):
    """A local S3 server started for this test session, with a bucket `fermion-test`; the Spark
    session's Hadoop configuration reaches it through S3A."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "s3_server.py"), str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready", "the S3 server did not start"
        server = S3Server(f"http://127.0.0.1:{port}", proc)
        server.create_bucket("fermion-test")
        hconf = spark.sparkContext._jsc.hadoopConfiguration()
        for k, v in server.settings.items():
            hconf.set(k, v)
        yield server
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def tmp_table(tmp_path):
    """A fresh path for a table (not created)."""
    return lambda name="t": str(tmp_path / f"{name}-{uuid.uuid4().hex[:8]}")


def normalize(value):
    """Makes collected values comparable: NaN equals NaN, -0.0 differs from 0.0."""
    if isinstance(value, float):
        if math.isnan(value):
            return ("nan",)
        return ("float", value, math.copysign(1.0, value))
    if isinstance(value, (bytes, bytearray)):
        return ("bytes", bytes(value))
    if isinstance(value, list):
        return [normalize(v) for v in value]
    if isinstance(value, tuple):  # Row (struct)
        return tuple(normalize(v) for v in value)
    if isinstance(value, dict):
        return sorted(((normalize(k), normalize(v)) for k, v in value.items()), key=repr)
    return value


def rows_of(df):
    """Collected rows as sorted, normalized tuples."""
    return sorted((tuple(normalize(v) for v in r) for r in df.collect()), key=repr)


def assert_same_as_parquet(spark, df, fermion_path, parquet_path, **fermion_options):
    writer = df.write.format("fermion")
    for k, v in fermion_options.items():
        writer = writer.option(k, v)
    writer.save(fermion_path)
    df.write.parquet(parquet_path)
    f = spark.read.format("fermion").load(fermion_path)
    p = spark.read.parquet(parquet_path)
    # Parquet makes every nested field nullable; Fermion keeps the DataFrame's nullability.
    assert f.schema.simpleString() == p.schema.simpleString()
    assert f.schema.simpleString() == df.schema.simpleString()
    assert rows_of(f) == rows_of(p)
    return f


def error_of(f):
    """The message of the exception `f()` raises."""
    with pytest.raises(Exception) as info:
        f()
    return str(info.value)


@pytest.fixture
def drop(spark):
    """Register catalog table names to drop after the test."""
    names = []
    yield names.append
    for n in names:
        spark.sql(f"DROP TABLE IF EXISTS {n}")


def batch_scans(df):
    """The BatchScanExec nodes of `df`'s executed plan, inside adaptive query stages and reused
    exchanges too (`collectLeaves` stops at an adaptive plan)."""
    found = []

    def walk(p):
        cls = p.getClass().getSimpleName()
        if cls == "BatchScanExec":
            found.append(p)
        if cls == "AdaptiveSparkPlanExec":
            walk(p.executedPlan())
        elif cls.endswith("QueryStageExec"):
            walk(p.plan())
        elif cls == "ReusedExchangeExec":
            walk(p.child())
        children = p.children()
        for i in range(children.size()):
            walk(children.apply(i))

    walk(df._jdf.queryExecution().executedPlan())
    return found

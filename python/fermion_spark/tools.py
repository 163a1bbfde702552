"""Migration tools: Parquet <-> Fermion conversion and metadata inspection, from Python.

Python does no I/O here: with a SparkSession the work runs on its JVM (Spark jobs for
``convert``, the core library for ``inspect``); without one, the ``fermion`` command launches a
JVM (``spark-submit`` from PySpark for ``convert``, the ``java`` launcher with PySpark's jars for
``inspect``, which needs no Spark)::

    from fermion_spark import tools
    result = tools.convert(spark, "/data/events.parquet", "/data/events")      # dict: rows, bytes, seconds, ...
    tools.convert(spark, "/data/events", "/data/events-v3.parquet", to="parquet", version=3)
    report = tools.inspect("/data/events/data/<uuid>.fermion")                 # dict (the --json document)
"""
import json
import os
import shutil
import subprocess


class FermionToolError(RuntimeError):
    """A ``fermion`` command failed; the message is the JVM's."""


def _array(spark, items):
    gateway = spark.sparkContext._gateway
    arr = gateway.new_array(gateway.jvm.java.lang.String, len(items))
    for i, v in enumerate(items):
        arr[i] = v
    return arr


def convert_args(source=None, destination=None, to=None, table=None, mode="error", options=None,
                 read_options=None, version=None, tag=None, timestamp=None, in_place=False,
                 delete_source=False, progress=True, progress_interval=5.0):
    """The ``fermion convert`` arguments for these settings."""
    args = []
    if to:
        args += ["--to", to]
    if table:
        args += ["--table", table]
    if in_place:
        args.append("--in-place")
    if delete_source:
        args.append("--delete-source")
    args += ["--mode", mode]
    if version is not None:
        args += ["--version", str(version)]
    if tag is not None:
        args += ["--tag", tag]
    if timestamp is not None:
        args += ["--timestamp", str(timestamp)]
    for k, v in (options or {}).items():
        args += ["--option", f"{k}={v}"]
    for k, v in (read_options or {}).items():
        args += ["--read-option", f"{k}={v}"]
    if not progress:
        args.append("--quiet")
    args += ["--progress-interval", str(progress_interval)]
    args += [p for p in (source, destination) if p is not None]
    return args


def convert(spark, source=None, destination=None, **kwargs):
    """Converts Parquet (a file, directory, partitioned directory, or ``table=`` name) to a Fermion
    dataset, or a Fermion dataset (``version=`` / ``tag=`` / ``timestamp=``) to Parquet, on
    ``spark``. Keyword arguments are those of :func:`convert_args` (``to``, ``mode``,
    ``options`` — Fermion write options or Parquet writer options —, ``in_place``, ...). Progress
    lines go to the JVM's stderr. Returns the summary as a dict (``rows``, ``input_bytes``,
    ``output_bytes``, ``seconds``, ``version``, ...)."""
    from fermion_spark.errors_bridge import call
    args = convert_args(source, destination, **kwargs)
    jvm = spark.sparkContext._jvm
    return json.loads(call(lambda: jvm.io.fermion.spark.tools.FermionConvert.runArgs(
        spark._jsparkSession, _array(spark, args))))


def inspect_args(path, json_output=True, columns=None, stripes=None, page_headers=True, version=None,
                 chunks=False, pages=False):
    args = [path]
    if json_output:
        args.append("--json")
    for c in columns or ():
        args += ["--column", c]
    for s in stripes or ():
        args += ["--stripe", str(s)]
    if not page_headers:
        args.append("--no-page-headers")
    if version is not None:
        args += ["--version", str(version)]
    if chunks:
        args.append("--chunks")
    if pages:
        args.append("--pages")
    return args


def inspect(path, spark=None, json_output=True, **kwargs):
    """The metadata of a Fermion file or dataset: a dict (the ``--json`` document, see
    section 2 of docs/migration.md) or, with ``json_output=False``, the text report. With ``spark`` the session's
    JVM reads it; otherwise a ``java`` process with PySpark's jars does."""
    args = inspect_args(path, json_output, **kwargs)
    if spark is not None:
        from fermion_spark.errors_bridge import call
        jvm = spark.sparkContext._jvm
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        text = call(lambda: jvm.io.fermion.core.inspect.InspectCommand.renderArgs(_array(spark, args), conf))
    else:
        proc = subprocess.run(java_command("io.fermion.core.inspect.InspectCommand", args),
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise FermionToolError(proc.stderr.strip() or f"fermion inspect exited with {proc.returncode}")
        text = proc.stdout
    return json.loads(text) if json_output else text


def pyspark_home():
    import pyspark
    return os.path.dirname(os.path.abspath(pyspark.__file__))


def java_executable():
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return os.path.join(home, "bin", "java")
    found = shutil.which("java")
    if not found:
        raise FermionToolError("no java found: install JDK 17 or set JAVA_HOME")
    return found


def java_command(main_class, args):
    """``java`` running ``main_class`` of the Fermion jar with PySpark's jars (Arrow, Hadoop,
    Jackson, Scala) on the class path."""
    from fermion_spark import jar_path
    classpath = os.pathsep.join([jar_path(), os.path.join(pyspark_home(), "jars", "*")])
    return [java_executable(), "-Xss4m", "--add-opens=java.base/java.nio=ALL-UNNAMED",
            f"-Dlog4j.configurationFile={LOG4J_CONFIG}", "-cp", classpath,
            main_class] + list(args)


LOG4J_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2-fermion.properties")

SUBMIT_FLAGS = ("--master", "--conf", "--driver-memory", "--executor-memory", "--executor-cores",
                "--num-executors", "--total-executor-cores", "--deploy-mode", "--packages", "--jars")


def spark_submit_env(command_line):
    """The environment for spark-submit: a local master binds to the loopback address unless
    SPARK_LOCAL_IP says otherwise (no warning about the host name)."""
    env = dict(os.environ)
    master = command_line[command_line.index("--master") + 1] if "--master" in command_line else "local[*]"
    if master.startswith("local") and "SPARK_LOCAL_IP" not in env:
        env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return env


def spark_submit_command(command, args):
    """``spark-submit`` (PySpark's own) running ``fermion <command> args`` from the Fermion jar.
    spark-submit's options among ``args`` (``--master``, ``--conf K=V``, ``--driver-memory`` ...)
    go to spark-submit; the master defaults to ``local[*]``."""
    from fermion_spark import jar_path
    submit, rest = [], []
    i = 0
    args = list(args)
    while i < len(args):
        a = args[i]
        flag = a.split("=", 1)[0]
        if flag in SUBMIT_FLAGS:
            if "=" in a and flag != "--conf":
                submit += [flag, a.split("=", 1)[1]]
                i += 1
            elif i + 1 < len(args):
                submit += [a, args[i + 1]]
                i += 2
            else:
                raise FermionToolError(f"{a} needs a value")
        else:
            rest.append(a)
            i += 1
    if "--master" not in submit:
        submit += ["--master", "local[*]"]
    submit += ["--driver-java-options", f"-Dlog4j.configurationFile={LOG4J_CONFIG}"]
    confs = " ".join(submit)
    if "spark.log.level" not in confs:
        submit += ["--conf", "spark.log.level=WARN"]
    if "spark.ui.showConsoleProgress" not in confs:
        submit += ["--conf", "spark.ui.showConsoleProgress=false"]
    script = os.path.join(pyspark_home(), "bin", "spark-submit")
    return [script, "--class", "io.fermion.spark.tools.FermionCli"] + submit + [jar_path(), command] + rest

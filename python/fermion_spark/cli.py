"""``fermion`` (also ``fermion-spark``): the package's command line.

    fermion convert ...      Parquet <-> Fermion on Spark (``fermion convert --help``)
    fermion inspect PATH     a Fermion file's or dataset's metadata (``fermion inspect --help``)
    fermion jar              print the plugin jar's path (for spark-submit --jars)
    fermion version          print fermion-spark, Spark line and installed PySpark versions
    fermion demo ...         run the demo job (see ``fermion demo --help``)

``convert`` runs ``spark-submit --class io.fermion.spark.tools.FermionCli`` from PySpark's own bin
(local[*] unless ``--master`` says otherwise; ``--conf``, ``--driver-memory`` and
``--executor-memory`` go to spark-submit too); ``inspect`` runs the core library on ``java`` with
PySpark's jars (no Spark). Python itself reads and writes nothing.
"""
import subprocess
import sys


def _run(cmd, env=None):
    try:
        return subprocess.call(cmd, env=env)
    except KeyboardInterrupt:
        return 130


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv.pop(0) if argv else "help"
    import fermion_spark
    if command == "jar":
        print(fermion_spark.jar_path())
    elif command == "version":
        try:
            import pyspark
            installed = pyspark.__version__
        except ImportError:
            installed = "not installed"
        print(f"fermion-spark {fermion_spark.__version__} for Spark {fermion_spark.SPARK_VERSION}.x "
              f"(PySpark {installed})")
    elif command == "demo":
        from fermion_spark import demo
        demo.main(argv)
    elif command == "inspect":
        from fermion_spark import tools
        return _run(tools.java_command("io.fermion.core.inspect.InspectCommand", argv))
    elif command == "convert":
        from fermion_spark import tools
        fermion_spark.check_pyspark_version()
        cmd = tools.spark_submit_command("convert", argv)
        return _run(cmd, tools.spark_submit_env(cmd))
    else:
        print(__doc__)
        return 0 if command in ("help", "-h", "--help") else 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

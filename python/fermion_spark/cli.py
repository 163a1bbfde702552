"""``fermion-spark``: the package's command line.

    fermion-spark jar        print the plugin jar's path (for spark-submit --jars)
    fermion-spark version    print fermion-spark, Spark line and installed PySpark versions
    fermion-spark demo ...   run the demo job (see ``fermion-spark demo --help``)
"""
import sys


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
    else:
        print(__doc__)
        return 0 if command in ("help", "-h", "--help") else 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

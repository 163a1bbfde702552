"""Fermion for PySpark: the plugin jar, shipped inside this package, and session configuration.

Python never reads or writes Fermion bytes; Spark's JVM does, through the jar.
"""
import glob
import os

__version__ = "0.1.0"

#: The PySpark (and Spark) line this jar is built for.
SPARK_VERSION = "4.3"

#: Fermion's extension of Spark's session catalog (SQL time travel and ALTER TABLE on Fermion tables).
SESSION_CATALOG = "io.fermion.spark.catalog.FermionSessionCatalog"

_JAR_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jars")


class FermionSetupError(RuntimeError):
    """The environment cannot run Fermion: no jar in the package, or the wrong PySpark."""


def jar_path() -> str:
    """Absolute path of the Fermion assembly jar inside this package.

    Use it with ``spark-submit --jars $(fermion-spark jar)`` or ``spark.jars``.
    """
    jars = glob.glob(os.path.join(_JAR_DIR, "fermion-spark-assembly_2.13-*.jar"))
    if len(jars) != 1:
        raise FermionSetupError(
            f"expected one Fermion assembly jar in {_JAR_DIR}, found {len(jars)}; "
            "install fermion-spark from a wheel or with `pip install ./python` from the repository")
    return jars[0]


def check_pyspark_version(version: str = None) -> None:
    """Raises FermionSetupError unless the installed PySpark is 4.3.x."""
    if version is None:
        try:
            import pyspark
        except ImportError as e:
            raise FermionSetupError(
                f"fermion-spark needs PySpark {SPARK_VERSION}.x: pip install 'fermion-spark[pyspark]'") from e
        version = pyspark.__version__
    parts = version.split(".")
    if ".".join(parts[:2]) != SPARK_VERSION:
        raise FermionSetupError(
            f"fermion-spark {__version__} is built for Spark/PySpark {SPARK_VERSION}.x (Scala 2.13), "
            f"but PySpark {version} is installed; install pyspark=={SPARK_VERSION}.0")


def _install_errors():
    """PySpark raises Fermion's JVM errors as fermion_spark.errors classes (one-line messages)."""
    try:
        from fermion_spark import errors
    except ImportError:  # no PySpark: check_pyspark_version says so when the session is configured
        return
    errors.install()


_install_errors()


def _append(existing, value, sep):
    items = [x for x in (existing or "").split(sep) if x]
    if value not in items:
        items.append(value)
    return sep.join(items)


def configure_spark_with_fermion(builder):
    """Returns ``builder`` configured to load Fermion.

    Adds the jar to ``spark.jars`` (shipped to executors) and to the driver and executor class
    paths, so that ``format("fermion")`` and ``USING fermion`` resolve everywhere::

        from pyspark.sql import SparkSession
        from fermion_spark import configure_spark_with_fermion

        spark = configure_spark_with_fermion(
            SparkSession.builder.master("local[*]")).getOrCreate()
        spark.range(5).write.format("fermion").save("/tmp/fermion-demo")

    It also installs Fermion's session catalog extension as ``spark_catalog`` (unless another one is
    configured), which gives tables ``USING fermion`` managed tables, atomic ``CREATE OR REPLACE
    TABLE ... AS SELECT``, SQL time travel (``VERSION AS OF`` / ``TIMESTAMP AS OF``) and
    ``ALTER TABLE ... ADD COLUMNS / DROP COLUMN / RENAME COLUMN``; every other table is Spark's own
    catalog's. Spark loads Fermion's session extensions (``DESCRIBE HISTORY``, ``OPTIMIZE``,
    ``VACUUM``, ``RESTORE``, tags) from the jar by itself.

    Call it before ``getOrCreate()``: a running JVM cannot gain the jar afterwards.
    Raises FermionSetupError when the installed PySpark is not 4.3.x or the jar is missing.
    """
    check_pyspark_version()
    jar = jar_path()
    options = getattr(builder, "_options", {})
    builder = builder.config("spark.jars", _append(options.get("spark.jars"), jar, ","))
    builder = builder.config(
        "spark.driver.extraClassPath", _append(options.get("spark.driver.extraClassPath"), jar, os.pathsep))
    builder = builder.config(
        "spark.executor.extraClassPath", _append(options.get("spark.executor.extraClassPath"), jar, os.pathsep))
    if "spark.sql.catalog.spark_catalog" not in options:
        builder = builder.config("spark.sql.catalog.spark_catalog", SESSION_CATALOG)
    return builder


__all__ = ["configure_spark_with_fermion", "jar_path", "check_pyspark_version", "FermionSetupError",
           "__version__", "SPARK_VERSION"]

"""The wheel carries the plugin jar, and the jar carries Fermion but none of Spark's libraries."""
import glob
import os
import sysconfig
import zipfile

import pytest

import fermion_spark
from fermion_spark import FermionSetupError, check_pyspark_version, cli, jar_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_package_is_installed_from_the_wheel_not_the_source_tree():
    site = sysconfig.get_paths()["purelib"]
    assert os.path.realpath(fermion_spark.__file__).startswith(os.path.realpath(site))
    assert os.path.dirname(jar_path()).startswith(os.path.dirname(os.path.realpath(fermion_spark.__file__)))


def test_wheel_contains_the_jar():
    wheels = glob.glob(os.path.join(ROOT, "build", "wheels", "fermion_spark-*.whl"))
    assert len(wheels) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert any(n.startswith("fermion_spark/jars/fermion-spark-assembly_2.13-") and n.endswith(".jar") for n in names)


def test_jar_holds_fermion_only():
    names = zipfile.ZipFile(jar_path()).namelist()
    assert "io/fermion/spark/FermionDataSource.class" in names
    assert "io/fermion/core/read/FermionFileReader.class" in names
    services = zipfile.ZipFile(jar_path()).read("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister")
    assert b"io.fermion.spark.FermionDataSource" in services
    # Fermion's own bridges into Spark-internal APIs live in Spark's namespace; nothing of Spark does.
    ours = ("org/apache/spark/fermion/", "org/apache/spark/sql/fermion/")
    for provided in ("org/apache/spark/", "scala/", "org/apache/arrow/", "org/apache/hadoop/", "com/github/luben/",
                     "org/roaringbitmap/"):
        assert not any(n.startswith(provided) and not n.startswith(ours) and not n.endswith("/") for n in names), provided


def test_version_check():
    check_pyspark_version("4.3.0")
    check_pyspark_version("4.3.2")
    for wrong in ("3.5.1", "4.2.0", "4.10.0"):
        with pytest.raises(FermionSetupError, match="4.3"):
            check_pyspark_version(wrong)


def test_configure_adds_the_jar_everywhere():
    class Builder:
        def __init__(self):
            self._options = {"spark.jars": "/other.jar"}

        def config(self, k, v):
            self._options[k] = v
            return self

    b = fermion_spark.configure_spark_with_fermion(Builder())
    assert b._options["spark.jars"] == "/other.jar," + jar_path()
    assert b._options["spark.driver.extraClassPath"] == jar_path()
    assert b._options["spark.executor.extraClassPath"] == jar_path()
    assert b._options["spark.sql.catalog.spark_catalog"] == fermion_spark.SESSION_CATALOG
    other = Builder()
    other._options["spark.sql.catalog.spark_catalog"] = "my.Catalog"
    assert fermion_spark.configure_spark_with_fermion(other)._options["spark.sql.catalog.spark_catalog"] == "my.Catalog"


def test_cli(capsys):
    assert cli.main(["jar"]) == 0
    assert capsys.readouterr().out.strip() == jar_path()
    assert cli.main(["version"]) == 0
    assert "PySpark 4.3.0" in capsys.readouterr().out
    assert cli.main(["nonsense"]) == 2

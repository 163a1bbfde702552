"""Builds the wheel with the Fermion assembly jar inside it.

From a source checkout, the jar is built with the repository's own sbt bootstrap (../dev/sbt)
and copied into fermion_spark/jars/. Set FERMION_SKIP_JAR_BUILD=1 to package the jar already in
fermion_spark/jars/ (the repository's scripts do this after building it themselves).
"""
import glob
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
JAR_DIR = os.path.join(HERE, "fermion_spark", "jars")
JAR_GLOB = "fermion-spark-assembly_2.13-*.jar"


def _packaged_jars():
    return glob.glob(os.path.join(JAR_DIR, JAR_GLOB))


def _build_jar():
    sbt = os.path.join(REPO, "dev", "sbt")
    if not os.path.exists(sbt):
        raise RuntimeError(
            "fermion_spark/jars/ holds no assembly jar and this is not a source checkout "
            "(no ../dev/sbt): build from the repository or install a published wheel")
    # pip's isolated build environment injects PYTHONPATH (with a sitecustomize that hides other
    # site-packages); the repository's own .venv must not inherit it.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME")}
    subprocess.run([sbt, "sparkConnector/assembly"], cwd=REPO, check=True, stdin=subprocess.DEVNULL, env=env)
    built = glob.glob(os.path.join(REPO, "spark-connector", "target", "scala-2.13", JAR_GLOB))
    if len(built) != 1:
        raise RuntimeError(f"expected one assembly jar after the build, found {built}")
    os.makedirs(JAR_DIR, exist_ok=True)
    for old in _packaged_jars():
        os.remove(old)
    shutil.copy2(built[0], JAR_DIR)


class BuildPyWithJar(build_py):
    def run(self):
        if os.environ.get("FERMION_SKIP_JAR_BUILD") != "1" or not _packaged_jars():
            _build_jar()
        if len(_packaged_jars()) != 1:
            raise RuntimeError(f"expected exactly one jar in {JAR_DIR}, found {_packaged_jars()}")
        super().run()


setup(cmdclass={"build_py": BuildPyWithJar})

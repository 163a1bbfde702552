"""Fermion's errors as Python exceptions.

An error raised by Fermion in the JVM (a damaged file, a commit conflict, a version that does not
exist, ...) reaches PySpark as one of the classes below, with Fermion's one-line message, instead of
a ``Py4JJavaError`` carrying the whole Java stack trace. This works for every call into the JVM:
DataFrame actions (``collect()``, ``save()``, ...), ``spark.sql(...)`` and ``FermionDataset``
methods, and also when the error happened in a task and Spark wrapped it in a job failure::

    from fermion_spark.errors import FermionCommitConflictError, FermionError

    try:
        spark.sql("DELETE FROM events WHERE day < '2026-01-01'")
    except FermionCommitConflictError:
        ...  # another job changed the same rows: nothing was committed, run it again
    except FermionError as e:
        print(e)  # one line, e.g. "version 9 does not exist (versions: 1 to 3) [dataset=...]"

Every class derives from :class:`FermionError`, which derives from PySpark's ``CapturedException``
(so ``getCondition()`` and the JVM stack trace, with ``spark.sql.pyspark.jvmStacktrace.enabled``,
are there as for Spark's own errors). The hierarchy mirrors the JVM's:

- ``FermionFileError``: a data file cannot be read — ``InvalidFermionFileError`` (not Fermion,
  truncated, inconsistent), ``FermionOffsetOutOfRangeError``, ``FermionChecksumError``,
  ``UnsupportedFermionVersionError``; the message names the file and the byte offset.
- ``FermionDatasetError``: the table layer — ``FermionCommitConflictError`` (a concurrent
  incompatible commit, or a dataset created by another job meanwhile: nothing was committed),
  ``FermionVersionNotFoundError`` (no such version, time or tag), ``InvalidFermionDatasetError``
  (a damaged manifest, transaction or deletion file), ``FermionDatasetNotFoundError`` (no dataset
  at the path), ``FermionRowNotFoundError`` (a row taken by position, id or address that the
  version does not hold), ``FermionCommitStoreError`` (storage without a safe way to commit).

Importing ``fermion_spark`` installs the conversion (:func:`install`); it wraps PySpark's own
conversion of JVM exceptions and changes nothing for other errors.
"""
from pyspark.errors.exceptions.captured import CapturedException


class FermionError(CapturedException):
    """Base of every Fermion error raised in the JVM."""


class FermionFileError(FermionError):
    """A Fermion data file cannot be read; the message names the file and the offset."""


class InvalidFermionFileError(FermionFileError):
    """Not a Fermion file, truncated, or metadata that contradicts itself."""


class FermionOffsetOutOfRangeError(FermionFileError):
    """A read would go past the end of the file (truncated, or a corrupt offset)."""


class FermionChecksumError(FermionFileError):
    """A page or metadata CRC32 does not match: the file is corrupt."""


class UnsupportedFermionVersionError(FermionFileError):
    """The file was written by another major format version."""


class FermionDatasetError(FermionError):
    """An error of the dataset (table) layer; the message names the dataset."""


class FermionCommitConflictError(FermionDatasetError):
    """Another writer committed an incompatible change (or created the dataset) meanwhile;
    nothing was committed."""


class FermionVersionNotFoundError(FermionDatasetError):
    """No such version, timestamp or tag (or the path holds no dataset)."""


class InvalidFermionDatasetError(FermionDatasetError):
    """A manifest, transaction or deletion file cannot be decoded."""


class FermionDatasetNotFoundError(FermionDatasetError):
    """The path holds no Fermion dataset where one is needed."""


class FermionRowNotFoundError(FermionDatasetError):
    """A row asked for by position, row id or address is not in the version (deleted or past the end)."""


class FermionCommitStoreError(FermionDatasetError):
    """The storage cannot commit safely as configured (no atomic create and no external manifest
    store); the message names the setting to change. Nothing was committed."""


#: JVM class -> Python class, most specific first.
_CLASSES = [
    ("io.fermion.core.errors.InvalidFermionFileException", InvalidFermionFileError),
    ("io.fermion.core.errors.FermionOffsetOutOfRangeException", FermionOffsetOutOfRangeError),
    ("io.fermion.core.errors.FermionChecksumException", FermionChecksumError),
    ("io.fermion.core.errors.UnsupportedFermionVersionException", UnsupportedFermionVersionError),
    ("io.fermion.core.errors.FermionFileException", FermionFileError),
    ("io.fermion.core.dataset.FermionCommitConflictException", FermionCommitConflictError),
    ("io.fermion.core.dataset.FermionVersionNotFoundException", FermionVersionNotFoundError),
    ("io.fermion.core.dataset.InvalidFermionDatasetException", InvalidFermionDatasetError),
    ("io.fermion.core.dataset.FermionDatasetNotFoundException", FermionDatasetNotFoundError),
    ("io.fermion.core.dataset.FermionRowNotFoundException", FermionRowNotFoundError),
    ("io.fermion.core.dataset.FermionCommitStoreException", FermionCommitStoreError),
    ("io.fermion.core.dataset.FermionDatasetException", FermionDatasetError),
]
_BY_NAME = dict(_CLASSES)

#: How deep to look into an exception's causes (Spark wraps task failures a few levels deep).
_MAX_CAUSES = 16


def _fermion_error(java_exception):
    """The Fermion exception among ``java_exception`` and its causes, as a Python error, or None."""
    from pyspark import SparkContext
    from py4j.java_gateway import is_instance_of

    gateway = SparkContext._gateway
    e, depth = java_exception, 0
    while e is not None and depth < _MAX_CAUSES:
        name = e.getClass().getName()
        if name in _BY_NAME:
            return _BY_NAME[name](origin=e)
        if name.startswith("io.fermion."):
            for jvm_class, py_class in _CLASSES:
                if is_instance_of(gateway, e, jvm_class):
                    return py_class(origin=e)
        e, depth = e.getCause(), depth + 1
    return None


def install():
    """Makes PySpark raise Fermion's errors as the classes of this module (idempotent)."""
    from pyspark.errors.exceptions import captured

    current = captured._convert_exception
    if getattr(current, "_fermion", False):
        return

    def convert(java_exception):
        found = _fermion_error(java_exception)
        return found if found is not None else current(java_exception)

    convert._fermion = True
    captured._convert_exception = convert


__all__ = [
    "FermionError", "FermionFileError", "InvalidFermionFileError", "FermionOffsetOutOfRangeError",
    "FermionChecksumError", "UnsupportedFermionVersionError", "FermionDatasetError",
    "FermionCommitConflictError", "FermionVersionNotFoundError", "InvalidFermionDatasetError",
    "FermionDatasetNotFoundError", "FermionRowNotFoundError", "FermionCommitStoreError", "install",
]

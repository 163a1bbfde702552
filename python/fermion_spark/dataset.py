"""Operations on a Fermion dataset beyond reads and writes: history, tags, deletes and
metadata-only schema changes. A thin wrapper: the JVM (``io.fermion.spark.FermionDatasets``)
does the work; every change commits a new version.

    from fermion_spark.dataset import FermionDataset

    ds = FermionDataset(spark, "/data/events")
    ds.delete("country = 'XX'")           # deletion files, no data rewritten
    ds.add_columns("score double")         # existing rows read null
    ds.add_columns_from({"bucket": "id % 16"})  # new files per fragment, old ones untouched
    ds.rename_column("ts", "event_time")   # files are matched by field id
    ds.versions().show()                   # version, timestamp, operation, fragments, rows, tags
    ds.restore(3)                          # version 3's rows and schema again, as a new version
    ds.compact(target_rows=1_000_000)      # merge small fragments, drop deleted rows
    ds.cleanup(retain_hours=24 * 7)        # remove old versions and unreferenced files
    spark.read.format("fermion").option("versionAsOf", 1).load("/data/events")
"""
import struct
from typing import Dict, Iterable, Optional, Sequence, Union

from pyspark.sql import DataFrame, SparkSession


class FermionDataset:
    """A Fermion dataset at ``path`` (a directory written with ``format("fermion")``)."""

    def __init__(self, spark: SparkSession, path: str):
        self._spark = spark
        self.path = path
        self._jvm = spark.sparkContext._jvm.io.fermion.spark.FermionDatasets

    def versions(self) -> DataFrame:
        """One row per version: version, timestamp, operation, fragments, rows, tags."""
        return DataFrame(self._jvm.versions(self._spark._jsparkSession, self.path), self._spark)

    def latest_version(self) -> int:
        return int(self._jvm.latestVersion(self.path))

    def count_rows(self) -> int:
        """Rows of the latest version (from the manifest: no data is read)."""
        return int(self._jvm.rowCount(self.path))

    def tags(self) -> Dict[str, int]:
        return {k: int(v) for k, v in dict(self._jvm.tags(self.path)).items()}

    def create_tag(self, tag: str, version: int) -> None:
        """Names a version; read it with ``.option("tag", tag)``."""
        self._jvm.createTag(self.path, tag, int(version))

    def delete_tag(self, tag: str) -> None:
        self._jvm.deleteTag(self.path, tag)

    def delete(self, condition: str) -> int:
        """Deletes the rows matching a SQL condition; returns how many were deleted."""
        return int(self._jvm.delete(self._spark._jsparkSession, self.path, condition))

    def _columns(self, columns):
        return None if columns is None else list(columns)

    def _longs(self, values):
        # One little-endian int64 buffer crosses to the JVM in a single call.
        values = [int(v) for v in values]
        packed = struct.pack(f"<{len(values)}q", *values)
        return self._spark.sparkContext._jvm.io.fermion.core.scan.Scan.keys(bytearray(packed))

    def take(self, positions: Iterable[int], columns: Optional[Sequence[str]] = None) -> DataFrame:
        """Rows by 0-based position in the latest version's row order (deleted rows not counted),
        in request order (repeats allowed), like Lance's ``take``; with ``_rowaddr`` and ``_rowid``.
        Read by random access in the JVM (a few reads per column), not by a scan::

            ds.take([0, 17, 4_000_000], columns=["id", "embedding"]).toArrow()
        """
        return DataFrame(self._jvm.take(self._spark._jsparkSession, self.path, self._longs(positions),
                                        self._columns(columns)), self._spark)

    def take_rows(self, row_ids: Union[Iterable[int], DataFrame], columns: Optional[Sequence[str]] = None,
                  id_column: str = "_rowid") -> DataFrame:
        """Rows by stable row id (``_rowid``; datasets created with ``stableRowIds``), in request
        order. ``row_ids`` may also be a DataFrame holding the ids in ``id_column``: the rows are
        then fetched by takes per fragment on the executors (a join without a scan; ids no row has
        are dropped, order not kept)."""
        if isinstance(row_ids, DataFrame):
            return DataFrame(self._jvm.takeRowsFrom(self._spark._jsparkSession, self.path, row_ids._jdf, id_column,
                                                    False, self._columns(columns)), self._spark)
        return DataFrame(self._jvm.takeRows(self._spark._jsparkSession, self.path, self._longs(row_ids),
                                            self._columns(columns)), self._spark)

    def take_batches(self, batch_ids: Iterable[int], columns: Optional[Sequence[str]] = None) -> DataFrame:
        """Every row of the batches ``batch_ids`` (a dataset written with the ``batchKey`` option),
        batch after batch in the order asked for, with ``batch_id`` and ``index_in_batch``; each
        batch is read as one page per column::

            ds.take_batches([1002, 17]).toArrow()
        """
        return DataFrame(self._jvm.takeBatches(self._spark._jsparkSession, self.path, self._longs(batch_ids),
                                               self._columns(columns)), self._spark)

    def take_addresses(self, addresses: Union[Iterable[int], DataFrame], columns: Optional[Sequence[str]] = None,
                       address_column: str = "_rowaddr") -> DataFrame:
        """Rows by address (``_rowaddr``), in request order; or, from a DataFrame of addresses in
        ``address_column``, fetched by takes per fragment on the executors."""
        if isinstance(addresses, DataFrame):
            return DataFrame(self._jvm.takeRowsFrom(self._spark._jsparkSession, self.path, addresses._jdf,
                                                    address_column, True, self._columns(columns)), self._spark)
        return DataFrame(self._jvm.takeAddresses(self._spark._jsparkSession, self.path, self._longs(addresses),
                                                 self._columns(columns)), self._spark)

    def restore(self, version: int = None, timestamp: str = None) -> int:
        """Makes an older version current again, given by number or by time (the version current
        at ``timestamp``, a timestamp string in the session time zone): its rows and schema are
        committed as a new version (the versions in between stay readable by time travel). Its
        files must still exist (``cleanup`` may have removed them). Returns the new version."""
        if (version is None) == (timestamp is None):
            raise ValueError("give either version or timestamp")
        if version is not None:
            return int(self._jvm.restore(self.path, int(version)))
        return int(self._jvm.restoreToTimestamp(self._spark._jsparkSession, self.path, str(timestamp)))

    def update(self, set: Dict[str, str], condition: Optional[str] = None) -> int:
        """Sets columns, ``{"name": "SQL expression"}``, of the rows matching a SQL condition (every
        row when None), as ``UPDATE`` does: the old rows are deleted through deletion files and the
        new ones written as new data files, in one version. Returns the new latest version. Upserts
        go through Spark's ``source.mergeInto(f"fermion.`{path}`", condition)`` or ``MERGE INTO``."""
        names = list(set.keys())
        return int(self._jvm.update(self._spark._jsparkSession, self.path, condition or "", names,
                                    [set[n] for n in names]))

    def add_columns(self, ddl: str) -> int:
        """Adds nullable columns given as DDL (``"score double, note string"``); returns the new version."""
        return int(self._jvm.addColumns(self._spark._jsparkSession, self.path, ddl))

    def add_columns_from(self, columns: Dict[str, str]) -> int:
        """Adds columns computed from existing ones, ``{"name": "SQL expression"}``, written as new
        data files beside the existing ones (which are not rewritten); returns the new version."""
        names = list(columns.keys())
        return int(self._jvm.addColumnsFrom(self._spark._jsparkSession, self.path, names, [columns[n] for n in names]))

    def add_columns_from_dataframe(self, values: DataFrame) -> int:
        """Adds the columns of ``values``, a DataFrame holding ``_rowaddr`` (select it when reading
        the dataset) and the new columns, as new data files per fragment; rows it does not cover
        read null. Existing files are not rewritten. Returns the new version::

            scores = spark.read.format("fermion").load(path).select("_rowaddr", "id") \\
                .join(model_scores, "id").select("_rowaddr", "score")
            FermionDataset(spark, path).add_columns_from_dataframe(scores)
        """
        return int(self._jvm.addColumnsFromDataFrame(self._spark._jsparkSession, self.path, values._jdf))

    def drop_columns(self, columns: Iterable[str]) -> int:
        """Drops columns from the schema (metadata only); returns the new version."""
        return int(self._jvm.dropColumns(self.path, list(columns)))

    def rename_column(self, old: str, new: str) -> int:
        """Renames a top-level column (metadata only); returns the new version."""
        return int(self._jvm.renameColumn(self.path, old, new))

    def change_column_type(self, column: str, data_type: str) -> int:
        """Widens a column's type (metadata only; files keep the old type and are read converted):
        byte -> short -> int -> long, float -> double, decimal precision up keeping the integer
        digits, date -> timestamp_ntz. ``column`` as SQL names it (``"s.x"`` for a struct field,
        ``"a.element"`` / ``"m.value"`` for list elements and map values), ``data_type`` as SQL
        spells it (``"bigint"``). Other changes fail naming the column and both types. Returns the
        new version."""
        return int(self._jvm.changeColumnType(self._spark._jsparkSession, self.path, column, data_type))

    def compact(self, target_rows: int = 1_000_000) -> int:
        """Rewrites small fragments and fragments with deleted rows into fragments of about
        ``target_rows`` rows (a Spark job, shown in the UI); returns the version after it."""
        return int(self._jvm.compact(self._spark._jsparkSession, self.path, int(target_rows)))

    def cleanup(self, retain_hours: float = 168.0, allow_short_retention: bool = False) -> Dict[str, int]:
        """Removes versions older than ``retain_hours`` (never the latest or a tagged one) and files
        no remaining version references. Returns counts of what was removed. A retention under one
        hour could remove files of writes still running and needs ``allow_short_retention=True``."""
        r = self._jvm.cleanup(self.path, float(retain_hours), bool(allow_short_retention))
        return {"versions": int(r._1()), "files": int(r._2()), "bytes": int(r._3())}

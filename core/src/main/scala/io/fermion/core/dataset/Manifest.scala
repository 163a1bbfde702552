package io.fermion.core.dataset

import io.fermion.core.expr.FilterValue
import io.fermion.core.schema.{FermionField, FermionSchema}

/** One version of a dataset (docs/table-format.md, "Manifest"): its schema with stable field ids,
  * its fragments, and the counters new commits continue from. */
final case class Manifest(
    version: Long,
    timestampMillis: Long,
    readerFeatures: Long,
    writerFeatures: Long,
    schema: FermionSchema,
    fragments: IndexedSeq[Fragment],
    maxFragmentId: Long,
    nextRowId: Long,
    transactionFile: String,
    operation: String,
    tag: String = "",
    config: Map[String, String] = Map.empty,
    /** The partition columns: top-level field ids of `schema`, in order (empty: not partitioned).
      * Each fragment holds rows of one combination of their values, recorded in the fragment
      * ([[Fragment.partition]]); data files do not store these columns. */
    partitionSpec: IndexedSeq[Int] = IndexedSeq.empty
) {
  def rowCount: Long = fragments.iterator.map(_.rowCount).sum

  def isPartitioned: Boolean = partitionSpec.nonEmpty

  /** Whether the dataset assigns stable row ids (`_rowid`, chosen when it is created). */
  def hasStableRowIds: Boolean = config.get(FermionDataset.StableRowIdsConfig).contains("true")

  /** The schema fields of the partition columns, in spec order. */
  def partitionFields: IndexedSeq[FermionField] = Partitioning.fields(schema, partitionSpec)

  /** The largest field id this dataset ever used (dropped fields included): new fields take ids
    * after it, so a new column never reads a dropped column's data left in old files. */
  def lastFieldId: Int =
    math.max(config.get(Manifest.LastFieldIdConfig).flatMap(_.toIntOption).getOrElse(-1), SchemaIds.maxId(schema))
}

object Manifest {

  /** Reader feature flag: some fragments have deletion files. */
  val FeatureDeletionFiles: Long = 1L

  /** Reader and writer feature flag: fragments carry stable row ids. */
  val FeatureStableRowIds: Long = 2L

  /** Reader and writer feature flag: the dataset is partitioned (a partition spec and values per
    * fragment, which older readers would read as null columns). */
  val FeaturePartitions: Long = 16L

  /** Reader and writer feature flag: some fragment lists its row ids (`rowIdKind` 2 or 3) rather
    * than giving the first of a range. */
  val FeatureRowIdSequences: Long = 32L

  /** Reader and writer feature flag: some column's type was widened (files may hold an older,
    * narrower type, which readers must convert). Once set, every later version keeps it. */
  val FeatureTypeWidening: Long = 64L

  /** Every feature flag with the name users see (`DESCRIBE DETAIL`'s table features). */
  val Features: Seq[(Long, String)] = Seq(
    FeatureDeletionFiles -> "deletionFiles",
    FeatureStableRowIds -> "stableRowIds",
    FeaturePartitions -> "partitions",
    FeatureRowIdSequences -> "rowIdSequences",
    FeatureTypeWidening -> "typeWidening"
  )

  /** The names of the flags set in `features`. */
  def featureNames(features: Long): Seq[String] = Features.collect { case (bit, name) if (features & bit) != 0 => name }

  /** Every flag this version knows, for readers and writers alike. */
  val KnownReaderFeatures: Long = Features.foldLeft(0L)(_ | _._1)
  val KnownWriterFeatures: Long = KnownReaderFeatures

  /** Config key: the largest field id ever used. */
  val LastFieldIdConfig = "fermion.lastFieldId"
}

/** A set of rows stored as one or more data files side by side (each holding some of the fields,
  * all with the same rows in the same order), minus the rows of its deletion file. */
final case class Fragment(
    id: Long,
    physicalRows: Long,
    files: IndexedSeq[DataFile],
    deletion: Option[DeletionFile],
    /** The stable ids of its rows (datasets with stable row ids, 6.5). */
    rowIds: Option[RowIds] = None,
    /** The value of each partition column for every row of the fragment, in the order of the
      * dataset's partition spec (None: SQL NULL); empty in unpartitioned datasets. Values are in
      * the column's [[FilterValue]] domain: integers, booleans (0/1), dates (days), timestamps
      * (micros) and decimals (unscaled) as `Integral`, strings as UTF-8 `Bytes`. */
    partition: IndexedSeq[Option[FilterValue]] = IndexedSeq.empty
) {
  def rowCount: Long = physicalRows - deletion.map(_.deletedRows).getOrElse(0L)

  /** The size in memory of top-level field `fieldId`'s values in the live rows, from the size its
    * file records (deleted rows deducted in proportion); Some(0) when no file holds the field (it
    * reads null), None when the file holding it records no sizes. */
  def liveBytes(fieldId: Int): Option[Long] =
    files.find(_.fieldIds.contains(fieldId)) match {
      case None => Some(0L)
      case Some(d) if d.fieldBytes.isEmpty => None
      case Some(d) =>
        val bytes = d.fieldBytes(d.fieldIds.indexOf(fieldId))
        Some(if (physicalRows == 0) 0L else (bytes.toDouble * rowCount / physicalRows).toLong)
    }

  /** Every file the fragment needs, relative to the dataset root: data files, deletion file, row
    * id file. */
  def referencedFiles: Seq[String] =
    files.map(_.path) ++ deletion.map(_.path) ++ rowIds.collect { case e: RowIds.External => e.path }
}

/** A Fermion file of a fragment, its path relative to the dataset root, and the field ids it holds
  * (top-level ids; a file holds a top-level field with all its nested fields). */
final case class DataFile(
    path: String,
    fieldIds: IndexedSeq[Int],
    /** The size in memory of each field of [[fieldIds]] in the file, in the same order, in Arrow's
      * layout (`FermionFileWriter.columnBytes`), for query planners; empty when not recorded. */
    fieldBytes: IndexedSeq[Long] = IndexedSeq.empty
) {
  require(fieldBytes.isEmpty || fieldBytes.size == fieldIds.size, "one size per field id, or none")
}

/** The rows deleted from a fragment: local row offsets, as an Arrow IPC file of one uint32 column
  * (few rows) or a serialised Roaring bitmap (many rows). Path relative to the dataset root. */
final case class DeletionFile(path: String, kind: Int, deletedRows: Long)

object DeletionFile {
  val ArrowArray: Int = 1
  val RoaringBitmap: Int = 2
}

package io.fermion.spark.read

import io.fermion.core.read.ReaderOptions
import io.fermion.core.expr.FilterExpr
import io.fermion.core.dataset.TableSnapshot
import io.fermion.spark.metrics.FermionScanMetrics
import org.apache.spark.sql.connector.metric.CustomMetric
import io.fermion.spark.{FermionTableSchema, SerializableHadoopConf}
import org.apache.hadoop.fs.Path
import java.util.OptionalLong

import org.apache.spark.sql.connector.read.{
  Batch, InputPartition, PartitionReaderFactory, Scan, Statistics, SupportsReportStatistics
}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

/** Plans the scan: every data file is cut into byte ranges of `spark.sql.files.maxPartitionBytes`;
  * a range reads the stripes that start inside it, so each stripe is read by exactly one task. */
final class FermionScan(
    snapshot: TableSnapshot,
    tableSchema: StructType,
    readSchema: StructType,
    filter: Option[FilterExpr],
    readerOptions: ReaderOptions,
    wholeFiles: Boolean = false,
    limit: Option[Int] = None
) extends Scan with Batch with SupportsReportStatistics {

  override def readSchema(): StructType = readSchema
  override def description(): String =
    s"FermionScan ${snapshot.root}${snapshot.version.map(v => s" version $v").getOrElse("")} [${readSchema.fieldNames.mkString(", ")}]" +
      filter.map(f => s" StripeFilter: $f").getOrElse("") + limit.map(l => s" Limit: $l").getOrElse("")

  override def supportedCustomMetrics(): Array[CustomMetric] = FermionScanMetrics.all.map(m => m: CustomMetric)
  override def toBatch: Batch = this

  /** Every partition is read as columnar batches: Spark need not ask partition by partition. */
  override def columnarSupportMode(): Scan.ColumnarSupportMode = Scan.ColumnarSupportMode.SUPPORTED

  private def files = snapshot.files

  private def columnIds: Option[Map[String, Int]] = snapshot.columnIds

  /** For a dataset, the field id of each read column (files are matched by id, so renamed columns
    * still find their data); -1 for `_rowaddr` and `_rowid`, -2 for a column no file can hold. */
  private val readFieldIds: Option[IndexedSeq[Int]] = columnIds.map { ids =>
    readSchema.fields.toIndexedSeq.map { f =>
      if (f.name == RowAddress.Name || f.name == RowAddress.RowIdName) -1
      else ids.getOrElse(f.name.toLowerCase(java.util.Locale.ROOT), -2)
    }
  }

  /** Bytes on disk scaled by the share of the row width the scan reads (as Spark's file sources
    * estimate), so that joins with small Fermion tables can be broadcast. */
  override def estimateStatistics(): Statistics = {
    val total = files.map(_.length).sum
    val share = if (tableSchema.isEmpty) 1.0 else readSchema.defaultSize.toDouble / tableSchema.defaultSize
    val bytes = math.max(1L, (total * math.min(1.0, share)).toLong)
    new Statistics {
      override def sizeInBytes(): OptionalLong = OptionalLong.of(bytes)
      override def numRows(): OptionalLong = OptionalLong.empty()
    }
  }

  /** Spark's file-source rules: files are cut into splits of at most maxSplitBytes (bounded by
    * `spark.sql.files.maxPartitionBytes`, and small enough to give every core work), and splits are
    * packed into partitions up to that size, each split costing `spark.sql.files.openCostInBytes`. */
  override def planInputPartitions(): Array[InputPartition] = {
    // One partition per data file, in row order (what filling a new column per fragment needs).
    if (wholeFiles) return files.map(f =>
      FermionInputPartition(IndexedSeq(
        FileSplit(f.path, 0, f.length, f.length, f.fragmentId, f.deletion, f.rowIdStart, f.columnFiles)
      )): InputPartition
    ).toArray
    val conf = SQLConf.get
    val openCost = conf.filesOpenCostInBytes
    val parallelism = math.max(1, org.apache.spark.sql.SparkSession.active.sparkContext.defaultParallelism)
    val total = files.map(_.length + openCost).sum
    val maxSplit = math.max(1L, math.min(conf.filesMaxPartitionBytes, math.max(openCost, total / parallelism)))
    val splits = files.flatMap { f =>
      val len = f.length
      (0L until math.max(1L, (len + maxSplit - 1) / maxSplit)).map { i =>
        val start = i * maxSplit
        FileSplit(
          f.path,
          start,
          math.min(maxSplit, len - start),
          len,
          f.fragmentId,
          f.deletion,
          f.rowIdStart,
          f.columnFiles
        )
      }
    }.sortBy(-_.length)
    val partitions = scala.collection.mutable.ArrayBuffer.empty[InputPartition]
    val current = scala.collection.mutable.ArrayBuffer.empty[FileSplit]
    var size = 0L
    splits.foreach { s =>
      if (current.nonEmpty && size + s.length > maxSplit) {
        partitions += FermionInputPartition(current.toIndexedSeq)
        current.clear(); size = 0L
      }
      current += s
      size += s.length + openCost
    }
    if (current.nonEmpty) partitions += FermionInputPartition(current.toIndexedSeq)
    partitions.toArray
  }

  override def createReaderFactory(): PartitionReaderFactory = {
    // Readers resolve only the filter's columns by name; the table's whole map would be shipped
    // with every task (10,000 entries for a wide table).
    val filterIds = columnIds.map { ids =>
      val wanted = filter.toSeq.flatMap(io.fermion.core.expr.FilterExpr.columns).map(_.toLowerCase(
        java.util.Locale.ROOT
      )).toSet
      ids.filter { case (name, _) => wanted.contains(name) }
    }
    new FermionPartitionReaderFactory(
      readSchema,
      readFieldIds,
      filterIds,
      snapshot.root,
      filter,
      SerializableHadoopConf.broadcast(),
      readerOptions,
      limit
    )
  }
}

/** A byte range of one data file: the stripes whose data starts in [start, start + length); the
  * file's fragment and that fragment's deletion file (path relative to the dataset root). */
final case class FileSplit(
    file: String,
    start: Long,
    length: Long,
    fileLength: Long,
    fragmentId: Long = 0,
    deletion: Option[io.fermion.core.dataset.DeletionFile] = None,
    rowIdStart: Option[Long] = None,
    columnFiles: IndexedSeq[String] = IndexedSeq.empty
)

/** The splits one task reads, in order. */
final case class FermionInputPartition(splits: IndexedSeq[FileSplit]) extends InputPartition

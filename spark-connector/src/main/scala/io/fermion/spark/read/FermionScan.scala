package io.fermion.spark.read

import java.util.OptionalLong

import io.fermion.core.scan.{Scan => CoreScan, TaskSizing}
import io.fermion.spark.SerializableHadoopConf
import io.fermion.spark.metrics.FermionScanMetrics
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory, Scan, Statistics}
import org.apache.spark.sql.connector.read.SupportsReportStatistics
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

/** A planned core scan as Spark's Scan and Batch: tasks sized by Spark's file-source settings
  * (`spark.sql.files.maxPartitionBytes`, `spark.sql.files.openCostInBytes`, the default
  * parallelism), or one task per file in row order (`wholeFiles`, what writing a new column per
  * fragment needs). */
final class FermionScan(
    scan: CoreScan,
    tableSchema: StructType,
    readSchema: StructType,
    wholeFiles: Boolean,
    pushed: String,
    /** Which read columns are `_metadata`. */
    fileMetadata: Array[Boolean],
    /** How a streaming read of this scan follows the dataset. */
    streamSettings: io.fermion.core.scan.StreamSettings = io.fermion.core.scan.StreamSettings()
) extends Scan with Batch with SupportsReportStatistics {
  private val snapshot = scan.snapshot

  override def readSchema(): StructType = readSchema
  override def description(): String =
    s"FermionScan ${snapshot.root}${snapshot.version.map(v => s" version $v").getOrElse("")} " +
      s"[${readSchema.fieldNames.mkString(", ")}]$pushed$partitions"

  /** Partition pruning, as EXPLAIN shows it: fragments kept of the version's. */
  private def partitions: String =
    if (!snapshot.isPartitioned) ""
    else s" PartitionPruning: ${snapshot.files.size} of ${snapshot.files.size + scan.filesPruned} fragments"

  override def supportedCustomMetrics(): Array[CustomMetric] =
    FermionScanMetrics.all.map(m => m: CustomMetric) :+ new io.fermion.spark.metrics.FragmentsPrunedMetric

  override def reportDriverMetrics(): Array[org.apache.spark.sql.connector.metric.CustomTaskMetric] =
    Array(FermionScanMetrics.fragmentsPruned(scan.filesPruned.toLong))
  override def toBatch: Batch = this

  override def toMicroBatchStream(checkpointLocation: String)
      : org.apache.spark.sql.connector.read.streaming.MicroBatchStream =
    new FermionMicroBatchStream(scan, streamSettings, readSchema, fileMetadata)

  /** Every partition is read as columnar batches: Spark need not ask partition by partition. */
  override def columnarSupportMode(): Scan.ColumnarSupportMode = Scan.ColumnarSupportMode.SUPPORTED

  /** The size Spark's planner compares with the broadcast threshold, meant as the rows' size in
    * memory: the version's live rows (counted by the manifest, deletions deducted) times Spark's
    * own row width without column statistics, 8 bytes plus each read column's default size. The
    * rows are reported too. Files' bytes, the estimate of Spark's file sources, understate the rows
    * several times over once compressed (TPC-H sf1 Q12 broadcast 1.5M rows of `orders` from a
    * 10 MB estimate and ran at 0.6-0.7x the speed of Parquet, which shuffled). Loose files, whose
    * row counts are only in their footers, are estimated that way: their bytes times the share of
    * the row width the scan reads. */
  override def estimateStatistics(): Statistics = {
    import FermionScan.RowOverheadBytes
    val rowWidth = RowOverheadBytes + readSchema.defaultSize
    val rows = snapshot.liveRows
    val bytes = rows match {
      case Some(n) => math.max(1L, n * rowWidth)
      case None =>
        val total = snapshot.files.map(_.length).sum
        val share = rowWidth.toDouble / (RowOverheadBytes + tableSchema.defaultSize)
        math.max(1L, (total * math.min(1.0, share)).toLong)
    }
    new Statistics {
      override def sizeInBytes(): OptionalLong = OptionalLong.of(bytes)
      override def numRows(): OptionalLong = rows.map(OptionalLong.of).getOrElse(OptionalLong.empty())
    }
  }

  override def planInputPartitions(): Array[InputPartition] = {
    val tasks =
      if (wholeFiles) scan.fileTasks
      else {
        val conf = SQLConf.get
        val parallelism = math.max(1, SparkSession.active.sparkContext.defaultParallelism)
        scan.planTasks(
          TaskSizing(conf.filesMaxPartitionBytes, conf.filesOpenCostInBytes, parallelism),
          io.fermion.spark.FermionTableSchema.hadoopConf()
        )
      }
    tasks.map(t => FermionInputPartition(t): InputPartition).toArray
  }

  override def createReaderFactory(): PartitionReaderFactory =
    new FermionPartitionReaderFactory(scan.plan, readSchema, fileMetadata, SerializableHadoopConf.broadcast())
}

private object FermionScan {

  /** What Spark counts per row besides the columns when it sizes a plan without column statistics
    * (`EstimationUtils.getSizePerRow`). */
  val RowOverheadBytes = 8
}

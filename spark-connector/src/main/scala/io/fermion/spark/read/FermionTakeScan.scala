package io.fermion.spark.read

import io.fermion.core.scan.{Scan => CoreScan, ScanBatch, TakeTask}
import io.fermion.spark.{FermionTableSchema, SerializableHadoopConf}
import io.fermion.spark.metrics.FermionScanMetrics
import org.apache.arrow.memory.BufferAllocator
import org.apache.hadoop.conf.Configuration
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

/** A scan that reads only the rows a query names by `_rowaddr` or `_rowid`, by random access
  * (the core's take: a few reads per column and file instead of a scan). Rows are resolved on the
  * driver from the manifest (stable row ids by fragment id ranges; deleted and unknown rows are
  * dropped), then fetched by tasks of whole fragments. Spark still evaluates every predicate. */
final class FermionTakeScan(
    scan: CoreScan,
    lookup: RowLookup,
    tableSchema: StructType,
    readSchema: StructType,
    fileMetadata: Array[Boolean]
) extends Scan with Batch {
  override def readSchema(): StructType = readSchema
  override def description(): String = FermionTakeScan.describe(scan, readSchema, lookup)
  override def supportedCustomMetrics(): Array[CustomMetric] = FermionScanMetrics.all.map(m => m: CustomMetric)
  override def toBatch: Batch = this
  override def columnarSupportMode(): Scan.ColumnarSupportMode = Scan.ColumnarSupportMode.SUPPORTED

  override def planInputPartitions(): Array[InputPartition] = {
    val live = FermionTakeScan.liveAddresses(scan, lookup, FermionTableSchema.hadoopConf())
    val parallelism = math.max(1, SparkSession.active.sparkContext.defaultParallelism)
    // Tasks of at least a few hundred rows: a take costs a file open per fragment and task.
    scan.takeTasks(live, math.max(1, math.min(parallelism, live.length / 256 + 1)))
      .map(t => FermionTakePartition(t): InputPartition).toArray
  }

  override def createReaderFactory(): PartitionReaderFactory =
    new FermionTakeReaderFactory(readSchema, fileMetadata, SerializableHadoopConf.broadcast())
}

object FermionTakeScan {

  /** What EXPLAIN shows of a take, by tasks or on the driver. */
  def describe(scan: CoreScan, readSchema: StructType, lookup: RowLookup): String =
    s"FermionScan ${scan.snapshot.root}${scan.snapshot.version.map(v => s" version $v").getOrElse("")} " +
      s"[${readSchema.fieldNames.mkString(", ")}] Take: $lookup"

  /** The addresses of the live rows a lookup names, sorted and distinct (ids and addresses no live
    * row has are dropped): resolved from the manifest, deletion files and row id sequences. */
  def liveAddresses(scan: CoreScan, lookup: RowLookup, conf: Configuration): Array[Long] = {
    val keys = lookup.values.toArray.sorted
    val addresses = if (lookup.column == MetadataColumns.RowIdName) scan.rowIdAddresses(keys, conf) else keys
    scan.liveAddresses(addresses, conf).distinct.sorted
  }

  /** A take's rows as Spark columns of `readSchema`; `_metadata` (where `fileMetadata`) is left
    * null: a take's rows come from several files. */
  def columnar(batch: ScanBatch, readSchema: StructType, fileMetadata: Array[Boolean]): ColumnarBatch = {
    var core = -1
    val columns: Array[ColumnVector] = readSchema.fields.indices.map { i =>
      val f = readSchema.fields(i)
      if (fileMetadata(i)) SparkColumns.nulls(f.dataType, batch.numRows)
      else { core += 1; SparkColumns.of(batch.columns(core), f.dataType, batch.numRows) }
    }.toArray
    new ColumnarBatch(columns, batch.numRows)
  }
}

final case class FermionTakePartition(task: TakeTask) extends InputPartition

final class FermionTakeReaderFactory(
    readSchema: StructType,
    fileMetadata: Array[Boolean],
    conf: Broadcast[SerializableHadoopConf]
) extends PartitionReaderFactory {
  override def supportColumnarReads(partition: InputPartition): Boolean = true
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    throw new UnsupportedOperationException("Fermion scans are columnar")

  override def createColumnarReader(partition: InputPartition): PartitionReader[ColumnarBatch] =
    new PartitionReader[ColumnarBatch] {
      private val task = partition.asInstanceOf[FermionTakePartition].task
      private val allocator: BufferAllocator =
        FermionColumnarReader.root.newChildAllocator("fermion-take", 0, Long.MaxValue)
      private var batch: io.fermion.core.scan.ScanBatch = _
      private var done = false

      override def next(): Boolean = {
        if (done) return false
        done = true
        batch = task.read(conf.value.value, allocator)
        true
      }

      override def get(): ColumnarBatch = FermionTakeScan.columnar(batch, readSchema, fileMetadata)

      override def currentMetricsValues(): Array[CustomTaskMetric] =
        FermionScanMetrics.taskValues(Option(batch).map(_.metrics).getOrElse(io.fermion.core.scan.ScanMetrics()))

      override def close(): Unit =
        try { if (batch != null) batch.close() }
        finally allocator.close()
    }
}

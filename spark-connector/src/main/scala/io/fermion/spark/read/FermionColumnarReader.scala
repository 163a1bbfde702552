package io.fermion.spark.read

import io.fermion.core.memory.FermionAllocators
import io.fermion.core.scan.{ReadPlan, ScanTask, ScanTaskReader}
import io.fermion.spark.metrics.FermionScanMetrics
import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.hadoop.conf.Configuration
import org.apache.spark.fermion.InputFiles
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

/** Spark's view of a core [[ScanTaskReader]]: each core batch becomes a ColumnarBatch over the
  * same Arrow memory (no copy), `_metadata` is filled from the batch's file, and the core's scan
  * metrics are reported as Spark task metrics. Every rule of what rows and values a read returns
  * lives in the core scan. */
final class FermionColumnarReader(
    plan: ReadPlan,
    task: ScanTask,
    readSchema: StructType,
    /** Which read columns are `_metadata` (filled here, not by the core). */
    fileMetadata: Array[Boolean],
    conf: Configuration
) extends PartitionReader[ColumnarBatch] {
  private val allocator: BufferAllocator = FermionColumnarReader.root.newChildAllocator(
    s"fermion:${task.splits.headOption.map(_.file.path).getOrElse("")}",
    0,
    Long.MaxValue
  )
  private val reader = new ScanTaskReader(plan, task, conf, allocator)

  /** For each read column, its index among the core's columns, or -1 for `_metadata`. */
  private val coreIndex: Array[Int] = {
    var next = 0
    fileMetadata.map(isFile => if (isFile) -1 else { next += 1; next - 1 })
  }
  private var current: ColumnarBatch = _

  override def next(): Boolean = {
    current = null
    if (!reader.next()) { InputFiles.unset(); return false }
    val split = reader.currentSplit
    InputFiles.set(split.file.path, split.start, split.length)
    val b = reader.batch
    val columns: Array[ColumnVector] = readSchema.fields.indices.map { i =>
      val t = readSchema.fields(i).dataType
      if (coreIndex(i) < 0) MetadataColumns.fileMetadata(t.asInstanceOf[StructType], split, b.numRows)
      else SparkColumns.of(b.columns(coreIndex(i)), t, b.numRows)
    }.toArray
    current = new ColumnarBatch(columns, b.numRows)
    true
  }

  // The core batch owns the Arrow memory and frees it on the next call or on close.
  override def get(): ColumnarBatch = current

  override def currentMetricsValues(): Array[CustomTaskMetric] = FermionScanMetrics.taskValues(reader.metrics)

  override def close(): Unit =
    try reader.close()
    finally allocator.close()
}

object FermionColumnarReader {

  /** One allocator per executor JVM; each partition reader takes a child and closes it. Its large
    * buffers are reused once released (a stripe's vectors, the next stripe's). */
  lazy val root: RootAllocator = FermionAllocators.newRoot()

}

package io.fermion.spark.read

import java.util.OptionalLong

import io.fermion.core.aggregate.{AggregateTaskReader, Aggregation}
import io.fermion.core.scan.{ReadPlan, Scan => CoreScan, ScanTask}
import io.fermion.spark.SerializableHadoopConf
import io.fermion.spark.metrics.FermionScanMetrics
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.fermion.InputFiles
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

/** A scan whose tasks aggregate the rows they read ([[AggregatePushdown]]): each task returns
  * partial results — its groups' counts, sums, minimums and maximums — that Spark combines, instead
  * of the rows. The core scan reads the aggregated columns and returns exactly the rows the
  * query's filter admits (Spark evaluates no filter on them). */
final class FermionAggregateScan(
    scan: CoreScan,
    aggregation: Aggregation,
    /** The group columns, then one column per function, in Spark's types. */
    output: StructType,
    pushed: String
) extends Scan with Batch with SupportsReportStatistics {
  private val snapshot = scan.snapshot

  override def readSchema(): StructType = output
  override def description(): String =
    s"FermionScan ${snapshot.root}${snapshot.version.map(v => s" version $v").getOrElse("")} " +
      s"[${scan.fields.map(_.name).mkString(", ")}]$pushed Aggregates: ${aggregation.functions.mkString(", ")}" +
      (if (aggregation.groupBy.isEmpty) "" else s" GroupBy: ${aggregation.groupBy.map(_.name).mkString(", ")}")
  override def toBatch: Batch = this

  override def supportedCustomMetrics(): Array[CustomMetric] = FermionScanMetrics.all.map(m => m: CustomMetric)

  /** Equal to another scan of the same version, files, plan and aggregation (Spark then reuses an
    * exchange between them, as for [[FermionScan]]). */
  private lazy val identity = (snapshot.root, snapshot.version, snapshot.files, scan.plan, aggregation, output, pushed)
  override def equals(other: Any): Boolean = other match {
    case o: FermionAggregateScan => (o eq this) || identity == o.identity
    case _ => false
  }
  // Hashed without the files (only their number): their field ids make a hash O(files x columns),
  // about 5 ms a query on a 10,000-column table of 24 files. Scans with equal identities still hash
  // alike.
  private lazy val identityHash = identity.copy(_3 = snapshot.files.size).hashCode()
  override def hashCode(): Int = identityHash

  /** Partial results are a handful of rows per task without GROUP BY; with it, at most the rows
    * read: the version's live rows bound them (Spark estimates an aggregate over a scan the same
    * way, from its input). */
  override def estimateStatistics(): Statistics = {
    val tasks = math.max(1L, snapshot.files.size.toLong)
    val rows = if (aggregation.groupBy.isEmpty) Some(tasks) else snapshot.liveRows
    val rowBytes = 8L + output.fields.map(_.dataType.defaultSize.toLong).sum
    new Statistics {
      override def sizeInBytes(): OptionalLong =
        rows.map(n => OptionalLong.of(math.max(1L, n * rowBytes))).getOrElse(OptionalLong.empty())
      override def numRows(): OptionalLong = rows.map(OptionalLong.of).getOrElse(OptionalLong.empty())
    }
  }

  override def columnarSupportMode(): Scan.ColumnarSupportMode = Scan.ColumnarSupportMode.SUPPORTED

  /** The scan's tasks; without GROUP BY at least one, which returns the aggregates of no rows
    * when there are no files to read (an empty table, every partition pruned): Spark combines
    * counts as a sum, which over no partial result at all would be null instead of 0. */
  override def planInputPartitions(): Array[InputPartition] = {
    val tasks = FermionScan.tasks(scan)
    val atLeastOne = if (tasks.isEmpty && aggregation.groupBy.isEmpty) IndexedSeq(ScanTask(IndexedSeq.empty)) else tasks
    atLeastOne.map(t => FermionInputPartition(t): InputPartition).toArray
  }

  override def createReaderFactory(): PartitionReaderFactory =
    new FermionAggregateReaderFactory(
      scan.plan,
      scan.fields.map(_.name),
      aggregation,
      output,
      SerializableHadoopConf.broadcast()
    )
}

final class FermionAggregateReaderFactory(
    plan: ReadPlan,
    columnNames: IndexedSeq[String],
    aggregation: Aggregation,
    output: StructType,
    conf: Broadcast[SerializableHadoopConf]
) extends PartitionReaderFactory {
  override def supportColumnarReads(partition: InputPartition): Boolean = true

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    throw new UnsupportedOperationException("Fermion scans are columnar")

  override def createColumnarReader(partition: InputPartition): PartitionReader[ColumnarBatch] =
    new FermionAggregateReader(
      plan,
      columnNames,
      partition.asInstanceOf[FermionInputPartition].task,
      aggregation,
      output,
      conf.value.value
    )
}

/** One task's partial results as Spark batches over their Arrow vectors. */
final class FermionAggregateReader(
    plan: ReadPlan,
    columnNames: IndexedSeq[String],
    task: ScanTask,
    aggregation: Aggregation,
    output: StructType,
    conf: org.apache.hadoop.conf.Configuration
) extends PartitionReader[ColumnarBatch] {
  private val allocator = FermionColumnarReader.root.newChildAllocator("fermion-aggregate", 0, Long.MaxValue)
  private val reader = new AggregateTaskReader(plan, columnNames, task, aggregation, conf, allocator)
  private var current: ColumnarBatch = _

  override def next(): Boolean = {
    current = null
    // input_file_name() has no single file to name: the results combine the task's files.
    InputFiles.unset()
    if (!reader.next()) return false
    val columns: Array[ColumnVector] =
      reader.vectors.zip(output.fields).map { case (v, f) => DirectArrowColumnVector.of(v, f.dataType) }.toArray
    current = new ColumnarBatch(columns, reader.rows)
    true
  }

  override def get(): ColumnarBatch = current

  override def currentMetricsValues(): Array[CustomTaskMetric] = FermionScanMetrics.taskValues(reader.metrics)

  override def close(): Unit =
    try reader.close()
    finally allocator.close()
}

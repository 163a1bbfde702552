package io.fermion.core.aggregate

import io.fermion.core.scan.{ReadPlan, ScanMetrics, ScanTask, ScanTaskReader}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.FieldVector
import org.apache.hadoop.conf.Configuration

/** One task of a scan aggregated where it is read: every batch the task's reader returns goes
  * through a [[PartialAggregator]], and the task returns the partial results instead of its rows.
  * The scan must return exactly the rows its filter admits (the default; not
  * [[io.fermion.core.scan.ScanBuilder.skipDataOnly]]) and read the aggregation's columns, which it
  * names `columnNames` in its order; built [[io.fermion.core.scan.ScanBuilder.withSelection]], it
  * hands its rows over without cutting them out of the vectors.
  * {{{
  * val scan = snapshot.scanBuilder().select("flag", "price").filter(f).withSelection().build()
  * val reader = new AggregateTaskReader(scan.plan, scan.fields.map(_.name), task, aggregation, conf, allocator)
  * try while (reader.next()) use(reader.vectors) finally reader.close()
  * }}} */
final class AggregateTaskReader(
    plan: ReadPlan,
    columnNames: IndexedSeq[String],
    task: ScanTask,
    aggregation: Aggregation,
    conf: Configuration,
    allocator: BufferAllocator,
    rowsPerBatch: Int = 1 << 16
) extends AutoCloseable {
  require(
    plan.exactFilter || plan.filter.isEmpty,
    "an aggregating scan needs exactly the rows its filter admits (not skipDataOnly)"
  )
  private val aggregator = new PartialAggregator(aggregation, columnNames)
  private var scanMetrics = ScanMetrics()
  private var results: Iterator[IndexedSeq[FieldVector]] = _
  private var current: IndexedSeq[FieldVector] = IndexedSeq.empty

  private def aggregateTask(): Unit = {
    val reader = new ScanTaskReader(plan, task, conf, allocator)
    try while (reader.next()) aggregator.add(reader.batch.vector, reader.batch.numRows, reader.batch.selection)
    finally { scanMetrics = reader.metrics; reader.close() }
    results = aggregator.result(allocator, rowsPerBatch)
  }

  /** Moves to the next batch of partial results (the first call reads the whole task). */
  def next(): Boolean = {
    release()
    if (results == null) aggregateTask()
    if (!results.hasNext) return false
    current = results.next()
    true
  }

  /** The current batch: the group columns, then one per function; valid until [[next]] or [[close]]. */
  def vectors: IndexedSeq[FieldVector] = current

  def rows: Int = current.headOption.map(_.getValueCount).getOrElse(0)

  /** What reading the task's rows read. */
  def metrics: ScanMetrics = scanMetrics

  /** Rows the task aggregated. */
  def rowsAggregated: Long = aggregator.rowsAdded

  private def release(): Unit = { current.foreach(_.close()); current = IndexedSeq.empty }

  override def close(): Unit = release()
}

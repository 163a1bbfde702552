package io.fermion.core.scan

import org.apache.arrow.memory.BufferAllocator
import org.apache.hadoop.conf.Configuration

/** Reads one [[ScanTask]]: its splits one after another, a [[ScanBatch]] per stripe with rows
  * left. A batch is valid until the next call to [[next]] or [[close]]. With a limit, the task
  * stops once it has returned that many rows (its last batch may hold more: callers that need
  * exactly `limit` rows cut it, as [[Scan.batches]] does).
  * {{{
  * val reader = new ScanTaskReader(scan.plan, task, conf, allocator)
  * try while (reader.next()) consume(reader.batch) finally reader.close()
  * }}}
  */
final class ScanTaskReader(plan: ReadPlan, task: ScanTask, conf: Configuration, allocator: BufferAllocator)
    extends AutoCloseable {
  private var nextSplit = 0
  private var split: SplitReader = _
  private var finished = ScanMetrics()
  private var rowsReturned = 0L

  private def budget: Long = plan.limit.map(_ - rowsReturned).getOrElse(Long.MaxValue)

  /** Moves to the next batch; false when the task has no more rows. */
  def next(): Boolean = {
    if (budget <= 0) { closeSplit(); return false }
    while (true) {
      if (split != null && split.next()) { rowsReturned += split.batch.selectedRows; return true }
      closeSplit()
      if (nextSplit >= task.splits.size) return false
      split = SplitReader.open(task.splits(nextSplit), plan, conf, allocator, () => budget)
      nextSplit += 1
    }
    false
  }

  def batch: ScanBatch = split.batch

  /** The split the current batch comes from. */
  def currentSplit: FileSplit = task.splits(nextSplit - 1)

  /** What the task has read so far. */
  def metrics: ScanMetrics = Option(split).map(s => finished + s.metrics).getOrElse(finished)

  private def closeSplit(): Unit = if (split != null) {
    finished = finished + split.metrics
    try split.close()
    finally split = null
  }

  override def close(): Unit = closeSplit()
}

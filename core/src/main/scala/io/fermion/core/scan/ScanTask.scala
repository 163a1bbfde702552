package io.fermion.core.scan

/** A byte range of one data file: the stripes whose data starts in `[start, start + length)`, so
  * that each stripe of a file is read by exactly one split. */
final case class FileSplit(file: SnapshotFile, start: Long, length: Long)

/** The splits one task reads, one after another (small files are packed together). Serialisable:
  * plan on a driver, read on any JVM with [[ScanTaskReader]]. */
final case class ScanTask(splits: IndexedSeq[FileSplit]) {
  def bytes: Long = splits.map(_.length).sum
}

/** How [[Scan.planTasks]] sizes tasks, as Spark's file sources do: files are cut into splits of at
  * most `maxSplitBytes` (smaller when the data would otherwise give fewer than `minTasks` tasks),
  * and splits are packed into tasks up to that size, each split costing `openCostBytes`. */
final case class TaskSizing(maxSplitBytes: Long = 128L << 20, openCostBytes: Long = 4L << 20, minTasks: Int = 1)

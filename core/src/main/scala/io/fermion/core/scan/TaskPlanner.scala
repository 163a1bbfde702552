package io.fermion.core.scan

/** Cuts files into splits and packs splits into tasks (Spark's file-source rules, see
  * [[TaskSizing]]). A split reads the stripes whose data starts inside it, so splits of one file
  * never read a stripe twice whatever the stripe sizes. */
private[scan] object TaskPlanner {
  def plan(files: IndexedSeq[SnapshotFile], sizing: TaskSizing): IndexedSeq[ScanTask] = {
    val maxSplit = maxSplitBytes(files.map(_.length), sizing)
    val splits = files.flatMap { f =>
      (0L until math.max(1L, (f.length + maxSplit - 1) / maxSplit)).map { i =>
        val start = i * maxSplit
        FileSplit(f, start, math.min(maxSplit, f.length - start))
      }
    }
    pack(splits, maxSplit, sizing.openCostBytes)
  }

  /** Tasks of the given splits, as they are (splits that each hold whole stripes). */
  def planSplits(splits: IndexedSeq[FileSplit], sizing: TaskSizing): IndexedSeq[ScanTask] =
    pack(splits, maxSplitBytes(splits.map(_.length), sizing), sizing.openCostBytes)

  private def maxSplitBytes(lengths: Seq[Long], sizing: TaskSizing): Long = {
    val openCost = sizing.openCostBytes
    val total = lengths.map(_ + openCost).sum
    math.max(1L, math.min(sizing.maxSplitBytes, math.max(openCost, total / math.max(1, sizing.minTasks))))
  }

  /** Splits packed into tasks of about `maxSplit` bytes, largest first. */
  private def pack(unsorted: IndexedSeq[FileSplit], maxSplit: Long, openCost: Long): IndexedSeq[ScanTask] = {
    val splits = unsorted.sortBy(-_.length)
    val tasks = IndexedSeq.newBuilder[ScanTask]
    val current = scala.collection.mutable.ArrayBuffer.empty[FileSplit]
    var size = 0L
    splits.foreach { s =>
      if (current.nonEmpty && size + s.length > maxSplit) {
        tasks += ScanTask(current.toIndexedSeq)
        current.clear(); size = 0L
      }
      current += s
      size += s.length + openCost
    }
    if (current.nonEmpty) tasks += ScanTask(current.toIndexedSeq)
    tasks.result()
  }
}

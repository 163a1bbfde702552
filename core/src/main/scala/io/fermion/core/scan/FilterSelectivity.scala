package io.fermion.core.scan

import io.fermion.core.memory.FermionAllocators
import io.fermion.core.read.ParallelDecode
import org.apache.hadoop.conf.Configuration

/** The share of a scan's rows its filter keeps, estimated before the scan runs so that an engine
  * can size the scan's output (a join's side small enough to broadcast): the filter is evaluated
  * on a sample, each sampled file's partition values, stripe statistics and page statistics first,
  * then the first rows of a few of its stripes. */
private[scan] object FilterSelectivity {

  /** Files sampled: spread over the snapshot's order, first and last included. */
  val FilesSampled = 8

  /** Stripes sampled per file, spread over the stripes its statistics leave in play. */
  val StripesPerFile = 2

  /** Rows sampled at the start of each sampled stripe: one DATA page of each filter column. */
  val RowsPerStripe = 4096

  /** The estimated share (0 to 1) of the scan's rows that satisfy its filter; None without a filter
    * or without rows. Opens the sampled files with `conf`. */
  def estimate(scan: Scan, conf: Configuration): Option[Double] =
    if (scan.plan.filter.isEmpty) None
    else {
      val files = Clustering.spread(scan.snapshot.files, FilesSampled)
      // Only the filter's columns are read, and no deletion file.
      val plan = scan.plan.copy(columns = IndexedSeq.empty, limit = None, keepSelection = false)
      val key = (plan, files.map(f => (f.path, f.length, f.modificationTime, f.columnFiles, f.partition)))
      val known = Estimates.synchronized(Option(Estimates.get(key)))
      known.getOrElse {
        val share = sample(files, plan, conf)
        Estimates.synchronized(Estimates.put(key, share))
        share
      }
    }

  /** Estimates by plan and sampled files (path, length, modification time, column files, partition
    * values), the 256 used last: a data file is never rewritten in place (a change is a new file),
    * so a query planned again over the same files (a dashboard's, a planner's second look) reuses
    * the estimate instead of reading the sample again, which on an object store costs a few round
    * trips per file. A stale estimate could only change a plan's choices, never its rows. */
  private val Estimates = new java.util.LinkedHashMap[AnyRef, Option[Double]](64, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[AnyRef, Option[Double]]): Boolean = size() > 256
  }

  private def sample(files: IndexedSeq[SnapshotFile], plan: ReadPlan, conf: Configuration): Option[Double] = {
    val allocator = FermionAllocators.newRoot()
    val rows = new Array[Long](files.size)
    val kept = new Array[Double](files.size)
    // The files at once: on an object store each costs a few round trips of waiting.
    try ParallelDecode.runWaiting(files.size) { i =>
        val f = files(i)
        val split = FileSplit(f.copy(deletion = None), 0, f.length)
        val reader = SplitReader.open(split, plan, conf, allocator, () => Long.MaxValue)
        try {
          val (n, k) = reader.sampleMatches(StripesPerFile, RowsPerStripe)
          rows(i) = n; kept(i) = k
        } finally reader.close()
      }
    finally allocator.close()
    if (rows.sum == 0) None else Some(math.min(1.0, kept.sum / rows.sum))
  }
}

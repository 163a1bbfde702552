package io.fermion.core.scan

import org.apache.arrow.memory.BufferAllocator
import org.apache.hadoop.conf.Configuration

import io.fermion.core.schema.FermionField

/** A planned read of a [[Snapshot]], built by [[ScanBuilder]]: what it returns ([[fields]]), the
  * [[plan]] every task shares, and its tasks. Tasks are serialisable and may run anywhere; on one
  * JVM, [[batches]] reads them all in order.
  * {{{
  * val scan = Snapshot.open(path, conf).scanBuilder().select("id", "score").build()
  * val it = scan.batches(conf, allocator)
  * try it.foreach(b => println(b.numRows)) finally it.close()
  * }}}
  * Takes ([[takeAddresses]], ...) keep the files they open until [[close]]: reuse one scan for
  * many takes. */
final class Scan private[scan] (
    /** The snapshot restricted to the files the scan reads (partition pruning dropped the others). */
    val snapshot: Snapshot,
    val plan: ReadPlan,
    val fields: IndexedSeq[FermionField],
    /** Files (fragments) of the snapshot that partition pruning dropped: their partition values
      * rule the filter out. */
    val filesPruned: Int = 0
) extends Serializable with AutoCloseable {

  /** Files that takes opened, kept open for the next take until [[close]]. */
  @transient private lazy val takeCache = new FragmentCache

  /** Row id -> address, built from the manifest on the first lookup by row id. */
  @transient private var rowIdIndexBuilt: RowIdIndex = _

  private[scan] def rowIdIndex(conf: Configuration): RowIdIndex = synchronized {
    if (rowIdIndexBuilt == null) rowIdIndexBuilt = RowIdIndex.build(snapshot, conf)
    rowIdIndexBuilt
  }

  /** Closes the files that takes keep open (a scan used only for [[batches]] or tasks holds none). */
  override def close(): Unit = takeCache.close()

  /** Tasks sized as Spark's file sources size theirs (see [[TaskSizing]]), largest first. A scan
    * that selects batches ([[ScanBuilder.batches]]) gets tasks for just the stripes whose batch id
    * range meets the selection: each batch-mode file's footer and batch index are read here once
    * per JVM (with `conf`), so that a lookup of a few batches runs a few tasks. */
  def planTasks(sizing: TaskSizing = TaskSizing(), conf: Configuration = null): IndexedSeq[ScanTask] =
    plan.batches match {
      case Some(selection) =>
        val c = Option(conf).getOrElse(new Configuration())
        TaskPlanner.planSplits(BatchStripes.splits(taskFiles(snapshot.files), selection, c, plan.options), sizing)
      case None => TaskPlanner.plan(taskFiles(snapshot.files), sizing)
    }

  /** Files as tasks carry them: knowing where the plan's fields are, not every field's position. */
  private def taskFiles(files: IndexedSeq[SnapshotFile]): IndexedSeq[SnapshotFile] = {
    val ids = plan.fieldIds
    files.map(_.locating(ids))
  }

  /** Tasks reading fragments `fragments` of `other`, another version of this scan's dataset, with
    * this scan's [[plan]] (how a stream reads each version's new fragments). `other` must have the
    * schema this scan was planned for: its columns are found by the same field ids. */
  def tasksOf(other: Snapshot, fragments: Set[Long], sizing: TaskSizing = TaskSizing()): IndexedSeq[ScanTask] = {
    require(other.root == snapshot.root, s"${other.root} is not ${snapshot.root}")
    val sameSchema = (other.schema, snapshot.schema) match {
      case (Some(a), Some(b)) => io.fermion.core.dataset.FermionDataset.sameShape(a, b)
      case _ => false
    }
    if (!sameSchema || other.partitionFields.map(_.fieldId) != snapshot.partitionFields.map(_.fieldId))
      throw new UnsupportedOperationException(
        s"version ${other.version.getOrElse(0L)} of ${snapshot.root} has another schema than version " +
          s"${snapshot.version.getOrElse(0L)}, which this read was planned for"
      )
    TaskPlanner.plan(taskFiles(other.files.filter(f => fragments.contains(f.fragmentId))), sizing)
  }

  /** Of `columns` (flat integer, date, timestamp or decimal columns this scan reads), those whose
    * stripes each hold a narrow slice of the column's values (sorted or clustered keys), judged by
    * the stripe statistics of up to 8 of the snapshot's files: a filter by a set of their values
    * (a join's keys) rules out most stripes. Opens those files' footers and these columns'
    * metadata with `conf`.
    * {{{
    * if (scan.clusteredColumns(Seq("order_id"), conf).nonEmpty) ... // worth filtering by the join's keys
    * }}} */
  def clusteredColumns(columns: Seq[String], conf: Configuration): Set[String] =
    Clustering.clustered(this, columns, conf)

  /** An estimate of the share (0 to 1) of this scan's rows that its filter keeps, for sizing the
    * scan's output before it runs: the filter is tried on the partition values and statistics of
    * up to 8 of the snapshot's files (spread over it) and on the first 4,096 rows of up to two
    * stripes of each that the statistics leave in play, reading only the filter's columns with
    * `conf`. None without a filter.
    * {{{
    * val rows = scan.filteredShare(conf).map(s => (s * total).toLong)
    * }}} */
  def filteredShare(conf: Configuration): Option[Double] = FilterSelectivity.estimate(this, conf)

  /** One task per data file, in the snapshot's order, each reading its file whole in row order. */
  def fileTasks: IndexedSeq[ScanTask] =
    taskFiles(snapshot.files).map(f => ScanTask(IndexedSeq(FileSplit(f, 0, f.length))))

  /** Rows by `_rowaddr` (fragment id << 32 | row in the fragment), in request order (duplicates
    * allowed), read with bounded I/O: per file, one round of reads for the columns' structure
    * streams and one for the DATA pages (or values) of the requested rows. The scan's filter and
    * limit do not apply. A deleted or missing row is a [[io.fermion.core.dataset.FermionRowNotFoundException]]. */
  def takeAddresses(addresses: Array[Long], conf: Configuration, allocator: BufferAllocator): ScanBatch =
    take(addresses.map(a => ColumnRequest.fragmentOf(a) -> ColumnRequest.rowOf(a).toLong), conf, allocator)

  // One take at a time per scan: the files it keeps open are not shared by concurrent reads.
  private def take(requests: Array[(Long, Long)], conf: Configuration, allocator: BufferAllocator): ScanBatch =
    synchronized(Take.run(plan, snapshot.files, Take.versionText(snapshot), requests, conf, allocator, Some(takeCache)))

  /** `addresses` cut into at most `maxTasks` tasks of whole fragments, each carrying only its
    * fragments' files: a take spread over an engine's executors. */
  def takeTasks(addresses: Array[Long], maxTasks: Int): IndexedSeq[TakeTask] = {
    val byFragment = addresses.groupBy(ColumnRequest.fragmentOf).toIndexedSeq.sortBy(_._1)
    val perTask = math.max(1, (addresses.length + maxTasks - 1) / math.max(1, maxTasks))
    val tasks = IndexedSeq.newBuilder[TakeTask]
    var group = Vector.empty[(Long, Array[Long])]
    var size = 0
    def flush(): Unit = if (group.nonEmpty) {
      val ids = group.map(_._1).toSet
      tasks += TakeTask(
        plan,
        taskFiles(snapshot.files.filter(f => ids.contains(f.fragmentId))),
        Take.versionText(snapshot),
        group.flatMap(_._2).toArray
      )
      group = Vector.empty; size = 0
    }
    byFragment.foreach { g => group :+= g; size += g._2.length; if (size >= perTask) flush() }
    flush()
    tasks.result()
  }

  /** Rows by stable row id (`_rowid`, datasets created with stable row ids), in request order. Ids
    * are found through the row id index (built from the manifest's row ids on the first lookup,
    * without reading data); of the copies of an updated row, the live one is returned. */
  def takeRowIds(ids: Array[Long], conf: Configuration, allocator: BufferAllocator): ScanBatch =
    take(Take.locateRowIds(this, ids, conf), conf, allocator)

  /** Every row of the batches `ids` (batch-mode files), batch after batch in the order asked for,
    * rows in batch order: each batch's rows sit in the same pages of every column (format 16.10). */
  def takeBatches(ids: Array[Long], conf: Configuration, allocator: BufferAllocator): ScanBatch =
    synchronized(take(Take.locateBatches(this, ids, conf, takeCache), conf, allocator))

  /** The `_rowaddr`s of the rows with stable ids `ids` that the snapshot holds (deleted rows
    * included; see [[liveAddresses]]), found without reading data; unknown ids are dropped. */
  def rowIdAddresses(ids: Array[Long], conf: Configuration): Array[Long] =
    Take.locateRowIds(this, ids, conf, lenient = true).map { case (f, r) => ColumnRequest.address(f, r) }

  /** The addresses among `addresses` that name a row of the snapshot that is not deleted. */
  def liveAddresses(addresses: Array[Long], conf: Configuration): Array[Long] =
    Take.liveAddresses(this, addresses, conf)

  /** Rows by 0-based position in the snapshot's row order (fragments in order, deleted rows not
    * counted), in request order. For a snapshot of one file, positions are the file's row offsets. */
  def takePositions(positions: Array[Long], conf: Configuration, allocator: BufferAllocator): ScanBatch =
    take(Take.locatePositions(this, positions, conf), conf, allocator)

  /** Every row of the scan, task after task, in the snapshot's file order; exactly `limit` rows
    * when a limit was set. Close the iterator (it closes the current batch and files). */
  def batches(conf: Configuration, allocator: BufferAllocator): ScanIterator =
    new ScanIterator(plan, fileTasks, conf, allocator)
}

object Scan {

  /** A filter keeping at most 1 row in this many of a stripe has its matches cut out of the
    * stripe's columns (which then decode only those rows), whatever else the scan decided. */
  val CutMatchesBelow = 16

  /** Whether a scan can return exactly the rows its filter keeps at no more cost than leaving them
    * for an engine to filter again, given the filter's estimated [[Scan.filteredShare]] `share`:
    * when the filter keeps few rows (at most 1 in [[CutMatchesBelow]]) the reader cuts the matches
    * out of each stripe anyway, and when it keeps every row it has nothing to cut. Between the two,
    * an exact scan would copy most rows of its columns to drop the others. The engine then drops its
    * own filter, and with it the columns only the filter reads.
    * {{{
    * val exact = scan.filteredShare(conf).exists(Scan.exactFilterPays)
    * }}} */
  def exactFilterPays(share: Double): Boolean = share * CutMatchesBelow <= 1.0 || share >= 1.0

  /** `keys` packed as little-endian int64s (how callers without cheap JVM arrays, such as Python,
    * pass many row keys at once). */
  def keys(littleEndianInt64s: Array[Byte]): Array[Long] = {
    val b = java.nio.ByteBuffer.wrap(littleEndianInt64s).order(java.nio.ByteOrder.LITTLE_ENDIAN).asLongBuffer()
    val out = new Array[Long](b.remaining())
    b.get(out)
    out
  }
}

/** The batches of several tasks read one after another on this thread. */
final class ScanIterator private[scan] (
    plan: ReadPlan,
    tasks: IndexedSeq[ScanTask],
    conf: Configuration,
    allocator: BufferAllocator
) extends Iterator[ScanBatch] with AutoCloseable {
  private var taskIndex = 0
  private var reader: ScanTaskReader = _
  private var ready = false
  private var returned = 0L
  private var cut: ScanBatch = _
  private var done = ScanMetrics()

  override def hasNext: Boolean = {
    if (ready) return true
    if (plan.limit.exists(returned >= _)) return false
    while (true) {
      if (reader != null && reader.next()) { ready = true; return true }
      closeReader()
      if (taskIndex >= tasks.size) return false
      // The limit counts rows of the whole scan: each task gets what is left of it.
      val left = plan.limit.map(_ - returned)
      reader = new ScanTaskReader(plan.copy(limit = left), tasks(taskIndex), conf, allocator)
      taskIndex += 1
    }
    false
  }

  override def next(): ScanBatch = {
    if (!hasNext) throw new NoSuchElementException("no more batches")
    ready = false
    if (cut != null) { cut.close(); cut = null }
    val b = reader.batch
    val left = plan.limit.map(_ - returned).getOrElse(Long.MaxValue)
    returned += b.numRows
    if (b.numRows <= left) b
    else {
      cut = b.firstRows(left.toInt, allocator)
      returned = plan.limit.get
      cut
    }
  }

  /** What the scan has read so far. */
  def metrics: ScanMetrics = done + Option(reader).map(_.metrics).getOrElse(ScanMetrics())

  private def closeReader(): Unit = if (reader != null) {
    done = done + reader.metrics
    try reader.close()
    finally reader = null
  }

  override def close(): Unit = {
    if (cut != null) { cut.close(); cut = null }
    closeReader()
  }
}

package io.fermion.core.scan

import io.fermion.core.dataset.FermionRowNotFoundException
import io.fermion.core.read.{FermionFileReader, ParallelDecode}
import io.fermion.core.schema.FermionType
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector}
import org.apache.arrow.vector.complex.ListVector
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Rows of a snapshot fetched by address, stable row id or position, in request order (a row may be
  * asked for several times): the random-access path. Each fragment's rows are read by [[FileTake]]
  * (two rounds of reads per file: structure streams, then only the DATA pages or values the rows
  * need); deletions, field ids and column files are honoured as in a scan. */
private[scan] object Take {

  /** `requests(i)` = (fragment id, row in the fragment) of `files`. */
  def run(
      plan: ReadPlan,
      files: IndexedSeq[SnapshotFile],
      version: String,
      requests: Array[(Long, Long)],
      conf: Configuration,
      allocator: BufferAllocator,
      /** Open files to reuse (a long-lived scan keeps them open between takes), or None. */
      cache: Option[FragmentCache] = None
  ): ScanBatch = {
    val root = plan.root
    val byId = files.map(f => f.fragmentId -> f).toMap
    val n = requests.length
    // Per request: where its value sits among the per-stripe vectors read below.
    val slot = new Array[Int](n)
    val stripeOf = new Array[Int](n)
    val fragmentIndex = new Array[Int](n)
    val fragments = requests.map(_._1).distinct
    // Per fragment, per stripe read: the vectors of the plan's stored columns present there.
    val read = new Array[IndexedSeq[(Int, IndexedSeq[FieldVector])]](fragments.length)
    val presentByFragment = new Array[IndexedSeq[(Int, Int, Int, io.fermion.core.read.ProjectedNode)]](fragments.length)
    val rowIdsOf = new Array[Option[io.fermion.core.dataset.RowIdSequence]](fragments.length)
    val partitionOf = new Array[IndexedSeq[Option[io.fermion.core.expr.FilterValue]]](fragments.length)
    val wantsBatches = plan.columns.exists(c => c == PlannedColumn.BatchId || c == PlannedColumn.IndexInBatch)
    // Per request: its batch's id and its index in the batch (Long.MinValue: not a batch-mode file).
    val batchOf = if (wantsBatches) Array.fill(n)(Long.MinValue) else null
    val indexInBatch = if (wantsBatches) Array.fill(n)(Long.MinValue) else null
    // Bytes read per fragment (fragments are read at once, each on its own thread).
    val bytesOf = new Array[Long](fragments.length)
    try {
      ParallelDecode.runWaiting(fragments.length) { fi =>
        val fragment = fragments(fi)
        val file = byId.getOrElse(
          fragment,
          throw new FermionRowNotFoundException(root, s"no fragment $fragment in $version")
        )
        partitionOf(fi) = file.partition
        val files = cache.map(_.get(file, plan, conf)).getOrElse(FragmentFiles.open(file, plan, conf))
        try {
          rowIdsOf(fi) = files.rowIds
          val mine = requests.indices.filter(i => requests(i)._1 == fragment)
          mine.foreach { i =>
            val row = requests(i)._2
            if (row < 0 || row >= files.rows)
              throw new FermionRowNotFoundException(root, s"fragment $fragment has ${files.rows} rows, not row $row")
            if (files.isDeleted(row))
              throw new FermionRowNotFoundException(root, s"row $row of fragment $fragment is deleted in $version")
          }
          // Distinct rows of each stripe, sorted.
          val stripes =
            mine.groupBy(i => files.stripeOf(requests(i)._2)).toIndexedSeq.sortBy(_._1).map { case (s, is) =>
              val first = files.stripeFirstRow(s)
              val rows = is.map(i => (requests(i)._2 - first).toInt).distinct.sorted.toArray
              is.foreach { i =>
                stripeOf(i) = s
                slot(i) = java.util.Arrays.binarySearch(rows, (requests(i)._2 - first).toInt)
                fragmentIndex(i) = fi
              }
              s -> rows
            }
          presentByFragment(fi) = files.present
          if (wantsBatches) files.reader.batchIndex.foreach { index =>
            mine.foreach { i =>
              val stripe = files.stripeOf(requests(i)._2)
              val row = (requests(i)._2 - files.stripeFirstRow(stripe)).toInt
              val starts = index.batchStarts(stripe)
              val b = java.util.Arrays.binarySearch(starts, row) match { case k if k >= 0 => k; case k => -k - 2 }
              batchOf(i) = index.batches(stripe)._1(b)
              indexInBatch(i) = row - starts(b)
            }
          }
          val perSource = files.present.indices.groupBy(p => files.present(p)._2)
          val vectors = Array.fill(stripes.size)(new Array[FieldVector](files.present.size))
          read(fi) = stripes.indices.map(k => stripes(k)._1 -> vectors(k).toIndexedSeq)
          perSource.foreach { case (src, ps) =>
            val take = FileTake(
              files.sources(src),
              plan.options,
              // Files kept open between takes also keep their decoded VALIDITY and OFFSETS chunks.
              if (cache.nonEmpty) Some(files.structures(src)) else None
            )
            val got = take.take(stripes, ps.map(p => files.present(p)._3 -> files.present(p)._4), allocator)
            bytesOf(fi) += take.bytesRead
            stripes.indices.foreach(k =>
              ps.zip(got(k)).foreach { case (p, v) => vectors(k)(p) = files.widened(p, v, allocator) }
            )
          }
          read(fi) = stripes.indices.map(k => stripes(k)._1 -> vectors(k).toIndexedSeq)
        } finally if (cache.isEmpty) files.close()
      }
      val columns = scala.collection.mutable.ArrayBuffer.empty[ScanColumn]
      try plan.columns.indices.foreach { out =>
          columns += (plan.columns(out) match {
            case PlannedColumn.RowAddress =>
              ScanColumn.Values(longs(n, allocator)(i => ColumnRequest.address(requests(i)._1, requests(i)._2)))
            case PlannedColumn.RowId =>
              if (rowIdsOf.forall(_.isEmpty)) ScanColumn.Nulls(ScanBuilder.outputField(PlannedColumn.RowId))
              else ScanColumn.Values(longs(n, allocator)(i =>
                rowIdsOf(fragmentIndex(i)).map(_(requests(i)._2)).getOrElse(Long.MinValue)
              ))
            case PlannedColumn.Absent(_, field) => ScanColumn.Nulls(field)
            case PlannedColumn.Partition(_, index, field) =>
              ScanColumn.Values(PartitionVectors.vector(field, n, allocator)(i => partitionOf(fragmentIndex(i))(index)))
            case c @ PlannedColumn.BatchId =>
              if (!wantsBatches || batchOf.forall(_ == Long.MinValue)) ScanColumn.Nulls(ScanBuilder.outputField(c))
              else ScanColumn.Values(longs(n, allocator)(batchOf))
            case c @ PlannedColumn.IndexInBatch =>
              if (!wantsBatches || indexInBatch.forall(_ == Long.MinValue)) ScanColumn.Nulls(ScanBuilder.outputField(c))
              else ScanColumn.Values(ints(n, allocator)(indexInBatch))
            case c: PlannedColumn.Stored =>
              gather(out, c, n, fragmentIndex, stripeOf, slot, read, presentByFragment, allocator)
          })
        }
      catch {
        case t: Throwable => columns.foreach { case ScanColumn.Values(v) => v.close(); case _ => }; throw t
      }
      new ScanBatch(n, columns.toIndexedSeq, None, allocator, ScanMetrics(bytesRead = bytesOf.sum))
    } finally read.foreach(r => if (r != null) r.foreach(_._2.foreach(v => if (v != null) v.close())))
  }

  def versionText(snapshot: Snapshot): String = snapshot.version.map(v => s"version $v").getOrElse("the files")
  private def versionText(scan: Scan): String = versionText(scan.snapshot)

  private def longs(n: Int, allocator: BufferAllocator)(value: Int => Long): BigIntVector = {
    val v = new BigIntVector("value", allocator)
    v.allocateNew(n)
    var i = 0
    while (i < n) { val x = value(i); if (x == Long.MinValue) v.setNull(i) else v.set(i, x); i += 1 }
    v.setValueCount(n)
    v
  }

  private def ints(n: Int, allocator: BufferAllocator)(value: Int => Long): org.apache.arrow.vector.IntVector = {
    val v = new org.apache.arrow.vector.IntVector("value", allocator)
    v.allocateNew(n)
    var i = 0
    while (i < n) { val x = value(i); if (x == Long.MinValue) v.setNull(i) else v.set(i, x.toInt); i += 1 }
    v.setValueCount(n)
    v
  }

  /** Output column `out` in request order, copied out of the per-stripe vectors. */
  private def gather(
      out: Int,
      c: PlannedColumn.Stored,
      n: Int,
      fragmentIndex: Array[Int],
      stripeOf: Array[Int],
      slot: Array[Int],
      read: Array[IndexedSeq[(Int, IndexedSeq[FieldVector])]],
      present: Array[IndexedSeq[(Int, Int, Int, io.fermion.core.read.ProjectedNode)]],
      allocator: BufferAllocator
  ): ScanColumn = {
    // A fragment that lacks the column reads null there.
    val result = io.fermion.core.schema.ArrowSchemaMapping.toArrowField(c.request).createVector(allocator)
    try {
      result.setInitialCapacity(n)
      result.allocateNew()
      // The vector holding output row i (null: its fragment lacks the column).
      val sources = Array.tabulate[FieldVector](n) { i =>
        val fi = fragmentIndex(i)
        val p = present(fi).indexWhere(_._1 == out)
        if (p >= 0) read(fi).find(_._1 == stripeOf(i)).get._2(p) else null
      }
      result match {
        case l: ListVector if FixedWidthLists.applies(l) => FixedWidthLists.gather(l, sources, slot, n)
        case _ =>
          val pairs = scala.collection.mutable.HashMap.empty[FieldVector, org.apache.arrow.vector.util.TransferPair]
          var i = 0
          while (i < n) {
            val v = sources(i)
            if (v != null) pairs.getOrElseUpdate(v, v.makeTransferPair(result)).copyValueSafe(slot(i), i)
            i += 1
          }
      }
      result.setValueCount(n)
      ScanColumn.Values(result)
    } catch { case t: Throwable => result.close(); throw t }
  }

  /** The addresses of `addresses` that name a row of the snapshot (known fragment, within its
    * rows, not deleted), in the given order. */
  def liveAddresses(scan: Scan, addresses: Array[Long], conf: Configuration): Array[Long] = {
    val byId = scan.snapshot.files.map(f => f.fragmentId -> f).toMap
    val gone = scala.collection.mutable.HashMap.empty[Long, Option[org.roaringbitmap.RoaringBitmap]]
    val rows = scala.collection.mutable.HashMap.empty[Long, Long]
    addresses.filter { a =>
      val f = ColumnRequest.fragmentOf(a)
      val row = ColumnRequest.rowOf(a).toLong
      byId.get(f).exists { file =>
        val n = rows.getOrElseUpdate(f, physicalRows(file, scan, conf))
        row < n && !gone.getOrElseUpdate(
          f,
          file.deletion.map(d =>
            new io.fermion.core.dataset.FermionDataset(new Path(scan.plan.root), conf).readDeletionFile(d)
          )
        ).exists(_.contains(row.toInt))
      }
    }
  }

  private def physicalRows(f: SnapshotFile, scan: Scan, conf: Configuration): Long =
    if (f.physicalRows >= 0) f.physicalRows
    else {
      val r = FermionFileReader.openColumns(new Path(f.path), conf, scan.plan.options, f.length, Nil)
      try r.numRows
      finally r.close()
    }

  /** (fragment id, row) of stable row ids through the scan's [[RowIdIndex]] (no data is read): the
    * live copy of each row. `lenient` drops ids no fragment holds instead of failing, and keeps
    * every copy, deleted ones included (the caller filters with [[liveAddresses]]). */
  def locateRowIds(
      scan: Scan,
      ids: Array[Long],
      conf: Configuration,
      lenient: Boolean = false
  ): Array[(Long, Long)] = {
    val index = scan.rowIdIndex(conf)
    if (index.isEmpty && ids.nonEmpty && !lenient)
      throw new FermionRowNotFoundException(
        scan.plan.root,
        "the dataset has no stable row ids (create it with stableRowIds)"
      )
    if (lenient) return ids.flatMap(index.candidates)
    val found = ids.map(index.candidates)
    val address = (c: (Long, Long)) => ColumnRequest.address(c._1, c._2)
    val live = liveAddresses(scan, found.flatten.map(address).distinct, conf).toSet
    ids.indices.map { i =>
      val id = ids(i)
      found(i).filter(c => live(address(c))) match {
        case Seq(one) => one
        case Seq() if found(i).isEmpty =>
          throw new FermionRowNotFoundException(scan.plan.root, s"no row with _rowid $id in ${versionText(scan)}")
        case Seq() =>
          throw new FermionRowNotFoundException(
            scan.plan.root,
            s"the row with _rowid $id is deleted in ${versionText(scan)}"
          )
        case many =>
          throw new io.fermion.core.dataset.InvalidFermionDatasetException(
            scan.plan.root,
            versionText(scan),
            s"_rowid $id names ${many.size} live rows (fragments ${many.map(_._1).mkString(", ")})"
          )
      }
    }.toArray
  }

  /** (fragment id, row) of every row of the batches `ids`, batch after batch in the order asked
    * for (rows in batch order). Batches are found through each file's batch index: only stripes
    * whose min/max batch id admits an id decode their batch ids. A deleted row of a batch is left
    * out; an id no file holds is a [[FermionRowNotFoundException]]. */
  def locateBatches(scan: Scan, ids: Array[Long], conf: Configuration, cache: FragmentCache): Array[(Long, Long)] = {
    val wanted = ids.toSet
    val found = scala.collection.mutable.HashMap.empty[Long, IndexedSeq[(Long, Long)]]
    scan.snapshot.files.foreach { file =>
      val files = cache.get(file, scan.plan, conf)
      files.reader.batchIndex.foreach { index =>
        (0 until files.reader.numStripes).foreach { stripe =>
          if (wanted.exists(id => index.mayHold(stripe, id))) {
            val (batchIds, _) = index.batches(stripe)
            val starts = index.batchStarts(stripe)
            val first = files.stripeFirstRow(stripe)
            batchIds.indices.foreach { b =>
              if (wanted.contains(batchIds(b))) {
                val rows = (starts(b) until starts(b + 1)).map(first + _).filterNot(files.isDeleted)
                found(batchIds(b)) = found.getOrElse(batchIds(b), IndexedSeq.empty) ++ rows.map(file.fragmentId -> _)
              }
            }
          }
        }
      }
    }
    ids.flatMap { id =>
      found.getOrElse(
        id,
        throw new FermionRowNotFoundException(scan.plan.root, s"no batch $id in ${versionText(scan)}")
      )
    }
  }

  /** (fragment id, row) of 0-based positions in the snapshot's row order (deleted rows do not
    * count). */
  def locatePositions(scan: Scan, positions: Array[Long], conf: Configuration): Array[(Long, Long)] = {
    val files = scan.snapshot.files.toArray
    val physical = files.map(physicalRows(_, scan, conf))
    val live = files.indices.map(i => physical(i) - files(i).deletedRows)
    val starts = live.scanLeft(0L)(_ + _).toArray
    val deletions = scala.collection.mutable.HashMap.empty[Int, org.roaringbitmap.RoaringBitmap]
    positions.map { p =>
      if (p < 0 || p >= starts.last)
        throw new FermionRowNotFoundException(
          scan.plan.root,
          s"position $p is outside the ${starts.last} rows of ${versionText(scan)}"
        )
      val i = java.util.Arrays.binarySearch(starts, p) match { case k if k >= 0 => k; case k => -k - 2 }
      // The i-th file may be empty (starts repeat): take the last file starting at or before p with rows.
      var f = i
      while (starts(f + 1) <= p) f += 1
      val k = p - starts(f)
      val row = files(f).deletion match {
        case None => k
        case Some(d) =>
          val gone = deletions.getOrElseUpdate(
            f,
            new io.fermion.core.dataset.FermionDataset(new Path(scan.plan.root), conf).readDeletionFile(d)
          )
          // The smallest row r with k + 1 rows kept in [0, r].
          var lo = k
          var hi = k + gone.getLongCardinality
          while (lo < hi) {
            val mid = (lo + hi) >>> 1; if (mid + 1 - gone.rankLong(mid.toInt) >= k + 1) hi = mid else lo = mid + 1
          }
          lo
      }
      files(f).fragmentId -> row
    }
  }
}

/** Rows of some fragments fetched by address: a serialisable unit of a distributed take (see
  * [[Scan.takeTasks]]); its rows come back in the task's order. */
final case class TakeTask(plan: ReadPlan, files: IndexedSeq[SnapshotFile], version: String, addresses: Array[Long]) {
  def read(conf: Configuration, allocator: BufferAllocator): ScanBatch =
    Take.run(
      plan,
      files,
      version,
      addresses.map(a => ColumnRequest.fragmentOf(a) -> ColumnRequest.rowOf(a).toLong),
      conf,
      allocator
    )
}

/** Fragments kept open between takes of one [[Scan]] (footer, schema, CIT and CMBs read once). */
final private[scan] class FragmentCache extends AutoCloseable {
  private val open = new java.util.concurrent.ConcurrentHashMap[Long, FragmentFiles]()

  def get(file: SnapshotFile, plan: ReadPlan, conf: Configuration): FragmentFiles =
    open.computeIfAbsent(file.fragmentId, _ => FragmentFiles.open(file, plan, conf))

  override def close(): Unit = {
    open.values().forEach(_.close())
    open.clear()
  }
}

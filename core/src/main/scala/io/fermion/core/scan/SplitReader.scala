package io.fermion.core.scan

import java.util.Locale

import io.fermion.core.dataset.{FermionDataset, InvalidFermionDatasetException}
import io.fermion.core.expr.{ConstantFilter, FilterExpr}
import io.fermion.core.read.{FermionFileReader, ProjectedNode, RowRanges, StripeFetch}
import io.fermion.core.read.filter.{RowFilter, StripeFilter}
import io.fermion.core.schema.{FermionType, UnsupportedColumnTypeException}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap

/** Reads the stripes of one [[FileSplit]], one [[ScanBatch]] per stripe with rows left. Every rule
  * of the table model that a read must honour is applied here: columns are found in the fragment's
  * files by field id (loose files: by name), so renamed columns keep their data and dropped ones
  * are never read; files that added columns to the fragment are read beside the leading one; rows
  * of the fragment's deletion file are dropped; `_rowaddr` and `_rowid` are computed from each
  * row's position. Stripes and pages are skipped by statistics, the filter's columns are decoded
  * first and the others read only for rows that may match (late materialisation), and the next
  * stripe's reads start before the current one is decoded. */
final private[scan] class SplitReader private (
    split: FileSplit,
    plan: ReadPlan,
    files: FragmentFiles,
    allocator: BufferAllocator,
    /** Rows the task may still return (a pushed LIMIT): no stripe is fetched ahead past it. */
    rowBudget: () => Long
) extends AutoCloseable {
  private val file = split.file
  private val reader = files.reader
  private val sources = files.sources
  private val deleted = files.deleted
  private val stripeFirstRow = files.stripeFirstRow
  private val present = files.present
  private val ownStripes = (0 until reader.numStripes).filter { s =>
    val off = reader.stripes.dataOffset(s)
    off >= split.start && off < split.start + split.length
  }

  private def filterColumn(name: String): Option[(Int, Int)] = files.filterColumn(name)

  /** What the file holds of each filter column: the file's value of a partition column, null for a
    * column the file does not hold (added after it was written, or absent from this loose file),
    * else values that vary by row. */
  private val constants: String => ConstantFilter.Column = {
    val values = plan.partitionColumns.map(_.toLowerCase(Locale.ROOT)).zip(file.partition).toMap
    c =>
      values.get(c.toLowerCase(Locale.ROOT)).map(ConstantFilter.Constant)
        .getOrElse(if (filterColumn(c).isEmpty) ConstantFilter.Constant(None) else ConstantFilter.Varies)
  }

  /** No row of the file can match: its constants rule the filter out. */
  private val ruledOut = plan.filter.exists(f => !ConstantFilter.mayMatch(f, constants))

  /** The plan's filter on this file, the leaves on its constants decided. */
  private val filter: Option[FilterExpr] =
    if (ruledOut) None else plan.filter.flatMap(ConstantFilter.bind(_, constants))

  private val stripeFilter =
    filter.map(f => new StripeFilter(reader, f, n => files.statsColumn(n).map { case (k, c) => sources(k) -> c }))

  /** The split's stripes that the filter's statistics cannot rule out. */
  /** The file's batch index, when batches are selected or their columns read. */
  private val batchIndex =
    if (
      plan.batches.nonEmpty || plan.columns.exists(c => c == PlannedColumn.BatchId || c == PlannedColumn.IndexInBatch)
    )
      reader.batchIndex
    else None

  private val stripes = if (ruledOut) IndexedSeq.empty[Int]
  else {
    val byStats = stripeFilter match {
      case Some(sf) => ownStripes.filter(sf.mightMatch)
      case None => ownStripes
    }
    plan.batches match {
      case None => byStats
      // A file without batches holds none of them.
      case Some(b) =>
        batchIndex.map(i => byStats.filter(s => b.overlaps(i.minBatchId(s), i.maxBatchId(s)))).getOrElse(Nil)
    }
  }

  /** The rows of `stripe` in the selected batches. */
  private def batchRows(stripe: Int, b: BatchSelection): RowRanges = {
    val index = batchIndex.get
    val (ids, _) = index.batches(stripe)
    val starts = index.batchStarts(stripe)
    val runs = scala.collection.mutable.ArrayBuffer.empty[(Int, Int)]
    var i = 0
    while (i < ids.length) { if (b.contains(ids(i))) runs += ((starts(i), starts(i + 1))); i += 1 }
    RowRanges.of(runs.toSeq)
  }

  /** The filter's flat columns: (name in the filter, source file, column index). */
  private val filterColumns: IndexedSeq[(String, Int, Int)] =
    filter.toIndexedSeq.flatMap(FilterExpr.columns).flatMap { n =>
      filterColumn(n).filter { case (k, c) => !FermionType.isNested(sources(k).field(c).dataType) }
        .map { case (k, c) => (n, k, c) }
    }

  /** Late materialisation: decode the filter's columns first, evaluate the filter on them, and
    * read the other columns only for the rows that may match. Unless the plan asks for exact
    * filtering, it stops for the rest of the split after a stripe where keeping the matches did
    * not pay (see [[filterRows]]). */
  private var lateMaterialize = filterColumns.nonEmpty

  private var nextStripe = 0
  private var stripesDecoded = 0L
  private var stripesRuledOutByPages = 0L
  private var stripesFilteredByRows = 0L

  /** The stripe after the current one, its reads already under way. */
  private var prefetched: Option[PlannedStripe] = None

  /** Output columns whose deferred elements someone asked for: later stripes read them whole. */
  private val elementsUsed = scala.collection.mutable.Set.empty[Int]
  private var current: ScanBatch = _

  /** A stripe to decode: the rows to keep (null: all), which list columns stay lengths-only, per
    * source file the fetch of its columns, columns already decoded while filtering, nested columns
    * to take row by row instead of decoding, and how many rows the deletion file removes from it. */
  final private class PlannedStripe(
      val stripe: Int,
      val selection: RowRanges,
      val deferred: Set[Int],
      val fetches: IndexedSeq[(IndexedSeq[Int], FermionFileReader, StripeFetch)],
      val reused: Map[Int, FieldVector],
      val taken: Set[Int],
      val deletedRows: Int
  ) {
    def rowsLeft: Long =
      (if (selection == null) reader.stripes.rowCount(stripe).toLong else selection.rowCount.toLong) - deletedRows
  }

  /** Plans the next stripe with rows left and starts its reads; None at the end of the split. */
  private def planNext(): Option[PlannedStripe] = {
    while (nextStripe < stripes.size) {
      val stripe = stripes(nextStripe)
      nextStripe += 1
      val rows = reader.stripes.rowCount(stripe)
      val byStats = stripeFilter.map(_.rowRanges(stripe)).getOrElse(RowRanges.all(rows))
      val ranges = plan.batches.map(b => byStats.intersect(batchRows(stripe, b))).getOrElse(byStats)
      // Cutting rows out costs a copy per value: worth it only when most rows go.
      val pageSelection = if (ranges.rowCount.toLong * 2 <= rows) ranges else null
      if (ranges.isEmpty) stripesRuledOutByPages += 1
      else if (!lateMaterialize) return Some(plan(stripe, pageSelection, Map.empty))
      else {
        val (matching, reused) = filterRows(stripe, ranges, pageSelection)
        if (matching.isEmpty) stripesFilteredByRows += 1
        else return Some(plan(stripe, if (matching eq ranges) pageSelection else matching, reused))
      }
    }
    None
  }

  /** The filter's conjuncts in the order they are evaluated, each stage with the filter columns it
    * decodes first: the conjuncts on one column, column by column in the filter's order, then those
    * on several columns. Each stage decodes its columns only at the rows the previous stages kept
    * (see [[evaluateFilter]]). */
  private val filterStages: IndexedSeq[(FilterExpr, IndexedSeq[(String, Int, Int)])] = filter.toIndexedSeq.flatMap {
    f =>
      val parts = FilterExpr.conjuncts(FilterExpr.normalize(f))
      def key(c: String) = c.toLowerCase(Locale.ROOT)
      val (single, multi) = parts.partition(p => FilterExpr.columns(p).map(key).size == 1)
      val byColumn = single.groupBy(p => key(FilterExpr.columns(p).head))
      val order = single.map(p => key(FilterExpr.columns(p).head)).distinct
      val stages = order.map(c => byColumn(c).reduce(FilterExpr.And(_, _)) -> Set(c)) ++
        (if (multi.isEmpty) Nil
         else Seq(multi.reduce(FilterExpr.And(_, _)) -> multi.flatMap(FilterExpr.columns).map(key).toSet))
      stages.map { case (e, cs) => e -> filterColumns.filter(fc => cs.contains(key(fc._1))) }.toIndexedSeq
  }

  /** Late materialisation of one stripe: decodes the filter's columns (on `pageSelection`, or
    * whole) and evaluates the filter on the rows of `ranges`. Returns the rows to keep — `ranges`
    * itself when cutting the matches out would not pay — and the decoded columns the scan also
    * returns, by position in [[present]] (the others are closed). */
  private def filterRows(
      stripe: Int,
      ranges: RowRanges,
      pageSelection: RowRanges
  ): (RowRanges, Map[Int, FieldVector]) = {
    val rows = reader.stripes.rowCount(stripe)
    val (matching, decoded, partly) = evaluateFilter(stripe, ranges, pageSelection)
    // Rows scattered all over the stripe save no page and cost a copy each: keep the matches only
    // when they are rare or come in a few runs (sorted keys, point lookups), and stop evaluating
    // the filter for the rest of the split otherwise.
    val pays = plan.exactFilter || matching.rowCount.toLong * Scan.CutMatchesBelow <= rows ||
      (matching.rowCount.toLong * 2 <= rows && matching.size <= 64)
    if (!pays) lateMaterialize = false
    // Decoded on `pageSelection` (or whole), which holds every row kept below; a column decoded only
    // at the rows earlier stages kept holds the matches, but not every row of `ranges`.
    val reused =
      if (matching.isEmpty) Map.empty[Int, FieldVector]
      else present.indices.flatMap { p =>
        val (_, src, col, node) = present(p)
        decoded.get((src, col)).filter(_ => node.children.isEmpty && (pays || !partly((src, col)))).map(p -> _)
      }.toMap
    decoded.values.filterNot(v => reused.values.exists(_ eq v)).foreach(_.close())
    (if (pays) matching else ranges, reused)
  }

  /** Decodes the filter's columns of `stripe` and evaluates the filter on the rows of `ranges`,
    * stage by stage ([[filterStages]]): the first stage's columns on `pageSelection` (or whole),
    * each later stage's only at the rows still in play once those are at most half the stripe.
    * Returns the rows that may match, the decoded columns by (source file, column), which the
    * caller closes, and those decoded only at some rows (valid at the rows returned). */
  private def evaluateFilter(
      stripe: Int,
      ranges: RowRanges,
      pageSelection: RowRanges
  ): (RowRanges, scala.collection.Map[(Int, Int), FieldVector], Set[(Int, Int)]) = {
    val rows = reader.stripes.rowCount(stripe)
    val decoded = scala.collection.mutable.Map.empty[(Int, Int), FieldVector]
    var partly = Set.empty[(Int, Int)]
    // Values of columns whose type was widened since the file was written: compared widened.
    val copies = scala.collection.mutable.ArrayBuffer.empty[FieldVector]
    val byName = scala.collection.mutable.Map.empty[String, (FermionType, FieldVector)]
    var kept = ranges
    try {
      filterStages.foreach { case (expr, cols) =>
        if (!kept.isEmpty) {
          val sparse = !(kept eq ranges) && kept.rowCount.toLong * 2 <= rows
          cols.filterNot { case (_, k, c) => decoded.contains((k, c)) }.groupBy(_._2).foreach { case (k, cs) =>
            val keys = cs.map(_._3).distinct
            // A widened copy converts every slot, so a column to widen is decoded whole.
            val at = if (sparse && cs.forall { case (n, _, c) => files.widenedFilterType(n, k, c).isEmpty }) kept
            else pageSelection
            val vs = sources(k).readStripeProjected(
              stripe,
              keys.map(c => c -> ProjectedNode.full(sources(k).field(c))),
              allocator,
              at
            )
            keys.zip(vs).foreach { case (c, v) => decoded((k, c)) = v; if (at eq kept) partly += ((k, c)) }
          }
          cols.foreach { case (n, k, c) =>
            val (t, v) = files.filterValues(n, k, c, decoded((k, c)), allocator)
            if (!(v eq decoded((k, c)))) copies += v
            byName(n.toLowerCase(Locale.ROOT)) = (t, v)
          }
          kept = RowFilter.select(expr, n => byName.get(n.toLowerCase(Locale.ROOT)), kept)
        }
      }
    } catch { case t: Throwable => decoded.values.foreach(_.close()); throw t }
    finally copies.foreach(_.close())
    (kept, decoded, partly)
  }

  /** An estimate of how many of the split's rows the filter keeps, from the first
    * `rowsPerStripe` rows of up to `stripesSampled` of its stripes (spread over the split) that
    * its constants and statistics leave in play: (the split's rows, the estimate). Stripes that
    * statistics rule out count as keeping nothing; a leaf the row filter cannot evaluate keeps
    * every row, as it does in a read; deleted rows are not counted out. */
  def sampleMatches(stripesSampled: Int, rowsPerStripe: Int): (Long, Double) = {
    val total = ownStripes.iterator.map(s => reader.stripes.rowCount(s).toLong).sum
    if (filter.isEmpty || plan.batches.nonEmpty) return (total, if (ruledOut) 0.0 else total.toDouble)
    val left = stripes.iterator.map(s => reader.stripes.rowCount(s).toLong).sum
    if (left == 0) return (total, 0.0)
    val chosen = Clustering.spread(stripes.toIndexedSeq, stripesSampled)
    var sampled = 0L
    var kept = 0L
    chosen.foreach { stripe =>
      val window = RowRanges.all(math.min(rowsPerStripe, reader.stripes.rowCount(stripe)))
      val candidates = stripeFilter.map(_.rowRanges(stripe).intersect(window)).getOrElse(window)
      sampled += window.rowCount
      if (!candidates.isEmpty) {
        if (filterColumns.isEmpty) kept += candidates.rowCount
        else {
          val (matching, decoded, _) = evaluateFilter(stripe, candidates, window)
          decoded.values.foreach(_.close())
          kept += matching.rowCount
        }
      }
    }
    (total, left.toDouble * kept / math.max(1L, sampled))
  }

  /** Starts the reads of the scan's columns of `stripe` (all but those already decoded), keeping
    * `selection` (null: every row). */
  private def plan(stripe: Int, selection: RowRanges, reused: Map[Int, FieldVector]): PlannedStripe = {
    val rows = reader.stripes.rowCount(stripe)
    val first = stripeFirstRow(stripe)
    val gone = deleted.map(d => d.rangeCardinality(first, first + rows)).getOrElse(0L).toInt
    // Rows cut out of whole vectors (deletions, a selection) cannot leave elements deferred; once
    // someone touched a column's elements, later stripes read that column whole at once.
    val deferred = present.indices.filter { p =>
      val node = present(p)._4
      plan.deferElements && gone == 0 && selection == null && !elementsUsed.contains(p) &&
      (node.field.dataType == FermionType.List || node.field.dataType == FermionType.Map)
    }.toSet
    // The pages of a nested column's values cannot be chosen from the rows alone (their value
    // counts are not row counts), so a selection would decode them all; a string column's would
    // turn its whole OFFSETS chunk into offsets. A few selected rows (batch or point lookups) are
    // taken instead, their structure read first (constant lengths are not expanded), then only
    // the pages of their values (FileTake).
    val taken =
      if (selection == null || plan.keepSelection || selection.rowCount.toLong * TakeBelow > rows) Set.empty[Int]
      else present.indices.filter { p =>
        val t = present(p)._4.field.dataType
        !reused.contains(p) && (FermionType.isNested(t) || FermionType.isVariableWidth(t))
      }.toSet
    val fetches =
      present.indices.filterNot(p => reused.contains(p) || taken.contains(p)).groupBy(p => present(p)._2)
        .toIndexedSeq.map { case (src, ps) =>
          val cols = ps.map { p =>
            val (_, _, c, node) = present(p); c -> (if (deferred(p)) node.withoutElements else node)
          }
          (ps, sources(src), sources(src).fetch(stripe, cols, selection))
        }
    new PlannedStripe(stripe, selection, deferred, fetches, reused, taken, gone)
  }

  /** Decodes the next stripe with rows left; false at the end of the split. */
  def next(): Boolean = {
    releaseCurrent()
    val planned = prefetched.orElse(planNext()) match {
      case Some(p) => p
      case None => return false
    }
    prefetched = None
    // Start reading the following stripe before decoding this one, unless a limit ends the task
    // with this stripe.
    if (planned.rowsLeft < rowBudget()) prefetched = planNext()
    val stripe = planned.stripe
    stripesDecoded += 1
    val rows = reader.stripes.rowCount(stripe)
    val first = stripeFirstRow(stripe)
    val decoded = new Array[FieldVector](present.size)
    planned.reused.foreach { case (p, v) => decoded(p) = v }
    try planned.fetches.foreach { case (ps, src, fetch) =>
        ps.zip(src.decode(fetch, allocator)).foreach { case (p, v) => decoded(p) = v }
      }
    catch { case t: Throwable => decoded.filter(_ != null).foreach(_.close()); throw t }
    val keptRows: Array[Int] = {
      val candidates = if (planned.selection == null) null else planned.selection.rows
      deleted match {
        case Some(d) if planned.deletedRows > 0 =>
          val all = if (candidates == null) Array.range(0, rows) else candidates
          all.filter(i => !d.contains((first + i).toInt))
        case _ => candidates
      }
    }
    val vectors: IndexedSeq[FieldVector] =
      try {
        val whole = present.indices.filterNot(planned.taken.contains)
        if (keptRows != null && !plan.keepSelection) {
          RowSelection.keep(whole.map(decoded(_)), keptRows, allocator).zip(whole).foreach { case (v, p) =>
            decoded(p) = v
          }
          takeRows(stripe, planned.taken, keptRows, decoded)
        }
        decoded.toIndexedSeq
      } catch { case t: Throwable => decoded.foreach(v => if (v != null) v.close()); throw t }
    // With the selection kept, the vectors keep every row of the stripe.
    val outRows = if (keptRows == null || plan.keepSelection) rows else keptRows.length
    val byOutput = present.indices.map(p => present(p)._1 -> p).toMap
    val columns = plan.columns.indices.map { out =>
      plan.columns(out) match {
        case PlannedColumn.RowAddress =>
          val base = ColumnRequest.address(file.fragmentId, 0)
          ScanColumn.Values(positions(first, rows, keptRows)(base + _))
        case PlannedColumn.RowId =>
          files.rowIds match {
            case Some(ids) => ScanColumn.Values(positions(first, rows, keptRows)(ids(_)))
            case None => ScanColumn.Nulls(RowIdField)
          }
        case PlannedColumn.Absent(_, field) => ScanColumn.Nulls(field)
        case PlannedColumn.Partition(_, index, field) =>
          PartitionVectors.constant(field, file.partition(index), outRows, allocator)
        case c @ (PlannedColumn.BatchId | PlannedColumn.IndexInBatch) =>
          batchIndex match {
            case None => ScanColumn.Nulls(ScanBuilder.outputField(c))
            case Some(index) =>
              ScanColumn.Values(batchColumn(index, stripe, rows, keptRows, c == PlannedColumn.BatchId))
          }
        case c: PlannedColumn.Stored =>
          byOutput.get(out) match {
            case None => ScanColumn.Nulls(c.request)
            case Some(p) if planned.deferred(p) =>
              val (_, src, col, node) = present(p)
              new ScanColumn.Lengths(
                vectors(p).asInstanceOf[org.apache.arrow.vector.IntVector],
                () => {
                  elementsUsed += p
                  files.widened(
                    p,
                    sources(src).readStripeProjected(stripe, IndexedSeq(col -> node), allocator).head,
                    allocator
                  )
                }
              )
            case Some(p) => ScanColumn.Values(files.widened(p, vectors(p), allocator))
          }
      }
    }
    current =
      new ScanBatch(outRows, columns, Some(file), allocator, selection = if (plan.keepSelection) keptRows else null)
    true
  }

  /** A selection of at most 1/TakeBelow of a stripe's rows takes its nested columns row by row. */
  private val TakeBelow = 8

  private var takePages = 0L
  private var takeSkipped = 0L
  private var takeNanos = 0L

  /** The `rows` (sorted) of `stripe` of the columns at positions `ps` of [[present]], into `into`. */
  private def takeRows(stripe: Int, ps: Set[Int], rows: Array[Int], into: Array[FieldVector]): Unit =
    ps.toIndexedSeq.groupBy(p => present(p)._2).foreach { case (src, group) =>
      val take = FileTake(sources(src), plan.options)
      val got = take.take(IndexedSeq(stripe -> rows), group.map(p => present(p)._3 -> present(p)._4), allocator).head
      takePages += take.pagesDecoded
      takeSkipped += take.pagesSkipped
      takeNanos += take.decodeNanos
      group.zip(got).foreach { case (p, v) => into(p) = v }
    }

  private val RowIdField =
    io.fermion.core.schema.FermionField(ColumnRequest.RowIdName, -1, FermionType.Int64, nullable = true)

  /** `batch_id` (or `index_in_batch`) of each returned row, from the stripe's batch lengths. */
  private def batchColumn(
      index: io.fermion.core.read.BatchIndex,
      stripe: Int,
      rows: Int,
      keptRows: Array[Int],
      ids: Boolean
  ): FieldVector = {
    val (batchIds, _) = index.batches(stripe)
    val starts = index.batchStarts(stripe)
    val n = if (keptRows == null) rows else keptRows.length
    val v: FieldVector =
      if (ids) { val b = new BigIntVector(ColumnRequest.BatchIdName, allocator); b.allocateNew(n); b }
      else {
        val i = new org.apache.arrow.vector.IntVector(ColumnRequest.IndexInBatchName, allocator); i.allocateNew(n); i
      }
    var b = 0
    var r = 0
    while (r < n) {
      val row = if (keptRows == null) r else keptRows(r)
      if (row < starts(b) || row >= starts(b + 1)) {
        b = java.util.Arrays.binarySearch(starts, row) match { case k if k >= 0 => k; case k => -k - 2 }
      }
      v match {
        case big: BigIntVector => big.set(r, batchIds(b))
        case int: org.apache.arrow.vector.IntVector => int.set(r, row - starts(b))
      }
      r += 1
    }
    v.setValueCount(n)
    v
  }

  /** `valueOf` each returned row's offset in the fragment. */
  private def positions(first: Long, rows: Int, keptRows: Array[Int])(valueOf: Long => Long): BigIntVector = {
    val a = new BigIntVector("position", allocator)
    val n = if (keptRows == null) rows else keptRows.length
    a.allocateNew(n)
    var r = 0
    while (r < n) { a.set(r, valueOf(first + (if (keptRows == null) r else keptRows(r)))); r += 1 }
    a.setValueCount(n)
    a
  }

  def batch: ScanBatch = current

  def metrics: ScanMetrics = ScanMetrics(
    stripesRead = stripesDecoded + stripesFilteredByRows,
    stripesSkipped = ownStripes.size - stripes.size + stripesRuledOutByPages,
    bytesRead = sources.map(_.bytesRead).sum,
    metadataBytesRead = sources.map(_.metadataBytesRead).sum,
    pagesDecoded = sources.map(_.pagesDecoded).sum + takePages,
    pagesSkipped = sources.map(_.dataPagesSkipped).sum + takeSkipped,
    decodeNanos = sources.map(_.decodeNanos).sum + takeNanos
  )

  private def releaseCurrent(): Unit = if (current != null) { current.close(); current = null }

  override def close(): Unit =
    try { releaseCurrent(); prefetched.foreach(_.reused.values.foreach(_.close())); prefetched = None }
    finally files.close()
}

private[scan] object SplitReader {

  /** Opens the split's files (and reads its deletion file); closes them again if that fails. */
  def open(
      split: FileSplit,
      plan: ReadPlan,
      conf: Configuration,
      allocator: BufferAllocator,
      rowBudget: () => Long
  ): SplitReader = {
    val files = FragmentFiles.open(split.file, plan, conf)
    try new SplitReader(split, plan, files, allocator, rowBudget)
    catch { case t: Throwable => files.close(); throw t }
  }
}

package io.fermion.spark.read

import io.fermion.core.dataset.FermionDataset
import io.fermion.core.read.{FermionFileReader, ProjectedNode, ReaderOptions, RowRanges, StripeFetch}
import io.fermion.core.expr.FilterExpr
import io.fermion.core.read.filter.{RowFilter, StripeFilter}
import io.fermion.core.schema.{FermionType, UnsupportedColumnTypeException}
import io.fermion.spark.SparkTypeMapping
import io.fermion.spark.metrics.FermionScanMetrics
import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.{FieldVector, IntVector}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}
import org.roaringbitmap.RoaringBitmap

/** Reads the splits of one partition one after another (small files are packed together). */
final class FermionColumnarPartitionReader(
    part: FermionInputPartition,
    readSchema: StructType,
    readFieldIds: Option[IndexedSeq[Int]],
    columnIds: Option[Map[String, Int]],
    datasetRoot: String,
    filter: Option[FilterExpr],
    conf: Configuration,
    readerOptions: ReaderOptions,
    limit: Option[Int] = None
) extends PartitionReader[ColumnarBatch] {
  private val allocator: BufferAllocator =
    FermionColumnarPartitionReader.root.newChildAllocator(
      s"fermion:${part.splits.headOption.map(_.file).getOrElse("")}",
      0,
      Long.MaxValue
    )
  private var nextSplit = 0
  private var split: FileSplitReader = _

  /** Counters of the splits already closed. */
  private var finished = SplitCounters(0, 0, 0, 0, 0, 0, 0)
  private var rowsReturned = 0L

  override def next(): Boolean = {
    // A pushed LIMIT: this partition stops once it has returned that many rows (Spark still
    // applies the limit on top).
    if (limit.exists(rowsReturned >= _)) return false
    while (true) {
      if (split != null && split.next()) { rowsReturned += split.get().numRows(); return true }
      closeSplit()
      if (nextSplit >= part.splits.size) return false
      split = FileSplitReader.open(
        part.splits(nextSplit),
        readSchema,
        readFieldIds,
        columnIds,
        datasetRoot,
        filter,
        conf,
        readerOptions,
        allocator
      )
      nextSplit += 1
    }
    false
  }

  override def get(): ColumnarBatch = split.get()

  private def closeSplit(): Unit = if (split != null) {
    finished = finished + split.counters
    split.close()
    split = null
  }

  override def currentMetricsValues(): Array[CustomTaskMetric] = {
    val c = Option(split).map(s => finished + s.counters).getOrElse(finished)
    Array(
      FermionScanMetrics.task(FermionScanMetrics.StripesRead, c.stripesRead),
      FermionScanMetrics.task(FermionScanMetrics.StripesSkipped, c.stripesSkipped),
      FermionScanMetrics.task(FermionScanMetrics.BytesRead, c.bytesRead),
      FermionScanMetrics.task(FermionScanMetrics.MetadataBytesRead, c.metadataBytesRead),
      FermionScanMetrics.task(FermionScanMetrics.PagesDecoded, c.pagesDecoded),
      FermionScanMetrics.task(FermionScanMetrics.PagesSkipped, c.pagesSkipped),
      FermionScanMetrics.task(FermionScanMetrics.DecodeTimeMs, c.decodeNanos / 1000000L)
    )
  }

  override def close(): Unit =
    try closeSplit()
    finally allocator.close()
}

/** Reads the stripes of one file split, one ColumnarBatch per stripe. Columns are matched to the
  * file by field id for a dataset (`readFieldIds`), else by name (case-insensitively); a column the
  * file lacks reads as nulls, a column whose type differs is an error naming the file. Rows of the
  * fragment's deletion file are dropped from each batch; `_rowaddr` is computed. */
final class FileSplitReader private (
    part: FileSplit,
    reader: FermionFileReader,
    columnReaders: IndexedSeq[FermionFileReader],
    readSchema: StructType,
    readFieldIds: Option[IndexedSeq[Int]],
    columnIds: Option[Map[String, Int]],
    deleted: Option[RoaringBitmap],
    filter: Option[FilterExpr],
    allocator: BufferAllocator
) {

  /** Row offset of each stripe's first row within the file (= within the fragment). */
  private val stripeFirstRow: Array[Long] =
    (0 until reader.numStripes).scanLeft(0L)((acc, s) => acc + reader.stripes.rowCount(s)).toArray
  private val ownStripes = (0 until reader.numStripes).filter { s =>
    val off = reader.stripes.dataOffset(s)
    off >= part.start && off < part.start + part.length
  }

  /** The partition's stripes that the filter's statistics cannot rule out. */
  private def fileColumnOf(name: String): Option[Int] = columnIds match {
    case Some(ids) => ids.get(name.toLowerCase(java.util.Locale.ROOT)).map(id =>
        reader.schema.fields.indexWhere(_.fieldId == id)
      ).filter(_ >= 0)
    case None => reader.schema.indexOf(name)
  }
  private val stripeFilter = filter.map(f => new StripeFilter(reader, f, fileColumnOf))
  private val stripes = stripeFilter match {
    case Some(sf) => ownStripes.filter(sf.mightMatch)
    case None => ownStripes
  }

  /** The fragment's files: the leading one, then files that added columns (same stripes). */
  private val sources: IndexedSeq[FermionFileReader] = reader +: columnReaders
  columnReaders.foreach { r =>
    val same = r.numStripes == reader.numStripes && (0 until r.numStripes).forall(s =>
      r.stripes.rowCount(s) == reader.stripes.rowCount(s)
    )
    if (!same) throw new IllegalStateException(
      s"Column file ${r.path} of fragment ${part.fragmentId} does not share the stripes of ${part.file}"
    )
  }

  /** For each requested column, (file, column index in it), or (-1, -1) when no file has it. */
  private val located: IndexedSeq[(Int, Int)] = readFieldIds match {
    case Some(ids) => ids.map { id =>
        if (id < 0) (-1, -1)
        else sources.indices.iterator.map(k => k -> sources(k).schema.fields.indexWhere(_.fieldId == id)).find(
          _._2 >= 0
        ).getOrElse((-1, -1))
      }
    case None => readSchema.fields.toIndexedSeq.map(f => reader.schema.indexOf(f.name).map(0 -> _).getOrElse((-1, -1)))
  }
  private val fileColumns: IndexedSeq[Int] = located.map(_._2)

  /** What to decode of each present column: its file, and the requested (possibly nested-pruned) part. */
  private val present: IndexedSeq[(Int, Int, ProjectedNode)] = readSchema.fields.toIndexedSeq.zip(located).collect {
    case (f, (src, i)) if i >= 0 =>
      try (src, i, ProjectedNode.prune(sources(src).schema.fields(i), SparkTypeMapping.toFermionField(f)))
      catch {
        case e: UnsupportedColumnTypeException =>
          throw new IllegalStateException(
            s"Column `${f.name}` (${f.dataType.sql}) does not match ${sources(src).path}: ${e.getMessage}",
            e
          )
      }
  }

  /** Index into `stripes` of the next stripe to plan. */
  private var nextStripe = 0
  private var stripesDecoded = 0L

  /** Stripes whose every page the filter's page statistics ruled out. */
  private var stripesRuledOutByPages = 0L

  /** Stripes where no row of the filter's decoded columns matched (read, but nothing else). */
  private var stripesFilteredByRows = 0L

  /** The stripe after the current one, its reads already under way. */
  private var prefetched: Option[PlannedStripe] = None

  /** Columns whose deferred elements a query has asked for. */
  private val elementsUsed = scala.collection.mutable.Set.empty[Int]
  private var current: ColumnarBatch = _
  private var vectors: IndexedSeq[FieldVector] = IndexedSeq.empty

  /** A stripe to decode: the rows to keep (null: all), which list columns stay lengths-only, per
    * source file the fetch of its columns, and columns already decoded while filtering. */
  final private class PlannedStripe(
      val stripe: Int,
      val selection: RowRanges,
      val deferred: IndexedSeq[Boolean],
      val fetches: IndexedSeq[(IndexedSeq[Int], FermionFileReader, StripeFetch)],
      val reused: Map[Int, FieldVector],
      val deletedRows: Int
  )

  /** The filter's flat columns in the leading file: (name in the filter, column index). */
  private val filterColumns: IndexedSeq[(String, Int)] = filter.toIndexedSeq.flatMap(FilterExpr.columns).flatMap { n =>
    fileColumnOf(n).filter(c => !FermionType.isNested(reader.schema.fields(c).dataType)).map(n -> _)
  }

  /** Late materialisation: decode the filter's columns first, evaluate the filter on them, and
    * read the other columns only for the rows that may match. Stops for the rest of the split
    * after a stripe where keeping the matches did not pay (see [[filterRows]]). */
  private var lateMaterialize = filterColumns.nonEmpty

  /** Plans the next stripe with rows left and starts its reads; None at the end of the split. */
  private def planNext(): Option[PlannedStripe] = {
    while (nextStripe < stripes.size) {
      val stripe = stripes(nextStripe)
      nextStripe += 1
      val rows = reader.stripes.rowCount(stripe)
      val ranges = stripeFilter.map(_.rowRanges(stripe)).getOrElse(RowRanges.all(rows))
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

  /** Late materialisation of one stripe: decodes the filter's columns (on `pageSelection`, or
    * whole) and evaluates the filter on the rows of `ranges`. Returns the rows to keep — `ranges`
    * itself when cutting the matches out would not pay — and the decoded columns the scan also
    * reads (the others are closed). */
  private def filterRows(
      stripe: Int,
      ranges: RowRanges,
      pageSelection: RowRanges
  ): (RowRanges, Map[Int, FieldVector]) = {
    val rows = reader.stripes.rowCount(stripe)
    val cols = filterColumns.map(_._2).distinct
    val vs = reader.readStripeProjected(
      stripe,
      cols.map(c => c -> ProjectedNode.full(reader.schema.fields(c))),
      allocator,
      pageSelection
    )
    val matching =
      try {
        val byName =
          filterColumns.map { case (n, c) => n -> (reader.schema.fields(c).dataType, vs(cols.indexOf(c))) }.toMap
        RowFilter.select(filter.get, byName.get, ranges)
      } catch { case t: Throwable => vs.foreach(_.close()); throw t }
    // Rows scattered all over the stripe save no page and cost a copy each: keep the matches only
    // when they are rare or come in a few runs (sorted keys, point lookups), and stop evaluating
    // the filter for the rest of the split otherwise.
    val pays = matching.rowCount.toLong * 16 <= rows || (matching.rowCount.toLong * 2 <= rows && matching.size <= 64)
    if (!pays) lateMaterialize = false
    // Decoded on `pageSelection` (or whole), which holds every row kept below.
    val reused = if (matching.isEmpty) Map.empty[Int, FieldVector]
    else present.indices.collect {
      case p if present(p)._1 == 0 && present(p)._3.children.isEmpty && cols.contains(present(p)._2) =>
        p -> vs(cols.indexOf(present(p)._2))
    }.toMap
    vs.filterNot(v => reused.values.exists(_ eq v)).foreach(_.close())
    (if (pays) matching else ranges, reused)
  }

  /** Starts the reads of the scan's columns of `stripe` (all but those already decoded), keeping
    * `selection` (null: every row). */
  private def plan(stripe: Int, selection: RowRanges, reused: Map[Int, FieldVector]): PlannedStripe = {
    val rows = reader.stripes.rowCount(stripe)
    val first = stripeFirstRow(stripe)
    val gone = deleted.map(d => d.rangeCardinality(first, first + rows)).getOrElse(0L).toInt
    // Top-level arrays and maps are read as lengths first, their elements only if touched; once a
    // query has touched a column's elements, later stripes read that column whole at once. Rows
    // cut out of whole vectors (deletions, a selection) cannot leave elements deferred.
    val deferred = present.indices.map { p =>
      gone == 0 && selection == null && FermionColumnarPartitionReader.defersElements(present(p)._3) && !elementsUsed
        .contains(p)
    }
    val fetches =
      present.indices.filterNot(reused.contains).groupBy(p => present(p)._1).toIndexedSeq.map { case (src, ps) =>
        val cols = ps.map { p =>
          val (_, c, node) = present(p); c -> (if (deferred(p)) node.withoutElements else node)
        }
        (ps, sources(src), sources(src).fetch(stripe, cols, selection))
      }
    new PlannedStripe(stripe, selection, deferred, fetches, reused, gone)
  }

  def next(): Boolean = {
    releaseCurrent()
    val planned = prefetched.orElse(planNext()) match {
      case Some(p) => p
      case None => return false
    }
    prefetched = None
    // Start reading the following stripe before decoding this one.
    prefetched = planNext()
    val stripe = planned.stripe
    val deferred = planned.deferred
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
    val batchVectors = if (keptRows == null) decoded.toIndexedSeq
    else decoded.toIndexedSeq.map(v => DeletedRows.compact(v, keptRows, allocator))

    /** A metadata column of the batch's rows: `base` plus each row's offset in the fragment. */
    def positions(name: String, base: Long): Option[org.apache.arrow.vector.BigIntVector] =
      readSchema.fields.indices.find(i => fileColumns(i) < 0 && readSchema.fields(i).name == name).map { _ =>
        val a = new org.apache.arrow.vector.BigIntVector(name, allocator)
        val n = if (keptRows == null) rows else keptRows.length
        a.allocateNew(n)
        var r = 0
        while (r < n) { a.set(r, base + first + (if (keptRows == null) r else keptRows(r))); r += 1 }
        a.setValueCount(n)
        a
      }
    val addresses = positions(RowAddress.Name, RowAddress.of(part.fragmentId, 0))
    val rowIds = part.rowIdStart.flatMap(start => positions(RowAddress.RowIdName, start))
    vectors = batchVectors ++ addresses ++ rowIds
    val outRows = if (keptRows == null) rows else keptRows.length
    var k = 0
    val columns: Array[ColumnVector] = readSchema.fields.indices.map { i =>
      if (fileColumns(i) < 0 && readSchema.fields(i).name == RowAddress.Name)
        DirectArrowColumnVector.of(addresses.get, readSchema.fields(i).dataType)
      else if (fileColumns(i) < 0 && readSchema.fields(i).name == RowAddress.RowIdName && rowIds.nonEmpty)
        DirectArrowColumnVector.of(rowIds.get, readSchema.fields(i).dataType)
      else if (fileColumns(i) < 0)
        FermionColumnarPartitionReader.nulls(readSchema.fields(i).dataType, outRows): ColumnVector
      else {
        val (src, c, node) = present(k)
        val p = k
        val v = batchVectors(k)
        k += 1
        if (deferred(p))
          new DeferredElementsColumnVector(
            readSchema.fields(i).dataType,
            v.asInstanceOf[IntVector],
            () => { elementsUsed += p; sources(src).readStripeProjected(stripe, IndexedSeq(c -> node), allocator).head }
          ): ColumnVector
        else DirectArrowColumnVector.of(v, readSchema.fields(i).dataType)
      }
    }.toArray
    current = new ColumnarBatch(columns, outRows)
    true
  }

  def get(): ColumnarBatch = current

  def counters: SplitCounters = {
    val all = sources
    SplitCounters(
      stripesDecoded + stripesFilteredByRows,
      ownStripes.size - stripes.size + stripesRuledOutByPages,
      all.map(_.bytesRead).sum,
      all.map(_.metadataBytesRead).sum,
      all.map(_.pagesDecoded).sum,
      all.map(_.decodeNanos).sum,
      all.map(_.dataPagesSkipped).sum
    )
  }

  private def releaseCurrent(): Unit = {
    if (current != null) {
      current.close()
      current = null
    }
    vectors.foreach(_.close())
    vectors = IndexedSeq.empty
  }

  def close(): Unit = {
    try { releaseCurrent(); prefetched.foreach(_.reused.values.foreach(_.close())); prefetched = None }
    finally
      try reader.close()
      finally columnReaders.foreach(_.close())
  }
}

/** What one split read, for the scan's metrics. */
final case class SplitCounters(
    stripesRead: Long,
    stripesSkipped: Long,
    bytesRead: Long,
    metadataBytesRead: Long,
    pagesDecoded: Long,
    decodeNanos: Long,
    pagesSkipped: Long
) {
  def +(o: SplitCounters): SplitCounters = SplitCounters(
    stripesRead + o.stripesRead,
    stripesSkipped + o.stripesSkipped,
    bytesRead + o.bytesRead,
    metadataBytesRead + o.metadataBytesRead,
    pagesDecoded + o.pagesDecoded,
    decodeNanos + o.decodeNanos,
    pagesSkipped + o.pagesSkipped
  )
}

object FileSplitReader {

  /** Opens the split's file; if the file does not fit the requested schema, closes it again. */
  def open(
      part: FileSplit,
      readSchema: StructType,
      readFieldIds: Option[IndexedSeq[Int]],
      columnIds: Option[Map[String, Int]],
      datasetRoot: String,
      filter: Option[FilterExpr],
      conf: Configuration,
      readerOptions: ReaderOptions,
      allocator: BufferAllocator
  ): FileSplitReader = {
    val deleted = part.deletion.map(d => new FermionDataset(new Path(datasetRoot), conf).readDeletionFile(d))
    val reader = FermionFileReader.open(new Path(part.file), conf, readerOptions)
    val columnReaders = scala.collection.mutable.ArrayBuffer.empty[FermionFileReader]
    try {
      part.columnFiles.foreach(f => columnReaders += FermionFileReader.open(new Path(f), conf, readerOptions))
      new FileSplitReader(
        part,
        reader,
        columnReaders.toIndexedSeq,
        readSchema,
        readFieldIds,
        columnIds,
        deleted,
        filter,
        allocator
      )
    } catch { case t: Throwable => reader.close(); columnReaders.foreach(_.close()); throw t }
  }
}

object FermionColumnarPartitionReader {

  /** Whether a projected column is a list or map whose elements are decoded on demand. */
  def defersElements(node: ProjectedNode): Boolean = {
    node.field.dataType == FermionType.List || node.field.dataType == FermionType.Map
  }

  /** One allocator per executor JVM; each partition reader takes a child and closes it. */
  lazy val root: RootAllocator = new RootAllocator(Long.MaxValue)

  def nulls(t: org.apache.spark.sql.types.DataType, rows: Int): ColumnVector = {
    val v = new ConstantColumnVector(rows, t)
    v.setNull()
    v
  }
}

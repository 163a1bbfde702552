package io.fermion.core.read.filter

import io.fermion.core.expr.{FilterExpr, FilterValue}
import io.fermion.core.layout.{ColumnMetadataBlock, DescType, FileLayout, StreamType, ValueStats}
import io.fermion.core.bloom.BloomValues
import io.fermion.core.read.{FermionFileReader, RowRanges}
import io.fermion.core.schema.FermionType
import io.fermion.core.stats.PageStatistics

/** Decides from a stripe's CMB statistics (min, max, null count) whether any row of the stripe can
  * satisfy a [[FilterExpr]]. Conservative: "maybe" whenever the statistics cannot prove "no".
  * `column` finds a filter's column in the file: by name by default; a dataset resolves names to
  * field ids first, so a renamed column is never confused with another that took its old name. */
final private[core] class StripeFilter(
    reader: FermionFileReader,
    filter: FilterExpr,
    /** The file (among files that share `reader`'s stripes) and column that hold a filter column. */
    column: String => Option[(FermionFileReader, Int)]
) {
  def this(reader: FermionFileReader, filter: FilterExpr) =
    this(reader, filter, n => reader.schema.indexOf(n).map(reader -> _))
  import FilterExpr._

  private val normalized = FilterExpr.normalize(filter)

  def mightMatch(stripe: Int): Boolean = eval(normalized, stripe)

  /** The rows of `stripe` that page statistics cannot rule out: for each flat column the filter
    * tests, the row ranges of its DATA pages that may match, intersected for AND and united for
    * OR. A column without page statistics (nested, a single page) keeps the whole stripe. */
  def rowRanges(stripe: Int): RowRanges = {
    val rows = reader.stripes.rowCount(stripe)
    if (!mightMatch(stripe)) RowRanges.Empty else ranges(normalized, stripe, rows)
  }

  private def ranges(e: FilterExpr, stripe: Int, rows: Int): RowRanges = e match {
    case And(l, r) =>
      val left = ranges(l, stripe, rows)
      if (left.isEmpty) left else left.intersect(ranges(r, stripe, rows))
    case Or(l, r) => ranges(l, stripe, rows).union(ranges(r, stripe, rows))
    case Not(In(c, vs)) => pagesWhere(c, stripe, rows)(s => s.mayHaveValue && mayHaveOtherThan(s, vs))
    // A negated match: null values fail it too, so pages of nulls only are skipped.
    case Not(leaf: BytesMatch) => pagesWhere(leaf.column, stripe, rows)(_.mayHaveValue)
    case Unknown | Not(_) => RowRanges.all(rows)
    case IsNull(c) => pagesWhere(c, stripe, rows)(_.mayHaveNull)
    case IsNotNull(c) => pagesWhere(c, stripe, rows)(_.mayHaveValue)
    case Compare(c, op, v) =>
      if (op == Eq && !bloomAllows(c, stripe, Seq(v))) RowRanges.Empty
      else pagesWhere(c, stripe, rows)(s => s.mayHaveValue && s.compare(op, v))
    case in @ In(c, vs) if vs.size > 1024 => pagesWhere(c, stripe, rows)(s => s.mayHaveValue && s.mayHaveAnyOf(in))
    case In(c, vs) =>
      val present = vs.filter(v => bloomAllows(c, stripe, Seq(v)))
      pagesWhere(c, stripe, rows)(s => s.mayHaveValue && present.exists(v => s.compare(Eq, v)))
    case StartsWith(c, p) => pagesWhere(c, stripe, rows)(s => s.mayHaveValue && s.startsWith(p))
    // A pattern's first part is a prefix its values start with.
    case like: Like if like.parts(0).nonEmpty => ranges(StartsWith(like.column, like.parts(0)), stripe, rows)
    // Bounds say nothing of a value's end or middle: only pages of nulls are left out.
    case m: BytesMatch => pagesWhere(m.column, stripe, rows)(_.mayHaveValue)
  }

  /** The row ranges of the pages of `column`'s DATA chunk in `stripe` whose statistics satisfy
    * `test`; the whole stripe or nothing when the chunk has no per-page statistics. */
  private def pagesWhere(column: String, stripe: Int, rows: Int)(test: ColumnStripeStats => Boolean): RowRanges = {
    def whole = if (stats(column, stripe).forall(test)) RowRanges.all(rows) else RowRanges.Empty
    this.column(column) match {
      case Some((reader, c)) if !FermionType.isNested(reader.field(c).dataType) =>
        reader.columnMetadata(c) match {
          case Some(m) =>
            val data = m.streamTypeIndexOf(StreamType.Data)
            if (data < 0 || m.descType(data) != DescType.Full || m.fullNumPages(data, stripe) <= 1) whole
            else {
              val pool = m.fullPageMetaOffset(data, stripe)
              val kept = scala.collection.mutable.ArrayBuffer.empty[(Int, Int)]
              var row = 0L
              var p = 0
              while (p < m.fullNumPages(data, stripe)) {
                val rc = m.pageRowCount(pool, p)
                val page = ColumnStripeStats.ofPage(
                  m.pageStatsFlags(pool, p),
                  m.pageMin(pool, p),
                  m.pageMax(pool, p),
                  m.pageNullCount(pool, p),
                  rc
                )
                if (rc < 0) return whole
                if (test(page)) kept += ((row.toInt, (row + rc).toInt))
                row += rc
                p += 1
              }
              // Pages that do not add up to the stripe are left to the decoder to report.
              if (row != rows) whole else RowRanges.of(kept)
            }
          case None => whole
        }
      case _ => whole
    }
  }

  private def eval(e: FilterExpr, stripe: Int): Boolean = e match {
    case And(l, r) => eval(l, stripe) && eval(r, stripe)
    case Or(l, r) => eval(l, stripe) || eval(r, stripe)
    case Not(In(c, vs)) => stats(c, stripe).forall(s => s.mayHaveValue && mayHaveOtherThan(s, vs))
    case Not(leaf: BytesMatch) => stats(leaf.column, stripe).forall(_.mayHaveValue)
    case Unknown | Not(_) => true
    case IsNull(c) => stats(c, stripe).forall(_.mayHaveNull)
    case IsNotNull(c) => stats(c, stripe).forall(_.mayHaveValue)
    case Compare(c, op, v) =>
      stats(c, stripe).forall(s => s.mayHaveValue && s.compare(op, v)) && (op != Eq || bloomAllows(c, stripe, Seq(v)))
    // A long list (a join's keys) is tested by its range alone: a bloom filter probe per literal
    // per stripe would cost more than the stripe.
    case in @ In(c, vs) if vs.size > 1024 => stats(c, stripe).forall(s => s.mayHaveValue && s.mayHaveAnyOf(in))
    case In(c, vs) =>
      // A stripe is kept only if some literal passes both the bounds and the bloom filter.
      val s = stats(c, stripe)
      s.forall(_.mayHaveValue) && vs.exists(v => s.forall(_.compare(Eq, v)) && bloomAllows(c, stripe, Seq(v)))
    case StartsWith(c, p) => stats(c, stripe).forall(s => s.mayHaveValue && s.startsWith(p))
    case like: Like if like.parts(0).nonEmpty => eval(StartsWith(like.column, like.parts(0)), stripe)
    case m: BytesMatch => stats(m.column, stripe).forall(_.mayHaveValue)
  }

  /** Whether a non-null value of a stripe or page may lie outside `values` (NOT IN): not when its
    * bounds hold one value (min = max) that the list holds. Null values fail NOT IN too. Lists
    * longer than a join's broadcast keys are not searched. */
  private def mayHaveOtherThan(s: ColumnStripeStats, values: IndexedSeq[FilterValue]): Boolean =
    values.size > 1024 || values.forall(v => s.compare(NotEq, v))

  /** Filters read so far (a predicate may test one column several times). */
  private val blooms =
    scala.collection.mutable.HashMap.empty[(String, Int, Int), Option[io.fermion.core.bloom.SplitBlockBloomFilter]]

  /** False only when the stripe's bloom filter proves no value is there (equality and IN). */
  private def bloomAllows(column: String, stripe: Int, values: Seq[FilterValue]): Boolean =
    this.column(column).forall { case (reader, c) =>
      val t = reader.field(c).dataType
      !BloomValues.supports(t) || blooms.getOrElseUpdate((reader.path, c, stripe), reader.bloomFilter(c, stripe)).forall {
        b =>
          values.exists(v => BloomValues.hashOf(t, v).forall(b.mightContain))
      }
    }

  /** None when the filter cannot use the column (not in the file, nested, no statistics kind). */
  private def stats(column: String, stripe: Int): Option[ColumnStripeStats] =
    this.column(column).flatMap { case (reader, c) =>
      val field = reader.field(c)
      if (FermionType.isNested(field.dataType)) None
      else Some(ColumnStripeStats.of(field.dataType, reader.columnMetadata(c), stripe, reader.stripes.rowCount(stripe)))
    }
}

/** What a stripe's metadata says about one flat column. */
final private[core] case class ColumnStripeStats(
    allNull: Boolean,
    noNull: Boolean,
    bounds: Option[ValueStats],
    emptyStrings: Boolean
) {
  import FilterExpr._

  def mayHaveNull: Boolean = !noNull
  def mayHaveValue: Boolean = !allNull

  /** Whether some non-null value v may satisfy `v op literal`. */
  def compare(op: Op, lit: FilterValue): Boolean = bounds match {
    case None => true
    case Some(b) if (b.flags & ValueStats.DoubleBits) != 0 =>
      val min = java.lang.Double.longBitsToDouble(b.min)
      val max = java.lang.Double.longBitsToDouble(b.max)
      val nan = (b.flags & ValueStats.HasNaN) != 0
      val x = lit match {
        case FilterValue.Floating(d) => d; case FilterValue.Integral(l) => l.toDouble; case _ => return true
      }
      if (x.isNaN) return true
      // Spark orders NaN above every number: NaN rows satisfy >, >= and <>.
      op match {
        case Eq => min <= x && x <= max
        case NotEq => nan || !(min == x && max == x)
        case Lt => min < x
        case LtEq => min <= x
        case Gt => nan || max > x
        case GtEq => nan || max >= x
      }
    case Some(b) if (b.flags & ValueStats.PrefixBounds) != 0 =>
      val p = lit match { case FilterValue.Bytes(bs) => PageStatistics.prefix(bs, 0, bs.length); case _ => return true }
      def le(a: Long, c: Long) = java.lang.Long.compareUnsigned(a, c) <= 0
      // Bounds are 8-byte prefixes: values sharing a bound's prefix may lie on either side of it.
      op match {
        case Eq => le(b.min, p) && le(p, b.max)
        case NotEq => true
        case Lt | LtEq => le(b.min, p)
        case Gt | GtEq => le(p, b.max)
      }
    case Some(b) =>
      val x = lit match { case FilterValue.Integral(l) => l; case _ => return true }
      op match {
        case Eq => b.min <= x && x <= b.max
        case NotEq => !(b.min == x && b.max == x)
        case Lt => b.min < x
        case LtEq => b.min <= x
        case Gt => b.max > x
        case GtEq => b.max >= x
      }
  }

  /** Whether some non-null value may be one of `in`'s literals, by one search of the integer
    * literals between the bounds; true for other bounds. */
  def mayHaveAnyOf(in: FilterExpr.In): Boolean = (bounds, in.integers) match {
    case (Some(b), Some(set)) if b.integerBounds =>
      set.intersects(b.min, b.max)
    case _ => true
  }

  def startsWith(prefix: Array[Byte]): Boolean = bounds match {
    case Some(b) if (b.flags & ValueStats.PrefixBounds) != 0 =>
      val lower = PageStatistics.prefix(prefix, 0, prefix.length)
      val upper = if (prefix.length >= 8) lower else lower | (-1L >>> (prefix.length * 8))
      java.lang.Long.compareUnsigned(lower, b.max) <= 0 && java.lang.Long.compareUnsigned(b.min, upper) <= 0
    case _ => !(emptyStrings && prefix.nonEmpty)
  }
}

private[core] object ColumnStripeStats {

  /** What one DATA page's PageMeta says. */
  def ofPage(flags: Int, min: Long, max: Long, nullCount: Int, rowCount: Int): ColumnStripeStats = {
    val bounds = Some(ValueStats(flags, min, max)).filter(_.usableBounds)
    ColumnStripeStats(
      allNull = rowCount > 0 && nullCount >= rowCount,
      noNull = nullCount == 0,
      bounds,
      emptyStrings = false
    )
  }

  def of(t: FermionType, cmb: Option[ColumnMetadataBlock], stripe: Int, rows: Int): ColumnStripeStats = cmb match {
    case None => ColumnStripeStats(allNull = true, noNull = rows == 0, None, emptyStrings = false)
    case Some(m) =>
      val (allNull, noNull) = m.descType(0) match {
        case DescType.UseDefault => (false, true)
        case DescType.ForceNull => (true, false)
        case _ =>
          val len = m.simpleLength(0, stripe)
          (len == FileLayout.AllNullChunkLength, len == 0)
      }
      val data = m.streamTypeIndexOf(StreamType.Data)
      val full = data >= 0 && m.descType(data) == DescType.Full
      val dataLength = if (full) m.fullLength(data, stripe) else 0L
      val bounds =
        if (full && dataLength > 0) Some(ValueStats(
          m.fullStatsFlags(data, stripe),
          m.fullMin(data, stripe),
          m.fullMax(data, stripe)
        )).filter(_.usableBounds)
        else None
      // A variable-width column with values but no DATA bytes holds only empty strings.
      val empty = !allNull && dataLength == 0 && FermionType.isVariableWidth(t)
      val emptyBounds = if (empty) Some(ValueStats(ValueStats.HasMinMax | ValueStats.PrefixBounds, 0L, 0L)) else None
      ColumnStripeStats(allNull, noNull, bounds.orElse(emptyBounds), empty)
  }
}

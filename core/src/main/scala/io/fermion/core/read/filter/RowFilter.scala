package io.fermion.core.read.filter

import io.fermion.core.expr.{FilterExpr, FilterValue, IntegerSet}
import io.fermion.core.read.{ColumnDecoder, RowRanges}
import io.fermion.core.schema.FermionType
import org.apache.arrow.memory.util.MemoryUtil
import org.apache.arrow.vector._

/** Evaluates a [[FilterExpr]] on decoded columns, to narrow a stripe to the rows that may match
  * before the other columns are read (late materialisation). Like [[StripeFilter]] it is
  * conservative: a leaf it cannot evaluate (a column not decoded, a nested column, a literal of
  * another domain) keeps every row, and the engine still filters the rows that are returned.
  *
  * Evaluation is column at a time over a selection (the sorted rows still in play): an AND
  * evaluates its right side only on the rows its left side kept; a comparison of an integer,
  * date, timestamp or decimal column is one range check per row in a loop over the column's raw
  * memory, typed once per column rather than per row.
  *
  * Comparisons follow Spark's: strings and binary compare as unsigned bytes, NaN equals NaN and
  * sorts above every number, -0.0 equals 0.0, and a null value satisfies no comparison. */
private[core] object RowFilter {
  import FilterExpr._

  /** Whether [[select]] decides every leaf of `filter` (none keeps rows it cannot evaluate), given
    * each flat column's type by name (None: the column is not a flat column of the scan). Then the
    * rows it returns are exactly those on which the filter is TRUE. The cases are [[eval]]'s. */
  def decidesExactly(filter: FilterExpr, typeOf: String => Option[FermionType]): Boolean = {
    def integral(t: FermionType): Boolean = t match {
      case FermionType.Bool | FermionType.Int8 | FermionType.Int16 | FermionType.Int32 | FermionType.Int64 |
          FermionType.Date32 | _: FermionType.Timestamp => true
      case FermionType.Decimal(p, _) => p <= 18
      case _ => false
    }
    def floating(t: FermionType) = t == FermionType.Float32 || t == FermionType.Float64
    def fits(t: FermionType, v: FilterValue): Boolean = v match {
      case _: FilterValue.Integral => integral(t)
      case _: FilterValue.Floating => floating(t)
      case _: FilterValue.Bytes => FermionType.isVariableWidth(t)
    }
    def go(e: FilterExpr): Boolean = e match {
      case And(l, r) => go(l) && go(r)
      case Or(l, r) => go(l) && go(r)
      case IsNull(c) => typeOf(c).nonEmpty
      case IsNotNull(c) => typeOf(c).nonEmpty
      case Compare(c, _, v) => typeOf(c).exists(fits(_, v))
      case In(c, vs) => typeOf(c).exists(t => vs.nonEmpty && vs.forall(fits(t, _)))
      case m: BytesMatch => typeOf(m.column).exists(FermionType.isVariableWidth)
      case Not(leaf @ (_: BytesMatch | _: In)) => go(leaf)
      case Unknown | Not(_) => false
    }
    go(FilterExpr.normalize(filter))
  }

  /** The rows of `candidates` that may satisfy `filter`. `column` gives a decoded top-level column
    * (type and vector, holding at least the candidate rows) by name, or None. */
  def select(
      filter: FilterExpr,
      column: String => Option[(FermionType, FieldVector)],
      candidates: RowRanges
  ): RowRanges = {
    eval(FilterExpr.normalize(filter), column, Selection.all(candidates)) match {
      case None => candidates
      case Some(kept) => kept.ranges
    }
  }

  private object Selection {
    def apply(rows: Array[Int], n: Int): Selection = new Selection(rows, n, null)

    /** Every row of `ranges`, listed only when a test needs them one by one — or at once when the
      * ranges are short (an earlier filter's scattered matches), which a test reads faster listed. */
    def all(ranges: RowRanges): Selection = {
      val n = ranges.rowCount
      if (ranges.isListed || ranges.size.toLong * 8 > n) Selection(ranges.rows, n) else new Selection(null, n, ranges)
    }
  }

  /** Sorted rows `rows(0 until n)`; when `whole` is set, they are its rows, listed on first use
    * (the first range check of a filter reads the candidate ranges directly). */
  final private class Selection(listed: Array[Int], val n: Int, val whole: RowRanges) {
    lazy val rows: Array[Int] = if (listed != null) listed else whole.rows

    def ranges: RowRanges = if (whole != null) whole else RowRanges.ofSortedRows(rows, n)

    /** The rows of this or `o` (both sorted). */
    def union(o: Selection): Selection = {
      val out = new Array[Int](n + o.n)
      val (rows, others) = (this.rows, o.rows)
      var i = 0; var j = 0; var k = 0
      while (i < n || j < o.n) {
        val r =
          if (j >= o.n || (i < n && rows(i) < others(j))) { val x = rows(i); i += 1; x }
          else if (i >= n || others(j) < rows(i)) { val x = others(j); j += 1; x }
          else { val x = rows(i); i += 1; j += 1; x }
        out(k) = r; k += 1
      }
      Selection(out, k)
    }
  }

  /** The rows of `sel` that may satisfy `e`, or None when `e` keeps every row (cannot be decided). */
  private def eval(
      e: FilterExpr,
      column: String => Option[(FermionType, FieldVector)],
      sel: Selection
  ): Option[Selection] = e match {
    case a: And =>
      // Comparisons of one integer-domain column with integer literals (a BETWEEN, a date range)
      // become one range check each; then the other conjuncts, each on what the previous kept.
      val parts = conjuncts(a)
      val ranges = scala.collection.mutable.LinkedHashMap.empty[String, (FermionType, FieldVector, Long, Long)]
      val rest = parts.filter {
        case Compare(c, op, FilterValue.Integral(x)) if op != NotEq =>
          flat(c, column).filter { case (t, v) => integral(t, v).nonEmpty } match {
            case Some((t, v)) =>
              val (lo, hi) = bounds(op, x)
              val (_, _, l0, h0) = ranges.getOrElse(c, (t, v, Long.MinValue, Long.MaxValue))
              ranges(c) = (t, v, math.max(l0, lo), math.min(h0, hi))
              false
            case None => true
          }
        case _ => true
      }
      val first =
        if (ranges.isEmpty) None
        else Some(ranges.values.foldLeft(sel) { case (s, (t, v, lo, hi)) => keepInRange(v, t, s, lo, hi) })
      rest.foldLeft(first) { (kept, e) =>
        eval(e, column, kept.getOrElse(sel)).orElse(kept)
      }
    case Or(l, r) =>
      for (a <- eval(l, column, sel); b <- eval(r, column, sel)) yield a.union(b)
    case IsNull(c) => column(c).map { case (_, v) => nullsOrNot(v, sel, nulls = true) }
    case IsNotNull(c) => column(c).map { case (_, v) => nullsOrNot(v, sel, nulls = false) }
    case Compare(c, op, lit) =>
      flat(c, column).flatMap { case (t, v) =>
        lit match {
          case FilterValue.Integral(x) if integral(t, v).nonEmpty =>
            if (op == NotEq) Some(keepOutside(v, t, sel, x))
            else { val (lo, hi) = bounds(op, x); Some(keepInRange(v, t, sel, lo, hi)) }
          case FilterValue.Floating(x) if v.isInstanceOf[Float4Vector] || v.isInstanceOf[Float8Vector] =>
            Some(new FloatCompare(v, op, x).keep(sel))
          case FilterValue.Bytes(b) if op == Eq && v.isInstanceOf[BaseVariableWidthVector] =>
            Some(new BytesIn(v.asInstanceOf[BaseVariableWidthVector], Seq(b)).keep(sel))
          case _ => comparator(t, v)(lit).map(f => keepValid(v, sel, row => accepts(op, f(row))))
        }
      }
    case in: In => keepIn(in, column, sel, negated = false)
    case Not(in: In) => keepIn(in, column, sel, negated = true)
    case m: BytesMatch => keepMatching(m, column, sel, negated = false)
    case Not(m: BytesMatch) => keepMatching(m, column, sel, negated = true)
    case Unknown | Not(_) => None
  }

  /** The rows of `sel` whose value of `in.column` is not null and one of the literals (`negated`:
    * none of them). */
  private def keepIn(
      in: In,
      column: String => Option[(FermionType, FieldVector)],
      sel: Selection,
      negated: Boolean
  ): Option[Selection] = flat(in.column, column).flatMap { case (t, v) =>
    val lits = in.values
    val set = in.integers.filter(_ => integral(t, v).nonEmpty)
    // A long list of integers (keys, batch ids, a join's runtime filter): one set lookup per
    // row, not a comparison per literal (1,000 literals over 10M rows took 16 s).
    if (set.nonEmpty) Some(layout(t, v) match {
      case Some(width) => new IntegerIn(v, width, set.get, negated).keep(sel)
      case None =>
        keepValid(v, sel, { val value = integral(t, v).get; row => set.get.contains(value(row)) != negated })
    })
    else if (lits.forall(_.isInstanceOf[FilterValue.Bytes]) && v.isInstanceOf[BaseVariableWidthVector]) {
      val values = lits.collect { case FilterValue.Bytes(b) => b }
      Some(new BytesIn(v.asInstanceOf[BaseVariableWidthVector], values, negated).keep(sel))
    } else {
      val fs = lits.map(comparator(t, v))
      if (fs.exists(_.isEmpty)) None
      else {
        val all = fs.flatten.toArray
        Some(keepValid(
          v,
          sel,
          row => {
            var k = 0; var hit = false; while (!hit && k < all.length) { hit = all(k)(row) == 0; k += 1 }
            hit != negated
          }
        ))
      }
    }
  }

  /** The rows of `sel` whose value of string or binary column `m.column` is not null and passes `m`
    * (`negated`: fails it). */
  private def keepMatching(
      m: BytesMatch,
      column: String => Option[(FermionType, FieldVector)],
      sel: Selection,
      negated: Boolean
  ): Option[Selection] = flat(m.column, column).collect { case (_, vw: BaseVariableWidthVector) =>
    val raw = new RawBytes(vw)
    val test: Int => Boolean = m match {
      case StartsWith(_, prefix) => row => raw.startsWith(row, prefix)
      case EndsWith(_, suffix) => row => raw.endsWith(row, suffix)
      case Contains(_, infix) => row => raw.contains(row, infix)
      case like: Like => val parts = like.parts; row => raw.like(row, parts)
    }
    keepValid(vw, sel, if (negated) row => !test(row) else test)
  }

  private def flat(
      name: String,
      column: String => Option[(FermionType, FieldVector)]
  ): Option[(FermionType, FieldVector)] = column(name).filter { case (t, _) => !FermionType.isNested(t) }

  /** The rows of `sel` that are null (`nulls`) or not; a column without nulls decides at once. */
  private def nullsOrNot(v: FieldVector, sel: Selection, nulls: Boolean): Selection = {
    val count = ColumnDecoder.nullCount(v)
    if (count == 0) { if (nulls) Selection(Array.emptyIntArray, 0) else sel }
    else if (count == v.getValueCount) { if (nulls) sel else Selection(Array.emptyIntArray, 0) }
    else keep(sel, row => v.isNull(row) == nulls)
  }

  private def keep(sel: Selection, test: Int => Boolean): Selection = {
    val out = new Array[Int](sel.n)
    var k = 0
    val rows = sel.rows
    var i = 0
    while (i < sel.n) { val r = rows(i); if (test(r)) { out(k) = r; k += 1 }; i += 1 }
    Selection(out, k)
  }

  /** The rows of `sel` whose value is not null and passes `test`. */
  private def keepValid(v: FieldVector, sel: Selection, test: Int => Boolean): Selection =
    if (ColumnDecoder.nullCount(v) == 0) keep(sel, test) else keep(sel, row => !v.isNull(row) && test(row))

  /** The smallest and largest value (in the integer domain) that satisfy `op x` (`op` is not
    * `<>`); lo > hi when none does (`> Long.MaxValue`, `< Long.MinValue`). */
  private def bounds(op: Op, x: Long): (Long, Long) = op match {
    case Eq => (x, x)
    case GtEq => (x, Long.MaxValue)
    case LtEq => (Long.MinValue, x)
    case Gt => if (x == Long.MaxValue) (1L, 0L) else (x + 1, Long.MaxValue)
    case Lt => if (x == Long.MinValue) (1L, 0L) else (Long.MinValue, x - 1)
    case NotEq => throw new IllegalArgumentException("<> is no range")
  }

  /** Raw reads of the fixed-width integer domain: the data address and the value width (8, 4, 2,
    * 1; 16 for decimals of up to 18 digits, whose low 8 bytes hold the unscaled value). */
  private def layout(t: FermionType, v: FieldVector): Option[Int] = v match {
    case _: BigIntVector | _: TimeStampVector => Some(8)
    case _: IntVector | _: DateDayVector => Some(4)
    case _: SmallIntVector => Some(2)
    case _: TinyIntVector => Some(1)
    case _: DecimalVector
        if t.isInstanceOf[FermionType.Decimal] && t.asInstanceOf[FermionType.Decimal].precision <= 18 =>
      Some(16)
    case _ => None
  }

  /** The rows of `sel` whose (non-null) value lies in `[lo, hi]`. */
  private def keepInRange(v: FieldVector, t: FermionType, sel: Selection, lo: Long, hi: Long): Selection =
    keepByValue(v, t, sel, inside = true, lo, hi)

  /** The rows of `sel` whose (non-null) value differs from `x`. */
  private def keepOutside(v: FieldVector, t: FermionType, sel: Selection, x: Long): Selection =
    keepByValue(v, t, sel, inside = false, x, x)

  private def keepByValue(
      v: FieldVector,
      t: FermionType,
      sel: Selection,
      inside: Boolean,
      lo: Long,
      hi: Long
  ): Selection = layout(t, v) match {
    case None =>
      val value = integral(t, v).get
      keepValid(v, sel, row => { val x = value(row); (x >= lo && x <= hi) == inside })
    case Some(_) if lo > hi => if (inside) Selection(Array.emptyIntArray, 0) else nullsOrNot(v, sel, nulls = false)
    case Some(width) =>
      val data = v.getDataBufferAddress
      val validity = if (ColumnDecoder.nullCount(v) == 0) 0L else v.getValidityBufferAddress
      val out = new Array[Int](sel.n)
      // lo <= x <= hi as one comparison: x - lo <= hi - lo, unsigned (both sides shifted by
      // Long.MinValue to compare signed), and without nulls the count grows without a branch on
      // the outcome: TPC-H Q6's three range checks over a million rows took 11-12 ms with two
      // branches per row, 7-8 ms without.
      val check = new RangeCheck(data, width, validity, inside, lo, (hi - lo) + Long.MinValue, out)
      if (sel.whole != null) {
        // Rows of whole ranges read in order, without listing them first.
        val w = sel.whole
        var g = 0
        while (g < w.size) { check.rowsFrom(w.start(g), w.end(g)); g += 1 }
      } else check.listed(sel.rows, sel.n)
      Selection(out, check.kept)
  }

  /** The rows whose value (read from `data`, `width` bytes each) is inside [from, from + top -
    * Long.MinValue] (or outside, `inside` false) and not null, appended to `out`. One loop per
    * width, so that the read inside is a single typed load. */
  final private class RangeCheck(
      data: Long,
      width: Int,
      validity: Long,
      inside: Boolean,
      from: Long,
      top: Long,
      out: Array[Int]
  ) {
    var kept = 0

    /** 1 when row `r`, holding `x`, is kept, else 0 (without a branch on the outcome when the
      * column has no nulls). */
    private def hit(r: Int, x: Long): Int = {
      val in = ((x - from) + Long.MinValue <= top) == inside
      if (validity == 0L) (if (in) 1 else 0) else if (in && valid(validity, r)) 1 else 0
    }

    /** Rows first until end. */
    def rowsFrom(first: Int, end: Int): Unit = {
      var k = kept
      var r = first
      width match {
        case 8 => while (r < end) { out(k) = r; k += hit(r, MemoryUtil.getLong(data + 8L * r)); r += 1 }
        case 16 => while (r < end) { out(k) = r; k += hit(r, MemoryUtil.getLong(data + 16L * r)); r += 1 }
        case 4 => while (r < end) { out(k) = r; k += hit(r, MemoryUtil.getInt(data + 4L * r).toLong); r += 1 }
        case 2 => while (r < end) { out(k) = r; k += hit(r, MemoryUtil.getShort(data + 2L * r).toLong); r += 1 }
        case _ => while (r < end) { out(k) = r; k += hit(r, MemoryUtil.getByte(data + r).toLong); r += 1 }
      }
      kept = k
    }

    /** Rows rows(0 until n). */
    def listed(rows: Array[Int], n: Int): Unit = {
      var k = kept
      var i = 0
      width match {
        case 8 => while (i < n) { val r = rows(i); out(k) = r; k += hit(r, MemoryUtil.getLong(data + 8L * r)); i += 1 }
        case 16 =>
          while (i < n) { val r = rows(i); out(k) = r; k += hit(r, MemoryUtil.getLong(data + 16L * r)); i += 1 }
        case 4 =>
          while (i < n) { val r = rows(i); out(k) = r; k += hit(r, MemoryUtil.getInt(data + 4L * r).toLong); i += 1 }
        case 2 =>
          while (i < n) { val r = rows(i); out(k) = r; k += hit(r, MemoryUtil.getShort(data + 2L * r).toLong); i += 1 }
        case _ =>
          while (i < n) { val r = rows(i); out(k) = r; k += hit(r, MemoryUtil.getByte(data + r).toLong); i += 1 }
      }
      kept = k
    }
  }

  /** Whether row `r` is not null (`validity` 0: the vector has no nulls). */
  @inline private def valid(validity: Long, r: Int): Boolean =
    validity == 0L || ((MemoryUtil.getByte(validity + (r >>> 3)) >> (r & 7)) & 1) != 0

  private def accepts(op: Op, c: Int): Boolean = op match {
    case Eq => c == 0; case NotEq => c != 0; case Lt => c < 0; case LtEq => c <= 0; case Gt => c > 0;
    case GtEq => c >= 0
  }

  /** Literal -> row -> sign of the row's value minus the literal (None: a literal of another domain). */
  private def comparator(t: FermionType, v: FieldVector): FilterValue => Option[Int => Int] = {
    lit =>
      (t, v, lit) match {
        case (FermionType.Float32 | FermionType.Float64, _, FilterValue.Floating(x)) =>
          v match {
            case f: Float4Vector => Some(row => compareDoubles(f.get(row).toDouble, x))
            case f: Float8Vector => Some(row => compareDoubles(f.get(row), x))
            case _ => None
          }
        case (_, vw: BaseVariableWidthVector, FilterValue.Bytes(b)) =>
          val raw = new RawBytes(vw); Some(row => raw.compare(row, b))
        case (_, _, FilterValue.Integral(x)) =>
          integral(t, v).map(get => (row: Int) => java.lang.Long.compare(get(row), x))
        case _ => None
      }
  }

  /** The value of a row in the integer domain of [[FilterValue.Integral]], for the types that have one. */
  private def integral(t: FermionType, v: FieldVector): Option[Int => Long] = v match {
    case b: BitVector => Some(row => b.get(row).toLong)
    case i: BaseIntVector => Some(row => i.getValueAsLong(row))
    case d: DateDayVector => Some(row => d.get(row).toLong)
    case ts: TimeStampVector => Some(row => ts.get(row))
    case d: DecimalVector
        if t.isInstanceOf[FermionType.Decimal] && t.asInstanceOf[FermionType.Decimal].precision <= 18 =>
      // Unscaled values of at most 18 digits fit the low 8 bytes (little-endian two's complement).
      Some(row => d.getDataBuffer.getLong(row.toLong * 16))
    case _ => None
  }

  /** Spark's order of doubles: NaN equals NaN and is above everything; -0.0 equals 0.0. */
  private def compareDoubles(a: Double, b: Double): Int =
    if (a.isNaN) { if (b.isNaN) 0 else 1 }
    else if (b.isNaN) -1
    else if (a < b) -1 else if (a > b) 1 else 0

  /** A test of one row at a time, kept in one loop over the selection (its ranges in order when it
    * has them, without listing its rows), where the test is a direct call the JIT inlines rather
    * than a function value, one of many, called per row. */
  abstract private class RowTest {
    protected def matches(r: Int): Boolean

    final def keep(sel: Selection): Selection = {
      val out = new Array[Int](sel.n)
      var k = 0
      if (sel.whole != null) {
        val w = sel.whole
        var g = 0
        while (g < w.size) {
          var r = w.start(g)
          val end = w.end(g)
          while (r < end) { if (matches(r)) { out(k) = r; k += 1 }; r += 1 }
          g += 1
        }
      } else {
        val rows = sel.rows
        var i = 0
        while (i < sel.n) { val r = rows(i); if (matches(r)) { out(k) = r; k += 1 }; i += 1 }
      }
      Selection(out, k)
    }
  }

  /** The rows of a string or binary column equal to one of `literals` (`negated`: not null and equal
    * to none), tested straight from the vector's memory: a row's length picks the literals it can
    * equal (often none), then its bytes are compared with those. */
  final private class BytesIn(v: BaseVariableWidthVector, literals: Seq[Array[Byte]], negated: Boolean = false)
      extends RowTest {
    private val raw = new RawBytes(v)
    private val validity = if (ColumnDecoder.nullCount(v) == 0) 0L else v.getValidityBufferAddress
    private val longest = literals.map(_.length).max
    private val byLength = Array.tabulate(longest + 1)(n => literals.filter(_.length == n).toArray)

    protected def matches(r: Int): Boolean = (validity == 0L || valid(validity, r)) && {
      val len = raw.length(r)
      val hit = len <= longest && {
        val candidates = byLength(len)
        var k = 0
        var found = false
        while (!found && k < candidates.length) { found = raw.sameBytes(r, candidates(k)); k += 1 }
        found
      }
      hit != negated
    }
  }

  /** The rows of a `float` or `double` column whose (non-null) value compares to `x` as `op` asks,
    * in Spark's order (NaN equals NaN and sorts above every number; -0.0 equals 0.0), each value
    * read straight from the vector's memory. */
  final private class FloatCompare(v: FieldVector, op: Op, x: Double) extends RowTest {
    private val single = v.isInstanceOf[Float4Vector]
    private val data = v.getDataBufferAddress
    private val validity = if (ColumnDecoder.nullCount(v) == 0) 0L else v.getValidityBufferAddress

    protected def matches(r: Int): Boolean =
      (validity == 0L || valid(validity, r)) && {
        val d =
          if (single) java.lang.Float.intBitsToFloat(MemoryUtil.getInt(data + 4L * r)).toDouble
          else java.lang.Double.longBitsToDouble(MemoryUtil.getLong(data + 8L * r))
        accepts(op, compareDoubles(d, x))
      }
  }

  /** The rows of an integer-domain column whose (non-null) value is in `set` (`negated`: not in
    * it), each read straight from the vector's memory, `width` bytes (16: a decimal of at most 18
    * digits, whose unscaled value is its low 8 bytes). */
  final private class IntegerIn(v: FieldVector, width: Int, set: IntegerSet, negated: Boolean) extends RowTest {
    private val data = v.getDataBufferAddress
    private val validity = if (ColumnDecoder.nullCount(v) == 0) 0L else v.getValidityBufferAddress

    protected def matches(r: Int): Boolean =
      (validity == 0L || valid(validity, r)) && set.contains(width match {
        case 8 => MemoryUtil.getLong(data + 8L * r)
        case 16 => MemoryUtil.getLong(data + 16L * r)
        case 4 => MemoryUtil.getInt(data + 4L * r).toLong
        case 2 => MemoryUtil.getShort(data + 2L * r).toLong
        case _ => MemoryUtil.getByte(data + r).toLong
      }) != negated
  }

  /** Strings and binary (4-byte offsets) read straight from the vector's memory: no bounds and
    * reference-count checks per byte, as `ArrowBuf.getByte` makes (string comparisons of TPC-H
    * Q19's filter spent more time in those checks than comparing). Rows are below the vector's
    * value count. */
  final private class RawBytes(v: BaseVariableWidthVector) {
    private val offsets = v.getOffsetBufferAddress
    private val data = v.getDataBufferAddress

    @inline private def start(row: Int): Int = MemoryUtil.getInt(offsets + 4L * row)
    def length(row: Int): Int = MemoryUtil.getInt(offsets + 4L * row + 4) - start(row)

    /** The sign of the row's bytes minus `lit`, compared as unsigned bytes, then by length. */
    def compare(row: Int, lit: Array[Byte]): Int =
      io.fermion.core.bytes.MemoryBytes.compare(data + start(row), length(row), lit)

    def startsWith(row: Int, prefix: Array[Byte]): Boolean = length(row) >= prefix.length && sameBytes(row, prefix)

    def endsWith(row: Int, suffix: Array[Byte]): Boolean = {
      val n = length(row)
      n >= suffix.length && sameBytesAt(data + start(row) + n - suffix.length, suffix)
    }

    /** Whether `infix` occurs in the row's bytes. */
    def contains(row: Int, infix: Array[Byte]): Boolean = indexOf(data + start(row), 0, length(row), infix) >= 0

    /** Whether the row's bytes are `parts(0)`, anything, `parts(1)`, ..., anything, the last part
      * ([[FilterExpr.Like]]): each middle part found at its first place after the one before. */
    def like(row: Int, parts: Array[Array[Byte]]): Boolean = {
      val at = data + start(row)
      val first = parts(0)
      val last = parts(parts.length - 1)
      val end = length(row) - last.length
      if (end < first.length || !sameBytesAt(at, first) || !sameBytesAt(at + end, last)) return false
      var from = first.length
      var k = 1
      while (k < parts.length - 1) {
        val found = indexOf(at, from, end, parts(k))
        if (found < 0) return false
        from = found + parts(k).length
        k += 1
      }
      true
    }

    /** The first place in `[from, end)` of the bytes at `at` where `infix` starts, or -1: each place
      * its first byte occurs is checked. The places are found eight bytes at a time (the bytes equal
      * to the first one show as zero bytes of the word XOR eight copies of it; the lowest is exact),
      * never reading past `end`: a `LIKE '%special%requests%'` over TPC-H's comments spent a fifth of
      * the scan looking at one byte at a time. */
    private def indexOf(at: Long, from: Int, end: Int, infix: Array[Byte]): Int = {
      if (infix.length == 0) return from
      val last = end - infix.length
      val first = infix(0)
      var i = from
      if (MemoryUtil.LITTLE_ENDIAN) {
        val copies = (first & 0xffL) * Ones
        while (i <= last && i + 8 <= end) {
          val x = MemoryUtil.getLong(at + i) ^ copies
          val zeros = (x - Ones) & ~x & Highs
          if (zeros == 0) i += 8
          else {
            val k = i + (java.lang.Long.numberOfTrailingZeros(zeros) >>> 3)
            if (k > last) return -1
            if (sameBytesAt(at + k, infix)) return k
            i = k + 1
          }
        }
      }
      while (i <= last) {
        if (MemoryUtil.getByte(at + i) == first && sameBytesAt(at + i, infix)) return i
        i += 1
      }
      -1
    }

    /** Whether the row's first `lit.length` bytes (it has that many) are `lit`'s. */
    def sameBytes(row: Int, lit: Array[Byte]): Boolean = sameBytesAt(data + start(row), lit)

    /** Whether the `lit.length` bytes at `at` are `lit`'s: eight at a time, then the rest. */
    private def sameBytesAt(at: Long, lit: Array[Byte]): Boolean = {
      var i = 0
      while (i + 8 <= lit.length) { if (MemoryUtil.getLong(at + i) != MemoryUtil.getLong(lit, i)) return false; i += 8 }
      while (i < lit.length) { if (MemoryUtil.getByte(at + i) != lit(i)) return false; i += 1 }
      true
    }
  }

  /** A byte of 1 in each of a word's eight bytes, and of 0x80. */
  private val Ones = 0x0101010101010101L
  private val Highs = 0x8080808080808080L
}

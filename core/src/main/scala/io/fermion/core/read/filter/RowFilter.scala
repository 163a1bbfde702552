package io.fermion.core.read.filter

import io.fermion.core.expr.{FilterExpr, FilterValue}
import io.fermion.core.read.RowRanges
import io.fermion.core.schema.FermionType
import org.apache.arrow.vector._

/** Evaluates a [[FilterExpr]] row by row on decoded columns, to narrow a stripe to the rows that
  * may match before the other columns are read (late materialisation). Like [[StripeFilter]] it is
  * conservative: a leaf it cannot evaluate (a column not decoded, a nested column, a literal of
  * another domain) keeps every row, and the engine still filters the rows that are returned.
  *
  * Comparisons follow Spark's: strings and binary compare as unsigned bytes, NaN equals NaN and
  * sorts above every number, -0.0 equals 0.0, and a null value satisfies no comparison. */
private[core] object RowFilter {
  import FilterExpr._

  /** The rows of `candidates` that may satisfy `filter`. `column` gives a decoded top-level column
    * (type and vector, holding at least the candidate rows) by name, or None. */
  def select(
      filter: FilterExpr,
      column: String => Option[(FermionType, FieldVector)],
      candidates: RowRanges
  ): RowRanges = {
    val test = compile(FilterExpr.normalize(filter), column)
    if (test == null) return candidates
    val kept = scala.collection.mutable.ArrayBuffer.empty[(Int, Int)]
    var i = 0
    while (i < candidates.size) {
      var r = candidates.start(i)
      var runStart = -1
      while (r < candidates.end(i)) {
        if (test(r)) { if (runStart < 0) runStart = r }
        else if (runStart >= 0) { kept += ((runStart, r)); runStart = -1 }
        r += 1
      }
      if (runStart >= 0) kept += ((runStart, candidates.end(i)))
      i += 1
    }
    RowRanges.of(kept)
  }

  /** Whether a row may match (Function1 is specialised for Int => Boolean: no boxing). */
  private type RowTest = Int => Boolean

  /** The test of `e`, or null when it keeps every row. */
  private def compile(e: FilterExpr, column: String => Option[(FermionType, FieldVector)]): RowTest = e match {
    case And(l, r) =>
      val a = compile(l, column)
      val b = compile(r, column)
      if (a == null) b else if (b == null) a else (row: Int) => a(row) && b(row)
    case Or(l, r) =>
      val a = compile(l, column)
      val b = compile(r, column)
      if (a == null || b == null) null else (row: Int) => a(row) || b(row)
    case IsNull(c) => column(c).map { case (_, v) => ((row: Int) => v.isNull(row)) }.orNull
    case IsNotNull(c) => column(c).map { case (_, v) => ((row: Int) => !v.isNull(row)) }.orNull
    case Compare(c, op, lit) => leaf(c, column)((cmp, _) => cmp(lit).map(f => (row: Int) => accepts(op, f(row))))
    case In(c, lits) => leaf(c, column) { (cmp, _) =>
        val keys = lits.collect { case FilterValue.Integral(x) => x }
        // A long list of integers (keys, batch ids): one binary search per row, not a comparison
        // per literal (1,000 literals over 10M rows took 16 s).
        val byKey =
          if (lits.size <= LinearInMax || keys.size != lits.size) None
          else column(c).flatMap { case (t, v) => integral(t, v) }
        if (byKey.nonEmpty) {
          val sorted = keys.distinct.sorted.toArray
          val value = byKey.get
          Some((row: Int) => java.util.Arrays.binarySearch(sorted, value(row)) >= 0)
        } else {
          val fs = lits.map(cmp)
          if (fs.exists(_.isEmpty)) None
          else {
            val all = fs.flatten.toArray
            Some((row: Int) => {
              var k = 0; var hit = false; while (!hit && k < all.length) { hit = all(k)(row) == 0; k += 1 }; hit
            })
          }
        }
      }
    case StartsWith(c, prefix) => leaf(c, column) { (_, v) =>
        v match {
          case vw: BaseVariableWidthVector => Some((row: Int) => startsWith(vw, row, prefix))
          case _ => None
        }
      }
    case Unknown | Not(_) => null
  }

  /** IN lists up to this long compare literal by literal. */
  private val LinearInMax = 8

  private def accepts(op: Op, c: Int): Boolean = op match {
    case Eq => c == 0; case NotEq => c != 0; case Lt => c < 0; case LtEq => c <= 0; case Gt => c > 0;
    case GtEq => c >= 0
  }

  /** A test over one flat column: `build` gets the column's comparator factory (literal -> row ->
    * sign of value minus literal, None for a literal of another domain) and its vector. Null rows
    * never pass. */
  private def leaf(
      name: String,
      column: String => Option[(FermionType, FieldVector)]
  )(build: (FilterValue => Option[Int => Int], FieldVector) => Option[RowTest]): RowTest =
    column(name) match {
      case Some((t, v)) if !FermionType.isNested(t) =>
        build(comparator(t, v), v).map { test => ((row: Int) => !v.isNull(row) && test(row)): RowTest }.orNull
      case _ => null
    }

  private def comparator(t: FermionType, v: FieldVector): FilterValue => Option[Int => Int] = {
    lit =>
      (t, v, lit) match {
        case (FermionType.Float32 | FermionType.Float64, _, FilterValue.Floating(x)) =>
          val get: Int => Double = v match {
            case f: Float4Vector => row => f.get(row).toDouble
            case f: Float8Vector => row => f.get(row)
          }
          Some(row => compareDoubles(get(row), x))
        case (_, vw: BaseVariableWidthVector, FilterValue.Bytes(b)) => Some(row => compareBytes(vw, row, b))
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

  private def compareBytes(v: BaseVariableWidthVector, row: Int, lit: Array[Byte]): Int = {
    val start = v.getStartOffset(row)
    val len = v.getEndOffset(row) - start
    val data = v.getDataBuffer
    val n = math.min(len, lit.length)
    var i = 0
    while (i < n) {
      val c = (data.getByte(start.toLong + i) & 0xff) - (lit(i) & 0xff)
      if (c != 0) return c
      i += 1
    }
    len - lit.length
  }

  private def startsWith(v: BaseVariableWidthVector, row: Int, prefix: Array[Byte]): Boolean = {
    val start = v.getStartOffset(row)
    if (v.getEndOffset(row) - start < prefix.length) return false
    val data = v.getDataBuffer
    var i = 0
    while (i < prefix.length) { if (data.getByte(start.toLong + i) != prefix(i)) return false; i += 1 }
    true
  }
}

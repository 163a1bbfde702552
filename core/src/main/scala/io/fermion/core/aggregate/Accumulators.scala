package io.fermion.core.aggregate

import java.math.BigInteger

import io.fermion.core.schema.FermionType
import org.apache.arrow.memory.util.MemoryUtil
import org.apache.arrow.vector.{BaseVariableWidthVector, FieldVector}

/** The running result of one [[AggregateFunction]] for every group, indexed by group number. */
abstract private[aggregate] class Accumulator {

  /** Makes room for groups below `groups`. */
  def reserve(groups: Int): Unit

  /** Adds rows `0 until rows`, row r to group `groupOf(r)`, of `values` (null for [[AggregateFunction.CountRows]]). */
  def add(groupOf: Array[Int], rows: Int, values: Values): Unit

  /** Output rows group `g` needs: 1, or more for a sum that its engine's type cannot hold whole. */
  def parts(g: Int): Int = 1

  /** Part `part` of group `g`'s result into row `row` of `v` (null for parts past [[parts]]). */
  def write(g: Int, part: Int, v: FieldVector, row: Int): Unit
}

private[aggregate] object Accumulator {

  def of(f: AggregateFunction): Accumulator = f match {
    case AggregateFunction.CountRows => new Count(countNulls = true)
    case _: AggregateFunction.Count => new Count(countNulls = false)
    case AggregateFunction.Sum(e) =>
      e.dataType match {
        case FermionType.Float32 | FermionType.Float64 => new DoubleSum
        case FermionType.Decimal(p, _) => new ExactSum(ValueEvaluator.BigPow10(p).subtract(BigInteger.ONE))
        case _ => new ExactSum(BigInteger.valueOf(Long.MaxValue))
      }
    case AggregateFunction.Min(e) => extreme(e.dataType, max = false)
    case AggregateFunction.Max(e) => extreme(e.dataType, max = true)
  }

  private def extreme(t: FermionType, max: Boolean): Accumulator =
    if (FermionType.isVariableWidth(t)) new BytesExtreme(max)
    else t match {
      case FermionType.Decimal(p, _) if p > 18 => new WideExtreme(max)
      case _ => new LongExtreme(max)
    }

  private def grown[T](a: Array[T], groups: Int)(copy: (Array[T], Int) => Array[T]): Array[T] =
    if (groups <= a.length) a else copy(a, math.max(groups, a.length * 2))

  final private class Count(countNulls: Boolean) extends Accumulator {
    private var counts = new Array[Long](256)
    def reserve(groups: Int): Unit = counts = grown(counts, groups)(java.util.Arrays.copyOf(_, _))
    def add(groupOf: Array[Int], rows: Int, values: Values): Unit = {
      var r = 0
      if (countNulls || values.nulls == null) while (r < rows) { counts(groupOf(r)) += 1; r += 1 }
      else while (r < rows) { if (!values.nulls(r)) counts(groupOf(r)) += 1; r += 1 }
    }
    def write(g: Int, part: Int, v: FieldVector, row: Int): Unit =
      if (part == 0) VectorWrites.setLong(v, row, counts(g)) else VectorWrites.setNull(v, row)
  }

  /** Integer and decimal sums, exact: a 64-bit running sum per group, moved into a `BigInteger`
    * whenever the next value would overflow it. `limit` is the largest magnitude one output row
    * may hold. */
  final private class ExactSum(limit: BigInteger) extends Accumulator {
    private var sums = new Array[Long](256)
    private var big = new Array[BigInteger](256)
    private var seen = new Array[Boolean](256)
    private val smallLimit = if (limit.bitLength < 64) limit.longValue else Long.MaxValue

    def reserve(groups: Int): Unit = {
      sums = grown(sums, groups)(java.util.Arrays.copyOf(_, _))
      big = grown(big, groups)(java.util.Arrays.copyOf(_, _))
      seen = grown(seen, groups)(java.util.Arrays.copyOf(_, _))
    }

    private def addBig(g: Int, x: BigInteger): Unit = big(g) = if (big(g) == null) x else big(g).add(x)

    def add(groupOf: Array[Int], rows: Int, values: Values): Unit = {
      val xs = values.longs
      var r = 0
      while (r < rows) {
        if (!values.isNull(r)) {
          val g = groupOf(r)
          seen(g) = true
          if (values.isWide(r)) addBig(g, values.wide(r))
          else {
            val s = sums(g)
            val x = xs(r)
            val t = s + x
            if (((s ^ t) & (x ^ t)) < 0) { addBig(g, BigInteger.valueOf(s)); sums(g) = x }
            else sums(g) = t
          }
        }
        r += 1
      }
    }

    private def total(g: Int): BigInteger =
      if (big(g) == null) BigInteger.valueOf(sums(g)) else big(g).add(BigInteger.valueOf(sums(g)))

    override def parts(g: Int): Int =
      if (!seen(g) || (big(g) == null && sums(g) >= -smallLimit && sums(g) <= smallLimit)) 1
      else {
        val t = total(g).abs
        if (t.compareTo(limit) <= 0) 1
        else {
          val n = t.add(limit).subtract(BigInteger.ONE).divide(limit)
          if (n.bitLength > 31)
            throw new ArithmeticOverflowException(s"a partial sum of $t cannot be cut into parts of $limit")
          n.intValue
        }
      }

    def write(g: Int, part: Int, v: FieldVector, row: Int): Unit = {
      val n = parts(g)
      if (!seen(g) || part >= n) VectorWrites.setNull(v, row)
      else if (n == 1) {
        if (big(g) == null) VectorWrites.setLong(v, row, sums(g)) else VectorWrites.setBig(v, row, total(g))
      } else {
        // n - 1 parts of the largest magnitude, then what is left (of the same sign, at most as large).
        val t = total(g)
        val step = if (t.signum < 0) limit.negate else limit
        VectorWrites.setBig(v, row, if (part < n - 1) step else t.subtract(step.multiply(BigInteger.valueOf(n - 1L))))
      }
    }
  }

  final private class DoubleSum extends Accumulator {
    private var sums = new Array[Double](256)
    private var seen = new Array[Boolean](256)
    def reserve(groups: Int): Unit = {
      sums = grown(sums, groups)(java.util.Arrays.copyOf(_, _))
      seen = grown(seen, groups)(java.util.Arrays.copyOf(_, _))
    }
    def add(groupOf: Array[Int], rows: Int, values: Values): Unit = {
      val xs = values.doubles
      var r = 0
      while (r < rows) {
        if (!values.isNull(r)) { val g = groupOf(r); sums(g) += xs(r); seen(g) = true }
        r += 1
      }
    }
    def write(g: Int, part: Int, v: FieldVector, row: Int): Unit =
      if (part == 0 && seen(g)) VectorWrites.setDouble(v, row, sums(g)) else VectorWrites.setNull(v, row)
  }

  /** Minimum or maximum in the 64-bit domain (integers, dates, timestamps, booleans, decimals of up
    * to 18 digits). */
  final private class LongExtreme(max: Boolean) extends Accumulator {
    private var best = new Array[Long](256)
    private var seen = new Array[Boolean](256)
    def reserve(groups: Int): Unit = {
      best = grown(best, groups)(java.util.Arrays.copyOf(_, _))
      seen = grown(seen, groups)(java.util.Arrays.copyOf(_, _))
    }
    def add(groupOf: Array[Int], rows: Int, values: Values): Unit = {
      val xs = values.longs
      var r = 0
      while (r < rows) {
        if (!values.isNull(r)) {
          val g = groupOf(r)
          val x = xs(r)
          if (!seen(g) || (if (max) x > best(g) else x < best(g))) { best(g) = x; seen(g) = true }
        }
        r += 1
      }
    }
    def write(g: Int, part: Int, v: FieldVector, row: Int): Unit =
      if (part == 0 && seen(g)) VectorWrites.setLong(v, row, best(g)) else VectorWrites.setNull(v, row)
  }

  /** Minimum or maximum of decimals of more than 18 digits. */
  final private class WideExtreme(max: Boolean) extends Accumulator {
    private var best = new Array[BigInteger](256)
    def reserve(groups: Int): Unit = best = grown(best, groups)(java.util.Arrays.copyOf(_, _))
    def add(groupOf: Array[Int], rows: Int, values: Values): Unit = {
      var r = 0
      while (r < rows) {
        if (!values.isNull(r)) {
          val g = groupOf(r)
          val x = values.bigAt(r)
          if (best(g) == null || (if (max) x.compareTo(best(g)) > 0 else x.compareTo(best(g)) < 0)) best(g) = x
        }
        r += 1
      }
    }
    def write(g: Int, part: Int, v: FieldVector, row: Int): Unit =
      if (part == 0 && best(g) != null) VectorWrites.setBig(v, row, best(g)) else VectorWrites.setNull(v, row)
  }

  /** Minimum or maximum of strings or binary, by unsigned bytes (then length), as Spark orders them. */
  final private class BytesExtreme(max: Boolean) extends Accumulator {
    private var best = new Array[Array[Byte]](256)
    def reserve(groups: Int): Unit = best = grown(best, groups)(java.util.Arrays.copyOf(_, _))
    def add(groupOf: Array[Int], rows: Int, values: Values): Unit = {
      val vw: BaseVariableWidthVector = values.bytes
      val offsets = vw.getOffsetBufferAddress
      val data = vw.getDataBufferAddress
      val rowOf = values.rowOf
      var r = 0
      while (r < rows) {
        if (!values.isNull(r)) {
          val g = groupOf(r)
          val slot = offsets + 4L * (if (rowOf == null) r else rowOf(r))
          val start = MemoryUtil.getInt(slot)
          val len = MemoryUtil.getInt(slot + 4) - start
          val c = if (best(g) == null) 0 else io.fermion.core.bytes.MemoryBytes.compare(data + start, len, best(g))
          if (best(g) == null || (if (max) c > 0 else c < 0)) {
            val copy = new Array[Byte](len)
            MemoryUtil.copyFromMemory(data + start, copy, 0L, len.toLong)
            best(g) = copy
          }
        }
        r += 1
      }
    }
    def write(g: Int, part: Int, v: FieldVector, row: Int): Unit =
      if (part == 0 && best(g) != null) v.asInstanceOf[BaseVariableWidthVector].setSafe(row, best(g))
      else VectorWrites.setNull(v, row)
  }
}

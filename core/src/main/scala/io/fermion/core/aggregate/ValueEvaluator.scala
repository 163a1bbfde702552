package io.fermion.core.aggregate

import java.math.BigInteger

import io.fermion.core.schema.FermionType
import io.fermion.core.schema.FermionType._

/** Computes [[ValueExpr]]s over a batch, a whole column at a time: each node's loop works on
  * 64-bit integers (or doubles) and leaves the rare value that needs more bits to exact
  * `BigInteger` arithmetic. Values shared by several functions (TPC-H Q1 sums the same product
  * twice) are computed once per batch.
  *
  * An overflow under [[OverflowRule.Raise]] fails the read only where the value is needed as an
  * engine evaluating row by row, left to right, would need it: a node whose left input is null is
  * null without its right input evaluated, so an overflow there is no error (Spark evaluates
  * `a + b` so). Such rows carry an error mark up the tree until [[input]] raises it. */
final private[aggregate] class ValueEvaluator(rule: OverflowRule) {
  import ValueEvaluator._

  private val memo = scala.collection.mutable.HashMap.empty[ValueExpr, Values]

  /** Forgets the previous batch's values. */
  def reset(): Unit = memo.clear()

  /** The values of a function's input; an overflow on any row is raised here. */
  def input(e: ValueExpr, column: String => Values, rows: Int): Values = {
    val v = evaluate(e, column, rows)
    if (v.errors != null) throw overflowError(e, v.errorNote)
    v
  }

  private def evaluate(e: ValueExpr, column: String => Values, rows: Int): Values =
    memo.getOrElseUpdate(
      e,
      e match {
        case ValueExpr.Column(name, _) => column(name)
        case ValueExpr.Literal(v, t) => Values.constant(v, t, rows)
        case ValueExpr.Arithmetic(op, l, r, t) =>
          arithmetic(op, evaluate(l, column, rows), evaluate(r, column, rows), t, e)
        case ValueExpr.Negate(c, t) => negate(evaluate(c, column, rows), t, e)
        case ValueExpr.Cast(c, t) => cast(evaluate(c, column, rows), t, e)
      }
    )

  /** Null where an input is; an error where the left input is, or the left is not null and the
    * right is an error. */
  private def withNulls(a: Values, b: Values, out: Values): Unit = {
    if (a.nulls != null || b.nulls != null) {
      out.nulls = new Array[Boolean](out.rows)
      var r = 0
      while (r < out.rows) { out.nulls(r) = a.isNull(r) || b.isNull(r); r += 1 }
    }
    if (a.errors != null || b.errors != null) {
      var r = 0
      while (r < out.rows) {
        if (a.isError(r)) out.setError(r, a.errorNote)
        else if (!a.isNull(r) && b.isError(r)) out.setError(r, b.errorNote)
        r += 1
      }
    }
  }

  private def copyNulls(a: Values, out: Values): Unit = {
    if (a.nulls != null) out.nulls = a.nulls.clone()
    if (a.errors != null) { out.errors = a.errors.clone(); out.errorNote = a.errorNote }
  }

  private def arithmetic(op: ValueExpr.Op, a: Values, b: Values, t: FermionType, e: ValueExpr): Values = {
    val out = new Values(t, a.rows)
    withNulls(a, b, out)
    val n = out.rows
    t match {
      case Float64 =>
        out.doubles = new Array[Double](n)
        val (x, y, z) = (a.doubles, b.doubles, out.doubles)
        var r = 0
        op match {
          case ValueExpr.Add => while (r < n) { z(r) = x(r) + y(r); r += 1 }
          case ValueExpr.Subtract => while (r < n) { z(r) = x(r) - y(r); r += 1 }
          case ValueExpr.Multiply => while (r < n) { z(r) = x(r) * y(r); r += 1 }
        }
      case d: Decimal =>
        out.longs = new Array[Long](n)
        // Add and subtract align both sides to the result's scale (the larger); multiply adds them.
        val ka = if (op == ValueExpr.Multiply) 0 else d.scale - a.dataType.asInstanceOf[Decimal].scale
        val kb = if (op == ValueExpr.Multiply) 0 else d.scale - b.dataType.asInstanceOf[Decimal].scale
        val limit = if (d.precision <= 18) Pow10(d.precision) else Long.MaxValue
        val (x, y, z) = (a.longs, b.longs, out.longs)
        var r = 0
        while (r < n) {
          if (!out.isNull(r)) {
            var slow = a.isWide(r) || b.isWide(r) || ka > 18 || kb > 18
            if (!slow) {
              val u = scaled(x(r), ka)
              val v = scaled(y(r), kb)
              if (u == Overflowed || v == Overflowed) slow = true
              else {
                val res = op match {
                  case ValueExpr.Add => val s = u + v; if (((u ^ s) & (v ^ s)) < 0) Overflowed else s
                  case ValueExpr.Subtract => val s = u - v; if (((u ^ v) & (u ^ s)) < 0) Overflowed else s
                  case ValueExpr.Multiply =>
                    val p = u * v; if (Math.multiplyHigh(u, v) != (p >> 63)) Overflowed else p
                }
                if (res == Overflowed) slow = true
                else if (res > -limit && res < limit) z(r) = res
                else overflow(out, r, e)
              }
            }
            if (slow) {
              val u = a.bigAt(r).multiply(BigPow10(ka))
              val v = b.bigAt(r).multiply(BigPow10(kb))
              val res = op match {
                case ValueExpr.Add => u.add(v)
                case ValueExpr.Subtract => u.subtract(v)
                case ValueExpr.Multiply => u.multiply(v)
              }
              if (res.abs.compareTo(BigPow10(d.precision)) < 0) out.setBig(r, res) else overflow(out, r, e)
            }
          }
          r += 1
        }
      case _ =>
        out.longs = new Array[Long](n)
        val (x, y, z) = (a.longs, b.longs, out.longs)
        val (lo, hi) = range(t)
        var r = 0
        while (r < n) {
          if (!out.isNull(r)) {
            val u = x(r)
            val v = y(r)
            val res = op match {
              case ValueExpr.Add => u + v
              case ValueExpr.Subtract => u - v
              case ValueExpr.Multiply => u * v
            }
            val over = op match {
              case ValueExpr.Add => ((u ^ res) & (v ^ res)) < 0
              case ValueExpr.Subtract => ((u ^ v) & (u ^ res)) < 0
              case ValueExpr.Multiply => Math.multiplyHigh(u, v) != (res >> 63)
            }
            integerResult(out, r, res, over || res < lo || res > hi)
          }
          r += 1
        }
    }
    out
  }

  private def negate(a: Values, t: FermionType, e: ValueExpr): Values = {
    val out = new Values(t, a.rows)
    copyNulls(a, out)
    val n = out.rows
    var r = 0
    t match {
      case Float64 => out.doubles = new Array[Double](n); while (r < n) { out.doubles(r) = -a.doubles(r); r += 1 }
      case _: Decimal =>
        out.longs = new Array[Long](n)
        while (r < n) {
          if (!out.isNull(r)) {
            if (a.isWide(r) || a.longs(r) == Long.MinValue) out.setBig(r, a.bigAt(r).negate)
            else out.longs(r) = -a.longs(r)
          }
          r += 1
        }
      case _ =>
        out.longs = new Array[Long](n)
        val (lo, hi) = range(t)
        while (r < n) {
          if (!out.isNull(r)) {
            val v = a.longs(r)
            integerResult(out, r, -v, v == Long.MinValue || -v < lo || -v > hi)
          }
          r += 1
        }
    }
    out
  }

  private def cast(a: Values, t: FermionType, e: ValueExpr): Values = {
    val n = a.rows
    (a.dataType, t) match {
      case (from, Float64) =>
        val out = new Values(t, n)
        copyNulls(a, out)
        out.doubles =
          if (from == Float64 || from == Float32) a.doubles
          else { val d = new Array[Double](n); var r = 0; while (r < n) { d(r) = a.longs(r).toDouble; r += 1 }; d }
        out
      case (from, d: Decimal) =>
        val out = new Values(t, n)
        copyNulls(a, out)
        out.longs = new Array[Long](n)
        val k = d.scale - (from match { case Decimal(_, s) => s; case _ => 0 })
        val limit = if (d.precision <= 18) Pow10(d.precision) else Long.MaxValue
        var r = 0
        while (r < n) {
          if (!out.isNull(r)) {
            val v = if (a.isWide(r) || k > 18) Overflowed else scaled(a.longs(r), k)
            if (v != Overflowed && v > -limit && v < limit) out.longs(r) = v
            else {
              val big = a.bigAt(r).multiply(BigPow10(k))
              if (big.abs.compareTo(BigPow10(d.precision)) < 0) out.setBig(r, big) else overflow(out, r, e)
            }
          }
          r += 1
        }
        out
      // A wider integer: the same values.
      case _ => val out = new Values(t, n); out.nulls = a.nulls; out.longs = a.longs; out
    }
  }

  /** An integer result into row `r` of `out`: when `over` (it left the type's range) an error
    * under [[OverflowRule.Raise]], else wrapped into the type. */
  private def integerResult(out: Values, r: Int, v: Long, over: Boolean): Unit =
    if (!over) out.longs(r) = v
    else if (rule == OverflowRule.Raise) out.setError(r, s"integer overflow (${out.dataType})")
    else out.longs(r) = out.dataType match {
      case Int8 => v.toByte.toLong
      case Int16 => v.toShort.toLong
      case Int32 => v.toInt.toLong
      case _ => v
    }

  /** A decimal that does not fit its precision: an error, or null. */
  private def overflow(out: Values, r: Int, e: ValueExpr): Unit =
    if (rule == OverflowRule.Raise) out.setError(r, s"a value does not fit ${out.dataType} in $e")
    else out.setNull(r)
}

private[aggregate] object ValueEvaluator {

  /** A marker that no exact 64-bit result is at hand (the value itself can occur: then the slow
    * path recomputes it, exactly). */
  val Overflowed: Long = Long.MinValue

  val Pow10: Array[Long] = Array.iterate(1L, 19)(_ * 10)
  val BigPow10: Array[BigInteger] = Array.iterate(BigInteger.ONE, 78)(_.multiply(BigInteger.TEN))

  /** `v * 10^k` (k <= 18), or [[Overflowed]]. */
  def scaled(v: Long, k: Int): Long =
    if (k == 0) v
    else {
      val m = Pow10(k)
      val p = v * m
      if (Math.multiplyHigh(v, m) != (p >> 63) || p == Overflowed) Overflowed else p
    }

  def range(t: FermionType): (Long, Long) = t match {
    case Int8 => (Byte.MinValue.toLong, Byte.MaxValue.toLong)
    case Int16 => (Short.MinValue.toLong, Short.MaxValue.toLong)
    case Int32 => (Int.MinValue.toLong, Int.MaxValue.toLong)
    case _ => (Long.MinValue, Long.MaxValue)
  }

  def overflowError(e: ValueExpr, what: String): ArithmeticOverflowException =
    new ArithmeticOverflowException(s"arithmetic overflow in an aggregated value: $what (computing $e)")
}

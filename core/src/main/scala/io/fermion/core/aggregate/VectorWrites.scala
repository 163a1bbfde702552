package io.fermion.core.aggregate

import java.math.BigInteger

import org.apache.arrow.vector._

/** Values written into the Arrow vectors of an aggregation's output, by the core's forms of them
  * (see [[Values]]). */
private[aggregate] object VectorWrites {

  def setLong(v: FieldVector, row: Int, x: Long): Unit = v match {
    case b: BitVector => b.setSafe(row, if (x != 0) 1 else 0)
    case t: TinyIntVector => t.setSafe(row, x.toByte)
    case s: SmallIntVector => s.setSafe(row, x.toShort)
    case i: IntVector => i.setSafe(row, x.toInt)
    case d: DateDayVector => d.setSafe(row, x.toInt)
    case b: BigIntVector => b.setSafe(row, x)
    case ts: TimeStampVector => ts.setSafe(row, x)
    case d: DecimalVector => d.setSafe(row, x)
    case other => throw new IllegalArgumentException(s"cannot write an integer into ${other.getField}")
  }

  /** An exact integer: an unscaled decimal, or an integer known to fit its vector. */
  def setBig(v: FieldVector, row: Int, x: BigInteger): Unit = v match {
    case d: DecimalVector => d.setSafe(row, new java.math.BigDecimal(x, d.getScale))
    case other => setLong(other, row, x.longValueExact)
  }

  def setNull(v: FieldVector, row: Int): Unit = v match {
    case f: BaseFixedWidthVector => f.setNull(row)
    case vw: BaseVariableWidthVector => vw.setNull(row)
    case other => throw new IllegalArgumentException(s"cannot write a null into ${other.getField}")
  }

  def setDouble(v: FieldVector, row: Int, x: Double): Unit = v.asInstanceOf[Float8Vector].setSafe(row, x)
}

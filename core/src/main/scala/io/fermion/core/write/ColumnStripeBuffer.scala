package io.fermion.core.write

import io.fermion.core.schema.{FermionField, FermionType}
import org.apache.arrow.vector._

/** Accumulates one flat column's values for the current stripe, in stream form: a validity bitmap,
  * value lengths (variable-width types only) and the DATA bytes. Fixed-width DATA keeps a slot for
  * every row (nulls as zeros) so DATA pages cover the same rows as the stripe; variable-width DATA
  * holds only the bytes of non-null values. */
final class ColumnStripeBuffer(val field: FermionField) {
  val validity = new GrowableBits
  val lengths = new GrowableBytes(1024)
  val data = new GrowableBytes(4096)
  /** Booleans are bit-packed: their DATA is a bitmap. */
  val dataBits = new GrowableBits
  private var rows = 0
  private var nulls = 0

  val width: Int = FermionType.fixedWidth(field.dataType)
  val isBool: Boolean = field.dataType == FermionType.Bool
  val isVariable: Boolean = FermionType.isVariableWidth(field.dataType)

  def rowCount: Int = rows
  def nullCount: Int = nulls
  def bufferedBytes: Long = validity.byteLength.toLong + lengths.length + data.length + dataBits.byteLength

  def clear(): Unit = { validity.clear(); lengths.clear(); data.clear(); dataBits.clear(); rows = 0; nulls = 0 }

  /** Appends rows [from, from + count) of `v`, which must be the Arrow vector for this field's type. */
  def append(v: FieldVector, from: Int, count: Int): Unit = {
    var i = from
    val end = from + count
    while (i < end) {
      val isNull = v.isNull(i)
      validity.append(!isNull)
      if (isNull) nulls += 1
      i += 1
    }
    v match {
      case b: BitVector =>
        i = from
        while (i < end) { dataBits.append(!b.isNull(i) && b.get(i) != 0); i += 1 }
      case d: DecimalVector if width == 8 =>
        val buf = d.getDataBuffer
        i = from
        while (i < end) { data.putLong(if (d.isNull(i)) 0L else buf.getLong(i.toLong * 16)); i += 1 }
      case f: BaseFixedWidthVector =>
        val at = data.extend(count * width)
        f.getDataBuffer.getBytes(from.toLong * width, data.array, at, count * width)
        if (v.getNullCount > 0) {
          i = from
          while (i < end) {
            if (f.isNull(i)) java.util.Arrays.fill(data.array, at + (i - from) * width, at + (i - from + 1) * width, 0.toByte)
            i += 1
          }
        }
      case vw: BaseVariableWidthVector =>
        val offsets = vw.getOffsetBuffer
        appendVariable(vw, vw.getDataBuffer, from, end, row => offsets.getInt(row.toLong * 4).toLong)
      case lw: BaseLargeVariableWidthVector =>
        val offsets = lw.getOffsetBuffer
        appendVariable(lw, lw.getDataBuffer, from, end, row => offsets.getLong(row.toLong * 8))
      case other =>
        throw new IllegalArgumentException(s"column `${field.name}` (${field.dataType}) cannot be written from ${other.getClass.getSimpleName}")
    }
    rows += count
  }

  private def appendVariable(v: FieldVector, bytes: org.apache.arrow.memory.ArrowBuf, from: Int, end: Int, offset: Int => Long): Unit = {
    var i = from
    while (i < end) {
      if (v.isNull(i)) lengths.putInt(0)
      else {
        val s = offset(i)
        val n = Math.toIntExact(offset(i + 1) - s)
        lengths.putInt(n)
        val at = data.extend(n)
        bytes.getBytes(s, data.array, at, n)
      }
      i += 1
    }
  }
}

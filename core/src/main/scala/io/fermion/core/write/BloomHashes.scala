package io.fermion.core.write

import io.fermion.core.bytes.{Bits, GrowableBits, GrowableBytes}
import io.fermion.core.bloom.{BloomValues, XxHash64}
import io.fermion.core.encoding.PlainValues
import io.fermion.core.schema.FermionType

/** The bloom-filter hashes of a buffered leaf column's non-null values (see [[BloomValues]]). */
private[core] object BloomHashes {
  def of(col: ColumnNodeBuffer): Array[Long] = {
    val rows = col.rowCount
    val valid = (i: Int) => col.nullCount == 0 || Bits.get(col.validity.array, i)
    val out = Array.newBuilder[Long]
    col.field.dataType match {
      case FermionType.Utf8 | FermionType.Binary =>
        val lb = col.lengths.array
        var at = 0
        var i = 0
        while (i < rows) {
          val len =
            (lb(i * 4) & 0xff) | ((lb(i * 4 + 1) & 0xff) << 8) | ((lb(i * 4 + 2) & 0xff) << 16) | (lb(i * 4 + 3) << 24)
          if (valid(i)) out += XxHash64.hash(col.data.array, at, len)
          at += len
          i += 1
        }
      case t =>
        val w = col.width
        val values = new Array[Long](rows)
        PlainValues.readSigned(col.data.array, 0, rows, w, values)
        var i = 0
        while (i < rows) {
          if (valid(i)) out += (t match {
            case FermionType.Float32 => BloomValues.hashDouble(java.lang.Float.intBitsToFloat(values(i).toInt).toDouble)
            case FermionType.Float64 => BloomValues.hashDouble(java.lang.Double.longBitsToDouble(values(i)))
            case _ => XxHash64.hashLong(values(i))
          })
          i += 1
        }
    }
    out.result()
  }
}

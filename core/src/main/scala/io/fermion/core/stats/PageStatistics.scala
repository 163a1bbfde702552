package io.fermion.core.stats

import io.fermion.core.bytes.Bits
import io.fermion.core.layout.ValueStats
import io.fermion.core.schema.FermionType

/** Min/max of the non-null values of a DATA page, in the int64 slots of PageMeta and
  * FullChunkDesc (docs/format.md, "Statistics"):
  *  - integers, dates, timestamps, booleans and decimals stored as int64: the values themselves;
  *  - float32/float64: IEEE-754 bits of the double value (flag DoubleBits); NaN excluded (flag HasNaN);
  *    -0.0 and 0.0 compare equal, so min is written as -0.0 and max as +0.0 when zeros are the bound;
  *  - strings/binary: the first 8 bytes, big-endian, zero-padded (flag PrefixBounds); every value v
  *    satisfies prefix(min) <= prefix(v) <= prefix(max) under unsigned comparison;
  *  - 16-byte decimals: none.
  */
private[core] object PageStatistics {

  /** Statistics of fixed-width slots [row, row + count) of `buf` (null slots skipped). */
  def fixed(
      t: FermionType,
      data: Array[Byte],
      validity: Array[Byte],
      hasNulls: Boolean,
      row: Int,
      count: Int
  ): ValueStats = t match {
    case FermionType.Float32 | FermionType.Float64 => floating(t, data, validity, hasNulls, row, count)
    case d: FermionType.Decimal if d.storedWidth == 16 => ValueStats.None
    case _ =>
      val w = FermionType.fixedWidth(t)
      var min = Long.MaxValue
      var max = Long.MinValue
      var seen = false
      var i = row
      while (i < row + count) {
        if (!hasNulls || Bits.get(validity, i)) {
          val v = readSigned(data, i * w, w)
          if (v < min) min = v
          if (v > max) max = v
          seen = true
        }
        i += 1
      }
      if (seen) ValueStats(ValueStats.HasMinMax, min, max) else ValueStats.None
  }

  private def floating(
      t: FermionType,
      data: Array[Byte],
      validity: Array[Byte],
      hasNulls: Boolean,
      row: Int,
      count: Int
  ): ValueStats = {
    val w = FermionType.fixedWidth(t)
    var min = Double.PositiveInfinity
    var max = Double.NegativeInfinity
    var seen = false
    var nan = false
    var i = row
    while (i < row + count) {
      if (!hasNulls || Bits.get(validity, i)) {
        val raw = readSigned(data, i * w, w)
        val v =
          if (w == 4) java.lang.Float.intBitsToFloat(raw.toInt).toDouble else java.lang.Double.longBitsToDouble(raw)
        if (v.isNaN) nan = true
        else {
          if (v < min || (v == 0.0 && min == 0.0)) min = if (v == 0.0) -0.0 else v
          if (v > max || (v == 0.0 && max == 0.0)) max = if (v == 0.0) 0.0 else v
          seen = true
        }
      }
      i += 1
    }
    val flags = ValueStats.DoubleBits | (if (nan) ValueStats.HasNaN else 0)
    if (seen) ValueStats(
      flags | ValueStats.HasMinMax,
      java.lang.Double.doubleToRawLongBits(min),
      java.lang.Double.doubleToRawLongBits(max)
    )
    else ValueStats(flags, 0L, 0L)
  }

  def bools(bits: Array[Byte], validity: Array[Byte], hasNulls: Boolean, row: Int, count: Int): ValueStats = {
    var sawTrue = false
    var sawFalse = false
    var i = row
    while (i < row + count) {
      if (!hasNulls || Bits.get(validity, i)) { if (Bits.get(bits, i)) sawTrue = true else sawFalse = true }
      i += 1
    }
    if (!sawTrue && !sawFalse) ValueStats.None
    else ValueStats(ValueStats.HasMinMax, if (sawFalse) 0L else 1L, if (sawTrue) 1L else 0L)
  }

  /** Prefix statistics of variable-width values; `starts(i)`/`lens(i)` index into `data`. */
  def prefixes(
      data: Array[Byte],
      starts: Array[Int],
      lens: Array[Int],
      valid: Array[Boolean],
      count: Int
  ): ValueStats = {
    var min = -1L
    var max = 0L
    var seen = false
    var i = 0
    while (i < count) {
      if (valid(i)) {
        val p = prefix(data, starts(i), lens(i))
        if (!seen || java.lang.Long.compareUnsigned(p, min) < 0) min = p
        if (!seen || java.lang.Long.compareUnsigned(p, max) > 0) max = p
        seen = true
      }
      i += 1
    }
    if (seen) ValueStats(ValueStats.HasMinMax | ValueStats.PrefixBounds, min, max) else ValueStats.None
  }

  /** The first 8 bytes of a value as a big-endian number, zero-padded. */
  def prefix(data: Array[Byte], start: Int, len: Int): Long = {
    var p = 0L
    var k = 0
    while (k < 8) {
      p = (p << 8) | (if (k < len) (data(start + k) & 0xff).toLong else 0L)
      k += 1
    }
    p
  }

  def readSigned(data: Array[Byte], at: Int, w: Int): Long = w match {
    case 1 => data(at).toLong
    case 2 => ((data(at) & 0xff) | (data(at + 1) << 8)).toShort.toLong
    case 4 =>
      ((data(at) & 0xff) | ((data(at + 1) & 0xff) << 8) | ((data(at + 2) & 0xff) << 16) | (data(at + 3) << 24)).toLong
    case 8 =>
      var v = 0L
      var k = 7
      while (k >= 0) { v = (v << 8) | (data(at + k) & 0xff); k -= 1 }
      v
  }
}

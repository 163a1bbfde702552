package io.fermion.core.read

import org.apache.arrow.memory.util.MemoryUtil

/** The smallest and largest of the values last written by [[ArrowValues.putLongs]]. */
final private[read] class ValueRange {
  var lo: Long = Long.MaxValue
  var hi: Long = Long.MinValue
}

/** Decoded fixed-width values written straight into an Arrow value buffer, in the one pass that
  * also finds their range (which the page statistics check compares): no PLAIN copy of the page is
  * made on the way. */
private[read] object ArrowValues {

  /** Writes `values(0 until n)` from `address`, each as its low `width` bytes (1, 2, 4 or 8),
    * little-endian, one every `stride` bytes: `stride` 16 widens 8-byte unscaled decimals to Arrow's
    * 16 bytes, sign-extended. Sets `range` to the smallest and largest value as written (read back
    * signed from its `width` bytes). The caller has checked that the `n * stride` bytes lie within
    * the buffer. */
  def putLongs(values: Array[Long], n: Int, width: Int, stride: Int, address: Long, range: ValueRange): Unit = {
    var lo = Long.MaxValue
    var hi = Long.MinValue
    var i = 0
    if (stride == 16)
      while (i < n) {
        val x = values(i)
        val at = address + 16L * i
        MemoryUtil.putLong(at, x)
        MemoryUtil.putLong(at + 8, x >> 63)
        lo = math.min(lo, x); hi = math.max(hi, x); i += 1
      }
    else
      width match {
        case 1 => while (i < n) {
            val x = values(i).toByte; MemoryUtil.putByte(address + i, x)
            lo = math.min(lo, x.toLong); hi = math.max(hi, x.toLong); i += 1
          }
        case 2 => while (i < n) {
            val x = values(i).toShort; MemoryUtil.putShort(address + 2L * i, x)
            lo = math.min(lo, x.toLong); hi = math.max(hi, x.toLong); i += 1
          }
        case 4 => while (i < n) {
            val x = values(i).toInt; MemoryUtil.putInt(address + 4L * i, x)
            lo = math.min(lo, x.toLong); hi = math.max(hi, x.toLong); i += 1
          }
        case 8 => while (i < n) {
            val x = values(i); MemoryUtil.putLong(address + 8L * i, x)
            lo = math.min(lo, x); hi = math.max(hi, x); i += 1
          }
        case other => throw new IllegalArgumentException(s"$other-byte values")
      }
    range.lo = lo
    range.hi = hi
  }
}

package io.fermion.core.read

import io.fermion.core.encoding.{BitPacking, DictionaryCodes, PackedValues}
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

  /** As [[putLongs]] for `n` values still packed (`p.bits` <= 56): each unpacked straight into the
    * buffer, in the pass that writes it, without the i64 array [[putLongs]] reads (a BITPACK or FOR
    * page otherwise costs a store and a load per value more). Values of 4 and 8 bytes (and 8-byte
    * decimals widened to 16) whose codes map to values without wrapping in their width go through
    * the fused loop; their range is then the codes' range plus the reference. Any other case is
    * unpacked in blocks and written by [[putLongs]]. */
  def putPacked(p: PackedValues, n: Int, width: Int, stride: Int, address: Long, range: ValueRange): Unit = {
    val bits = p.bits
    val top = (1L << bits) - 1 // the largest code (bits <= 56)
    val ref = p.reference
    val inOrder = width match {
      case 8 => ref <= Long.MaxValue - top
      case 4 => ref >= Int.MinValue && ref <= Int.MaxValue - top
      case _ => false
    }
    // Groups of eight values read unchecked (BitPacking.groupValue): within the words, checked here.
    val bytes = BitPacking.packedBytes(n, bits)
    if (p.offset < 0 || p.offset + bytes > p.array.length)
      throw new IllegalArgumentException(s"$n packed values pass the end of their array")
    val groups =
      if (!inOrder || bits == 0 || !MemoryUtil.LITTLE_ENDIAN) 0 else BitPacking.groupsWithin(bytes, n, bits)
    var lo = Long.MaxValue
    var hi = Long.MinValue
    if (groups > 0) {
      stride match {
        case 4 => packedInts(p.array, p.offset, groups, bits, ref, address, range)
        case 8 => packedLongs(p.array, p.offset, groups, bits, ref, address, range)
        case _ => packedDecimals(p.array, p.offset, groups, bits, ref, address, range)
      }
      lo = ref + range.lo; hi = ref + range.hi
    }
    // The rest (and every value of a case the loops do not take), in blocks of the i64 path.
    putRest(p, groups * 8, n, null, width, stride, address, range, lo, hi)
  }

  /** As [[putPacked]] for only the values at page slots `rows` (ascending, each below `n`), each
    * written at its slot; the other slots keep whatever they held. A filter's later columns, and
    * the columns returned, are needed only at the rows the filter's first columns kept: when those
    * are few, finding each one's bits costs less than unpacking the page. Sets `range` to the range
    * of the values written. */
  def putPackedRows(
      p: PackedValues,
      n: Int,
      rows: Array[Int],
      width: Int,
      stride: Int,
      address: Long,
      range: ValueRange
  ): Unit = putRows(p, n, rows, null, width, stride, address, range)

  /** As [[putDictionary]] for only the values at page slots `rows`, as [[putPackedRows]]. False when
    * a code lies outside the dictionary. */
  def putDictionaryRows(
      d: DictionaryCodes,
      n: Int,
      rows: Array[Int],
      width: Int,
      stride: Int,
      address: Long,
      range: ValueRange
  ): Boolean =
    try { putRows(d.codes, n, rows, d.entries, width, stride, address, range); true }
    catch { case _: ArrayIndexOutOfBoundsException => false }

  private def putRows(
      p: PackedValues,
      n: Int,
      rows: Array[Int],
      entries: Array[Long],
      width: Int,
      stride: Int,
      address: Long,
      range: ValueRange
  ): Unit = {
    val bits = p.bits
    val end = p.offset + BitPacking.packedBytes(n, bits)
    if (p.offset < 0 || end > p.array.length)
      throw new IllegalArgumentException(s"$n packed values pass the end of their array")
    val mask = if (bits >= 64) -1L else (1L << bits) - 1
    // A value of up to 56 bits lies within the one 8-byte load from its first byte; loads that
    // would pass the words' end (the last values) and wider values are read by `unpack`.
    val direct = bits <= 56 && MemoryUtil.LITTLE_ENDIAN
    val one = new Array[Long](1)
    var lo = Long.MaxValue
    var hi = Long.MinValue
    var i = 0
    while (i < rows.length) {
      val k = rows(i)
      val bit = k.toLong * bits
      val at = p.offset + (bit >>> 3).toInt
      val code =
        if (direct && at + 8 <= end) (MemoryUtil.getLong(p.array, at) >>> (bit & 7)) & mask
        else { BitPacking.unpack(p.array, p.offset, 1, bits, 0L, one, firstBit = bit); one(0) }
      val x = if (entries != null) entries(code.toInt) else code + p.reference
      val to = address + k.toLong * stride
      val written =
        if (stride == 16) { MemoryUtil.putLong(to, x); MemoryUtil.putLong(to + 8, x >> 63); x }
        else
          width match {
            case 1 => val y = x.toByte; MemoryUtil.putByte(to, y); y.toLong
            case 2 => val y = x.toShort; MemoryUtil.putShort(to, y); y.toLong
            case 4 => val y = x.toInt; MemoryUtil.putInt(to, y); y.toLong
            case 8 => MemoryUtil.putLong(to, x); x
            case other => throw new IllegalArgumentException(s"$other-byte values")
          }
      lo = math.min(lo, written); hi = math.max(hi, written)
      i += 1
    }
    range.lo = lo
    range.hi = hi
  }

  /** Values `from until n` of `p` (each its word plus `p.reference`, or, with `entries`, the entry
    * its word names) in blocks of 1,024 through [[putLongs]]; leaves in `range` their range joined
    * with `[lo, hi]`. A word past `entries` fails the lookup's bounds check (a word of 2^31 or more
    * is negative as an Int). */
  private def putRest(
      p: PackedValues,
      from: Int,
      n: Int,
      entries: Array[Long],
      width: Int,
      stride: Int,
      address: Long,
      range: ValueRange,
      lo: Long,
      hi: Long
  ): Unit = {
    var low = lo
    var high = hi
    var i = from
    if (i < n) {
      val block = new Array[Long](math.min(n - i, 1024))
      while (i < n) {
        val k = math.min(n - i, block.length)
        BitPacking.unpack(p.array, p.offset, k, p.bits, p.reference, block, firstBit = i.toLong * p.bits)
        if (entries != null) { var j = 0; while (j < k) { block(j) = entries(block(j).toInt); j += 1 } }
        putLongs(block, k, width, stride, address + i.toLong * stride, range)
        low = math.min(low, range.lo); high = math.max(high, range.hi)
        i += k
      }
    }
    range.lo = low
    range.hi = high
  }

  /** As [[putLongs]] for the `n` values of a dictionary page, each looked up from its packed code
    * straight into the buffer, without the i64 arrays of codes and of values between. Returns false
    * when a code lies outside the dictionary: the page is damaged (the values written are then
    * garbage, and the caller fails the read). */
  def putDictionary(d: DictionaryCodes, n: Int, width: Int, stride: Int, address: Long, range: ValueRange): Boolean = {
    val p = d.codes
    val bits = p.bits
    val bytes = BitPacking.packedBytes(n, bits)
    if (p.offset < 0 || p.offset + bytes > p.array.length)
      throw new IllegalArgumentException(s"$n packed codes pass the end of their array")
    val fused = stride == 16 || (stride == width && (width == 4 || width == 8))
    val groups =
      if (!fused || bits == 0 || !MemoryUtil.LITTLE_ENDIAN) 0 else BitPacking.groupsWithin(bytes, n, bits)
    val entries = d.entries
    try {
      var lo = Long.MaxValue
      var hi = Long.MinValue
      if (groups > 0) {
        dictionaryGroups(p.array, p.offset, groups, bits, entries, stride, address, range)
        lo = range.lo; hi = range.hi
      }
      putRest(p, groups * 8, n, entries, width, stride, address, range, lo, hi)
      true
    } catch { case _: ArrayIndexOutOfBoundsException => false }
  }

  /** `groups` groups of eight codes from byte `off`, each looked up in `entries` and written from
    * `address` (4- or 8-byte values, or 8-byte decimals widened to 16); leaves the values' range in
    * `values`. A code outside `entries` fails its bounds check. */
  private def dictionaryGroups(
      src: Array[Byte],
      off: Int,
      groups: Int,
      bits: Int,
      entries: Array[Long],
      stride: Int,
      address: Long,
      values: ValueRange
  ): Unit = {
    val mask = (1L << bits) - 1
    var lo = Long.MaxValue; var hi = Long.MinValue
    var at = off; var to = address; var g = 0
    stride match {
      case 4 =>
        while (g < groups) {
          var j = 0
          while (j < 8) {
            val x = entries(BitPacking.groupValue(src, at, j, bits, mask).toInt)
            MemoryUtil.putInt(to, x.toInt); lo = math.min(lo, x); hi = math.max(hi, x)
            to += 4; j += 1
          }
          at += bits; g += 1
        }
      case 8 =>
        while (g < groups) {
          var j = 0
          while (j < 8) {
            val x = entries(BitPacking.groupValue(src, at, j, bits, mask).toInt)
            MemoryUtil.putLong(to, x); lo = math.min(lo, x); hi = math.max(hi, x)
            to += 8; j += 1
          }
          at += bits; g += 1
        }
      case _ =>
        while (g < groups) {
          var j = 0
          while (j < 8) {
            val x = entries(BitPacking.groupValue(src, at, j, bits, mask).toInt)
            wide(to, x); lo = math.min(lo, x); hi = math.max(hi, x)
            to += 16; j += 1
          }
          at += bits; g += 1
        }
    }
    values.lo = lo; values.hi = hi
  }

  // The loops below unpack `groups` groups of eight values from byte `off`, write each plus `ref`
  // from `address`, and leave the smallest and largest code (not value) in `codes`. One loop per
  // output width, each group written out value by value: one loop testing the width, or a loop
  // over the eight values of a group, ran 1.2-1.5x slower. The range is one running minimum and
  // maximum, whose branches are almost never taken (a tree of comparisons between a group's codes
  // mispredicts half of them and ran 3x slower).

  private def packedInts(
      src: Array[Byte],
      off: Int,
      groups: Int,
      bits: Int,
      ref: Long,
      address: Long,
      codes: ValueRange
  ): Unit = {
    val mask = (1L << bits) - 1
    val r = ref.toInt
    var lo = Long.MaxValue; var hi = Long.MinValue
    var at = off; var to = address; var g = 0
    while (g < groups) {
      val c0 = BitPacking.groupValue(src, at, 0, bits, mask)
      val c1 = BitPacking.groupValue(src, at, 1, bits, mask)
      val c2 = BitPacking.groupValue(src, at, 2, bits, mask)
      val c3 = BitPacking.groupValue(src, at, 3, bits, mask)
      val c4 = BitPacking.groupValue(src, at, 4, bits, mask)
      val c5 = BitPacking.groupValue(src, at, 5, bits, mask)
      val c6 = BitPacking.groupValue(src, at, 6, bits, mask)
      val c7 = BitPacking.groupValue(src, at, 7, bits, mask)
      MemoryUtil.putInt(to, c0.toInt + r); MemoryUtil.putInt(to + 4, c1.toInt + r)
      MemoryUtil.putInt(to + 8, c2.toInt + r); MemoryUtil.putInt(to + 12, c3.toInt + r)
      MemoryUtil.putInt(to + 16, c4.toInt + r); MemoryUtil.putInt(to + 20, c5.toInt + r)
      MemoryUtil.putInt(to + 24, c6.toInt + r); MemoryUtil.putInt(to + 28, c7.toInt + r)
      lo = math.min(lo, c0); lo = math.min(lo, c1); lo = math.min(lo, c2); lo = math.min(lo, c3)
      lo = math.min(lo, c4); lo = math.min(lo, c5); lo = math.min(lo, c6); lo = math.min(lo, c7)
      hi = math.max(hi, c0); hi = math.max(hi, c1); hi = math.max(hi, c2); hi = math.max(hi, c3)
      hi = math.max(hi, c4); hi = math.max(hi, c5); hi = math.max(hi, c6); hi = math.max(hi, c7)
      at += bits; to += 32; g += 1
    }
    codes.lo = lo; codes.hi = hi
  }

  private def packedLongs(
      src: Array[Byte],
      off: Int,
      groups: Int,
      bits: Int,
      ref: Long,
      address: Long,
      codes: ValueRange
  ): Unit = {
    val mask = (1L << bits) - 1
    var lo = Long.MaxValue; var hi = Long.MinValue
    var at = off; var to = address; var g = 0
    while (g < groups) {
      val c0 = BitPacking.groupValue(src, at, 0, bits, mask)
      val c1 = BitPacking.groupValue(src, at, 1, bits, mask)
      val c2 = BitPacking.groupValue(src, at, 2, bits, mask)
      val c3 = BitPacking.groupValue(src, at, 3, bits, mask)
      val c4 = BitPacking.groupValue(src, at, 4, bits, mask)
      val c5 = BitPacking.groupValue(src, at, 5, bits, mask)
      val c6 = BitPacking.groupValue(src, at, 6, bits, mask)
      val c7 = BitPacking.groupValue(src, at, 7, bits, mask)
      MemoryUtil.putLong(to, c0 + ref); MemoryUtil.putLong(to + 8, c1 + ref)
      MemoryUtil.putLong(to + 16, c2 + ref); MemoryUtil.putLong(to + 24, c3 + ref)
      MemoryUtil.putLong(to + 32, c4 + ref); MemoryUtil.putLong(to + 40, c5 + ref)
      MemoryUtil.putLong(to + 48, c6 + ref); MemoryUtil.putLong(to + 56, c7 + ref)
      lo = math.min(lo, c0); lo = math.min(lo, c1); lo = math.min(lo, c2); lo = math.min(lo, c3)
      lo = math.min(lo, c4); lo = math.min(lo, c5); lo = math.min(lo, c6); lo = math.min(lo, c7)
      hi = math.max(hi, c0); hi = math.max(hi, c1); hi = math.max(hi, c2); hi = math.max(hi, c3)
      hi = math.max(hi, c4); hi = math.max(hi, c5); hi = math.max(hi, c6); hi = math.max(hi, c7)
      at += bits; to += 64; g += 1
    }
    codes.lo = lo; codes.hi = hi
  }

  /** 8-byte unscaled decimals widened to Arrow's 16 bytes, sign-extended. */
  private def packedDecimals(
      src: Array[Byte],
      off: Int,
      groups: Int,
      bits: Int,
      ref: Long,
      address: Long,
      codes: ValueRange
  ): Unit = {
    val mask = (1L << bits) - 1
    var lo = Long.MaxValue; var hi = Long.MinValue
    var at = off; var to = address; var g = 0
    while (g < groups) {
      val c0 = BitPacking.groupValue(src, at, 0, bits, mask)
      val c1 = BitPacking.groupValue(src, at, 1, bits, mask)
      val c2 = BitPacking.groupValue(src, at, 2, bits, mask)
      val c3 = BitPacking.groupValue(src, at, 3, bits, mask)
      val c4 = BitPacking.groupValue(src, at, 4, bits, mask)
      val c5 = BitPacking.groupValue(src, at, 5, bits, mask)
      val c6 = BitPacking.groupValue(src, at, 6, bits, mask)
      val c7 = BitPacking.groupValue(src, at, 7, bits, mask)
      wide(to, c0 + ref); wide(to + 16, c1 + ref); wide(to + 32, c2 + ref); wide(to + 48, c3 + ref)
      wide(to + 64, c4 + ref); wide(to + 80, c5 + ref); wide(to + 96, c6 + ref); wide(to + 112, c7 + ref)
      lo = math.min(lo, c0); lo = math.min(lo, c1); lo = math.min(lo, c2); lo = math.min(lo, c3)
      lo = math.min(lo, c4); lo = math.min(lo, c5); lo = math.min(lo, c6); lo = math.min(lo, c7)
      hi = math.max(hi, c0); hi = math.max(hi, c1); hi = math.max(hi, c2); hi = math.max(hi, c3)
      hi = math.max(hi, c4); hi = math.max(hi, c5); hi = math.max(hi, c6); hi = math.max(hi, c7)
      at += bits; to += 128; g += 1
    }
    codes.lo = lo; codes.hi = hi
  }

  @inline private def wide(at: Long, x: Long): Unit = { MemoryUtil.putLong(at, x); MemoryUtil.putLong(at + 8, x >> 63) }
}

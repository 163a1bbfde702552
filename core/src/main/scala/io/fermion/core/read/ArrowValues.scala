package io.fermion.core.read

import io.fermion.core.encoding.{BitPacking, DictionaryCodes, PackedDeltas, PackedValues, Runs}
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

  /** As [[putLongs]] for the `n` values of a DELTA or DELTA_FOR page, summed from `d.first` and its
    * packed differences straight into the buffer in the pass that unpacks them, without the i64
    * arrays of differences and of values between (two passes over the page more). 4- and 8-byte
    * values go through fused loops over groups of eight differences; the last differences, and
    * other widths, in blocks through [[putLongs]]. When no difference is negative and the sum
    * cannot pass the width's range (a sorted column's DELTA_FOR page), the values rise: their
    * range is the first and the last, and the loop does not look for it. A DELTA_HUFFMAN page's
    * differences, already out of their Huffman block, are summed by [[putSums]]. */
  def putDeltas(d: PackedDeltas, n: Int, width: Int, stride: Int, address: Long, range: ValueRange): Unit = {
    if (d.unpacked != null) return putSums(d.first, d.unpacked, n, width, stride, address, range)
    val p = d.deltas
    val bits = p.bits
    val m = math.max(0, n - 1) // differences
    val bytes = BitPacking.packedBytes(m, bits)
    if (p.offset < 0 || p.offset + bytes > p.array.length)
      throw new IllegalArgumentException(s"$m packed differences pass the end of their array")
    // A difference is its word zigzag-decoded ((z >>> 1) ^ -(z & 1)) or plus the FOR reference:
    // ((z >>> s) ^ -(z & s)) + ref is either, with s = 1, ref = 0 or s = 0.
    val s = if (d.zigzag) 1 else 0
    val ref = if (d.zigzag) 0L else p.reference
    val fused = n > 0 && bits <= 56 && MemoryUtil.LITTLE_ENDIAN && stride == width && (width == 8 || width == 4)
    if (fused && bits == 0) return putSteps(d.first, if (d.zigzag) 0L else ref, n, width, address, range)
    val groups = if (fused) BitPacking.groupsWithin(bytes, m, bits) else 0
    var lo = Long.MaxValue
    var hi = Long.MinValue
    var acc = d.first
    if (groups > 0) {
      val top = (1L << bits) - 1
      val rising = !d.zigzag && ref >= 0 && ref <= Long.MaxValue - top && risesWithin(d.first, m, ref + top, width)
      val ranged = if (rising) null else range
      if (width == 8) {
        MemoryUtil.putLong(address, acc)
        acc = deltaLongs(p.array, p.offset, groups, bits, s, ref, acc, address + 8, ranged)
      } else {
        MemoryUtil.putInt(address, acc.toInt)
        acc = deltaInts(p.array, p.offset, groups, bits, s, ref, acc, address + 4, ranged)
      }
      val first = if (width == 8) d.first else d.first.toInt.toLong
      val last = if (width == 8) acc else acc.toInt.toLong
      if (rising) { lo = first; hi = last }
      else { lo = math.min(first, range.lo); hi = math.max(first, range.hi) }
    }
    // The rest: values from `done` on (value 0 is `first`).
    val done = if (groups > 0) groups * 8 + 1 else 0
    if (done < n) {
      // Its own sum: a variable the block function captures lives on the heap, where the loops
      // above would have to load and store it for every value.
      var sum = acc
      var differences: Array[Long] = null
      putInBlocks(done, n, width, stride, address, range) { (block, from, k) =>
        if (differences == null) differences = new Array[Long](block.length)
        var j = 0
        if (from == 0) { block(0) = sum; j = 1 }
        // Difference `from + j - 1` gives value `from + j`.
        BitPacking.unpack(p.array, p.offset, k - j, bits, 0L, differences, firstBit = (from + j - 1).toLong * bits)
        var i = 0
        while (j < k) {
          val z = differences(i)
          sum += ((z >>> s) ^ -(z & s)) + ref
          block(j) = sum
          i += 1; j += 1
        }
      }
      lo = math.min(lo, range.lo); hi = math.max(hi, range.hi)
    }
    range.lo = lo
    range.hi = hi
  }

  /** Values `from until n` written from `address` (value `i` at `address + i * stride`) in blocks of
    * up to 1,024 through [[putLongs]]: `fill(block, i, k)` puts values `i until i + k` in
    * `block(0 until k)`, called for ascending `i`. Leaves in `range` the range of the values written
    * (empty when none are). The widths and strides the fused loops do not take. */
  private def putInBlocks(from: Int, n: Int, width: Int, stride: Int, address: Long, range: ValueRange)(
      fill: (Array[Long], Int, Int) => Unit
  ): Unit = {
    var lo = Long.MaxValue
    var hi = Long.MinValue
    if (from < n) {
      val block = new Array[Long](math.min(n - from, 1024))
      var i = from
      while (i < n) {
        val k = math.min(n - i, block.length)
        fill(block, i, k)
        putLongs(block, k, width, stride, address + i.toLong * stride, range)
        lo = math.min(lo, range.lo); hi = math.max(hi, range.hi)
        i += k
      }
    }
    range.lo = lo
    range.hi = hi
  }

  /** As [[putLongs]] for the `n` values of an RLE page's runs (checked to cover exactly `n`): 4- and
    * 8-byte values run by run, the range from the runs' values (as written) rather than from each
    * value; other widths expanded in blocks through [[putLongs]]. */
  def putRuns(r: Runs, n: Int, width: Int, stride: Int, address: Long, range: ValueRange): Unit = {
    var lo = Long.MaxValue
    var hi = Long.MinValue
    if (stride == width && (width == 8 || width == 4)) {
      var at = address
      var k = 0
      while (k < r.count) {
        val l = r.lengths(k).toInt
        val end = at + l.toLong * width
        if (width == 8) {
          val x = r.values(k)
          while (at < end) { MemoryUtil.putLong(at, x); at += 8 }
          lo = math.min(lo, x); hi = math.max(hi, x)
        } else {
          val x = r.values(k).toInt
          while (at < end) { MemoryUtil.putInt(at, x); at += 4 }
          lo = math.min(lo, x.toLong); hi = math.max(hi, x.toLong)
        }
        k += 1
      }
    } else {
      var k = 0
      var left = if (r.count > 0) r.lengths(0) else 0L
      putInBlocks(0, n, width, stride, address, range) { (block, _, m) =>
        var j = 0
        while (j < m) {
          while (left == 0) { k += 1; left = r.lengths(k) }
          block(j) = r.values(k); left -= 1; j += 1
        }
      }
      return
    }
    range.lo = lo
    range.hi = hi
  }

  /** As [[putLongs]] for the `n` values `first` plus the zigzag-decoded words `z(0 until n - 1)`
    * summed (wrapping), written in the pass that sums them: 4- and 8-byte values in one loop each,
    * other widths in blocks through [[putLongs]]. */
  private def putSums(
      first: Long,
      z: Array[Long],
      n: Int,
      width: Int,
      stride: Int,
      address: Long,
      range: ValueRange
  ): Unit = {
    if (n == 0) { range.lo = Long.MaxValue; range.hi = Long.MinValue; return }
    if (n - 1 > z.length) throw new IllegalArgumentException(s"${n - 1} differences, ${z.length} given")
    var acc = first
    var lo = Long.MaxValue
    var hi = Long.MinValue
    if (stride == width && width == 8) {
      MemoryUtil.putLong(address, acc); lo = acc; hi = acc
      var i = 1
      while (i < n) {
        val w = z(i - 1); acc += (w >>> 1) ^ -(w & 1)
        MemoryUtil.putLong(address + 8L * i, acc)
        lo = math.min(lo, acc); hi = math.max(hi, acc); i += 1
      }
    } else if (stride == width && width == 4) {
      val x0 = acc.toInt.toLong
      MemoryUtil.putInt(address, x0.toInt); lo = x0; hi = x0
      var i = 1
      while (i < n) {
        val w = z(i - 1); acc += (w >>> 1) ^ -(w & 1)
        val x = acc.toInt
        MemoryUtil.putInt(address + 4L * i, x)
        lo = math.min(lo, x.toLong); hi = math.max(hi, x.toLong); i += 1
      }
    } else {
      var sum = first // not `acc`: captured, it would live on the heap for the loops above too
      putInBlocks(0, n, width, stride, address, range) { (block, from, k) =>
        var j = 0
        while (j < k) {
          val i = from + j
          if (i > 0) { val w = z(i - 1); sum += (w >>> 1) ^ -(w & 1) }
          block(j) = sum; j += 1
        }
      }
      return
    }
    range.lo = lo
    range.hi = hi
  }

  /** The values of a page whose differences are all `step` (0 bits each), of 4 or 8 bytes: `first`,
    * `first + step`, ... (a row number, a constant), written without unpacking anything; ranged only
    * when they do not rise within the width's range. */
  private def putSteps(first: Long, step: Long, n: Int, width: Int, address: Long, range: ValueRange): Unit = {
    val rising = step >= 0 && risesWithin(first, n - 1, step, width)
    var lo = Long.MaxValue; var hi = Long.MinValue
    var acc = first
    var i = 0
    if (width == 8)
      while (i < n) {
        MemoryUtil.putLong(address + 8L * i, acc)
        if (!rising) { lo = math.min(lo, acc); hi = math.max(hi, acc) }
        acc += step; i += 1
      }
    else
      while (i < n) {
        val y = acc.toInt
        MemoryUtil.putInt(address + 4L * i, y)
        if (!rising) { lo = math.min(lo, y.toLong); hi = math.max(hi, y.toLong) }
        acc += step; i += 1
      }
    if (rising) { lo = first; hi = first + step * (n - 1) }
    range.lo = lo
    range.hi = hi
  }

  /** Whether `m` differences of 0 to `most` added to `first` stay within the signed range of
    * `width` bytes (a sum that wraps does not rise). */
  private def risesWithin(first: Long, m: Int, most: Long, width: Int): Boolean = {
    val (low, high) = if (width == 8) (Long.MinValue, Long.MaxValue) else (Int.MinValue.toLong, Int.MaxValue.toLong)
    first >= low && first <= high && (most == 0 || m.toLong <= (high - math.max(first, 0L)) / most)
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
    putInBlocks(from, n, width, stride, address, range) { (block, i, k) =>
      BitPacking.unpack(p.array, p.offset, k, p.bits, p.reference, block, firstBit = i.toLong * p.bits)
      if (entries != null) { var j = 0; while (j < k) { block(j) = entries(block(j).toInt); j += 1 } }
    }
    range.lo = math.min(lo, range.lo)
    range.hi = math.max(hi, range.hi)
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

  // The two loops below sum `groups` groups of eight differences (decoded as in `putDeltas`) onto
  // `acc`, write each value from `address` and return the last; with a `range`, they leave in it
  // the smallest and largest value written. One loop per output width, as for the packed loops
  // below (a loop testing the width ran slower there).

  private def deltaLongs(
      src: Array[Byte],
      off: Int,
      groups: Int,
      bits: Int,
      s: Int,
      ref: Long,
      first: Long,
      address: Long,
      range: ValueRange
  ): Long = {
    val mask = (1L << bits) - 1
    var acc = first
    var lo = Long.MaxValue; var hi = Long.MinValue
    var at = off; var to = address; var g = 0
    val ranged = range != null
    while (g < groups) {
      val z0 = BitPacking.groupValue(src, at, 0, bits, mask)
      val z1 = BitPacking.groupValue(src, at, 1, bits, mask)
      val z2 = BitPacking.groupValue(src, at, 2, bits, mask)
      val z3 = BitPacking.groupValue(src, at, 3, bits, mask)
      val z4 = BitPacking.groupValue(src, at, 4, bits, mask)
      val z5 = BitPacking.groupValue(src, at, 5, bits, mask)
      val z6 = BitPacking.groupValue(src, at, 6, bits, mask)
      val z7 = BitPacking.groupValue(src, at, 7, bits, mask)
      val v0 = acc + (((z0 >>> s) ^ -(z0 & s)) + ref)
      val v1 = v0 + (((z1 >>> s) ^ -(z1 & s)) + ref)
      val v2 = v1 + (((z2 >>> s) ^ -(z2 & s)) + ref)
      val v3 = v2 + (((z3 >>> s) ^ -(z3 & s)) + ref)
      val v4 = v3 + (((z4 >>> s) ^ -(z4 & s)) + ref)
      val v5 = v4 + (((z5 >>> s) ^ -(z5 & s)) + ref)
      val v6 = v5 + (((z6 >>> s) ^ -(z6 & s)) + ref)
      val v7 = v6 + (((z7 >>> s) ^ -(z7 & s)) + ref)
      MemoryUtil.putLong(to, v0); MemoryUtil.putLong(to + 8, v1)
      MemoryUtil.putLong(to + 16, v2); MemoryUtil.putLong(to + 24, v3)
      MemoryUtil.putLong(to + 32, v4); MemoryUtil.putLong(to + 40, v5)
      MemoryUtil.putLong(to + 48, v6); MemoryUtil.putLong(to + 56, v7)
      if (ranged) {
        lo = math.min(lo, v0); lo = math.min(lo, v1); lo = math.min(lo, v2); lo = math.min(lo, v3)
        lo = math.min(lo, v4); lo = math.min(lo, v5); lo = math.min(lo, v6); lo = math.min(lo, v7)
        hi = math.max(hi, v0); hi = math.max(hi, v1); hi = math.max(hi, v2); hi = math.max(hi, v3)
        hi = math.max(hi, v4); hi = math.max(hi, v5); hi = math.max(hi, v6); hi = math.max(hi, v7)
      }
      acc = v7
      at += bits; to += 64; g += 1
    }
    if (ranged) { range.lo = lo; range.hi = hi }
    acc
  }

  /** As `deltaLongs`, each value written as its low 4 bytes (and ranged as written). */
  private def deltaInts(
      src: Array[Byte],
      off: Int,
      groups: Int,
      bits: Int,
      s: Int,
      ref: Long,
      first: Long,
      address: Long,
      range: ValueRange
  ): Long = {
    val mask = (1L << bits) - 1
    var acc = first
    var lo = Long.MaxValue; var hi = Long.MinValue
    var at = off; var to = address; var g = 0
    val ranged = range != null
    while (g < groups) {
      val z0 = BitPacking.groupValue(src, at, 0, bits, mask)
      val z1 = BitPacking.groupValue(src, at, 1, bits, mask)
      val z2 = BitPacking.groupValue(src, at, 2, bits, mask)
      val z3 = BitPacking.groupValue(src, at, 3, bits, mask)
      val z4 = BitPacking.groupValue(src, at, 4, bits, mask)
      val z5 = BitPacking.groupValue(src, at, 5, bits, mask)
      val z6 = BitPacking.groupValue(src, at, 6, bits, mask)
      val z7 = BitPacking.groupValue(src, at, 7, bits, mask)
      val v0 = acc + (((z0 >>> s) ^ -(z0 & s)) + ref)
      val v1 = v0 + (((z1 >>> s) ^ -(z1 & s)) + ref)
      val v2 = v1 + (((z2 >>> s) ^ -(z2 & s)) + ref)
      val v3 = v2 + (((z3 >>> s) ^ -(z3 & s)) + ref)
      val v4 = v3 + (((z4 >>> s) ^ -(z4 & s)) + ref)
      val v5 = v4 + (((z5 >>> s) ^ -(z5 & s)) + ref)
      val v6 = v5 + (((z6 >>> s) ^ -(z6 & s)) + ref)
      val v7 = v6 + (((z7 >>> s) ^ -(z7 & s)) + ref)
      val y0 = v0.toInt; val y1 = v1.toInt; val y2 = v2.toInt; val y3 = v3.toInt
      val y4 = v4.toInt; val y5 = v5.toInt; val y6 = v6.toInt; val y7 = v7.toInt
      MemoryUtil.putInt(to, y0); MemoryUtil.putInt(to + 4, y1)
      MemoryUtil.putInt(to + 8, y2); MemoryUtil.putInt(to + 12, y3)
      MemoryUtil.putInt(to + 16, y4); MemoryUtil.putInt(to + 20, y5)
      MemoryUtil.putInt(to + 24, y6); MemoryUtil.putInt(to + 28, y7)
      if (ranged) {
        lo = math.min(lo, y0.toLong); lo = math.min(lo, y1.toLong); lo = math.min(lo, y2.toLong)
        lo = math.min(lo, y3.toLong); lo = math.min(lo, y4.toLong); lo = math.min(lo, y5.toLong)
        lo = math.min(lo, y6.toLong); lo = math.min(lo, y7.toLong)
        hi = math.max(hi, y0.toLong); hi = math.max(hi, y1.toLong); hi = math.max(hi, y2.toLong)
        hi = math.max(hi, y3.toLong); hi = math.max(hi, y4.toLong); hi = math.max(hi, y5.toLong)
        hi = math.max(hi, y6.toLong); hi = math.max(hi, y7.toLong)
      }
      acc = v7
      at += bits; to += 32; g += 1
    }
    if (ranged) { range.lo = lo; range.hi = hi }
    acc
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

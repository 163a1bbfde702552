package io.fermion.core.encoding

import java.nio.{ByteBuffer, ByteOrder}

import io.fermion.core.bytes.GrowableBytes
import org.apache.arrow.memory.util.MemoryUtil

/** Packs unsigned integers of `width` bits (0 to 64) LSB-first into little-endian 64-bit words:
  * value i occupies bits [i * width, (i + 1) * width) of the word stream. A packed run of n values
  * always takes `wordsFor(n, width) * 8` bytes, so a reader never reads past its words. */
private[core] object BitPacking {

  /** Value j (0 to 7) of a group of eight `width`-bit values starting on a byte, at byte `at` of
    * `src`: at byte `(j * width) >>> 3`, bit `(j * width) & 7` of the group, the same in every group.
    * Read unchecked, as a native-order long: the caller has checked that the load lies within the
    * array and that the machine is little-endian (a bounds check per load cost a tenth of the time). */
  @inline private[core] def groupValue(src: Array[Byte], at: Int, j: Int, width: Int, mask: Long): Long =
    (MemoryUtil.getLong(src, at + ((j * width) >>> 3)) >>> ((j * width) & 7)) & mask

  /** How many whole groups of eight of `n` values of `width` bits (1 to 56), from the start of
    * `bytes` bytes of words, [[groupValue]] can read without a load passing their end: group g's
    * last load is 8 bytes at byte `g * width + (7 * width) / 8`. */
  private[core] def groupsWithin(bytes: Long, n: Int, width: Int): Int = {
    val room = bytes - 8 - ((7 * width) >>> 3)
    if (room < 0) 0 else math.min((n >>> 3).toLong, room / width + 1).toInt
  }

  def bitWidth(unsignedMax: Long): Int = 64 - java.lang.Long.numberOfLeadingZeros(unsignedMax)

  def wordsFor(n: Int, width: Int): Int = ((n.toLong * width + 63) >>> 6).toInt

  def packedBytes(n: Int, width: Int): Long = wordsFor(n, width).toLong * 8

  /** Appends `values(i) - reference` (wrapping) for i < n, each in `width` bits. */
  def pack(values: Array[Long], n: Int, reference: Long, width: Int, out: GrowableBytes): Unit = {
    val words = wordsFor(n, width)
    if (words == 0) return
    val at = out.extend(words * 8)
    val buf = ByteBuffer.wrap(out.array, at, words * 8).order(ByteOrder.LITTLE_ENDIAN)
    var acc = 0L
    var used = 0
    var i = 0
    while (i < n) {
      val v = values(i) - reference
      acc |= v << used
      used += width
      if (used >= 64) {
        buf.putLong(acc)
        used -= 64
        acc = if (used == 0) 0L else v >>> (width - used)
      }
      i += 1
    }
    if (used > 0) buf.putLong(acc)
  }

  /** Unpacks n values of `width` bits, the first at bit `firstBit`, from packed words stored
    * little-endian in `src` from `off` (the words holding bits `[0, firstBit + n * width)`), into
    * `out(0 until n)`, adding `reference`. Values of up to 56 bits are read with one unaligned
    * 8-byte load each (a value then never spans two loads), without copying the words out first;
    * the last values, whose load would pass the words' end, and wider values go word by word. */
  def unpack(
      src: Array[Byte],
      off: Int,
      n: Int,
      width: Int,
      reference: Long,
      out: Array[Long],
      firstBit: Long = 0L
  ): Unit = {
    if (width == 0) { java.util.Arrays.fill(out, 0, n, reference); return }
    val bytes = ((firstBit + n.toLong * width + 63) >>> 6) * 8
    val b = ByteBuffer.wrap(src).order(ByteOrder.LITTLE_ENDIAN)
    var i = 0
    var bit = firstBit
    if (width <= 56 && bytes >= 8) {
      val mask = (1L << width) - 1
      // Eight values of `width` bits take `width` bytes: from a byte-aligned start, value j of each
      // group of eight sits at the same byte and shift in every group, so the eight loads of a group
      // do not wait on one another (about 1.4x the speed of the loop below on 20-bit values).
      // The group loop reads its words unchecked ([[groupValue]]), once they are known to lie
      // within the array.
      if ((firstBit & 7) == 0 && n >= 8 && MemoryUtil.LITTLE_ENDIAN && off >= 0 && off + bytes <= src.length) {
        val start = (firstBit >>> 3).toInt
        val groups = groupsWithin(bytes - start, n, width)
        var at = off + start
        var g = 0
        while (g < groups) {
          out(i) = groupValue(src, at, 0, width, mask) + reference
          out(i + 1) = groupValue(src, at, 1, width, mask) + reference
          out(i + 2) = groupValue(src, at, 2, width, mask) + reference
          out(i + 3) = groupValue(src, at, 3, width, mask) + reference
          out(i + 4) = groupValue(src, at, 4, width, mask) + reference
          out(i + 5) = groupValue(src, at, 5, width, mask) + reference
          out(i + 6) = groupValue(src, at, 6, width, mask) + reference
          out(i + 7) = groupValue(src, at, 7, width, mask) + reference
          at += width
          i += 8
          g += 1
        }
        bit = firstBit + i.toLong * width
      }
      // Value i's load starts at byte (firstBit + i * width) >>> 3 and must end within the words.
      val room = (bytes - 8) * 8 + 7 - firstBit
      val fast = if (room < 0) 0 else math.min(n.toLong, room / width + 1).toInt
      while (i < fast) {
        out(i) = ((b.getLong(off + (bit >>> 3).toInt) >>> (bit & 7).toInt) & mask) + reference
        bit += width
        i += 1
      }
    }
    val mask = if (width == 64) -1L else (1L << width) - 1
    while (i < n) {
      val w = (bit >>> 6).toInt
      val s = (bit & 63).toInt
      var v = b.getLong(off + 8 * w) >>> s
      if (s + width > 64) v |= b.getLong(off + 8 * (w + 1)) << (64 - s)
      out(i) = (v & mask) + reference
      bit += width
      i += 1
    }
  }
}

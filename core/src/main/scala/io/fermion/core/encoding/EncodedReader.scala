package io.fermion.core.encoding

import org.apache.arrow.memory.util.MemoryUtil

import java.nio.{ByteBuffer, ByteOrder}

/** A bounds-checked little-endian cursor over one encoded page body. Every read that would pass
  * the body's end raises [[MalformedPageException]], so a damaged page can never make a decoder
  * read another page's bytes or allocate more than the body can justify. */
final private[core] class EncodedReader(bytes: Array[Byte], off: Int, len: Int) {
  def array: Array[Byte] = bytes
  private val buf =
    ByteBuffer.wrap(bytes, off, len).order(ByteOrder.LITTLE_ENDIAN).slice().order(ByteOrder.LITTLE_ENDIAN)

  def remaining: Int = buf.remaining()
  private def need(n: Long, what: String): Unit =
    if (n > buf.remaining() || n < 0)
      throw new MalformedPageException(s"$what needs $n bytes, the page body has ${buf.remaining()} left")

  def u8(what: String): Int = { need(1, what); buf.get() & 0xff }
  def u32(what: String): Int = {
    need(4, what)
    val v = buf.getInt()
    if (v < 0) throw new MalformedPageException(s"$what is negative ($v)")
    v
  }
  def i64(what: String): Long = { need(8, what); buf.getLong() }

  /** A signed value of `width` bytes (1, 2, 4 or 8), sign-extended. */
  def signed(width: Int, what: String): Long = {
    need(width, what)
    width match {
      case 1 => buf.get().toLong
      case 2 => buf.getShort().toLong
      case 4 => buf.getInt().toLong
      case _ => buf.getLong()
    }
  }

  /** Copies `n` bytes into `dst` at `dstOff`. */
  def bytesInto(dst: Array[Byte], dstOff: Int, n: Int, what: String): Unit = { need(n, what); buf.get(dst, dstOff, n) }

  /** The position of the next byte within the original array (for bulk copies by the caller). */
  def arrayPosition: Int = off + buf.position()
  def skip(n: Int, what: String): Unit = { need(n, what); buf.position(buf.position() + n) }

  /** A FOR block of `n` values: i64 reference, u8 bit width, packed words. */
  def forBlock(n: Int, out: Array[Long], what: String): Unit = {
    val (reference, width) = forHeader(what)
    packed(n, width, reference, out, what)
  }

  /** A FOR block's reference and bit width (at most 64), up to its packed words. */
  def forHeader(what: String): (Long, Int) = {
    val reference = i64(what)
    val width = u8(what)
    if (width > 64) throw new MalformedPageException(s"$what has bit width $width")
    (reference, width)
  }

  /** `n` values packed in `width` bits, plus `reference`, left packed (see [[PackedValues]]). */
  def packedAsIs(n: Int, width: Int, reference: Long, into: PackedValues, what: String): Unit = {
    val packed = BitPacking.packedBytes(n, width)
    need(packed, what)
    into.array = bytes; into.offset = arrayPosition; into.bits = width; into.reference = reference
    buf.position(buf.position() + packed.toInt)
  }

  /** `n` values packed in `width` bits, plus `reference`. */
  def packed(n: Int, width: Int, reference: Long, out: Array[Long], what: String): Unit = {
    val packed = BitPacking.packedBytes(n, width)
    need(packed, what)
    BitPacking.unpack(bytes, arrayPosition, n, width, reference, out)
    buf.position(buf.position() + packed.toInt)
  }
}

/** Values of a BITPACK or FOR page still packed: `bits`-bit words little-endian from byte
  * `offset` of `array` (all `BitPacking.packedBytes(n, bits)` of them within the array), each value
  * its word plus `reference`. */
final private[core] class PackedValues {
  var array: Array[Byte] = null
  var offset: Int = 0
  var bits: Int = 0
  var reference: Long = 0L
}

/** The runs of an RLE page: run `k` is `lengths(k)` (at least 1) copies of `values(k)`, for `k`
  * below `count`; the lengths add up to the page's values. */
final private[core] class Runs {
  var values: Array[Long] = null
  var lengths: Array[Long] = null
  var count: Int = 0
}

/** The values of a DELTA or DELTA_FOR page whose differences are still packed: value 0 is `first`,
  * value i + 1 is value i plus difference i (wrapping), the `n - 1` differences `deltas.bits`-bit
  * words as in [[PackedValues]] — zigzag-encoded (reference 0) when `zigzag`, else each its word
  * plus `deltas.reference` (a FOR block). A DELTA_HUFFMAN page's differences come decoded from
  * their Huffman block instead, zigzag words in `unpacked(0 until n - 1)` (`deltas` unused), so
  * that the caller sums them into their destination in one pass too; null otherwise. */
final private[core] class PackedDeltas {
  var first: Long = 0L
  var zigzag: Boolean = false
  val deltas = new PackedValues
  var unpacked: Array[Long] = null
}

/** The values of a dictionary page of fixed-width values whose codes are bit-packed, not yet looked
  * up: value `i` is `entries(code i)`, the codes `codes.bits`-bit words (reference 0) as in
  * [[PackedValues]]. `entries` has exactly the dictionary's entries, so a code outside it fails the
  * lookup's bounds check; the caller turns that into an error of the page. */
final private[core] class DictionaryCodes {
  var entries: Array[Long] = null
  val codes = new PackedValues
}

/** The values of a dictionary page of variable-width values, not yet concatenated: entry `e`
  * holds `lens(e)` bytes of `dict` from `starts(e)`, value `i` is entry `codes(i)` (all checked
  * by the decoder). Entries of up to 16 bytes, the usual dictionary of short values, are written as
  * two 8-byte words each, entries of 17 to 32 bytes as four, read once per entry: a value's words
  * spill past its end into the next value's place, which the next value overwrites, so a
  * destination holds [[DictionaryEntries.Spill]] bytes more than the values. A copy call per value
  * costs several times more for values this short (TPC-H's 17-byte `DELIVER IN PERSON`: a fifth of
  * Q19's scan went to copying them and checking the copies' offsets). */
final private[core] class DictionaryEntries {
  private var dict: Array[Byte] = null
  private var starts: Array[Int] = null
  private var lens: Array[Long] = null
  private var codes: Array[Long] = null
  private var low: Array[Long] = null
  private var high: Array[Long] = null
  private var third: Array[Long] = null
  private var fourth: Array[Long] = null
  private var count = 0

  def set(
      dict: Array[Byte],
      starts: Array[Int],
      lens: Array[Long],
      codes: Array[Long],
      count: Int,
      scratch: LongScratch
  ): Unit = {
    this.dict = dict; this.starts = starts; this.lens = lens; this.codes = codes; this.count = count
    val d = starts.length
    low = scratch.third(d)
    high = scratch.fourth(d)
    third = scratch.fifth(d)
    fourth = scratch.sixth(d)
    var e = 0
    while (e < d) {
      val l = lens(e).toInt
      if (l <= 32) {
        low(e) = word(starts(e), l); high(e) = word(starts(e) + 8, l - 8)
        third(e) = word(starts(e) + 16, l - 16); fourth(e) = word(starts(e) + 24, l - 24)
      }
      e += 1
    }
  }

  /** The `n` bytes (at most 8 of them; none when `n` < 1) of `dict` from `at`, as a little-endian
    * word, zero above. */
  private def word(at: Int, n: Int): Long = {
    var x = 0L
    var k = math.min(n, 8) - 1
    while (k >= 0) { x = (x << 8) | (dict(at + k) & 0xffL); k -= 1 }
    x
  }

  /** Writes the values from index 0 of `out` (a little-endian heap buffer with room for them plus
    * the spill); returns their bytes. */
  def copyTo(out: java.nio.ByteBuffer): Int = {
    var at = 0
    var i = 0
    while (i < count) {
      val c = codes(i).toInt
      val l = lens(c).toInt
      if (l <= 16) { out.putLong(at, low(c)); out.putLong(at + 8, high(c)) }
      else if (l <= 32) {
        out.putLong(at, low(c)); out.putLong(at + 8, high(c))
        out.putLong(at + 16, third(c)); out.putLong(at + 24, fourth(c))
      } else System.arraycopy(dict, starts(c), out.array(), at, l)
      at += l
      i += 1
    }
    at
  }

  /** Writes the values to memory from `address`, which must have room for them plus the spill;
    * returns their bytes. */
  def copyTo(address: Long): Int = {
    var at = 0
    var i = 0
    while (i < count) {
      val c = codes(i).toInt
      val l = lens(c).toInt
      if (l <= 16) { MemoryUtil.putLong(address + at, low(c)); MemoryUtil.putLong(address + at + 8, high(c)) }
      else if (l <= 32) {
        val to = address + at
        MemoryUtil.putLong(to, low(c)); MemoryUtil.putLong(to + 8, high(c))
        MemoryUtil.putLong(to + 16, third(c)); MemoryUtil.putLong(to + 24, fourth(c))
      } else MemoryUtil.copyToMemory(dict, starts(c).toLong, address + at, l.toLong)
      at += l
      i += 1
    }
    at
  }
}

private[core] object DictionaryEntries {

  /** Bytes a destination holds past the values' end. */
  val Spill = 16
}

/** Reusable long arrays for one decoder (unpacked values). */
final private[core] class LongScratch {
  private var a = new Array[Long](0)
  private var b = new Array[Long](0)
  def values(n: Int): Array[Long] = { if (a.length < n) a = new Array[Long](math.max(n, a.length * 2)); a }
  def second(n: Int): Array[Long] = { if (b.length < n) b = new Array[Long](math.max(n, b.length * 2)); b }
  private var c = new Array[Long](0)
  private var d = new Array[Long](0)
  def third(n: Int): Array[Long] = { if (c.length < n) c = new Array[Long](math.max(n, c.length * 2)); c }
  def fourth(n: Int): Array[Long] = { if (d.length < n) d = new Array[Long](math.max(n, d.length * 2)); d }
  private var e = new Array[Long](0)
  private var f = new Array[Long](0)
  def fifth(n: Int): Array[Long] = { if (e.length < n) e = new Array[Long](math.max(n, e.length * 2)); e }
  def sixth(n: Int): Array[Long] = { if (f.length < n) f = new Array[Long](math.max(n, f.length * 2)); f }
}

/** An encoded page body that does not decode; callers turn it into InvalidFermionFileException
  * with the file and offset. */
final private[core] class MalformedPageException(message: String) extends RuntimeException(message)

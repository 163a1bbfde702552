package io.fermion.core.encoding

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

/** Reusable long arrays for one decoder (unpacked values). */
final private[core] class LongScratch {
  private var a = new Array[Long](0)
  private var b = new Array[Long](0)
  def values(n: Int): Array[Long] = { if (a.length < n) a = new Array[Long](math.max(n, a.length * 2)); a }
  def second(n: Int): Array[Long] = { if (b.length < n) b = new Array[Long](math.max(n, b.length * 2)); b }
}

/** An encoded page body that does not decode; callers turn it into InvalidFermionFileException
  * with the file and offset. */
final private[core] class MalformedPageException(message: String) extends RuntimeException(message)

package io.fermion.core.codec

import java.nio.{ByteBuffer, ByteOrder}
import java.util.zip.CRC32

import io.fermion.core.bytes.GrowableBytes

/** The payload of a `zstd-blocks` page (docs/format.md 5.6): the body cut into blocks of
  * `blockSize` bytes (the last one shorter), each compressed on its own, behind a table of their
  * stored sizes and CRC-32s:
  * {{{
  * u32 blockSize  u32 blockCount  blockCount x (u32 storedSize, u32 crc32)  blocks...
  * }}}
  * A block whose stored size equals its raw size is stored raw, otherwise it is one zstd frame. A
  * reader that needs a few values of a large page decompresses (and checks) only their blocks.
  * The same layout with codec `zstd-primed-blocks` (1.6) compresses every block after the first
  * with the first block's raw bytes as a raw-content dictionary (its "prime"): a block then
  * decompresses with block 0 decoded first. */
private[core] object ZstdBlocks {

  /** Bytes in front of the table's entries. */
  val Preamble: Int = 8

  /** The table's bytes for `blocks` blocks. */
  def tableBytes(blocks: Int): Int = Preamble + 8 * blocks

  /** A parsed block table: block `i` holds body bytes `[i * blockSize, min((i + 1) * blockSize,
    * bodyLength))` and is stored at payload bytes `[starts(i), starts(i + 1))`. */
  final case class Table(blockSize: Int, bodyLength: Int, starts: Array[Int], crcs: Array[Int], primed: Boolean) {
    def blocks: Int = crcs.length
    def rawSize(i: Int): Int = math.min(blockSize.toLong, bodyLength.toLong - i.toLong * blockSize).toInt
    def storedSize(i: Int): Int = starts(i + 1) - starts(i)
    def blockOf(bodyOffset: Long): Int = (bodyOffset / blockSize).toInt

    /** Whether block `i` decompresses only with block 0's raw bytes at hand. */
    def needsPrime(i: Int): Boolean = primed && i > 0 && storedSize(i) != rawSize(i)
  }

  /** Compresses `src(off until off + len)` in blocks of `blockSize` into `out` (cleared first);
    * a block is kept compressed only when that saves 1/8 of it. With `primed`, blocks after the first
    * are primed with it when there are several, it may serve as a prime and it makes block 1
    * smaller. Returns the codec: `zstd-primed-blocks` or `zstd-blocks`. */
  def compress(
      src: Array[Byte],
      off: Int,
      len: Int,
      blockSize: Int,
      level: Int,
      primed: Boolean,
      checksums: Boolean,
      out: GrowableBytes
  ): Int = {
    val n = ((len.toLong + blockSize - 1) / blockSize).toInt
    val crc = new CRC32
    def rawSize(i: Int) = math.min(blockSize, len - i * blockSize)
    def alone(i: Int) = PageCodec.compress(PageCodec.Zstd, src, off + i * blockSize, rawSize(i), level)
    var primer =
      if (primed && n > 1 && !PageCodec.startsWithDictionaryMagic(src, off, blockSize))
        new PageCodec.PrimedCompressor(src, off, blockSize, level)
      else null
    var second: Array[Byte] = null
    val blocks =
      try {
        // A prime does not help every page (values whose repeats lie within a block pay longer match
        // offsets): block 1, compressed both ways, decides for the page.
        if (primer != null) {
          val withPrime = primer.compress(src, off + blockSize, rawSize(1))
          second = alone(1)
          if (withPrime.length < second.length) second = withPrime
          else { primer.close(); primer = null }
        }
        (0 until n).map { i =>
          val c =
            if (i == 1 && second != null) second
            else if (i > 0 && primer != null) primer.compress(src, off + i * blockSize, rawSize(i))
            else alone(i)
          if (c.length.toLong * 8 <= rawSize(i).toLong * 7) (c, 0, c.length) else (src, off + i * blockSize, rawSize(i))
        }
      } finally if (primer != null) primer.close()
    out.clear()
    out.putInt(blockSize)
    out.putInt(n)
    blocks.foreach { case (b, o, l) =>
      out.putInt(l)
      out.putInt(if (checksums) { crc.reset(); crc.update(b, o, l); crc.getValue.toInt }
      else 0)
    }
    blocks.foreach { case (b, o, l) => out.putBytes(b, o, l) }
    if (primer != null) PageCodec.ZstdPrimedBlocks else PageCodec.ZstdBlocks
  }

  /** The table at the start of a payload of `storedLength` bytes (of which `available` are at
    * hand from `at`) for a body of `bodyLength` bytes; Left(reason) if it is not a valid table,
    * Right(None) if it extends past the bytes at hand. */
  def parseTable(
      b: ByteBuffer,
      at: Int,
      available: Int,
      storedLength: Int,
      bodyLength: Int,
      primed: Boolean
  ): Either[String, Option[Table]] = {
    val o = b.duplicate().order(ByteOrder.LITTLE_ENDIAN)
    if (storedLength < Preamble || available < Preamble)
      return if (storedLength < Preamble) Left(s"zstd-blocks payload of $storedLength bytes has no block table")
      else Right(scala.None)
    val blockSize = o.getInt(at)
    val n = o.getInt(at + 4)
    if (blockSize <= 0) return Left(s"zstd-blocks block size $blockSize is not positive")
    val expected = (bodyLength.toLong + blockSize - 1) / blockSize
    if (bodyLength <= 0 || n != expected)
      return Left(s"zstd-blocks table has $n blocks of $blockSize bytes for a body of $bodyLength bytes")
    if (tableBytes(n).toLong > storedLength)
      return Left(s"zstd-blocks table of $n blocks runs past the page's $storedLength bytes")
    if (tableBytes(n) > available) return Right(scala.None)
    val starts = new Array[Int](n + 1)
    val crcs = new Array[Int](n)
    starts(0) = tableBytes(n)
    var i = 0
    while (i < n) {
      val size = o.getInt(at + Preamble + 8 * i).toLong & 0xffffffffL
      crcs(i) = o.getInt(at + Preamble + 8 * i + 4)
      if (size == 0 || starts(i) + size > storedLength)
        return Left(s"zstd-blocks block $i of $size bytes does not fit the page's $storedLength bytes")
      starts(i + 1) = (starts(i) + size).toInt
      i += 1
    }
    if (starts(n) != storedLength)
      return Left(s"zstd-blocks blocks end at byte ${starts(n)} of a ${storedLength}-byte payload")
    Right(Some(Table(blockSize, bodyLength, starts, crcs, primed)))
  }

  /** Block `i`, stored at `src(off until off + table.storedSize(i))`, into `dst(dstOff until
    * dstOff + table.rawSize(i))`; false if it does not decompress to exactly that size. `prime`
    * decompresses the block when `table.needsPrime(i)` (see [[prime]]). */
  def decodeBlock(
      table: Table,
      i: Int,
      src: Array[Byte],
      off: Int,
      dst: Array[Byte],
      dstOff: Int,
      prime: => PageCodec.PrimedDecompressor
  ): Boolean = {
    val raw = table.rawSize(i)
    val stored = table.storedSize(i)
    // The output is already allocated at the raw size (no frame header to check first), and a frame
    // of any other content size fails to decompress into exactly it.
    if (stored == raw) { System.arraycopy(src, off, dst, dstOff, raw); true }
    else if (table.needsPrime(i)) prime.decompress(src, off, stored, dst, dstOff, raw)
    else PageCodec.decompress(PageCodec.Zstd, src, off, stored, dst, raw, dstOff)
  }

  /** The decompressor of a primed table's blocks from block 0's decoded bytes `block0(off until
    * off + table.rawSize(0))`; Left(reason) when they begin with zstd's dictionary magic, which
    * format 1.6 forbids there. The caller closes it. */
  def prime(table: Table, block0: Array[Byte], off: Int): Either[String, PageCodec.PrimedDecompressor] =
    if (PageCodec.startsWithDictionaryMagic(block0, off, table.rawSize(0)))
      Left("zstd-primed-blocks page whose first block starts with the zstd dictionary magic")
    else Right(new PageCodec.PrimedDecompressor(block0, off, table.rawSize(0)))

  /** The CRC-32 of block `i`'s stored bytes at `src(off)` (to compare with `table.crcs(i)`). */
  def checksum(table: Table, i: Int, src: Array[Byte], off: Int): Int = {
    val crc = new CRC32
    crc.update(src, off, table.storedSize(i))
    crc.getValue.toInt
  }
}

package io.fermion.core.bloom

import java.nio.{ByteBuffer, ByteOrder}

/** A split-block bloom filter (as Parquet's): 32-byte blocks of eight u32 words; a hash picks a
  * block with its high 32 bits and sets one bit in each word from its low 32 bits times eight
  * salts. One cache line per lookup, no false negatives. */
final private[core] class SplitBlockBloomFilter private (val words: Array[Int]) {
  private val blocks = words.length / 8

  def numBytes: Int = words.length * 4

  private def block(hash: Long): Int = (((hash >>> 32) * blocks) >>> 32).toInt

  def insert(hash: Long): Unit = {
    val b = block(hash) * 8
    val key = hash.toInt
    var i = 0
    while (i < 8) { words(b + i) |= 1 << ((key * SplitBlockBloomFilter.Salt(i)) >>> 27); i += 1 }
  }

  def mightContain(hash: Long): Boolean = {
    val b = block(hash) * 8
    val key = hash.toInt
    var i = 0
    while (i < 8) {
      if ((words(b + i) & (1 << ((key * SplitBlockBloomFilter.Salt(i)) >>> 27))) == 0) return false
      i += 1
    }
    true
  }

  def toBytes: Array[Byte] = {
    val out = ByteBuffer.allocate(numBytes).order(ByteOrder.LITTLE_ENDIAN)
    out.asIntBuffer().put(words)
    out.array()
  }
}

private[core] object SplitBlockBloomFilter {
  private val Salt =
    Array(0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31)
  val MinBytes = 32
  val MaxBytes: Int = 16 << 20

  /** Sized for `distinct` values at false-positive rate `fpp`: whole 32-byte blocks (blocks are
    * picked by multiply-shift, so any count works; rounding to a power of two would cost up to
    * twice the bytes every point lookup reads). */
  def forValues(distinct: Long, fpp: Double): SplitBlockBloomFilter = {
    require(fpp > 0 && fpp < 1, s"bloom filter false-positive rate must be in (0, 1), got $fpp")
    val bits = -8.0 * math.max(1L, distinct) / math.log(1 - math.pow(fpp, 1.0 / 8))
    val blocks = math.min(MaxBytes / 32L, math.max(1L, math.ceil(bits / 256.0).toLong)).toInt
    new SplitBlockBloomFilter(new Array[Int](blocks * 8))
  }

  /** A filter from its bytes (a whole number of 32-byte blocks). */
  def fromBytes(b: Array[Byte], off: Int, len: Int): SplitBlockBloomFilter = {
    require(len >= MinBytes && len % 32 == 0, s"bloom filter of $len bytes")
    val words = new Array[Int](len / 4)
    ByteBuffer.wrap(b, off, len).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(words)
    new SplitBlockBloomFilter(words)
  }
}

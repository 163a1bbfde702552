package io.fermion.core.bloom

/** XXH64 (seed 0), the hash of Fermion's bloom filters (docs/format.md, "Bloom filters"); the same
  * function Parquet's split-block bloom filters use. */
private[core] object XxHash64 {
  private val P1 = 0x9e3779b185ebca87L
  private val P2 = 0xc2b2ae3d27d4eb4fL
  private val P3 = 0x165667b19e3779f9L
  private val P4 = 0x85ebca77c2b2ae63L
  private val P5 = 0x27d4eb2f165667c5L

  private def long(b: Array[Byte], i: Int): Long =
    (b(i) & 0xffL) | (b(i + 1) & 0xffL) << 8 | (b(i + 2) & 0xffL) << 16 | (b(i + 3) & 0xffL) << 24 |
      (b(i + 4) & 0xffL) << 32 | (b(i + 5) & 0xffL) << 40 | (b(i + 6) & 0xffL) << 48 | (b(i + 7) & 0xffL) << 56
  private def int(b: Array[Byte], i: Int): Long =
    (b(i) & 0xffL) | (b(i + 1) & 0xffL) << 8 | (b(i + 2) & 0xffL) << 16 | (b(i + 3) & 0xffL) << 24
  private def round(acc: Long, input: Long): Long = java.lang.Long.rotateLeft(acc + input * P2, 31) * P1
  private def merge(acc: Long, v: Long): Long = (acc ^ round(0, v)) * P1 + P4

  def hash(b: Array[Byte], off: Int, len: Int): Long = {
    val end = off + len
    var i = off
    var h: Long =
      if (len >= 32) {
        var v1 = P1 + P2; var v2 = P2; var v3 = 0L; var v4 = -P1
        while (i + 32 <= end) {
          v1 = round(v1, long(b, i)); v2 = round(v2, long(b, i + 8)); v3 = round(v3, long(b, i + 16));
          v4 = round(v4, long(b, i + 24))
          i += 32
        }
        var acc = java.lang.Long.rotateLeft(v1, 1) + java.lang.Long.rotateLeft(v2, 7) + java.lang.Long.rotateLeft(
          v3,
          12
        ) + java.lang.Long.rotateLeft(v4, 18)
        acc = merge(acc, v1); acc = merge(acc, v2); acc = merge(acc, v3); acc = merge(acc, v4)
        acc
      } else P5
    h += len
    while (i + 8 <= end) { h ^= round(0, long(b, i)); h = java.lang.Long.rotateLeft(h, 27) * P1 + P4; i += 8 }
    if (i + 4 <= end) { h ^= int(b, i) * P1; h = java.lang.Long.rotateLeft(h, 23) * P2 + P3; i += 4 }
    while (i < end) { h ^= (b(i) & 0xffL) * P5; h = java.lang.Long.rotateLeft(h, 11) * P1; i += 1 }
    h ^= h >>> 33; h *= P2; h ^= h >>> 29; h *= P3; h ^= h >>> 32
    h
  }

  /** The hash of a long as its 8 little-endian bytes. */
  def hashLong(v: Long): Long = {
    var h = P5 + 8
    h ^= round(0, v)
    h = java.lang.Long.rotateLeft(h, 27) * P1 + P4
    h ^= h >>> 33; h *= P2; h ^= h >>> 29; h *= P3; h ^= h >>> 32
    h
  }
}

package io.fermion.core.bytes

import org.apache.arrow.memory.util.MemoryUtil

/** Byte strings in off-heap memory (an Arrow vector's data buffer) compared with heap arrays, as
  * Spark orders strings and binary: unsigned bytes, then length. */
private[core] object MemoryBytes {

  /** The sign of the `len` bytes at `at` minus `b`. */
  def compare(at: Long, len: Int, b: Array[Byte]): Int = {
    val n = math.min(len, b.length)
    var i = 0
    while (i < n) {
      val c = (MemoryUtil.getByte(at + i) & 0xff) - (b(i) & 0xff)
      if (c != 0) return c
      i += 1
    }
    len - b.length
  }
}

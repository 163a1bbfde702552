package io.fermion.core.bytes

/** A byte array that grows by doubling, with little-endian and bit-level appends. The writer's
  * stripe buffers are made of these; their sizes are what the stripe byte limit counts. */
final private[core] class GrowableBytes(initial: Int = 1024) {
  private var bytes = new Array[Byte](math.max(16, initial))
  private var len = 0

  def length: Int = len
  def array: Array[Byte] = bytes
  def capacity: Int = bytes.length
  def clear(): Unit = len = 0

  def ensure(extra: Int): Unit = {
    val need = len.toLong + extra
    if (need > bytes.length) {
      if (need > Int.MaxValue - 16)
        throw new IllegalStateException("a stripe buffer cannot exceed 2 GiB; lower stripeBytes")
      bytes = java.util.Arrays.copyOf(bytes, math.max(need, math.min(Int.MaxValue - 16L, bytes.length * 2L)).toInt)
    }
  }

  /** Extends the length by `n` zero bytes and returns the old length (where the caller writes). */
  def extend(n: Int): Int = {
    ensure(n)
    java.util.Arrays.fill(bytes, len, len + n, 0.toByte)
    val at = len
    len += n
    at
  }

  def putInt(v: Int): Unit = {
    ensure(4)
    bytes(len) = v.toByte; bytes(len + 1) = (v >>> 8).toByte; bytes(len + 2) = (v >>> 16).toByte;
    bytes(len + 3) = (v >>> 24).toByte
    len += 4
  }

  def putLong(v: Long): Unit = { putInt(v.toInt); putInt((v >>> 32).toInt) }

  def putByte(v: Int): Unit = { ensure(1); bytes(len) = v.toByte; len += 1 }

  def putBytes(src: Array[Byte], off: Int, n: Int): Unit = {
    ensure(n)
    System.arraycopy(src, off, bytes, len, n)
    len += n
  }
}

/** A bitmap that grows one bit at a time, LSB first within each byte (Arrow's order). */
final private[core] class GrowableBits {
  private val bytes = new GrowableBytes(256)
  private var bits = 0

  def size: Int = bits
  def array: Array[Byte] = bytes.array
  def byteLength: Int = (bits + 7) >>> 3
  def clear(): Unit = { bytes.clear(); bits = 0 }

  def append(bit: Boolean): Unit = {
    if ((bits & 7) == 0) bytes.extend(1)
    if (bit) bytes.array(bits >>> 3) = (bytes.array(bits >>> 3) | (1 << (bits & 7))).toByte
    bits += 1
  }
}

private[core] object Bits {
  def get(bytes: Array[Byte], i: Int): Boolean = (bytes(i >>> 3) & (1 << (i & 7))) != 0
}

package io.fermion.core.encoding

import java.nio.{ByteBuffer, ByteOrder}

import io.fermion.core.bytes.GrowableBytes

/** Conversions between PLAIN little-endian integers of 1, 2, 4 or 8 bytes and longs. */
private[core] object PlainValues {

  /** Reads `n` values, sign-extended, into `out`. */
  def readSigned(src: Array[Byte], off: Int, n: Int, width: Int, out: Array[Long]): Unit = {
    val b = ByteBuffer.wrap(src).order(ByteOrder.LITTLE_ENDIAN)
    var i = 0
    width match {
      case 1 => while (i < n) { out(i) = src(off + i).toLong; i += 1 }
      case 2 => while (i < n) { out(i) = b.getShort(off + i * 2).toLong; i += 1 }
      case 4 => while (i < n) { out(i) = b.getInt(off + i * 4).toLong; i += 1 }
      case 8 => while (i < n) { out(i) = b.getLong(off + i * 8); i += 1 }
      case w => throw new IllegalArgumentException(s"no integer view of $w-byte values")
    }
  }

  /** Writes `values(0 until n)` truncated to `width` bytes into `dst` from `off`. */
  def writeAll(values: Array[Long], n: Int, width: Int, dst: Array[Byte], off: Int): Unit = {
    val b = ByteBuffer.wrap(dst).order(ByteOrder.LITTLE_ENDIAN)
    var i = 0
    width match {
      case 1 => while (i < n) { dst(off + i) = values(i).toByte; i += 1 }
      case 2 => while (i < n) { b.putShort(off + i * 2, values(i).toShort); i += 1 }
      case 4 => while (i < n) { b.putInt(off + i * 4, values(i).toInt); i += 1 }
      case _ => while (i < n) { b.putLong(off + i * 8, values(i)); i += 1 }
    }
  }

  def writeSigned(out: GrowableBytes, v: Long, width: Int): Unit = width match {
    case 1 => out.putByte(v.toInt)
    case 2 => out.putByte(v.toInt); out.putByte((v >>> 8).toInt)
    case 4 => out.putInt(v.toInt)
    case _ => out.putLong(v)
  }
}

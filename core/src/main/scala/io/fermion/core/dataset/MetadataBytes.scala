package io.fermion.core.dataset

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets
import java.util.zip.CRC32

import io.fermion.core.bytes.GrowableBytes

/** Little-endian writer of the dataset's metadata files (manifests, transactions). Strings are
  * u32 length + UTF-8. A file ends with a CRC32 of everything before it and its magic again. */
final private[core] class MetadataWriter(magic: Array[Byte]) {
  private val out = new GrowableBytes(4096)
  out.putBytes(magic, 0, magic.length)

  def u8(v: Int): this.type = { out.putByte(v); this }
  def u16(v: Int): this.type = { out.putByte(v); out.putByte(v >>> 8); this }
  def u32(v: Int): this.type = { out.putInt(v); this }
  def i64(v: Long): this.type = { out.putLong(v); this }
  def string(s: String): this.type = { bytes(s.getBytes(StandardCharsets.UTF_8)) }
  def bytes(b: Array[Byte]): this.type = { out.putInt(b.length); out.putBytes(b, 0, b.length); this }

  def f64(v: Double): this.type = i64(java.lang.Double.doubleToRawLongBits(v))
  def raw(b: Array[Byte]): this.type = { out.putBytes(b, 0, b.length); this }

  /** What was written so far (a writer created with an empty magic collects a section's body). */
  def written: Array[Byte] = java.util.Arrays.copyOf(out.array, out.length)

  def finish(): Array[Byte] = {
    val crc = new CRC32
    crc.update(out.array, 0, out.length)
    out.putInt(crc.getValue.toInt)
    out.putBytes(magic, 0, magic.length)
    java.util.Arrays.copyOf(out.array, out.length)
  }
}

/** The matching reader: checks magic, trailer and CRC first, then every read stays inside the
  * body; any inconsistency is an InvalidFermionDatasetException naming the file. */
final private[core] class MetadataReader(bytes: Array[Byte], magic: Array[Byte], dataset: String, file: String) {
  private def fail(msg: String): Nothing = throw new InvalidFermionDatasetException(dataset, file, msg)

  private val bodyEnd: Int = {
    val n = bytes.length
    if (
      n < magic.length * 2 + 4 || !bytes.startsWith(magic) || !java.util.Arrays.equals(
        bytes,
        n - magic.length,
        n,
        magic,
        0,
        magic.length
      )
    )
      fail(s"not a Fermion ${new String(magic, StandardCharsets.US_ASCII)} file or truncated ($n bytes)")
    val end = n - magic.length - 4
    val crc = new CRC32
    crc.update(bytes, 0, end)
    val stored = ByteBuffer.wrap(bytes, end, 4).order(ByteOrder.LITTLE_ENDIAN).getInt
    if (stored != crc.getValue.toInt)
      fail(f"CRC32 mismatch (stored 0x$stored%08x, computed 0x${crc.getValue.toInt}%08x); the file is corrupt")
    end
  }
  private val buf = ByteBuffer.wrap(bytes, 0, bodyEnd).order(ByteOrder.LITTLE_ENDIAN)
  buf.position(magic.length)

  private def need(n: Long, what: String): Unit =
    if (n < 0 || n > buf.remaining) fail(s"$what runs past the end of the file")
  def u8(what: String): Int = { need(1, what); buf.get() & 0xff }
  def u16(what: String): Int = { need(2, what); buf.getShort() & 0xffff }
  def u32(what: String): Int = {
    need(4, what)
    val v = buf.getInt()
    if (v < 0) fail(s"$what is out of range ($v)")
    v
  }
  def i64(what: String): Long = { need(8, what); buf.getLong() }
  def bytes(what: String): Array[Byte] = { val n = u32(what); need(n, what); val b = new Array[Byte](n); buf.get(b); b }
  def string(what: String): String = new String(bytes(what), StandardCharsets.UTF_8)

  /** A count of items, each at least `minItemBytes` long (so a corrupt count cannot allocate). */
  def count(what: String, minItemBytes: Int): Int = { val n = u32(what); need(n.toLong * minItemBytes, what); n }
  def check(cond: Boolean, msg: => String): Unit = if (!cond) fail(msg)

  /** Offset of the next field from the start of the file. */
  def position: Int = buf.position()
  def seek(p: Int): Unit = buf.position(p)
  def skip(n: Int, what: String): Unit = { need(n.toLong, what); buf.position(buf.position() + n) }
  def f64(what: String): Double = java.lang.Double.longBitsToDouble(i64(what))

  /** Skips whatever is left before the trailer (fields of a newer minor version). */
  def skipRest(): Unit = buf.position(buf.limit())
  def done(): Unit = if (buf.remaining != 0) fail(s"${buf.remaining} unexpected bytes before the trailer")
}

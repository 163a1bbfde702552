package io.fermion.core.fuzz

import java.nio.{ByteBuffer, ByteOrder}
import java.util.zip.CRC32

/** Makes damage invisible to checksums: recomputes every CRC of a mutated file over its mutated
  * bytes, so that only the reader's structural checks stand between the damage and the caller.
  * Page and bloom filter positions come from the valid original (damage may have moved or broken
  * the headers that locate them); CMB and metadata CRCs follow the mutated CIT and footer where
  * they still point inside the file. Best effort: what cannot be located is left as it is. */
object CrcFixer {
  private def crc(bytes: Array[Byte], from: Int, until: Int): Int = {
    val c = new CRC32
    c.update(bytes, from, until - from)
    c.getValue.toInt
  }

  def fix(bytes: Array[Byte], original: FileMap): Unit = {
    val b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    val n = bytes.length
    def inFile(from: Long, until: Long): Boolean = from >= 0 && until <= n && from <= until
    original.pages.foreach { p =>
      if (inFile(p.header, p.payload)) {
        val stored = b.getInt(p.header).toLong
        if (stored >= 0 && inFile(p.payload, p.payload + stored))
          b.putInt(p.header + 12, crc(bytes, p.payload, p.payload + stored.toInt))
      }
    }
    original.blooms.foreach { r =>
      if (inFile(r.start, r.end) && r.length >= 4) b.putInt(r.end - 4, crc(bytes, r.start, r.end - 4))
    }
    if (n < 72) return
    val footerAt = n - 64
    val schemaOffset = b.getLong(footerAt)
    val numColumns = b.getInt(footerAt + 12).toLong
    val citOffset = b.getLong(footerAt + 32)
    if (numColumns >= 0 && citOffset >= 0 && inFile(citOffset, citOffset + 12 * numColumns + 8)) {
      val cit = citOffset.toInt
      var c = 0
      while (c < numColumns) {
        val start = b.getLong(cit + 8 * c)
        val end = b.getLong(cit + 8 * (c + 1))
        if (inFile(start, end) && end > start && end - start < Int.MaxValue)
          b.putInt(cit + 8 * (numColumns.toInt + 1) + 4 * c, crc(bytes, start.toInt, end.toInt))
        c += 1
      }
    }
    if (inFile(schemaOffset, footerAt)) b.putInt(footerAt + 52, crc(bytes, schemaOffset.toInt, n - 12))
  }

  /** The dataset metadata framing: CRC32 of [0, n - 8) stored at n - 8. */
  def fixMetadataFile(bytes: Array[Byte]): Unit =
    if (bytes.length >= 12)
      ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(bytes.length - 8, crc(bytes, 0, bytes.length - 8))
}

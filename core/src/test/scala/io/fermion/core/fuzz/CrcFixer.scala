package io.fermion.core.fuzz

import java.nio.{ByteBuffer, ByteOrder}
import java.util.zip.CRC32

import io.fermion.core.layout.ColumnDirectory

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
    fixColumnDirectory(bytes, b, schemaOffset, numColumns, citOffset)
    if (inFile(schemaOffset, footerAt)) b.putInt(footerAt + 52, crc(bytes, schemaOffset.toInt, n - 12))
  }

  /** The column directory's CRCs (format 1.5), located by the mutated footer and CIT.offset[0]:
    * each entry's CMB and node CRCs over the ranges the entry gives, each group's CRC, then the
    * trailer's over trailer, stripe directory and footer. */
  private def fixColumnDirectory(
      bytes: Array[Byte],
      b: ByteBuffer,
      schemaOffset: Long,
      numColumns: Long,
      citOffset: Long
  ): Unit = {
    val n = bytes.length
    val footerAt = n - 64
    def inFile(from: Long, until: Long): Boolean = from >= 0 && until <= n && from <= until
    if ((b.getInt(footerAt + 28) & 4) == 0 || numColumns < 0 || numColumns > n || !inFile(citOffset, citOffset + 8))
      return
    val end = b.getLong(citOffset.toInt)
    val groups = ((numColumns + 31) / 32).toInt
    val start = end - (32 * numColumns + 4 * groups + 24)
    if (!inFile(start, end)) return
    (0 until groups).foreach { g =>
      val groupAt = (start + g * (32 * 32 + 4)).toInt
      val k = math.min(32, numColumns - 32 * g).toInt
      (0 until k).foreach { i =>
        val at = groupAt + 32 * i
        val cmbOffset = b.getLong(at)
        val cmbLength = b.getInt(at + 8).toLong
        if (cmbLength > 0 && inFile(cmbOffset, cmbOffset + cmbLength))
          b.putInt(at + 12, crc(bytes, cmbOffset.toInt, (cmbOffset + cmbLength).toInt))
        val node = schemaOffset + b.getInt(at + 16)
        val nodeLength = b.getInt(at + 20).toLong
        if (nodeLength >= 0 && inFile(node, node + nodeLength))
          b.putInt(at + 24, crc(bytes, node.toInt, (node + nodeLength).toInt))
      }
      b.putInt(groupAt + 32 * k, ColumnDirectory.groupCrc(g, ByteBuffer.wrap(bytes, groupAt, 32 * k)))
    }
    val stripeDir = b.getLong(footerAt + 16)
    val stripes = b.getInt(footerAt + 24).toLong
    if (stripes >= 0 && inFile(stripeDir, stripeDir + 24 * stripes)) {
      val crc = ColumnDirectory.trailerCrc(
        ByteBuffer.wrap(bytes, end.toInt - 24, 16),
        ByteBuffer.wrap(bytes, stripeDir.toInt, 24 * stripes.toInt),
        java.util.Arrays.copyOfRange(bytes, footerAt, footerAt + 52)
      )
      b.putInt(end.toInt - 8, crc)
    }
  }

  /** The dataset metadata framing: CRC32 of [0, n - 8) stored at n - 8. */
  def fixMetadataFile(bytes: Array[Byte]): Unit =
    if (bytes.length >= 12)
      ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(bytes.length - 8, crc(bytes, 0, bytes.length - 8))
}

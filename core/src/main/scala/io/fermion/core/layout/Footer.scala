package io.fermion.core.layout

import java.nio.{ByteBuffer, ByteOrder}

/** The fixed-size footer at the end of every file: where the metadata lives, the format version,
  * the settings and the magic. 64 bytes, little-endian (docs/format.md, "Footer").
  *
  * {{{
  *  0 u64 schemaOffset      8 u32 schemaLength    12 u32 numColumns
  * 16 u64 stripeDirOffset  24 u32 numStripes      28 u32 settings
  * 32 u64 citOffset        40 u64 numRows
  * 48 u32 defaultPageSize  52 u32 metadataCrc32 (schema .. end of CIT)
  * 56 u16 major  58 u16 minor  60 "FRMN"
  * }}}
  */
final private[core] case class Footer(
    schemaOffset: Long,
    schemaLength: Int,
    numColumns: Int,
    stripeDirOffset: Long,
    numStripes: Int,
    settings: Int,
    citOffset: Long,
    numRows: Long,
    defaultPageSize: Int,
    metadataCrc32: Int,
    major: Int = FormatVersion.Major,
    minor: Int = FormatVersion.Minor
) {
  def hasPageCrc: Boolean = (settings & FileLayout.Settings.PageCrc32) != 0

  /** Format 1.5: a column directory ends where the CMB area starts (settings bit 2). */
  def hasColumnDirectory: Boolean = (settings & FileLayout.Settings.ColumnDirectory) != 0
  def citLength: Long = ColumnIndexTable.byteSize(numColumns)

  /** The metadata region covered by metadataCrc32: schema, stripe directory and CIT. */
  def metadataEnd: Long = citOffset + citLength

  /** Footer bytes [0, 52): every field written before metadataCrc32. The metadata CRC covers
    * them after the metadata region, so a flipped setting or offset is caught too. */
  def crcCoveredBytes(): Array[Byte] = java.util.Arrays.copyOf(encode(), Footer.CrcCoveredLength)

  def encode(): Array[Byte] = {
    val b = ByteBuffer.allocate(FileLayout.FooterSize).order(ByteOrder.LITTLE_ENDIAN)
    b.putLong(schemaOffset).putInt(schemaLength).putInt(numColumns)
    b.putLong(stripeDirOffset).putInt(numStripes).putInt(settings)
    b.putLong(citOffset).putLong(numRows)
    b.putInt(defaultPageSize).putInt(metadataCrc32)
    b.putShort(major.toShort).putShort(minor.toShort).put(FileLayout.Magic)
    b.array()
  }
}

private[core] object Footer {
  val CrcCoveredLength: Int = 52

  /** Decodes the 64 bytes at `buf.position()`; magic and version are checked by the caller, which
    * knows the file name. */
  def decode(buf: ByteBuffer): Footer = {
    val b = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN)
    val p = b.position()
    Footer(
      schemaOffset = b.getLong(p),
      schemaLength = b.getInt(p + 8),
      numColumns = b.getInt(p + 12),
      stripeDirOffset = b.getLong(p + 16),
      numStripes = b.getInt(p + 24),
      settings = b.getInt(p + 28),
      citOffset = b.getLong(p + 32),
      numRows = b.getLong(p + 40),
      defaultPageSize = b.getInt(p + 48),
      metadataCrc32 = b.getInt(p + 52),
      major = b.getShort(p + 56) & 0xffff,
      minor = b.getShort(p + 58) & 0xffff
    )
  }

  def magicMatches(buf: ByteBuffer, at: Int): Boolean =
    FileLayout.Magic.indices.forall(i => buf.get(at + i) == FileLayout.Magic(i))
}

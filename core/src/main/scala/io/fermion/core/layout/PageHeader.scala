package io.fermion.core.layout

import java.nio.{ByteBuffer, ByteOrder}

/** The 20-byte header in front of every page's payload (docs/format.md, "Pages"):
  * {{{
  * u32 storedLength  u32 uncompressedLength  u32 valueCount  u32 crc32(stored payload)
  * u8 codec  u8 encoding  u16 reserved
  * }}}
  * It makes the pages of a chunk walkable without the CMB (VALIDITY and OFFSETS chunks have no
  * page metadata) and keeps each page's checksum next to the bytes it protects. */
final case class PageHeader(storedLength: Int, uncompressedLength: Int, valueCount: Int, crc32: Int, codec: Int, encoding: Int) {
  def encode(): Array[Byte] = {
    val b = ByteBuffer.allocate(PageHeader.Size).order(ByteOrder.LITTLE_ENDIAN)
    b.putInt(storedLength).putInt(uncompressedLength).putInt(valueCount).putInt(crc32)
    b.put(codec.toByte).put(encoding.toByte).putShort(0.toShort)
    b.array()
  }
}

object PageHeader {
  val Size: Int = 20

  def decode(b: ByteBuffer, at: Int): PageHeader = {
    val o = b.duplicate().order(ByteOrder.LITTLE_ENDIAN)
    PageHeader(o.getInt(at), o.getInt(at + 4), o.getInt(at + 8), o.getInt(at + 12), o.get(at + 16) & 0xFF, o.get(at + 17) & 0xFF)
  }
}

/** How a page's values are laid out before compression. */
object PageEncoding {
  /** Values as the stream defines them: bitmaps LSB-first, fixed-width little-endian, lengths as
    * u32, variable-width bytes concatenated. */
  val Plain: Int = 0
}

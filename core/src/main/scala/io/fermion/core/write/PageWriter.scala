package io.fermion.core.write

import java.util.zip.CRC32

import io.fermion.core.codec.PageCodec
import io.fermion.core.storage.PositionedOutputFile
import io.fermion.core.layout.{PageEncoding, PageHeader}

/** Turns one page's encoded bytes into header + stored payload on the output. Compression is kept
  * only when it pays: the compressed payload must be at most 15/16 of the raw one, otherwise the
  * page is stored raw and the reader skips decompression. */
final class PageWriter(out: PositionedOutputFile, options: WriterOptions) {
  private val crc = new CRC32

  /** Writes the page and returns its size on disk (header included). */
  def write(raw: Array[Byte], off: Int, len: Int, valueCount: Int): Int = {
    var codec = PageCodec.None
    var stored = raw
    var storedOff = off
    var storedLen = len
    if (options.compression != PageCodec.None && len > 64) {
      val c = PageCodec.compress(options.compression, raw, off, len, options.compressionLevel)
      if (c.length.toLong * 16 <= len.toLong * 15) { codec = options.compression; stored = c; storedOff = 0; storedLen = c.length }
    }
    val checksum = if (options.pageChecksums) {
      crc.reset(); crc.update(stored, storedOff, storedLen); crc.getValue.toInt
    } else 0
    out.write(PageHeader(storedLen, len, valueCount, checksum, codec, PageEncoding.Plain).encode())
    out.write(stored, storedOff, storedLen)
    PageHeader.Size + storedLen
  }
}

package io.fermion.core.write

import io.fermion.core.bytes.{Bits, GrowableBits, GrowableBytes}
import java.util.zip.CRC32

import io.fermion.core.codec.{PageCodec, ZstdBlocks}
import io.fermion.core.encoding.PageEncoder
import io.fermion.core.storage.PositionedOutputFile
import io.fermion.core.layout.{PageEncoding, PageHeader}

/** Turns one page's values into header + stored payload on the output: first the lightweight
  * encoding [[PageEncoder]] picks among the column's allowed ones, then the column's codec, kept
  * only when it pays: the compressed payload must be at most 7/8 of the encoded one, otherwise
  * the page is stored encoded and the reader skips decompression. A body larger than the column's
  * `compressionBlockSize` is compressed in blocks ([[ZstdBlocks]]). */
final private[core] class PageWriter(out: PositionedOutputFile) {
  private val crc = new CRC32
  private val encoder = new PageEncoder
  private val encoded = new GrowableBytes(1 << 16)
  private val blocked = new GrowableBytes(1 << 16)
  private val counts = new Array[Long](PageEncoding.all.size)

  /** How many pages were written with each encoding (for tests and benchmarks). */
  def encodingCounts: Map[Int, Long] = counts.indices.filter(counts(_) > 0).map(i => i -> counts(i)).toMap

  def writeBitmap(bits: Array[Byte], byteOff: Int, n: Int, col: ColumnWriteOptions): Int = {
    encoded.clear()
    emit(encoder.encodeBitmap(bits, byteOff, n, col.encodings, encoded), n, col)
  }

  def writeFixed(bytes: Array[Byte], off: Int, n: Int, width: Int, col: ColumnWriteOptions): Int = {
    encoded.clear()
    emit(encoder.encodeFixed(bytes, off, n, width, col.encodings, encoded), n, col)
  }

  def writeVariable(
      bytes: Array[Byte],
      starts: Array[Int],
      lens: Array[Int],
      valid: Array[Boolean],
      n: Int,
      col: ColumnWriteOptions
  ): Int = {
    encoded.clear()
    emit(encoder.encodeVariable(bytes, starts, lens, valid, n, col.encodings, encoded), n, col)
  }

  /** Writes the encoded page and returns its size on disk (header included). */
  private def emit(encoding: Int, valueCount: Int, col: ColumnWriteOptions): Int = {
    val len = encoded.length
    var codec = PageCodec.None
    var stored = encoded.array
    var storedLen = len
    if (col.compression != PageCodec.None && len > 64) {
      val (c, cLen, cCodec) =
        if (col.compressionBlockSize > 0 && len > col.compressionBlockSize) {
          ZstdBlocks.compress(
            encoded.array,
            0,
            len,
            col.compressionBlockSize,
            col.compressionLevel,
            col.pageChecksums,
            blocked
          )
          (blocked.array, blocked.length, PageCodec.ZstdBlocks)
        } else {
          val c = PageCodec.compress(col.compression, encoded.array, 0, len, col.compressionLevel)
          (c, c.length, col.compression)
        }
      // Kept only when it saves 1/8: less does not pay for the decompression, nor for the lost
      // random access (an uncompressed PLAIN page serves a take with just the requested values).
      if (cLen.toLong * 8 <= len.toLong * 7) { codec = cCodec; stored = c; storedLen = cLen }
    }
    val checksum = if (col.pageChecksums) {
      crc.reset(); crc.update(stored, 0, storedLen); crc.getValue.toInt
    } else 0
    out.write(PageHeader(storedLen, len, valueCount, checksum, codec, encoding).encode())
    out.write(stored, 0, storedLen)
    counts(encoding) += 1
    PageHeader.Size + storedLen
  }
}

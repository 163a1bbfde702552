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
  * `compressionBlockSize` is compressed in blocks ([[ZstdBlocks]]), those after the first primed
  * with it. */
final private[core] class PageWriter(out: PositionedOutputFile) {
  import PageWriter._
  private val crc = new CRC32
  private val encoder = new PageEncoder
  private val encoded = new GrowableBytes(1 << 16)
  private val blocked = new GrowableBytes(1 << 16)
  // A second candidate body and its blocks (see writeFixed).
  private val alternative = new GrowableBytes(1 << 16)
  private val alternativeBlocked = new GrowableBytes(1 << 16)
  // The page's PLAIN body and its blocks (see withPlainAlternative).
  private val plain = new GrowableBytes(1 << 16)
  private val plainBlocked = new GrowableBytes(1 << 16)
  // The page with Huffman blocks (see withEntropyAlternative).
  private val entropy = new GrowableBytes(1 << 16)
  private val entropyBlocked = new GrowableBytes(1 << 16)
  private val counts = new Array[Long](PageEncoding.all.size)

  /** How many pages were written with each encoding (for tests and benchmarks). */
  def encodingCounts: Map[Int, Long] = counts.indices.filter(counts(_) > 0).map(i => i -> counts(i)).toMap

  def writeBitmap(bits: Array[Byte], byteOff: Int, n: Int, col: ColumnWriteOptions): Int = {
    encoded.clear()
    emit(encoder.encodeBitmap(bits, byteOff, n, col.encodings, encoded), n, col)
  }

  /** A fixed-width page of repeated values (sorted keys) also gets a DELTA body, compressed: it is
    * kept when its stored size is at most 7/8 of the chosen encoding's (the bar zstd itself must
    * clear, 2.6), since it costs a decompression and a take reads the page whole. Then the Huffman
    * alternative, then PLAIN (see withPlainAlternative). */
  def writeFixed(bytes: Array[Byte], off: Int, n: Int, width: Int, col: ColumnWriteOptions): Int = {
    encoded.clear()
    val chosen = encoder.encodeFixed(bytes, off, n, width, col.encodings, encoded)
    var page = Body(chosen, encoded, store(encoded, blocked, col))
    if (
      chosen != PageEncoding.Delta && col.compression != PageCodec.None && encoder.lastMayCompressAsDelta(col.encodings)
    ) {
      alternative.clear()
      val delta = encoder.encodeLastAsDelta(alternative)
      val second = store(alternative, alternativeBlocked, col)
      if (second.length.toLong * 8 <= page.stored.length.toLong * 7) page = Body(delta, alternative, second)
    }
    write(withPlainAlternative(withEntropyAlternative(page, col), bytes, off, n * width, col), n, col)
  }

  /** The page's PLAIN bytes compressed instead of `page` when that stores less, tried when `page`'s
    * body still takes more than half of them, or more than a quarter when it is a dictionary: values
    * packed at nearly their full width (doubles' bits) no longer line up on bytes, and a dictionary
    * keeps its entries at full width, while zstd stores each repeat in PLAIN bytes as a short match.
    * Narrower bodies (dates, keys and prices packed at 12-24 bits) rarely lose to PLAIN: a quarter
    * for every page compressed all pages of five lineitem columns twice, none of them smaller.
    * Tried last, against the page's final form: a Huffman block that zstd compresses well is
    * measured against the page before it by its size before compression. */
  private def withPlainAlternative(
      page: Body,
      bytes: Array[Byte],
      off: Int,
      len: Int,
      col: ColumnWriteOptions
  ): Body = {
    if (
      page.encoding == PageEncoding.Plain || col.compression == PageCodec.None ||
      !col.encodings.ids.contains(PageEncoding.Plain) ||
      page.body.length.toLong * (if (page.encoding == PageEncoding.Dictionary) 4 else 2) <= len
    ) return page
    plain.clear()
    plain.putBytes(bytes, off, len)
    val stored = store(plain, plainBlocked, col)
    if (stored.length < page.stored.length) Body(PageEncoding.Plain, plain, stored) else page
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
  private def emit(encoding: Int, valueCount: Int, col: ColumnWriteOptions): Int =
    write(withEntropyAlternative(Body(encoding, encoded, store(encoded, blocked, col)), col), valueCount, col)

  /** The page with Huffman blocks instead of `page` when that stores at least 1/8 less (the bar
    * zstd must clear, for the same reason): a Huffman block decodes at about half the speed of
    * unpacking. zstd often does as well on the other bodies, so the Huffman form is measured
    * against the stored size of the page, not its encoded one. */
  private def withEntropyAlternative(page: Body, col: ColumnWriteOptions): Body = {
    val size = encoder.entropyAlternativeSize(col.encodings)
    if (size < 0 || size * 8 > page.stored.length.toLong * 7) return page
    entropy.clear()
    val encoding = encoder.encodeEntropyAlternative(encoded, entropy)
    val stored = store(entropy, entropyBlocked, col)
    if (stored.length.toLong * 8 <= page.stored.length.toLong * 7) Body(encoding, entropy, stored) else page
  }

  /** `body` compressed with the column's codec (in blocks into `blocks` when it is larger than
    * the column's block size), or as it is. */
  private def store(body: GrowableBytes, blocks: GrowableBytes, col: ColumnWriteOptions): Stored = {
    val len = body.length
    if (col.compression == PageCodec.None || len <= 64) return Stored(body.array, len, PageCodec.None)
    val c =
      if (col.compressionBlockSize > 0 && len > col.compressionBlockSize) {
        val blockCodec = ZstdBlocks.compress(
          body.array,
          0,
          len,
          col.compressionBlockSize,
          col.compressionLevel,
          col.compressionBlockPrime,
          col.pageChecksums,
          blocks
        )
        Stored(blocks.array, blocks.length, blockCodec)
      } else {
        val c = PageCodec.compress(col.compression, body.array, 0, len, col.compressionLevel)
        Stored(c, c.length, col.compression)
      }
    // Kept only when it saves 1/8: less does not pay for the decompression, nor for the lost
    // random access (an uncompressed PLAIN page serves a take with just the requested values).
    if (c.length.toLong * 8 <= len.toLong * 7) c else Stored(body.array, len, PageCodec.None)
  }

  private def write(page: Body, valueCount: Int, col: ColumnWriteOptions): Int = {
    val Body(encoding, body, s) = page
    val checksum = if (col.pageChecksums) {
      crc.reset(); crc.update(s.array, 0, s.length); crc.getValue.toInt
    } else 0
    out.write(PageHeader(s.length, body.length, valueCount, checksum, s.codec, encoding).encode())
    out.write(s.array, 0, s.length)
    counts(encoding) += 1
    PageHeader.Size + s.length
  }
}

private object PageWriter {

  /** A body as stored: its bytes at `array(0 until length)` and the codec that made them. */
  final case class Stored(array: Array[Byte], length: Int, codec: Int)

  /** A page's encoding, its body and the body as stored. */
  final case class Body(encoding: Int, body: GrowableBytes, stored: Stored)
}

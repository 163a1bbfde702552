package io.fermion.core.read

import java.nio.ByteBuffer
import java.util.zip.CRC32

import io.fermion.core.codec.PageCodec
import io.fermion.core.encoding.{MalformedPageException, PageValueDecoder, PageValues}
import io.fermion.core.errors.{FermionChecksumException, InvalidFermionFileException}
import io.fermion.core.layout.{PageEncoding, PageHeader}

/** One decoded page: `bytes(off until off + len)` holds the page's plain values, valid only until
  * the next page is decoded. */
final case class DecodedPage(bytes: Array[Byte], off: Int, len: Int, valueCount: Int)

/** Walks the pages of one stream chunk by their headers, verifies each CRC32, decompresses, and
  * decodes each page's encoding back to its PLAIN bytes. */
final class PageDecoder(path: String, verifyChecksums: Boolean) {
  private val crc = new CRC32

  /** Decompressed pages land here: every caller consumes a page before asking for the next, so
    * one buffer (as large as the largest page) serves all of them. */
  private var scratch = new Array[Byte](0)
  private def scratchOf(n: Int): Array[Byte] = {
    if (scratch.length < n) scratch = new Array[Byte](math.max(n, scratch.length * 2))
    scratch
  }

  private val values = new PageValueDecoder
  private var pages = 0L
  private var nanos = 0L

  /** Pages decoded so far and the time spent verifying, decompressing and decoding them. */
  def pagesDecoded: Long = pages
  def decodeNanos: Long = nanos

  /** `chunk` holds exactly the chunk's bytes; `chunkOffset` is its file offset (for errors). The
    * pages hold `kind` values, `maxValues` of them at most in all (the node's slots); variable-width
    * pages decode to at most `maxBytes` bytes in all. */
  def foreachPage(
      chunk: ByteBuffer,
      chunkOffset: Long,
      kind: PageValues,
      maxValues: Int,
      maxBytes: Long = Long.MaxValue
  )(f: DecodedPage => Unit): Unit = {
    var valuesLeft = maxValues
    var bytesLeft = maxBytes
    val base = chunk.position()
    val end = chunk.limit()
    var at = base
    while (at < end) {
      val fileOffset = chunkOffset + (at - base)
      val started = System.nanoTime()
      if (end - at < PageHeader.Size)
        throw new InvalidFermionFileException(path, fileOffset, "page header runs past the end of its chunk")
      val h = PageHeader.decode(chunk, at)
      val payloadAt = at + PageHeader.Size
      if (h.storedLength < 0 || h.storedLength > end - payloadAt || h.uncompressedLength < 0 || h.valueCount < 0)
        throw new InvalidFermionFileException(
          path,
          fileOffset,
          s"page header is inconsistent (stored ${h.storedLength} bytes, ${end - payloadAt} left in chunk)"
        )
      if (h.encoding >= PageEncoding.all.size)
        throw new InvalidFermionFileException(path, fileOffset, s"unknown page encoding ${h.encoding}")
      if (h.valueCount > valuesLeft)
        throw new InvalidFermionFileException(
          path,
          fileOffset,
          s"pages hold more values than the node's $maxValues slots"
        )
      val (arr, arrOff) =
        if (chunk.hasArray) (chunk.array(), chunk.arrayOffset() + payloadAt)
        else { val a = new Array[Byte](h.storedLength); chunk.duplicate().position(payloadAt).get(a); (a, 0) }
      if (verifyChecksums) {
        crc.reset(); crc.update(arr, arrOff, h.storedLength)
        val actual = crc.getValue.toInt
        if (actual != h.crc32) throw new FermionChecksumException(path, fileOffset, "page", h.crc32, actual)
      }
      val encoded = h.codec match {
        case PageCodec.None =>
          if (h.uncompressedLength != h.storedLength)
            throw new InvalidFermionFileException(
              path,
              fileOffset,
              "uncompressed page with differing stored and raw lengths"
            )
          DecodedPage(arr, arrOff, h.storedLength, h.valueCount)
        case PageCodec.Zstd =>
          if (!PageCodec.announcesSize(PageCodec.Zstd, arr, arrOff, h.storedLength, h.uncompressedLength))
            throw new InvalidFermionFileException(
              path,
              fileOffset,
              s"zstd page does not hold the ${h.uncompressedLength} bytes its header records"
            )
          val raw = scratchOf(h.uncompressedLength)
          if (!PageCodec.decompress(PageCodec.Zstd, arr, arrOff, h.storedLength, raw, h.uncompressedLength))
            throw new InvalidFermionFileException(
              path,
              fileOffset,
              "zstd page does not decompress to its recorded length"
            )
          DecodedPage(raw, 0, h.uncompressedLength, h.valueCount)
        case other => throw new InvalidFermionFileException(path, fileOffset, s"unknown page codec $other")
      }
      val page =
        if (h.encoding == PageEncoding.Plain) encoded
        else {
          try values.decode(h.encoding, encoded.bytes, encoded.off, encoded.len, h.valueCount, kind, bytesLeft)
          catch {
            case e: MalformedPageException =>
              throw new InvalidFermionFileException(
                path,
                fileOffset,
                s"${PageEncoding.name(h.encoding)} page does not decode: ${e.getMessage}"
              )
            // The decoders check every count they read; this only backs them up against a case they miss.
            case e @ (_: IndexOutOfBoundsException | _: NegativeArraySizeException | _: java
                  .nio.BufferUnderflowException) =>
              throw new InvalidFermionFileException(
                path,
                fileOffset,
                s"${PageEncoding.name(h.encoding)} page does not decode: $e"
              )
          }
          DecodedPage(values.plainArray, values.plainOffset, values.plainLength, h.valueCount)
        }
      valuesLeft -= h.valueCount
      if (kind == PageValues.Variable) bytesLeft -= page.len
      pages += 1
      nanos += System.nanoTime() - started
      f(page)
      at = payloadAt + h.storedLength
    }
  }
}

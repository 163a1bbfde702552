package io.fermion.core.read

import java.nio.ByteBuffer
import java.util.zip.CRC32

import io.fermion.core.codec.{PageCodec, ZstdBlocks}
import io.fermion.core.encoding.{
  DictionaryCodes, DictionaryEntries, HuffmanBlock, MalformedPageException, PackedDeltas, PackedValues,
  PageValueDecoder, PageValues, Runs
}
import io.fermion.core.errors.{FermionChecksumException, InvalidFermionFileException}
import io.fermion.core.layout.{PageEncoding, PageHeader}

/** One decoded page: `bytes(off until off + len)` holds the page's plain values, valid only until
  * the next page is decoded. `encoding` is the one its header names. An encoded page of fixed-width
  * values decoded `fixedAsLongs` has its values in `longs` instead (`bytes` null): each value's
  * PLAIN bytes are its low `len / valueCount` bytes; with `keepEncoded` too, a BITPACK or FOR page
  * may come still packed, in `packed` (`bytes` and `longs` null), a DELTA or DELTA_FOR page as its
  * first value and packed differences, in `deltas` (a DELTA_HUFFMAN page with its differences
  * decoded, [[PackedDeltas.unpacked]], and a CONSTANT page as its value there), an RLE page as its
  * runs, in `runs`, and a dictionary page as its entries and packed codes, in `dictionary`. With
  * `keepEncoded`, a dictionary page of variable-width values may come as its entries and codes, in
  * `entries` (`bytes` null, `len` the values' bytes). */
final private[core] case class DecodedPage(
    bytes: Array[Byte],
    off: Int,
    len: Int,
    valueCount: Int,
    encoding: Int = 0,
    longs: Array[Long] = null,
    packed: PackedValues = null,
    entries: DictionaryEntries = null,
    dictionary: DictionaryCodes = null,
    deltas: PackedDeltas = null,
    runs: Runs = null
)

/** What the CMB says about a chunk's pages, which its page headers (covered by no CRC) must match:
  * each page's on-disk size (`20 + storedLength`) and, where known (>= 0), its value count. */
final private[core] case class ExpectedPages(sizes: Array[Long], valueCounts: Array[Int])

private[core] object ExpectedPages {

  /** One page filling the chunk: a single-page DATA chunk, or a page picked by its PageMeta. */
  def single(length: Long, valueCount: Int): ExpectedPages = ExpectedPages(Array(length), Array(valueCount))
}

/** Walks the pages of one stream chunk by their headers, verifies each CRC32, decompresses, and
  * decodes each page's encoding back to its PLAIN bytes. */
final private[core] class PageDecoder(path: String, verifyChecksums: Boolean) {
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
    * pages decode to at most `maxBytes` bytes in all. `valueLengths(first, n)` gives the lengths of
    * the non-null values among the `n` slots from `first` (counted from the first page given here),
    * from the node's OFFSETS: a `dictionary_by_length` page needs them. `fixedAsLongs`: encoded
    * pages of fixed-width values of up to 8 bytes are handed over as `longs`, and with
    * `keepEncoded` BITPACK and FOR pages as `packed`, DELTA and DELTA_FOR pages as `deltas` and
    * dictionary pages with bit-packed codes as `dictionary`; with `keepEncoded`, dictionary pages
    * of variable-width values as `entries` (see [[DecodedPage]]). */
  def foreachPage(
      chunk: ByteBuffer,
      chunkOffset: Long,
      kind: PageValues,
      maxValues: Int,
      maxBytes: Long = Long.MaxValue,
      expected: ExpectedPages = null,
      valueLengths: (Int, Int) => Array[Int] = null,
      fixedAsLongs: Boolean = false,
      keepEncoded: Boolean = false
  )(f: DecodedPage => Unit): Unit = {
    var valuesLeft = maxValues
    var bytesLeft = maxBytes
    val base = chunk.position()
    val end = chunk.limit()
    var at = base
    var index = 0
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
      if (expected != null) {
        if (index >= expected.sizes.length)
          throw new InvalidFermionFileException(
            path,
            fileOffset,
            s"chunk holds more pages than its CMB's ${expected.sizes.length}"
          )
        val want = expected.valueCounts(index)
        if (PageHeader.Size + h.storedLength.toLong != expected.sizes(index) || (want >= 0 && h.valueCount != want))
          throw new InvalidFermionFileException(
            path,
            fileOffset,
            s"page header (${PageHeader.Size + h.storedLength} bytes, ${h.valueCount} values) does not match its CMB (${expected.sizes(index)} bytes${if (want >= 0) s", $want values" else ""})"
          )
      }
      // Before anything is allocated for the page: no encoding of its values takes more bytes.
      val maxBody = PageDecoder.maxBodyBytes(kind, h.valueCount, bytesLeft)
      if (h.uncompressedLength > maxBody)
        throw new InvalidFermionFileException(
          path,
          fileOffset,
          s"page header records ${h.uncompressedLength} raw bytes for ${h.valueCount} values (at most $maxBody)"
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
          DecodedPage(arr, arrOff, h.storedLength, h.valueCount, h.encoding)
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
          DecodedPage(raw, 0, h.uncompressedLength, h.valueCount, h.encoding)
        case PageCodec.ZstdBlocks | PageCodec.ZstdPrimedBlocks =>
          val table = PageDecoder.blockTable(path, fileOffset, chunk, payloadAt, h)
          val raw = scratchOf(h.uncompressedLength)
          var prime: PageCodec.PrimedDecompressor = null
          def primeOf: PageCodec.PrimedDecompressor = {
            if (prime == null) prime = ZstdBlocks.prime(table, raw, 0) match {
              case Right(p) => p
              case Left(why) => throw new InvalidFermionFileException(path, fileOffset, why)
            }
            prime
          }
          try {
            var i = 0
            while (i < table.blocks) {
              if (!ZstdBlocks.decodeBlock(table, i, arr, arrOff + table.starts(i), raw, i * table.blockSize, primeOf))
                throw new InvalidFermionFileException(
                  path,
                  fileOffset,
                  s"block $i of a ${PageCodec.name(h.codec)} page does not decompress to its ${table.rawSize(i)} bytes"
                )
              i += 1
            }
          } finally if (prime != null) prime.close()
          DecodedPage(raw, 0, h.uncompressedLength, h.valueCount, h.encoding)
        case other => throw new InvalidFermionFileException(path, fileOffset, s"unknown page codec $other")
      }
      val page =
        if (h.encoding == PageEncoding.Plain) encoded
        else {
          try {
            val first = maxValues - valuesLeft
            values.decode(
              h.encoding,
              encoded.bytes,
              encoded.off,
              encoded.len,
              h.valueCount,
              kind,
              bytesLeft,
              if (valueLengths == null) null else () => valueLengths(first, h.valueCount),
              fixedAsLongs,
              keepEncoded
            )
          } catch {
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
          DecodedPage(
            values.plainArray,
            values.plainOffset,
            values.plainLength,
            h.valueCount,
            h.encoding,
            values.longValues,
            values.packedValues,
            values.entryValues,
            values.dictionaryCodes,
            values.packedDeltas,
            values.runValues
          )
        }
      // Every decoded page of fixed-width values or bits holds exactly its values' bytes (5.7), so
      // callers index into it by value without a check of their own.
      val plainBytes = kind match {
        case PageValues.Fixed(w) => h.valueCount.toLong * w
        case PageValues.Bitmap => (h.valueCount + 7L) >>> 3
        case PageValues.Variable => page.len.toLong
      }
      if (page.len != plainBytes)
        throw new InvalidFermionFileException(
          path,
          fileOffset,
          s"${PageEncoding.name(h.encoding)} page of ${h.valueCount} values has ${page.len} bytes, expected $plainBytes"
        )
      valuesLeft -= h.valueCount
      if (kind == PageValues.Variable) bytesLeft -= page.len
      pages += 1
      nanos += System.nanoTime() - started
      f(page)
      at = payloadAt + h.storedLength
      index += 1
    }
    if (expected != null && index != expected.sizes.length)
      throw new InvalidFermionFileException(
        path,
        chunkOffset,
        s"chunk holds $index pages, its CMB ${expected.sizes.length}"
      )
  }

  /** The sum of the `valueCount`s of a chunk's page headers, walking headers only (nothing is
    * decoded or allocated): what a node's slots are checked against before its vectors are
    * allocated. Headers that do not chain exactly to the chunk's end are an error. */
  def headerValueCount(chunk: ByteBuffer, chunkOffset: Long): Long = {
    val base = chunk.position()
    val end = chunk.limit()
    var at = base
    var total = 0L
    while (at < end) {
      if (end - at < PageHeader.Size)
        throw new InvalidFermionFileException(
          path,
          chunkOffset + (at - base),
          "page header runs past the end of its chunk"
        )
      val h = PageHeader.decode(chunk, at)
      if (h.storedLength < 0 || h.storedLength > end - at - PageHeader.Size || h.valueCount < 0)
        throw new InvalidFermionFileException(
          path,
          chunkOffset + (at - base),
          s"page header is inconsistent (stored ${h.storedLength} bytes, ${end - at - PageHeader.Size} left in chunk)"
        )
      total += h.valueCount
      at += PageHeader.Size + h.storedLength
    }
    total
  }
}

private[core] object PageDecoder {

  /** The block table of the `zstd-blocks` page with header `h` whose payload starts at `b(at)`,
    * with all of the table's bytes at hand. */
  def blockTable(path: String, fileOffset: Long, b: ByteBuffer, at: Int, h: PageHeader): ZstdBlocks.Table =
    ZstdBlocks.parseTable(
      b,
      at,
      b.limit() - at,
      h.storedLength,
      h.uncompressedLength,
      h.codec == PageCodec.ZstdPrimedBlocks
    ) match {
      case Right(Some(t)) => t
      case Right(None) => throw new InvalidFermionFileException(path, fileOffset, "zstd-blocks table is cut short")
      case Left(why) => throw new InvalidFermionFileException(path, fileOffset, why)
    }

  /** The largest body any encoding of docs/format.md 5.7 can give `n` values of `kind` (variable
    * width: whose decoded bytes are at most `maxBytes`): a page header recording more raw bytes is
    * damaged, and is refused before a buffer of that size is allocated. */
  def maxBodyBytes(kind: PageValues, n: Int, maxBytes: Long): Long = kind match {
    case PageValues.Bitmap => 24L + 8L * n // RLE: 14 bytes + n run lengths of up to 64 bits
    case PageValues.Fixed(w) if w > 8 => 16L + w.toLong * n
    // DICTIONARY with run-length codes: 27 + (w + 16) n; a Huffman block's values take at most
    // 78 bits each, after code lengths and lane counts of at most HuffmanBlock.MaxHeaderBytes.
    case PageValues.Fixed(_) => 32L + 24L * n + HuffmanBlock.MaxHeaderBytes
    case PageValues.Variable =>
      64L + 24L * n + HuffmanBlock.MaxHeaderBytes + math.min(math.max(0L, maxBytes), 1L << 40)
  }
}

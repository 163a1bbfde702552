package io.fermion.core.write

import io.fermion.core.stats.PageStatistics
import io.fermion.core.bytes.{Bits, GrowableBits, GrowableBytes}
import scala.collection.mutable.ArrayBuffer

import io.fermion.core.storage.PositionedOutputFile
import io.fermion.core.layout.{ChunkRecord, PageRecord, StreamType, ValueStats}

/** Writes one column's buffered stripe as its stream chunks, in stream order (depth first over the
  * column's nodes) and back to back (all streams of a column are adjacent), cutting each chunk into pages of about
  * `pageSize` raw bytes. Page boundaries fall on multiples of 8 rows for bitmaps, so a reader
  * copies whole bytes. Returns one [[ChunkRecord]] per stream. */
final private[core] class StripeColumnEncoder(out: PositionedOutputFile, pages: PageWriter, options: WriterOptions) {
  private val resolved = scala.collection.mutable.HashMap.empty[String, ColumnWriteOptions]

  /** The chunks of `col`'s streams and then of its children's, depth first. `batchEnds` (batch
    * mode) are the slots where the stripe's batches end, in `col`'s slots: DATA pages of any type
    * but boolean end only there, unless one batch alone fills more than a page, which then starts
    * a page of its own and ends its last one (docs/format.md 16.10). */
  def encode(col: ColumnNodeBuffer, batchEnds: Array[Int] = null): IndexedSeq[ChunkRecord] = {
    val settings = resolved.getOrElseUpdate(col.path, options.forColumn(col.path))
    val own = ownChunks(col, settings, batchEnds)
    // A list's or map's batches end, in its children's slots, where its own slots' elements end.
    val childEnds =
      if (batchEnds == null || col.field.dataType == io.fermion.core.schema.FermionType.Struct) batchEnds
      else if (col.children.isEmpty) null
      else {
        val a = col.lengths.array
        val out = new Array[Int](batchEnds.length)
        var acc = 0
        var slot = 0
        var k = 0
        while (k < batchEnds.length) {
          while (slot < batchEnds(k)) {
            acc += (a(slot * 4) & 0xff) | ((a(slot * 4 + 1) & 0xff) << 8) | ((a(slot * 4 + 2) & 0xff) << 16) |
              (a(slot * 4 + 3) << 24)
            slot += 1
          }
          out(k) = acc
          k += 1
        }
        out
      }
    own ++ col.children.flatMap(c => encode(c, childEnds))
  }

  /** Where a page starting at `start` that would end at `end` ends. From a batch start: at the
    * last batch end within `(start, end]`, or at `end` when the first batch alone is larger than a
    * page. From inside such a large batch: at `end`, but never past that batch's end, so the batch
    * owns its pages. */
  private def cut(start: Int, end: Int, batchEnds: Array[Int]): Int =
    if (batchEnds == null) end
    else {
      // The first batch end after `start`.
      var lo = 0
      var hi = batchEnds.length
      while (lo < hi) { val mid = (lo + hi) >>> 1; if (batchEnds(mid) <= start) lo = mid + 1 else hi = mid }
      val next = if (lo < batchEnds.length) batchEnds(lo) else end
      val atBatchStart = start == 0 || (lo > 0 && batchEnds(lo - 1) == start)
      if (!atBatchStart || next >= end) math.min(end, next)
      else {
        var last = lo
        while (last + 1 < batchEnds.length && batchEnds(last + 1) <= end) last += 1
        batchEnds(last)
      }
    }

  private def ownChunks(
      col: ColumnNodeBuffer,
      settings: ColumnWriteOptions,
      batchEnds: Array[Int]
  ): IndexedSeq[ChunkRecord] = {
    val rows = col.rowCount
    val hasNulls = col.nullCount > 0
    val allNull = rows > 0 && col.nullCount == rows
    col.field.ownStreamTypes.map {
      case StreamType.Validity =>
        if (!hasNulls) ChunkRecord.Empty
        else if (allNull) ChunkRecord.AllNull
        else bitmapChunk(col.validity.array, rows, settings)
      case StreamType.Offsets =>
        if (!lengthsNonZero(col)) ChunkRecord.Empty else lengthsChunk(col, settings)
      case StreamType.Data =>
        // An empty DATA chunk still reports the stripe's null count in its FullChunkDesc.
        val empty = ChunkRecord.Empty.copy(nullCount = col.nullCount)
        if (allNull || rows == 0) empty
        else if (col.isBool) boolDataChunk(col, hasNulls, settings)
        else if (col.isVariable) {
          if (col.data.length == 0) empty
          else withBloom(col, variableDataChunk(col, hasNulls, settings, batchEnds), settings)
        } else withBloom(col, fixedDataChunk(col, hasNulls, settings, batchEnds), settings)
    }
  }

  /** For a top-level column listed in `bloomFilterColumns` or with its own `bloomFilter` setting:
    * a split-block bloom filter of the stripe's non-null values, sized for their distinct count at
    * the column's false-positive rate, written after the DATA chunk with its CRC32. */
  private def withBloom(col: ColumnNodeBuffer, rec: ChunkRecord, settings: ColumnWriteOptions): ChunkRecord = {
    // Top-level buffers are named by their field alone (a top-level name may itself contain a dot).
    val topLevel = col.path == col.field.name
    if (!topLevel || !settings.bloomFilter) return rec
    val hashes = BloomHashes.of(col)
    val distinct = new io.fermion.core.encoding.LongDictionaryBuilder
    distinct.reset(math.min(hashes.length, 1 << 16))
    hashes.foreach(h => distinct.codeOf(h, Int.MaxValue))
    val bloom = io.fermion.core.bloom.SplitBlockBloomFilter.forValues(distinct.size, settings.bloomFilterFpp)
    hashes.foreach(bloom.insert)
    val bytes = bloom.toBytes
    val crc = new java.util.zip.CRC32
    crc.update(bytes)
    out.write(bytes)
    out.write(
      java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(crc.getValue.toInt).array()
    )
    rec.copy(bloomLength = bytes.length + 4)
  }

  private def alignedRows(bytesPerRow: Int, settings: ColumnWriteOptions): Int =
    math.max(8, (settings.pageSize / bytesPerRow) & ~7)

  private def lengthsNonZero(col: ColumnNodeBuffer): Boolean = {
    val a = col.lengths.array
    var i = 0
    val n = col.lengths.length
    while (i < n) { if (a(i) != 0) return true; i += 1 }
    false
  }

  private def bitmapChunk(bits: Array[Byte], rows: Int, settings: ColumnWriteOptions): ChunkRecord = {
    val start = out.position
    val perPage = settings.pageSize * 8
    var row = 0
    while (row < rows) {
      val n = math.min(perPage, rows - row)
      pages.writeBitmap(bits, row >>> 3, n, settings)
      row += n
    }
    ChunkRecord(start, out.position - start, allNull = false, 0, ValueStats.None, IndexedSeq.empty)
  }

  private def lengthsChunk(col: ColumnNodeBuffer, settings: ColumnWriteOptions): ChunkRecord = {
    val start = out.position
    val perPage = alignedRows(4, settings)
    var row = 0
    while (row < col.rowCount) {
      val n = math.min(perPage, col.rowCount - row)
      pages.writeFixed(col.lengths.array, row * 4, n, 4, settings)
      row += n
    }
    ChunkRecord(start, out.position - start, allNull = false, 0, ValueStats.None, IndexedSeq.empty)
  }

  private def nullsIn(col: ColumnNodeBuffer, row: Int, n: Int): Int = {
    if (col.nullCount == 0) return 0
    var c = 0
    var i = row
    while (i < row + n) { if (!Bits.get(col.validity.array, i)) c += 1; i += 1 }
    c
  }

  private def dataChunk(col: ColumnNodeBuffer)(writePages: ArrayBuffer[PageRecord] => Unit): ChunkRecord = {
    val start = out.position
    val recs = ArrayBuffer.empty[PageRecord]
    writePages(recs)
    val stats = recs.map(_.stats).reduceOption(_ merge _).getOrElse(ValueStats.None)
    ChunkRecord(start, out.position - start, allNull = false, col.nullCount, stats, recs.toIndexedSeq)
  }

  private def fixedDataChunk(
      col: ColumnNodeBuffer,
      hasNulls: Boolean,
      settings: ColumnWriteOptions,
      batchEnds: Array[Int]
  ): ChunkRecord =
    dataChunk(col) { recs =>
      val w = col.width
      val perPage = math.min(alignedRows(w, settings), settings.pageRows)
      var row = 0
      while (row < col.rowCount) {
        val n = cut(row, math.min(row + perPage, col.rowCount), batchEnds) - row
        val stats = PageStatistics.fixed(col.field.dataType, col.data.array, col.validity.array, hasNulls, row, n)
        val size = pages.writeFixed(col.data.array, row * w, n, w, settings)
        recs += PageRecord(size, n, nullsIn(col, row, n), stats)
        row += n
      }
    }

  private def boolDataChunk(col: ColumnNodeBuffer, hasNulls: Boolean, settings: ColumnWriteOptions): ChunkRecord =
    dataChunk(col) { recs =>
      val perPage = math.min(settings.pageSize * 8, settings.pageRows)
      var row = 0
      while (row < col.rowCount) {
        val n = math.min(perPage, col.rowCount - row)
        val stats = PageStatistics.bools(col.dataBits.array, col.validity.array, hasNulls, row, n)
        val size = pages.writeBitmap(col.dataBits.array, row >>> 3, n, settings)
        recs += PageRecord(size, n, nullsIn(col, row, n), stats)
        row += n
      }
    }

  /** Variable-width DATA pages hold whole values: a page ends at the first row boundary at or
    * past `pageSize` bytes, so one oversized value makes a page of its own. */
  private def variableDataChunk(
      col: ColumnNodeBuffer,
      hasNulls: Boolean,
      settings: ColumnWriteOptions,
      batchEnds: Array[Int]
  ): ChunkRecord =
    dataChunk(col) { recs =>
      val rows = col.rowCount
      val lens = new Array[Int](rows)
      val lb = col.lengths.array
      var i = 0
      while (i < rows) {
        lens(i) =
          (lb(i * 4) & 0xff) | ((lb(i * 4 + 1) & 0xff) << 8) | ((lb(i * 4 + 2) & 0xff) << 16) | (lb(i * 4 + 3) << 24)
        i += 1
      }
      var row = 0
      var byteStart = 0
      while (row < rows) {
        var end = row
        var bytes = 0L
        while (end < rows && (end == row || (bytes < settings.pageSize && end - row < settings.pageRows))) {
          bytes += lens(end); end += 1
        }
        val aligned = cut(row, end, batchEnds)
        while (end > aligned) { end -= 1; bytes -= lens(end) }
        val n = end - row
        val starts = new Array[Int](n)
        val pageLens = new Array[Int](n)
        val valid = new Array[Boolean](n)
        var k = 0
        var s = byteStart
        while (k < n) {
          starts(k) = s; pageLens(k) = lens(row + k); valid(k) = !hasNulls || Bits.get(col.validity.array, row + k)
          s += lens(row + k); k += 1
        }
        val stats = PageStatistics.prefixes(col.data.array, starts, pageLens, valid, n)
        val size = pages.writeVariable(col.data.array, starts, pageLens, valid, n, settings)
        recs += PageRecord(size, n, nullsIn(col, row, n), stats)
        byteStart += bytes.toInt
        row = end
      }
    }
}

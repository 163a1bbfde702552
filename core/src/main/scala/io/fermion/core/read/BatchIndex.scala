package io.fermion.core.read

import java.nio.{ByteBuffer, ByteOrder}

import io.fermion.core.encoding.PageValues
import io.fermion.core.errors.{FermionChecksumException, InvalidFermionFileException}
import io.fermion.core.layout.{BatchMetaBlock, FileLayout, FileLayout => L}

/** The batches of a batch-mode file: per stripe, the batch ids and lengths of its BATCH_META
  * chunks (decoded on demand), its batch count and min/max batch id from the batch index. Rows of
  * a batch are consecutive and never straddle a DATA page (docs/format.md 16.10). */
final private[core] class BatchIndex private (
    reader: FermionFileReader,
    val block: BatchMetaBlock,
    verifyChecksums: Boolean
) {
  private val path = reader.path
  private val decoded = new Array[(Array[Long], Array[Int])](block.numStripes)
  private lazy val pages = new PageDecoder(path, verifyChecksums && reader.footer.hasPageCrc)

  def numBatches(stripe: Int): Int = block.numBatches(stripe)
  def minBatchId(stripe: Int): Long = block.minBatchId(stripe)
  def maxBatchId(stripe: Int): Long = block.maxBatchId(stripe)

  /** Stripes whose batch ids may include `id`. */
  def mayHold(stripe: Int, id: Long): Boolean = id >= minBatchId(stripe) && id <= maxBatchId(stripe)

  /** The stripe's batch ids and lengths, in row order (their lengths add up to the stripe's rows). */
  def batches(stripe: Int): (Array[Long], Array[Int]) = synchronized {
    if (decoded(stripe) == null) {
      val n = block.numBatches(stripe)
      val ids = read(block.idsOffset(stripe), block.idsLength(stripe), n, 8, "batch ids")
      val lens = read(block.lengthsOffset(stripe), block.lengthsLength(stripe), n, 4, "batch lengths")
      val idArray = new Array[Long](n)
      val lenArray = new Array[Int](n)
      var total = 0L
      var i = 0
      while (i < n) {
        idArray(i) = ids.getLong(i * 8)
        lenArray(i) = lens.getInt(i * 4)
        if (lenArray(i) < 1)
          throw new InvalidFermionFileException(path, block.lengthsOffset(stripe), s"batch of ${lenArray(i)} rows")
        if (idArray(i) < minBatchId(stripe) || idArray(i) > maxBatchId(stripe))
          throw new InvalidFermionFileException(path, block.idsOffset(stripe), "batch id outside the stripe's min/max")
        total += lenArray(i)
        i += 1
      }
      if (total != reader.stripes.rowCount(stripe))
        throw new InvalidFermionFileException(
          path,
          block.lengthsOffset(stripe),
          s"batches of stripe $stripe hold $total rows, the stripe ${reader.stripes.rowCount(stripe)}"
        )
      decoded(stripe) = (idArray, lenArray)
    }
    decoded(stripe)
  }

  /** First row (within the stripe) of each batch of `stripe`, plus the stripe's rows at the end. */
  def batchStarts(stripe: Int): Array[Int] = {
    val lens = batches(stripe)._2
    val starts = new Array[Int](lens.length + 1)
    var i = 0
    while (i < lens.length) { starts(i + 1) = starts(i) + lens(i); i += 1 }
    starts
  }

  private def read(offset: Long, length: Long, n: Int, width: Int, what: String): ByteBuffer = {
    val out = ByteBuffer.allocate(n * width).order(ByteOrder.LITTLE_ENDIAN)
    if (length > 0) {
      val chunk = reader.input.readFully(offset, length.toInt)
      var got = 0
      pages.foreachPage(chunk, offset, PageValues.Fixed(width), n) { p =>
        out.put(p.bytes, p.off, p.len)
        got += p.valueCount
      }
      if (got != n) throw new InvalidFermionFileException(path, offset, s"$what chunk holds $got values, the index $n")
    } else if (n > 0) throw new InvalidFermionFileException(path, offset, s"$what chunk is empty for $n batches")
    out.flip()
    out
  }
}

private[core] object BatchIndex {

  /** The batch index of `reader`'s file, or None when it is not a batch-mode file. */
  def load(reader: FermionFileReader, verifyChecksums: Boolean): Option[BatchIndex] = {
    val f = reader.footer
    // By the settings bit alone: the metadata CRC covers it, while no CRC covers `minor` (a damaged
    // minor must not hide the batches; no writer before 1.3 sets the bit).
    if ((f.settings & L.Settings.BatchMode) == 0) return None
    val n = reader.numStripes
    val start =
      if (n == 0) FileLayout.HeaderSize.toLong else reader.stripes.dataOffset(n - 1) + reader.stripes.dataLength(n - 1)
    val end = reader.dataAreaEnd
    val size = BatchMetaBlock.size(n)
    if (end - start != size)
      throw new InvalidFermionFileException(
        reader.path,
        start,
        s"batch index takes ${end - start} bytes, expected $size"
      )
    val bytes = reader.input.readFully(start, size.toInt)
    if (verifyChecksums) {
      val crc = new java.util.zip.CRC32
      val body = bytes.duplicate()
      body.limit(body.position() + size.toInt - 4)
      crc.update(body)
      val stored = bytes.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(bytes.position() + size.toInt - 4)
      if (stored != crc.getValue.toInt)
        throw new FermionChecksumException(reader.path, start, "batch index", stored, crc.getValue.toInt)
    }
    val block = BatchMetaBlock.view(bytes, n).fold(
      why => throw new InvalidFermionFileException(reader.path, start, why),
      identity
    )
    var s = 0
    while (s < n) {
      val lo = reader.stripes.dataOffset(s)
      val hi = lo + reader.stripes.dataLength(s)
      def inside(o: Long, l: Long) = o >= lo && o + l <= hi
      if (
        block.numBatches(s) < 1 || block.numBatches(s) > reader.stripes.rowCount(s) ||
        !inside(block.idsOffset(s), block.idsLength(s)) || !inside(block.lengthsOffset(s), block.lengthsLength(s)) ||
        block.minBatchId(s) > block.maxBatchId(s)
      )
        throw new InvalidFermionFileException(reader.path, start, s"batch index entry of stripe $s is inconsistent")
      s += 1
    }
    Some(new BatchIndex(reader, block, verifyChecksums))
  }
}

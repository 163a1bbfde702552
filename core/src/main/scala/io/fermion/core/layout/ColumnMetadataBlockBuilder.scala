package io.fermion.core.layout

import java.nio.{ByteBuffer, ByteOrder}

/** Serialises one column's recorded chunks into CMB bytes (layout in [[ColumnMetadataBlock]]).
  * The payload is built with payload-relative offsets and then relocated by the size
  * of everything before it; here the final block-relative offsets are computed up front, which
  * yields the same bytes in one pass. */
private[core] object ColumnMetadataBlockBuilder {
  import ColumnMetadataBlock._

  /** The descriptor type a stream gets from its chunks (docs/format.md 6.3). */
  def descTypeOf(streamType: Int, chunks: IndexedSeq[ChunkRecord]): Int = streamType match {
    case StreamType.Validity =>
      if (chunks.forall(c => !c.allNull && c.length == 0)) DescType.UseDefault
      else if (chunks.forall(_.allNull)) DescType.ForceNull
      else DescType.Simple
    case StreamType.Offsets | StreamType.BatchMeta =>
      if (chunks.forall(_.length == 0)) DescType.UseDefault else DescType.Simple
    case _ =>
      if (chunks.forall(_.length == 0)) DescType.UseDefault else DescType.Full
  }

  /** True when the column needs no CMB at all: every stripe of its top-level VALIDITY is null. */
  def isAllNull(streamTypes: IndexedSeq[Int], chunks: IndexedSeq[IndexedSeq[ChunkRecord]]): Boolean =
    streamTypes.nonEmpty && streamTypes(0) == StreamType.Validity && chunks(0).forall(_.allNull)

  def build(
      streamTypes: IndexedSeq[Int],
      stripeRows: IndexedSeq[Int],
      chunks: IndexedSeq[IndexedSeq[ChunkRecord]]
  ): Array[Byte] = {
    val numStreams = streamTypes.length
    val numStripes = stripeRows.length
    val descTypes = streamTypes.indices.map(s => descTypeOf(streamTypes(s), chunks(s)))
    val metaSize = HeaderSize + numStripes * StripeMetaSize + numStreams * StreamMetaSize

    val chunksOffsets = new Array[Int](numStreams)
    var cursor = metaSize
    for (s <- 0 until numStreams) descTypes(s) match {
      case DescType.Simple => chunksOffsets(s) = cursor; cursor += numStripes * SimpleChunkDescSize
      case DescType.Full => chunksOffsets(s) = cursor; cursor += numStripes * FullChunkDescSize
      case _ => chunksOffsets(s) = 0
    }
    val poolStart = cursor
    val pagesTotal = (0 until numStreams).filter(descTypes(_) == DescType.Full)
      .map(s => chunks(s).map(c => if (c.pages.length > 1) c.pages.length else 0).sum).sum
    val total = poolStart + pagesTotal * PageMetaSize
    val b = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN)

    b.putInt(0, numStreams).putInt(4, numStripes)
    for (i <- 0 until numStripes) b.putInt(HeaderSize + i * StripeMetaSize, stripeRows(i))
    val streamDir = HeaderSize + numStripes * StripeMetaSize
    for (s <- 0 until numStreams) {
      val at = streamDir + s * StreamMetaSize
      b.put(at, descTypes(s).toByte).put(at + 1, streamTypes(s).toByte).putShort(at + 2, 0.toShort)
      b.putInt(at + 4, chunksOffsets(s))
    }

    var pool = poolStart
    for (s <- 0 until numStreams; st <- 0 until numStripes) {
      val c = chunks(s)(st)
      descTypes(s) match {
        case DescType.Simple =>
          val at = chunksOffsets(s) + st * SimpleChunkDescSize
          val len = if (c.allNull) FileLayout.AllNullChunkLength else c.length
          b.putLong(at, c.offset).putInt(at + 8, len.toInt).putInt(at + 12, 0)
        case DescType.Full =>
          val at = chunksOffsets(s) + st * FullChunkDescSize
          b.putLong(at, c.offset).putInt(at + 8, c.length.toInt).putInt(at + 12, c.stats.flags)
          b.putLong(at + 16, c.stats.min).putLong(at + 24, c.stats.max)
          b.putInt(at + 32, c.nullCount).putInt(at + 36, c.pages.length)
          if (c.pages.length > 1) {
            b.putInt(at + 40, pool)
            c.pages.foreach { p =>
              b.putInt(pool, p.size).putInt(pool + 4, p.rowCount).putLong(pool + 8, p.stats.min)
              b.putLong(pool + 16, p.stats.max).putInt(pool + 24, p.nullCount).putInt(pool + 28, p.stats.flags)
              pool += PageMetaSize
            }
          } else b.putInt(at + 40, 0)
          b.putInt(at + 44, c.bloomLength)
        case _ =>
      }
    }
    b.array()
  }
}

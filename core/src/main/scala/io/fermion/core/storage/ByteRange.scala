package io.fermion.core.storage

import scala.collection.mutable.ArrayBuffer

/** A byte range of a file to read. */
final private[core] case class ByteRange(offset: Long, length: Long) {
  def end: Long = offset + length
}

/** Merges ranges that lie closer than `maxGap` into one read, so that adjacent
  * streams, columns and stripes cost one request instead of many. The gap bytes are read and
  * discarded: on HDFS and object stores a request costs far more than a few hundred KiB. */
private[core] object RangeCoalescer {
  final case class Merged(range: ByteRange, members: IndexedSeq[ByteRange])

  def coalesce(ranges: Seq[ByteRange], maxGap: Long, maxMergedLength: Long): IndexedSeq[Merged] = {
    val sorted = ranges.filter(_.length > 0).sortBy(_.offset)
    val out = ArrayBuffer.empty[Merged]
    var start = -1L
    var end = -1L
    val members = ArrayBuffer.empty[ByteRange]
    def flush(): Unit =
      if (members.nonEmpty) { out += Merged(ByteRange(start, end - start), members.toIndexedSeq); members.clear() }
    sorted.foreach { r =>
      if (members.nonEmpty && r.offset - end <= maxGap && math.max(end, r.end) - start <= maxMergedLength) {
        end = math.max(end, r.end)
      } else {
        flush(); start = r.offset; end = r.end
      }
      members += r
    }
    flush()
    out.toIndexedSeq
  }
}

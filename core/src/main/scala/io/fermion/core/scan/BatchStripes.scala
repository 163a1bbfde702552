package io.fermion.core.scan

import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Where a scan that selects batches has anything to read: the stripes of batch-mode files whose
  * batch id range meets the selection, found on the planning side so that a lookup of a few
  * batches runs a few tasks instead of one per split of every file. */
private[scan] object BatchStripes {

  /** A stripe's bytes and the range of its batch ids. */
  final case class Stripe(offset: Long, length: Long, minBatchId: Long, maxBatchId: Long)

  /** Files whose stripes were looked up (their footers and batch indexes read once per JVM): a
    * data file never changes once written, so its path and length identify what was read. */
  private val MaxFiles = 16384
  private val cache = new java.util.LinkedHashMap[(String, Long), IndexedSeq[Stripe]](64, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[(String, Long), IndexedSeq[Stripe]]): Boolean =
      size() > MaxFiles
  }

  /** The stripes of `file` with their batch id ranges; none for a file without batches. */
  def of(file: SnapshotFile, conf: Configuration, options: ReaderOptions): IndexedSeq[Stripe] = {
    val key = (file.path, file.length)
    cache.synchronized(Option(cache.get(key))).getOrElse {
      val r = FermionFileReader.open(new Path(file.path), conf, options)
      val stripes =
        try r.batchIndex.toIndexedSeq.flatMap { index =>
            (0 until r.numStripes).map { s =>
              Stripe(r.stripes.dataOffset(s), r.stripes.dataLength(s), index.minBatchId(s), index.maxBatchId(s))
            }
          }
        finally r.close()
      cache.synchronized(cache.put(key, stripes))
      stripes
    }
  }

  /** One split per run of consecutive stripes of a file that may hold batches of `selection`. */
  def splits(
      files: IndexedSeq[SnapshotFile],
      selection: BatchSelection,
      conf: Configuration,
      options: ReaderOptions
  ): IndexedSeq[FileSplit] =
    files.flatMap { f =>
      val kept = of(f, conf, options).filter(s => selection.overlaps(s.minBatchId, s.maxBatchId))
      kept.foldLeft(List.empty[FileSplit]) {
        case (last :: rest, s) if last.start + last.length == s.offset =>
          last.copy(length = s.offset + s.length - last.start) :: rest
        case (acc, s) => FileSplit(f, s.offset, s.length) :: acc
      }.reverse
    }
}

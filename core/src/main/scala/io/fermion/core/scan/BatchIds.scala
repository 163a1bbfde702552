package io.fermion.core.scan

import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.roaringbitmap.longlong.Roaring64NavigableMap

/** Batch ids across a snapshot's batch-mode files. */
object BatchIds {

  /** A batch id of `ids` that some file of `snapshot` already holds, if any: stripes are ruled out
    * by their min/max batch id first, so only stripes whose id range overlaps `ids` are decoded. */
  def firstCollision(snapshot: Snapshot, ids: Roaring64NavigableMap, conf: Configuration): Option[Long] =
    if (ids.isEmpty) None
    else {
      val lo = ids.first()
      val hi = ids.last()
      snapshot.files.iterator.flatMap { f =>
        val r = FermionFileReader.open(new Path(f.path), conf, ReaderOptions())
        try r.batchIndex.toSeq.flatMap { index =>
            (0 until r.numStripes).iterator
              .filter(s => index.maxBatchId(s) >= lo && index.minBatchId(s) <= hi)
              .flatMap(s => index.batches(s)._1.find(ids.contains))
          }.headOption
        finally r.close()
      }.nextOption()
    }
}

package io.fermion.core.scan

import io.fermion.core.dataset.{FermionDataset, RowIdSegment}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Stable row id -> (fragment, row) for a snapshot, built from the manifest's row ids (and the row
  * id files it names) without reading data: one entry per run of consecutive ids, one per listed
  * id. An id may sit in several fragments: a row updated or compacted keeps its id in its new
  * fragment while its old copy stays in the old one, deleted; [[candidates]] returns them all and
  * the caller keeps the live one. */
final private[scan] class RowIdIndex private (
    /** Entries sorted by first id: first id, length, fragment, row of the first id in it. */
    firsts: Array[Long],
    lengths: Array[Long],
    fragments: Array[Long],
    rows: Array[Long]
) {

  /** The largest end (first + length) among entries 0..i: a backwards walk from an id's position
    * stops where no earlier entry can reach it. */
  private val reach: Array[Long] = {
    val r = new Array[Long](firsts.length)
    var max = Long.MinValue
    var i = 0
    while (i < r.length) { max = math.max(max, firsts(i) + lengths(i)); r(i) = max; i += 1 }
    r
  }

  def isEmpty: Boolean = firsts.isEmpty

  def entries: Int = firsts.length

  /** Every (fragment, row) holding `id`, deleted or not. */
  def candidates(id: Long): Seq[(Long, Long)] = {
    // The last entry starting at or before id.
    var i = java.util.Arrays.binarySearch(firsts, id) match {
      case k if k >= 0 =>
        var j = k; while (j + 1 < firsts.length && firsts(j + 1) == id) j += 1; j
      case k => -k - 2
    }
    var found = List.empty[(Long, Long)]
    while (i >= 0 && reach(i) > id) {
      if (id < firsts(i) + lengths(i)) found ::= (fragments(i) -> (rows(i) + id - firsts(i)))
      i -= 1
    }
    found
  }
}

private[scan] object RowIdIndex {

  def build(snapshot: Snapshot, conf: Configuration): RowIdIndex = {
    val dataset = new FermionDataset(new Path(snapshot.root), conf)
    val entries = scala.collection.mutable.ArrayBuffer.empty[(Long, Long, Long, Long)]
    snapshot.files.foreach { file =>
      file.rowIds.foreach { ids =>
        val sequence = dataset.rowIdSequence(ids, file.physicalRows)
        sequence.segments.indices.foreach { s =>
          val start = sequence.segmentStart(s)
          sequence.segments(s) match {
            case RowIdSegment.Run(first, length) => entries += ((first, length, file.fragmentId, start))
            case RowIdSegment.Values(values) =>
              var k = 0
              while (k < values.length) { entries += ((values(k), 1L, file.fragmentId, start + k)); k += 1 }
          }
        }
      }
    }
    val sorted = entries.sortBy(_._1)
    new RowIdIndex(
      sorted.map(_._1).toArray,
      sorted.map(_._2).toArray,
      sorted.map(_._3).toArray,
      sorted.map(_._4).toArray
    )
  }
}

package io.fermion.core.scan

import java.util.Locale

import io.fermion.core.read.filter.ColumnStripeStats
import io.fermion.core.schema.{FermionType, TypeWidening}
import org.apache.hadoop.conf.Configuration

/** Which columns hold their values in narrow slices per stripe (sorted or clustered keys, dates
  * of appended data): a filter by a set of keys on such a column rules out most stripes by their
  * statistics, where on a column whose every stripe spans most of its values it rules out none.
  * Told by the stripe statistics of a few of the snapshot's files. */
private[scan] object Clustering {

  /** Files whose statistics are read: spread over the snapshot's order, first and last included. */
  val FilesProbed = 8

  /** A column is clustered when its stripes span on average at most this share of the range of
    * values over all stripes probed (sorted keys in S stripes: 1/S; random keys: close to 1). */
  val MaxStripeShare = 0.25

  /** Of `names`, the flat integer-domain columns `scan` reads that are clustered over at least
    * [[MinStripes]] stripes. */
  def clustered(scan: Scan, names: Seq[String], conf: Configuration): Set[String] = {
    val wanted = names.map(_.toLowerCase(Locale.ROOT)).toSet
    val columns = scan.plan.columns.collect {
      case c: PlannedColumn.Stored if wanted(c.name.toLowerCase(Locale.ROOT)) && integral(c.request.dataType) => c
    }
    val files = probed(scan.snapshot.files)
    if (columns.isEmpty || files.isEmpty) return Set.empty
    val bounds = columns.map(_ => scala.collection.mutable.ArrayBuffer.empty[(Long, Long)])
    // Only these columns' metadata is read (not every column the scan reads), and no deletion file.
    val probe = scan.plan.copy(columns = columns, filter = None, filterFieldIds = Map.empty, filterTypes = Map.empty)
    files.foreach { f =>
      val opened = FragmentFiles.open(f.copy(deletion = None), probe, conf)
      try columns.indices.foreach { i =>
          val c = columns(i)
          opened.column(c.fieldId, c.name).foreach { case (k, col) =>
            val reader = opened.sources(k)
            if (TypeWidening.sameStatsDomain(reader.field(col).dataType, c.request.dataType))
              (0 until reader.numStripes).foreach { s =>
                val stats = ColumnStripeStats.of(
                  reader.field(col).dataType,
                  reader.columnMetadata(col),
                  s,
                  reader.stripes.rowCount(s)
                )
                stats.bounds.filter(_.integerBounds).foreach(b => bounds(i) += ((b.min, b.max)))
              }
          }
        }
      finally opened.close()
    }
    columns.indices.filter(i => narrow(bounds(i).toSeq)).map(i => columns(i).name).toSet
  }

  /** At least this many stripes with bounds: fewer cannot tell a clustered column from another. */
  val MinStripes = 4

  /** Whether stripes with these bounds each span a small share of their union. */
  def narrow(stripes: Seq[(Long, Long)]): Boolean = stripes.size >= MinStripes && {
    // In doubles: a span of signed longs may not fit in one.
    val lo = stripes.iterator.map(_._1.toDouble).min
    val hi = stripes.iterator.map(_._2.toDouble).max
    val mean = stripes.iterator.map { case (a, b) => b.toDouble - a.toDouble + 1 }.sum / stripes.size
    mean <= MaxStripeShare * (hi - lo + 1)
  }

  private def integral(t: FermionType): Boolean =
    !FermionType.isNested(t) && !FermionType.isVariableWidth(t) && t != FermionType.Bool && t != FermionType.Float32 &&
      t != FermionType.Float64

  private def probed(files: IndexedSeq[SnapshotFile]): IndexedSeq[SnapshotFile] = spread(files, FilesProbed)

  /** Up to `n` of `items`, spread evenly over them, first and last included. */
  def spread[A](items: IndexedSeq[A], n: Int): IndexedSeq[A] =
    if (items.size <= n) items
    else if (n <= 1) items.take(n)
    else (0 until n).map(i => items((i.toLong * (items.size - 1) / (n - 1)).toInt))
}

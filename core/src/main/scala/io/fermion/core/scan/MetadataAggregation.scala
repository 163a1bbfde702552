package io.fermion.core.scan

import java.util.Locale

import io.fermion.core.read.{FermionFileReader, FileAggregates, ReaderOptions}
import io.fermion.core.schema.FermionType
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** An aggregate over a whole snapshot that file metadata answers without reading data pages. */
sealed trait MetadataAggregate extends Serializable

object MetadataAggregate {
  case object CountRows extends MetadataAggregate

  /** Non-null values of a flat top-level column. */
  final case class CountValues(column: String) extends MetadataAggregate

  /** Min / max of a column whose statistics are exact (see [[FileAggregates.exactMinMax]]), in the
    * column's int64 statistics domain (days, micros, unscaled decimals, 0/1 for booleans). */
  final case class Min(column: String) extends MetadataAggregate
  final case class Max(column: String) extends MetadataAggregate
}

/** Aggregates answered from footers and CMB statistics: one [[AggregateTask]] per data file, each
  * giving partial results that the caller combines (sum of counts, min of mins, max of maxes).
  * Only possible when the files describe the version's rows exactly: no deleted rows, no columns
  * in files of their own.
  * {{{
  * MetadataAggregation.plan(snapshot, Seq(CountRows, Max("ts"))).map { plan =>
  *   plan.tasks.map(t => plan.compute(t, conf))   // per file: Seq(Some(rows), Some(maxTs))
  * }
  * }}}
  */
final case class MetadataAggregation(
    root: String,
    aggregates: IndexedSeq[MetadataAggregate],
    /** Field id (datasets) of each aggregated column by lower-case name; loose files match by name. */
    fieldIds: Map[String, Int],
    byFieldId: Boolean,
    options: ReaderOptions,
    tasks: IndexedSeq[AggregateTask]
) {

  /** The partial result of each aggregate over one file: counts are always present; a min or max
    * is None when the file holds no value of the column. */
  def compute(task: AggregateTask, conf: Configuration): IndexedSeq[Option[Long]] = {
    // Opened for the aggregated columns alone (through a wide file's column directory).
    val reader =
      FermionFileReader.openColumns(
        new Path(task.file),
        conf,
        options,
        task.length,
        task.columns.values.filter(_ >= 0).toSeq
      )
    try aggregates.map {
        case MetadataAggregate.CountRows => Some(FileAggregates.rowCount(reader))
        case MetadataAggregate.CountValues(c) =>
          Some(column(reader, task, c).map(FileAggregates.nonNullCount(reader, _)).getOrElse(0L))
        case MetadataAggregate.Min(c) => column(reader, task, c).flatMap(FileAggregates.minMax(reader, _)).map(_._1)
        case MetadataAggregate.Max(c) => column(reader, task, c).flatMap(FileAggregates.minMax(reader, _)).map(_._2)
      }
    finally reader.close()
  }

  /** The column of the file: where the manifest places it when the node there has the field id,
    * nowhere when it places it in no column of the file, else found in the file's schema. */
  private def column(reader: FermionFileReader, task: AggregateTask, name: String): Option[Int] =
    if (byFieldId)
      fieldIds.get(name.toLowerCase(Locale.ROOT)).flatMap { id =>
        task.columns.get(id) match {
          case Some(-1) => None
          case Some(c) if reader.field(c).fieldId == id => Some(c)
          case _ => Some(reader.schema.fields.indexWhere(_.fieldId == id)).filter(_ >= 0)
        }
      }
    else reader.schema.indexOf(name)
}

/** One data file of a [[MetadataAggregation]]: its path, its length when known (-1: not known), and
  * the column of each aggregated field in it, by field id, as the manifest places them (-1: in no
  * column of the file). */
final case class AggregateTask(file: String, length: Long = -1L, columns: Map[Int, Int] = Map.empty)

object MetadataAggregation {

  /** The plan, or None when metadata cannot answer: rows deleted or columns added as files, an
    * unknown or nested column, a min/max of a type without exact statistics. */
  def plan(
      snapshot: Snapshot,
      aggregates: Seq[MetadataAggregate],
      options: ReaderOptions = ReaderOptions()
  ): Option[MetadataAggregation] = {
    val schema = snapshot.schema.getOrElse(return None)
    // Files must describe the rows: no deletions, no column files; and without files an engine would
    // combine no partial counts into null instead of 0.
    if (snapshot.hasDeletionsOrColumnFiles || snapshot.files.isEmpty) return None
    // Partition columns are not in the files: their statistics would read as all-null.
    def flat(c: String) = schema.indexOf(c).map(schema.fields).filterNot(f =>
      FermionType.isNested(f.dataType) || snapshot.partitionIndex(f.name).nonEmpty
    )
    // A column widened from dates or to a larger decimal scale has files whose statistics are in
    // the old type's domain (days, unscaled values): not comparable, so those are read instead.
    val widened =
      snapshot.manifest.exists(m => (m.readerFeatures & io.fermion.core.dataset.Manifest.FeatureTypeWidening) != 0)
    def exact(f: io.fermion.core.schema.FermionField) =
      FileAggregates.exactMinMax(f.dataType) && !(widened && (f.dataType match {
        case _: FermionType.Decimal | FermionType.Timestamp(false) => true
        case _ => false
      }))
    val ok = aggregates.forall {
      case MetadataAggregate.CountRows => true
      case MetadataAggregate.CountValues(c) => flat(c).nonEmpty
      case MetadataAggregate.Min(c) => flat(c).exists(exact)
      case MetadataAggregate.Max(c) => flat(c).exists(exact)
    }
    if (!ok) return None
    val used = aggregates.collect {
      case MetadataAggregate.CountValues(c) => c
      case MetadataAggregate.Min(c) => c
      case MetadataAggregate.Max(c) => c
    }.map(_.toLowerCase(Locale.ROOT)).toSet
    val ids = snapshot.columnIds.getOrElse(Map.empty).filter { case (k, _) => used.contains(k) }
    Some(MetadataAggregation(
      snapshot.root,
      aggregates.toIndexedSeq,
      ids,
      snapshot.isDataset,
      options,
      snapshot.files.map { f =>
        AggregateTask(
          f.path,
          f.length,
          ids.values.flatMap(id => f.position(id).map(p => id -> p.collect { case (0, c) => c }.getOrElse(-1))).toMap
        )
      }
    ))
  }
}

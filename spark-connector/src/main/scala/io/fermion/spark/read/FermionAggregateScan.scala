package io.fermion.spark.read

import io.fermion.core.read.{FermionFileReader, FileAggregates, ReaderOptions}
import io.fermion.core.dataset.TableSnapshot
import io.fermion.spark.{FermionTableSchema, SerializableHadoopConf, SparkTypeMapping}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.expressions.NamedReference
import org.apache.spark.sql.connector.expressions.aggregate.{AggregateFunc, Aggregation, Count, CountStar, Max, Min}
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReader, PartitionReaderFactory, Scan}
import org.apache.spark.sql.types._

/** One aggregate Fermion answers from metadata: COUNT(*), COUNT(col), MIN(col), MAX(col). */
sealed trait MetadataAggregate extends Serializable { def outputType: DataType }
object MetadataAggregate {
  final case class CountRows() extends MetadataAggregate { def outputType: DataType = LongType }
  final case class CountColumn(column: String) extends MetadataAggregate { def outputType: DataType = LongType }
  final case class MinOf(column: String, outputType: DataType) extends MetadataAggregate
  final case class MaxOf(column: String, outputType: DataType) extends MetadataAggregate

  /** The plan for an aggregation without GROUP BY over flat top-level columns, or None. */
  def plan(agg: Aggregation, schema: StructType): Option[IndexedSeq[MetadataAggregate]] = {
    if (agg.groupByExpressions().nonEmpty) return None
    def col(f: AggregateFunc): Option[StructField] = f.children().headOption.collect {
      case r: NamedReference if r.fieldNames().length == 1 =>
        schema.fields.find(_.name.equalsIgnoreCase(r.fieldNames()(0)))
    }.flatten
    def exact(f: StructField) =
      scala.util.Try(SparkTypeMapping.toFermionField(f).dataType).toOption.exists(FileAggregates.exactMinMax)
    val parts = agg.aggregateExpressions().toIndexedSeq.map {
      case _: CountStar => Some(CountRows())
      case c: Count if !c.isDistinct =>
        col(c).filter(f =>
          !f.dataType.isInstanceOf[StructType] && !f.dataType.isInstanceOf[ArrayType] &&
            !f.dataType.isInstanceOf[MapType]
        ).map(f => CountColumn(f.name))
      case m: Min => col(m).filter(exact).map(f => MinOf(f.name, f.dataType))
      case m: Max => col(m).filter(exact).map(f => MaxOf(f.name, f.dataType))
      case _ => None
    }
    if (parts.forall(_.isDefined)) Some(parts.flatten) else None
  }
}

/** The scan that replaces reading data when every aggregate is answered from metadata: one
  * partial result row per file; Spark combines them (sum of counts, min of mins, ...). */
final class FermionAggregateScan(
    snapshot: TableSnapshot,
    aggregates: IndexedSeq[MetadataAggregate],
    readerOptions: ReaderOptions
) extends Scan with Batch {
  override def readSchema(): StructType =
    StructType(aggregates.zipWithIndex.map { case (a, i) => StructField(s"agg$i", a.outputType) })
  override def description(): String = s"FermionScan ${snapshot.root} MetadataAggregates: ${aggregates.mkString(", ")}"
  override def toBatch: Batch = this

  /** One row per file, answered from metadata: nothing to batch. */
  override def columnarSupportMode(): Scan.ColumnarSupportMode = Scan.ColumnarSupportMode.UNSUPPORTED

  override def planInputPartitions(): Array[InputPartition] =
    snapshot.files.map(f =>
      FermionInputPartition(IndexedSeq(FileSplit(f.path, 0, f.length, f.length, f.fragmentId))): InputPartition
    ).toArray

  /** Dataset columns are found in files by field id (a renamed column keeps its id). */
  private val columnIds: Map[String, Int] = snapshot.columnIds.getOrElse(Map.empty)

  override def createReaderFactory(): PartitionReaderFactory = {
    import MetadataAggregate._
    // Only the aggregated columns' ids travel with the tasks.
    val used = aggregates.collect { case CountColumn(c) => c; case MinOf(c, _) => c; case MaxOf(c, _) => c }.map(
      _.toLowerCase(java.util.Locale.ROOT)
    ).toSet
    new FermionAggregateReaderFactory(
      aggregates,
      columnIds.filter { case (k, _) => used.contains(k) },
      SerializableHadoopConf.broadcast(),
      readerOptions
    )
  }
}

final class FermionAggregateReaderFactory(
    aggregates: IndexedSeq[MetadataAggregate],
    columnIds: Map[String, Int],
    conf: org.apache.spark.broadcast.Broadcast[SerializableHadoopConf],
    readerOptions: ReaderOptions
) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new PartitionReader[InternalRow] {
      private val file = partition.asInstanceOf[FermionInputPartition].splits.head.file
      private var done = false
      private lazy val row: InternalRow = {
        val reader = FermionFileReader.open(new Path(file), conf.value.value, readerOptions)
        try
          new GenericInternalRow(aggregates.map(a => FermionAggregateReaderFactory.value(reader, a, columnIds)).toArray)
        finally reader.close()
      }
      override def next(): Boolean = { val r = !done; done = true; r }
      override def get(): InternalRow = row
      override def close(): Unit = ()
    }
}

object FermionAggregateReaderFactory {
  import MetadataAggregate._

  private def column(reader: FermionFileReader, name: String, ids: Map[String, Int]): Option[Int] =
    ids.get(name.toLowerCase(java.util.Locale.ROOT)) match {
      case Some(id) => Some(reader.schema.fields.indexWhere(_.fieldId == id)).filter(_ >= 0)
      case None => reader.schema.indexOf(name)
    }

  def value(reader: FermionFileReader, a: MetadataAggregate, ids: Map[String, Int]): Any = a match {
    case CountRows() => FileAggregates.rowCount(reader)
    case CountColumn(c) => column(reader, c, ids).map(FileAggregates.nonNullCount(reader, _)).getOrElse(0L)
    case MinOf(c, t) =>
      column(reader, c, ids).flatMap(FileAggregates.minMax(reader, _)).map(mm => internal(mm._1, t)).orNull
    case MaxOf(c, t) =>
      column(reader, c, ids).flatMap(FileAggregates.minMax(reader, _)).map(mm => internal(mm._2, t)).orNull
  }

  /** A statistics value in Spark's internal representation of `t`. */
  private def internal(v: Long, t: DataType): Any = t match {
    case BooleanType => v != 0
    case ByteType => v.toByte
    case ShortType => v.toShort
    case IntegerType | DateType => v.toInt
    case LongType | TimestampType | TimestampNTZType => v
    case d: DecimalType => Decimal(v, d.precision, d.scale)
  }
}

package io.fermion.spark.read

import io.fermion.core.read.ReaderOptions
import io.fermion.core.scan.{AggregateTask, MetadataAggregate, MetadataAggregation, Snapshot}
import io.fermion.spark.SerializableHadoopConf
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.expressions.NamedReference
import org.apache.spark.sql.connector.expressions.aggregate.{AggregateFunc, Aggregation, Count, CountStar, Max, Min}
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReader, PartitionReaderFactory, Scan}
import org.apache.spark.sql.types._

/** The scan that replaces reading data when the core answers every aggregate from file metadata
  * ([[MetadataAggregation]]): one partial result row per file; Spark combines them (sum of
  * counts, min of mins, ...). */
final class MetadataAggregates private (plan: MetadataAggregation, outputTypes: IndexedSeq[DataType])
    extends Scan with Batch {
  override def readSchema(): StructType =
    StructType(outputTypes.zipWithIndex.map { case (t, i) => StructField(s"agg$i", t) })
  override def description(): String = s"FermionScan ${plan.root} MetadataAggregates: ${plan.aggregates.mkString(", ")}"
  override def toBatch: Batch = this

  /** One row per file, answered from metadata: nothing to batch. */
  override def columnarSupportMode(): Scan.ColumnarSupportMode = Scan.ColumnarSupportMode.UNSUPPORTED

  override def planInputPartitions(): Array[InputPartition] =
    plan.tasks.map(t => MetadataAggregatePartition(t): InputPartition).toArray

  override def createReaderFactory(): PartitionReaderFactory =
    new MetadataAggregateReaderFactory(plan, outputTypes, SerializableHadoopConf.broadcast())
}

object MetadataAggregates {

  /** The scan for an aggregation without GROUP BY over flat top-level columns, or None. */
  def plan(
      agg: Aggregation,
      schema: StructType,
      snapshot: Snapshot,
      options: ReaderOptions
  ): Option[MetadataAggregates] = {
    if (agg.groupByExpressions().nonEmpty) return None
    def column(f: AggregateFunc): Option[StructField] = f.children().toSeq match {
      case Seq(r: NamedReference) if r.fieldNames().length == 1 =>
        schema.fields.find(_.name.equalsIgnoreCase(r.fieldNames()(0)))
      case _ => None
    }
    val parts: IndexedSeq[Option[(MetadataAggregate, DataType)]] = agg.aggregateExpressions().toIndexedSeq.map {
      case _: CountStar => Some(MetadataAggregate.CountRows -> LongType)
      case c: Count if !c.isDistinct => column(c).map(f => MetadataAggregate.CountValues(f.name) -> LongType)
      case m: Min => column(m).map(f => MetadataAggregate.Min(f.name) -> f.dataType)
      case m: Max => column(m).map(f => MetadataAggregate.Max(f.name) -> f.dataType)
      case _ => None
    }
    if (!parts.forall(_.isDefined)) return None
    MetadataAggregation.plan(snapshot, parts.flatten.map(_._1), options).map(p =>
      new MetadataAggregates(p, parts.flatten.map(_._2))
    )
  }

  /** A statistics value in Spark's internal representation of `t`. */
  private[read] def internal(v: Long, t: DataType): Any = t match {
    case BooleanType => v != 0
    case ByteType => v.toByte
    case ShortType => v.toShort
    case IntegerType | DateType => v.toInt
    case LongType | TimestampType | TimestampNTZType => v
    case d: DecimalType => Decimal(v, d.precision, d.scale)
  }
}

final case class MetadataAggregatePartition(task: AggregateTask) extends InputPartition

final class MetadataAggregateReaderFactory(
    plan: MetadataAggregation,
    outputTypes: IndexedSeq[DataType],
    conf: Broadcast[SerializableHadoopConf]
) extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new PartitionReader[InternalRow] {
      private val task = partition.asInstanceOf[MetadataAggregatePartition].task
      private var done = false
      private lazy val row: InternalRow = {
        val values = plan.compute(task, conf.value.value)
        new GenericInternalRow(values.zip(outputTypes).map { case (v, t) =>
          v.map(MetadataAggregates.internal(_, t)).orNull
        }.toArray)
      }
      override def next(): Boolean = { val r = !done; done = true; r }
      override def get(): InternalRow = row
      override def close(): Unit = ()
    }
}

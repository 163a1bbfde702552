package io.fermion.spark.read

import io.fermion.core.scan.{ReadPlan, ScanTask}
import io.fermion.spark.SerializableHadoopConf
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch

/** One task of a core scan. */
final case class FermionInputPartition(task: ScanTask) extends InputPartition

/** Serialised to executors with the scan's [[ReadPlan]] (only the columns it reads); creates the
  * columnar reader of each partition. */
final class FermionPartitionReaderFactory(
    plan: ReadPlan,
    readSchema: StructType,
    fileMetadata: Array[Boolean],
    conf: Broadcast[SerializableHadoopConf]
) extends PartitionReaderFactory {
  override def supportColumnarReads(partition: InputPartition): Boolean = true

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    throw new UnsupportedOperationException("Fermion scans are columnar")

  override def createColumnarReader(partition: InputPartition): PartitionReader[ColumnarBatch] =
    new FermionColumnarReader(
      plan,
      partition.asInstanceOf[FermionInputPartition].task,
      readSchema,
      fileMetadata,
      conf.value.value
    )
}

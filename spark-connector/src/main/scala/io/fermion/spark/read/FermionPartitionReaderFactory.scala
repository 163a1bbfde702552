package io.fermion.spark.read

import io.fermion.core.read.ReaderOptions
import io.fermion.core.expr.FilterExpr
import io.fermion.spark.SerializableHadoopConf
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch

/** Serialised to executors; creates the columnar reader of each partition. Reads are columnar
  * only: Spark consumes the Arrow-backed batches directly. */
final class FermionPartitionReaderFactory(
    readSchema: StructType,
    readFieldIds: Option[IndexedSeq[Int]],
    columnIds: Option[Map[String, Int]],
    datasetRoot: String,
    filter: Option[FilterExpr],
    conf: org.apache.spark.broadcast.Broadcast[SerializableHadoopConf],
    readerOptions: ReaderOptions,
    limit: Option[Int] = None
) extends PartitionReaderFactory {

  override def supportColumnarReads(partition: InputPartition): Boolean = true

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    throw new UnsupportedOperationException("Fermion scans are columnar")

  override def createColumnarReader(partition: InputPartition): PartitionReader[ColumnarBatch] =
    new FermionColumnarPartitionReader(
      partition.asInstanceOf[FermionInputPartition],
      readSchema,
      readFieldIds,
      columnIds,
      datasetRoot,
      filter,
      conf.value.value,
      readerOptions,
      limit
    )
}

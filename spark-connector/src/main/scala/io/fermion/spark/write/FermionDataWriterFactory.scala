package io.fermion.spark.write

import io.fermion.core.dataset.FermionDataset
import io.fermion.core.schema.FermionSchema
import io.fermion.core.write.WriterOptions
import io.fermion.spark.SerializableHadoopConf
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory}
import org.apache.spark.sql.types.StructType

/** Serialised to executors; each task attempt writes a new data file of its own. */
final class FermionDataWriterFactory(
    path: String,
    schema: StructType,
    fermionSchema: FermionSchema,
    options: WriterOptions,
    conf: org.apache.spark.broadcast.Broadcast[SerializableHadoopConf],
    batchKey: Option[Int] = None,
    /** Partitioned datasets: the rows' full schema and the partition columns' ordinals in it
      * (`schema` and `fermionSchema` are then the data columns, `batchKey` an ordinal among them). */
    partitioned: Option[(StructType, IndexedSeq[Int])] = None
) extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] = {
    val dataset = new FermionDataset(new Path(path), conf.value.value)
    def open(): FermionDataWriter = {
      val (relative, file) = dataset.newDataFile()
      new FermionDataWriter(relative, file, schema, fermionSchema, options, conf.value.value, None, batchKey)
    }
    partitioned match {
      case None => open()
      case Some((full, ordinals)) =>
        new PartitionedDataWriter(full, ordinals, () => open(), p => dataset.fs.delete(dataset.resolvePath(p), false))
    }
  }
}

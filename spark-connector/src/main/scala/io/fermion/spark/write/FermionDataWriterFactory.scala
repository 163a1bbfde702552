package io.fermion.spark.write

import io.fermion.core.table.DirectoryCommitProtocol
import io.fermion.core.write.WriterOptions
import io.fermion.spark.SerializableHadoopConf
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory}
import org.apache.spark.sql.types.StructType

/** Serialised to executors; each task gets a writer for its own staged file. */
final class FermionDataWriterFactory(path: String, jobId: String, schema: StructType, options: WriterOptions, conf: SerializableHadoopConf)
    extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] = {
    val protocol = new DirectoryCommitProtocol(new Path(path), jobId, conf.value)
    new FermionDataWriter(protocol, protocol.taskFile(partitionId, taskId), schema, options, conf.value)
  }
}

package io.fermion.spark.write

import io.fermion.core.table.DirectoryCommitProtocol
import io.fermion.core.write.WriterOptions
import io.fermion.spark.SerializableHadoopConf
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.connector.write.{BatchWrite, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.types.StructType

/** The driver side of a write: sets up the staging area, and on commit moves the files of the
  * committed tasks into the table (core's [[DirectoryCommitProtocol]]); on abort removes them. */
final class FermionBatchWrite(path: String, schema: StructType, options: WriterOptions, overwrite: Boolean, queryId: String, conf: SerializableHadoopConf)
    extends BatchWrite {
  private val jobId = queryId.replaceAll("[^A-Za-z0-9_-]", "")
  private def protocol = new DirectoryCommitProtocol(new Path(path), jobId, conf.value)

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory = {
    protocol.setupJob()
    new FermionDataWriterFactory(path, jobId, schema, options, conf)
  }

  override def useCommitCoordinator(): Boolean = true

  override def commit(messages: Array[WriterCommitMessage]): Unit =
    protocol.commitJob(messages.toSeq.collect { case m: FermionCommitMessage => m.fileName -> m.rows }, overwrite)

  override def abort(messages: Array[WriterCommitMessage]): Unit = protocol.abortJob()
}

/** What a task reports to the driver: the staged file it wrote. */
final case class FermionCommitMessage(fileName: String, rows: Long, bytes: Long) extends WriterCommitMessage

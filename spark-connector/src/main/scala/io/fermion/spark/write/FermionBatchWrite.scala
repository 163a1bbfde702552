package io.fermion.spark.write

import io.fermion.core.dataset.{DataFile, FermionDataset, Fragment, Operation}
import io.fermion.core.schema.FermionSchema
import io.fermion.spark.SerializableHadoopConf
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.connector.write.{BatchWrite, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.types.StructType

/** The driver side of a write: tasks write new data files under `data/` (invisible until a
  * manifest references them); the job commit makes each non-empty file a fragment and commits an
  * append or overwrite as the dataset's next version (core's [[FermionDataset.commit]]), retrying
  * over concurrent compatible commits. On abort the files are deleted. */
final class FermionBatchWrite(
    path: String,
    schema: StructType,
    fermionSchema: FermionSchema,
    options: io.fermion.core.write.WriterOptions,
    overwrite: Boolean,
    latestVersion: Long,
    conf: SerializableHadoopConf,
    datasetConfig: Map[String, String] = Map.empty
) extends BatchWrite {
  private val readVersion = latestVersion

  private def dataset = new FermionDataset(new Path(path), conf.value)

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory = {
    dataset.checkCommitStore() // before any task writes
    new FermionDataWriterFactory(path, schema, fermionSchema, options, SerializableHadoopConf.broadcast(conf))
  }

  override def useCommitCoordinator(): Boolean = true

  override def commit(messages: Array[WriterCommitMessage]): Unit = {
    val written = messages.toSeq.collect { case m: FermionCommitMessage => m }
    val ds = dataset
    val (withRows, empty) = written.partition(_.rows > 0)
    empty.foreach(m => ds.fs.delete(ds.resolvePath(m.relativePath), false))
    val topIds = fermionSchema.fields.map(_.fieldId)
    val fragments =
      withRows.map(m => Fragment(0, m.rows, IndexedSeq(DataFile(m.relativePath, topIds)), None)).toIndexedSeq
    val op = if (overwrite || readVersion == 0) {
      if (readVersion == 0) Operation.Append(fermionSchema, fragments)
      else Operation.Overwrite(fermionSchema, fragments)
    } else Operation.Append(fermionSchema, fragments)
    // Dataset settings (stable row ids) are chosen when the dataset is created or overwritten.
    val config = if (readVersion == 0 || overwrite) datasetConfig else Map.empty[String, String]
    try ds.commit(readVersion, op, config)
    catch { case t: Throwable => withRows.foreach(m => ds.fs.delete(ds.resolvePath(m.relativePath), false)); throw t }
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit = {
    val ds = dataset
    messages.toSeq.collect { case m: FermionCommitMessage => m }.foreach(m =>
      ds.fs.delete(ds.resolvePath(m.relativePath), false)
    )
  }
}

/** What a task reports to the driver: the data file it wrote (relative to the dataset root). */
final case class FermionCommitMessage(relativePath: String, rows: Long, bytes: Long) extends WriterCommitMessage

package io.fermion.spark.write

import io.fermion.core.dataset.{FermionDataset, Operation}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}

/** A Structured Streaming sink (`writeStream.format("fermion")`): every micro-batch (epoch) is
  * written as a batch write writes (new data files, invisible until committed) and committed as
  * one version: an append, or in complete mode an overwrite. Exactly once: the commit records the
  * epoch as the query's step in the dataset (core's [[FermionDataset.commitStep]], keyed by the
  * query id Spark keeps in the checkpoint), so an epoch that Spark replays after a crash between
  * the dataset's commit and its own checkpoint commit adds nothing; its files are deleted. */
final class FermionStreamingWrite(path: String, batch: FermionBatchWrite, intent: WriteIntent, queryId: String)
    extends StreamingWrite {
  if (batch.batchKey.nonEmpty)
    throw new UnsupportedOperationException(s"batchKey is not supported in streaming writes yet ('$path')")
  if (intent != WriteIntent.Append && intent != WriteIntent.Overwrite)
    throw new UnsupportedOperationException(s"a streaming write appends or, in complete mode, overwrites ('$path')")

  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory =
    new FermionStreamingWriterFactory(batch.createBatchWriterFactory(info))

  override def useCommitCoordinator(): Boolean = true

  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit = {
    val written = FermionCommitMessage.files(messages)
    val fragments = batch.fragmentsOf(written)
    val overwrite = intent == WriteIntent.Overwrite
    if (fragments.isEmpty && !overwrite) return // nothing to add; a replay of an empty epoch adds nothing either
    val ds = new FermionDataset(new Path(path), io.fermion.spark.FermionTableSchema.hadoopConf())
    val op =
      if (overwrite) Operation.Overwrite(batch.schemaWritten, fragments, batch.partitionSpec)
      else Operation.Append(batch.schemaWritten, fragments, batch.partitionSpec)
    // Settings given with the write apply only where it creates or replaces the dataset (core decides).
    val committed =
      try ds.commitStep(op, queryId, epochId, batch.datasetConfig)
      catch { case t: Throwable => batch.removeFiles(written); throw t }
    if (committed.isEmpty) batch.removeFiles(written) // this epoch is in the dataset already
  }

  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
    batch.removeFiles(FermionCommitMessage.files(messages))
}

/** Serialised to executors: a batch write's writer per task and epoch (each writes its own file). */
final class FermionStreamingWriterFactory(files: DataWriterFactory) extends StreamingDataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    files.createWriter(partitionId, taskId)
}

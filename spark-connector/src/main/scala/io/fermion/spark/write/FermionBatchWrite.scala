package io.fermion.spark.write

import io.fermion.core.dataset.{DataFile, FermionDataset, Fragment, Operation}
import io.fermion.core.schema.FermionSchema
import io.fermion.spark.SerializableHadoopConf
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.connector.write.{BatchWrite, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.types.StructType

/** The driver side of a write: tasks write new data files under `data/` (invisible until a
  * manifest references them); the job commit makes each non-empty file a fragment and commits the
  * write's [[WriteIntent]] (append, create, overwrite, compact) as the dataset's next version
  * (core's [[FermionDataset.commit]]), retrying over concurrent compatible commits. The existence
  * check of a create and the truncation of an overwrite are part of that one atomic commit. On
  * abort the files are deleted. */
final class FermionBatchWrite(
    path: String,
    schema: StructType,
    fermionSchema: FermionSchema,
    options: io.fermion.core.write.WriterOptions,
    intent: WriteIntent,
    latestVersion: Long,
    conf: SerializableHadoopConf,
    /** Dataset settings (stable row ids, stored write options) for a write that creates or replaces it. */
    private[write] val datasetConfig: Map[String, String] = Map.empty,
    onCommit: Option[() => Unit] = None,
    /** Batch mode: the batch key's ordinal in the written rows. */
    private[write] val batchKey: Option[Int] = None,
    /** The version the write started from (batch ids must not collide with its batches). */
    snapshot: Option[io.fermion.core.scan.Snapshot] = None,
    /** A partitioned dataset's write: `schema` is then the data columns (what files hold). */
    partitioning: Option[FermionBatchWrite.Partitioning] = None,
    /** An append with `mergeSchema`: the dataset's schema with the data's new columns and wider
      * types, committed in the same version as the rows. */
    evolvedSchema: Option[FermionSchema] = None
) extends BatchWrite {

  /** A creation commits over version 0 (no dataset), the others over the latest version when the
    * write was planned. */
  private val readVersion = if (intent == WriteIntent.Create) 0L else latestVersion

  private def dataset = new FermionDataset(new Path(path), conf.value)

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory = {
    dataset.checkCommitStore() // before any task writes
    new FermionDataWriterFactory(
      path,
      schema,
      partitioning.map(p => io.fermion.core.dataset.Partitioning.dataSchema(fermionSchema, p.spec)).getOrElse(
        fermionSchema
      ),
      options,
      SerializableHadoopConf.broadcast(conf),
      batchKey,
      partitioning.map(p => (p.rows, p.ordinals))
    )
  }

  override def useCommitCoordinator(): Boolean = true

  /** The schema the files are written with and the partition spec they are written for. */
  private[write] def schemaWritten: FermionSchema = fermionSchema
  private[write] def partitionSpec: IndexedSeq[Int] = partitioning.map(_.spec).getOrElse(IndexedSeq.empty)

  /** The files `written` as fragments to commit (placeholder ids); files without rows are deleted. */
  private[write] def fragmentsOf(written: Seq[FermionCommitMessage]): IndexedSeq[Fragment] = {
    val (withRows, empty) = written.partition(_.rows > 0)
    removeFiles(empty)
    val topIds = fermionSchema.fields.map(_.fieldId).filterNot(partitionSpec.contains)
    withRows.map(m =>
      Fragment(0, m.rows, IndexedSeq(DataFile(m.relativePath, topIds, m.columnBytes)), None, partition = m.partition)
    ).toIndexedSeq
  }

  /** Deletes data files tasks wrote (a failed or aborted write). */
  private[write] def removeFiles(written: Seq[FermionCommitMessage]): Unit = {
    val ds = dataset
    written.foreach(m => ds.fs.delete(ds.resolvePath(m.relativePath), false))
  }

  override def commit(messages: Array[WriterCommitMessage]): Unit = {
    val written = FermionCommitMessage.files(messages)
    val ds = dataset
    try batchKey.foreach(k => checkBatchIds(written, schema(k).name))
    catch { case t: Throwable => removeFiles(written); throw t }
    val spec = partitionSpec
    val fragments = fragmentsOf(written)
    // Dataset settings (stable row ids) are chosen when the dataset is created or overwritten.
    val config = intent match {
      case WriteIntent.Create | WriteIntent.Overwrite => datasetConfig
      case WriteIntent.Append if readVersion == 0 => datasetConfig
      case _ => Map.empty[String, String]
    }
    try intent match {
        case WriteIntent.Create => ds.commit(readVersion, Operation.Create(fermionSchema, fragments, spec), config)
        case WriteIntent.Overwrite =>
          ds.commit(readVersion, Operation.Overwrite(fermionSchema, fragments, spec), config)
        case WriteIntent.Append =>
          val append = Operation.Append(fermionSchema, fragments, spec)
          evolvedSchema match {
            case Some(s) =>
              ds.commit(
                readVersion,
                Operation.AppendWithSchema(Operation.Project(s, "mergeSchema of an append"), append),
                config
              )
            case None => ds.commit(readVersion, append, config)
          }
        case WriteIntent.ReplaceWhere(predicate, text) =>
          ds.replacePartitions(readVersion, fermionSchema, predicate, fragments, text)
        case WriteIntent.DynamicOverwrite => ds.replaceWrittenPartitions(readVersion, fermionSchema, fragments)
      }
    catch { case t: Throwable => removeFiles(written); throw t }
    onCommit.foreach(_())
  }

  /** A batch id written by two tasks, or already in the dataset an append adds to, fails the write. */
  private def checkBatchIds(written: Seq[FermionCommitMessage], key: String): Unit = {
    val all = new org.roaringbitmap.longlong.Roaring64NavigableMap()
    written.flatMap(_.batchIds).foreach { bytes =>
      val ids = new org.roaringbitmap.longlong.Roaring64NavigableMap()
      ids.deserialize(new java.io.DataInputStream(new java.io.ByteArrayInputStream(bytes)))
      val both = org.roaringbitmap.longlong.Roaring64NavigableMap.and(all, ids)
      if (!both.isEmpty)
        throw new IllegalArgumentException(
          s"batch key `$key` = ${both.first()} is in more than one task of this write: a batch must be written by one " +
            s"task (repartition the rows by `$key` first); nothing was written"
        )
      all.or(ids)
    }
    if (intent == WriteIntent.Append)
      snapshot.flatMap(s => io.fermion.core.scan.BatchIds.firstCollision(s, all, conf.value))
        .foreach { id =>
          throw new IllegalArgumentException(
            s"batch key `$key` = $id is already a batch of the dataset at '$path': batch ids are unique per dataset; " +
              "nothing was written"
          )
        }
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit = removeFiles(FermionCommitMessage.files(messages))
}

object FermionBatchWrite {

  /** A partitioned write: the rows' full schema, the partition columns' ordinals in it, and the
    * dataset's partition spec (their field ids). */
  final case class Partitioning(rows: StructType, ordinals: IndexedSeq[Int], spec: IndexedSeq[Int])
}

/** What a task reports to the driver: the data file it wrote (relative to the dataset root), its
  * columns' sizes in memory, and in a partitioned dataset the partition values of its rows. */
final case class FermionCommitMessage(
    relativePath: String,
    rows: Long,
    bytes: Long,
    batchIds: Option[Array[Byte]] = None,
    partition: IndexedSeq[Option[io.fermion.core.expr.FilterValue]] = IndexedSeq.empty,
    columnBytes: IndexedSeq[Long] = IndexedSeq.empty
) extends WriterCommitMessage

/** What a task of a partitioned write reports: one data file per partition it wrote. */
final case class FermionCommitMessages(files: Seq[FermionCommitMessage]) extends WriterCommitMessage

object FermionCommitMessage {

  /** The files `messages` report, whether one per task or several. */
  def files(messages: Array[WriterCommitMessage]): Seq[FermionCommitMessage] = messages.toSeq.flatMap {
    case m: FermionCommitMessage => Seq(m)
    case ms: FermionCommitMessages => ms.files
    case _ => Nil
  }
}

package io.fermion.spark.write

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import scala.collection.mutable

import io.fermion.core.dataset.FermionDataset
import io.fermion.core.scan.ColumnRequest
import io.fermion.spark.{FermionTable, FermionTableSchema}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.distributions.Distribution
import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference, SortOrder}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.roaringbitmap.RoaringBitmap

/** DELETE, UPDATE and MERGE as Spark's delta-based row-level operations. Spark plans a scan of the
  * table at the version the statement started from (predicates pushed into it to skip stripes),
  * evaluates the statement itself on the rows read (its exact semantics: subqueries, MERGE's
  * clauses and its check that a target row matches one source row at most) and hands each task
  * the rows to delete, by their `_rowaddr` (the row id), and the rows to insert. An update is a
  * delete of the old row and an insert of the new one (`representUpdateAsDeleteAndInsert`); in a
  * dataset with stable row ids the new one comes with the old row's `_rowid` (a metadata column
  * Spark reads for the operation) and keeps it.
  *
  * Tasks gather the addresses as one Roaring bitmap per fragment and write inserted rows to new
  * data files, as an append does (updated rows that keep their ids to files of their own, with the
  * ids in write order); the driver commits both in one version over the version read (core's
  * [[FermionDataset.deleteRows]] for a DELETE, [[FermionDataset.updateRows]] otherwise): deletion
  * files and new fragments, no untouched row rewritten. A concurrent delete, update or compaction
  * of the same fragments is a commit conflict. */
final class FermionRowLevelOperation(table: FermionTable, command: RowLevelOperation.Command)
    extends SupportsDelta {
  override def command(): RowLevelOperation.Command = command
  override def description(): String = s"Fermion $command on ${table.name()}"

  /** The table's own scan: the same snapshot the commit uses as its read version. */
  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = table.newScanBuilder(options)

  override def rowId(): Array[NamedReference] =
    Array(Expressions.column(io.fermion.spark.read.MetadataColumns.RowAddressName))

  override def representUpdateAsDeleteAndInsert(): Boolean = true

  private val stableRowIds = table.snapshot.manifest.exists(_.hasStableRowIds)

  /** The old row's `_rowid`, which its new version keeps. */
  override def requiredMetadataAttributes(): Array[NamedReference] =
    if (stableRowIds && command != RowLevelOperation.Command.DELETE)
      Array(Expressions.column(io.fermion.spark.read.MetadataColumns.RowIdName))
    else Array.empty

  override def newWriteBuilder(info: LogicalWriteInfo): DeltaWriteBuilder = {
    val readVersion = table.snapshot.version
    val path = table.path
    // Inserted rows are written as an append to the version read would write them.
    val inserts =
      if (command == RowLevelOperation.Command.DELETE) None else Some(table.newWriteBuilder(info).build())
    new DeltaWriteBuilder {
      override def build(): DeltaWrite = {
        def batch: DeltaBatchWrite = new FermionRowLevelBatchWrite(
          path,
          readVersion,
          command,
          inserts.map(_.toBatch.asInstanceOf[FermionBatchWrite]),
          stableRowIds
        )
        val what = s"Fermion$command($path, version ${readVersion.getOrElse(0L)})"
        inserts match {
          // A partitioned dataset's inserts sorted by partition (one file per partition and task).
          case Some(w: RequiresDistributionAndOrdering) =>
            new DeltaWrite with RequiresDistributionAndOrdering {
              override def requiredDistribution(): Distribution = w.requiredDistribution()
              override def requiredOrdering(): Array[SortOrder] = w.requiredOrdering()
              override def description(): String = what
              override def toBatch: DeltaBatchWrite = batch
            }
          case _ =>
            new DeltaWrite {
              override def description(): String = what
              override def toBatch: DeltaBatchWrite = batch
            }
        }
      }
    }
  }
}

/** The driver side of a row-level operation: merges the tasks' bitmaps, makes the files they
  * wrote fragments and commits both. */
final class FermionRowLevelBatchWrite(
    path: String,
    readVersion: Option[Long],
    command: RowLevelOperation.Command,
    /** How inserted rows are written (None for a DELETE). */
    inserts: Option[FermionBatchWrite],
    stableRowIds: Boolean
) extends DeltaBatchWrite {
  private def dataset = new FermionDataset(new Path(path), FermionTableSchema.hadoopConf())

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DeltaWriterFactory = {
    readVersion.foreach(_ => dataset.checkCommitStore()) // before any task writes
    new FermionDeltaWriterFactory(inserts.map(_.createBatchWriterFactory(info)), stableRowIds)
  }

  override def useCommitCoordinator(): Boolean = true

  override def commit(messages: Array[WriterCommitMessage]): Unit = {
    val changes = messages.toSeq.collect { case m: FermionRowChanges => m }
    val hits = FermionDeletedRows.merge(changes.map(_.deleted))
    val written = FermionRowChanges.files(messages)
    val ds = dataset
    try {
      val fragments = inserts.map { w =>
        w.fragmentsOf(changes.flatMap(c => FermionCommitMessage.files(c.inserted.toArray))) ++
          changes.flatMap(c => FermionRowChanges.keepingIds(w, c))
      }.getOrElse(IndexedSeq.empty)
      if (hits.isEmpty && fragments.isEmpty) return
      val version = readVersion.getOrElse(
        throw new IllegalStateException(s"rows to change in '$path', which holds no dataset version")
      )
      val deletedRows = hits.valuesIterator.map(_.getLongCardinality).sum
      inserts match {
        case None => ds.deleteRows(version, hits, s"DELETE ($deletedRows rows)")
        case Some(w) =>
          val text = s"$command ($deletedRows rows deleted or updated, ${fragments.map(_.physicalRows).sum} written)"
          ds.updateRows(version, hits, w.schemaWritten, w.partitionSpec, fragments, text)
      }
    } catch {
      case t: Throwable => inserts.foreach(_.removeFiles(written)); throw t
    }
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit =
    inserts.foreach(_.removeFiles(FermionRowChanges.files(messages)))
}

/** Serialised to executors. */
final class FermionDeltaWriterFactory(inserts: Option[DataWriterFactory], stableRowIds: Boolean)
    extends DeltaWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DeltaWriter[InternalRow] =
    new FermionDeltaWriter(inserts.map(f => () => f.createWriter(partitionId, taskId)), stableRowIds)
}

/** One task's share of a row-level operation: the addresses of the rows it deletes, and a data
  * file (opened on the first insert) for the rows it inserts; with stable row ids, another for the
  * new versions of updated rows, whose ids it collects in write order. */
final class FermionDeltaWriter(openInserts: Option[() => DataWriter[InternalRow]], stableRowIds: Boolean)
    extends DeltaWriter[InternalRow] {
  private val byFragment = mutable.HashMap.empty[Long, RoaringBitmap]
  private var inserted: DataWriter[InternalRow] = _
  private var updated: DataWriter[InternalRow] = _
  private val updatedIds = Array.newBuilder[Long]

  /** `id` holds the row id columns: `_rowaddr` alone. */
  override def delete(metadata: InternalRow, id: InternalRow): Unit = {
    val address = id.getLong(0)
    byFragment.getOrElseUpdate(ColumnRequest.fragmentOf(address), new RoaringBitmap()).add(ColumnRequest.rowOf(address))
  }

  override def update(metadata: InternalRow, id: InternalRow, row: InternalRow): Unit = {
    reinsert(metadata, row)
    delete(metadata, id)
  }

  /** The new version of an updated row (its old version is deleted): a new row, with a new
    * `_rowaddr`; in a dataset with stable row ids it keeps its `_rowid` (`metadata`'s only column). */
  override def reinsert(metadata: InternalRow, row: InternalRow): Unit =
    if (!stableRowIds) insert(row)
    else {
      if (metadata.isNullAt(0))
        throw new IllegalStateException("an updated row of a dataset with stable row ids has no _rowid")
      if (updated == null) updated = open()
      updated.write(row)
      updatedIds += metadata.getLong(0)
    }

  override def insert(row: InternalRow): Unit = {
    if (inserted == null) inserted = open()
    inserted.write(row)
  }

  private def open(): DataWriter[InternalRow] =
    openInserts.getOrElse(throw new IllegalStateException("a DELETE inserts no rows"))()

  override def commit(): WriterCommitMessage =
    FermionRowChanges(
      FermionDeletedRows.of(byFragment.toMap),
      Option(inserted).map(_.commit()),
      Option(updated).map(_.commit()),
      updatedIds.result()
    )

  override def abort(): Unit = {
    byFragment.clear()
    try if (inserted != null) inserted.abort()
    finally if (updated != null) updated.abort()
  }

  override def close(): Unit =
    try if (inserted != null) inserted.close()
    finally if (updated != null) updated.close()
}

/** What a task of a row-level operation reports: the rows it deletes, the files it wrote for new
  * rows, and the files it wrote for updated rows that keep their ids, with those ids in the
  * order the rows were written (file after file). */
final case class FermionRowChanges(
    deleted: FermionDeletedRows,
    inserted: Option[WriterCommitMessage],
    updated: Option[WriterCommitMessage] = None,
    updatedIds: Array[Long] = Array.emptyLongArray
) extends WriterCommitMessage

object FermionRowChanges {

  /** The data files the tasks of `messages` wrote. */
  def files(messages: Array[WriterCommitMessage]): Seq[FermionCommitMessage] =
    messages.toSeq.collect { case m: FermionRowChanges => m }.flatMap(c =>
      FermionCommitMessage.files((c.inserted ++ c.updated).toArray)
    )

  /** The fragments of the files `c` wrote for updated rows, each with its rows' ids. */
  def keepingIds(write: FermionBatchWrite, c: FermionRowChanges): IndexedSeq[io.fermion.core.dataset.Fragment] = {
    val files = FermionCommitMessage.files(c.updated.toArray)
    require(
      files.map(_.rows).sum == c.updatedIds.length,
      s"updated rows written (${files.map(_.rows).sum}) and their row ids (${c.updatedIds.length}) differ"
    )
    val ends = files.scanLeft(0L)(_ + _.rows)
    val idsOf = files.indices.filter(files(_).rows > 0).map(i =>
      io.fermion.core.dataset.RowIds.of(java.util.Arrays.copyOfRange(c.updatedIds, ends(i).toInt, ends(i + 1).toInt))
    )
    write.fragmentsOf(files).zip(idsOf).map { case (f, ids) => f.copy(rowIds = Some(ids)) }
  }
}

/** Row offsets per fragment, each a serialised Roaring bitmap (what a task sends the driver). */
final case class FermionDeletedRows(byFragment: Map[Long, Array[Byte]]) extends WriterCommitMessage

object FermionDeletedRows {
  def of(rows: Map[Long, RoaringBitmap]): FermionDeletedRows = FermionDeletedRows(rows.map { case (f, b) =>
    b.runOptimize()
    val out = new ByteArrayOutputStream()
    b.serialize(new DataOutputStream(out))
    f -> out.toByteArray
  })

  /** The union of the tasks' bitmaps, per fragment. */
  def merge(messages: Seq[FermionDeletedRows]): Map[Long, RoaringBitmap] = {
    val all = mutable.HashMap.empty[Long, RoaringBitmap]
    messages.foreach(_.byFragment.foreach { case (f, bytes) =>
      val b = new RoaringBitmap()
      b.deserialize(new DataInputStream(new ByteArrayInputStream(bytes)))
      all.getOrElseUpdate(f, new RoaringBitmap()).or(b)
    })
    all.toMap
  }
}

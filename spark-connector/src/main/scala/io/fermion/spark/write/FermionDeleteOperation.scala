package io.fermion.spark.write

import io.fermion.core.scan.ColumnRequest
import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import scala.collection.mutable

import io.fermion.core.dataset.FermionDataset
import io.fermion.spark.{FermionTable, FermionTableSchema}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.roaringbitmap.RoaringBitmap

/** DELETE as Spark's delta-based row-level operation. Spark plans a scan of the table at the
  * version the statement started from (the DELETE's predicates are pushed into it to skip
  * stripes), evaluates the WHERE clause itself on the rows read (its exact semantics, subqueries
  * included) and calls [[FermionDeltaWriter.delete]] with the `_rowaddr` (the row id) of each
  * row to delete. Tasks gather the addresses as one Roaring bitmap per fragment; the driver merges
  * them and commits one `delete` over the version read ([[FermionDataset.deleteRows]]): deletion
  * files, no data rewritten. A concurrent delete of the same fragments is a commit conflict.
  *
  * The writer is built for a delta of rows; UPDATE and MERGE (later) add `update` and `insert`. */
final class FermionDeleteOperation(table: FermionTable) extends SupportsDelta {
  override def command(): RowLevelOperation.Command = RowLevelOperation.Command.DELETE
  override def description(): String = s"Fermion DELETE on ${table.name()}"

  /** The table's own scan: the same snapshot the commit uses as its read version. */
  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = table.newScanBuilder(options)

  override def rowId(): Array[NamedReference] =
    Array(Expressions.column(io.fermion.spark.read.MetadataColumns.RowAddressName))

  override def newWriteBuilder(info: LogicalWriteInfo): DeltaWriteBuilder = {
    val readVersion = table.snapshot.version
    val path = table.path
    new DeltaWriteBuilder {
      override def build(): DeltaWrite = new DeltaWrite {
        override def description(): String = s"FermionDelete($path, version ${readVersion.getOrElse(0L)})"
        override def toBatch: DeltaBatchWrite = new FermionDeleteBatchWrite(path, readVersion)
      }
    }
  }
}

/** The driver side of a DELETE: merges the tasks' bitmaps and commits them. */
final class FermionDeleteBatchWrite(path: String, readVersion: Option[Long]) extends DeltaBatchWrite {
  override def createBatchWriterFactory(info: PhysicalWriteInfo): DeltaWriterFactory = {
    readVersion.foreach { _ =>
      new FermionDataset(new Path(path), FermionTableSchema.hadoopConf()).checkCommitStore()
    }
    new FermionDeltaWriterFactory
  }

  override def useCommitCoordinator(): Boolean = true

  override def commit(messages: Array[WriterCommitMessage]): Unit = {
    val hits = FermionDeletedRows.merge(messages.toSeq.collect { case m: FermionDeletedRows => m })
    if (hits.isEmpty) return
    val version = readVersion.getOrElse(
      throw new IllegalStateException(s"rows to delete from '$path', which holds no dataset version")
    )
    val ds = new FermionDataset(new Path(path), FermionTableSchema.hadoopConf())
    val rows = hits.valuesIterator.map(_.getLongCardinality).sum
    ds.deleteRows(version, hits, s"DELETE ($rows rows)")
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit = () // nothing was written
}

/** Serialised to executors. */
final class FermionDeltaWriterFactory extends DeltaWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DeltaWriter[InternalRow] = new FermionDeltaWriter
}

/** One task's share of a row-level operation: the addresses of the rows it deletes. */
final class FermionDeltaWriter extends DeltaWriter[InternalRow] {
  private val byFragment = mutable.HashMap.empty[Long, RoaringBitmap]

  /** `id` holds the row id columns: `_rowaddr` alone. */
  override def delete(metadata: InternalRow, id: InternalRow): Unit = {
    val address = id.getLong(0)
    byFragment.getOrElseUpdate(ColumnRequest.fragmentOf(address), new RoaringBitmap()).add(ColumnRequest.rowOf(address))
  }

  override def update(metadata: InternalRow, id: InternalRow, row: InternalRow): Unit =
    throw new UnsupportedOperationException("UPDATE is not supported on Fermion tables yet")

  override def insert(row: InternalRow): Unit =
    throw new UnsupportedOperationException("inserting rows through a row-level operation (MERGE) is not supported yet")

  override def commit(): WriterCommitMessage = FermionDeletedRows.of(byFragment.toMap)
  override def abort(): Unit = byFragment.clear()
  override def close(): Unit = ()
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

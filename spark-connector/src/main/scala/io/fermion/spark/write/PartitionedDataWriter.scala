package io.fermion.spark.write

import io.fermion.core.expr.FilterValue
import io.fermion.spark.read.SparkPredicateTranslation
import org.apache.spark.sql.catalyst.{InternalRow, ProjectingInternalRow}
import org.apache.spark.sql.connector.write.{DataWriter, WriterCommitMessage}
import org.apache.spark.sql.types.StructType

/** One task's writer for a partitioned dataset: a data file per partition value the task meets,
  * holding the data columns only (partition values go to the manifest, docs/table-format.md 6.7).
  * Rows arrive sorted by the partition columns (the write asks Spark for that ordering), so one
  * file is open at a time; a partition met again later simply gets another file. */
final class PartitionedDataWriter(
    /** The written rows' schema: data and partition columns. */
    schema: StructType,
    partitionOrdinals: IndexedSeq[Int],
    /** Opens a writer of the data columns into a new data file. */
    open: () => FermionDataWriter,
    /** Deletes a data file this writer finished (by its path relative to the dataset). */
    remove: String => Unit
) extends DataWriter[InternalRow] {
  private val dataOrdinals = schema.indices.filterNot(partitionOrdinals.contains)
  private val projected = ProjectingInternalRow(StructType(dataOrdinals.map(schema(_))), dataOrdinals)
  private val types = partitionOrdinals.map(schema(_).dataType)
  private var current: FermionDataWriter = _
  private var currentValues: IndexedSeq[Option[FilterValue]] = _
  private val done = scala.collection.mutable.ArrayBuffer.empty[FermionCommitMessage]

  private def valuesOf(record: InternalRow): IndexedSeq[Option[FilterValue]] = partitionOrdinals.indices.map { k =>
    val i = partitionOrdinals(k)
    if (record.isNullAt(i)) None
    else
      Some(SparkPredicateTranslation.value(record.get(i, types(k)), types(k)).getOrElse(
        throw new IllegalArgumentException(s"partition column `${schema(i).name}` has unsupported type ${types(k).sql}")
      ))
  }

  override def write(record: InternalRow): Unit = {
    val values = valuesOf(record)
    if (current == null || values != currentValues) {
      finishCurrent()
      current = open()
      currentValues = values
    }
    projected.project(record)
    current.write(projected)
  }

  private def finishCurrent(): Unit = if (current != null) {
    val w = current
    current = null
    try done += w.commit().asInstanceOf[FermionCommitMessage].copy(partition = currentValues)
    finally w.close()
  }

  override def commit(): WriterCommitMessage = {
    finishCurrent()
    FermionCommitMessages(done.toSeq)
  }

  override def abort(): Unit = {
    try if (current != null) current.abort()
    finally {
      current = null
      done.foreach(m => remove(m.relativePath))
    }
  }

  override def close(): Unit = if (current != null) current.close()
}

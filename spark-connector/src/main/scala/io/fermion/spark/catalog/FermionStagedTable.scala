package io.fermion.spark.catalog

import java.util

import io.fermion.spark.FermionTable
import org.apache.spark.sql.connector.catalog.{Column, StagedTable, SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType

/** A table being created or replaced by CREATE [OR REPLACE] TABLE [AS SELECT] (Spark's atomic
  * path, [[org.apache.spark.sql.connector.catalog.StagingTableCatalog]]). The data goes in as one
  * dataset version (the `table`'s write intent: create or overwrite), committed by the write
  * itself; `commitStagedChanges` then records the table in the catalog (`onCommit`, told whether a
  * write committed, so that a REPLACE TABLE without AS SELECT can commit its empty version), and
  * `abortStagedChanges` undoes what can be undone (`onAbort`, told the same). A failed job
  * therefore leaves the catalog entry and the dataset's current version as they were. */
final class FermionStagedTable(
    table: FermionTable,
    onCommit: Boolean => Unit,
    onAbort: Boolean => Unit
) extends StagedTable with SupportsWrite {
  @volatile private var written = false

  /** Called by the write's commit once its version is published. */
  private[spark] def markWritten(): Unit = written = true

  override def name(): String = table.name()
  override def columns(): Array[Column] = table.columns()
  @deprecated("Spark 4 tables expose columns()", "4.0")
  override def schema(): StructType = table.schema()
  override def properties(): util.Map[String, String] = table.properties()
  override def capabilities(): util.Set[TableCapability] = table.capabilities()
  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = table.newWriteBuilder(info)

  override def commitStagedChanges(): Unit = onCommit(written)
  override def abortStagedChanges(): Unit = onAbort(written)
}

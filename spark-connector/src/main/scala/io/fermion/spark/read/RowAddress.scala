package io.fermion.spark.read

import org.apache.spark.sql.connector.catalog.MetadataColumn
import org.apache.spark.sql.types.{DataType, LongType}

/** The `_rowaddr` metadata column: a row's address in the version read, fragment id in the high
  * 32 bits and the row's offset within the fragment in the low 32 (docs/table-format.md). */
object RowAddress {
  val Name = "_rowaddr"

  val Column: MetadataColumn = new MetadataColumn {
    override def name(): String = Name
    override def dataType(): DataType = LongType
    override def isNullable: Boolean = false
    override def comment(): String = "fragment id << 32 | row offset in the fragment"
  }

  def of(fragmentId: Long, row: Long): Long = (fragmentId << 32) | row

  /** `_rowid`: the row's stable id, for datasets created with `stableRowIds`; null otherwise. */
  val RowIdName = "_rowid"
  val RowIdColumn: MetadataColumn = new MetadataColumn {
    override def name(): String = RowIdName
    override def dataType(): DataType = LongType
    override def isNullable: Boolean = true
    override def comment(): String = "stable row id (datasets created with stableRowIds)"
  }
  def fragment(address: Long): Long = address >>> 32
  def row(address: Long): Int = (address & 0xffffffffL).toInt
}

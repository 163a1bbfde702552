package io.fermion.spark

import java.util

import scala.jdk.CollectionConverters._

import io.fermion.spark.read.FermionScanBuilder
import io.fermion.spark.write.FermionWriteBuilder
import org.apache.spark.sql.connector.catalog.{Column, SupportsRead, SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** A directory of Fermion files seen as one table.
  *
  * `acceptAnySchema` is set for path-based DataFrame writes: the DataFrame's own columns are
  * written (the first write defines the table; an append must match it by name and type, checked
  * in [[FermionWriteBuilder]]). Catalog tables keep Spark's by-position INSERT semantics. */
final class FermionTable(val path: String, tableSchema: StructType, acceptAnySchema: Boolean)
    extends SupportsRead with SupportsWrite {

  override def name(): String = s"fermion.`$path`"

  override def columns(): Array[Column] = tableSchema.fields.map(f => Column.create(f.name, f.dataType, f.nullable))

  @deprecated("Spark 4 tables expose columns()", "4.0")
  override def schema(): StructType = tableSchema

  override def capabilities(): util.Set[TableCapability] = {
    val caps = Set(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE) ++
      (if (acceptAnySchema) Set(TableCapability.ACCEPT_ANY_SCHEMA) else Set.empty)
    caps.asJava
  }

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder =
    new FermionScanBuilder(path, tableSchema, FermionOptions.readerOptions(options.asScala.toMap))

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = {
    val options = info.options().asScala.toMap
    new FermionWriteBuilder(path, tableSchema, info, FermionOptions.writerOptions(options), checkAppendSchema = acceptAnySchema)
  }
}

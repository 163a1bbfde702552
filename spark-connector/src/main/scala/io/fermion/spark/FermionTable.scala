package io.fermion.spark

import java.util

import scala.jdk.CollectionConverters._

import io.fermion.core.scan.Snapshot
import io.fermion.spark.read.{FermionScanBuilder, MetadataColumns}
import io.fermion.spark.write.FermionWriteBuilder
import org.apache.spark.sql.connector.catalog._
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** A Fermion dataset (or a plain directory of Fermion files) seen as one table, at the version
  * `snapshot` holds.
  *
  * `acceptAnySchema` is set for path-based DataFrame writes: the DataFrame's own columns are
  * written (the first write defines the table; an append must match it by name and type, checked
  * in [[FermionWriteBuilder]]). Catalog tables keep Spark's by-position INSERT semantics.
  * `_rowaddr` (fragment id << 32 | row offset in the fragment) is a metadata column. */
final class FermionTable(
    val path: String,
    tableSchema: StructType,
    acceptAnySchema: Boolean,
    snapshotOf: () => Snapshot,
    /** Read one partition per data file, rows in file order (what writing a new column per
      * fragment needs). */
    wholeFiles: Boolean = false
) extends SupportsRead with SupportsWrite with SupportsMetadataColumns with SupportsDeleteV2 {

  lazy val snapshot: Snapshot = snapshotOf()

  override def name(): String = s"fermion.`$path`" + snapshot.version.map(v => s"@v$v").getOrElse("")

  override def columns(): Array[Column] = tableSchema.fields.map(f => Column.create(f.name, f.dataType, f.nullable))

  @deprecated("Spark 4 tables expose columns()", "4.0")
  override def schema(): StructType = tableSchema

  override def capabilities(): util.Set[TableCapability] = {
    val caps = Set(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE) ++
      (if (acceptAnySchema) Set(TableCapability.ACCEPT_ANY_SCHEMA) else Set.empty)
    caps.asJava
  }

  override def metadataColumns(): Array[MetadataColumn] = MetadataColumns.all

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder =
    new FermionScanBuilder(snapshot, tableSchema, FermionOptions.readerOptions(options.asScala.toMap), wholeFiles)

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new FermionWriteBuilder(path, snapshot, tableSchema, info, checkAppendSchema = acceptAnySchema)

  override def canDeleteWhere(predicates: Array[Predicate]): Boolean = true

  /** `DELETE FROM`: deletion files for the matching rows, committed as a new version. */
  override def deleteWhere(predicates: Array[Predicate]): Unit = {
    val builder = new org.apache.spark.sql.connector.util.V2ExpressionSQLBuilder
    val condition = if (predicates.isEmpty) "true" else predicates.map(p => s"(${builder.build(p)})").mkString(" AND ")
    FermionDatasets.delete(org.apache.spark.sql.SparkSession.active, path, condition)
  }
}

object FermionTable {

  /** The table of `snapshot`: a dataset's own schema (it wins over any copy a catalog keeps);
    * for loose files the declared schema when there is one (it may name a subset of the files'
    * columns, as for Parquet), else the files'; a table not written yet has the declared one. */
  def of(path: String, snapshot: Snapshot, declared: StructType, acceptAnySchema: Boolean): FermionTable = {
    val schema =
      if (snapshot.isDataset || declared.isEmpty) FermionTableSchema.of(snapshot).getOrElse(declared) else declared
    new FermionTable(path, schema, acceptAnySchema, () => snapshot)
  }
}

package io.fermion.spark.catalog

import io.fermion.core.scan.{ReadAt, Snapshot}
import io.fermion.spark.{FermionDatasets, FermionTable, FermionTableSchema}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog._
import org.apache.spark.sql.connector.catalog.TableChange.{AddColumn, DeleteColumn, RenameColumn}
import org.apache.spark.sql.types.StructType

/** Spark's session catalog with Fermion's time travel and schema changes: for tables `USING
  * fermion`, `SELECT ... VERSION AS OF n` / `TIMESTAMP AS OF ts` read that version, and
  * `ALTER TABLE ... ADD COLUMNS / DROP COLUMN / RENAME COLUMN` commit metadata-only versions of
  * the dataset (and update the catalog entry). Everything else is Spark's own catalog.
  * `configure_spark_with_fermion` installs it as `spark_catalog`:
  * {{{
  * spark.sql.catalog.spark_catalog = io.fermion.spark.catalog.FermionSessionCatalog
  * }}}
  */
class FermionSessionCatalog extends DelegatingCatalogExtension {

  /** Fermion tables come back as Fermion's own table (Spark hands a wrapped catalog only its V1
    * description of them, which cannot be read, deleted from or time-travelled). */
  override def loadTable(ident: Identifier): Table = {
    val t = super.loadTable(ident)
    t match {
      case _: FermionTable => t
      case _ if isFermion(t) =>
        val path = Option(t.properties.get(TableCatalog.PROP_LOCATION)).getOrElse(
          throw new IllegalArgumentException(s"Fermion table $ident has no location")
        )
        val snapshot = Snapshot.open(path, FermionTableSchema.hadoopConf())
        val declared =
          StructType(t.columns().map(c => org.apache.spark.sql.types.StructField(c.name, c.dataType, c.nullable)))
        FermionTable.of(path, snapshot, declared, acceptAnySchema = false)
      case _ => t
    }
  }

  private def isFermion(t: Table): Boolean =
    Option(t.properties.get(TableCatalog.PROP_PROVIDER)).exists(_.equalsIgnoreCase("fermion"))

  /** The dataset path of a Fermion table of this catalog, if `ident` is one. */
  private def fermionPath(ident: Identifier): Option[String] = super.loadTable(ident) match {
    case t: FermionTable => Some(t.path)
    case t if isFermion(t) => Option(t.properties.get(TableCatalog.PROP_LOCATION))
    case _ => None
  }

  private def at(path: String, version: Option[Long], timestampMillis: Option[Long]): Table = {
    FermionTable.of(
      path,
      Snapshot.open(
        path,
        FermionTableSchema.hadoopConf(),
        version.map(ReadAt.Version).orElse(timestampMillis.map(ReadAt.Timestamp)).getOrElse(ReadAt.Latest)
      ),
      new StructType(),
      acceptAnySchema = false
    )
  }

  override def loadTable(ident: Identifier, version: String): Table = fermionPath(ident) match {
    case Some(path) =>
      at(
        path,
        Some(version.toLongOption.getOrElse(
          throw new IllegalArgumentException(s"Fermion versions are numbers, got '$version'")
        )),
        None
      )
    case None => super.loadTable(ident, version)
  }

  override def loadTable(ident: Identifier, timestamp: Long): Table = fermionPath(ident) match {
    case Some(path) => at(path, None, Some(Math.floorDiv(timestamp, 1000L)))
    case None => super.loadTable(ident, timestamp)
  }

  override def alterTable(ident: Identifier, changes: TableChange*): Table = fermionPath(ident) match {
    case Some(path) =>
      val spark = SparkSession.active
      changes.foreach {
        case a: AddColumn if a.fieldNames().length == 1 =>
          if (!a.isNullable) throw new IllegalArgumentException(
            s"Columns added to a Fermion dataset are nullable (`${a.fieldNames().head}`)"
          )
          FermionDatasets.addColumns(spark, path, s"`${a.fieldNames().head.replace("`", "``")}` ${a.dataType().sql}")
        case d: DeleteColumn if d.fieldNames().length == 1 =>
          FermionDatasets.dropColumns(path, java.util.List.of(d.fieldNames().head))
        case r: RenameColumn if r.fieldNames().length == 1 =>
          FermionDatasets.renameColumn(path, r.fieldNames().head, r.newName())
        case other =>
          throw new UnsupportedOperationException(
            s"ALTER TABLE on a Fermion table supports ADD COLUMNS, DROP COLUMN and RENAME COLUMN of top-level columns; not $other"
          )
      }
      super.alterTable(ident, changes: _*)
    case None => super.alterTable(ident, changes: _*)
  }
}

object FermionSessionCatalog {
  val ConfKey = "spark.sql.catalog.spark_catalog"
}

package io.fermion.spark.write

import java.util.Locale

import scala.jdk.CollectionConverters._

import io.fermion.core.dataset.{DatasetLayout, FermionDataset, SchemaIds}
import io.fermion.core.scan.Snapshot
import io.fermion.core.write.WriterOptions
import io.fermion.spark.{FermionOptions, FermionTableSchema, SerializableHadoopConf, SparkTypeMapping}
import org.apache.spark.sql.connector.write.{BatchWrite, LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}
import org.apache.spark.sql.types.StructType

/** Plans a write: checks the schema (every type storable; on append to a path-based table, the
  * same columns and types as the data already there), and whether it replaces the table's files
  * (truncate = overwrite mode). */
final class FermionWriteBuilder(
    path: String,
    snapshot: Snapshot,
    tableSchema: StructType,
    info: LogicalWriteInfo,
    checkAppendSchema: Boolean
) extends WriteBuilder with SupportsTruncate {
  private var overwrite = false

  override def truncate(): WriteBuilder = { overwrite = true; this }

  override def build(): Write = {
    val schema = info.schema()
    SparkTypeMapping.validate(schema)
    if (checkAppendSchema && !overwrite && tableSchema.nonEmpty)
      FermionWriteBuilder.checkSameColumns(path, tableSchema, schema)
    // Options the dataset keeps from its creation apply unless this write sets them.
    val given = info.options().asScala.toMap
    val stored = if (overwrite) Map.empty[String, String]
    else snapshot.manifest.map(FermionDataset.storedWriteOptions).getOrElse(Map.empty)
    val givenWrite = FermionOptions.writeSettings(given)
    val merged = stored.filterNot { case (k, _) => givenWrite.keys.exists(_.equalsIgnoreCase(k)) } ++ givenWrite
    val settings = FieldWriteSettings.resolve(schema, FermionOptions.writerOptions(merged))
    // Appends keep the dataset's field ids; an overwrite starts the schema afresh.
    val fresh = SparkTypeMapping.toFermion(schema)
    val fermionSchema = snapshot.manifest match {
      case Some(m) if !overwrite => SchemaIds.assignFrom(m.schema, fresh, m.lastFieldId)
      case _ => fresh
    }
    if (snapshot.manifest.isEmpty && snapshot.files.nonEmpty)
      throw new IllegalArgumentException(
        s"'$path' holds Fermion files but no dataset (no ${DatasetLayout.VersionsDir}/); write to a new path"
      )
    new Write {
      override def toBatch: BatchWrite =
        new FermionBatchWrite(
          path,
          schema,
          fermionSchema,
          settings,
          overwrite,
          snapshot.version.getOrElse(0L),
          new SerializableHadoopConf(FermionTableSchema.hadoopConf()),
          FermionOptions.datasetConfig(given)
        )
      override def description(): String = s"FermionWrite($path${if (overwrite) ", overwrite" else ""})"
    }
  }
}

object FermionWriteBuilder {
  import org.apache.spark.sql.types.{ArrayType, DataType, MapType}

  /** Same type tree, names included; nullability may differ (each file records its own). */
  def sameIgnoringNullability(a: DataType, b: DataType): Boolean = (a, b) match {
    case (x: StructType, y: StructType) =>
      x.length == y.length && x.fields.zip(y.fields).forall { case (f, g) =>
        f.name.equalsIgnoreCase(g.name) && sameIgnoringNullability(f.dataType, g.dataType)
      }
    case (x: ArrayType, y: ArrayType) => sameIgnoringNullability(x.elementType, y.elementType)
    case (x: MapType, y: MapType) =>
      sameIgnoringNullability(x.keyType, y.keyType) && sameIgnoringNullability(x.valueType, y.valueType)
    case _ => a == b
  }

  /** An append must bring the table's columns, by name, with the same types (order may differ:
    * readers match columns by name). */
  def checkSameColumns(path: String, table: StructType, data: StructType): Unit = {
    def byName(s: StructType) = s.fields.map(f => f.name.toLowerCase(Locale.ROOT) -> f).toMap
    val t = byName(table)
    val d = byName(data)
    val missing = t.keySet -- d.keySet
    val extra = d.keySet -- t.keySet
    if (missing.nonEmpty || extra.nonEmpty)
      throw new IllegalArgumentException(
        s"Cannot append to Fermion table at '$path': its columns are ${table.fieldNames.mkString(", ")}; the data has ${data.fieldNames.mkString(", ")}" +
          (if (missing.nonEmpty) s" (missing: ${missing.mkString(", ")})" else "") + (if (extra.nonEmpty)
                                                                                        s" (not in the table: ${extra.mkString(", ")})"
                                                                                      else "") +
          ". Use mode(\"overwrite\") to replace the table."
      )
    t.foreach { case (k, tf) =>
      val df = d(k)
      if (!sameIgnoringNullability(tf.dataType, df.dataType))
        throw new IllegalArgumentException(
          s"Cannot append to Fermion table at '$path': column `${tf.name}` is ${tf.dataType.sql} in the table but ${df.dataType.sql} in the data"
        )
    }
  }
}

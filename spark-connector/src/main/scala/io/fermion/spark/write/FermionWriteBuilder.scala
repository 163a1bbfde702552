package io.fermion.spark.write

import java.util.Locale

import io.fermion.core.dataset.{DatasetLayout, FermionDataset, SchemaIds}
import io.fermion.core.scan.Snapshot
import io.fermion.spark.{FermionOptions, FermionTableSchema, SerializableHadoopConf, SparkTypeMapping}
import org.apache.spark.sql.connector.write.{
  BatchWrite, LogicalWriteInfo, SupportsDynamicOverwrite, SupportsTruncate, Write, WriteBuilder
}
import org.apache.spark.sql.connector.distributions.{Distribution, Distributions}
import org.apache.spark.sql.connector.expressions.{Expression, Expressions, SortDirection, SortOrder}
import org.apache.spark.sql.connector.write.RequiresDistributionAndOrdering
import org.apache.spark.sql.types.{ByteType, IntegerType, LongType, ShortType, StructType}

/** Plans a write: checks the schema (every type storable; on append to a path-based table, the
  * same columns and types as the data already there) and decides what the write means
  * ([[WriteIntent]]): the table's default (append, or create for a table being created), or an
  * overwrite when Spark asks to truncate (save mode overwrite, INSERT OVERWRITE, REPLACE TABLE) or
  * to overwrite partitions dynamically (Fermion tables are not partitioned, so that replaces every
  * row, as Spark's file sources do for an unpartitioned table). `options` are the write's options
  * over the table's own. */
final class FermionWriteBuilder(
    path: String,
    snapshot: Snapshot,
    tableSchema: StructType,
    info: LogicalWriteInfo,
    options: Map[String, String],
    checkAppendSchema: Boolean,
    defaultIntent: WriteIntent = WriteIntent.Append,
    onCommit: Option[() => Unit] = None
) extends WriteBuilder with SupportsTruncate with SupportsDynamicOverwrite {
  private var intent: WriteIntent = defaultIntent

  override def truncate(): WriteBuilder = { intent = WriteIntent.Overwrite; this }

  override def overwriteDynamicPartitions(): WriteBuilder = { intent = WriteIntent.Overwrite; this }

  override def build(): Write = {
    FermionOptions.writerOptions(options) // unknown keys and bad values fail here, naming the option
    // Options the dataset keeps from its creation apply unless this write (or the table) sets them.
    val stored =
      if (intent == WriteIntent.Append) snapshot.manifest.map(FermionDataset.storedWriteOptions).getOrElse(Map.empty)
      else Map.empty[String, String]
    val given = FermionOptions.writeSettings(options)
    val effective = stored.filterNot { case (k, _) => given.keys.exists(_.equalsIgnoreCase(k)) } ++ given
    val writerOptions = FermionOptions.writerOptions(effective)
    // Catalog tables keep the nullability they were declared with, whatever the INSERT's values.
    val schema =
      if (checkAppendSchema) info.schema()
      else FermionTableSchema.withDeclaredNullability(info.schema(), tableSchema)
    SparkTypeMapping.validate(schema)
    val overwrite = intent == WriteIntent.Overwrite
    if (checkAppendSchema && intent == WriteIntent.Append && tableSchema.nonEmpty)
      FermionWriteBuilder.checkSameColumns(path, tableSchema, schema)
    if (intent == WriteIntent.Create && snapshot.manifest.nonEmpty)
      throw new io.fermion.core.dataset.FermionCommitConflictException(
        path,
        0,
        snapshot.version.get,
        "created the dataset first: it already exists; nothing was written"
      )
    val settings = FieldWriteSettings.resolve(schema, writerOptions)
    // Appends keep the dataset's field ids; an overwrite or a creation starts the schema afresh.
    val fresh = SparkTypeMapping.toFermion(schema)
    val fermionSchema = snapshot.manifest match {
      case Some(m) if !overwrite && intent != WriteIntent.Create => SchemaIds.assignFrom(m.schema, fresh, m.lastFieldId)
      case _ => fresh
    }
    if (snapshot.manifest.isEmpty && snapshot.files.nonEmpty)
      throw new IllegalArgumentException(
        s"'$path' holds Fermion files but no dataset (no ${DatasetLayout.VersionsDir}/); write to a new path"
      )
    val finalIntent = intent
    val batchKey = io.fermion.core.options.OptionRegistry.BatchKey.in(effective).filter(_.nonEmpty).map { key =>
      val i = schema.fieldNames.indexWhere(_.equalsIgnoreCase(key))
      if (i < 0)
        throw new IllegalArgumentException(
          s"batchKey names `$key`, which is not a column of the data (${schema.fieldNames.mkString(", ")})"
        )
      schema(i).dataType match {
        case ByteType | ShortType | IntegerType | LongType => i
        case other =>
          throw new IllegalArgumentException(s"batchKey `$key` must be an integral column, not ${other.sql}")
      }
    }
    def batchWrite: BatchWrite =
      new FermionBatchWrite(
        path,
        schema,
        fermionSchema,
        settings,
        finalIntent,
        snapshot.version.getOrElse(0L),
        new SerializableHadoopConf(FermionTableSchema.hadoopConf()),
        FermionOptions.datasetConfig(options),
        onCommit,
        batchKey,
        Some(snapshot)
      )
    batchKey match {
      case None =>
        new Write {
          override def toBatch: BatchWrite = batchWrite
          override def description(): String = s"FermionWrite($path, $finalIntent)"
        }
      case Some(k) =>
        // Every key's rows in one task (Spark shuffles by the key), sorted by it, so that each key's
        // rows form one batch whatever the input's partitioning.
        new Write with RequiresDistributionAndOrdering {
          override def requiredDistribution(): Distribution =
            Distributions.clustered(Array[Expression](Expressions.column(schema(k).name)))
          override def requiredOrdering(): Array[SortOrder] =
            Array(Expressions.sort(Expressions.column(schema(k).name), SortDirection.ASCENDING))
          override def toBatch: BatchWrite = batchWrite
          override def description(): String = s"FermionWrite($path, $finalIntent, batches by ${schema(k).name})"
        }
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

package io.fermion.spark.write

import java.util.Locale

import io.fermion.core.dataset.{DatasetLayout, FermionDataset, SchemaIds}
import io.fermion.core.scan.Snapshot
import io.fermion.spark.{FermionOptions, FermionTableSchema, SerializableHadoopConf, SparkTypeMapping}
import org.apache.spark.sql.connector.write.{
  BatchWrite, LogicalWriteInfo, SupportsDynamicOverwrite, SupportsOverwriteV2, SupportsTruncate, Write, WriteBuilder
}
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.distributions.{Distribution, Distributions}
import org.apache.spark.sql.connector.expressions.{Expression, Expressions, SortDirection, SortOrder}
import org.apache.spark.sql.connector.write.RequiresDistributionAndOrdering
import org.apache.spark.sql.connector.write.streaming.StreamingWrite
import org.apache.spark.sql.types.{ByteType, IntegerType, LongType, ShortType, StructType}

/** Plans a write: checks the schema (every type storable; on append to a path-based table, the
  * same columns and types as the data already there) and decides what the write means
  * ([[WriteIntent]]): the table's default (append, or create for a table being created), an
  * overwrite when Spark asks to truncate (save mode overwrite, INSERT OVERWRITE, REPLACE TABLE),
  * the replacement of the partitions a predicate selects (`INSERT OVERWRITE ... PARTITION`, the
  * `replaceWhere` option) or of the partitions written (dynamic partition overwrite; on an
  * unpartitioned dataset that replaces every row, as Spark's file sources do). A partitioned
  * write's files hold the data columns only, rows sorted by the partition columns so that each
  * task writes one file per partition. `options` are the write's options over the table's own. */
final class FermionWriteBuilder(
    path: String,
    snapshot: Snapshot,
    tableSchema: StructType,
    info: LogicalWriteInfo,
    options: Map[String, String],
    checkAppendSchema: Boolean,
    defaultIntent: WriteIntent = WriteIntent.Append,
    onCommit: Option[() => Unit] = None,
    /** The partition columns a create or replace declares (None: a dataset's own are kept). */
    partitionBy: Option[Seq[String]] = None
) extends WriteBuilder with SupportsTruncate with SupportsDynamicOverwrite with SupportsOverwriteV2 {
  private var intent: WriteIntent = defaultIntent
  private var truncated = false

  private def partitioned = snapshot.manifest.exists(_.isPartitioned)

  override def truncate(): WriteBuilder = { intent = WriteIntent.Overwrite; truncated = true; this }

  override def overwriteDynamicPartitions(): WriteBuilder = {
    intent = if (partitioned) WriteIntent.DynamicOverwrite else WriteIntent.Overwrite
    this
  }

  /** `INSERT OVERWRITE ... PARTITION (k = v)`: Spark hands over the partition's predicates. */
  override def canOverwrite(predicates: Array[Predicate]): Boolean = partitioned

  override def overwrite(predicates: Array[Predicate]): WriteBuilder = {
    intent = FermionWriteBuilder.replaceWhere(predicates, tableSchema, predicates.map(_.toString).mkString(" AND "))
    this
  }

  override def build(): Write = {
    FermionOptions.writerOptions(options) // unknown keys and bad values fail here, naming the option
    // DataFrame writes in save mode overwrite truncate; `replaceWhere` and a dynamic
    // `partitionOverwriteMode` (the option, or Spark's session setting) narrow that to partitions.
    if (truncated) {
      io.fermion.core.options.OptionRegistry.ReplaceWhere.in(options).filter(_.nonEmpty) match {
        case Some(text) =>
          intent = FermionWriteBuilder.replaceWhere(
            FermionWriteBuilder.parsePredicate(text, info.schema()).toArray,
            info.schema(),
            text
          )
        case None if partitioned && FermionWriteBuilder.dynamicOverwrite(options) =>
          intent = WriteIntent.DynamicOverwrite
        case None =>
      }
    } else if (io.fermion.core.options.OptionRegistry.ReplaceWhere.in(options).exists(_.nonEmpty))
      throw new IllegalArgumentException("replaceWhere applies to writes in save mode overwrite only")
    // Options the dataset keeps from its creation apply unless this write (or the table) sets them.
    val stored =
      if (intent != WriteIntent.Overwrite && intent != WriteIntent.Create)
        snapshot.manifest.map(FermionDataset.storedWriteOptions).getOrElse(Map.empty)
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
    // `mergeSchema`: an append may bring new columns and wider types (the dataset's schema follows).
    val merging = FermionOptions.mergeSchema(options) && intent == WriteIntent.Append && snapshot.manifest.nonEmpty
    if (
      checkAppendSchema && !merging && intent != WriteIntent.Overwrite && intent != WriteIntent.Create &&
      tableSchema.nonEmpty
    )
      FermionWriteBuilder.checkSameColumns(path, tableSchema, schema)
    if (intent == WriteIntent.Create && snapshot.manifest.nonEmpty)
      throw new io.fermion.core.dataset.FermionCommitConflictException(
        path,
        0,
        snapshot.version.get,
        "created the dataset first: it already exists; nothing was written"
      )
    // Appends keep the dataset's field ids; an overwrite or a creation starts the schema afresh.
    val fresh = SparkTypeMapping.toFermion(schema)
    val fermionSchema = snapshot.manifest match {
      case Some(m) if !overwrite && intent != WriteIntent.Create => SchemaIds.assignFrom(m.schema, fresh, m.lastFieldId)
      case _ => fresh
    }
    // The dataset's schema after a merging append, when the data changes it.
    val evolved = snapshot.manifest.filter(_ => merging).flatMap { m =>
      val merged =
        try io.fermion.core.schema.TypeWidening.merge(m.schema, fermionSchema)
        catch {
          case e: IllegalArgumentException =>
            throw new IllegalArgumentException(s"Cannot append to Fermion table at '$path': ${e.getMessage}", e)
        }
      m.partitionFields.map(_.name).find(n => !schema.fieldNames.exists(_.equalsIgnoreCase(n))).foreach { n =>
        throw new IllegalArgumentException(
          s"Cannot append to Fermion table at '$path': the data lacks partition column `$n`"
        )
      }
      if (merged == m.schema) None else Some(merged)
    }
    // Partition columns: declared by a create or replace, else the dataset's own.
    val existingPartitions = snapshot.manifest.map(_.partitionFields.map(_.name)).getOrElse(IndexedSeq.empty)
    val partitionNames = intent match {
      case WriteIntent.Create | WriteIntent.Overwrite => partitionBy.getOrElse(existingPartitions)
      case WriteIntent.Append if snapshot.manifest.isEmpty => partitionBy.getOrElse(Nil)
      case _ => existingPartitions
    }
    val spec = io.fermion.core.dataset.Partitioning.specOf(fermionSchema, partitionNames, path)
    val partitionOrdinals =
      spec.map(id =>
        schema.fieldNames.indexWhere(_.equalsIgnoreCase(fermionSchema.fields.find(_.fieldId == id).get.name))
      )
    // What the data files hold: every column but the partition columns.
    val dataStruct = StructType(schema.fields.indices.filterNot(partitionOrdinals.contains).map(schema.fields))
    val settings = FieldWriteSettings.resolve(dataStruct, writerOptions)
    if (snapshot.manifest.isEmpty && snapshot.files.nonEmpty)
      throw new IllegalArgumentException(
        s"'$path' holds Fermion files but no dataset (no ${DatasetLayout.VersionsDir}/); write to a new path"
      )
    val finalIntent = intent
    val batchKey = io.fermion.core.options.OptionRegistry.BatchKey.in(effective).filter(_.nonEmpty).map { key =>
      val i = dataStruct.fieldNames.indexWhere(_.equalsIgnoreCase(key))
      if (i < 0)
        throw new IllegalArgumentException(
          s"batchKey names `$key`, which is not a data column (${dataStruct.fieldNames.mkString(", ")})"
        )
      dataStruct(i).dataType match {
        case ByteType | ShortType | IntegerType | LongType => i
        case other =>
          throw new IllegalArgumentException(s"batchKey `$key` must be an integral column, not ${other.sql}")
      }
    }
    def batchWrite: BatchWrite =
      new FermionBatchWrite(
        path,
        dataStruct,
        fermionSchema,
        settings,
        finalIntent,
        snapshot.version.getOrElse(0L),
        new SerializableHadoopConf(FermionTableSchema.hadoopConf()),
        FermionOptions.datasetConfig(options),
        onCommit,
        batchKey,
        Some(snapshot),
        if (spec.isEmpty) None else Some(FermionBatchWrite.Partitioning(schema, partitionOrdinals, spec)),
        evolved
      )
    // Each task's rows sorted by the partition columns (one file per partition) and by the batch
    // key (every key's rows form one batch); with a batch key, every key's rows in one task (Spark
    // shuffles by the key) whatever the input's partitioning.
    val sortBy = partitionOrdinals.map(schema(_).name) ++ batchKey.map(dataStruct(_).name)
    val what = (if (spec.isEmpty) "" else s", partitioned by ${partitionOrdinals.map(schema(_).name).mkString(", ")}") +
      batchKey.map(k => s", batches by ${dataStruct(k).name}").getOrElse("")
    // Streaming: each micro-batch an append (complete mode: an overwrite), committed once per epoch.
    def streamingWrite: StreamingWrite = {
      if (evolved.nonEmpty)
        throw new UnsupportedOperationException(
          s"mergeSchema cannot change the schema of Fermion table at '$path' from a stream; change it first " +
            "(ALTER TABLE, or a batch append with mergeSchema)"
        )
      new FermionStreamingWrite(path, batchWrite.asInstanceOf[FermionBatchWrite], finalIntent, info.queryId())
    }
    if (sortBy.isEmpty)
      new Write {
        override def toBatch: BatchWrite = batchWrite
        override def toStreaming: StreamingWrite = streamingWrite
        override def description(): String = s"FermionWrite($path, $finalIntent)"
      }
    else
      new Write with RequiresDistributionAndOrdering {
        override def toStreaming: StreamingWrite = streamingWrite
        override def requiredDistribution(): Distribution = batchKey match {
          case Some(k) => Distributions.clustered(Array[Expression](Expressions.column(dataStruct(k).name)))
          case None => Distributions.unspecified()
        }
        override def requiredOrdering(): Array[SortOrder] =
          sortBy.map(c => Expressions.sort(Expressions.column(c), SortDirection.ASCENDING)).toArray
        override def toBatch: BatchWrite = batchWrite
        override def description(): String = s"FermionWrite($path, $finalIntent$what)"
      }
  }
}

object FermionWriteBuilder {
  import org.apache.spark.sql.types.{ArrayType, DataType, MapType}

  /** The intent of replacing the partitions `predicates` (all must hold) select, translated as
    * reads translate them; a part that does not translate makes the core refuse the overwrite. */
  def replaceWhere(predicates: Array[Predicate], schema: StructType, text: String): WriteIntent = {
    val parts = predicates.toSeq.map(p =>
      io.fermion.spark.read.SparkPredicateTranslation.translate(p, schema).getOrElse(
        io.fermion.core.expr.FilterExpr.Unknown
      )
    )
    WriteIntent.ReplaceWhere(
      parts.reduceOption[io.fermion.core.expr.FilterExpr](io.fermion.core.expr.FilterExpr.And).getOrElse(
        throw new IllegalArgumentException(s"an overwrite by predicate needs a predicate ($text)")
      ),
      text
    )
  }

  /** A SQL condition (`replaceWhere`) over `schema` as Spark's V2 predicates: parsed, resolved and
    * constant-folded by Spark (so `d = '2026-01-01'` compares with a date), then translated. */
  def parsePredicate(text: String, schema: StructType): Seq[Predicate] = {
    import org.apache.spark.sql.catalyst.expressions.PredicateHelper
    import org.apache.spark.sql.catalyst.plans.logical.{Filter, LocalRelation}
    val spark = org.apache.spark.sql.SparkSession.active.asInstanceOf[org.apache.spark.sql.classic.SparkSession]
    val parsed =
      try spark.sessionState.sqlParser.parseExpression(text)
      catch {
        case e: Exception =>
          throw new IllegalArgumentException(s"replaceWhere `$text` is not a SQL condition: ${e.getMessage}", e)
      }
    val relation = LocalRelation(org.apache.spark.sql.catalyst.types.DataTypeUtils.toAttributes(schema))
    val analyzed = spark.sessionState.executePlan(Filter(parsed, relation)).analyzed
    val folded = org.apache.spark.sql.catalyst.optimizer.ConstantFolding(analyzed)
    val condition = folded.collectFirst { case f: Filter => f.condition }.getOrElse(
      throw new IllegalArgumentException(s"replaceWhere `$text` is not a condition on the written columns")
    )
    object Split extends PredicateHelper {
      def apply(e: org.apache.spark.sql.catalyst.expressions.Expression) = splitConjunctivePredicates(e)
    }
    Split(condition).map(c =>
      org.apache.spark.sql.fermion.V2Predicates.translate(c).getOrElse(
        throw new IllegalArgumentException(
          s"replaceWhere `$text`: `${c.sql}` cannot be evaluated on partition values (use comparisons, IN and " +
            "IS [NOT] NULL of partition columns with literals)"
        )
      )
    )
  }

  /** Whether an overwrite replaces only the partitions written: the `partitionOverwriteMode` write
    * option, else Spark's `spark.sql.sources.partitionOverwriteMode`. */
  def dynamicOverwrite(options: Map[String, String]): Boolean =
    io.fermion.core.options.OptionRegistry.PartitionOverwriteMode.in(options).getOrElse(
      org.apache.spark.sql.internal.SQLConf.get.partitionOverwriteMode.toString
    ).equalsIgnoreCase("dynamic")

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

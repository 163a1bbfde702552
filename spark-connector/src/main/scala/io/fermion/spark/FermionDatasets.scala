package io.fermion.spark

import java.util.Locale

import scala.collection.mutable

import io.fermion.core.dataset._
import io.fermion.core.schema.{FermionField, FermionSchema}
import io.fermion.core.compaction.Compaction
import io.fermion.core.scan.{ColumnRequest, Snapshot}
import io.fermion.spark.read.MetadataColumns
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import org.roaringbitmap.RoaringBitmap

/** Dataset operations beyond reads and writes, for Scala and (through `fermion_spark.FermionDataset`)
  * Python: history, tags, deletes, metadata-only schema changes. Each change commits a new version.
  *
  * {{{
  * FermionDatasets.delete(spark, "/data/t", "id < 100")
  * FermionDatasets.addColumns(spark, "/data/t", "score double, note string")
  * FermionDatasets.versions(spark, "/data/t").show()
  * }}}
  */
object FermionDatasets {
  private def open(path: String): FermionDataset = {
    val ds = new FermionDataset(new Path(path), FermionTableSchema.hadoopConf())
    if (!ds.exists) throw new FermionDatasetNotFoundException(path, "the path holds no Fermion dataset")
    ds
  }

  /** A dataset about to be changed: the file system must support atomic commits (checked before
    * any file is written). */
  private def openForChange(path: String): FermionDataset = {
    val ds = open(path)
    ds.checkCommitStore()
    ds
  }

  /** One row per version: version, timestamp, operation, fragments, rows, tags. */
  def versions(spark: SparkSession, path: String): DataFrame = {
    val ds = open(path)
    val tagsByVersion = ds.tags.groupBy(_._2).map { case (v, ts) => v -> ts.keys.toSeq.sorted }
    val rows = ds.versionNumbers().map { v =>
      val m = ds.manifest(v)
      Row(
        v,
        new java.sql.Timestamp(m.timestampMillis),
        m.operation,
        m.fragments.size.toLong,
        m.rowCount,
        tagsByVersion.getOrElse(v, Nil)
      )
    }
    val schema = StructType(Seq(
      StructField("version", LongType, false),
      StructField("timestamp", TimestampType, false),
      StructField("operation", StringType, false),
      StructField("fragments", LongType, false),
      StructField("rows", LongType, false),
      StructField("tags", ArrayType(StringType, false), false)
    ))
    spark.createDataFrame(java.util.Arrays.asList(rows: _*), schema)
  }

  def latestVersion(path: String): Long = open(path).latestVersion().get
  def rowCount(path: String): Long = open(path).latest().get.rowCount
  def tags(path: String): java.util.Map[String, java.lang.Long] = {
    val m = new java.util.TreeMap[String, java.lang.Long]()
    open(path).tags.foreach { case (k, v) => m.put(k, v) }
    m
  }
  def createTag(path: String, tag: String, version: Long): Unit = openForChange(path).createTag(tag, version)
  def deleteTag(path: String, tag: String): Unit = openForChange(path).deleteTag(tag)

  /** Deletes the rows matching `condition` (a SQL boolean expression) by writing deletion files;
    * returns the number of rows deleted. Data files are not rewritten. */
  def delete(spark: SparkSession, path: String, condition: String): Long = {
    val ds = openForChange(path)
    val base = ds.latest().get
    val matching = spark.read.format("fermion").option("versionAsOf", base.version).load(path)
      .where(condition).select(MetadataColumns.RowAddressName)
    // Per task, the matching rows as one bitmap per fragment; the driver merges them.
    val perTask = matching.queryExecution.toRdd.mapPartitions { rows =>
      val byFragment = mutable.HashMap.empty[Long, RoaringBitmap]
      rows.foreach { r =>
        val a = r.getLong(0);
        byFragment.getOrElseUpdate(ColumnRequest.fragmentOf(a), new RoaringBitmap()).add(ColumnRequest.rowOf(a))
      }
      byFragment.iterator.map { case (f, b) =>
        val out = new java.io.ByteArrayOutputStream(); b.runOptimize(); b.serialize(new java.io.DataOutputStream(out));
        (f, out.toByteArray)
      }
    }.collect()
    val hits = mutable.HashMap.empty[Long, RoaringBitmap]
    perTask.foreach { case (f, bytes) =>
      val b = new RoaringBitmap(); b.deserialize(new java.io.DataInputStream(new java.io.ByteArrayInputStream(bytes)))
      hits.getOrElseUpdate(f, new RoaringBitmap()).or(b)
    }
    if (hits.isEmpty) return 0L
    var deleted = 0L
    val updated = IndexedSeq.newBuilder[Fragment]
    val removed = Set.newBuilder[Long]
    base.fragments.filter(f => hits.contains(f.id)).foreach { f =>
      val rows = hits(f.id)
      deleted += rows.getLongCardinality
      f.deletion.foreach(d => rows.or(ds.readDeletionFile(d)))
      if (rows.getLongCardinality >= f.physicalRows) removed += f.id
      else updated += f.copy(deletion = Some(ds.writeDeletionFile(f.id, base.version, rows)))
    }
    ds.commit(base.version, Operation.Delete(updated.result(), removed.result(), condition))
    deleted
  }

  /** Adds nullable columns (a DDL list such as `"score double, tags array<string>"`); existing rows
    * read them as null. No data file is written. */
  def addColumns(spark: SparkSession, path: String, ddl: String): Long = {
    val added = StructType.fromDDL(ddl)
    SparkTypeMapping.validate(added)
    val update = openForChange(path).updateSchema()
    SparkTypeMapping.toFermion(added).fields.foreach(update.addColumn)
    update.commit().version
  }

  /** Adds columns computed from the existing ones (`names(i)` = SQL expression `expressions(i)`),
    * written as one new data file per fragment beside the existing ones, which are not rewritten
    * (zero-copy data evolution). Rows deleted by then read the new columns as null. Returns the
    * new version. */
  def addColumnsFrom(
      spark: SparkSession,
      path: String,
      names: java.util.List[String],
      expressions: java.util.List[String]
  ): Long = {
    import scala.jdk.CollectionConverters._
    val cols = names.asScala.toIndexedSeq.zip(expressions.asScala.toIndexedSeq)
    require(cols.nonEmpty && names.size == expressions.size, "give one expression per new column")
    val ds = openForChange(path)
    val base = ds.latest().get
    // One partition per data file, rows in file order: what the column files are written from.
    val snapshot = Snapshot.ofManifest(ds, base)
    val table = new FermionTable(
      path,
      FermionTableSchema.of(snapshot).get,
      acceptAnySchema = false,
      () => snapshot,
      wholeFiles = true
    )
    val df = org.apache.spark.sql.fermion.Relations.dataFrame(spark, table)
      .selectExpr((MetadataColumns.RowAddressName +: cols.map { case (n, e) =>
        s"$e AS `${n.replace("`", "``")}`"
      }): _*)
    writeColumnFiles(spark, path, ds, base, df)
  }

  /** Adds the columns of `values` — a DataFrame with `_rowaddr` (from reading the dataset's latest
    * version) and the new columns — as new data files per fragment; rows `values` does not cover
    * read null. Existing files are not rewritten. Returns the new version. */
  def addColumnsFromDataFrame(spark: SparkSession, path: String, values: DataFrame): Long = {
    val ds = openForChange(path)
    val base = ds.latest().get
    val addr = values.schema.fields.find(_.name == MetadataColumns.RowAddressName).getOrElse(
      throw new IllegalArgumentException(
        s"the DataFrame needs the ${MetadataColumns.RowAddressName} column of the rows it fills (select it when reading the dataset)"
      )
    )
    if (addr.dataType != LongType)
      throw new IllegalArgumentException(s"${MetadataColumns.RowAddressName} must be bigint, got ${addr.dataType.sql}")
    import org.apache.spark.sql.functions.{col, shiftrightunsigned}
    val others = values.columns.filter(_ != MetadataColumns.RowAddressName).map(c => col(s"`${c.replace("`", "``")}`"))
    val fragments = math.max(1, base.fragments.size)
    val df = values.select(col(MetadataColumns.RowAddressName) +: others: _*)
      .repartition(fragments, shiftrightunsigned(col(MetadataColumns.RowAddressName), 32))
      .sortWithinPartitions(MetadataColumns.RowAddressName)
    writeColumnFiles(spark, path, ds, base, df)
  }

  /** Writes `df` (`_rowaddr` first, then the new columns; rows grouped by fragment and in row
    * order within a partition) as one data file per fragment with the stripes of its leading
    * file, then commits them over `base`. */
  private def writeColumnFiles(
      spark: SparkSession,
      path: String,
      ds: FermionDataset,
      base: Manifest,
      df: DataFrame
  ): Long = {
    val existing = base.schema.fields.map(_.name.toLowerCase(Locale.ROOT)).toSet
    df.columns.drop(1).find(c => existing.contains(c.toLowerCase(Locale.ROOT))).foreach { c =>
      throw new IllegalArgumentException(
        s"Cannot add column `$c` to the Fermion dataset at '$path': it already has one"
      )
    }
    if (df.columns.length < 2) throw new IllegalArgumentException("no new columns to add")
    val added = StructType(df.schema.fields.drop(1).map(_.copy(nullable = true)))
    SparkTypeMapping.validate(added)
    val addedFields = SchemaIds.assignFrom(base.schema, SparkTypeMapping.toFermion(added), base.lastFieldId)
    val conf = SerializableHadoopConf.broadcast()
    // The stripe layout of each fragment's leading file, which the new files must share.
    val layouts: Map[Long, IndexedSeq[Int]] = base.fragments.filter(_.physicalRows > 0).map { f =>
      val r = io.fermion.core.read.FermionFileReader.open(
        ds.resolvePath(f.files.head.path),
        conf.value.value,
        io.fermion.core.read.ReaderOptions()
      )
      try f.id -> (0 until r.numStripes).map(r.stripes.rowCount)
      finally r.close()
    }.toMap
    val root = path
    val version = base.version
    val types = added.fields.map(_.dataType)
    val sc = spark.sparkContext
    val previous = sc.getLocalProperty("spark.job.description")
    sc.setJobDescription(
      s"Fermion: adding ${added.fieldNames.mkString(", ")} to ${base.fragments.size} fragments of $path"
    )
    val written =
      try df.queryExecution.toRdd.mapPartitions { rows =>
          val out = scala.collection.mutable.ArrayBuffer.empty[(Long, String)]
          val nulls = new org.apache.spark.sql.catalyst.expressions.GenericInternalRow(types.length)
          var writer: io.fermion.spark.write.FermionDataWriter = null
          var fragment = -1L
          var next = 0L
          var total = 0L
          def finish(): Unit = if (writer != null) {
            while (next < total) { writer.write(nulls); next += 1 } // rows not given (or deleted) read null
            out += fragment -> writer.commit().asInstanceOf[io.fermion.spark.write.FermionCommitMessage].relativePath
            writer = null
          }
          try {
            rows.foreach { r =>
              val address = r.getLong(0)
              val f = ColumnRequest.fragmentOf(address)
              if (f != fragment) {
                if (out.exists(_._1 == f))
                  throw new IllegalStateException(s"rows of fragment $f are not grouped together")
                finish()
                val layout = layouts.getOrElse(
                  f,
                  throw new IllegalArgumentException(
                    s"a ${MetadataColumns.RowAddressName} names fragment $f, which version $version of '$root' does not have (compacted or overwritten since?)"
                  )
                )
                fragment = f; next = 0L; total = layout.map(_.toLong).sum
                val (relative, file) = new FermionDataset(new Path(root), conf.value.value).newDataFile()
                writer = new io.fermion.spark.write.FermionDataWriter(
                  relative,
                  file,
                  added,
                  addedFields,
                  io.fermion.core.write.WriterOptions(),
                  conf.value.value,
                  Some(layout)
                )
              }
              val offset = ColumnRequest.rowOf(address).toLong
              if (offset < next)
                throw new IllegalArgumentException(s"two values for row ${MetadataColumns.RowAddressName} = $address")
              if (offset >= total) throw new IllegalArgumentException(
                s"${MetadataColumns.RowAddressName} = $address is past the $total rows of fragment $f"
              )
              while (next < offset) { writer.write(nulls); next += 1 }
              writer.write(new org.apache.spark.sql.catalyst.expressions.GenericInternalRow(types.indices.map(i =>
                r.get(i + 1, types(i))
              ).toArray[Any]))
              next += 1
            }
            finish()
          } catch {
            case t: Throwable =>
              if (writer != null) writer.abort()
              val fs = new FermionDataset(new Path(root), conf.value.value)
              out.foreach(o => fs.fs.delete(fs.resolvePath(o._2), false))
              throw t
          }
          out.iterator
        }.collect()
      finally sc.setJobDescription(previous)
    val ids = addedFields.fields.map(_.fieldId)
    written.groupBy(_._1).find(_._2.length > 1).foreach { case (f, _) =>
      written.foreach(w => ds.fs.delete(ds.resolvePath(w._2), false))
      throw new IllegalStateException(s"the rows of fragment $f reached several tasks; nothing was added")
    }
    val files = written.map { case (f, p) => f -> DataFile(p, ids) }.toMap
    try ds.commit(
        base.version,
        Operation.AddColumnFiles(
          FermionSchema(base.schema.fields ++ addedFields.fields),
          files,
          s"add columns ${added.fieldNames.mkString(", ")}"
        )
      ).version
    catch { case t: Throwable => written.foreach(w => ds.fs.delete(ds.resolvePath(w._2), false)); throw t }
  }

  /** Drops columns from the schema; their data stays in the files until compaction rewrites them. */
  def dropColumns(path: String, columns: java.util.List[String]): Long = {
    import scala.jdk.CollectionConverters._
    openForChange(path).updateSchema().dropColumns(columns.asScala.toSeq: _*).commit().version
  }

  /** Renames a top-level column; files are matched by field id, so no data is touched. */
  def renameColumn(path: String, from: String, to: String): Long =
    openForChange(path).updateSchema().renameColumn(from, to).commit().version

  /** Rewrites small fragments and fragments with deleted rows into fragments of about `targetRows`
    * rows ([[Compaction]]), one Spark task per output file; returns the new version, or the current
    * one when nothing needed compacting. Readers of older versions are unaffected. */
  def compact(spark: SparkSession, path: String, targetRows: Long): Long = {
    val ds = openForChange(path)
    val stored = ds.latest().map(FermionDataset.storedWriteOptions).getOrElse(Map.empty)
    Compaction.plan(ds, targetRows, io.fermion.core.write.WriterOptions.parse(stored)) match {
      case None => ds.latestVersion().get
      case Some(plan) =>
        val conf = SerializableHadoopConf.broadcast()
        val sc = spark.sparkContext
        val previous = sc.getLocalProperty("spark.job.description")
        sc.setJobDescription(
          s"Fermion compaction of ${plan.fragments.size} fragments (${plan.rows} rows) into ${plan.groups.size} at $path"
        )
        val written =
          try sc.parallelize(plan.groups, plan.groups.size).map(g => Compaction.rewrite(plan, g, conf.value.value))
              .collect()
          finally sc.setJobDescription(previous)
        Compaction.commit(ds, plan, written.toSeq).version
    }
  }

  /** Removes versions older than `retainHours` (never the latest or a tagged one) and the files no
    * remaining version references; returns (versions removed, files removed, bytes removed). */
  def cleanup(path: String, retainHours: Double, allowShortRetention: Boolean): (Int, Int, Long) = {
    val r = open(path).cleanup(retainHours, allowShortRetention)
    (r.versionsRemoved, r.filesRemoved, r.bytesRemoved)
  }
}

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

  /** Deletes the rows matching `condition` (a SQL boolean expression, parsed and evaluated by
    * Spark on the latest version) by writing deletion files; returns the number of rows deleted.
    * Data files are not rewritten. */
  def delete(spark: SparkSession, path: String, condition: String): Long = {
    val ds = openForChange(path)
    val base = ds.latest().get
    val matching = spark.read.format("fermion").option("versionAsOf", base.version).load(path)
      .where(condition).select(MetadataColumns.RowAddressName)
    // Per task, the matching rows as one bitmap per fragment; the driver merges them.
    val perTask = matching.queryExecution.toRdd.mapPartitions { rows =>
      val byFragment = mutable.HashMap.empty[Long, RoaringBitmap]
      rows.foreach { r =>
        val a = r.getLong(0)
        byFragment.getOrElseUpdate(ColumnRequest.fragmentOf(a), new RoaringBitmap()).add(ColumnRequest.rowOf(a))
      }
      Iterator(io.fermion.spark.write.FermionDeletedRows.of(byFragment.toMap))
    }.collect()
    val hits = io.fermion.spark.write.FermionDeletedRows.merge(perTask.toSeq)
    ds.deleteRows(base.version, hits, condition)._1
  }

  /** Sets columns of the rows matching `condition` (a SQL boolean expression; empty: every row):
    * column `names(i)` to the SQL expression `expressions(i)` over the row's columns. Runs
    * `UPDATE fermion.`path` SET ... WHERE ...` (a row-level operation: the changed rows' old
    * versions are deleted through deletion files and their new versions written as new fragments,
    * in one version). Returns the latest version afterwards. Upserts: Spark's
    * `source.mergeInto("fermion.`path`", condition)` or SQL `MERGE INTO`. */
  def update(
      spark: SparkSession,
      path: String,
      condition: String,
      names: java.util.List[String],
      expressions: java.util.List[String]
  ): Long = {
    import scala.jdk.CollectionConverters._
    if (names.isEmpty || names.size != expressions.size)
      throw new IllegalArgumentException("an update needs one SQL expression for each of at least one column")
    val set = names.asScala.zip(expressions.asScala).map { case (c, e) => s"`${c.replace("`", "``")}` = ($e)" }
    val where = Option(condition).map(_.trim).filter(_.nonEmpty).map(c => s" WHERE $c").getOrElse("")
    openForChange(path)
    spark.sql(s"UPDATE ${FermionTable.pathName(path)} SET ${set.mkString(", ")}$where")
    latestVersion(path)
  }

  /** Makes `version` current again, as a new version (RESTORE); returns the new version. */
  def restore(path: String, version: Long): Long = openForChange(path).restore(version).version

  /** Restores the version current at `timestamp` (a timestamp string in the session time zone). */
  def restoreToTimestamp(spark: SparkSession, path: String, timestamp: String): Long = {
    val ds = openForChange(path)
    ds.restore(ds.versionAsOfTime(timestampMillis(spark, timestamp)).version).version
  }

  /** Milliseconds since the epoch of a timestamp string, read as Spark reads `TIMESTAMP AS OF`
    * (a cast to TIMESTAMP in the session time zone). */
  private[spark] def timestampMillis(spark: SparkSession, timestamp: String): Long = {
    import org.apache.spark.sql.functions.{lit, unix_micros}
    val r = spark.range(1).select(unix_micros(lit(timestamp).cast(TimestampType))).head()
    if (r.isNullAt(0)) throw new IllegalArgumentException(s"'$timestamp' is not a timestamp")
    Math.floorDiv(r.getLong(0), 1000L)
  }

  // ---- random access ----

  /** The core scan of the latest version's `columns` (all when empty) and `_rowaddr`, `_rowid`. */
  private def takeScan(path: String, columns: java.util.List[String]): io.fermion.core.scan.Scan = {
    import scala.jdk.CollectionConverters._
    val snapshot = Snapshot.open(path, FermionTableSchema.hadoopConf()).requireExists(FermionTableSchema.hadoopConf())
    val b = snapshot.scanBuilder()
    val cols = Option(columns).map(_.asScala.toSeq).getOrElse(Nil)
    if (cols.nonEmpty) b.select(cols: _*)
    b.withRowAddress().withRowId().build()
  }

  /** The rows of a take on the driver as a DataFrame, in request order. */
  private def taken(spark: SparkSession, scan: io.fermion.core.scan.Scan)(
      f: (io.fermion.core.scan.Scan, org.apache.arrow.memory.BufferAllocator) => io.fermion.core.scan.ScanBatch
  ): DataFrame = {
    val schema = StructType(scan.fields.map(x => StructField(x.name, SparkTypeMapping.toSpark(x), x.nullable)))
    val allocator = io.fermion.spark.read.FermionColumnarReader.root.newChildAllocator("fermion-take", 0, Long.MaxValue)
    try {
      val batch = f(scan, allocator)
      try org.apache.spark.sql.fermion.Relations.local(
          spark,
          schema,
          io.fermion.spark.read.SparkColumns.rows(batch, schema)
        )
      finally batch.close()
    } finally allocator.close()
  }

  /** Rows by 0-based position in the latest version's row order (deleted rows not counted), in
    * request order (repeats allowed), with `_rowaddr` and `_rowid`; `columns` empty or null: all.
    * Read by random access: a few reads per column and fragment, no scan. */
  def take(spark: SparkSession, path: String, positions: Array[Long], columns: java.util.List[String]): DataFrame =
    taken(spark, takeScan(path, columns))((s, a) => s.takePositions(positions, FermionTableSchema.hadoopConf(), a))

  /** Rows by stable row id (`_rowid`), in request order; the dataset must have stable row ids. */
  def takeRows(spark: SparkSession, path: String, rowIds: Array[Long], columns: java.util.List[String]): DataFrame =
    taken(spark, takeScan(path, columns))((s, a) => s.takeRowIds(rowIds, FermionTableSchema.hadoopConf(), a))

  /** Every row of the batches `batchIds` (a dataset written with `batchKey`), batch after batch in
    * the order asked for, with `batch_id` and `index_in_batch`: each batch is one page per column. */
  def takeBatches(
      spark: SparkSession,
      path: String,
      batchIds: Array[Long],
      columns: java.util.List[String]
  ): DataFrame = {
    import scala.jdk.CollectionConverters._
    val snapshot = Snapshot.open(path, FermionTableSchema.hadoopConf()).requireExists(FermionTableSchema.hadoopConf())
    val b = snapshot.scanBuilder()
    val cols = Option(columns).map(_.asScala.toSeq).getOrElse(Nil)
    if (cols.nonEmpty) b.select(cols: _*)
    taken(spark, b.withBatchColumns().build())((s, a) => s.takeBatches(batchIds, FermionTableSchema.hadoopConf(), a))
  }

  /** Rows by address (`_rowaddr`), in request order. */
  def takeAddresses(
      spark: SparkSession,
      path: String,
      addresses: Array[Long],
      columns: java.util.List[String]
  ): DataFrame =
    taken(spark, takeScan(path, columns))((s, a) => s.takeAddresses(addresses, FermionTableSchema.hadoopConf(), a))

  /** The rows whose `_rowid` (or, with `byAddress`, `_rowaddr`) is a value of `keys`' column
    * `keyColumn` (a long column): a join that Spark runs as takes per fragment on its executors,
    * not as a scan. Keys no row has are dropped; each row comes once per key occurrence. */
  def takeRowsFrom(
      spark: SparkSession,
      path: String,
      keys: DataFrame,
      keyColumn: String,
      byAddress: Boolean,
      columns: java.util.List[String]
  ): DataFrame = {
    val scan = takeScan(path, columns)
    val schema = StructType(scan.fields.map(x => StructField(x.name, SparkTypeMapping.toSpark(x), x.nullable)))
    val conf = SerializableHadoopConf.broadcast()
    // Stable row ids map to addresses through the row id index (built from the manifest on each
    // executor, no data read): one broadcast.
    val resolver = spark.sparkContext.broadcast(scan)
    val addresses = keys.select(org.apache.spark.sql.functions.col(keyColumn).cast(LongType)).queryExecution.toRdd
      .mapPartitions { rows =>
        val ks = rows.filter(!_.isNullAt(0)).map(_.getLong(0)).toArray
        val s = resolver.value
        val a = if (byAddress) ks else s.rowIdAddresses(ks, conf.value.value)
        s.liveAddresses(a, conf.value.value).iterator
      }
    val parts = math.max(1, addresses.getNumPartitions)
    val rows = addresses.map(a => (ColumnRequest.fragmentOf(a), a))
      .partitionBy(new org.apache.spark.HashPartitioner(parts))
      .mapPartitions { it =>
        val s = resolver.value
        val all = it.map(_._2).toArray
        if (all.isEmpty) Iterator.empty
        else {
          val allocator =
            io.fermion.spark.read.FermionColumnarReader.root.newChildAllocator("fermion-take", 0, Long.MaxValue)
          try {
            s.takeTasks(all, 1).iterator.flatMap { t =>
              val b = t.read(conf.value.value, allocator)
              try io.fermion.spark.read.SparkColumns.rows(b, schema)
              finally b.close()
            }.toIndexedSeq.iterator
          } finally allocator.close()
        }
      }
    org.apache.spark.sql.fermion.Relations.fromRdd(spark, schema, rows)
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
    val df = values.select((col(MetadataColumns.RowAddressName) +: others.toIndexedSeq): _*)
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
      // Opened for no column: the footer and stripe directory alone (format 1.5).
      val r = io.fermion.core.read.FermionFileReader.openColumns(
        ds.resolvePath(f.files.head.path),
        conf.value.value,
        io.fermion.core.read.ReaderOptions(),
        -1L,
        Nil
      )
      try f.id -> (0 until r.numStripes).map(r.stripeRowCount)
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
          val out = scala.collection.mutable.ArrayBuffer.empty[(Long, String, IndexedSeq[Long])]
          val nulls = new org.apache.spark.sql.catalyst.expressions.GenericInternalRow(types.length)
          var writer: io.fermion.spark.write.FermionDataWriter = null
          var fragment = -1L
          var next = 0L
          var total = 0L
          def finish(): Unit = if (writer != null) {
            while (next < total) { writer.write(nulls); next += 1 } // rows not given (or deleted) read null
            val m = writer.commit().asInstanceOf[io.fermion.spark.write.FermionCommitMessage]
            out += ((fragment, m.relativePath, m.columnBytes))
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
    val files = written.map { case (f, p, sizes) => f -> DataFile(p, ids, sizes) }.toMap
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

  /** Widens the type of column `path` (a top-level name, then struct field names; `element` and
    * `value` for a list's elements and a map's values) to `dataType`: byte -> short -> int -> long,
    * float -> double, decimal precision up keeping integer digits, date -> timestamp_ntz. No data is
    * rewritten; other changes fail naming the column and both types. Returns the new version. */
  def changeColumnType(path: String, column: Seq[String], dataType: org.apache.spark.sql.types.DataType): Long = {
    val to = SparkTypeMapping.toFermionField(org.apache.spark.sql.types.StructField(column.last, dataType)).dataType
    openForChange(path).updateSchema().changeColumnType(column, to).commit().version
  }

  /** [[changeColumnType]] with the column as SQL names it (`a.b`, quoted with backticks where
    * needed) and the type as SQL spells it (`bigint`, `decimal(12,2)`). */
  def changeColumnType(spark: SparkSession, path: String, column: String, dataType: String): Long = {
    val parser = spark.sessionState.sqlParser
    changeColumnType(path, parser.parseMultipartIdentifier(column), parser.parseDataType(dataType))
  }

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
    val r = cleanupResult(path, retainHours, allowShortRetention, dryRun = false)
    (r.versionsRemoved, r.filesRemoved, r.bytesRemoved)
  }

  /** [[cleanup]] with what it removed (or, with `dryRun`, would remove), file by file. */
  def cleanupResult(path: String, retainHours: Double, allowShortRetention: Boolean, dryRun: Boolean): CleanupResult =
    open(path).cleanupOlderThan(retainHours, allowShortRetention, dryRun)
}

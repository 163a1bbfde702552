package io.fermion.spark

import java.util.Locale

import scala.collection.mutable

import io.fermion.core.dataset._
import io.fermion.core.schema.{FermionField, FermionSchema}
import io.fermion.spark.read.RowAddress
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
    if (!ds.exists) throw new FermionVersionNotFoundException(path, "the path holds no Fermion dataset")
    ds
  }

  /** One row per version: version, timestamp, operation, fragments, rows, tags. */
  def versions(spark: SparkSession, path: String): DataFrame = {
    val ds = open(path)
    val tagsByVersion = ds.tags.groupBy(_._2).map { case (v, ts) => v -> ts.keys.toSeq.sorted }
    val rows = ds.versionNumbers().map { v =>
      val m = ds.manifest(v)
      Row(v, new java.sql.Timestamp(m.timestampMillis), m.operation, m.fragments.size.toLong, m.rowCount, tagsByVersion.getOrElse(v, Nil))
    }
    val schema = StructType(Seq(StructField("version", LongType, false), StructField("timestamp", TimestampType, false),
      StructField("operation", StringType, false), StructField("fragments", LongType, false), StructField("rows", LongType, false),
      StructField("tags", ArrayType(StringType, false), false)))
    spark.createDataFrame(java.util.Arrays.asList(rows: _*), schema)
  }

  def latestVersion(path: String): Long = open(path).latestVersion().get
  def rowCount(path: String): Long = open(path).latest().get.rowCount
  def tags(path: String): java.util.Map[String, java.lang.Long] = {
    val m = new java.util.TreeMap[String, java.lang.Long]()
    open(path).tags.foreach { case (k, v) => m.put(k, v) }
    m
  }
  def createTag(path: String, tag: String, version: Long): Unit = open(path).createTag(tag, version)
  def deleteTag(path: String, tag: String): Unit = open(path).deleteTag(tag)

  /** Deletes the rows matching `condition` (a SQL boolean expression) by writing deletion files;
    * returns the number of rows deleted. Data files are not rewritten. */
  def delete(spark: SparkSession, path: String, condition: String): Long = {
    val ds = open(path)
    val base = ds.latest().get
    val matching = spark.read.format("fermion").option("versionAsOf", base.version).load(path)
      .where(condition).select(RowAddress.Name)
    // Per task, the matching rows as one bitmap per fragment; the driver merges them.
    val perTask = matching.queryExecution.toRdd.mapPartitions { rows =>
      val byFragment = mutable.HashMap.empty[Long, RoaringBitmap]
      rows.foreach { r => val a = r.getLong(0); byFragment.getOrElseUpdate(RowAddress.fragment(a), new RoaringBitmap()).add(RowAddress.row(a)) }
      byFragment.iterator.map { case (f, b) =>
        val out = new java.io.ByteArrayOutputStream(); b.runOptimize(); b.serialize(new java.io.DataOutputStream(out)); (f, out.toByteArray)
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
    val ds = open(path)
    val base = ds.latest().get
    val added = StructType.fromDDL(ddl)
    SparkTypeMapping.validate(added)
    val existing = base.schema.fields.map(_.name.toLowerCase(Locale.ROOT)).toSet
    added.fields.find(f => existing.contains(f.name.toLowerCase(Locale.ROOT))).foreach { f =>
      throw new IllegalArgumentException(s"Cannot add column `${f.name}` to the Fermion dataset at '$path': it already has one")
    }
    val fresh = SchemaIds.assignFrom(base.schema, SparkTypeMapping.toFermion(StructType(added.fields.map(_.copy(nullable = true)))))
    val schema = FermionSchema(base.schema.fields ++ fresh.fields)
    ds.commit(base.version, Operation.Project(schema, s"add columns ${added.fieldNames.mkString(", ")}")).version
  }

  /** Drops columns from the schema; their data stays in the files until compaction rewrites them. */
  def dropColumns(path: String, columns: java.util.List[String]): Long = {
    val ds = open(path)
    val base = ds.latest().get
    val drop = scala.jdk.CollectionConverters.ListHasAsScala(columns).asScala.map(_.toLowerCase(Locale.ROOT)).toSet
    val missing = drop -- base.schema.fields.map(_.name.toLowerCase(Locale.ROOT))
    if (missing.nonEmpty) throw new IllegalArgumentException(s"Cannot drop ${missing.mkString(", ")}: no such column in the Fermion dataset at '$path'")
    val kept = base.schema.fields.filterNot(f => drop.contains(f.name.toLowerCase(Locale.ROOT)))
    if (kept.isEmpty) throw new IllegalArgumentException(s"Cannot drop every column of the Fermion dataset at '$path'")
    ds.commit(base.version, Operation.Project(FermionSchema(kept), s"drop columns ${drop.mkString(", ")}")).version
  }

  /** Renames a top-level column; files are matched by field id, so no data is touched. */
  def renameColumn(path: String, from: String, to: String): Long = {
    val ds = open(path)
    val base = ds.latest().get
    val i = base.schema.indexOf(from).getOrElse(throw new IllegalArgumentException(s"Cannot rename `$from`: no such column in the Fermion dataset at '$path'"))
    if (base.schema.indexOf(to).exists(_ != i)) throw new IllegalArgumentException(s"Cannot rename `$from` to `$to`: `$to` exists")
    val fields = base.schema.fields.updated(i, base.schema.fields(i).copy(name = to))
    ds.commit(base.version, Operation.Project(FermionSchema(fields), s"rename column $from to $to")).version
  }

  /** Rewrites small fragments and fragments with deleted rows into fragments of about `targetRows`
    * rows, dropping deleted rows and the data of dropped columns; returns the new version, or the
    * current one when nothing needed compacting. Readers of older versions are unaffected. */
  def compact(spark: SparkSession, path: String, targetRows: Long): Long = {
    require(targetRows >= 1, s"targetRows must be positive, got $targetRows")
    val ds = open(path)
    val base = ds.latest().get
    if (base.config.get(FermionDataset.StableRowIdsConfig).contains("true"))
      throw new UnsupportedOperationException(s"Compaction of a dataset with stable row ids is not supported yet ('$path')")
    val candidates = base.fragments.filter(f => f.deletion.nonEmpty || f.rowCount < targetRows)
    val rows = candidates.map(_.rowCount).sum
    val outputs = math.max(1L, (rows + targetRows - 1) / targetRows).toInt
    // Worth it when deleted rows go away or fragments merge into fewer.
    if (candidates.forall(_.deletion.isEmpty) && outputs >= candidates.size) return base.version
    val ids = candidates.map(_.id).mkString(",")
    val sc = spark.sparkContext
    val previous = sc.getLocalProperty("spark.job.description")
    sc.setJobDescription(s"Fermion compaction of ${candidates.size} fragments ($rows rows) into $outputs at $path")
    try {
      spark.read.format("fermion").option("versionAsOf", base.version).option(Compaction.FragmentsOption, ids).load(path)
        .coalesce(outputs)
        .write.format("fermion").mode("append")
        .option(Compaction.FragmentsOption, ids).option(Compaction.ReadVersionOption, base.version.toString)
        .save(path)
    } finally sc.setJobDescription(previous)
    ds.latestVersion().get
  }

  /** Removes versions older than `retainHours` (never the latest or a tagged one) and the files no
    * remaining version references; returns (versions removed, files removed, bytes removed). */
  def cleanup(path: String, retainHours: Double): (Int, Int, Long) = {
    require(retainHours >= 0, s"retainHours must not be negative, got $retainHours")
    val r = open(path).cleanup(System.currentTimeMillis() - (retainHours * 3600 * 1000).toLong)
    (r.versionsRemoved, r.filesRemoved, r.bytesRemoved)
  }

  private[spark] def fieldOf(schema: FermionSchema, name: String): Option[FermionField] = schema.indexOf(name).map(schema.fields)
}

/** Internal options that tie a compaction's read (only the chosen fragments) to its write
  * (committed as a compaction of those fragments over the version read). */
object Compaction {
  val FragmentsOption = "__fermionCompactFragments"
  val ReadVersionOption = "__fermionCompactReadVersion"

  def fragments(options: Map[String, String]): Option[Set[Long]] =
    options.find(_._1.equalsIgnoreCase(FragmentsOption)).map(_._2.split(",").filter(_.nonEmpty).map(_.toLong).toSet)
  def readVersion(options: Map[String, String]): Option[Long] =
    options.find(_._1.equalsIgnoreCase(ReadVersionOption)).map(_._2.toLong)
}

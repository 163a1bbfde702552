package io.fermion.spark.tools

import io.fermion.core.dataset._
import io.fermion.core.options.{OptionRegistry, OptionScope}
import io.fermion.core.schema.FermionSchema
import io.fermion.core.write.WriterOptions
import io.fermion.spark.{FermionOptions, SerializableHadoopConf, SparkTypeMapping}
import io.fermion.spark.write.{FermionCommitMessage, FermionDataWriter, FieldWriteSettings}
import org.apache.hadoop.fs.Path
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.paths.SparkPath
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.{FileFormat, PartitionedFile}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types.StructType

/** Parquet (files, directories, partitioned directories, tables) to a Fermion dataset: one Spark
  * task per Parquet file writes one Fermion data file with the same rows in the same order (the
  * partition columns of its directory added as columns), and the driver commits all of them as one
  * dataset version, in input-file order. Nothing is visible until that commit; a failed job
  * leaves unreferenced files only, which the tasks delete when they fail themselves. */
object ParquetToFermion {

  /** Where an in-place conversion writes data files: a hidden directory (Spark's and Hive's file
    * listings skip names starting with `_`), so the Parquet table stays readable as it was. */
  val InPlaceDataDir: String = DatasetLayout.ConvertedDataDir

  final case class Written(
      index: Int,
      relativePath: String,
      rows: Long,
      bytes: Long,
      columnBytes: IndexedSeq[Long] = IndexedSeq.empty
  )

  /** Checks everything that can be checked before a byte is written: types, options, destination. */
  private def prepare(
      spark: SparkSession,
      schema: StructType,
      dst: String,
      options: Map[String, String],
      overwrite: Boolean,
      inPlace: Boolean
  ): (WriterOptions, FermionSchema, Long, FermionDataset) = {
    OptionRegistry.checkKnown(options, Set(OptionScope.Write, OptionScope.Dataset))
    SparkTypeMapping.validate(schema) // names the first column Fermion cannot store
    val settings = FieldWriteSettings.resolve(schema, FermionOptions.writerOptions(options))
    val (snapshot, ds) =
      ConvertDestination.checkForFermion(dst, spark.sparkContext.hadoopConfiguration, overwrite, inPlace)
    (settings, SparkTypeMapping.toFermion(schema), snapshot.version.getOrElse(0L), ds)
  }

  def convertFiles(
      spark: SparkSession,
      source: ParquetSource,
      dst: String,
      options: Map[String, String],
      overwrite: Boolean,
      inPlace: Boolean,
      progress: ProgressSettings
  ): ConvertResult = {
    val start = System.nanoTime()
    val schema = source.schema
    val (settings, fermionSchema, readVersion, ds) = prepare(spark, schema, dst, options, overwrite, inPlace)
    val sc = spark.sparkContext
    val hadoopConf = new org.apache.hadoop.conf.Configuration(sc.hadoopConfiguration)
    val readFunction = new ParquetFileFormat().buildReaderWithPartitionValues(
      spark,
      source.dataSchema,
      source.partitionSchema,
      source.dataSchema,
      Nil,
      Map(FileFormat.OPTION_RETURNING_BATCH -> "false"),
      hadoopConf
    )
    val conf = SerializableHadoopConf.broadcast()
    val root = dst
    val dataDir = if (inPlace) InPlaceDataDir else DatasetLayout.DataDir
    val files = source.files
    val accumulator = sc.longAccumulator(ConvertProgress.InputBytesAccumulator)
    val job = new ConvertJob(spark, s"Fermion convert: ${files.size} Parquet files of ${source.description} to $dst")
    val written = job.run(files.map(_.bytes), "files", ConvertProgress.InputBytesAccumulator, progress) {
      // One element per slice: task i converts file i (only its own file is shipped with it).
      sc.parallelize(files.zipWithIndex, math.max(1, files.size)).map { case (f, i) =>
        writeOne(f, i, readFunction, schema, fermionSchema, settings, conf, root, dataDir, accumulator)
      }.collect()
    }
    val outputBytes = written.map(_.bytes).sum
    commit(ds, readVersion, fermionSchema, written.toIndexedSeq, options, overwrite).map { version =>
      ConvertResult(
        "Parquet to Fermion",
        source.description,
        s"Fermion dataset $dst",
        files.size,
        written.count(_.rows > 0),
        written.map(_.rows).sum,
        files.map(_.bytes).sum,
        outputBytes,
        (System.nanoTime() - start) / 1e9,
        Some(version)
      )
    }.get
  }

  /** Rows of any DataFrame (a table that is not plain Parquet files: Delta, Iceberg, a view):
    * one Fermion file per Spark partition, rows in the order Spark reads them. */
  def convertDataFrame(
      spark: SparkSession,
      df: DataFrame,
      description: String,
      dst: String,
      options: Map[String, String],
      overwrite: Boolean,
      progress: ProgressSettings
  ): ConvertResult = {
    val start = System.nanoTime()
    val schema = df.schema
    val (settings, fermionSchema, readVersion, ds) = prepare(spark, schema, dst, options, overwrite, inPlace = false)
    val conf = SerializableHadoopConf.broadcast()
    val root = dst
    val rdd = df.queryExecution.toRdd
    val job = new ConvertJob(spark, s"Fermion convert: $description to $dst")
    val written = job.run(IndexedSeq.fill(rdd.getNumPartitions)(-1L), "tasks", "", progress) {
      rdd.mapPartitionsWithIndex { (i, rows) =>
        Iterator(writeRows(
          rows,
          i,
          schema,
          fermionSchema,
          settings,
          conf.value.value,
          root,
          DatasetLayout.DataDir,
          null,
          0L
        ))
      }.collect()
    }
    val version = commit(ds, readVersion, fermionSchema, written.toIndexedSeq, options, overwrite).get
    ConvertResult(
      "table to Fermion",
      description,
      s"Fermion dataset $dst",
      rdd.getNumPartitions,
      written.count(_.rows > 0),
      written.map(_.rows).sum,
      -1L,
      written.map(_.bytes).sum,
      (System.nanoTime() - start) / 1e9,
      Some(version)
    )
  }

  private def writeOne(
      file: ParquetInputFile,
      index: Int,
      read: PartitionedFile => Iterator[InternalRow],
      schema: StructType,
      fermionSchema: FermionSchema,
      settings: WriterOptions,
      conf: Broadcast[SerializableHadoopConf],
      root: String,
      dataDir: String,
      accumulator: org.apache.spark.util.LongAccumulator
  ): Written = {
    val split = PartitionedFile(
      file.partitionValues,
      SparkPath.fromUrlString(new Path(file.path).toUri.toString),
      0L,
      file.bytes,
      Array.empty[String],
      file.modificationTime,
      file.bytes
    )
    val hconf = conf.value.value
    // Rows in the file (footer), so running tasks can report their share of the file's bytes.
    val total =
      try {
        val r = org.apache.parquet.hadoop.ParquetFileReader.open(
          org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(new Path(file.path), hconf)
        )
        try r.getRecordCount
        finally r.close()
      } catch { case _: Exception => 0L }
    val rows = read(split)
    try writeRows(rows, index, schema, fermionSchema, settings, hconf, root, dataDir, accumulator, total, file.bytes)
    finally rows match { case c: java.io.Closeable => c.close(); case _ => }
  }

  /** Writes `rows` as one Fermion file under `dataDir`; deletes it if anything fails. */
  private def writeRows(
      rows: Iterator[InternalRow],
      index: Int,
      schema: StructType,
      fermionSchema: FermionSchema,
      settings: WriterOptions,
      hconf: org.apache.hadoop.conf.Configuration,
      root: String,
      dataDir: String,
      accumulator: org.apache.spark.util.LongAccumulator,
      totalRows: Long,
      fileBytes: Long = 0L
  ): Written = {
    val relative = s"$dataDir/${java.util.UUID.randomUUID()}.fermion"
    val path = new Path(new Path(root), relative)
    val writer = new FermionDataWriter(relative, path, schema, fermionSchema, settings, hconf)
    var n = 0L
    var reported = 0L
    try {
      rows.foreach { r =>
        writer.write(r)
        n += 1
        if (accumulator != null && totalRows > 0 && (n & 0xffff) == 0) {
          val share = math.min(fileBytes, (fileBytes.toDouble * n / totalRows).toLong)
          accumulator.add(share - reported)
          reported = share
        }
      }
      val m = writer.commit().asInstanceOf[FermionCommitMessage]
      if (accumulator != null) accumulator.add(fileBytes - reported)
      Written(index, relative, m.rows, m.bytes, m.columnBytes)
    } catch {
      case t: Throwable =>
        try writer.abort()
        catch { case s: Throwable => t.addSuppressed(s) }
        throw t
    }
  }

  /** Commits the files (in input order) as the dataset's next version: an append creating it, or
    * an overwrite replacing what was there. Empty files are removed, not committed. */
  private def commit(
      ds: FermionDataset,
      readVersion: Long,
      fermionSchema: FermionSchema,
      written: IndexedSeq[Written],
      options: Map[String, String],
      overwrite: Boolean
  ): scala.util.Try[Long] = {
    val (withRows, empty) = written.sortBy(_.index).partition(_.rows > 0)
    empty.foreach(w => ds.fs.delete(ds.resolvePath(w.relativePath), false))
    val ids = fermionSchema.fields.map(_.fieldId)
    val fragments =
      withRows.map(w => Fragment(0, w.rows, IndexedSeq(DataFile(w.relativePath, ids, w.columnBytes)), None))
    val op =
      if (readVersion > 0 && overwrite) Operation.Overwrite(fermionSchema, fragments)
      else Operation.Append(fermionSchema, fragments)
    scala.util.Try(ds.commit(readVersion, op, FermionOptions.datasetConfig(options)).version).recoverWith {
      case t =>
        withRows.foreach(w => ds.fs.delete(ds.resolvePath(w.relativePath), false))
        scala.util.Failure(t)
    }
  }
}

/** Runs one conversion job under its own job group, with progress printed while it runs. */
final class ConvertJob(spark: SparkSession, description: String) {
  def run[T](bytesByTask: IndexedSeq[Long], unit: String, metric: String, progress: ProgressSettings)(body: => T): T = {
    val sc = spark.sparkContext
    val group = s"fermion-convert-${java.util.UUID.randomUUID()}"
    val listener =
      progress.out.map(out => new ConvertProgress(group, unit, bytesByTask, metric, out, progress.intervalMs))
    listener.foreach(l => sc.addSparkListener(l))
    listener.foreach(_.start())
    sc.setJobGroup(group, description, interruptOnCancel = true)
    try body
    finally {
      sc.clearJobGroup()
      // Spark delivers listener events asynchronously: wait for the last task ends.
      listener.foreach { l =>
        val deadline = System.currentTimeMillis() + 2000
        while (l.filesDone < bytesByTask.size && System.currentTimeMillis() < deadline) Thread.sleep(20)
        l.stop()
        sc.removeSparkListener(l)
      }
    }
  }
}

/** Where and how often progress is printed (`out` None: not at all). */
final case class ProgressSettings(out: Option[java.io.PrintStream], intervalMs: Long = 5000)

object ProgressSettings {
  val Quiet: ProgressSettings = ProgressSettings(None)
}

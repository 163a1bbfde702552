package io.fermion.spark.tools

import io.fermion.core.scan.{ReadAt, Snapshot}
import io.fermion.spark.{FermionTable, FermionTableSchema}
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession

/** A Fermion dataset (at a version) or a directory of Fermion files to Parquet: the core scan's
  * file tasks (one Spark task per data file, rows in file order, deletions applied, columns matched
  * by field id) feed Spark's own Parquet writer, which writes one Parquet file per data file
  * (`part-00000-...` in the dataset's fragment order) and commits them with Spark's file commit
  * protocol. Timestamps are written as INT64 microseconds (not Spark's legacy INT96 default), so
  * every Parquet reader reads them back as they were. */
object FermionToParquet {
  def convert(
      spark: SparkSession,
      src: String,
      at: ReadAt,
      dst: String,
      parquetOptions: Map[String, String],
      overwrite: Boolean,
      progress: ProgressSettings
  ): ConvertResult = {
    val start = System.nanoTime()
    val conf = FermionTableSchema.hadoopConf()
    val snapshot = Snapshot.open(src, conf, at).requireExists(conf)
    val exists = ConvertDestination.checkForParquet(dst, conf, overwrite)
    val out = new Path(dst)
    val fs = out.getFileSystem(conf)
    // An empty directory is taken as it is (Spark's error-if-exists mode would refuse it).
    val mode = if (overwrite || exists) "overwrite" else "errorifexists"
    val table = new FermionTable(
      src,
      FermionTableSchema.of(snapshot).get,
      acceptAnySchema = false,
      () => snapshot,
      wholeFiles = true
    )
    val df = org.apache.spark.sql.fermion.Relations.dataFrame(spark, table)
    val sizes = snapshot.files.map(_.length)
    val what = snapshot.version.map(v => s"Fermion dataset $src version $v").getOrElse(s"Fermion files $src")
    val job = new ConvertJob(spark, s"Fermion convert: $what to Parquet $dst")
    val timestampKey = "spark.sql.parquet.outputTimestampType"
    val previous = spark.conf.getOption(timestampKey)
    try {
      if (!parquetOptions.keys.exists(_.equalsIgnoreCase(timestampKey)))
        spark.conf.set(timestampKey, "TIMESTAMP_MICROS")
      job.run(sizes, "files", ConvertProgress.FermionBytesReadMetric, progress) {
        df.write.mode(mode).options(parquetOptions).parquet(dst)
      }
    } finally {
      previous match { case Some(v) => spark.conf.set(timestampKey, v); case None => spark.conf.unset(timestampKey) }
    }
    val written = fs.listStatus(out).filter(s => s.isFile && s.getPath.getName.endsWith(".parquet"))
    // Loose files: their footers' row counts (no manifest records them).
    val rows = snapshot.manifest.map(_.rowCount).getOrElse(snapshot.files.map { f =>
      val r = io.fermion.core.read.FermionFileReader.open(new Path(f.path), conf, io.fermion.core.read.ReaderOptions())
      try r.numRows
      finally r.close()
    }.sum)
    ConvertResult(
      "Fermion to Parquet",
      what,
      s"Parquet $dst",
      snapshot.files.size,
      written.length,
      rows,
      sizes.sum,
      written.map(_.getLen).sum,
      (System.nanoTime() - start) / 1e9,
      None
    )
  }
}

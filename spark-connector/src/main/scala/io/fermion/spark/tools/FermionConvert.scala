package io.fermion.spark.tools

import java.io.FileNotFoundException

import scala.jdk.CollectionConverters._

import io.fermion.core.dataset.{DatasetLayout, FermionDataset}
import io.fermion.core.read.FermionFileReader
import io.fermion.core.scan.{LooseFiles, ReadAt}
import io.fermion.spark.FermionTable
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation

/** Parquet <-> Fermion conversion on a Spark session, for Scala, Java and Python
  * (`fermion_spark.convert`), and behind `fermion convert` ([[FermionCli]]).
  * {{{
  * FermionConvert.toFermion(spark, "/data/events.parquet", "/data/events")          // files, directories, partitions
  * FermionConvert.tableToFermion(spark, "db.events", "/data/events")               // a table by name
  * FermionConvert.toParquet(spark, "/data/events", ReadAt.Version(3), "/data/events-v3.parquet")
  * }}}
  * Row order within each file is kept (one task per input file, one output file per input file);
  * schemas are kept (nested ones included; partition columns become columns); unsupported types
  * fail before anything is written, naming the column. */
object FermionConvert {

  /** A conversion request (what the CLI and Python pass). */
  final case class Request(
      to: Option[String] = None,
      source: Option[String] = None,
      table: Option[String] = None,
      destination: Option[String] = None,
      overwrite: Boolean = false,
      inPlace: Boolean = false,
      deleteSource: Boolean = false,
      at: ReadAt = ReadAt.Latest,
      timestamp: Option[String] = None,
      options: Map[String, String] = Map.empty,
      readOptions: Map[String, String] = Map.empty,
      progress: ProgressSettings = ProgressSettings(Some(System.err))
  )

  def toFermion(spark: SparkSession, parquetPath: String, destination: String): ConvertResult =
    run(spark, Request(to = Some("fermion"), source = Some(parquetPath), destination = Some(destination)))

  def toFermion(
      spark: SparkSession,
      parquetPath: String,
      destination: String,
      options: java.util.Map[String, String]
  ): ConvertResult =
    run(
      spark,
      Request(
        to = Some("fermion"),
        source = Some(parquetPath),
        destination = Some(destination),
        options = options.asScala.toMap
      )
    )

  def tableToFermion(spark: SparkSession, table: String, destination: String): ConvertResult =
    run(spark, Request(to = Some("fermion"), table = Some(table), destination = Some(destination)))

  def toParquet(spark: SparkSession, fermionPath: String, at: ReadAt, destination: String): ConvertResult =
    run(spark, Request(to = Some("parquet"), source = Some(fermionPath), destination = Some(destination), at = at))

  /** Runs the command-line arguments of `fermion convert` on `spark`; returns the result as JSON
    * (what the Python API calls). */
  def runArgs(spark: SparkSession, args: Array[String]): String =
    run(spark, FermionCli.parseConvert(args.toSeq)).toJson

  /** Whether `path` holds Fermion data: a dataset, a directory with `.fermion` files, or a file
    * ending with Fermion's magic. */
  def isFermion(spark: SparkSession, path: String): Boolean = isFermion(path, spark.sparkContext.hadoopConfiguration)

  def isFermion(path: String, conf: Configuration): Boolean = {
    val p = new Path(path)
    val fs = p.getFileSystem(conf)
    if (!fs.exists(p)) false
    else if (fs.getFileStatus(p).isFile) FermionFileReader.hasFermionMagic(p, conf)
    else new FermionDataset(p, conf).exists || LooseFiles.list(p, conf).nonEmpty
  }

  /** The direction of `r`: as given, else away from the source's kind. */
  def direction(r: Request, sourceIsFermion: => Boolean): String =
    r.to.map(_.toLowerCase(java.util.Locale.ROOT)).getOrElse(if (sourceIsFermion) "parquet" else "fermion")

  def run(spark: SparkSession, r: Request): ConvertResult = {
    if (r.source.nonEmpty == r.table.nonEmpty) throw new IllegalArgumentException("give a source path or --table NAME")
    val fermionTable = r.table.flatMap(t => fermionTablePath(spark, t))
    val sourceIsFermion = r.source.exists(isFermion(spark, _)) || fermionTable.nonEmpty
    val to = direction(r, sourceIsFermion)
    val dst = (if (r.inPlace) r.destination.orElse(r.source) else r.destination).getOrElse(
      throw new IllegalArgumentException("give a destination (or --in-place for a Parquet directory)")
    )
    if (!r.inPlace) r.source.foreach { s =>
      val (a, b) = (qualified(spark, s), qualified(spark, dst))
      if (a == b || b.startsWith(a + "/") || a.startsWith(b + "/"))
        throw new IllegalArgumentException(
          s"the destination $dst overlaps the source $s; convert to another path (or Parquet --in-place)"
        )
    }
    val at = r.timestamp.map(ts => ReadAt.Timestamp(timestampMillis(spark, ts))).getOrElse(r.at)
    to match {
      case "fermion" =>
        if (sourceIsFermion)
          throw new IllegalArgumentException(
            s"${r.source.orElse(r.table).get} is already Fermion; convert it --to parquet"
          )
        if (r.inPlace) {
          if (r.table.nonEmpty)
            throw new IllegalArgumentException("--in-place converts Parquet directories given by path, not tables")
          if (r.destination.exists(d => new Path(d) != new Path(r.source.get)))
            throw new IllegalArgumentException(
              "--in-place writes the dataset at the source path; give no other destination"
            )
          inPlace(spark, r)
        } else {
          if (r.deleteSource) throw new IllegalArgumentException("--delete-source goes with --in-place")
          r.table match {
            case Some(t) =>
              ParquetSource.ofTable(spark, t) match {
                case Left(files) =>
                  ParquetToFermion.convertFiles(spark, files, dst, r.options, r.overwrite, inPlace = false, r.progress)
                case Right(df) =>
                  ParquetToFermion.convertDataFrame(spark, df, s"table $t", dst, r.options, r.overwrite, r.progress)
              }
            case None =>
              val src = ParquetSource.ofPath(spark, r.source.get, r.readOptions)
              ParquetToFermion.convertFiles(spark, src, dst, r.options, r.overwrite, inPlace = false, r.progress)
          }
        }
      case "parquet" =>
        if (r.inPlace || r.deleteSource)
          throw new IllegalArgumentException("--in-place converts Parquet to Fermion only")
        val (src, tableAt) = fermionTable.getOrElse {
          val s = r.source.getOrElse(throw new IllegalArgumentException(s"table ${r.table.get} is not a Fermion table"))
          if (!isFermion(spark, s)) throw new IllegalArgumentException(s"$s holds no Fermion dataset or files")
          (s, None)
        }
        val effective = if (at == ReadAt.Latest) tableAt.map(ReadAt.Version).getOrElse(at) else at
        FermionToParquet.convert(spark, src, effective, dst, r.options, r.overwrite, r.progress)
      case other => throw new IllegalArgumentException(s"--to takes fermion or parquet, not '$other'")
    }
  }

  /** Converts a Parquet directory into a Fermion dataset at the same path (see docs/migration.md):
    * the Parquet files stay untouched and readable until the commit, which is the one atomic step;
    * the Fermion data files go to the hidden `_fermion_data/`. With `deleteSource`, the Parquet
    * files converted are removed after the commit. */
  private def inPlace(spark: SparkSession, r: Request): ConvertResult = {
    val path = r.source.get
    val conf = spark.sparkContext.hadoopConfiguration
    val ds = new FermionDataset(new Path(path), conf)
    if (ds.exists) throw new IllegalArgumentException(s"$path is already a Fermion dataset")
    // Leftovers of an in-place conversion that crashed before its commit: no manifest names them.
    Seq(DatasetLayout.ConvertedDataDir, DatasetLayout.TransactionsDir, DatasetLayout.VersionsDir).foreach { d =>
      val p = new Path(ds.root, d)
      if (ds.fs.exists(p)) ds.fs.delete(p, true)
    }
    val source = ParquetSource.ofPath(spark, path, r.readOptions)
    val result =
      ParquetToFermion.convertFiles(spark, source, path, r.options, overwrite = false, inPlace = true, r.progress)
    if (r.deleteSource) {
      // Through Hadoop's own file system for the path, which also removes its `.crc` side files.
      val fs = ds.root.getFileSystem(conf)
      val root = ds.root.toUri.getPath
      source.files.foreach(f => fs.delete(new Path(f.path), false))
      // Spark's markers and the partition directories left empty.
      Seq("_SUCCESS", "_metadata", "_common_metadata").foreach(n => fs.delete(new Path(ds.root, n), false))
      source.files.map(f => new Path(f.path).getParent).distinct.sortBy(-_.toUri.getPath.length).foreach { dir =>
        var d = dir
        while (d != null && d.toUri.getPath.length > root.length && isEmpty(fs, d)) {
          fs.delete(d, false)
          d = d.getParent
        }
      }
    }
    result.copy(direction = "Parquet to Fermion (in place)")
  }

  private def qualified(spark: SparkSession, path: String): String = {
    val p = new Path(path)
    p.getFileSystem(spark.sparkContext.hadoopConfiguration).makeQualified(p).toString.stripSuffix("/")
  }

  private def isEmpty(fs: org.apache.hadoop.fs.FileSystem, dir: Path): Boolean =
    try fs.listStatus(dir).isEmpty
    catch { case _: FileNotFoundException => false }

  /** The path and version of a Fermion table in the catalog, if `table` is one. */
  private def fermionTablePath(spark: SparkSession, table: String): Option[(String, Option[Long])] =
    spark.table(table).queryExecution.analyzed.collectFirst {
      case r: DataSourceV2Relation if r.table.isInstanceOf[FermionTable] =>
        val t = r.table.asInstanceOf[FermionTable]
        (t.path, t.snapshot.version)
    }

  /** A timestamp in the session time zone, as `timestampAsOf` reads it. */
  private def timestampMillis(spark: SparkSession, ts: String): Long = {
    import org.apache.spark.sql.functions.lit
    val v = spark.range(1).select(lit(ts).cast("timestamp")).head().getTimestamp(0)
    if (v == null) throw new IllegalArgumentException(s"'$ts' is not a timestamp (e.g. 2026-01-31 12:00:00)")
    v.getTime
  }
}

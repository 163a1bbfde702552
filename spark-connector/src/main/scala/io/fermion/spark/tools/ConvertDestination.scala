package io.fermion.spark.tools

import scala.util.control.NonFatal

import io.fermion.core.dataset.FermionDataset
import io.fermion.core.scan.Snapshot
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.SparkConf

/** What a conversion requires of its destination. The converters check it before they write a
  * byte; the command line checks it once more before it starts Spark, so that a destination that is
  * taken is refused without waiting for a session to start. */
private[spark] object ConvertDestination {

  /** Fails unless `dst` can receive a new Fermion dataset: none there (or `overwrite`), no loose
    * Fermion files, nothing else in the directory unless the conversion is in place. Returns the
    * destination's snapshot and dataset. */
  def checkForFermion(
      dst: String,
      conf: Configuration,
      overwrite: Boolean,
      inPlace: Boolean
  ): (Snapshot, FermionDataset) = {
    val ds = new FermionDataset(new Path(dst), conf)
    ds.checkCommitStore()
    val snapshot = Snapshot.open(dst, conf)
    if (snapshot.isDataset && !overwrite)
      throw new IllegalArgumentException(
        s"$dst already holds a Fermion dataset (version ${snapshot.version.getOrElse(0L)}); " +
          "choose another destination or mode overwrite"
      )
    if (!inPlace && !snapshot.isDataset && ds.fs.exists(ds.root) && ds.fs.listStatus(ds.root).nonEmpty && !overwrite)
      throw notEmpty(dst)
    if (!snapshot.isDataset && snapshot.files.nonEmpty)
      throw new IllegalArgumentException(s"$dst holds loose Fermion files; choose another destination")
    (snapshot, ds)
  }

  /** Fails unless `dst` can receive Parquet files: a file or a directory that is not empty is
    * taken unless `overwrite`. Returns whether `dst` exists. */
  def checkForParquet(dst: String, conf: Configuration, overwrite: Boolean): Boolean = {
    val out = new Path(dst)
    val fs = out.getFileSystem(conf)
    val exists = fs.exists(out)
    if (!overwrite && exists && (fs.getFileStatus(out).isFile || fs.listStatus(out).nonEmpty)) throw notEmpty(dst)
    exists
  }

  /** The refusal of `r`'s destination, if it can be told before Spark starts: with a direction
    * given or a source path whose kind the file system tells, and not in place. The Hadoop settings
    * are spark-submit's `spark.hadoop.*` only (a session may add more), so anything but a refusal
    * (a store that cannot be reached with them, say) is left for the conversion to report. */
  def refusalBeforeSpark(r: FermionConvert.Request): Option[IllegalArgumentException] =
    if (r.inPlace || r.destination.isEmpty) None
    else
      try {
        val conf = new Configuration()
        new SparkConf().getAll.foreach { case (k, v) =>
          if (k.startsWith("spark.hadoop.")) conf.set(k.stripPrefix("spark.hadoop."), v)
        }
        val dst = r.destination.get
        val to = if (r.to.isEmpty && r.source.isEmpty) None // a table's kind is the catalog's to tell
        else Some(FermionConvert.direction(r, FermionConvert.isFermion(r.source.get, conf)))
        to match {
          case Some("fermion") => checkForFermion(dst, conf, r.overwrite, inPlace = false); None
          case Some("parquet") => checkForParquet(dst, conf, r.overwrite); None
          case _ => None
        }
      } catch {
        case e: IllegalArgumentException => Some(e)
        case NonFatal(_) => None
      }

  private def notEmpty(dst: String) =
    new IllegalArgumentException(s"$dst exists and is not empty; choose another destination or mode overwrite")
}

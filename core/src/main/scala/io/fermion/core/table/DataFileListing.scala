package io.fermion.core.table

import org.apache.hadoop.conf.Configuration
import io.fermion.core.storage.FileSystems
import org.apache.hadoop.fs.{FileStatus, Path}

/** The data files of a path-based Fermion table: the `*.fermion` files directly under the table
  * directory. Names starting with `_` or `.` are hidden (staging areas, future `_versions/`), so a
  * job's files become visible only when its commit moves them in. */
object DataFileListing {
  val Extension = ".fermion"

  def isDataFile(name: String): Boolean =
    name.endsWith(Extension) && !name.startsWith("_") && !name.startsWith(".")

  /** Data files sorted by name; empty when the directory does not exist. A path naming a single
    * Fermion file lists that file. */
  def list(table: Path, conf: Configuration): IndexedSeq[FileStatus] = {
    val fs = FileSystems.forPath(table, conf)
    if (!fs.exists(table)) IndexedSeq.empty
    else {
      val status = fs.getFileStatus(table)
      if (status.isFile) IndexedSeq(status)
      else
        fs.listStatus(table).filter(s => s.isFile && isDataFile(s.getPath.getName)).sortBy(_.getPath.getName).toIndexedSeq
    }
  }
}

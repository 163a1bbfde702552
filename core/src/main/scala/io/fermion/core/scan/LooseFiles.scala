package io.fermion.core.scan

import io.fermion.core.schema.FermionField
import io.fermion.core.storage.FileSystems
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

/** Fermion files read without a dataset: the `*.fermion` files directly under a directory (names
  * starting with `_` or `.` are hidden: staging areas, a dataset's own folders), or one file. */
object LooseFiles {
  val Extension = ".fermion"

  def isDataFile(name: String): Boolean =
    name.endsWith(Extension) && !name.startsWith("_") && !name.startsWith(".")

  /** Data files sorted by name; empty when the path does not exist. */
  def list(path: Path, conf: Configuration): IndexedSeq[FileStatus] = {
    val fs = FileSystems.forPath(path, conf)
    if (!fs.exists(path)) IndexedSeq.empty
    else {
      val status = fs.getFileStatus(path)
      if (status.isFile) IndexedSeq(status)
      else
        fs.listStatus(path).filter(s => s.isFile && isDataFile(s.getPath.getName))
          .sortBy(_.getPath.getName).toIndexedSeq
    }
  }

  /** Data files with their partition directories: the files directly under `path` and under
    * Hive-style `k=v` directories ([[HivePartitions]]), or `path` itself when it is a file. */
  def listPartitioned(path: Path, conf: Configuration): IndexedSeq[HivePartitions.Listed] = {
    val fs = FileSystems.forPath(path, conf)
    if (!fs.exists(path)) IndexedSeq.empty
    else {
      val status = fs.getFileStatus(path)
      if (status.isFile) IndexedSeq(HivePartitions.Listed(status, IndexedSeq.empty))
      else HivePartitions.list(fs, path)
    }
  }

  /** Same type tree and child names (case-insensitive); nullability and field ids may differ. */
  def sameType(a: FermionField, b: FermionField): Boolean =
    a.dataType == b.dataType && a.children.size == b.children.size &&
      a.children.zip(b.children).forall { case (x, y) => x.name.equalsIgnoreCase(y.name) && sameType(x, y) }
}

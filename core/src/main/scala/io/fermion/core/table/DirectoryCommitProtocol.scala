package io.fermion.core.table

import java.io.IOException

import io.fermion.core.storage.FileSystems
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** How a distributed job adds files to a path-based table so that a failed job leaves nothing
  * visible: every task writes into `_fermion_staging/<jobId>/` (hidden from readers), and only the
  * job commit moves the committed tasks' files into the table directory. An overwrite removes the
  * files that were there before, after the new ones are in place. An aborted job deletes its
  * staging directory. (Versioned, atomic commits come with the dataset layer.) */
final class DirectoryCommitProtocol(table: Path, jobId: String, conf: Configuration) {
  require(jobId.matches("[A-Za-z0-9_-]+"), s"job id '$jobId' must be a plain name")

  val stagingDir: Path = new Path(new Path(table, DirectoryCommitProtocol.StagingDirName), jobId)

  /** Where task `partitionId` (attempt `taskId`) writes its file. */
  def taskFile(partitionId: Int, taskId: Long): Path =
    new Path(stagingDir, f"part-$partitionId%05d-$taskId-$jobId${DataFileListing.Extension}")

  def setupJob(): Unit = {
    val fs = FileSystems.forPath(stagingDir, conf)
    if (!fs.mkdirs(stagingDir)) throw new IOException(s"cannot create the staging directory $stagingDir")
  }

  /** Moves the staged files of committed tasks (name -> rows) into the table; with `overwrite`,
    * then deletes the older files. Files of tasks that wrote no rows are dropped, except that a
    * job with no rows at all keeps one, so that the table and its schema exist. */
  def commitJob(taskFiles: Seq[(String, Long)], overwrite: Boolean): Unit = {
    val fs = FileSystems.forPath(table, conf)
    val (withRows, empty) = taskFiles.partition(_._2 > 0)
    val fileNames = if (withRows.nonEmpty) withRows.map(_._1) else empty.take(1).map(_._1)
    fs.mkdirs(table)
    val previous = if (overwrite) DataFileListing.list(table, conf).map(_.getPath) else IndexedSeq.empty
    fileNames.foreach { name =>
      val src = new Path(stagingDir, name)
      val dst = new Path(table, name)
      if (!fs.rename(src, dst)) throw new IOException(s"cannot move committed file $src to $dst")
    }
    val kept = fileNames.toSet
    previous.filterNot(p => kept.contains(p.getName)).foreach(p => fs.delete(p, false))
    cleanup()
  }

  def abortJob(): Unit = cleanup()

  /** Removes what a failed task attempt wrote. */
  def abortTask(file: Path): Unit = FileSystems.forPath(file, conf).delete(file, false)

  private def cleanup(): Unit = {
    val fs = FileSystems.forPath(table, conf)
    fs.delete(stagingDir, true)
    val parent = stagingDir.getParent
    if (fs.exists(parent) && fs.listStatus(parent).isEmpty) fs.delete(parent, false)
  }
}

object DirectoryCommitProtocol {
  val StagingDirName = "_fermion_staging"
}

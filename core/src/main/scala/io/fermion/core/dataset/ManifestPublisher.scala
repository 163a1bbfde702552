package io.fermion.core.dataset

import java.io.IOException
import java.nio.file.{FileAlreadyExistsException, Files, Paths}

import org.apache.hadoop.fs.{FileSystem, Path}

/** Publishes a fully written temporary file under its final name only if no file has that name —
  * the one atomic step of a commit. On the local file system a hard link (link(2) fails if the
  * name exists); on HDFS a rename (the NameNode refuses to rename onto an existing file). Object
  * stores without either (S3) are refused rather than risking a lost commit. */
object ManifestPublisher {

  /** Fails unless commits on `fs` can be atomic: checked before a job writes anything. */
  def checkSupported(fs: FileSystem): Unit = fs.getUri.getScheme match {
    case "file" | "hdfs" | "viewfs" =>
    case other => throw new UnsupportedOperationException(
        s"Fermion datasets need a file system with an atomic create-if-absent (local, HDFS); '$other' has none, so concurrent commits could be lost"
      )
  }

  /** True if `tmp` is now `target`; false if `target` already existed (another writer won). */
  def publishIfAbsent(fs: FileSystem, tmp: Path, target: Path): Boolean = fs.getUri.getScheme match {
    case "file" =>
      val from = Paths.get(fs.makeQualified(tmp).toUri)
      val to = Paths.get(fs.makeQualified(target).toUri)
      val published =
        try { Files.createLink(to, from); true }
        catch {
          case _: FileAlreadyExistsException => false
          case e: IOException =>
            try fs.delete(tmp, false)
            catch { case _: IOException => }; throw e
        }
      // The version is published (or lost) either way: failing to remove the temp file must not
      // turn a published commit into a reported failure. Cleanup removes leftovers.
      try fs.delete(tmp, false)
      catch { case _: IOException => }
      published
    case "hdfs" | "viewfs" =>
      val ok = fs.rename(tmp, target)
      if (!ok) {
        fs.delete(tmp, false)
        if (!fs.exists(target)) throw new IOException(s"cannot rename $tmp to $target")
      }
      ok
    case _ =>
      fs.delete(tmp, false)
      checkSupported(fs)
      false
  }
}

package io.fermion.core.dataset

import java.io.IOException
import java.nio.charset.StandardCharsets

import io.fermion.core.storage.FileWrites
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

/** `_versions/_latest`: a hint, never authoritative, naming a recently committed version, so that
  * a reader on an object store finds the latest version without listing `_versions/` (a LIST
  * request costs as much as a PUT, returns every old version, and is only eventually consistent on
  * some S3-compatible stores). The reader takes the hinted version `h`, checks that its manifest
  * exists, and probes the names after it: versions are published one after another, so every
  * version from `h` to the latest exists, and the first missing name ends the search (galloping,
  * then bisecting: O(log k) probes for a hint k versions behind). A missing, unreadable or removed
  * hinted version falls back to one listing. Writers rewrite the hint after each commit and before
  * cleanup removes versions (docs/table-format.md 4.1). */
private[core] object VersionHint {
  val FileName = "_latest"

  /** `auto` (list on the local file system and HDFS, hint elsewhere), `list` or `hint`. */
  val Setting = "fermion.latestVersion"

  def path(root: Path): Path = new Path(DatasetLayout.versions(root), FileName)

  def useHint(fs: FileSystem, conf: Configuration): Boolean = conf.getTrimmed(Setting, "auto").toLowerCase match {
    case "hint" => true
    case "list" => false
    case "auto" => !FileWrites.isFileSystem(fs)
    case other =>
      throw new IllegalArgumentException(s"Invalid value '$other' for $Setting: expected auto, list or hint")
  }

  /** The hinted version; None if there is no hint, it does not parse (a partial write) or it could
    * not be read. A writer replaces the hint while others read it: an object store then fails the
    * read (S3 answers 412 to a GET conditional on the ETag the stream opened, S3A raises
    * RemoteFileChangedException), which is no reason to fail the reader: the listing that follows
    * a missing hint is authoritative, and fails on its own if the store is unreachable. */
  def read(fs: FileSystem, root: Path): Option[Long] =
    try {
      val in = fs.open(path(root))
      try new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim.toLongOption.filter(_ >= 1)
      finally in.close()
    } catch { case _: IOException => None }

  /** Best effort: a hint that could not be written only costs readers a listing. */
  def write(fs: FileSystem, root: Path, version: Long): Unit =
    try FileWrites.writeReplacing(fs, path(root), version.toString.getBytes(StandardCharsets.US_ASCII))
    catch { case _: IOException => }

  /** The largest `v >= from` with `exists(v)`, given `exists(from)` and that versions after `from`
    * exist without gaps up to the latest. */
  def probeUp(from: Long, exists: Long => Boolean): Long = {
    var lo = from // exists
    var step = 1L
    var doublings = 0
    while (exists(lo + step)) {
      lo += step; step *= 2; doublings += 1
      if (doublings > 60) throw new IllegalStateException(s"every version after $from seems to exist")
    }
    var hi = lo + step // missing
    while (hi - lo > 1) {
      val mid = lo + (hi - lo) / 2
      if (exists(mid)) lo = mid else hi = mid
    }
    lo
  }
}

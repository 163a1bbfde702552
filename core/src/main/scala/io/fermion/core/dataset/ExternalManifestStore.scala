package io.fermion.core.dataset

import java.io.{FileNotFoundException, IOException}
import java.nio.charset.StandardCharsets
import java.security.MessageDigest

import io.fermion.core.storage.{FileSystems, FileWrites}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

/** A key-value store with an atomic put-if-absent that coordinates the commits of datasets whose
  * own storage has no atomic create (Lance's "external manifest store"; Delta's DynamoDB log
  * store plays the same part). For each dataset (its qualified root URI) it maps keys, the
  * dataset-relative paths of manifests (`_versions/<name(v)>`) and tags (`_refs/tags/<name>`), to
  * where the complete file was staged. Entries are never replaced: a name belongs to whoever put
  * it first (docs/table-format.md 11.2.1).
  *
  * Implementations take a Hadoop `Configuration` in their constructor and are chosen by
  * `fermion.externalStore.class`. */
trait ExternalManifestStore {

  /** Maps `key` to `location` unless `key` has an entry; true if this call created it. */
  def putIfAbsent(dataset: String, key: String, location: String): Boolean

  /** The location `key` maps to. */
  def get(dataset: String, key: String): Option[String]

  /** Removes `key` (a deleted tag); false if it had no entry. */
  def delete(dataset: String, key: String): Boolean

  /** The largest version with an entry: the dataset's latest version. */
  def latestVersion(dataset: String): Option[Long]
}

/** An [[ExternalManifestStore]] in a directory of a file system that has an atomic create (the
  * local file system of one machine or a shared mount with hard links, or HDFS), for data on one
  * that has not (an S3-compatible store without conditional writes, ...):
  * {{{
  * <fermion.externalStore.dir>/<hex SHA-256 of the dataset URI>/<key>   content: the location, UTF-8
  * }}}
  * Entries are created with the directory's own primitive (hard link, rename); the latest version
  * is one listing of `<...>/_versions/`. */
final class FileSystemManifestStore(conf: Configuration) extends ExternalManifestStore {
  private val dir: Path = Option(conf.getTrimmed(ExternalCommitStore.DirSetting)).filter(_.nonEmpty).map(new Path(_))
    .getOrElse(throw new FermionCommitStoreException(
      "(external manifest store)",
      s"${CommitStores.Setting}=${CommitStores.External} needs ${ExternalCommitStore.DirSetting}: a directory on a file " +
        "system with an atomic create-if-absent (local, HDFS)"
    ))
  private val fs: FileSystem = FileSystems.forPath(dir, conf)
  private val entries: CommitStore = fs.getUri.getScheme match {
    case "file" => new LinkCommitStore(fs)
    case "hdfs" | "viewfs" => new RenameCommitStore(fs)
    case other => throw new FermionCommitStoreException(
        dir.toString,
        s"${ExternalCommitStore.DirSetting} must be on a file system with an atomic create (local, HDFS), not '$other'"
      )
  }

  private def datasetDir(dataset: String): Path = new Path(dir, FileSystemManifestStore.datasetKey(dataset))
  private def entry(dataset: String, key: String): Path = new Path(datasetDir(dataset), key)

  def putIfAbsent(dataset: String, key: String, location: String): Boolean = {
    val target = entry(dataset, key)
    val staging = new Path(datasetDir(dataset), s".tmp-${java.util.UUID.randomUUID()}")
    fs.mkdirs(target.getParent)
    entries.createIfAbsent(target, location.getBytes(StandardCharsets.UTF_8), staging)
  }

  def get(dataset: String, key: String): Option[String] =
    try {
      val p = entry(dataset, key)
      val in = fs.open(p)
      try Some(new String(in.readAllBytes(), StandardCharsets.UTF_8))
      finally in.close()
    } catch { case _: FileNotFoundException => None }

  def delete(dataset: String, key: String): Boolean = fs.delete(entry(dataset, key), false)

  def latestVersion(dataset: String): Option[Long] =
    try
      fs.listStatus(new Path(datasetDir(dataset), DatasetLayout.VersionsDir)).iterator
        .flatMap(s => DatasetLayout.versionOf(s.getPath.getName)).maxOption
    catch { case _: FileNotFoundException => None }
}

object FileSystemManifestStore {

  /** The directory name of a dataset's entries: lowercase hex SHA-256 of its qualified URI. */
  def datasetKey(dataset: String): String =
    MessageDigest.getInstance("SHA-256").digest(dataset.getBytes(StandardCharsets.UTF_8)).map(b => f"$b%02x").mkString
}

/** Commits through an [[ExternalManifestStore]] (the Lance protocol): write the complete file to a
  * staging name in the dataset, put `key -> staging name` into the store if absent (the atomic
  * step: whoever puts first owns the name), then copy the bytes to the final name and remove the
  * staging file. A reader looks for the final name first and, when a writer died before the copy,
  * reads the staged file the store names (and finishes the copy). The latest version comes from
  * the store, not from a listing. */
final private[core] class ExternalCommitStore private (root: Path, val fs: FileSystem, val store: ExternalManifestStore)
    extends CommitStore {
  def kind: String = CommitStores.External
  private val dataset: String = ExternalCommitStore.datasetId(root, fs)

  private def keyOf(target: Path): String = {
    val base = fs.makeQualified(root).toUri.getPath.stripSuffix("/") + "/"
    val p = fs.makeQualified(target).toUri.getPath
    require(p.startsWith(base), s"$target is not inside $root")
    p.substring(base.length)
  }

  def createIfAbsent(target: Path, bytes: Array[Byte], staging: Path): Boolean = {
    FileWrites.writeNew(fs, staging, bytes)
    val key = keyOf(target)
    val location = keyOf(staging)
    // An answer lost after the entry was made reads as "exists": the entry then names our file.
    val owned =
      try store.putIfAbsent(dataset, key, location) || store.get(dataset, key).contains(location)
      catch { case e: Throwable => quietlyDelete(staging); throw e }
    if (!owned) { quietlyDelete(staging); return false }
    copyToFinal(target, bytes)
    quietlyDelete(staging)
    true
  }

  /** Writes the bytes the store's entry names under their final name, so that readers never see
    * them partly written: one PUT on an object store (an object appears whole at `close()`), a
    * fresh file renamed into place elsewhere. Only the owner and readers repairing a missing copy
    * write it, always with the same bytes. */
  private def copyToFinal(target: Path, bytes: Array[Byte]): Unit =
    if (ExternalCommitStore.objectStore(fs)) FileWrites.writeReplacing(fs, target, bytes)
    else {
      val tmp = new Path(target.getParent, s".tmp-copy-${java.util.UUID.randomUUID()}")
      FileWrites.writeNew(fs, tmp, bytes)
      if (!fs.rename(tmp, target)) quietlyDelete(tmp) // a repairing reader copied it first
    }

  def delete(root: Path, target: Path): Boolean = {
    val had = store.delete(dataset, keyOf(target))
    fs.delete(target, false) || had
  }

  def latestVersion(): Option[Long] = store.latestVersion(dataset)

  /** The staged file of `version` when its copy to the final name is missing (its writer died
    * between the store's put and the copy), after copying it there. */
  def recoverManifest(version: Long): Option[Array[Byte]] = {
    val target = DatasetLayout.manifest(root, version)
    store.get(dataset, keyOf(target)).flatMap { staged =>
      val p = new Path(root, staged)
      val bytes =
        try {
          val in = fs.open(p)
          try Some(in.readAllBytes())
          finally in.close()
        } catch { case _: FileNotFoundException => None }
      // The owner copied it and removed the staged file since the caller looked: read the copy.
      if (bytes.isEmpty) return (try {
        val in = fs.open(target)
        try Some(in.readAllBytes())
        finally in.close()
      } catch { case _: FileNotFoundException => None })
      bytes.foreach { b =>
        try copyToFinal(target, b)
        catch { case _: IOException => } // a reader may lack write access: the bytes serve it anyway
      }
      bytes
    }
  }

  private def quietlyDelete(p: Path): Unit =
    try fs.delete(p, false)
    catch { case _: IOException => }
}

private[core] object ExternalCommitStore {
  val DirSetting = "fermion.externalStore.dir"
  val ClassSetting = "fermion.externalStore.class"

  /** Stores where an object appears whole when its single upload completes. */
  def objectStore(fs: FileSystem): Boolean = fs.getUri.getScheme match {
    case "s3a" | "s3" | "gs" => true
    case _ => false
  }

  /** The dataset's identity in the store: its qualified root URI without a trailing slash. */
  def datasetId(root: Path, fs: FileSystem): String = fs.makeQualified(root).toString.stripSuffix("/")

  def apply(root: Path, fs: FileSystem, conf: Configuration): ExternalCommitStore = {
    val cls = conf.getTrimmed(ClassSetting, classOf[FileSystemManifestStore].getName)
    val store =
      try Class.forName(
          cls,
          true,
          Option(Thread.currentThread().getContextClassLoader).getOrElse(getClass.getClassLoader)
        )
          .getConstructor(classOf[Configuration]).newInstance(conf).asInstanceOf[ExternalManifestStore]
      catch {
        case e: java.lang.reflect.InvocationTargetException => throw e.getCause
        case e: ReflectiveOperationException =>
          throw new FermionCommitStoreException(
            root.toString,
            s"$ClassSetting '$cls' is not an ExternalManifestStore with a (Configuration) constructor",
            e
          )
      }
    new ExternalCommitStore(root, fs, store)
  }
}

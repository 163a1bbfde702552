package io.fermion.core.dataset

import java.io.IOException
import java.nio.file.{FileAlreadyExistsException, Files, Paths}
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap

import io.fermion.core.storage.FileWrites
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

/** How a dataset makes a file appear under a name only if no file has that name: the one atomic
  * step of a commit (manifests) and of creating a tag (docs/table-format.md 11.2). Each file system
  * offers it differently; a store is chosen per dataset from the scheme and the
  * `fermion.commitStore` setting ([[CommitStores.forDataset]]).
  *
  * [[createIfAbsent]] writes complete bytes: the file appears whole or not at all, and a second
  * writer of the same name gets `false`, never a replaced file. */
trait CommitStore {

  /** The setting's value that selects this store (`link`, `rename`, `conditionalPut`, `external`). */
  def kind: String

  /** Creates `target` holding `bytes` unless a file has that name; true if this call created it.
    * `staging` is a fresh name in the same file system that stores needing a temporary file use
    * (and remove). */
  def createIfAbsent(target: Path, bytes: Array[Byte], staging: Path): Boolean

  /** Publishes the manifest of `version` of the dataset at `root` (already encoded). */
  def publishManifest(root: Path, version: Long, bytes: Array[Byte], staging: Path): Boolean =
    createIfAbsent(DatasetLayout.manifest(root, version), bytes, staging)

  /** Removes a file created by [[createIfAbsent]] (a tag); false if it did not exist. */
  def delete(root: Path, target: Path): Boolean
}

/** The local file system: write the staging file, hard-link the target to it (`link(2)` fails
  * when the name exists), remove the staging name. */
final private[core] class LinkCommitStore(fs: FileSystem) extends FileSystemCommitStore(fs) {
  def kind: String = CommitStores.Link

  def createIfAbsent(target: Path, bytes: Array[Byte], staging: Path): Boolean = {
    FileWrites.writeNew(fs, staging, bytes)
    val from = Paths.get(fs.makeQualified(staging).toUri)
    val to = Paths.get(fs.makeQualified(target).toUri)
    val created =
      try { Files.createLink(to, from); true }
      catch {
        case _: FileAlreadyExistsException => false
        case e: IOException =>
          quietlyDelete(staging); throw e
      }
    // Published (or lost) either way: failing to remove the staging name must not turn a
    // published commit into a reported failure. Cleanup removes leftovers.
    quietlyDelete(staging)
    created
  }
}

/** HDFS (and viewfs over it): write and sync the staging file, then `rename` it to the target. The
  * NameNode refuses to rename onto an existing file, atomically. `create(target, overwrite =
  * false)` is atomic too, but the name would appear before its bytes are complete and synced, so a
  * reader could meet a partial manifest; a rename of a complete file cannot. */
final private[core] class RenameCommitStore(fs: FileSystem) extends FileSystemCommitStore(fs) {
  def kind: String = CommitStores.Rename

  def createIfAbsent(target: Path, bytes: Array[Byte], staging: Path): Boolean = {
    FileWrites.writeNew(fs, staging, bytes)
    val renamed =
      try fs.rename(staging, target)
      catch { case e: IOException => quietlyDelete(staging); throw e }
    if (!renamed) {
      quietlyDelete(staging)
      if (!fs.exists(target)) throw new IOException(s"cannot rename $staging to $target")
    }
    renamed
  }
}

/** Object stores with a conditional PUT (S3 `If-None-Match: *`, through S3A's
  * `createFile(path).opt("fs.option.create.conditional.overwrite", true)`, HADOOP-19256, hadoop-aws 3.5.0): the
  * object is written at its final name in one request that the store refuses (HTTP 412) when the
  * name exists. No staging file, no rename. A refusal surfaces at `close()` as S3A's
  * `RemoteFileChangedException`; S3 answers 409 (`ConditionalRequestConflict`) when two
  * conditional writes of one name overlap, and the write is then tried again. */
final private[core] class ConditionalPutCommitStore(fs: FileSystem, verify: Boolean) extends FileSystemCommitStore(fs) {
  def kind: String = CommitStores.ConditionalPut

  def createIfAbsent(target: Path, bytes: Array[Byte], staging: Path): Boolean = {
    if (verify) ConditionalPutCommitStore.verifyOnce(fs, target.getParent, put)
    put(target, bytes)
  }

  private def put(target: Path, bytes: Array[Byte]): Boolean = {
    var attempt = 0
    while (true) {
      attempt += 1
      val out =
        try FileWrites.createConditional(fs, target)
        catch { case e: IOException if ConditionalPutCommitStore.exists(e) => return false }
      var closed = false
      try {
        out.write(bytes)
        closed = true
        out.close() // the PUT happens here
        return true
      } catch {
        case e: IOException if ConditionalPutCommitStore.exists(e) => return false
        case e: IOException
            if ConditionalPutCommitStore.conflict(e) && attempt < ConditionalPutCommitStore.MaxConflictRetries =>
          Thread.sleep(10L * attempt + scala.util.Random.nextInt(20))
      } finally if (!closed) FileWrites.abort(out)
    }
    false
  }
}

private[core] object ConditionalPutCommitStore {
  val MaxConflictRetries = 10
  private val verified = ConcurrentHashMap.newKeySet[String]()

  /** The refusal of a conditional write: the name exists (HTTP 412 Precondition Failed, S3A's
    * RemoteFileChangedException; FileAlreadyExistsException from stores that check at create). */
  def exists(e: Throwable): Boolean = e match {
    case _: org.apache.hadoop.fs.FileAlreadyExistsException => true
    case _: FileAlreadyExistsException => true
    case _ =>
      val n = e.getClass.getSimpleName
      val m = String.valueOf(e.getMessage)
      n == "RemoteFileChangedException" || m.contains("PreconditionFailed") || m.contains("Precondition Failed") ||
      (e.getCause != null && (e.getCause ne e) && exists(e.getCause))
  }

  /** Two conditional writes of one name in flight (HTTP 409 ConditionalRequestConflict): retry. */
  def conflict(e: Throwable): Boolean =
    String.valueOf(e.getMessage).contains("ConditionalRequestConflict") ||
      (e.getCause != null && (e.getCause ne e) && conflict(e.getCause))

  /** Once per store and JVM: a store that ignores `If-None-Match` (an old S3-compatible server)
    * would let two writers publish one version. Write a probe object twice with the condition;
    * the second must be refused, else fail with the setting to change. */
  private[dataset] def verifyOnce(fs: FileSystem, dir: Path, put: (Path, Array[Byte]) => Boolean): Unit = {
    val key = s"${fs.getUri}"
    if (verified.contains(key)) return
    val probe = new Path(dir, s".probe-${UUID.randomUUID()}")
    try {
      val first = put(probe, Array[Byte](1))
      val second = put(probe, Array[Byte](2))
      if (!first || second)
        throw new FermionCommitStoreException(
          dir.toString,
          s"the store at ${fs.getUri} does not honour conditional writes (If-None-Match: *): a second create of " +
            s"$probe was not refused. Use an external manifest store (${CommitStores.Setting}=${CommitStores.External}) " +
            s"or a store that supports conditional writes; ${CommitStores.VerifySetting}=false skips this check"
        )
      verified.add(key)
    } finally
      try fs.delete(probe, false)
      catch { case _: IOException => }
  }
}

/** Shared by the stores that publish into the dataset's own file system. */
abstract private[core] class FileSystemCommitStore(val fs: FileSystem) extends CommitStore {
  protected def quietlyDelete(p: Path): Unit =
    try fs.delete(p, false)
    catch { case _: IOException => }

  def delete(root: Path, target: Path): Boolean = fs.delete(target, false)
}

/** Chooses a dataset's [[CommitStore]]. */
private[core] object CommitStores {

  /** The Hadoop configuration key (Spark: `spark.hadoop.fermion.commitStore`). */
  val Setting = "fermion.commitStore"
  val VerifySetting = "fermion.commitStore.verify"
  val Auto = "auto"
  val Link = "link"
  val Rename = "rename"
  val ConditionalPut = "conditionalPut"
  val External = "external"
  val Kinds: Seq[String] = Seq(Auto, Link, Rename, ConditionalPut, External)
  require(Kinds == io.fermion.core.options.OptionRegistry.CommitStoreKinds, "the option registry lists every store")

  /** Hadoop's createFile() option for an atomic create-if-absent checked at close. */
  val ConditionalCreateOption: String = FileWrites.ConditionalCreateOption

  def forDataset(root: Path, fs: FileSystem, conf: Configuration): CommitStore = {
    kindOf(root, conf) match {
      case Auto => auto(root, fs, conf)
      case Link => new LinkCommitStore(fs)
      case Rename => new RenameCommitStore(fs)
      case ConditionalPut => conditional(root, fs, conf, explicit = true)
      case External => ExternalCommitStore(root, fs, conf)
    }
  }

  private def auto(root: Path, fs: FileSystem, conf: Configuration): CommitStore = fs.getUri.getScheme match {
    case "file" => new LinkCommitStore(fs)
    case "hdfs" | "viewfs" => new RenameCommitStore(fs)
    case _ => conditional(root, fs, conf, explicit = false)
  }

  private def conditional(root: Path, fs: FileSystem, conf: Configuration, explicit: Boolean): CommitStore = {
    val capable =
      try fs.hasPathCapability(root, ConditionalCreateOption)
      catch { case _: IOException => false }
    if (!capable) throw new FermionCommitStoreException(
      root.toString,
      s"the file system '${fs.getUri.getScheme}' offers no atomic create-if-absent " +
        s"(${if (explicit) s"$Setting=$ConditionalPut, but " else ""}no conditional create: S3A needs hadoop-aws 3.5.0 with " +
        s"fs.s3a.create.conditional.enabled=true, the default), so concurrent commits could be lost. Set $Setting=$External " +
        s"and ${ExternalCommitStore.DirSetting}=<a directory on a file system with atomic create (local, HDFS)> to " +
        "coordinate commits through an external manifest store"
    )
    new ConditionalPutCommitStore(fs, conf.getBoolean(VerifySetting, true))
  }

  /** The setting a dataset at `root` is read and written with. */
  def kindOf(root: Path, conf: Configuration): String = {
    val asked = conf.getTrimmed(Setting, Auto)
    Kinds.find(_.equalsIgnoreCase(asked)).getOrElse(
      throw new FermionCommitStoreException(
        root.toString,
        s"unknown $Setting '$asked' (expected one of ${Kinds.mkString(", ")})"
      )
    )
  }
}

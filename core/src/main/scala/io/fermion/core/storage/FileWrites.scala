package io.fermion.core.storage

import java.io.IOException

import org.apache.hadoop.fs.{FSDataOutputStream, FileSystem, Path, StreamCapabilities}

/** How Fermion creates files on each kind of file system. On the local file system and HDFS a
  * create with `overwrite = false` is cheap (one system call, one NameNode RPC) and refuses an
  * existing name. On object stores the same call costs existence probes (S3A: HEAD and LIST
  * requests) that protect nothing: every name Fermion writes there is fresh (a UUID) or written
  * through the dataset layer's commit store, so files are created without those probes
  * (`fs.s3a.create.performance`). Contents are synced (`hsync`) where the stream can sync; an
  * object store makes a file durable when `close()` uploads it. */
private[core] object FileWrites {

  /** Hadoop's createFile() option for an atomic create-if-absent checked at close. */
  val ConditionalCreateOption = "fs.option.create.conditional.overwrite"

  /** S3A's createFile() option that skips the existence and parent-directory probes. */
  val CreatePerformanceOption = "fs.s3a.create.performance"

  /** Whether `fs` is a file system with cheap, checked creates (local, HDFS). */
  def isFileSystem(fs: FileSystem): Boolean = fs.getUri.getScheme match {
    case "file" | "hdfs" | "viewfs" => true
    case _ => false
  }

  /** Creates `p` for writing: refusing an existing name on file systems, without probes on stores. */
  def createNew(fs: FileSystem, p: Path): FSDataOutputStream =
    if (isFileSystem(fs)) fs.create(p, false)
    else fs.createFile(p).recursive().overwrite(true).opt(CreatePerformanceOption, true).build()

  /** Creates `p` replacing what may be there (hints, copies of published bytes). */
  def createReplacing(fs: FileSystem, p: Path): FSDataOutputStream =
    if (isFileSystem(fs)) fs.create(p, true)
    else fs.createFile(p).recursive().overwrite(true).opt(CreatePerformanceOption, true).build()

  /** A stream whose `close()` creates `p` only if no object has that name (Hadoop's
    * `fs.option.create.conditional.overwrite`); fails if the stream cannot promise it. */
  def createConditional(fs: FileSystem, p: Path): FSDataOutputStream = {
    val out = fs.createFile(p).recursive().overwrite(true).opt(CreatePerformanceOption, true)
      .opt(ConditionalCreateOption, true).build()
    if (!out.hasCapability(ConditionalCreateOption)) {
      abort(out)
      throw new IOException(s"the stream writing $p does not offer a conditional create")
    }
    out
  }

  /** Writes `bytes` as the new file `p`, synced before it is closed. */
  def writeNew(fs: FileSystem, p: Path, bytes: Array[Byte]): Unit = write(createNew(fs, p), fs, bytes)

  /** Writes `bytes` as `p`, replacing a file there. */
  def writeReplacing(fs: FileSystem, p: Path, bytes: Array[Byte]): Unit = write(createReplacing(fs, p), fs, bytes)

  private def write(out: FSDataOutputStream, fs: FileSystem, bytes: Array[Byte]): Unit =
    try { out.write(bytes); sync(out, fs) }
    finally out.close()

  /** Syncs what was written to durable storage where the stream can (HDFS, the local file system);
    * object stores make a file durable at `close()` and only warn about `hsync`. */
  def sync(out: FSDataOutputStream, fs: FileSystem): Unit =
    if (out.hasCapability(StreamCapabilities.HSYNC) || fs.getUri.getScheme == "file") out.hsync()

  /** Abandons a stream without publishing it (object stores upload at `close()`, so a stream that
    * cannot abort is left unclosed rather than closed). */
  def abort(out: FSDataOutputStream): Unit =
    try out.abort()
    catch { case _: UnsupportedOperationException | _: IOException => }
}

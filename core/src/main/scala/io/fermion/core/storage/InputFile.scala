package io.fermion.core.storage

import java.io.{Closeable, EOFException}
import java.nio.ByteBuffer

import io.fermion.core.errors.FermionOffsetOutOfRangeException
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, Path}

/** Positional, bounds-checked reads of one file. Every read is checked against the file length
  * first, so a truncated file or a corrupt offset fails with a typed error, never a short read. */
private[core] trait InputFile extends Closeable {
  def path: String
  def length: Long

  /** Bytes fetched from storage so far (for metrics and the wide-table benchmark). */
  def bytesRead: Long
  def readFully(offset: Long, len: Int): ByteBuffer

  /** Starts reading `ranges` (non-overlapping, each below 2 GiB) and returns their bytes as they
    * arrive, in the same order. Where the file system offers vectored reads they run in the
    * background, so a caller can decode one stripe while the next is being fetched; elsewhere
    * they are read here and now. */
  def readRanges(ranges: IndexedSeq[ByteRange]): IndexedSeq[java.util.concurrent.CompletableFuture[ByteBuffer]] =
    ranges.map(r => java.util.concurrent.CompletableFuture.completedFuture(readFully(r.offset, r.length.toInt)))

  /** Hands back buffers of a [[readRanges]] call once the caller holds no view of them (nothing
    * decoded from them refers to their bytes), for later reads to reuse. */
  def releaseReadBuffers(buffers: Iterable[ByteBuffer]): Unit = ()

  /** [[readRanges]] for ranges the caller waits for at once (a stripe decoded as soon as it is
    * read, with nothing to overlap): a file system may read them on the caller's thread. */
  def readNow(ranges: IndexedSeq[ByteRange]): IndexedSeq[java.util.concurrent.CompletableFuture[ByteBuffer]] =
    readRanges(ranges)

  /** [[readRanges]] for many small ranges the caller waits for at once (a take's pages, blocks and
    * values): a file system may trade background reads for fewer hand-offs between threads. */
  def readScattered(ranges: IndexedSeq[ByteRange]): IndexedSeq[java.util.concurrent.CompletableFuture[ByteBuffer]] =
    readRanges(ranges)

  /** The largest gap between two ranges that is cheaper to read through than to skip: a seek on a
    * local disk costs next to nothing, a request to HDFS or an object store about a megabyte. */
  def defaultCoalesceGap: Long = 1L << 20

  /** Bytes read from the end of the file on open: on an object store or HDFS one more request
    * costs more than a megabyte, on a local disk a second small read is cheaper than a large one. */
  def defaultTailPrefetch: Long = 1L << 20

  /** Bytes read from the end of the file when opening it for a few of its columns (format 1.5): the
    * footer and what lies next to it; the rest of the metadata is read column by column. */
  def columnsTailPrefetch: Long = defaultTailPrefetch

  final protected def checkRange(offset: Long, len: Long): Unit =
    // `offset > length - len`, not `offset + len > length`: an offset near Long.MaxValue must not wrap.
    if (offset < 0 || len < 0 || offset > length - len)
      throw new FermionOffsetOutOfRangeException(path, offset, len, length)
}

/** An [[InputFile]] over Hadoop's FileSystem (local, HDFS, S3A): positional reads, no seeks. */
final private[core] class HadoopInputFile private (
    val path: String,
    val length: Long,
    in: FSDataInputStream,
    local: Boolean
) extends InputFile {
  private val read = new java.util.concurrent.atomic.AtomicLong
  def bytesRead: Long = read.get()
  override def defaultCoalesceGap: Long = if (local) 16L << 10 else 1L << 20
  override def defaultTailPrefetch: Long = if (local) 64L << 10 else 1L << 20
  override def columnsTailPrefetch: Long = if (local) 4L << 10 else 1L << 20
  private val vectored = in.hasCapability(org.apache.hadoop.fs.StreamCapabilities.VECTOREDIO)

  override def readRanges(ranges: IndexedSeq[ByteRange])
      : IndexedSeq[java.util.concurrent.CompletableFuture[ByteBuffer]] = {
    if (!vectored || ranges.isEmpty) return super.readRanges(ranges)
    ranges.foreach(r => checkRange(r.offset, r.length))
    val fileRanges = ranges.map(r => org.apache.hadoop.fs.FileRange.createFileRange(r.offset, r.length.toInt))
    in.readVectored(java.util.Arrays.asList(fileRanges: _*), (n: Int) => ReadBuffers.shared.allocate(n))
    ranges.zip(fileRanges).map { case (r, fr) =>
      fr.getData.handle[ByteBuffer] { (b, err) =>
        if (err != null) {
          val cause = err match {
            case c: java.util.concurrent.CompletionException if c.getCause != null => c.getCause; case other => other
          }
          cause match {
            case _: EOFException => throw new FermionOffsetOutOfRangeException(path, r.offset, r.length, length)
            case other => throw new java.io.UncheckedIOException(
                s"reading $path at ${r.offset} (${r.length} bytes)",
                other match { case io: java.io.IOException => io; case t => new java.io.IOException(t) }
              )
          }
        }
        read.addAndGet(r.length)
        b
      }
    }
  }

  override def releaseReadBuffers(buffers: Iterable[ByteBuffer]): Unit = ReadBuffers.shared.release(buffers)

  override def readNow(ranges: IndexedSeq[ByteRange]): IndexedSeq[java.util.concurrent.CompletableFuture[ByteBuffer]] =
    if (local) readLocal(ranges) else readRanges(ranges)

  /** A local file's ranges, checked to lie within it, then read one after another on this thread
    * into [[ReadBuffers]] arrays (handed back by [[releaseReadBuffers]]; `readNow`). Hadoop's
    * vectored read hands each range to a thread of its own and back: for a read the caller waits
    * for at once, that handoff cost more than the read from the OS cache
    * (one-column files of 64 stripes read stripe by stripe, side by side in one JVM: 0.37-0.73 of
    * the time without it), and from a dropped cache the two took the same time (0.96-0.98). A
    * prefetch (`readRanges`) still goes to the vectored read: in Spark a full scan of lineitem,
    * whose next stripe is read while the current one decodes, ran 1.03-1.08x slower read inline.
    * An error completes its range's future, as a vectored read's would. */
  private def readLocal(ranges: IndexedSeq[ByteRange])
      : IndexedSeq[java.util.concurrent.CompletableFuture[ByteBuffer]] = {
    ranges.foreach(r => checkRange(r.offset, r.length))
    ranges.map { r =>
      val future = new java.util.concurrent.CompletableFuture[ByteBuffer]
      readInto(future, r)(fill(r.offset, ReadBuffers.shared.allocate(r.length.toInt)))
      future
    }
  }

  /** Completes `future` with `read` of range `r`, or with its failure. */
  private def readInto(future: java.util.concurrent.CompletableFuture[ByteBuffer], r: ByteRange)(
      read: => ByteBuffer
  ): Unit =
    try future.complete(read)
    catch {
      case e: java.io.IOException =>
        future.completeExceptionally(new java.io.UncheckedIOException(
          s"reading $path at ${r.offset} (${r.length} bytes)",
          e
        ))
      case e: Throwable => future.completeExceptionally(e)
    }

  /** On a local file: many small ranges (a take's pages) are cut, in file order, into a few groups
    * (one per 64 ranges, at most 8) read one range after another, the first on this thread and the
    * others on a small shared pool, so that a disk still sees several reads at once (Hadoop's
    * vectored read, one thread per range, cost a 1,000-row take of one column half its time when
    * the pages are in the OS cache). */
  override def readScattered(ranges: IndexedSeq[ByteRange])
      : IndexedSeq[java.util.concurrent.CompletableFuture[ByteBuffer]] = {
    if (!local) return readRanges(ranges)
    val futures = ranges.map(_ => new java.util.concurrent.CompletableFuture[ByteBuffer])
    val order = ranges.indices.sortBy(ranges(_).offset)
    val groups = math.min(HadoopInputFile.ReadThreads + 1, ranges.size / HadoopInputFile.ManyRanges + 1)
    val per = (order.size + groups - 1) / groups
    def readGroup(g: Int): Unit =
      order.slice(g * per, (g + 1) * per).foreach(i =>
        readInto(futures(i), ranges(i))(readFully(ranges(i).offset, ranges(i).length.toInt))
      )
    (1 until groups).foreach(g => HadoopInputFile.readPool.execute(() => readGroup(g)))
    readGroup(0)
    futures
  }

  def readFully(offset: Long, len: Int): ByteBuffer = {
    checkRange(offset, len)
    fill(offset, ByteBuffer.wrap(new Array[Byte](len)))
  }

  /** Reads the bytes from `offset` into all of heap buffer `b` (checked to lie within the file). */
  private def fill(offset: Long, b: ByteBuffer): ByteBuffer = {
    val len = b.remaining
    try in.readFully(offset, b.array, b.arrayOffset + b.position, len)
    catch { case _: EOFException => throw new FermionOffsetOutOfRangeException(path, offset, len, length) }
    read.addAndGet(len)
    b
  }

  def close(): Unit = in.close()
}

private[core] object HadoopInputFile {

  /** Ranges per group of a scattered read of a local file (see `readScattered`). */
  val ManyRanges: Int = 64

  /** Threads reading groups of ranges besides the caller's. */
  val ReadThreads: Int = 7

  private[storage] lazy val readPool: java.util.concurrent.ExecutorService =
    java.util.concurrent.Executors.newFixedThreadPool(
      ReadThreads,
      (r: Runnable) => {
        val t = new Thread(r, "fermion-local-read")
        t.setDaemon(true)
        t
      }
    )

  /** Hadoop's openFile() options: the file's length (so that object stores skip the HEAD request
    * that would find it) and the read policy (positional and vectored reads, no read-ahead). */
  val LengthOption = "fs.option.openfile.length"
  val ReadPolicyOption = "fs.option.openfile.read.policy"

  /** Opens `path`; `knownLength` (from a listing) saves the status request. */
  def open(path: Path, conf: Configuration, knownLength: Long = -1L): HadoopInputFile = {
    val fs = FileSystems.forPath(path, conf)
    val local = fs.getUri.getScheme == "file"
    if (knownLength < 0 || local) {
      val status = fs.getFileStatus(path)
      val in = if (local) fs.open(path) else openWith(fs, path, status.getLen)
      new HadoopInputFile(path.toString, status.getLen, in, local)
    } else new HadoopInputFile(path.toString, knownLength, openWith(fs, path, knownLength), local)
  }

  private def openWith(fs: org.apache.hadoop.fs.FileSystem, path: Path, length: Long): FSDataInputStream =
    org.apache.hadoop.util.functional.FutureIO.awaitFuture(
      fs.openFile(path).opt(LengthOption, length).opt(ReadPolicyOption, "vector, random").build()
    )
}

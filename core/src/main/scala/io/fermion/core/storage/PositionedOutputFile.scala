package io.fermion.core.storage

import java.io.{BufferedOutputStream, Closeable, OutputStream}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** An append-only output that knows its position: the writer records each page's offset before
  * writing it. Writes are buffered: no file-system write per page. */
final private[core] class PositionedOutputFile private (val path: String, out: OutputStream, sync: () => Unit)
    extends Closeable {
  private var pos = 0L
  def position: Long = pos

  def write(bytes: Array[Byte]): Unit = write(bytes, 0, bytes.length)
  def write(bytes: Array[Byte], off: Int, len: Int): Unit = { out.write(bytes, off, len); pos += len }

  /** Flushes to durable storage before closing: a dataset commit refers to the file right after. */
  def close(): Unit =
    try { out.flush(); sync() }
    finally out.close()
}

private[core] object PositionedOutputFile {
  val BufferSize: Int = 4 << 20

  /** Creates `path` (a fresh name), failing if it exists on file systems that check that cheaply:
    * data files are never overwritten in place (object stores: [[FileWrites.createNew]]). */
  def create(path: Path, conf: Configuration): PositionedOutputFile = {
    val fs = FileSystems.forPath(path, conf)
    val raw = FileWrites.createNew(fs, path)
    new PositionedOutputFile(path.toString, new BufferedOutputStream(raw, BufferSize), () => FileWrites.sync(raw, fs))
  }
}

package io.fermion.core.storage

import java.io.{Closeable, EOFException}
import java.nio.ByteBuffer

import io.fermion.core.errors.FermionOffsetOutOfRangeException
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, Path}

/** Positional, bounds-checked reads of one file. Every read is checked against the file length
  * first, so a truncated file or a corrupt offset fails with a typed error, never a short read. */
trait InputFile extends Closeable {
  def path: String
  def length: Long
  /** Bytes fetched from storage so far (for metrics and the wide-table benchmark). */
  def bytesRead: Long
  def readFully(offset: Long, len: Int): ByteBuffer

  protected final def checkRange(offset: Long, len: Long): Unit =
    if (offset < 0 || len < 0 || offset + len > length) throw new FermionOffsetOutOfRangeException(path, offset, len, length)
}

/** An [[InputFile]] over Hadoop's FileSystem (local, HDFS, S3A): positional reads, no seeks. */
final class HadoopInputFile private (val path: String, val length: Long, in: FSDataInputStream) extends InputFile {
  private var read = 0L
  def bytesRead: Long = read

  def readFully(offset: Long, len: Int): ByteBuffer = {
    checkRange(offset, len)
    val bytes = new Array[Byte](len)
    try in.readFully(offset, bytes, 0, len)
    catch { case _: EOFException => throw new FermionOffsetOutOfRangeException(path, offset, len, length) }
    read += len
    ByteBuffer.wrap(bytes)
  }

  def close(): Unit = in.close()
}

object HadoopInputFile {
  def open(path: Path, conf: Configuration): HadoopInputFile = {
    val fs = FileSystems.forPath(path, conf)
    val status = fs.getFileStatus(path)
    new HadoopInputFile(path.toString, status.getLen, fs.open(path))
  }
}

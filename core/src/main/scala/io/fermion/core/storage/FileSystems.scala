package io.fermion.core.storage

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{ChecksumFileSystem, FileSystem, Path}

/** The Hadoop FileSystem Fermion uses for a path. On the local file system that is the raw one:
  * Hadoop's checksummed local FS would write `.crc` side files and verify them on every read,
  * duplicating Fermion's own CRC32 per page (and turning damage into Hadoop's untyped error
  * instead of Fermion's). HDFS and object stores are used as they are. */
object FileSystems {
  def forPath(path: Path, conf: Configuration): FileSystem = path.getFileSystem(conf) match {
    case local: ChecksumFileSystem if local.getScheme == "file" => local.getRawFileSystem
    case fs => fs
  }
}

package io.fermion.core.errors

import java.io.IOException

/** Base of every error raised while reading a Fermion file: each names the file and the byte
  * offset where the problem was found, so an operator can locate the damage. The four concrete
  * classes are the format's four error classes (docs/format.md 15.6). */
sealed abstract class FermionFileException(val path: String, val offset: Long, message: String, cause: Throwable = null)
    extends IOException(s"$message [file=$path, offset=$offset]", cause)

/** Not a Fermion file, or structurally broken: bad magic, too short for a footer, metadata that
  * points outside its own region or disagrees with itself. */
final class InvalidFermionFileException(path: String, offset: Long, message: String, cause: Throwable = null)
    extends FermionFileException(path, offset, message, cause)

/** A read would go past the end of the file: the file was truncated after it was written, or an
  * offset in the metadata is corrupt. */
final class FermionOffsetOutOfRangeException(path: String, offset: Long, val length: Long, val fileLength: Long)
    extends FermionFileException(
      path,
      offset,
      s"reading $length bytes at offset $offset goes beyond the end of the data ($fileLength bytes in the file); the file is truncated or its metadata is corrupt"
    )

/** Stored bytes do not match their CRC32: the page or the metadata region was damaged. */
final class FermionChecksumException(path: String, offset: Long, what: String, val expected: Int, val actual: Int)
    extends FermionFileException(
      path,
      offset,
      f"CRC32 mismatch in $what (stored 0x$expected%08x, computed 0x$actual%08x); the file is corrupt"
    )

/** The file was written by a newer, incompatible format version. */
final class UnsupportedFermionVersionException(path: String, offset: Long, val major: Int, val minor: Int)
    extends FermionFileException(
      path,
      offset,
      s"format version $major.$minor is not supported by this reader (reads major version ${io.fermion.core.layout.FormatVersion.Major})" +
        (if (major > io.fermion.core.layout.FormatVersion.Major) "; upgrade Fermion to read it" else "")
    )

package io.fermion.core.dataset

import org.apache.hadoop.fs.Path

/** Where things live under a dataset root (docs/table-format.md, "Layout"):
  * {{{
  * data/<uuid>.fermion                      data files
 * _fermion_data/<uuid>.fermion             data files of an in-place conversion from Parquet
  * _versions/<u64::MAX - version:020>.manifest  one manifest per version (V2 naming)
  * _transactions/<readVersion>-<uuid>.txn   one per commit attempt
  * _deletions/<fragment>-<readVersion>-<random>.{arrow,bin}
  * _rowids/<uuid>.rowids                   row id files (fragments' listed row ids)
  * _refs/tags/<name>                       a tag: the version number as decimal text
  * _indices/                               reserved
  * }}}
  * V2 names sort newest first, so one listing (sorted, as object stores list) finds the latest. */
object DatasetLayout {
  val DataDir = "data"

  /** Data files of a dataset converted in place from a Parquet directory (`fermion convert
    * --in-place`): hidden from Parquet readers of the same directory. */
  val ConvertedDataDir = "_fermion_data"
  val VersionsDir = "_versions"
  val TransactionsDir = "_transactions"
  val DeletionsDir = "_deletions"
  val RowIdsDir = "_rowids"
  val TagsDir = "_refs/tags"
  val IndicesDir = "_indices"
  val ManifestSuffix = ".manifest"

  def manifestName(version: Long): String = {
    require(version >= 1, s"versions start at 1, got $version")
    // u64::MAX - version as unsigned decimal, zero-padded to 20 digits
    val inverted = java.lang.Long.toUnsignedString(-1L - version)
    ("0" * (20 - inverted.length)) + inverted + ManifestSuffix
  }

  /** The version a manifest file name stands for, if it is one. */
  def versionOf(name: String): Option[Long] =
    if (!name.endsWith(ManifestSuffix) || name.length != 20 + ManifestSuffix.length) None
    else {
      val digits = name.substring(0, 20)
      if (!digits.forall(_.isDigit)) None
      else scala.util.Try(java.lang.Long.parseUnsignedLong(digits)).toOption.map(inv => -1L - inv).filter(_ >= 1)
    }

  def versions(root: Path): Path = new Path(root, VersionsDir)
  def manifest(root: Path, version: Long): Path = new Path(versions(root), manifestName(version))
  def transactions(root: Path): Path = new Path(root, TransactionsDir)
  def tags(root: Path): Path = new Path(root, TagsDir)
}

package io.fermion.core.scan

/** Which version of a dataset a [[Snapshot]] reads. */
sealed trait ReadAt extends Serializable

object ReadAt {

  /** The newest committed version (for a directory of loose files: the files there now). */
  case object Latest extends ReadAt

  /** Version `version` (1 is the first). */
  final case class Version(version: Long) extends ReadAt

  /** The newest version committed at or before `millis` (milliseconds since the epoch). */
  final case class Timestamp(millis: Long) extends ReadAt

  /** The version a tag names. */
  final case class Tag(name: String) extends ReadAt

  // For Java callers.
  def latest(): ReadAt = Latest
  def version(v: Long): ReadAt = Version(v)
  def timestamp(millis: Long): ReadAt = Timestamp(millis)
  def tag(name: String): ReadAt = Tag(name)
}

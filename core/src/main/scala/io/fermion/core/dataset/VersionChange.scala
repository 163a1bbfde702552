package io.fermion.core.dataset

/** What one version did to the rows of the version before it, as a reader that follows a dataset
  * version by version (a stream) needs to know: the fragments it added, and whether rows of earlier
  * versions changed. Decided by the manifest's operation (table-format 6.1) and fragment ids. */
final case class VersionChange(version: Long, operation: String, added: IndexedSeq[Fragment], kind: VersionChange.Kind)

object VersionChange {
  sealed trait Kind

  /** Rows added, none changed (`append`, `create`, and whatever made the first version). */
  case object Added extends Kind

  /** The same rows in new fragments (`compact`): nothing new for a follower. */
  case object Rewritten extends Kind

  /** Rows deleted, none added (`delete`). */
  case object Deleted extends Kind

  /** Rows changed or replaced (`update`, `overwrite`, `restore`, `replace_partitions`, operations
    * this reader does not know): the added fragments hold new versions of earlier rows too. */
  case object Changed extends Kind

  /** The schema changed (`project`, `add_columns`, `append_with_schema`: rows added too). */
  case object SchemaChanged extends Kind

  /** The change from `previous` (the version before, or the empty manifest) to `current`. */
  def of(previous: Manifest, current: Manifest): VersionChange = {
    val before = previous.fragments.iterator.map(_.id).toSet
    val added = current.fragments.filterNot(f => before.contains(f.id))
    val kind =
      if (previous.version == 0) Added
      else current.operation match {
        case "append" | "create" => Added
        case "compact" => Rewritten
        case "delete" => Deleted
        case "project" | "add_columns" | "append_with_schema" => SchemaChanged
        case _ => Changed
      }
    VersionChange(current.version, current.operation, added, kind)
  }
}

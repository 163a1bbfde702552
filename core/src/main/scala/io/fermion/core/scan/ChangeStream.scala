package io.fermion.core.scan

import scala.collection.mutable

import io.fermion.core.dataset.{FermionDataset, Fragment, VersionChange}
import io.fermion.core.options.OptionRegistry
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Where a stream of a dataset stands: every version before `version` is read, and the first
  * `index` fragments of the list of `version` ([[ChangeStream]]). `snapshotVersion` is the version
  * the stream read whole when it started (-1: it started from a version's changes). */
final case class StreamPosition(version: Long, index: Int, snapshotVersion: Long) {
  def json: String = s"""{"version":$version,"index":$index,"snapshotVersion":$snapshotVersion}"""
}

object StreamPosition {
  private val Field = """"(\w+)"\s*:\s*(-?\d+)""".r

  def parse(json: String): StreamPosition = {
    val fields = Field.findAllMatchIn(json).map(m => m.group(1) -> m.group(2).toLong).toMap
    def get(k: String) = fields.getOrElse(k, throw new IllegalArgumentException(s"not a Fermion stream offset: $json"))
    StreamPosition(get("version"), get("index").toInt, get("snapshotVersion"))
  }
}

/** How a stream follows a dataset (the streaming read options, parsed). */
final case class StreamSettings(
    /** None: start with the latest version read whole; Some(None): only versions after the start;
      * Some(Some(v)): the changes of version v onwards. */
    startingVersion: Option[Option[Long]] = None,
    maxFiles: Int = 1000,
    maxRows: Option[Long] = None,
    ignoreDeletes: Boolean = false,
    ignoreChanges: Boolean = false
)

object StreamSettings {
  def parse(options: Map[String, String]): StreamSettings = {
    val default = StreamSettings()
    StreamSettings(
      OptionRegistry.StartingVersion.in(options),
      OptionRegistry.MaxFilesPerTrigger.in(options).getOrElse(default.maxFiles),
      OptionRegistry.MaxRowsPerTrigger.in(options),
      OptionRegistry.IgnoreDeletes.in(options).getOrElse(default.ignoreDeletes),
      OptionRegistry.IgnoreChanges.in(options).getOrElse(default.ignoreChanges)
    )
  }
}

/** Follows a dataset version by version, as a streaming source reads it: the version a stream
  * starts from read whole (or, with a starting version, only changes), then for each later version
  * the fragments it added: all of an append's; none of a compaction's (the same rows); a delete or
  * a change of rows (update, merge, overwrite, restore) fails the stream unless `ignoreDeletes` /
  * `ignoreChanges` (then changed rows come again); a schema change always fails it. Fragments are
  * read as of the version that added them. `scan` gives the columns (its plan) and the schema every
  * version read must still have. */
final class ChangeStream(scan: Scan, settings: StreamSettings, conf: Configuration) {
  private val root = scan.snapshot.root
  if (!scan.snapshot.isDataset)
    throw new UnsupportedOperationException(s"a stream reads a Fermion dataset; '$root' holds loose files")
  private val dataset = new FermionDataset(new Path(root), conf)
  private val startVersion = scan.snapshot.version.get
  private val fragmentsOf = mutable.HashMap.empty[(Long, Long), IndexedSeq[Fragment]]

  /** The dataset's latest version now. */
  def latestVersion: Long = dataset.latestVersion().getOrElse(0L)

  /** Where a new stream starts. */
  def initial: StreamPosition = settings.startingVersion match {
    case None => StreamPosition(startVersion, 0, startVersion)
    case Some(None) => StreamPosition(dataset.latestVersion().getOrElse(0L) + 1, 0, -1)
    case Some(Some(v)) => StreamPosition(v, 0, -1)
  }

  /** The fragments version `version` contributes to a stream that read `snapshotVersion` whole. */
  private def fragments(version: Long, snapshotVersion: Long): IndexedSeq[Fragment] =
    fragmentsOf.getOrElseUpdate(
      (version, snapshotVersion),
      if (version == snapshotVersion) dataset.manifest(version).fragments
      else {
        val c = dataset.change(version)
        def refuse(what: String, option: String) = throw new UnsupportedOperationException(
          s"version $version of $root $what (${c.operation}): a stream of the dataset cannot follow it" +
            (if (option.isEmpty) "; restart the query from a later version (startingVersion)"
             else s"; set $option to go on without those changes")
        )
        c.kind match {
          case VersionChange.Added => c.added
          case VersionChange.Rewritten => IndexedSeq.empty
          case VersionChange.Deleted if settings.ignoreDeletes || settings.ignoreChanges => IndexedSeq.empty
          case VersionChange.Deleted => refuse("deleted rows", "ignoreDeletes")
          case VersionChange.Changed if settings.ignoreChanges => c.added
          case VersionChange.Changed => refuse("changed rows", "ignoreChanges")
          case VersionChange.SchemaChanged => refuse("changed the schema", "")
        }
      }
    )

  /** How far a micro-batch starting at `from` reaches: up to the latest version, at most
    * `maxFiles` fragments holding at most `maxRows` rows (but at least one fragment). */
  def latest(
      from: StreamPosition,
      maxFiles: Int = settings.maxFiles,
      maxRows: Option[Long] = settings.maxRows,
      /** The last version to read (a run that processes what was there when it started stops there). */
      upTo: Long = latestVersion
  ): StreamPosition = {
    val last = upTo
    var version = from.version
    var index = from.index
    var files = 0
    var rows = 0L
    var full = false
    while (version <= last && !full) {
      val fs = fragments(version, from.snapshotVersion)
      while (index < fs.size && !full) {
        // Rows are a soft limit: the first fragment always goes, a later one only if it fits. A
        // full batch stops here: the next version is not looked at (it may be one that stops the stream).
        if (files > 0 && maxRows.exists(rows + fs(index).rowCount > _)) full = true
        else {
          files += 1; rows += fs(index).rowCount; index += 1
          full = files >= maxFiles || maxRows.exists(rows >= _)
        }
      }
      if (index >= fs.size) { version += 1; index = 0 }
    }
    StreamPosition(version, index, from.snapshotVersion)
  }

  /** The read tasks of the fragments after `from` up to `to`, version by version, each version's
    * fragments read as of that version. */
  def tasks(from: StreamPosition, to: StreamPosition, sizing: TaskSizing): IndexedSeq[ScanTask] = {
    val out = IndexedSeq.newBuilder[ScanTask]
    var version = from.version
    while (version < to.version || (version == to.version && to.index > 0)) {
      val fs = fragments(version, from.snapshotVersion)
      val first = if (version == from.version) from.index else 0
      val until = if (version == to.version) to.index else fs.size
      val ids = fs.slice(first, until).map(_.id).toSet
      if (ids.nonEmpty) out ++= scan.tasksOf(Snapshot.ofManifest(dataset, dataset.manifest(version)), ids, sizing)
      version += 1
    }
    out.result()
  }
}

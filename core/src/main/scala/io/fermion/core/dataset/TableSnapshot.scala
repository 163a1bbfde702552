package io.fermion.core.dataset

import java.io.FileNotFoundException

import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import io.fermion.core.schema.FermionSchema
import io.fermion.core.table.DataFileListing
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** One data file of a snapshot, with what a reader needs beyond the file itself: its fragment,
  * where its rows start in the fragment, and the fragment's deletion file. */
final case class SnapshotFile(
    path: String,
    length: Long,
    fragmentId: Long,
    deletion: Option[DeletionFile],
    rowIdStart: Option[Long] = None,
    columnFiles: IndexedSeq[String] = IndexedSeq.empty
)

/** What a scan reads: a dataset version (files from the manifest, columns matched to files by
  * field id) or, for a directory of Fermion files without `_versions/` or a single file, the files
  * themselves (columns matched by name). */
final case class TableSnapshot(
    root: String,
    schema: Option[FermionSchema],
    manifest: Option[Manifest],
    files: IndexedSeq[SnapshotFile]
) {
  def isDataset: Boolean = manifest.nonEmpty
  def version: Option[Long] = manifest.map(_.version)

  /** A dataset's top-level field ids by lower-case name: how readers find a column in files
    * written before a rename. None for plain directories (matched by name). */
  lazy val columnIds: Option[Map[String, Int]] =
    manifest.map(_.schema.fields.map(f => f.name.toLowerCase(java.util.Locale.ROOT) -> f.fieldId).toMap)
}

object TableSnapshot {

  /** The snapshot of `path` at the requested version, time or tag (latest when none is given). A
    * path that holds nothing yields an empty snapshot without a schema. */
  def load(
      path: String,
      conf: Configuration,
      version: Option[Long] = None,
      timestampMillis: Option[Long] = None,
      tag: Option[String] = None
  ): TableSnapshot = {
    val root = new Path(path)
    val dataset = new FermionDataset(root, conf)
    val timeTravel = version.nonEmpty || timestampMillis.nonEmpty || tag.nonEmpty
    dataset.resolve(version, timestampMillis, tag) match {
      case Some(m) => fromManifest(dataset, m)
      case None if timeTravel =>
        throw new FermionVersionNotFoundException(path, "the path holds no Fermion dataset to time-travel in")
      case None =>
        val files = DataFileListing.list(root, conf)
        val schema = files.headOption.map { f =>
          val r = FermionFileReader.open(f.getPath, conf, ReaderOptions())
          try r.schema
          finally r.close()
        }
        TableSnapshot(
          path,
          schema,
          None,
          files.zipWithIndex.map { case (f, i) => SnapshotFile(f.getPath.toString, f.getLen, i, None) }
        )
    }
  }

  def fromManifest(dataset: FermionDataset, m: Manifest): TableSnapshot = {
    // One listing of data/ gives every file's length (manifests do not record them).
    val fs = dataset.fs
    val lengths =
      try
        fs.listStatus(new Path(dataset.root, DatasetLayout.DataDir)).iterator.map(s => s.getPath.getName -> s.getLen).toMap
      catch { case _: FileNotFoundException => Map.empty[String, Long] }
    val files = m.fragments.flatMap { f =>
      // The first file leads (splits, statistics); the others add columns to the same rows.
      f.files.take(1).map { d =>
        val p = dataset.resolvePath(d.path)
        val len = lengths.getOrElse(
          p.getName,
          try fs.getFileStatus(p).getLen
          catch {
            case _: FileNotFoundException =>
              throw new InvalidFermionDatasetException(
                dataset.name,
                d.path,
                s"data file of fragment ${f.id} in version ${m.version} is missing"
              )
          }
        )
        SnapshotFile(
          p.toString,
          len,
          f.id,
          f.deletion,
          f.rowIdStart,
          f.files.drop(1).map(c => dataset.resolvePath(c.path).toString)
        )
      }
    }
    TableSnapshot(dataset.name, Some(m.schema), Some(m), files)
  }
}

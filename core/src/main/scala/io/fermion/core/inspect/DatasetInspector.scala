package io.fermion.core.inspect

import java.io.FileNotFoundException

import io.fermion.core.dataset._
import io.fermion.core.storage.FileSystems
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

/** Builds a [[DatasetInspection]] from a dataset's metadata files only: every manifest (the
  * history), the transaction files they name (what each commit did), the tags, and one listing of
  * `data/` for file sizes. No data file is opened. */
object DatasetInspector {

  /** Whether `path` is a dataset (its `_versions/` holds a version). */
  def isDataset(path: String, conf: Configuration): Boolean =
    new FermionDataset(new Path(path), conf).exists

  /** The dataset at `path`; `version` (default: the latest) selects whose fragments are listed. */
  def inspect(path: String, conf: Configuration, version: Option[Long] = None): DatasetInspection = {
    val root = new Path(path)
    val ds = new FermionDataset(root, conf)
    val fs = ds.fs
    var bytes = 0L
    def listing(dir: Path): Map[String, FileStatus] = listingOf(ds, dir)
    val manifestFiles = listing(DatasetLayout.versions(root))
    val numbers = ds.versionNumbers()
    if (numbers.isEmpty)
      throw new FermionDatasetNotFoundException(path, "it holds no dataset version (_versions/ is empty or missing)")
    val manifests = numbers.map { v =>
      bytes += manifestFiles.get(DatasetLayout.manifestName(v)).map(_.getLen).getOrElse(0L)
      ds.manifest(v)
    }
    val tags = ds.tags
    bytes += listing(DatasetLayout.tags(root)).values.map(_.getLen).sum
    val tagsByVersion = tags.groupBy(_._2).map { case (v, ts) => v -> ts.keys.toSeq.sorted }
    val versions = manifests.map { m =>
      val txnPath = new Path(DatasetLayout.transactions(root), m.transactionFile)
      val detail =
        if (m.transactionFile.isEmpty) None
        else
          try {
            val st = fs.getFileStatus(txnPath)
            val in = fs.open(txnPath)
            val b = new Array[Byte](st.getLen.toInt)
            try in.readFully(0, b)
            finally in.close()
            bytes += b.length
            TransactionCodec.decode(b, ds.name, m.transactionFile).flatMap(t => describe(t.operation))
          } catch { case _: FileNotFoundException => Some("transaction file missing") }
      VersionInfo(
        m.version,
        m.timestampMillis,
        m.operation,
        detail,
        m.fragments.size,
        m.rowCount,
        tagsByVersion.getOrElse(m.version, Nil)
      )
    }
    val chosen = version.map(v => manifests.find(_.version == v).getOrElse(ds.manifest(v))).getOrElse(manifests.last)
    val sizes = sizesOf(ds, chosen.fragments.flatMap(_.files.map(_.path)))
    val fragments = chosen.fragments.map { f =>
      FragmentInfo(
        f.id,
        f.physicalRows,
        f.rowCount,
        f.rowIds.collect { case RowIds.Start(first) => first },
        f.rowIds.collect {
          case _: RowIds.Listed => "manifest"
          case e: RowIds.External => e.path
        },
        f.files.map(d => DataFileInfo(d.path, d.fieldIds, sizes.get(d.path))),
        f.deletion.map(d =>
          DeletionInfo(d.path, if (d.kind == DeletionFile.ArrowArray) "arrow" else "roaring", d.deletedRows)
        )
      )
    }
    DatasetInspection(
      root = ds.name,
      version = chosen.version,
      latestVersion = numbers.last,
      timestampMillis = chosen.timestampMillis,
      operation = chosen.operation,
      rows = chosen.rowCount,
      readerFeatures = chosen.readerFeatures,
      writerFeatures = chosen.writerFeatures,
      schema = chosen.schema.fields,
      versions = versions,
      fragments = fragments,
      tags = tags,
      config = chosen.config,
      bytesRead = bytes
    )
  }

  /** One version's totals, without the history `inspect` reads: its manifest, the first version's
    * (for the creation time) and the sizes of its data and deletion files. What `DESCRIBE DETAIL`
    * shows. */
  def summary(ds: FermionDataset, manifest: Manifest): DatasetSummary = {
    val fragments = manifest.fragments
    val files = fragments.flatMap(_.files.map(_.path))
    val deletions = fragments.flatMap(_.deletion.map(_.path))
    val sizes = sizesOf(ds, files ++ deletions)
    DatasetSummary(
      version = manifest.version,
      createdMillis = ds.versionNumbers().headOption.map(v => ds.manifest(v).timestampMillis),
      modifiedMillis = manifest.timestampMillis,
      partitionColumns = manifest.partitionFields.map(_.name),
      fragments = fragments.size,
      dataFiles = files.size,
      deletionFiles = deletions.size,
      bytes = (files ++ deletions).distinct.flatMap(sizes.get).sum,
      rows = manifest.rowCount,
      deletedRows = fragments.map(_.deletion.map(_.deletedRows).getOrElse(0L)).sum,
      readerFeatures = Manifest.featureNames(manifest.readerFeatures)
    )
  }

  /** Sizes of dataset files by the relative paths manifests name them with: one listing per
    * directory they lie in (`data/`, `_deletions/`, the directories of a table converted in place),
    * and a status call for a file its listing does not show. Missing files have no entry. */
  private def sizesOf(ds: FermionDataset, paths: Seq[String]): Map[String, Long] =
    paths.distinct.groupBy(p => ds.resolvePath(p).getParent).flatMap { case (dir, inDir) =>
      val listed = listingOf(ds, dir)
      inDir.flatMap { rel =>
        val p = ds.resolvePath(rel)
        listed.get(p.getName).map(_.getLen).orElse {
          try Some(ds.fs.getFileStatus(p).getLen)
          catch { case _: FileNotFoundException => None }
        }.map(rel -> _)
      }
    }

  /** The files of `dir` by name (none if it does not exist). */
  private def listingOf(ds: FermionDataset, dir: Path): Map[String, FileStatus] =
    try ds.fs.listStatus(dir).iterator.map(s => s.getPath.getName -> s).toMap
    catch { case _: FileNotFoundException => Map.empty }

  private def describe(op: Operation): Option[String] = op match {
    case Operation.Append(_, fs, _) => Some(s"${fs.size} new fragments")
    case Operation.Overwrite(_, fs, _) => Some(s"replaced by ${fs.size} fragments")
    case Operation.Delete(updated, removed, predicate) =>
      Some(s"where $predicate (${updated.size} fragments with new deletion files, ${removed.size} removed)")
    case Operation.Project(_, description) => Some(description)
    case Operation.AppendWithSchema(p, a) => Some(s"${p.description}; ${a.fragments.size} new fragments")
    case Operation.Compact(removed, fs) => Some(s"${removed.size} fragments rewritten into ${fs.size}")
    case Operation.AddColumnFiles(_, files, description) => Some(s"$description (${files.size} column files)")
    case _ => None // operations added later: the manifest's operation name says enough
  }

  private[inspect] def exists(path: String, conf: Configuration): Boolean = {
    val p = new Path(path)
    FileSystems.forPath(p, conf).exists(p)
  }
}

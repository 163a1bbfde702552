package io.fermion.core.scan

import java.io.FileNotFoundException
import java.util.Locale

import io.fermion.core.dataset._
import io.fermion.core.expr.FilterValue
import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import io.fermion.core.schema.{FermionField, FermionSchema, FermionType}
import io.fermion.core.storage.FileSystems
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}

/** One data file of a snapshot, with what a reader needs beyond the file itself: its fragment, the
  * fragment's deletion file, its stable row ids, and the files that add columns to
  * the same rows (matched by field id). */
final case class SnapshotFile(
    path: String,
    length: Long,
    fragmentId: Long,
    deletion: Option[DeletionFile] = None,
    rowIds: Option[RowIds] = None,
    columnFiles: IndexedSeq[String] = IndexedSeq.empty,
    modificationTime: Long = 0L,
    /** Rows stored in the fragment, deleted ones included (-1: not known without opening the file). */
    physicalRows: Long = -1L,
    /** The values of the snapshot's partition columns for every row of the file, in the order of
      * [[Snapshot.partitionFields]] (None: null); empty when the snapshot is not partitioned. */
    partition: IndexedSeq[Option[FilterValue]] = IndexedSeq.empty,
    /** The top-level field ids of the data file, then of each of [[columnFiles]], in their column
      * order, as the manifest lists them (empty for loose files): a read finds its columns' positions
      * without the files' whole schemas. */
    fieldIds: IndexedSeq[IndexedSeq[Int]] = IndexedSeq.empty,
    /** Where some fields are, by field id (see [[position]]). What a task carries instead of
      * [[fieldIds]] (see [[locating]]). */
    located: Map[Int, Option[(Int, Int)]] = Map.empty,
    /** The bytes of [[columnFiles]] together, as the listing of the dataset's data files gave them
      * (0 for a column file it did not list). */
    columnFilesLength: Long = 0L
) {

  /** Where the manifest places field `fieldId`: None when it does not say (no lists); Some(None)
    * when it lists the fields of every file of the fragment and this one is in none of them;
    * Some(Some((file, column))) with file 0 for the data file, 1 + i for column file i. */
  def position(fieldId: Int): Option[Option[(Int, Int)]] =
    located.get(fieldId).orElse {
      if (fieldIds.size != 1 + columnFiles.size) None
      else Some(fieldIds.indices.iterator.map(k => k -> fieldIds(k).indexOf(fieldId)).find(_._2 >= 0))
    }

  /** This file knowing the positions of `ids` only: what a task ships, instead of the manifest's
    * lists, which for a file of 100,000 columns hold 100,000 ids. */
  def locating(ids: Iterable[Int]): SnapshotFile =
    if (fieldIds.isEmpty) this
    else copy(fieldIds = IndexedSeq.empty, located = located ++ ids.flatMap(id => position(id).map(id -> _)))

  /** The bytes a read of all the fragment's columns opens: the data file and its column files. */
  def bytes: Long = length + columnFilesLength

  /** Rows of the fragment its deletion file removes. */
  def deletedRows: Long = deletion.map(_.deletedRows).getOrElse(0L)

  /** Rows a read of the fragment returns, when the manifest says how many it stores. */
  def liveRows: Option[Long] = if (physicalRows < 0) None else Some(physicalRows - deletedRows)
}

/** What a read sees: a dataset version (its schema and files from the manifest; columns are found
  * in files by field id, so renamed columns keep their data) or a directory of loose Fermion files
  * (or a single file) without `_versions/`, whose columns are found by name. Start a read with
  * [[scanBuilder]]:
  * {{{
  * val snapshot = Snapshot.open("/data/events", new Configuration(), ReadAt.Version(3))
  * val scan = snapshot.scanBuilder().select("id", "ctx.user").filter(...).build()
  * }}}
  */
final case class Snapshot(
    root: String,
    schema: Option[FermionSchema],
    manifest: Option[Manifest],
    files: IndexedSeq[SnapshotFile],
    /** The partition columns (fields of `schema`): a partitioned dataset's spec, or the `k=v`
      * directories of loose files. Their values come from each file's [[SnapshotFile.partition]],
      * never from the files' data. */
    partitionFields: IndexedSeq[FermionField] = IndexedSeq.empty
) {
  def isDataset: Boolean = manifest.nonEmpty
  def version: Option[Long] = manifest.map(_.version)
  def isPartitioned: Boolean = partitionFields.nonEmpty

  /** The position of partition column `name` (case-insensitively) among [[partitionFields]]. */
  def partitionIndex(name: String): Option[Int] =
    Some(partitionFields.indexWhere(_.name.equalsIgnoreCase(name))).filter(_ >= 0)

  /** Rows the snapshot's reads return, without opening a file; None when a file's row count is
    * only in its footer (loose files). */
  def liveRows: Option[Long] =
    if (files.forall(_.liveRows.nonEmpty)) Some(files.iterator.flatMap(_.liveRows).sum) else None

  /** Per top-level field id of `ids`, the size in memory (Arrow's layout) of its values in the
    * snapshot's live rows, as the manifest records it (deleted rows deducted in proportion), for
    * query planners. Left out: an id some file records no size for (files of older writers; loose
    * files) and partition columns, whose values no file holds. */
  def recordedBytes(ids: Seq[Int]): Map[Int, Long] = manifest match {
    case None => Map.empty
    case Some(m) =>
      val read = files.iterator.map(_.fragmentId).toSet
      val fragments = m.fragments.filter(f => read.contains(f.id))
      val partitionIds = partitionFields.map(_.fieldId).toSet
      ids.filterNot(partitionIds.contains).flatMap { id =>
        val sizes = fragments.map(_.liveBytes(id))
        if (sizes.forall(_.nonEmpty)) Some(id -> sizes.iterator.map(_.get).sum) else None
      }.toMap
  }

  /** Whether the path holds anything to read. */
  def exists: Boolean = schema.nonEmpty

  /** Whether a scan of this dataset with [[ScanBuilder.filter]] `f` returns exactly the rows on
    * which `f` is TRUE, so that an engine need not evaluate `f` again: every leaf of `f` compares a
    * flat column (or a partition column other than floating point) with literals of its domain
    * ([[io.fermion.core.expr.FilterValue]]), and no part is [[FilterExpr.Unknown]] or a NOT
    * without an opposite. Loose files, whose columns may differ in type from file to file, never
    * qualify. */
  def filtersExactly(f: io.fermion.core.expr.FilterExpr): Boolean = isDataset && schema.exists { s =>
    def typeOf(name: String): Option[FermionType] = partitionIndex(name) match {
      // Partition values are constants: NaN would leave a comparison undecided.
      case Some(i) =>
        Some(partitionFields(i).dataType).filterNot(t => t == FermionType.Float32 || t == FermionType.Float64)
      case None => s.indexOf(name).map(s.fields(_).dataType).filterNot(FermionType.isNested)
    }
    io.fermion.core.read.filter.RowFilter.decidesExactly(f, typeOf)
  }

  /** A dataset's top-level field ids by lower-case name; None for loose files (matched by name). */
  lazy val columnIds: Option[Map[String, Int]] =
    manifest.map(_.schema.fields.map(f => f.name.toLowerCase(Locale.ROOT) -> f.fieldId).toMap)

  /** Whether some rows are deleted or some columns live in files of their own: then file
    * statistics do not describe the version's rows. */
  def hasDeletionsOrColumnFiles: Boolean = files.exists(f => f.deletion.nonEmpty || f.columnFiles.nonEmpty)

  /** The same version restricted to some fragments. */
  def withFragments(ids: Set[Long]): Snapshot = copy(files = files.filter(f => ids.contains(f.fragmentId)))

  def scanBuilder(): ScanBuilder = new ScanBuilder(this)

  /** This snapshot, or a [[FermionDatasetNotFoundException]] when the path holds no dataset or files. */
  def requireExists(conf: Configuration): Snapshot = {
    if (!exists) {
      val p = new Path(root)
      val why =
        if (FileSystems.forPath(p, conf).exists(p)) "the path holds no Fermion dataset or data files"
        else "the path does not exist"
      throw new FermionDatasetNotFoundException(root, why)
    }
    this
  }
}

object Snapshot {

  /** The snapshot of `path` at `at`. A path that holds nothing yields a snapshot without a schema
    * (what a first write starts from); time travel there fails with [[FermionVersionNotFoundException]].
    * For loose files, `mergeSchema` unites the columns of every file (a column a file lacks reads
    * null there; one name with two types is an error); otherwise the first file's columns are the
    * schema. */
  def open(path: String, conf: Configuration): Snapshot = open(path, conf, ReadAt.Latest, mergeSchema = false)
  def open(path: String, conf: Configuration, at: ReadAt): Snapshot = open(path, conf, at, mergeSchema = false)

  def open(path: String, conf: Configuration, at: ReadAt, mergeSchema: Boolean): Snapshot =
    open(path, conf, at, mergeSchema, LoosePartitioning())

  /** As [[open]]; loose files in `k=v` directories get partition columns typed by `partitioning`. */
  def open(
      path: String,
      conf: Configuration,
      at: ReadAt,
      mergeSchema: Boolean,
      partitioning: LoosePartitioning
  ): Snapshot = {
    val dataset = new FermionDataset(new Path(path), conf)
    val manifest = at match {
      case ReadAt.Latest => dataset.latest()
      case ReadAt.Version(v) => Some(dataset.manifest(v))
      case ReadAt.Timestamp(ms) => Some(dataset.versionAsOfTime(ms))
      case ReadAt.Tag(t) => Some(dataset.manifest(dataset.tagVersion(t)))
    }
    manifest match {
      case Some(m) => ofManifest(dataset, m)
      case None => looseFiles(path, conf, mergeSchema, partitioning)
    }
  }

  /** The snapshot of one manifest of `dataset`. */
  def ofManifest(dataset: FermionDataset, m: Manifest): Snapshot = {
    // One listing of data/ gives every file's length (manifests do not record them).
    val fs = dataset.fs
    val listed =
      try fs.listStatus(new Path(dataset.root, DatasetLayout.DataDir)).iterator.map(s => s.getPath.getName -> s).toMap
      catch { case _: FileNotFoundException => Map.empty[String, FileStatus] }
    val files = m.fragments.flatMap { f =>
      // The first file leads (splits, statistics); the others add columns to the same rows.
      f.files.take(1).map { d =>
        val p = dataset.resolvePath(d.path)
        val status = listed.getOrElse(
          p.getName,
          try fs.getFileStatus(p)
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
          status.getLen,
          f.id,
          f.deletion,
          f.rowIds,
          f.files.drop(1).map(c => dataset.resolvePath(c.path).toString),
          status.getModificationTime,
          f.physicalRows,
          f.partition,
          f.files.map(_.fieldIds),
          columnFilesLength = f.files.drop(1).iterator
            .map(c => listed.get(dataset.resolvePath(c.path).getName).map(_.getLen).getOrElse(0L)).sum
        )
      }
    }
    Snapshot(dataset.name, Some(m.schema), Some(m), files, m.partitionFields)
  }

  private def looseFiles(
      path: String,
      conf: Configuration,
      mergeSchema: Boolean,
      partitioning: LoosePartitioning
  ): Snapshot = {
    val listed = LooseFiles.listPartitioned(new Path(path), conf)
    val (partitionFields, values) = HivePartitions.resolve(path, listed, partitioning)
    val files = listed.zipWithIndex.map { case (l, i) =>
      val s = l.status
      SnapshotFile(
        s.getPath.toString,
        s.getLen,
        i.toLong,
        modificationTime = s.getModificationTime,
        partition = values(i)
      )
    }
    def schemaOf(f: SnapshotFile): FermionSchema = {
      val r = FermionFileReader.open(new Path(f.path), conf, ReaderOptions())
      try r.schema
      finally r.close()
    }
    val dataSchema =
      if (files.isEmpty) None
      // Other files may lack a column of the first one: every column may read null.
      else if (!mergeSchema) Some(FermionSchema(schemaOf(files.head).fields.map(_.copy(nullable = true))))
      else Some(merge(path, files.map(f => f.path -> schemaOf(f))))
    // As Spark's file sources: a partition column the files also hold keeps its place and takes the
    // partition's type; the others follow the data columns.
    val schema = dataSchema.map { d =>
      val replaced = d.fields.map(f => partitionFields.find(_.name.equalsIgnoreCase(f.name)).getOrElse(f))
      FermionSchema(replaced ++ partitionFields.filterNot(p => d.indexOf(p.name).nonEmpty))
    }
    Snapshot(path, schema, None, files, partitionFields)
  }

  /** The union of the files' columns, in order of first appearance; nullable where any file lacks
    * the column or holds it nullable. */
  private def merge(root: String, schemas: IndexedSeq[(String, FermionSchema)]): FermionSchema = {
    val out = scala.collection.mutable.LinkedHashMap.empty[String, (String, FermionField)]
    schemas.foreach { case (file, s) =>
      s.fields.foreach { f =>
        val key = f.name.toLowerCase(Locale.ROOT)
        out.get(key) match {
          case None => out(key) = file -> f
          case Some((other, g)) =>
            if (!LooseFiles.sameType(f, g))
              throw new InvalidFermionDatasetException(
                root,
                file,
                s"column `${f.name}` has another type here than in $other; schemas cannot be merged"
              )
            out(key) = other -> g.copy(nullable = g.nullable || f.nullable)
        }
      }
    }
    val everywhere = schemas.map(_._2.fields.map(_.name.toLowerCase(Locale.ROOT)).toSet)
    FermionSchema(out.toIndexedSeq.zipWithIndex.map { case ((key, (_, f)), i) =>
      val inAll = everywhere.forall(_.contains(key))
      f.copy(nullable = f.nullable || !inAll)
    })
  }
}

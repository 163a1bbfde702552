package io.fermion.core.dataset

import java.io.{FileNotFoundException, IOException}
import java.nio.charset.StandardCharsets
import java.util.UUID

import io.fermion.core.expr.{ConstantFilter, FilterExpr, FilterValue}
import io.fermion.core.schema.{FermionField, FermionSchema, TypeWidening}
import io.fermion.core.storage.{FileSystems, FileWrites, HadoopInputFile}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.roaringbitmap.RoaringBitmap

/** A Fermion dataset: versions of a table, each a manifest listing fragments of Fermion files
  * (docs/table-format.md). Readers open a version; writers write their data files first and then
  * [[commit]] an [[Operation]], which publishes the next manifest atomically and, on a lost race,
  * retries over the winners when their transactions allow it. */
final class FermionDataset(val root: Path, val conf: Configuration) {
  val fs: FileSystem = FileSystems.forPath(root, conf)
  val name: String = root.toString

  /** A whole metadata file in one read (on object stores: one HEAD for the length, one GET). */
  private def readAll(p: Path): Array[Byte] = {
    val status = fs.getFileStatus(p)
    val len = status.getLen
    if (len > Int.MaxValue - 16)
      throw new InvalidFermionDatasetException(name, p.getName, s"metadata file of $len bytes")
    val in =
      if (FileWrites.isFileSystem(fs)) fs.open(p)
      else org.apache.hadoop.util.functional.FutureIO.awaitFuture(
        fs.openFile(p).withFileStatus(status).opt(HadoopInputFile.ReadPolicyOption, "whole-file").build()
      )
    try { val b = new Array[Byte](len.toInt); in.readFully(0, b); b }
    finally in.close()
  }

  private def writeNew(p: Path, bytes: Array[Byte]): Unit = FileWrites.writeNew(fs, p, bytes)

  /** How commits publish on this dataset's storage (chosen on first use: reads never need it). */
  private[core] lazy val commitStore: CommitStore = CommitStores.forDataset(root, fs, conf)

  /** Fails with [[FermionCommitStoreException]] unless this dataset's storage can commit
    * atomically as configured: checked before a job writes anything. */
  def checkCommitStore(): Unit = commitStore

  /** The external manifest store, when one coordinates this dataset's commits. */
  private lazy val external: Option[ExternalCommitStore] =
    if (CommitStores.kindOf(root, conf) == CommitStores.External) Some(commitStore.asInstanceOf[ExternalCommitStore])
    else None

  /** Committed version numbers, ascending (one listing of `_versions/`). */
  def versionNumbers(): IndexedSeq[Long] = {
    val dir = DatasetLayout.versions(root)
    val listed =
      try fs.listStatus(dir).iterator.flatMap(s => DatasetLayout.versionOf(s.getPath.getName)).toIndexedSeq
      catch { case _: FileNotFoundException => IndexedSeq.empty }
    // With an external store, the latest version may not be copied to its final name yet.
    (listed ++ external.flatMap(_.latestVersion())).distinct.sorted
  }

  def exists: Boolean = latestVersion().nonEmpty

  /** The latest version: from the external store when there is one; else by one listing of
    * `_versions/` (local file system, HDFS) or, on object stores where a listing is a costly and
    * not always consistent request, from the `_versions/_latest` hint checked by probing the
    * names after it (docs/table-format.md 4.1). `fermion.latestVersion` overrides the choice. */
  def latestVersion(): Option[Long] = external match {
    case Some(e) => e.latestVersion()
    case None => if (VersionHint.useHint(fs, conf)) latestByHint() else versionNumbers().lastOption
  }

  /** Whether version `v` has a manifest: on S3A by opening it (one HEAD request; a status probe
    * would add a LIST on a miss), elsewhere by its status (some streams open lazily). */
  private def hasManifest(v: Long): Boolean = {
    val p = DatasetLayout.manifest(root, v)
    try { if (fs.getUri.getScheme == "s3a") fs.open(p).close() else fs.getFileStatus(p); true }
    catch { case _: FileNotFoundException => false }
  }

  private def latestByHint(): Option[Long] =
    VersionHint.read(fs, root) match {
      case Some(h) if hasManifest(h) => Some(VersionHint.probeUp(h, hasManifest))
      case _ => versionNumbers().lastOption // no hint, or it names a removed version: list once
    }

  /** Records `version` as the latest in the hint (not with an external store, which knows). */
  private def writeHint(version: Long): Unit = if (external.isEmpty) VersionHint.write(fs, root, version)

  def manifest(version: Long): Manifest = {
    val p = DatasetLayout.manifest(root, version)
    val bytes =
      try readAll(p)
      catch {
        case _: FileNotFoundException => external.flatMap(_.recoverManifest(version)).getOrElse(
            throw new FermionVersionNotFoundException(
              name,
              s"version $version does not exist (versions: ${describe(versionNumbers())})"
            )
          )
      }
    val m = DecodedManifests(p.toString, bytes)(
      ManifestCodec.decode(bytes, name, s"${DatasetLayout.VersionsDir}/${p.getName}")
    )
    if (m.version != version) throw new InvalidFermionDatasetException(name, p.getName, s"holds version ${m.version}")
    m
  }

  /** The manifest of the latest version. By hint: the hinted version's manifest is read without
    * checking first that it exists (it is read anyway); a missing one falls back to a listing. */
  def latest(): Option[Manifest] =
    if (external.isEmpty && VersionHint.useHint(fs, conf)) VersionHint.read(fs, root) match {
      case Some(h) =>
        val v = VersionHint.probeUp(h, hasManifest)
        try Some(manifest(v))
        catch { case _: FermionVersionNotFoundException => versionNumbers().lastOption.map(manifest) }
      case None => versionNumbers().lastOption.map(manifest)
    }
    else latestVersion().map(manifest)

  private def describe(vs: Seq[Long]): String =
    if (vs.isEmpty) "none" else if (vs.size == 1) vs.head.toString else s"${vs.head} to ${vs.last}"

  /** The newest version committed at or before `timestampMillis`. */
  def versionAsOfTime(timestampMillis: Long): Manifest = {
    val vs = versionNumbers()
    // Timestamps grow with versions (each commit takes max(now, previous + 1)): binary search.
    var lo = 0; var hi = vs.size - 1; var found: Option[Manifest] = None
    while (lo <= hi) {
      val mid = (lo + hi) >>> 1
      val m = manifest(vs(mid))
      if (m.timestampMillis <= timestampMillis) { found = Some(m); lo = mid + 1 }
      else hi = mid - 1
    }
    found.getOrElse(throw new FermionVersionNotFoundException(
      name,
      s"no version was committed at or before ${java.time.Instant.ofEpochMilli(timestampMillis)}" +
        vs.headOption.map(v => s" (the first, $v, at ${java.time.Instant.ofEpochMilli(manifest(v).timestampMillis)})")
          .getOrElse("")
    ))
  }

  /** The version `tag` names. */
  def tagVersion(tag: String): Long = {
    val all = tags
    all.getOrElse(
      tag,
      throw new FermionVersionNotFoundException(name, s"no tag '$tag' (tags: ${all.keys.toSeq.sorted.mkString(", ")})")
    )
  }

  /** Schema changes that rewrite no data (add nullable columns, drop, rename, widen types), committed together. */
  def updateSchema(): SchemaUpdate = new SchemaUpdate(this)

  // ---- tags ----

  def tags: Map[String, Long] = {
    val dir = DatasetLayout.tags(root)
    try fs.listStatus(dir).iterator.filter(s => s.isFile && !s.getPath.getName.startsWith(".")).map { s =>
        s.getPath.getName -> new String(readAll(s.getPath), StandardCharsets.UTF_8).trim.toLong
      }.toMap
    catch { case _: FileNotFoundException => Map.empty }
  }

  def createTag(tag: String, version: Long): Unit = {
    require(
      tag.matches("[A-Za-z0-9._-]+") && !tag.startsWith("."),
      s"tag '$tag' must be letters, digits, '.', '_' or '-'"
    )
    manifest(version) // must exist
    val p = new Path(DatasetLayout.tags(root), tag)
    val staging = new Path(DatasetLayout.tags(root), s".tmp-${UUID.randomUUID()}")
    if (!commitStore.createIfAbsent(p, version.toString.getBytes(StandardCharsets.UTF_8), staging))
      throw new IllegalArgumentException(s"tag '$tag' already exists (version ${tags.getOrElse(tag, "?")})")
  }

  def deleteTag(tag: String): Unit =
    if (!commitStore.delete(root, new Path(DatasetLayout.tags(root), tag)))
      throw new FermionVersionNotFoundException(name, s"no tag '$tag'")

  // ---- files ----

  /** A fresh data file path (relative path, absolute path). */
  def newDataFile(): (String, Path) = {
    val rel = s"${DatasetLayout.DataDir}/${UUID.randomUUID()}.fermion"
    (rel, new Path(root, rel))
  }

  def resolvePath(relative: String): Path = new Path(root, relative)

  private[core] def writeDeletionFile(fragmentId: Long, readVersion: Long, rows: RoaringBitmap): DeletionFile = {
    val kind = DeletionFiles.kindFor(rows)
    val rel =
      s"${DatasetLayout.DeletionsDir}/$fragmentId-$readVersion-${java.lang.Long.toUnsignedString(new java.util.Random().nextLong())}.${DeletionFiles.extension(kind)}"
    writeNew(new Path(root, rel), DeletionFiles.encode(rows, kind))
    DeletionFile(rel, kind, rows.getLongCardinality)
  }

  private[core] def readDeletionFile(d: DeletionFile): RoaringBitmap =
    DeletionFiles.decode(readAll(new Path(root, d.path)), d.kind, name, d.path, d.deletedRows)

  /** The ids of a fragment's `physicalRows` rows, as a sequence whatever their kind (a row id file
    * is read). */
  private[core] def rowIdSequence(ids: RowIds, physicalRows: Long): RowIdSequence = ids match {
    case RowIds.Start(first) =>
      RowIdSequence(if (physicalRows == 0) IndexedSeq.empty else IndexedSeq(RowIdSegment.Run(first, physicalRows)))
    case RowIds.Listed(sequence) => sequence
    case RowIds.External(path, count) =>
      val r = new MetadataReader(readAll(new Path(root, path)), RowIds.FileMagic, name, path)
      val major = r.u16("major version")
      r.u16("minor version")
      r.check(major == 1, s"row id file major version $major is not supported (this reader reads 1)")
      val sequence = RowIdSequence.read(r, count, "row id file")
      r.done()
      sequence
  }

  /** `fragments` with listed row ids too large for the manifest moved to new row id files (6.5);
    * the paths written are returned for removal should the commit fail. */
  private[core] def storeRowIds(fragments: IndexedSeq[Fragment]): (IndexedSeq[Fragment], Seq[String]) = {
    val written = scala.collection.mutable.ArrayBuffer.empty[String]
    try {
      val stored = fragments.map { f =>
        f.rowIds match {
          case Some(RowIds.Listed(sequence)) if sequence.encodedBytes > RowIds.InlineLimitBytes =>
            val rel = s"${DatasetLayout.RowIdsDir}/${UUID.randomUUID()}${RowIds.FileSuffix}"
            val w = new MetadataWriter(RowIds.FileMagic).u16(1).u16(0)
            RowIdSequence.write(w, sequence)
            writeNew(new Path(root, rel), w.finish())
            written += rel
            f.copy(rowIds = Some(RowIds.External(rel, sequence.length)))
          case _ => f
        }
      }
      (stored, written.toSeq)
    } catch { case t: Throwable => removeFiles(written.toSeq); throw t }
  }

  private[core] def removeFiles(relativePaths: Seq[String]): Unit =
    relativePaths.foreach(p => fs.delete(resolvePath(p), false))

  // ---- commits ----

  /** Commits `op` as the version after `readVersion` (0: the dataset did not exist), retrying over
    * versions committed meanwhile while their transactions are compatible. Returns the new manifest. */
  def commit(
      readVersion: Long,
      op: Operation,
      config: Map[String, String] = Map.empty,
      maxAttempts: Int = 50
  ): Manifest = {
    if (op.isInstanceOf[Operation.Create] && readVersion != 0)
      throw new IllegalArgumentException(s"a create commits over version 0, not $readVersion")
    val uuid = UUID.randomUUID().toString
    val txnName = s"$readVersion-$uuid.txn"
    val store = commitStore
    if (FileWrites.isFileSystem(fs)) { // object stores have no directories to make
      fs.mkdirs(DatasetLayout.transactions(root))
      fs.mkdirs(DatasetLayout.versions(root))
    }
    writeNew(
      new Path(DatasetLayout.transactions(root), txnName),
      TransactionCodec.encode(Transaction(readVersion, uuid, op))
    )
    val readSchema = if (readVersion > 0) Some(manifest(readVersion).schema) else None
    var checked = readVersion
    var attempt = 0
    while (attempt < maxAttempts) {
      attempt += 1
      val latestNow = latestVersion().getOrElse(0L)
      if (latestNow < readVersion) throw new FermionVersionNotFoundException(
        name,
        s"read version $readVersion is newer than the latest, $latestNow"
      )
      var v = checked + 1
      while (v <= latestNow) { checkCompatible(readVersion, op, v, readSchema, config); v += 1 }
      checked = latestNow
      val base = if (latestNow == 0) FermionDataset.emptyManifest else manifest(latestNow)
      if ((base.writerFeatures & ~Manifest.KnownWriterFeatures) != 0)
        throw new InvalidFermionDatasetException(
          name,
          DatasetLayout.manifestName(base.version),
          f"version ${base.version} needs writer features 0x${base.writerFeatures & ~Manifest.KnownWriterFeatures}%x this version of Fermion does not know; upgrade it to write"
        )
      val next = FermionDataset.nextManifest(base, op, txnName, config)
      val tmp = new Path(DatasetLayout.versions(root), s".tmp-$uuid-$attempt")
      if (store.publishManifest(root, next.version, ManifestCodec.encode(next), tmp) || publishedByThisCommit(next)) {
        writeHint(next.version)
        return next
      }
      Thread.sleep(
        math.min(200L, 2L << math.min(attempt, 6)) + scala.util.Random.nextInt(10)
      ) // lost the race: back off a little
    }
    throw new FermionCommitConflictException(
      name,
      readVersion,
      checked,
      s"and later: gave up after $maxAttempts attempts under contention"
    )
  }

  /** What version `version` changed relative to the version before it (see [[VersionChange]]). */
  def change(version: Long): VersionChange =
    VersionChange.of(if (version <= 1) FermionDataset.emptyManifest else manifest(version - 1), manifest(version))

  /** Commits `op` over the latest version as step `step` of application `appId` (a streaming
    * query and its micro-batch), unless the dataset records that step or a later one of the
    * application as committed: then nothing is committed and None is returned. The step is
    * recorded in the new version, so a step replayed after a crash lands once; a run of the same
    * application committing the step meanwhile makes this commit a conflict. `config` as in
    * [[commit]]. */
  def commitStep(
      op: Operation,
      appId: String,
      step: Long,
      config: Map[String, String] = Map.empty
  ): Option[Manifest] = {
    require(appId.nonEmpty && step >= 0, s"application '$appId', step $step")
    val latestV = latestVersion().getOrElse(0L)
    if (latestV > 0 && FermionDataset.appVersion(manifest(latestV), appId).exists(_ >= step)) None
    else Some(commit(latestV, op, config + (FermionDataset.AppVersionPrefix + appId -> step.toString)))
  }

  // ---- partition overwrites ----

  /** Replaces the partitions of version `readVersion` that `predicate` selects with `fragments`
    * (written for the dataset's partition spec): static `INSERT OVERWRITE ... PARTITION (k = v)` and
    * `replaceWhere`. `predicate` names partition columns only (by name, as in `schema`) and must be
    * exact on partition values; every written fragment must satisfy it (rows outside it fail the
    * write, as Delta's replaceWhere does). One `replace_partitions` is committed (6.7, 11.3). */
  def replacePartitions(
      readVersion: Long,
      schema: FermionSchema,
      predicate: FilterExpr,
      fragments: IndexedSeq[Fragment],
      description: String
  ): Manifest = {
    val base = manifest(readVersion)
    if (!base.isPartitioned)
      throw new IllegalArgumentException(
        s"$name is not partitioned: replacing rows by a predicate (replaceWhere, INSERT OVERWRITE ... PARTITION) " +
          "needs partition columns; overwrite the whole dataset instead"
      )
    val fields = base.partitionFields
    val others = FilterExpr.columns(predicate).filterNot(c => fields.exists(_.name.equalsIgnoreCase(c)))
    if (others.nonEmpty)
      throw new IllegalArgumentException(
        s"the predicate `$description` of an overwrite of $name names ${others.map(c => s"`$c`").mkString(", ")}, " +
          s"which ${if (others.size == 1) "is not a partition column" else "are not partition columns"} " +
          s"(${fields.map(_.name).mkString(", ")}): only whole partitions can be replaced"
      )
    val ids = Partitioning.toIds(predicate, base.schema).filter(ConstantFilter.isExact(_, _ => true)).getOrElse(
      throw new IllegalArgumentException(
        s"the predicate `$description` of an overwrite of $name cannot be decided exactly on partition values"
      )
    )
    def holds(values: IndexedSeq[Option[FilterValue]]): Option[Boolean] =
      ConstantFilter.isTrue(ids, Partitioning.byId(base.partitionSpec, values))
    fragments.find(f => !holds(f.partition).contains(true)).foreach { f =>
      throw new IllegalArgumentException(
        s"written rows with ${fields.zip(f.partition).map { case (fd, v) => Partitioning.show(fd, v) }.mkString(", ")} " +
          s"do not satisfy the overwrite's predicate `$description`; nothing was written to $name"
      )
    }
    val removed = base.fragments.filter { f =>
      holds(f.partition).getOrElse(
        throw new IllegalArgumentException(
          s"the predicate `$description` cannot be decided on the partition values of fragment ${f.id} of $name"
        )
      )
    }.map(_.id).toSet
    commit(
      readVersion,
      Operation.ReplacePartitions(schema, base.partitionSpec, ids, removed, fragments, description)
    )
  }

  /** Dynamic partition overwrite: the partitions `fragments` hold are replaced by them, the others
    * stay. None when nothing was written (no partition is replaced, nothing committed). */
  def replaceWrittenPartitions(
      readVersion: Long,
      schema: FermionSchema,
      fragments: IndexedSeq[Fragment]
  ): Option[Manifest] = {
    if (fragments.isEmpty) return None
    val base = manifest(readVersion)
    val tuples = fragments.map(_.partition).distinct
    val ids = Partitioning.anyOf(base.partitionSpec, tuples)
    val fields = base.partitionFields
    val shown = tuples.take(3).map(t => fields.zip(t).map { case (f, v) => Partitioning.show(f, v) }.mkString("/"))
    val description =
      s"dynamic overwrite of ${tuples.size} partition${if (tuples.size == 1) "" else "s"}: " +
        shown.mkString(", ") + (if (tuples.size > 3) ", ..." else "")
    Some(replacePartitions(readVersion, schema, Partitioning.toNames(ids, base.schema), fragments, description))
  }

  // ---- row deletes, restore ----

  /** Deletes rows of version `readVersion`: `rows` holds, per fragment id, the offsets of the rows
    * to delete within the fragment (rows that version deletes already may be among them). Each
    * touched fragment gets a new deletion file (the union with its existing one), a fragment left
    * without rows is removed, and one `delete` is committed over `readVersion` (concurrent deletes
    * of the same fragments conflict, 11.3). Returns the number of rows newly deleted and the new
    * version, None when no row was deleted (nothing is committed then). */
  def deleteRows(readVersion: Long, rows: Map[Long, RoaringBitmap], description: String): (Long, Option[Manifest]) =
    withDeletions(readVersion, rows, description) { (deleted, delete) =>
      if (deleted == 0) None else Some(commit(readVersion, delete))
    }

  /** Changes rows of version `readVersion` (UPDATE, MERGE): the rows `rows` names are deleted as
    * [[deleteRows]] deletes them and `fragments` (data files already written with `schema`, for the
    * dataset's partition spec `partitionSpec`, holding the new versions of those rows and any
    * inserted ones) are added, in one `update` commit. Returns the number of rows deleted and the
    * new version, None when nothing changed (no row deleted, no fragment given). */
  def updateRows(
      readVersion: Long,
      rows: Map[Long, RoaringBitmap],
      schema: FermionSchema,
      partitionSpec: IndexedSeq[Int],
      fragments: IndexedSeq[Fragment],
      description: String
  ): (Long, Option[Manifest]) =
    withDeletions(readVersion, rows, description) { (deleted, delete) =>
      if (deleted == 0 && fragments.isEmpty) None
      else {
        val (stored, rowIdFiles) = storeRowIds(fragments)
        try Some(commit(readVersion, Operation.Update(delete, Operation.Append(schema, stored, partitionSpec))))
        catch { case t: Throwable => removeFiles(rowIdFiles); throw t }
      }
    }

  /** The `delete` of `rows` from version `readVersion` (new deletion files written), given to
    * `commitWith` with the number of rows it newly deletes; the deletion files are removed again
    * if that fails. */
  private def withDeletions(readVersion: Long, rows: Map[Long, RoaringBitmap], description: String)(
      commitWith: (Long, Operation.Delete) => Option[Manifest]
  ): (Long, Option[Manifest]) = {
    val base = manifest(readVersion)
    val byId = base.fragments.map(f => f.id -> f).toMap
    rows.keys.find(id => !byId.contains(id)).foreach { id =>
      throw new IllegalArgumentException(
        s"rows to delete name fragment $id, which version $readVersion of $name does not have"
      )
    }
    var deleted = 0L
    val updated = IndexedSeq.newBuilder[Fragment]
    val removed = Set.newBuilder[Long]
    val written = scala.collection.mutable.ArrayBuffer.empty[String]
    try {
      base.fragments.filter(f => rows.get(f.id).exists(!_.isEmpty)).foreach { f =>
        val hits = rows(f.id).clone()
        if (hits.last().toLong + 1 > f.physicalRows || hits.first() < 0)
          throw new IllegalArgumentException(
            s"row offsets to delete go past the ${f.physicalRows} rows of fragment ${f.id}"
          )
        val all = f.deletion.map(readDeletionFile).getOrElse(new RoaringBitmap())
        val before = all.getLongCardinality
        all.or(hits)
        val newly = all.getLongCardinality - before
        if (newly > 0) {
          deleted += newly
          if (all.getLongCardinality >= f.physicalRows) removed += f.id
          else {
            val d = writeDeletionFile(f.id, readVersion, all)
            written += d.path
            updated += f.copy(deletion = Some(d))
          }
        }
      }
      (deleted, commitWith(deleted, Operation.Delete(updated.result(), removed.result(), description)))
    } catch {
      case t: Throwable =>
        removeFiles(written.toSeq)
        throw t
    }
  }

  /** Deletes every row of version `readVersion` (DELETE without a condition, TRUNCATE TABLE): one
    * `delete` removing all its fragments; rows appended meanwhile by others stay. None when the
    * version has no fragment. */
  def deleteAll(readVersion: Long, description: String): Option[Manifest] = {
    val base = manifest(readVersion)
    if (base.fragments.isEmpty) None
    else Some(commit(readVersion, Operation.Delete(IndexedSeq.empty, base.fragments.map(_.id).toSet, description)))
  }

  /** Makes `version` the current state again: commits a `restore` over the latest version with that
    * version's schema and fragments (their files must still exist: cleanup may have removed them).
    * Versions after it stay readable by time travel. Returns the new manifest. */
  def restore(version: Long): Manifest = {
    val latestV = latestVersion().getOrElse(
      throw new FermionVersionNotFoundException(name, "the path holds no Fermion dataset")
    )
    val old = manifest(version)
    val present = Seq(DatasetLayout.DataDir, DatasetLayout.DeletionsDir, DatasetLayout.RowIdsDir).flatMap { dir =>
      try fs.listStatus(new Path(root, dir)).toSeq.map(s => s"$dir/${s.getPath.getName}")
      catch { case _: FileNotFoundException => Nil }
    }.toSet
    old.fragments.iterator.flatMap(_.referencedFiles)
      .find(p => !present.contains(p) && !fs.exists(resolvePath(p)))
      .foreach { p =>
        throw new FermionVersionNotFoundException(
          name,
          s"version $version cannot be restored: its file $p no longer exists (removed by cleanup)"
        )
      }
    val rowIds = old.config.getOrElse(FermionDataset.StableRowIdsConfig, "false")
    commit(
      latestV,
      Operation.Restore(version, old.schema, old.fragments, old.partitionSpec),
      Map(FermionDataset.StableRowIdsConfig -> rowIds)
    )
  }

  /** Whether the manifest now at `next.version` is this commit's own: a publication that failed
    * ambiguously (a store's retry after a lost response meets the object its first attempt
    * created) must not be taken for a lost race, or the commit would be applied twice. The
    * transaction file name is unique to this commit. */
  private def publishedByThisCommit(next: Manifest): Boolean =
    try manifest(next.version).transactionFile == next.transactionFile
    catch { case _: FermionVersionNotFoundException => false }

  // ---- cleanup ----

  /** Removes versions committed before `cutoffMillis` (never the latest, never a tagged one), then
    * every file under `data/`, `_deletions/` and `_transactions/` that no remaining version
    * references and that is older than the cutoff (so files of writes still in flight survive).
    * Time travel to a removed version then fails with FermionVersionNotFoundException. With
    * `dryRun` nothing is deleted: the result lists what would be. */
  def cleanup(cutoffMillis: Long, dryRun: Boolean = false): CleanupResult = {
    checkCommitStore()
    val all = versionNumbers()
    if (all.isEmpty) return CleanupResult(0, 0, 0)
    val tagged = tags.values.toSet
    val latestV = all.last
    writeHint(latestV) // before any version goes: probing from the hint never crosses a removed one
    val manifests = all.map(v => v -> manifest(v)).toMap
    val (gone, kept) =
      all.partition(v => v != latestV && !tagged.contains(v) && manifests(v).timestampMillis < cutoffMillis)
    if (!dryRun) gone.foreach(v => fs.delete(DatasetLayout.manifest(root, v), false))
    val referenced = kept.flatMap { v =>
      val m = manifests(v)
      m.fragments.flatMap(_.referencedFiles) :+ s"${DatasetLayout.TransactionsDir}/${m.transactionFile}"
    }.map(p => new Path(root, p).toUri.getPath).toSet
    var files = 0
    var bytes = 0L
    val paths = IndexedSeq.newBuilder[String]
    for (
      dir <- Seq(
        DatasetLayout.DataDir,
        DatasetLayout.ConvertedDataDir,
        DatasetLayout.DeletionsDir,
        DatasetLayout.RowIdsDir,
        DatasetLayout.TransactionsDir
      )
    ) {
      val statuses =
        try fs.listStatus(new Path(root, dir)).toSeq
        catch { case _: FileNotFoundException => Nil }
      statuses.filter(s =>
        s.isFile && s.getModificationTime < cutoffMillis && !referenced.contains(s.getPath.toUri.getPath)
      ).foreach { s =>
        if (dryRun || fs.delete(s.getPath, false)) {
          files += 1; bytes += s.getLen; paths += s"$dir/${s.getPath.getName}"
        }
      }
    }
    // Leftovers of publish attempts that crashed between writing and linking.
    if (!dryRun)
      try fs.listStatus(DatasetLayout.versions(root)).filter(s =>
          s.getPath.getName.startsWith(".tmp-") && s.getModificationTime < cutoffMillis
        )
          .foreach(s => fs.delete(s.getPath, false))
      catch { case _: FileNotFoundException => }
    CleanupResult(gone.size, files, bytes, gone, paths.result())
  }

  /** [[cleanup]] of what is older than `retainHours`. Files younger than the retention may belong
    * to a write still in flight, and removing them would break its commit: like Delta's VACUUM, a
    * retention under [[FermionDataset.MinSafeRetentionHours]] must be asked for explicitly. */
  def cleanupOlderThan(retainHours: Double, allowShortRetention: Boolean, dryRun: Boolean = false): CleanupResult = {
    require(retainHours >= 0, s"retainHours must not be negative, got $retainHours")
    if (retainHours < FermionDataset.MinSafeRetentionHours && !allowShortRetention)
      throw new IllegalArgumentException(
        s"retainHours $retainHours is below ${FermionDataset.MinSafeRetentionHours}: files of writes still running " +
          "could be removed; pass allowShortRetention (Python: allow_short_retention=True) only when no other writer is active"
      )
    cleanup(System.currentTimeMillis() - (retainHours * 3600 * 1000).toLong, dryRun)
  }

  /** Whether `op` may still be applied after `version` committed. */
  private def checkCompatible(
      readVersion: Long,
      op: Operation,
      version: Long,
      readSchema: Option[FermionSchema],
      config: Map[String, String]
  ): Unit = {
    val m = manifest(version)
    def conflict(reason: String) = throw new FermionCommitConflictException(name, readVersion, version, reason)
    // An application's step committed meanwhile (by another run of it) is not committed twice.
    for ((key, step) <- config if key.startsWith(FermionDataset.AppVersionPrefix)) {
      val app = key.stripPrefix(FermionDataset.AppVersionPrefix)
      FermionDataset.appVersion(m, app).filter(_ >= step.toLong).foreach { done =>
        conflict(s"committed step $done of application $app")
      }
    }
    if (m.transactionFile.isEmpty) conflict("has no transaction file")
    val p = new Path(DatasetLayout.transactions(root), m.transactionFile)
    val txn =
      try TransactionCodec.decode(readAll(p), name, m.transactionFile)
      catch { case _: FileNotFoundException => conflict(s"lost its transaction file ${m.transactionFile}") }
    val other =
      txn.getOrElse(conflict(s"has a transaction this version of Fermion does not know (${m.operation})")).operation
    Operation.parts(other).iterator.flatMap(op.conflictsWith).nextOption().foreach(conflict)
    // Two writers creating the dataset at once: the loser's data must fit the winner's schema.
    (op, readSchema) match {
      case (a: Operation.Append, None) if !FermionDataset.sameShape(a.schema, m.schema) =>
        conflict("created the dataset with another schema")
      case (a: Operation.Append, None) if a.partitionSpec != m.partitionSpec =>
        conflict("created the dataset with another partitioning")
      case _ =>
    }
  }
}

object FermionDataset {
  private[core] val emptyManifest: Manifest =
    Manifest(0, 0, 0, 0, FermionSchema(IndexedSeq.empty), IndexedSeq.empty, 0, 0, "", "")

  /** Manifest config key: the dataset assigns stable row ids (set when it is created). */
  val StableRowIdsConfig = "fermion.stableRowIds"

  /** Manifest config keys `fermion.write.<option>`: write options given when the dataset was
    * created (or overwritten); later writes use them unless they set the option themselves. */
  val WriteOptionPrefix = "fermion.write."

  /** The write options a dataset keeps (keys without the prefix). */
  def storedWriteOptions(m: Manifest): Map[String, String] =
    m.config.collect { case (k, v) if k.startsWith(WriteOptionPrefix) => k.stripPrefix(WriteOptionPrefix) -> v }

  /** Below this many hours, [[FermionDataset.cleanup]] by retention needs explicit consent. */
  val MinSafeRetentionHours = 1.0

  /** Manifest config keys `fermion.app.<appId>`: the last step an application (a streaming query)
    * committed, set by every commit that carries it (table-format 10.3). */
  val AppVersionPrefix = "fermion.app."

  /** The last step application `appId` committed in version `m`, if any. */
  def appVersion(m: Manifest, appId: String): Option[Long] =
    m.config.get(AppVersionPrefix + appId).flatMap(_.toLongOption)

  private[core] def nextManifest(
      base: Manifest,
      op: Operation,
      txnName: String,
      config: Map[String, String]
  ): Manifest = {
    // Settings are chosen by whoever creates (overwrites, restores) the dataset, never by a later writer.
    val chosen = if (base.version == 0 || op.isInstanceOf[Operation.Replacing]) config else Map.empty[String, String]
    // ... except an application's progress, which every commit of it records.
    val progress = config.filter(_._1.startsWith(AppVersionPrefix))
    val mergedConfig = base.config ++ chosen ++ progress
    val rowIds = mergedConfig.get(StableRowIdsConfig).contains("true")
    op match {
      case c: Operation.Compact if rowIds && c.fragments.exists(_.rowIds.isEmpty) =>
        throw new IllegalArgumentException(
          "a compaction of a dataset with stable row ids must carry the ids of the rows it rewrites"
        )
      case _ =>
    }
    val applied0 = op.apply(base)
    // Stable row ids: new fragments without ids (new rows) take the next ids in row order; ids are
    // never reused. Fragments that carry ids (updated or compacted rows) keep them.
    var nextRowId = base.nextRowId
    val applied = if (!rowIds) applied0
    else applied0.copy(fragments = applied0.fragments.map { f =>
      if (f.rowIds.nonEmpty) f
      else { val start = nextRowId; nextRowId += f.physicalRows; f.copy(rowIds = Some(RowIds.Start(start))) }
    })
    val listedIds = applied.fragments.exists(_.rowIds.exists(!_.isInstanceOf[RowIds.Start]))
    val fragmentIds = applied.fragments.map(_.id)
    val deletions = applied.fragments.exists(_.deletion.nonEmpty)
    val rowIdFlag = (if (rowIds) Manifest.FeatureStableRowIds else 0L) |
      (if (listedIds) Manifest.FeatureRowIdSequences else 0L)
    val partitionFlag = if (applied.partitionSpec.nonEmpty) Manifest.FeaturePartitions else 0L
    // Type widening stays once set: files of the older type may be in this version or come back
    // (restore). Replacing operations start field ids afresh: their ids say nothing about the base's.
    // An append's files may also hold a type older than the dataset's (written as the data had it).
    val widens = !op.isInstanceOf[Operation.Replacing] && base.version > 0 &&
      (base.schema +: Operation.writtenSchema(op).toSeq).exists(TypeWidening.widened(_, applied.schema))
    val widenFlag =
      if ((base.readerFeatures & Manifest.FeatureTypeWidening) != 0 || widens)
        Manifest.FeatureTypeWidening
      else 0L
    if (applied.partitionSpec.nonEmpty) checkPartitioned(applied)
    applied.copy(
      version = base.version + 1,
      timestampMillis = math.max(System.currentTimeMillis(), base.timestampMillis + 1),
      readerFeatures = (if (deletions) Manifest.FeatureDeletionFiles else 0L) | rowIdFlag | partitionFlag | widenFlag,
      writerFeatures = (if (deletions) Manifest.FeatureDeletionFiles else 0L) | rowIdFlag | partitionFlag | widenFlag,
      maxFragmentId = (base.maxFragmentId +: fragmentIds).max,
      nextRowId = nextRowId,
      transactionFile = txnName,
      operation = op.name,
      tag = "",
      config = mergedConfig.updated(
        Manifest.LastFieldIdConfig,
        math.max(base.lastFieldId, SchemaIds.maxId(applied.schema)).toString
      )
    )
  }

  /** A partitioned version must be self-consistent: its spec names supported top-level columns and
    * every fragment carries one value per partition column. */
  private def checkPartitioned(m: Manifest): Unit = {
    val fields =
      try m.partitionFields
      catch { case e: IllegalStateException => throw new IllegalArgumentException(e.getMessage, e) }
    fields.find(f => !Partitioning.supportedType(f.dataType)).foreach { f =>
      throw new IllegalArgumentException(s"partition column `${f.name}` has unsupported type ${f.dataType}")
    }
    m.fragments.find(_.partition.size != m.partitionSpec.size).foreach { f =>
      throw new IllegalArgumentException(
        s"fragment ${f.id} has ${f.partition.size} partition values; the dataset has ${m.partitionSpec.size} partition columns"
      )
    }
  }

  /** Same names, types and field ids at every level (nullability may differ). */
  private[core] def sameShape(a: FermionSchema, b: FermionSchema): Boolean = {
    def same(x: FermionField, y: FermionField): Boolean =
      x.name == y.name && x.fieldId == y.fieldId && x.dataType == y.dataType &&
        x.children.size == y.children.size && x.children.zip(y.children).forall { case (p, q) => same(p, q) }
    a.fields.size == b.fields.size && a.fields.zip(b.fields).forall { case (x, y) => same(x, y) }
  }
}

/** What [[FermionDataset.cleanup]] removed (or, in a dry run, would remove): counts, the versions
  * and the files (relative to the dataset root). */
final case class CleanupResult(
    versionsRemoved: Int,
    filesRemoved: Int,
    bytesRemoved: Long,
    versions: IndexedSeq[Long] = IndexedSeq.empty,
    files: IndexedSeq[String] = IndexedSeq.empty
)

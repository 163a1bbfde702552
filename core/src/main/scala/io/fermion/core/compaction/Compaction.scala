package io.fermion.core.compaction

import io.fermion.core.dataset._
import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import io.fermion.core.scan.{ReadAt, Snapshot, SnapshotFile}
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import io.fermion.core.memory.FermionAllocators
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Rewrites small fragments and fragments with deleted rows into fragments of about `targetRows`
  * rows, dropping deleted rows and the data of dropped columns. A plan is made on one JVM, its
  * groups are rewritten anywhere (each [[CompactionGroup]] is serialisable and independent: an
  * engine runs them as parallel tasks), and the results are committed as one version
  * ([[Operation.Compact]]) over the version read; readers of older versions are unaffected.
  * {{{
  * val plan = Compaction.plan(dataset, targetRows = 1000000)
  * plan.foreach(p => Compaction.commit(dataset, p, p.groups.map(g => Compaction.rewrite(p, g, conf))))
  * }}}
  */
object Compaction {

  /** What to rewrite, or None when nothing needs compacting (no deleted rows, and merging would
    * not make fewer fragments). */
  def plan(
      dataset: FermionDataset,
      targetRows: Long,
      writerOptions: WriterOptions = WriterOptions()
  ): Option[CompactionPlan] = {
    require(targetRows >= 1, s"targetRows must be positive, got $targetRows")
    val base =
      dataset.latest().getOrElse(throw new FermionDatasetNotFoundException(dataset.name, "no dataset to compact"))
    val small = base.fragments.filter(f => f.deletion.nonEmpty || f.rowCount < targetRows)
    // A partitioned dataset's fragments merge only within their partition (6.7): partitions with
    // a single small fragment and no deleted rows have nothing to gain.
    val candidates =
      if (!base.isPartitioned) small
      else {
        val perPartition = small.groupBy(_.partition)
        small.filter(f => perPartition(f.partition).size > 1 || f.deletion.nonEmpty)
      }
    val rows = candidates.map(_.rowCount).sum
    val outputs = math.max(1L, (rows + targetRows - 1) / targetRows).toInt
    if (candidates.isEmpty || (candidates.forall(_.deletion.isEmpty) && outputs >= candidates.size)) return None
    val snapshot = Snapshot.ofManifest(dataset, base).withFragments(candidates.map(_.id).toSet)
    // Batch-mode files are rewritten only with each other, as batch files again.
    val batched = snapshot.files.map { f =>
      val r = FermionFileReader.open(new Path(f.path), dataset.fs.getConf, ReaderOptions())
      try f.fragmentId -> r.batchIndex.nonEmpty
      finally r.close()
    }.toMap
    // Fragments in order, cut into groups of about rows / outputs rows each.
    val perGroup = math.max(1L, (rows + outputs - 1) / outputs)
    val groups = scala.collection.mutable.ArrayBuffer.empty[CompactionGroup]
    val partitions = snapshot.files.map(_.partition).distinct
    for (partition <- partitions; kind <- Seq(false, true)) {
      var current = IndexedSeq.empty[SnapshotFile]
      var currentRows = 0L
      snapshot.files.filter(f => batched(f.fragmentId) == kind && f.partition == partition).foreach { f =>
        current :+= f
        currentRows += candidates.find(_.id == f.fragmentId).map(_.rowCount).getOrElse(0L)
        if (currentRows >= perGroup) {
          groups += CompactionGroup(current, kind, partition); current = IndexedSeq.empty; currentRows = 0L
        }
      }
      if (current.nonEmpty) groups += CompactionGroup(current, kind, partition)
    }
    Some(CompactionPlan(
      dataset.name,
      base.version,
      base.schema,
      candidates.map(_.id).toSet,
      rows,
      groups.toIndexedSeq,
      writerOptions
    ))
  }

  /** Reads the group's rows (deleted rows dropped, every column of the version, columns a
    * fragment lacks as nulls) and writes them as one new data file; returns its fragment. In a
    * dataset with stable row ids the fragment carries the rows' ids (runs where they are
    * consecutive), so every row keeps its `_rowid`. */
  def rewrite(plan: CompactionPlan, group: CompactionGroup, conf: Configuration): Fragment = {
    val dataset = new FermionDataset(new Path(plan.root), conf)
    val manifest = dataset.manifest(plan.readVersion)
    val snapshot = Snapshot.ofManifest(dataset, manifest).copy(files = group.files)
    val (relative, file) = dataset.newDataFile()
    // Partition columns stay in the manifest: the new file holds the data columns.
    val fileSchema = Partitioning.dataSchema(plan.schema, manifest.partitionSpec)
    val allocator = FermionAllocators.newRoot()
    try {
      val writer =
        if (group.batches) FermionFileWriter.createBatched(file, conf, fileSchema, plan.writerOptions)
        else FermionFileWriter.create(file, conf, fileSchema, plan.writerOptions)
      try {
        val builder = snapshot.scanBuilder().options(ReaderOptions())
        if (group.batches) builder.withBatchColumns()
        val keepIds = manifest.hasStableRowIds
        if (keepIds) builder.withRowId()
        val rowIdColumn = plan.schema.fields.size + (if (group.batches) 2 else 0)
        val rowIds = Array.newBuilder[Long]
        val batches = builder.build().batches(conf, allocator)
        val columns =
          plan.schema.fields.indices.filterNot(i => manifest.partitionSpec.contains(plan.schema.fields(i).fieldId))
        try batches.foreach { b =>
            if (keepIds) {
              val ids = b.vector(rowIdColumn).asInstanceOf[org.apache.arrow.vector.BigIntVector]
              var r = 0
              while (r < b.numRows) { rowIds += ids.get(r); r += 1 }
            }
            val vectors = columns.map(b.vector)
            if (!group.batches) writer.write(vectors, b.numRows)
            else {
              // Rows of one batch are consecutive (and never span two scan batches: one stripe).
              val ids = b.vector(plan.schema.fields.size).asInstanceOf[org.apache.arrow.vector.BigIntVector]
              var from = 0
              while (from < b.numRows) {
                var until = from + 1
                while (until < b.numRows && ids.get(until) == ids.get(from)) until += 1
                writer.startBatch(ids.get(from))
                writer.write(vectors, from, until - from)
                writer.endBatch()
                from = until
              }
            }
          }
        finally batches.close()
        writer.close()
        Fragment(
          0,
          writer.rowsWritten,
          IndexedSeq(DataFile(relative, fileSchema.fields.map(_.fieldId), writer.columnBytes)),
          None,
          rowIds = if (keepIds) Some(RowIds.of(rowIds.result())) else None,
          partition = group.partition
        )
      } catch {
        case t: Throwable =>
          try writer.close()
          finally dataset.fs.delete(file, false)
          throw t
      }
    } finally allocator.close()
  }

  /** Commits the rewritten fragments over the version the plan read; on failure (a conflicting
    * commit) the new files are removed and the typed conflict is thrown. */
  def commit(dataset: FermionDataset, plan: CompactionPlan, written: Seq[Fragment]): Manifest = {
    val nonEmpty = written.filter(_.physicalRows > 0)
    written.filter(_.physicalRows == 0).foreach(f =>
      dataset.removeFiles(f.files.map(_.path))
    )
    var rowIdFiles = Seq.empty[String]
    try {
      val (stored, files) = dataset.storeRowIds(nonEmpty.toIndexedSeq)
      rowIdFiles = files
      dataset.commit(plan.readVersion, Operation.Compact(plan.fragments, stored))
    } catch {
      case t: Throwable =>
        dataset.removeFiles(nonEmpty.flatMap(_.files.map(_.path)) ++ rowIdFiles)
        throw t
    }
  }
}

/** Fragments rewritten together into one file (a batch-mode file when `batches`), all of one
  * partition (its values; empty in unpartitioned datasets). */
final case class CompactionGroup(
    files: IndexedSeq[SnapshotFile],
    batches: Boolean = false,
    partition: IndexedSeq[Option[io.fermion.core.expr.FilterValue]] = IndexedSeq.empty
)

/** A compaction of `fragments` (holding `rows` live rows) of version `readVersion`. */
final case class CompactionPlan(
    root: String,
    readVersion: Long,
    schema: io.fermion.core.schema.FermionSchema,
    fragments: Set[Long],
    rows: Long,
    groups: IndexedSeq[CompactionGroup],
    writerOptions: WriterOptions
)

package io.fermion.core.scan

import java.util.Locale

import io.fermion.core.dataset.{FermionDataset, InvalidFermionDatasetException, RowIdSequence}
import io.fermion.core.read.{FermionFileReader, ProjectedNode}
import io.fermion.core.schema.{FermionField, FermionType, TypeWidening, UnsupportedColumnTypeException}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.FieldVector
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap

/** The open files of one fragment and where a [[ReadPlan]]'s columns are in them: the rules every
  * read of a fragment follows. Columns are found by field id (loose files: by name), so renamed
  * columns keep their data and dropped ones are never read; files that added columns to the
  * fragment must share the leading file's stripes; the fragment's deletion file is loaded, and its
  * row ids when the plan reads `_rowid`. */
final private[scan] class FragmentFiles private (
    val file: SnapshotFile,
    plan: ReadPlan,
    /** The leading file first, then files that added columns (same stripes). */
    val sources: IndexedSeq[FermionFileReader],
    val deleted: Option[RoaringBitmap],
    /** The stable id of each row (None: no row ids, or the plan does not read them). */
    val rowIds: Option[RowIdSequence]
) extends AutoCloseable {
  val reader: FermionFileReader = sources.head

  sources.tail.foreach { r =>
    val same = r.numStripes == reader.numStripes &&
      (0 until r.numStripes).forall(s => r.stripes.rowCount(s) == reader.stripes.rowCount(s))
    if (!same) throw new InvalidFermionDatasetException(
      plan.root,
      r.path,
      s"column file of fragment ${file.fragmentId} does not share the stripes of ${file.path}"
    )
  }

  /** Row offset of each stripe's first row within the fragment; one more entry for the end. */
  val stripeFirstRow: Array[Long] =
    (0 until reader.numStripes).scanLeft(0L)((acc, s) => acc + reader.stripes.rowCount(s)).toArray

  def rows: Long = stripeFirstRow(reader.numStripes)

  /** The stripe holding fragment row `row`. */
  def stripeOf(row: Long): Int = {
    val i = java.util.Arrays.binarySearch(stripeFirstRow, row)
    if (i >= 0) i else -i - 2
  }

  /** The file (index into [[sources]]) and column holding a column, by field id or name. By field
    * id: where the manifest places it when the file's column there has that id, nowhere when the
    * manifest places it in no file (a column added without data); no whole schema is read for
    * either. Else (no lists, or a column without that id there) found in the files' schemas. */
  def column(fieldId: Int, name: String): Option[(Int, Int)] =
    if (plan.byFieldId) file.position(fieldId) match {
      case Some(None) => None
      case Some(Some((k, c))) if sources(k).field(c).fieldId == fieldId => Some((k, c))
      case _ =>
        sources.indices.iterator.map(k => k -> sources(k).schema.fields.indexWhere(_.fieldId == fieldId)).find(
          _._2 >= 0
        )
    }
    else reader.schema.indexOf(name).map(0 -> _)

  /** A filter column's file and column (its field id comes from the plan). */
  def filterColumn(name: String): Option[(Int, Int)] =
    if (plan.byFieldId) plan.filterFieldIds.get(name.toLowerCase(Locale.ROOT)).flatMap(id => column(id, name))
    else column(-1, name)

  /** A filter column's file and column when its statistics can decide the filter: the file stores
    * the column in the plan's type, or in a narrower one whose statistics compare the same
    * ([[TypeWidening.sameStatsDomain]]; else the filter cannot skip data of this file by it). */
  def statsColumn(name: String): Option[(Int, Int)] =
    filterColumn(name).filter { case (k, c) =>
      plan.filterTypes.get(name.toLowerCase(Locale.ROOT))
        .forall(TypeWidening.sameStatsDomain(sources(k).field(c).dataType, _))
    }

  /** A decoded filter column in the plan's type (widened from the file's, a new vector the caller
    * closes, when the file stores an older type) and that type. */
  def filterValues(
      name: String,
      k: Int,
      c: Int,
      v: FieldVector,
      allocator: BufferAllocator
  ): (FermionType, FieldVector) = {
    val stored = sources(k).field(c)
    widenedFilterType(name, k, c) match {
      case Some(t) if !TypeWidening.allowed(stored.dataType, t) =>
        throw new InvalidFermionDatasetException(
          plan.root,
          sources(k).path,
          s"column `$name` does not match the table's type $t: the file stores it as ${stored.dataType}"
        )
      // A copy: the decoded vector may still be returned as a column (and widened there).
      case Some(t) => t -> WidenedVectors.flatCopy(v, stored.dataType, t, allocator)
      case None => stored.dataType -> v
    }
  }

  /** The type the filter compares column `c` of source `k` (named `name` in the filter) as, when
    * it is not the type the file stores (the column was widened since). */
  def widenedFilterType(name: String, k: Int, c: Int): Option[FermionType] =
    plan.filterTypes.get(name.toLowerCase(Locale.ROOT)).filter(_ != sources(k).field(c).dataType)

  /** Where each stored column of the plan is: (output index, source file, column index, projection). */
  val present: IndexedSeq[(Int, Int, Int, ProjectedNode)] = plan.columns.zipWithIndex.flatMap {
    case (c: PlannedColumn.Stored, out) =>
      column(c.fieldId, c.name).map { case (src, i) =>
        val stored = sources(src).field(i)
        try (out, src, i, ProjectedNode.prune(stored, c.request.copy(name = stored.name), widening = plan.byFieldId))
        catch {
          case e: UnsupportedColumnTypeException =>
            throw new InvalidFermionDatasetException(
              plan.root,
              sources(src).path,
              s"column `${c.name}` does not match the table's type ${c.request.dataType}: ${e.getMessage}",
              e
            )
        }
      }
    case _ => None
  }

  /** The plan's tree of each column of [[present]] (by position) that its file stores with older,
    * narrower types: what is decoded there is widened to it. */
  private val widenedTo: Map[Int, FermionField] = present.indices.flatMap { p =>
    val (out, _, _, node) = present(p)
    plan.columns(out) match {
      case c: PlannedColumn.Stored if TypeWidening.differs(node.field, c.request) => Some(p -> c.request)
      case _ => None
    }
  }.toMap

  /** Column `p` of [[present]] as decoded from its file (`v`, which this takes over) in the
    * plan's types. */
  def widened(p: Int, v: FieldVector, allocator: BufferAllocator): FieldVector =
    widenedTo.get(p).map(w => WidenedVectors.widen(v, present(p)._4.field, w, allocator)).getOrElse(v)

  def isDeleted(row: Long): Boolean = deleted.exists(_.contains(row.toInt))

  /** Decoded structure streams of each file, kept for later takes while these files stay open. */
  lazy val structures: IndexedSeq[StructureCache] =
    sources.map(_ => new StructureCache(FragmentFiles.StructureCacheBytes))

  override def close(): Unit = sources.foreach(_.close())
}

private[scan] object FragmentFiles {

  /** The columns of each file of the fragment that `plan` reads or filters on, by the manifest. */
  private def columnsRead(file: SnapshotFile, plan: ReadPlan): Map[Int, Seq[Int]] =
    plan.fieldIds.toSeq.flatMap(id => file.position(id).flatten).groupMap(_._1)(_._2)

  /** Bytes of decoded VALIDITY and OFFSETS chunks, and first blocks of primed pages, a fragment file
    * keeps for takes. */
  val StructureCacheBytes: Long = 16L << 20

  /** Opens the fragment's files (and reads its deletion file and, for `_rowid`, its row ids);
    * closes them again if that fails. */
  def open(file: SnapshotFile, plan: ReadPlan, conf: Configuration): FragmentFiles = {
    lazy val dataset = new FermionDataset(new Path(plan.root), conf)
    val deleted = file.deletion.map(dataset.readDeletionFile)
    val opened = scala.collection.mutable.ArrayBuffer.empty[FermionFileReader]
    try {
      // The data file's length comes from the listing that planned the scan (no status request).
      val paths = file.path +: file.columnFiles
      // Where the manifest places every field the plan reads, each file is opened for its share
      // of them (none: its stripes only); else (loose files) whole, to find columns by name.
      val placed = plan.byFieldId && plan.fieldIds.forall(id => file.position(id).isDefined)
      val wanted = if (placed) columnsRead(file, plan) else Map.empty[Int, Seq[Int]]
      paths.indices.foreach { k =>
        val path = new Path(paths(k))
        val length = if (k == 0) file.length else -1L
        opened +=
          (if (placed) FermionFileReader.openColumns(path, conf, plan.options, length, wanted.getOrElse(k, Nil))
           else if (length >= 0) FermionFileReader.open(path, conf, plan.options, length)
           else FermionFileReader.open(path, conf, plan.options))
      }
      val rowIds =
        if (!plan.columns.contains(PlannedColumn.RowId)) None
        else file.rowIds.map(ids => dataset.rowIdSequence(ids, opened.head.numRows))
      new FragmentFiles(file, plan, opened.toIndexedSeq, deleted, rowIds)
    } catch { case t: Throwable => opened.foreach(_.close()); throw t }
  }
}

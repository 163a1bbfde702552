package io.fermion.core.soak

import java.io.FileNotFoundException

import scala.collection.mutable

import io.fermion.core.dataset._
import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import io.fermion.core.schema.{FermionField, FermionSchema, FermionType}
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.BigIntVector
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap

/** The soak tests' dataset: `id` (field 0, unique per row), `v` (field 1) and columns added later
  * (`c<k>`, field k), all int64; every stored value is [[SoakData.value]] of its row id and field
  * id, so any row read back proves itself, and a misplaced, stale or torn value is a mismatch. */
object SoakData {
  val conf = new Configuration()

  def value(id: Long, field: Int): Long = {
    var h = id * 0x9e3779b97f4a7c15L + field * 0xbf58476d1ce4e5b9L
    h ^= h >>> 31; h *= 0x94d049bb133111ebL; h ^ (h >>> 29)
  }

  val baseSchema: FermionSchema = FermionSchema(IndexedSeq(
    FermionField("id", 0, FermionType.Int64, nullable = false),
    FermionField("v", 1, FermionType.Int64, nullable = true)
  ))

  /** A file's rows: their ids and, per field id, the value or null (None). */
  final case class Rows(ids: IndexedSeq[Long], fields: Map[Int, IndexedSeq[Option[Long]]])

  /** Writes `rows` of `schema` (int64 fields) to a new file (create-if-absent, synced on close). */
  def writeFile(
      path: Path,
      schema: FermionSchema,
      ids: IndexedSeq[Long],
      valueOf: (Long, Int) => Option[Long],
      allocator: BufferAllocator,
      options: WriterOptions,
      stripeRows: Option[IndexedSeq[Int]] = None
  ): Unit = {
    val w = stripeRows match {
      case Some(layout) => FermionFileWriter.createAligned(path, conf, schema, options, layout)
      case None => FermionFileWriter.create(path, conf, schema, options)
    }
    val vectors = schema.fields.map { f =>
      val v = new BigIntVector(f.name, allocator)
      v.allocateNew(ids.size)
      ids.indices.foreach { i =>
        val x = if (f.fieldId == 0) Some(ids(i)) else valueOf(ids(i), f.fieldId)
        x match { case Some(l) => v.set(i, l); case None => v.setNull(i) }
      }
      v.setValueCount(ids.size)
      v
    }
    try { w.write(vectors, ids.size); w.close() }
    finally vectors.foreach(_.close())
  }

  /** Every row of one data file: ids (if it has field 0) and each field by id. */
  def readFile(path: Path, allocator: BufferAllocator): (FermionFileReader, Rows) = {
    val r = FermionFileReader.open(path, conf, ReaderOptions())
    try {
      val cols = r.schema.fields.indices
      val out = cols.map(_ => IndexedSeq.newBuilder[Option[Long]])
      (0 until r.numStripes).foreach { s =>
        val vs = r.readStripe(s, cols, allocator)
        try vs.zip(out).foreach { case (v, b) =>
            val bv = v.asInstanceOf[BigIntVector]
            (0 until bv.getValueCount).foreach(i => b += (if (bv.isNull(i)) None else Some(bv.get(i))))
          }
        finally vs.foreach(_.close())
      }
      val byField = r.schema.fields.map(_.fieldId).zip(out.map(_.result())).toMap
      (r, Rows(byField.get(0).map(_.map(_.get)).getOrElse(IndexedSeq.empty), byField))
    } catch { case t: Throwable => r.close(); throw t }
  }

  /** The live rows of a version: id -> (field id -> value or null), read fragment by fragment,
    * each fragment's files side by side (columns from the first file holding their field id), its
    * deletion file's rows dropped. Every inconsistency is an exception naming the version. */
  def readVersion(ds: FermionDataset, m: Manifest, allocator: BufferAllocator): Map[Long, Map[Int, Option[Long]]] = {
    val out = mutable.HashMap.empty[Long, Map[Int, Option[Long]]]
    val fieldIds = m.schema.fields.map(_.fieldId)
    m.fragments.foreach { f =>
      val files = f.files.map { d =>
        val (r, rows) = readFile(ds.resolvePath(d.path), allocator)
        try (r.stripes, r.numRows, rows)
        finally r.close()
      }
      val (firstStripes, firstRows, first) = files.head
      if (firstRows != f.physicalRows)
        throw new IllegalStateException(
          s"version ${m.version} fragment ${f.id}: file has $firstRows rows, manifest ${f.physicalRows}"
        )
      files.drop(1).foreach { case (st, n, _) =>
        if (
          n != firstRows || (0 until st.numStripes).map(st.rowCount) != (0 until firstStripes.numStripes).map(
            firstStripes.rowCount
          )
        )
          throw new IllegalStateException(s"version ${m.version} fragment ${f.id}: column file not aligned")
      }
      val deleted = f.deletion.map(ds.readDeletionFile).getOrElse(new RoaringBitmap())
      (0 until firstRows.toInt).foreach { i =>
        if (!deleted.contains(i)) {
          val id = first.ids(i)
          val values = fieldIds.map { fid =>
            fid -> files.collectFirst { case (_, _, rows) if rows.fields.contains(fid) => rows.fields(fid)(i) }.flatten
          }.toMap
          if (out.contains(id)) throw new IllegalStateException(s"version ${m.version}: row id $id twice")
          out(id) = values
        }
      }
    }
    if (out.size != m.rowCount)
      throw new IllegalStateException(s"version ${m.version}: ${out.size} live rows, manifest says ${m.rowCount}")
    out.toMap
  }

  /** Checks that every stored value is the one its row and field define; returns the row ids and
    * their non-null field ids (what the model predicts). */
  def shapeOf(version: Long, rows: Map[Long, Map[Int, Option[Long]]]): Map[Long, Set[Int]] =
    rows.map { case (id, fs) =>
      fs.foreach {
        case (0, v) => if (!v.contains(id)) throw new IllegalStateException(s"version $version: id column of $id is $v")
        case (fid, Some(x)) if x != value(id, fid) =>
          throw new IllegalStateException(s"version $version: row $id field $fid holds $x, not ${value(id, fid)}")
        case _ =>
      }
      id -> fs.collect { case (fid, Some(_)) => fid }.toSet
    }

  /** An order-independent digest of a version's content shape. */
  def digest(shape: Map[Long, Set[Int]]): Long =
    shape.iterator.map { case (id, fs) => value(id, fs.toSeq.sorted.hashCode) }.foldLeft(0L)(_ + _)

  def newAllocator(): BufferAllocator = new RootAllocator(Long.MaxValue)

  /** The manifest of a version, or None when it no longer exists (removed by cleanup). */
  def manifestIfExists(ds: FermionDataset, v: Long): Option[Manifest] =
    try Some(ds.manifest(v))
    catch { case _: FermionVersionNotFoundException | _: FileNotFoundException => None }

  /** The soak operation id a version's transaction carries (in file names or its text). */
  def opIdOf(ds: FermionDataset, m: Manifest): Option[Long] = {
    val p = new Path(new Path(ds.root, DatasetLayout.TransactionsDir), m.transactionFile)
    val in = ds.fs.open(p)
    val bytes =
      try { val b = new Array[Byte](ds.fs.getFileStatus(p).getLen.toInt); in.readFully(0, b); b }
      finally in.close()
    val op = TransactionCodec.decode(bytes, ds.name, m.transactionFile).map(_.operation)
    val OpFile = """.*op(\d+)-\d+\.fermion""".r
    val OpText = """op=(\d+).*""".r
    def fromFiles(fs: Seq[Fragment]) = fs.flatMap(_.files).collectFirst { case DataFile(OpFile(id), _, _) => id.toLong }
    op.flatMap {
      case Operation.Append(_, fs, _) => fromFiles(fs)
      case Operation.Compact(_, fs) => fromFiles(fs)
      case Operation.Delete(_, _, OpText(id)) => Some(id.toLong)
      case Operation.AddColumnFiles(_, _, OpText(id)) => Some(id.toLong)
      case _ => None
    }
  }
}

package io.fermion.core.soak

import java.io.{File, FileOutputStream}
import java.nio.charset.StandardCharsets

import scala.util.Random

import io.fermion.core.codec.PageCodec
import io.fermion.core.dataset._
import io.fermion.core.schema.{FermionField, FermionSchema, FermionType}
import io.fermion.core.write.WriterOptions
import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap

/** An append-only log, each line synced before `append` returns: what a worker is about to commit
  * survives a kill that comes right after. */
final class SoakJournal(file: File) {
  private val out = new FileOutputStream(file, true)
  def append(line: String): Unit = synchronized {
    out.write((line + "\n").getBytes(StandardCharsets.UTF_8))
    out.getFD.sync()
  }
  def close(): Unit = out.close()
}

object SoakJournal {

  /** Sorted ids as ranges `a-b` (b exclusive), comma-separated. */
  def ranges(ids: Iterable[Long]): String = {
    val sorted = ids.toArray.sorted
    val out = new StringBuilder
    var i = 0
    while (i < sorted.length) {
      var j = i + 1
      while (j < sorted.length && sorted(j) == sorted(j - 1) + 1) j += 1
      if (out.nonEmpty) out += ','
      out ++= s"${sorted(i)}-${sorted(j - 1) + 1}"
      i = j
    }
    if (out.isEmpty) "-" else out.toString
  }

  def parseRanges(s: String): Iterator[Long] =
    if (s == "-") Iterator.empty
    else s.split(",").iterator.flatMap { r =>
      val Array(a, b) = r.split("-"); (a.toLong until b.toLong).iterator
    }
}

/** A soak worker process: runs random dataset operations through the core API (append, delete,
  * compact, add a column, cleanup, read) until its deadline or until it is killed. Before each
  * commit it logs the operation's effect (row ids added or deleted, column added to which rows) to
  * its journal, synced; after the commit, `OK <op> <version>` or `FAIL <op> <exception class>`. On
  * stdout it announces each phase (`P <op> <kind> <phase>`), so the supervisor knows what a kill
  * interrupted.
  *
  * Arguments: `<dataset> <journal> <seed> <deadline epoch ms, 0 = none> <cleanup cutoff epoch ms,
  * -1 = never clean up> <weights: append,delete,compact,addcol,cleanup,read>` */
object SoakWorker {
  def main(args: Array[String]): Unit = {
    val Array(dir, journalPath, seed, deadline, cutoff, weights) = args
    val w = weights.split(",").map(_.toInt)
    val worker = new SoakWorker(
      new FermionDataset(new Path(dir), SoakData.conf),
      new SoakJournal(new File(journalPath)),
      new Random(seed.toLong),
      cutoff.toLong,
      Seq("append", "delete", "compact", "addcol", "cleanup", "read").zip(w)
    )
    println("R ready"); System.out.flush()
    val end = deadline.toLong
    while (end == 0 || System.currentTimeMillis() < end) worker.runOne()
    println("E done"); System.out.flush()
    sys.exit(0)
  }
}

final class SoakWorker(
    ds: FermionDataset,
    journal: SoakJournal,
    rnd: Random,
    cutoff: Long,
    weights: Seq[(String, Int)]
) {
  private val allocator = SoakData.newAllocator()
  private val prefix = (rnd.nextLong() >>> 34) max 1L
  private var counter = 0L

  private def phase(op: Long, kind: String, what: String): Unit = { println(s"P $op $kind $what"); System.out.flush() }

  private def pick(): String = {
    val total = weights.map(_._2).sum
    var x = rnd.nextInt(total)
    weights.find { case (_, wt) => x -= wt; x < 0 }.get._1
  }

  def runOne(): Unit = {
    val op = rnd.nextLong() & Long.MaxValue
    val base = ds.latest().getOrElse(throw new IllegalStateException("the supervisor creates the dataset"))
    pick() match {
      case "append" => append(op, base)
      case "delete" => delete(op, base)
      case "compact" => compact(op, base)
      case "addcol" => if (base.lastFieldId >= 24) append(op, base) else addColumn(op, base)
      case "cleanup" =>
        if (cutoff >= 0) {
          phase(op, "cleanup", "start")
          ds.cleanup(cutoff)
          phase(op, "cleanup", "done")
        }
      case _ => read(op)
    }
  }

  private def options(): WriterOptions = WriterOptions(
    stripeMaxRows = 16 + rnd.nextInt(300),
    pageRows = 64,
    compression = if (rnd.nextBoolean()) PageCodec.Zstd else PageCodec.None
  )

  /** Commits and logs the outcome; a conflict is the expected failure, anything else is logged
    * with its class for the supervisor to count. */
  private def commit(op: Long, kind: String, base: Manifest, operation: Operation): Unit = {
    phase(op, kind, "commit")
    try {
      val m = ds.commit(base.version, operation)
      journal.append(s"OK $op ${m.version}")
      phase(op, kind, s"done ${m.version}")
    } catch {
      case e: FermionCommitConflictException =>
        journal.append(s"FAIL $op conflict ${e.getClass.getName}")
        phase(op, kind, "conflict")
      case e: Exception =>
        journal.append(s"FAIL $op error ${e.getClass.getName} ${e.getMessage.replace('\n', ' ')}")
        phase(op, kind, "error")
    }
  }

  def append(op: Long, base: Manifest): Unit = {
    val n = 1 + rnd.nextInt(300)
    val ids = (counter until counter + n).map(c => (prefix << 32) | c)
    counter += n
    val path = s"${DatasetLayout.DataDir}/op$op-0.fermion"
    phase(op, "append", "write")
    SoakData.writeFile(
      ds.resolvePath(path),
      base.schema,
      ids,
      (id, f) => Some(SoakData.value(id, f)),
      allocator,
      options()
    )
    val fields = base.schema.fields.map(_.fieldId)
    journal.append(s"I $op append ${fields.mkString(",")} ${SoakJournal.ranges(ids)}")
    val fragment = Fragment(0, n.toLong, IndexedSeq(DataFile(path, fields)), None)
    commit(op, "append", base, Operation.Append(base.schema, IndexedSeq(fragment)))
  }

  def delete(op: Long, base: Manifest): Unit = {
    val live = base.fragments.filter(_.rowCount > 0)
    if (live.isEmpty) return append(op, base)
    val chosen = rnd.shuffle(live).take(1 + rnd.nextInt(2))
    phase(op, "delete", "write")
    val deletedIds = scala.collection.mutable.ArrayBuffer.empty[Long]
    val updated = IndexedSeq.newBuilder[Fragment]
    val removed = Set.newBuilder[Long]
    chosen.foreach { f =>
      val (r, rows) = SoakData.readFile(ds.resolvePath(f.files.head.path), allocator)
      r.close()
      val old = f.deletion.map(ds.readDeletionFile).getOrElse(new RoaringBitmap())
      val candidates = (0 until f.physicalRows.toInt).filterNot(i => old.contains(i))
      val k = if (rnd.nextInt(8) == 0) candidates.size else 1 + rnd.nextInt(math.min(30, candidates.size))
      val picked = rnd.shuffle(candidates).take(k)
      val now = old.clone()
      picked.foreach(i => now.add(i))
      picked.foreach(i => deletedIds += rows.ids(i))
      if (now.getLongCardinality == f.physicalRows) removed += f.id
      else {
        val kind = DeletionFiles.kindFor(now)
        val path = s"${DatasetLayout.DeletionsDir}/${f.id}-${base.version}-$op.${DeletionFiles.extension(kind)}"
        val out = ds.fs.create(ds.resolvePath(path), false)
        try { out.write(DeletionFiles.encode(now, kind)); out.hsync() }
        finally out.close()
        updated += f.copy(deletion = Some(DeletionFile(path, kind, now.getLongCardinality)))
      }
    }
    journal.append(s"I $op delete ${SoakJournal.ranges(deletedIds)}")
    commit(op, "delete", base, Operation.Delete(updated.result(), removed.result(), s"op=$op"))
  }

  def compact(op: Long, base: Manifest): Unit = {
    val ranked = base.fragments.sortBy(f => (f.deletion.isEmpty, f.rowCount))
    val chosen = ranked.take(2 + rnd.nextInt(3))
    if (chosen.size < 2 && chosen.forall(_.deletion.isEmpty)) return append(op, base)
    phase(op, "compact", "write")
    val rows = SoakData.readVersion(ds, base.copy(fragments = chosen), allocator)
    val ids = rows.keys.toIndexedSeq.sorted
    val path = s"${DatasetLayout.DataDir}/op$op-0.fermion"
    val fields = base.schema.fields.map(_.fieldId)
    SoakData.writeFile(ds.resolvePath(path), base.schema, ids, (id, f) => rows(id)(f), allocator, options())
    journal.append(s"I $op compact")
    val fragment = Fragment(0, ids.size.toLong, IndexedSeq(DataFile(path, fields)), None)
    commit(op, "compact", base, Operation.Compact(chosen.map(_.id).toSet, IndexedSeq(fragment)))
  }

  def addColumn(op: Long, base: Manifest): Unit = {
    val k = base.lastFieldId + 1
    val field = FermionField(s"c$k", k, FermionType.Int64, nullable = true)
    phase(op, "addcol", "write")
    val covered = scala.collection.mutable.ArrayBuffer.empty[Long]
    val files = base.fragments.zipWithIndex.map { case (f, i) =>
      val (r, rows) = SoakData.readFile(ds.resolvePath(f.files.head.path), allocator)
      val layout =
        try (0 until r.numStripes).map(r.stripes.rowCount)
        finally r.close()
      val path = s"${DatasetLayout.DataDir}/op$op-${i + 1}.fermion"
      SoakData.writeFile(
        ds.resolvePath(path),
        FermionSchema(IndexedSeq(field)),
        rows.ids,
        (id, fid) => Some(SoakData.value(id, fid)),
        allocator,
        WriterOptions(),
        Some(layout)
      )
      covered ++= rows.ids
      f.id -> DataFile(path, IndexedSeq(k))
    }.toMap
    journal.append(s"I $op addcol $k ${SoakJournal.ranges(covered)}")
    commit(
      op,
      "addcol",
      base,
      Operation.AddColumnFiles(FermionSchema(base.schema.fields :+ field), files, s"op=$op add c$k")
    )
  }

  /** Reads the latest version whole and logs its content digest (checked afterwards against the
    * model of that version: a reader must never see a partial version). */
  def read(op: Long): Unit = {
    phase(op, "read", "start")
    val m = ds.latest().get
    val shape = SoakData.shapeOf(m.version, SoakData.readVersion(ds, m, allocator))
    journal.append(s"READ ${m.version} ${SoakData.digest(shape)} ${shape.size}")
    phase(op, "read", "done")
  }
}

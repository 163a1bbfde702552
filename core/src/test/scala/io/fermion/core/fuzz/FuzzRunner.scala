package io.fermion.core.fuzz

import java.util.concurrent.{Callable, ExecutorService, Executors, TimeUnit, TimeoutException}

import scala.collection.mutable
import scala.util.Random

import io.fermion.core.dataset._
import io.fermion.core.errors.FermionFileException
import io.fermion.core.read.FermionFileReader
import org.apache.arrow.memory.{BufferAllocator, RootAllocator}

/** How one case ended. `key` is what the summary counts ("exact", "typed InvalidFermionFileException",
  * "UNTYPED java.lang.IllegalArgumentException", ...); `bad` marks the outcomes the reader must never
  * produce. */
final case class Outcome(key: String, bad: Boolean, detail: String = "")

object Outcome {
  val Exact: Outcome = Outcome("exact", bad = false)

  /** Damage no checksum could see (checksums off, recomputed, or a file without page CRCs): the read
    * succeeded with other values, which is all a reader can do. */
  def undetectable(what: String): Outcome = Outcome("differs (damage no check can see)", bad = false, what)
  def wrong(what: String): Outcome = Outcome("WRONG RESULT without error", bad = true, what)

  def of(t: Throwable): Outcome = t match {
    case e: FermionFileException => Outcome(s"typed ${e.getClass.getSimpleName}", bad = false, e.getMessage)
    case e: FermionDatasetException => Outcome(s"typed ${e.getClass.getSimpleName}", bad = false, e.getMessage)
    case e =>
      val at = e.getStackTrace.take(6).mkString(" < ")
      Outcome(s"UNTYPED ${e.getClass.getName}", bad = true, s"$e at $at")
  }
}

/** One generated case: which input, what damage, how it is read. */
final case class FuzzCase(
    index: Long,
    target: String,
    shape: String,
    damage: String,
    fixedCrcs: Boolean,
    mode: ReadMode,
    ops: IndexedSeq[FuzzOp],
    bytes: Array[Byte],
    /** Every byte the damage touched is covered by a checksum this read verifies: a read that
      * succeeds must return exactly the original data. */
    protectedDamage: Boolean,
    /** The damage touches a page payload (read unchecked by a take of single values). */
    touchesPayloads: Boolean = false
) {
  def describe: String =
    s"case $index: $target $shape, ${if (fixedCrcs) "CRCs recomputed" else "raw"}: $damage; $mode; ops ${ops.mkString(", ")}"
}

/** Generates and runs fuzz cases, deterministically from (seed, index). Each case runs on a
  * worker thread with a time limit and reads through its own Arrow allocator with a memory limit;
  * afterwards that allocator must be back at 0 bytes, whatever happened (the leak check). */
final class FuzzRunner(seed: Long, timeoutMillis: Long = 20000, memoryLimit: Long = 256L << 20) {
  private val root: BufferAllocator = new RootAllocator(memoryLimit * 2)
  private var worker: ExecutorService = newWorker()
  private def newWorker(): ExecutorService = Executors.newSingleThreadExecutor { r =>
    val t = new Thread(r, "fermion-fuzz-case"); t.setDaemon(true); t
  }

  /** Largest Arrow allocation of any case so far, and of any case whose read was exact. */
  var peakDamaged = 0L
  var peakExact = 0L

  /** The longest any case took, in milliseconds. */
  var slowestMillis = 0L

  /** The Arrow allocation peak of the last case. */
  var lastPeak = 0L

  def random(index: Long): Random = new Random(seed * 0x9e3779b97f4a7c15L + index * 0xbf58476d1ce4e5b9L)

  def generate(index: Long): FuzzCase = {
    val rnd = random(index)
    if (rnd.nextInt(100) < 15) {
      val m = FuzzShapes.metadata(rnd.nextInt(FuzzShapes.metadata.size))
      val mut = Mutations.metadata(rnd, m.bytes)
      val fix = m.kind != "deletion-arrow" && m.kind != "deletion-roaring" && rnd.nextBoolean()
      if (fix) CrcFixer.fixMetadataFile(mut.bytes)
      val prot = !fix && (m.kind == "manifest" || m.kind == "transaction")
      FuzzCase(index, m.kind, m.name, mut.description, fix, ReadMode.default, IndexedSeq.empty, mut.bytes, prot)
    } else {
      val shape = FuzzShapes.files(rnd.nextInt(FuzzShapes.files.size))
      val mut = Mutations.file(rnd, shape.map)
      val fix = rnd.nextBoolean()
      if (fix) CrcFixer.fix(mut.bytes, shape.map)
      val mode = ReadMode.random(rnd)
      val orig = FuzzRunner.originalReader(shape)
      val ops =
        try FuzzOp.random(rnd, orig.schema, (0 until orig.numStripes).map(orig.stripes.rowCount))
        finally orig.close()
      val prot = mode.verify && !fix && (shape.map.hasPageCrc || !mut.touches(shape.map.payloads))
      FuzzCase(
        index,
        "file",
        shape.name,
        mut.description,
        fix,
        mode,
        ops,
        mut.bytes,
        prot,
        mut.touches(shape.map.payloads)
      )
    }
  }

  def run(c: FuzzCase): Outcome = {
    val task: Callable[Outcome] = () => execute(c)
    val started = System.nanoTime()
    val f = worker.submit(task)
    try {
      val o = f.get(timeoutMillis, TimeUnit.MILLISECONDS)
      slowestMillis = math.max(slowestMillis, (System.nanoTime() - started) / 1000000L)
      o
    } catch {
      case _: TimeoutException =>
        f.cancel(true)
        worker.shutdownNow()
        worker = newWorker()
        Outcome("HANG", bad = true, s"no result after $timeoutMillis ms")
      case e: java.util.concurrent.ExecutionException => Outcome.of(e.getCause)
    }
  }

  private def execute(c: FuzzCase): Outcome = c.target match {
    case "file" => executeFile(c)
    case _ => executeMetadata(c)
  }

  /** Decodes a metadata file as a reader of a version does (a deletion file checked against the
    * manifest's count of its rows, here the undamaged file's). */
  private def decodeMetadata(shape: MetaShape, bytes: Array[Byte]): Any = shape.kind match {
    case "manifest" => ManifestCodec.decode(bytes, "fuzz", "m")
    case "transaction" => TransactionCodec.decode(bytes, "fuzz", "t")
    case k =>
      val kind = if (k == "deletion-arrow") DeletionFile.ArrowArray else DeletionFile.RoaringBitmap
      val rows = DeletionFiles.decode(shape.bytes, kind, "fuzz", "original").getLongCardinality
      DeletionFiles.decode(bytes, kind, "fuzz", "d", rows).toArray.toSeq
  }

  private def executeMetadata(c: FuzzCase): Outcome = {
    val m = FuzzShapes.metadata.find(_.name == c.shape).get
    val expected = decodeMetadata(m, m.bytes)
    try {
      val actual = decodeMetadata(m, c.bytes)
      if (actual == expected) Outcome.Exact
      else if (c.protectedDamage) Outcome.wrong(s"${m.kind} decoded to other contents")
      else Outcome.undetectable(m.kind)
    } catch { case t: Throwable => Outcome.of(t) }
  }

  private def executeFile(c: FuzzCase): Outcome = {
    val shape = FuzzShapes.files.find(_.name == c.shape).get
    val expected = FuzzRunner.expected(shape, c.ops)
    val alloc = root.newChildAllocator(s"case-${c.index}", 0, memoryLimit)
    val outcome =
      try {
        val r = FermionFileReader.open(new BytesInputFile(s"fuzz-${c.index}.fermion", c.bytes), c.mode.options)
        try {
          val sameSchema = r.schema == FuzzShapes.schemaOf(shape)
          var result: Outcome = Outcome.Exact
          val it = c.ops.iterator
          while (it.hasNext && !result.bad) {
            val op = it.next()
            if (op.usesSchema && !sameSchema) {
              if (result == Outcome.Exact)
                result =
                  if (c.protectedDamage) Outcome.wrong("schema differs") else Outcome.undetectable("schema")
            } else {
              val actual = op.run(r, alloc)
              val unchecked = op match {
                case t: FuzzOp.Take => !t.wholePages && c.touchesPayloads
                case _ => false
              }
              if (actual != expected(op) && result == Outcome.Exact)
                result =
                  if (c.protectedDamage && !unchecked) Outcome.wrong(s"$op differs")
                  else Outcome.undetectable(op.toString)
            }
          }
          result
        } finally r.close()
      } catch { case t: Throwable => Outcome.of(t) }
    val leaked = alloc.getAllocatedMemory
    val peak = alloc.getPeakMemoryAllocation
    synchronized {
      lastPeak = peak
      peakDamaged = math.max(peakDamaged, peak)
      if (outcome == Outcome.Exact) peakExact = math.max(peakExact, peak)
    }
    try alloc.close()
    catch { case _: IllegalStateException => }
    if (leaked != 0 && !outcome.bad) Outcome("LEAK of Arrow memory", bad = true, s"$leaked bytes after ${outcome.key}")
    else outcome
  }

  def close(): Unit = { worker.shutdownNow(); root.close() }
}

object FuzzRunner {
  private val allocator: BufferAllocator = new RootAllocator(Long.MaxValue)

  def originalReader(shape: Shape): FermionFileReader =
    FermionFileReader.open(new BytesInputFile(s"${shape.name}.fermion", shape.bytes), ReadMode.default.options)

  private val cache = new java.util.concurrent.ConcurrentHashMap[(String, FuzzOp), Any]()

  /** What each op returns on the undamaged file. */
  def expected(shape: Shape, ops: IndexedSeq[FuzzOp]): Map[FuzzOp, Any] = {
    lazy val r = originalReader(shape)
    try ops.map { op =>
        val key = (shape.name, op)
        val v =
          Option(cache.get(key)).getOrElse { val x = op.run(r, allocator); if (cacheable(op)) cache.put(key, x); x }
        op match {
          case t: FuzzOp.Take if t.viaScan(r, allocator) != v =>
            throw new IllegalStateException(
              s"$op: the take differs from the scan's rows on the undamaged ${shape.name}"
            )
          // Ops of at most a quarter of the columns: opened through the directory when there is one.
          case c: FuzzOp.Columns
              if c.viaScan(r, allocator) != v || (r.footer.hasColumnDirectory && !c.throughDirectory(r)) =>
            throw new IllegalStateException(
              s"$op: not opened through the column directory, or other values than a whole open, on the undamaged ${shape.name}"
            )
          case _ =>
        }
        op -> v
      }.toMap
    finally if (ops.nonEmpty) r.close()
  }

  /** Ops drawn from a small set are cached; random ones (row selections, filters) are computed
    * each time, or the cache would grow with every case. */
  private def cacheable(op: FuzzOp): Boolean = op match {
    case _: FuzzOp.Filter | _: FuzzOp.Selected | _: FuzzOp.Take => false
    case _ => true
  }

  /** Counts of outcomes and the bad cases, printed as a table. */
  final class Summary {
    val counts: mutable.TreeMap[String, Long] = mutable.TreeMap.empty
    val bad: mutable.ArrayBuffer[(FuzzCase, Outcome)] = mutable.ArrayBuffer.empty
    var cases = 0L
    def add(c: FuzzCase, o: Outcome): Unit = {
      cases += 1
      counts(o.key) = counts.getOrElse(o.key, 0L) + 1
      if (o.bad) bad += ((c, o))
    }
    def badCount: Long = bad.size.toLong
    def render: String = {
      val w = (counts.keys.map(_.length) ++ Seq(10)).max
      (counts.toSeq.map { case (k, n) => s"  ${k.padTo(w, ' ')}  $n" } :+ s"  ${"total".padTo(w, ' ')}  $cases")
        .mkString("\n")
    }
  }
}

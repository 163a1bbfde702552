package io.fermion.core.fuzz

import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets

import scala.util.Random

import io.fermion.core.TestFiles
import io.fermion.core.expr.{FilterExpr, FilterValue}
import io.fermion.core.read.{FermionFileReader, FileAggregates, ProjectedNode, ReaderOptions, RowRanges}
import io.fermion.core.read.filter.StripeFilter
import io.fermion.core.scan.FileTakes
import io.fermion.core.schema.{FermionField, FermionSchema, FermionType}
import io.fermion.core.storage.InputFile
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.FieldVector

/** A file held in memory (every read bounds-checked as on a real file system). */
final class BytesInputFile(val path: String, val bytes: Array[Byte]) extends InputFile {
  val length: Long = bytes.length
  private var read = 0L
  def bytesRead: Long = read
  def readFully(offset: Long, len: Int): ByteBuffer = {
    checkRange(offset, len)
    read += len
    ByteBuffer.wrap(java.util.Arrays.copyOfRange(bytes, offset.toInt, offset.toInt + len))
  }
  override def defaultCoalesceGap: Long = 16L << 10
  override def defaultTailPrefetch: Long = 64L << 10
  def close(): Unit = ()
}

/** Reader options the fuzzer varies: checksums, tail prefetch (all, none, default), eager or lazy
  * CMB loading, coalescing. */
final case class ReadMode(verify: Boolean, tailPrefetch: Int, eager: Boolean, gap: Long) {
  def options: ReaderOptions = ReaderOptions(
    tailPrefetchBytes = tailPrefetch,
    cmbEagerLoadThreshold = if (eager) 1L << 20 else 0L,
    coalesceGapBytes = gap,
    verifyChecksums = verify,
    decodeThreads = 1
  )
  override def toString: String =
    s"verify=$verify tail=$tailPrefetch ${if (eager) "eager" else "lazy"} gap=$gap"
}

object ReadMode {
  def random(rnd: Random): ReadMode = ReadMode(
    verify = rnd.nextInt(3) != 0,
    tailPrefetch = Seq(-1, 64, 1 << 24, 300)(rnd.nextInt(4)),
    eager = rnd.nextBoolean(),
    gap = Seq(-1L, 0L, 1L << 20)(rnd.nextInt(3))
  )
  val default: ReadMode = ReadMode(verify = true, -1, eager = true, -1)
}

/** One thing a caller does with a file; `run` returns a comparable value (vectors turned into
  * normalized Scala values: NaN and -0.0 by bit pattern) and releases every Arrow buffer. */
sealed trait FuzzOp {
  def run(r: FermionFileReader, a: BufferAllocator): Any

  /** Whether the op names columns of the original schema (run only when the damaged file's schema
    * is the original's). */
  def usesSchema: Boolean = true
}

object FuzzOp {

  /** Per vector: its value count and a digest of its values (normalized: NaN and -0.0 by bit
    * pattern), computed value by value so that a huge damaged vector is never materialised. */
  private def values(vs: IndexedSeq[FieldVector], rows: Option[Array[Int]]): IndexedSeq[(Int, Int)] =
    try vs.map { v =>
        val idx = rows.getOrElse((0 until v.getValueCount).toArray)
        var h = 0x3c6ef372
        idx.foreach { i =>
          val x = v match {
            case vw: org.apache.arrow.vector.BaseVariableWidthVector =>
              if (vw.isNull(i)) 0 else scala.util.hashing.MurmurHash3.bytesHash(vw.get(i))
            case _ => TestFiles.normalize(v.getObject(i)).##
          }
          h = scala.util.hashing.MurmurHash3.mix(h, x)
        }
        (v.getValueCount, scala.util.hashing.MurmurHash3.finalizeHash(h, idx.length))
      }
    finally vs.foreach(_.close())

  /** Footer facts and every stripe's row count. */
  case object Describe extends FuzzOp {
    override def usesSchema = false
    def run(r: FermionFileReader, a: BufferAllocator): Any =
      (r.schema, r.numRows, (0 until r.numStripes).map(r.stripes.rowCount))
  }

  /** Every column of every stripe. */
  case object FullRead extends FuzzOp {
    override def usesSchema = false
    def run(r: FermionFileReader, a: BufferAllocator): Any =
      (0 until r.numStripes).map(s => values(r.readStripe(s, r.schema.fields.indices, a), None))
  }

  /** Every column's CMB, loaded and validated. */
  case object Metadata extends FuzzOp {
    def run(r: FermionFileReader, a: BufferAllocator): Any =
      r.schema.fields.indices.map(c => r.columnMetadata(c).map(m => (m.numStreams, m.byteSize)))
  }

  /** A nested column through a pruned projection (each struct keeps its last child only) or,
    * for a list or map, its lengths alone. */
  final case class Projected(column: Int, lengthsOnly: Boolean) extends FuzzOp {
    def run(r: FermionFileReader, a: BufferAllocator): Any = {
      val f = r.schema.fields(column)
      val node =
        if (lengthsOnly) ProjectedNode.full(f).withoutElements else ProjectedNode.prune(f, FuzzOp.lastChildren(f))
      (0 until r.numStripes).map(s => values(r.readStripeProjected(s, IndexedSeq(column -> node), a), None))
    }
  }

  /** Some rows of one stripe: only the DATA pages holding them are read for flat columns. */
  final case class Selected(stripe: Int, columns: IndexedSeq[Int], ranges: RowRanges) extends FuzzOp {
    def run(r: FermionFileReader, a: BufferAllocator): Any = {
      val projections = columns.map(c => c -> ProjectedNode.full(r.schema.fields(c)))
      values(r.readStripeProjected(stripe, projections, a, ranges), Some(ranges.rows))
    }
  }

  /** Rows of one stripe by random access (the single-file take), every column type included: the
    * values in row order. With `wholePages = false` the take reads single values of PLAIN and
    * packed pages stored uncompressed, whose CRC32 it cannot check (damage to a payload is then
    * not protected for this op). */
  final case class Take(stripe: Int, columns: IndexedSeq[Int], rows: IndexedSeq[Int], wholePages: Boolean)
      extends FuzzOp {
    def run(r: FermionFileReader, a: BufferAllocator): Any = {
      val projections = columns.map(c => c -> ProjectedNode.full(r.schema.fields(c)))
      values(FileTakes.take(r, stripe, rows.toArray, projections, wholePages, a), None)
    }

    /** The same rows picked from a scan of the stripe: what the take returns on an undamaged file. */
    def viaScan(r: FermionFileReader, a: BufferAllocator): Any =
      values(r.readStripe(stripe, columns, a), Some(rows.toArray)).map { case (_, h) => (rows.size, h) }
  }

  /** Some columns read after a second open of the same bytes for those columns alone, through the
    * column directory (format 1.5) when the file has many more columns; the tail read is just the
    * footer, so that the directory's entries, the nodes and the CMBs are read on their own. */
  final case class Columns(columns: IndexedSeq[Int]) extends FuzzOp {
    def run(r: FermionFileReader, a: BufferAllocator): Any = {
      val c = openColumns(r)
      try (0 until c.numStripes).map(s => values(c.readStripe(s, columns, a), None))
      finally c.close()
    }

    private def openColumns(r: FermionFileReader): FermionFileReader = {
      val in = r.input match {
        case b: BytesInputFile => new BytesInputFile(b.path, b.bytes)
        case other => throw new IllegalStateException(s"not a fuzzed file: $other")
      }
      FermionFileReader.open(in, r.options.copy(tailPrefetchBytes = 64), Some(columns))
    }

    /** The same columns read after the whole open (what the op returns on the undamaged file). */
    def viaScan(r: FermionFileReader, a: BufferAllocator): Any =
      (0 until r.numStripes).map(s => values(r.readStripe(s, columns, a), None))

    /** Whether the second open went through the column directory. */
    def throughDirectory(r: FermionFileReader): Boolean = {
      val c = openColumns(r)
      try c.openedColumns == columns.toSet
      finally c.close()
    }
  }

  /** Bloom filters of flat columns: presence, size, and the answers for fixed probe hashes. */
  final case class Blooms(columns: IndexedSeq[Int]) extends FuzzOp {
    def run(r: FermionFileReader, a: BufferAllocator): Any =
      for (c <- columns; s <- 0 until r.numStripes)
        yield r.bloomFilter(c, s).map(f => (f.numBytes, FuzzOp.probes.map(f.mightContain)))
  }

  /** A stripe filter's decisions for every stripe. */
  final case class Filter(expr: FilterExpr, text: String) extends FuzzOp {
    def run(r: FermionFileReader, a: BufferAllocator): Any = {
      val sf = new StripeFilter(r, expr)
      (0 until r.numStripes).map(s => (sf.mightMatch(s), sf.rowRanges(s)))
    }
    override def toString: String = s"Filter($text)"
  }

  /** Metadata aggregates of flat columns. */
  /** The batch index of a batch-mode file: every stripe's batch ids and lengths (None otherwise). */
  case object Batches extends FuzzOp {
    override def usesSchema = false
    def run(r: FermionFileReader, a: BufferAllocator): Any =
      r.batchIndex.map(idx =>
        (0 until r.numStripes).map { s =>
          val (ids, lens) = idx.batches(s); (ids.toSeq, lens.toSeq)
        }
      )
  }

  final case class Aggregates(columns: IndexedSeq[Int]) extends FuzzOp {
    def run(r: FermionFileReader, a: BufferAllocator): Any = columns.map { c =>
      val t = r.schema.fields(c).dataType
      (FileAggregates.nonNullCount(r, c), if (FileAggregates.exactMinMax(t)) FileAggregates.minMax(r, c) else None)
    }
  }

  val probes: IndexedSeq[Long] = { val rnd = new Random(5); IndexedSeq.fill(64)(rnd.nextLong()) }

  def lastChildren(f: FermionField): FermionField = f.dataType match {
    case FermionType.Struct if f.children.nonEmpty => f.copy(children = IndexedSeq(lastChildren(f.children.last)))
    case _ => f.copy(children = f.children.map(lastChildren))
  }

  private def flat(schema: FermionSchema): IndexedSeq[Int] =
    schema.fields.indices.filterNot(c => FermionType.isNested(schema.fields(c).dataType))

  private def literal(rnd: Random, t: FermionType): FilterValue = t match {
    case FermionType.Float32 | FermionType.Float64 =>
      FilterValue.Floating(Seq(0.0, -0.0, Double.NaN, 1.5, -1e9, 1e9, rnd.nextGaussian() * 1e6)(rnd.nextInt(7)))
    case FermionType.Utf8 | FermionType.Binary =>
      FilterValue.Bytes(Seq("", "a", "ab", "zz", "\u00fc", rnd.alphanumeric.take(3).mkString)(rnd.nextInt(6)).getBytes(
        StandardCharsets.UTF_8
      ))
    case _ => FilterValue.Integral(Seq(
        0L,
        1L,
        -1L,
        Long.MinValue,
        Long.MaxValue,
        rnd.nextInt(2000).toLong,
        rnd.nextLong()
      )(rnd.nextInt(7)))
  }

  private def predicate(rnd: Random, schema: FermionSchema, cols: IndexedSeq[Int], depth: Int): (FilterExpr, String) = {
    import FilterExpr._
    if (depth > 0 && rnd.nextInt(3) == 0) {
      val (l, lt) = predicate(rnd, schema, cols, depth - 1)
      val (r, rt) = predicate(rnd, schema, cols, depth - 1)
      rnd.nextInt(3) match {
        case 0 => (And(l, r), s"($lt AND $rt)")
        case 1 => (Or(l, r), s"($lt OR $rt)")
        case _ => (Not(l), s"NOT $lt")
      }
    } else {
      val f = schema.fields(cols(rnd.nextInt(cols.size)))
      val ops = IndexedSeq(Eq, NotEq, Lt, LtEq, Gt, GtEq)
      rnd.nextInt(6) match {
        case 0 => (IsNull(f.name), s"${f.name} IS NULL")
        case 1 => (IsNotNull(f.name), s"${f.name} IS NOT NULL")
        case 2 =>
          val vs = IndexedSeq.fill(1 + rnd.nextInt(4))(literal(rnd, f.dataType))
          (In(f.name, vs), s"${f.name} IN ${vs.size}")
        case 3 if FermionType.isVariableWidth(f.dataType) =>
          (StartsWith(f.name, Array[Byte]('a')), s"${f.name} LIKE 'a%'")
        case _ =>
          val op = ops(rnd.nextInt(ops.size))
          (Compare(f.name, op, literal(rnd, f.dataType)), s"${f.name} $op literal")
      }
    }
  }

  /** A random sequence of operations over `schema` (the original's), in random order. */
  def random(rnd: Random, schema: FermionSchema, stripeRows: IndexedSeq[Int]): IndexedSeq[FuzzOp] = {
    val flatCols = flat(schema)
    val nested = schema.fields.indices.filter(c => FermionType.isNested(schema.fields(c).dataType))
    val candidates = IndexedSeq.newBuilder[FuzzOp]
    candidates += Describe
    if (rnd.nextInt(5) != 0) candidates += FullRead
    if (rnd.nextInt(4) == 0) candidates += Metadata
    if (nested.nonEmpty && rnd.nextBoolean()) {
      val c = nested(rnd.nextInt(nested.size))
      val t = schema.fields(c).dataType
      candidates += Projected(c, lengthsOnly = (t == FermionType.List || t == FermionType.Map) && rnd.nextBoolean())
    }
    if (flatCols.nonEmpty && stripeRows.nonEmpty && rnd.nextInt(3) == 0) {
      val s = rnd.nextInt(stripeRows.size)
      val rows = stripeRows(s)
      val ranges = RowRanges.of((0 until 1 + rnd.nextInt(3)).map { _ =>
        val a = rnd.nextInt(rows); (a, math.min(rows, a + 1 + rnd.nextInt(math.max(1, rows / 4))))
      })
      candidates += Selected(s, flatCols.filter(_ => rnd.nextBoolean()) :+ flatCols(rnd.nextInt(flatCols.size)), ranges)
    }
    if (schema.fields.nonEmpty && stripeRows.nonEmpty && rnd.nextInt(3) == 0)
      candidates += randomTake(rnd, schema, stripeRows)
    if (flatCols.nonEmpty && rnd.nextInt(3) == 0) candidates += Blooms(flatCols)
    if (flatCols.nonEmpty && rnd.nextInt(3) == 0) {
      val (e, text) = predicate(rnd, schema, flatCols, 2)
      candidates += Filter(e, text)
    }
    if (flatCols.nonEmpty && rnd.nextInt(3) == 0) candidates += Aggregates(flatCols)
    if (rnd.nextInt(3) == 0) candidates += Batches
    if (schema.fields.size >= 4 && rnd.nextInt(3) == 0) {
      val all = schema.fields.indices.toIndexedSeq
      candidates += Columns(rnd.shuffle(all).take(1 + rnd.nextInt(math.min(3, all.size / 4))).sorted)
    }
    rnd.shuffle(candidates.result())
  }

  /** A few scattered rows and a short run of one stripe, of some columns. */
  private def randomTake(rnd: Random, schema: FermionSchema, stripeRows: IndexedSeq[Int]): Take = {
    val s = rnd.nextInt(stripeRows.size)
    val n = stripeRows(s)
    val start = rnd.nextInt(n)
    val rows =
      (IndexedSeq.fill(1 + rnd.nextInt(6))(rnd.nextInt(n)) ++ (start until math.min(n, start + rnd.nextInt(4))))
        .distinct.sorted
    val all = schema.fields.indices
    Take(
      s,
      (all.filter(_ => rnd.nextBoolean()) :+ all(rnd.nextInt(all.size))).distinct.sorted,
      rows,
      rnd.nextInt(4) == 0
    )
  }

  /** The first, a middle and the last row of a stripe, every column, single values where possible. */
  def takeOf(schema: FermionSchema, stripe: Int, rows: Int): Take =
    Take(stripe, schema.fields.indices, IndexedSeq(0, rows / 2, rows - 1).distinct, wholePages = false)

  /** Every operation once (replay of the regression corpus). */
  def all(schema: FermionSchema, stripeRows: IndexedSeq[Int]): IndexedSeq[FuzzOp] = {
    val flatCols = flat(schema)
    val nested = schema.fields.indices.filter(c => FermionType.isNested(schema.fields(c).dataType))
    val lists =
      nested.filter(c => Set[FermionType](FermionType.List, FermionType.Map).contains(schema.fields(c).dataType))
    IndexedSeq(Describe, Metadata, FullRead, Batches) ++
      (if (schema.fields.size >= 4) Seq(Columns(IndexedSeq(schema.fields.size - 1))) else Nil) ++
      (if (schema.fields.isEmpty) Nil else stripeRows.indices.take(2).map(s => takeOf(schema, s, stripeRows(s)))) ++
      nested.map(Projected(_, lengthsOnly = false)) ++
      lists.map(Projected(_, lengthsOnly = true)) ++
      (if (flatCols.isEmpty) Nil
       else
         Seq(Blooms(flatCols), Aggregates(flatCols)) ++ stripeRows.indices.take(2).map(s =>
           Selected(s, flatCols, RowRanges.of(Seq((0, 1), (stripeRows(s) / 2, stripeRows(s) / 2 + 3))))
         ) ++ {
           val (e, t) = predicate(new Random(1), schema, flatCols, 2); Seq(Filter(e, t))
         })
  }
}

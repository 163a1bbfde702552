package io.fermion.core

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._
import scala.util.Random

import io.fermion.core.dataset._
import io.fermion.core.encoding.EncodingSet
import io.fermion.core.errors.{FermionChecksumException, FermionFileException, InvalidFermionFileException}
import io.fermion.core.inspect.FileInspector
import io.fermion.core.scan._
import io.fermion.core.schema.ArrowSchemaMapping
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

/** Pages compressed in blocks (`compressionBlockSize`), primed with the page's first block
  * (`zstd-primed-blocks`, the default) or alone (`zstd-blocks`): a take reads and decompresses only
  * the blocks holding its values (and the first block, when primed), returns the scan's rows, reads
  * fewer bytes than with whole-page frames, and reports damage to a block or its table with a
  * typed error. */
class TakeBlocksSuite extends AnyFunSuite {
  private val conf = new Configuration()
  private def f(name: String, t: ArrowType, children: Field*): Field =
    new Field(name, FieldType.nullable(t), children.asJava)
  private val fields = Seq(
    f("id", new ArrowType.Int(64, true)),
    f("s", ArrowType.Utf8.INSTANCE),
    f("vec", ArrowType.List.INSTANCE, f("element", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)))
  )
  private val schema = ArrowSchemaMapping.toFermion(new org.apache.arrow.vector.types.pojo.Schema(fields.asJava))
  private val rowCount = 20000

  // Compressible values of varying lengths, with nulls at both levels of the list; the strings draw
  // words from a vocabulary larger than a block holds, so that a prime helps.
  private val rows: IndexedSeq[IndexedSeq[Any]] = {
    val rnd = new Random(5)
    val vocabulary = IndexedSeq.fill(300)(Seq.fill(3 + rnd.nextInt(8))(('a' + rnd.nextInt(26)).toChar).mkString)
    IndexedSeq.tabulate(rowCount) { i =>
      IndexedSeq(
        if (i % 17 == 0) null else (rnd.nextInt(5000) * 7L),
        if (i % 13 == 0) null
        else s"row-$i " + Seq.fill(rnd.nextInt(5))(vocabulary(rnd.nextInt(vocabulary.size))).mkString(" "),
        if (i % 11 == 0) null else Seq.fill(rnd.nextInt(24))(if (rnd.nextInt(9) == 0) null else rnd.nextInt(50).toFloat)
      )
    }
  }

  /** A one-file dataset of `rows`: PLAIN pages of 8,192 values, compressed in blocks of `blockSize`. */
  private def dataset(
      blockSize: Int,
      checksums: Boolean = true,
      opts: Option[WriterOptions] = None,
      prime: Boolean = true
  ): FermionDataset =
    datasetAndFile(opts.getOrElse(WriterOptions(
      compressionBlockSize = blockSize,
      compressionBlockPrime = prime,
      encodings = EncodingSet.PlainOnly,
      stripeMaxRows = 12000,
      pageChecksums = checksums
    )))._1

  private val files = scala.collection.mutable.Map.empty[String, String]

  private def datasetAndFile(opts: WriterOptions): (FermionDataset, String) = {
    val ds = new FermionDataset(new Path(TestFiles.tempDir("fermion-take-blocks").resolve("t").toUri), conf)
    val (rel, path) = ds.newDataFile()
    val w = FermionFileWriter.create(path, conf, schema, opts)
    val root = NestedData.root(fields, rows)
    try w.write(root)
    finally { root.close(); w.close() }
    val fragment = Fragment(0, rowCount.toLong, IndexedSeq(DataFile(rel, schema.fields.map(_.fieldId))), None)
    ds.commit(0, Operation.Append(schema, IndexedSeq(fragment)))
    files(ds.name) = path.toString
    (ds, path.toString)
  }

  private def dataFile(ds: FermionDataset): String = files(ds.name)

  private def rowsOf(b: ScanBatch): IndexedSeq[IndexedSeq[AnyRef]] = {
    val cols = fields.indices.map(i => TestFiles.column(b.vector(i)))
    (0 until b.numRows).map(r => cols.map(_(r)))
  }

  /** (rows taken, bytes read) of a take of `picks`. */
  private def take(
      ds: FermionDataset,
      picks: Array[Long],
      wholePages: Boolean = false
  ): (IndexedSeq[IndexedSeq[AnyRef]], Long) = {
    val allocator = new RootAllocator(Long.MaxValue)
    val scan = Snapshot.open(ds.name, conf).scanBuilder()
      .options(io.fermion.core.read.ReaderOptions(takeWholePages = wholePages)).build()
    try {
      val b = scan.takePositions(picks, conf, allocator)
      try (rowsOf(b), b.metrics.bytesRead)
      finally b.close()
    } finally { scan.close(); allocator.close() }
  }

  private def scanAll(ds: FermionDataset): IndexedSeq[IndexedSeq[AnyRef]] = {
    val allocator = new RootAllocator(Long.MaxValue)
    val scan = Snapshot.open(ds.name, conf).scanBuilder().build()
    try {
      val out = IndexedSeq.newBuilder[IndexedSeq[AnyRef]]
      val it = scan.batches(conf, allocator)
      try it.foreach(b => out ++= rowsOf(b))
      finally it.close()
      out.result()
    } finally { scan.close(); allocator.close() }
  }

  private val blockCodecs = Set("zstd-blocks", "zstd-primed-blocks")

  /** Pages of `node` (a dotted path) by codec, and the first page in blocks: (offset, bytes). */
  private def pagesOf(file: String, node: String): (Map[String, Int], Option[(Long, Long)]) = {
    val streams = FileInspector.inspect(file, conf).columns.flatMap(_.streams)
      .filter(s => s.node == node && s.streamType == "DATA")
    val blocked = streams.flatMap(_.chunks).flatMap(_.pages).find(_.header.exists(h => blockCodecs(h.codec)))
    (streams.map(_.codecs).reduce(_ ++ _), blocked.map(p => (p.offset, p.bytes)))
  }

  private def dataBytes(file: String, node: String): Long = FileInspector.inspect(file, conf).columns
    .flatMap(_.streams).filter(s => s.node == node && s.streamType == "DATA").map(_.bytes).sum

  for (prime <- Seq(true, false)) {
    val codec = if (prime) "zstd-primed-blocks" else "zstd-blocks"
    test(s"every column's large pages are compressed in blocks ($codec), and a take of them returns the scan's rows") {
      val ds = dataset(blockSize = 1024, prime = prime)
      val file = dataFile(ds)
      for (node <- Seq("id", "s", "vec.element")) {
        val (codecs, _) = pagesOf(file, node)
        // Primed where the prime makes a page smaller (the strings), alone elsewhere.
        assert(codecs.keySet.intersect(blockCodecs).nonEmpty, s"$node: $codecs")
        assert(prime == codecs.contains("zstd-primed-blocks") || node != "s", s"$node: $codecs")
        assert(prime || !codecs.contains("zstd-primed-blocks"), s"$node: $codecs")
      }
      val all = scanAll(ds)
      assert(all == rows.map(_.map(v => TestFiles.normalize(toJava(v)))), "the scan reads back what was written")
      val rnd = new Random(3)
      for (k <- Seq(1, 2, 10, 100, 1000)) {
        // Duplicates and neighbours included: adjacent rows share blocks.
        val picks = Array.fill(k)(rnd.nextInt(rowCount).toLong) ++ Array(0L, 0L, 1L, (rowCount - 1).toLong)
        val (got, _) = take(ds, picks)
        assert(got == picks.toSeq.map(p => all(p.toInt)), s"take of $k rows")
      }
    }
  }

  test(
    "primed blocks store the strings in 5 % fewer bytes than blocks alone; a take of a later block also reads the first"
  ) {
    val primed = dataset(blockSize = 1024)
    val alone = dataset(blockSize = 1024, prime = false)
    val (p, a) = (dataBytes(dataFile(primed), "s"), dataBytes(dataFile(alone), "s"))
    assert(p * 20 < a * 19, s"primed: $p bytes, alone: $a bytes")
    // Row 8000 lies in a later block of the first page: primed, its take reads block 0 as well.
    val (rowsPrimed, bytesPrimed) = take(primed, Array(8000L))
    val (rowsAlone, bytesAlone) = take(alone, Array(8000L))
    assert(rowsPrimed == rowsAlone && rowsPrimed == IndexedSeq(scanAll(alone)(8000)))
    assert(bytesPrimed > bytesAlone, s"primed take: $bytesPrimed bytes, alone: $bytesAlone bytes")
    // A scan keeps the first blocks it decoded: its next take of that page reads only its own block,
    // as many bytes as a take of the same page without a prime.
    def secondTake(ds: FermionDataset): (IndexedSeq[IndexedSeq[AnyRef]], Long) = {
      val allocator = new RootAllocator(Long.MaxValue)
      val scan = Snapshot.open(ds.name, conf).scanBuilder().build()
      try {
        scan.takePositions(Array(8000L), conf, allocator).close()
        val b = scan.takePositions(Array(8001L), conf, allocator)
        try (rowsOf(b), b.metrics.bytesRead)
        finally b.close()
      } finally { scan.close(); allocator.close() }
    }
    val (again, againPrimed) = secondTake(primed)
    val (againRows, againAlone) = secondTake(alone)
    assert(again == againRows && again == IndexedSeq(scanAll(alone)(8001)))
    assert(againPrimed <= againAlone, s"next take of the page: primed $againPrimed bytes, alone $againAlone bytes")
  }

  test("a take reads fewer bytes from pages in blocks than from whole-page zstd frames, with the same rows") {
    val blocked = dataset(blockSize = 1024, prime = false)
    val whole = dataset(blockSize = 0)
    val (_, wholeCodec) = pagesOf(dataFile(whole), "s")
    assert(wholeCodec.isEmpty, "blockSize 0 writes no page in blocks")
    val picks = Array(5L, 9000L, 15001L)
    val (a, bytesBlocked) = take(blocked, picks)
    val (b, bytesWhole) = take(whole, picks)
    assert(a == b)
    assert(bytesBlocked * 2 < bytesWhole, s"blocks: $bytesBlocked bytes, whole pages: $bytesWhole bytes")
  }

  test("uncompressed FOR and BITPACK pages: a take reads only the packed words of its values") {
    val opts = WriterOptions(
      compression = io.fermion.core.codec.PageCodec.None,
      encodings = EncodingSet.parse("for,bitpack"),
      stripeMaxRows = 12000
    )
    val ds = dataset(0, opts = Some(opts))
    val file = dataFile(ds)
    for (node <- Seq("id", "vec.element")) {
      val encodings = FileInspector.inspect(file, conf).columns.flatMap(_.streams)
        .filter(s => s.node == node && s.streamType == "DATA").map(_.encodings).reduce(_ ++ _)
      assert(encodings.keySet.exists(Set("for", "bitpack")), s"$node: $encodings")
    }
    val all = scanAll(ds)
    val rnd = new Random(8)
    for (k <- Seq(1, 3, 50, 700)) {
      val picks = Array.fill(k)(rnd.nextInt(rowCount).toLong) ++ Array(0L, 1L, 2L, (rowCount - 1).toLong)
      val (got, bytes) = take(ds, picks)
      assert(got == picks.toSeq.map(p => all(p.toInt)), s"take of $k rows")
      if (k <= 3) {
        val (whole, wholeBytes) = take(ds, picks, wholePages = true)
        assert(whole == got)
        assert(bytes * 2 < wholeBytes, s"packed words: $bytes bytes, whole pages: $wholeBytes bytes")
      }
    }
  }

  /** The file of a fresh dataset with `edit(bytes, pageOffset)` applied to its first `s` page in blocks. */
  private def damaged(checksums: Boolean, prime: Boolean = true)(edit: (Array[Byte], Int) => Unit): FermionDataset = {
    val ds = dataset(blockSize = 1024, checksums = checksums, prime = prime)
    val file = dataFile(ds)
    val (_, Some((offset, _))) = pagesOf(file, "s"): @unchecked
    val local = Paths.get(new Path(file).toUri)
    val bytes = Files.readAllBytes(local)
    edit(bytes, offset.toInt)
    Files.write(local, bytes)
    ds
  }

  /** Flips a bit in block `b` of the page at `page`. */
  private def flipBlock(b: Int)(bytes: Array[Byte], page: Int): Unit = {
    val table = page + 20
    val le = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    val n = le.getInt(table + 4)
    val at = table + 8 + 8 * n + (0 until b).map(i => le.getInt(table + 8 + 8 * i)).sum
    bytes(at + 3) = (bytes(at + 3) ^ 0x40).toByte
  }

  test("a damaged block fails a take with a checksum error naming the block, and a scan with the page's") {
    val ds = damaged(checksums = true, prime = false)(flipBlock(0))
    // Row 0's `s` is null (no bytes): row 1's value starts block 0.
    val e = intercept[FermionChecksumException](take(ds, Array(1L)))
    assert(e.getMessage.contains("block"), e.getMessage)
    intercept[FermionChecksumException](scanAll(ds))
    // Rows of other blocks of the page are still readable by a take.
    assert(take(ds, Array(8000L))._1.size == 1)
  }

  test("primed blocks: a damaged first block fails a take of any later block; a damaged later block only its own") {
    val first = damaged(checksums = true)(flipBlock(0))
    val e = intercept[FermionChecksumException](take(first, Array(8000L)))
    assert(e.getMessage.contains("block"), e.getMessage)
    intercept[FermionChecksumException](scanAll(first))
    val second = damaged(checksums = true)(flipBlock(1))
    assert(take(second, Array(1L, 8000L))._1.size == 2)
  }

  test("a take of a file written without page CRCs reads it (nothing to verify)") {
    val ds = dataset(blockSize = 1024, checksums = false)
    val all = scanAll(ds)
    val picks = Array(3L, 7000L, 19999L)
    assert(take(ds, picks)._1 == picks.toSeq.map(p => all(p.toInt)))
  }

  test("a damaged block table fails a take and a scan with InvalidFermionFileException") {
    val ds = damaged(checksums = false) { (bytes, page) =>
      val table = page + 20
      ByteBuffer.wrap(bytes, table + 4, 4).order(ByteOrder.LITTLE_ENDIAN).putInt(3) // blockCount
    }
    val e = intercept[FermionFileException](take(ds, Array(1L)))
    assert(e.isInstanceOf[InvalidFermionFileException] && e.getMessage.contains("zstd-blocks"), e.getMessage)
    val s = intercept[FermionFileException](scanAll(ds))
    assert(s.isInstanceOf[InvalidFermionFileException] && s.getMessage.contains("zstd-blocks"), s.getMessage)
  }

  private def toJava(v: Any): AnyRef = v match {
    case null => null
    case s: Seq[_] => s.map(toJava).asJava
    case x => x.asInstanceOf[AnyRef]
  }
}

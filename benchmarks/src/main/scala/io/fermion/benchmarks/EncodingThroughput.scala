package io.fermion.benchmarks

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._
import scala.util.Random

import io.fermion.core.inspect.FileInspector
import io.fermion.core.memory.FermionAllocators
import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import io.fermion.core.schema.ArrowSchemaMapping
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Decode throughput of each page encoding into Arrow, per core, no Spark: one column of 4M values
  * written with only that encoding allowed (uncompressed, so the encoding alone is measured; two
  * zstd rows beside), read stripe by stripe on one thread from memory, next to a copy of the same
  * number of bytes (`memcpy`: `ArrowBuf.setBytes` between two direct buffers) in the same JVM.
  * GB/s counts the Arrow bytes produced (values, offsets and string bytes; validity not counted).
  * Usage: `benchmarks/run.sh decode` or
  * `benchmarks/runMain io.fermion.benchmarks.EncodingThroughput <results.md> [workDir]`. */
object EncodingThroughput {
  private val Values = 4 << 20

  /** A case: name, Arrow type, the encodings allowed, codec, and the value of row i. */
  final case class Case(
      encoding: String,
      data: String,
      t: ArrowType,
      allowed: String,
      codec: String,
      value: Int => Any,
      options: Map[String, String] = Map.empty
  )

  private val int64 = new ArrowType.Int(64, true)
  private val int32 = new ArrowType.Int(32, true)
  private val float64 = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)

  private def cases(rnd: Random): Seq[Case] = {
    val randomLongs = Array.fill(Values)(rnd.nextLong())
    val gauss = Array.fill(Values)(rnd.nextGaussian())
    val small = Array.fill(Values)(rnd.nextInt(1 << 20))
    val steps = Array.fill(Values)(rnd.nextInt(16)).scanLeft(1000000000000L)(_ + _)
    val words = Array.fill(40)(Random.alphanumeric.take(12).mkString)
    val modes = Array.tabulate(7)(k => rnd.alphanumeric.take(3 + k).mkString)
    val strings = Array.fill(Values / 4)(rnd.alphanumeric.take(20).mkString)
    // Comment-like text: 3 to 8 words of a 2,000-word vocabulary (words repeat across a page's blocks).
    val vocabulary = Array.fill(2000)(rnd.alphanumeric.filter(_.isLower).take(3 + rnd.nextInt(8)).mkString)
    val text = Array.fill(Values / 4)(Seq.fill(3 + rnd.nextInt(6))(vocabulary(rnd.nextInt(2000))).mkString(" "))
    // Dates of orders as TPC-H's lineitem has them in order-key order: 1 to 7 lines per order,
    // each shipped 1 to 121 days after the order's date, a uniform day of about 2,400.
    val orderDates = {
      val d = new Array[Int](Values)
      var i = 0
      while (i < Values) {
        val day = 8035 + rnd.nextInt(2406); val lines = 1 + rnd.nextInt(7)
        var l = 0
        while (l < lines && i < Values) { d(i) = day + 1 + rnd.nextInt(121); i += 1; l += 1 }
      }
      d
    }
    val date32 = new ArrowType.Date(org.apache.arrow.vector.types.DateUnit.DAY)
    Seq(
      Case("plain", "random int64", int64, "plain", "none", i => randomLongs(i)),
      Case("plain", "random int32", int32, "plain", "none", i => randomLongs(i).toInt),
      Case("plain", "gaussian double", float64, "plain", "none", i => gauss(i)),
      Case("bitpack", "int64 < 2^20", int64, "bitpack", "none", i => small(i).toLong),
      Case("bitpack", "int32 < 2^20", int32, "bitpack", "none", i => small(i)),
      Case("for", "int64 in [10^12, 10^12 + 2^20)", int64, "for", "none", i => 1000000000000L + small(i)),
      Case("delta", "sorted int64, steps 0-15", int64, "delta", "none", i => steps(i)),
      Case("delta_for", "sorted int64, steps 0-15", int64, "delta_for", "none", i => steps(i)),
      Case("rle", "int64 runs of 100", int64, "rle", "none", i => (i / 100).toLong * 7919),
      Case("constant", "one int64", int64, "constant", "none", _ => 42L),
      Case("dictionary", "40 distinct int64", int64, "dictionary", "none", i => randomLongs(i % 40)),
      Case("dictionary", "40 distinct doubles", float64, "dictionary", "none", i => gauss(i % 40)),
      Case("for", "dates of orders (lineitem order)", date32, "for", "none", i => orderDates(i)),
      Case("huffman", "dates of orders (lineitem order)", date32, "huffman", "none", i => orderDates(i)),
      Case("delta_huffman", "dates of orders (lineitem order)", date32, "delta_huffman", "none", i => orderDates(i)),
      Case(
        "dictionary, Huffman codes",
        "50 distinct int64, uniform",
        int64,
        "dictionary,huffman",
        "none",
        i => randomLongs(math.floorMod(randomLongs(i), 50L).toInt)
      ),
      Case("plain", "20-character strings", ArrowType.Utf8.INSTANCE, "plain", "none", i => strings(i / 4)),
      Case("dictionary", "40 distinct strings", ArrowType.Utf8.INSTANCE, "dictionary", "none", i => words(i % 40)),
      Case(
        "dictionary_by_length",
        "7 strings of 7 lengths",
        ArrowType.Utf8.INSTANCE,
        "dictionary_by_length",
        "none",
        i => modes(math.floorMod(randomLongs(i), 7L).toInt)
      ),
      Case("plain + zstd", "gaussian double", float64, "plain", "zstd", i => gauss(i)),
      Case("plain + zstd", "20-character strings", ArrowType.Utf8.INSTANCE, "plain", "zstd", i => strings(i / 4)),
      Case(
        "plain + zstd blocks",
        "text, 2,000-word vocabulary",
        ArrowType.Utf8.INSTANCE,
        "plain",
        "zstd",
        i => text(i / 4),
        Map("compressionBlockPrime" -> "false")
      ),
      Case(
        "plain + zstd primed blocks",
        "text, 2,000-word vocabulary",
        ArrowType.Utf8.INSTANCE,
        "plain",
        "zstd",
        i => text(i / 4)
      )
    )
  }

  def main(args: Array[String]): Unit = {
    val out = Paths.get(args.headOption.getOrElse("benchmarks/results/decode.md"))
    val work = Paths.get(if (args.length > 1) args(1) else Files.createTempDirectory("fermion-decode").toString)
    val conf = new Configuration()
    val allocator = FermionAllocators.newRoot()
    // FERMION_DECODE_CASES=<regex> runs only the cases whose encoding or data it finds (quick checks).
    val only = sys.env.get("FERMION_DECODE_CASES").map(_.r)
    val chosen = cases(new Random(7)).filter(c => only.forall(_.findFirstIn(s"${c.encoding} ${c.data}").isDefined))
    val rows = chosen.zipWithIndex.map { case (c, k) =>
      val file = work.resolve(s"case-$k.fermion")
      write(file, c, conf, allocator)
      val data = FileInspector.inspect(file.toString, conf).columns.head.streams.filter(_.streamType == "DATA")
      def counts(m: Seq[(String, Int)]) =
        m.groupMapReduce(_._1)(_._2)(_ + _).toSeq.sortBy(-_._2).map { case (e, n) => s"$e $n" }.mkString(", ")
      val reader = FermionFileReader.open(new Path(file.toUri), conf, ReaderOptions(decodeThreads = 1))
      try {
        def decodeOnce(): (Long, Long) = {
          val start = System.nanoTime()
          var bytes = 0L
          (0 until reader.numStripes).foreach { s =>
            reader.readStripe(s, IndexedSeq(0), allocator).foreach { v =>
              bytes += arrowBytes(v)
              v.close()
            }
          }
          (System.nanoTime() - start, bytes)
        }
        (0 until 20).foreach(_ => decodeOnce())
        // The write's garbage (and the warm-ups') collected before timing, not during it.
        System.gc()
        val timed = (0 until 21).map(_ => decodeOnce())
        val bytes = timed.head._2
        val decode = timed.map(_._1).sorted.apply(10)
        val copy = memcpyNanos(bytes, allocator)
        val gbs = bytes / (decode / 1e9) / 1e9
        val copyGbs = bytes / (copy / 1e9) / 1e9
        println(f"${c.encoding}%-14s ${c.data}%-32s $gbs%6.2f GB/s, memcpy $copyGbs%6.2f GB/s")
        Seq(
          c.encoding,
          c.data,
          counts(data.flatMap(_.encodings)),
          counts(data.flatMap(_.codecs)),
          f"${data.map(_.bytes).sum / 1e6}%.1f",
          f"${bytes / 1e6}%.1f",
          f"${decode / 1e6}%.1f",
          f"$gbs%.2f",
          f"$copyGbs%.2f",
          f"${copy.toDouble / decode}%.2f"
        )
      } finally { reader.close(); Files.deleteIfExists(file) }
    }
    allocator.close()
    val header = Seq(
      "encoding",
      "data",
      "DATA pages by encoding",
      "by codec",
      "stored MB",
      "Arrow MB",
      "decode ms",
      "decode GB/s",
      "memcpy GB/s",
      "decode / memcpy speed"
    )
    val table = (header.mkString("| ", " | ", " |") +: header.map(_ => "---").mkString("|", "|", "|") +:
      rows.map(_.mkString("| ", " | ", " |"))).mkString("\n")
    val cpu = scala.util.Try(
      Files.readAllLines(Paths.get("/proc/cpuinfo")).asScala.find(_.startsWith("model name")).map(_.split(":")(1).trim)
    ).toOption.flatten.getOrElse("unknown CPU")
    Files.writeString(
      out,
      s"""# Decode throughput per page encoding (core, one thread)
         |
         |Machine: ${Runtime.getRuntime.availableProcessors} cores ($cpu), JVM ${System.getProperty("java.version")}.
         |One column of ${Values / 1024 / 1024}Mi values per case, written with only that encoding allowed
         |(`encodings`; PLAIN where it does not apply) and no compression unless the row says zstd; read
         |with `FermionFileReader.readStripe` on one thread (`decodeThreads = 1`) from the page cache, into
         |vectors of `FermionAllocators.newRoot()` (released buffers reused, as in the Spark reader), median
         |of 21 reads after 20 warm-ups and a full GC. GB/s counts the Arrow bytes produced (values, string offsets and
         |bytes). `memcpy` copies the same number of bytes between two direct Arrow buffers in the same
         |JVM, median of 11. Page checksums are verified as in every read. On this 2-core virtual machine
         |both columns vary up to 2x from one run to the next (memcpy too): compare rows within a run.
         |
         |""".stripMargin + table + "\n"
    )
    println(s"wrote $out")
  }

  private def arrowBytes(v: FieldVector): Long = v match {
    case s: BaseVariableWidthVector => s.getOffsetBuffer.writerIndex().max((s.getValueCount + 1) * 4L) +
        s.getOffsetBuffer.getInt(s.getValueCount.toLong * 4)
    case f: BaseFixedWidthVector => f.getValueCount.toLong * f.getTypeWidth
    case other => other.getBufferSize.toLong
  }

  private def memcpyNanos(bytes: Long, allocator: RootAllocator): Long = {
    val src = allocator.buffer(bytes)
    val dst = allocator.buffer(bytes)
    try {
      var i = 0L
      while (i < bytes) { src.setByte(i, i.toInt); i += 1 }
      def once(): Long = {
        val start = System.nanoTime()
        dst.setBytes(0, src, 0, bytes)
        System.nanoTime() - start
      }
      (0 until 5).foreach(_ => once())
      (0 until 11).map(_ => once()).sorted.apply(5)
    } finally { src.close(); dst.close() }
  }

  private def write(file: java.nio.file.Path, c: Case, conf: Configuration, allocator: RootAllocator): Unit = {
    val schema =
      new Schema(Seq(new Field("v", new FieldType(false, c.t, null), java.util.Collections.emptyList())).asJava)
    val options = WriterOptions.parse(Map("encodings" -> c.allowed, "compression" -> c.codec) ++ c.options)
    val w = FermionFileWriter.create(new Path(file.toUri), conf, ArrowSchemaMapping.toFermion(schema), options)
    val batch = 65536
    try (0 until Values by batch).foreach { start =>
        val root = VectorSchemaRoot.create(schema, allocator)
        try {
          root.allocateNew()
          val v = root.getVector(0)
          (0 until batch).foreach { i =>
            (v, c.value(start + i)) match {
              case (b: BigIntVector, x: Long) => b.setSafe(i, x)
              case (b: IntVector, x: Int) => b.setSafe(i, x)
              case (b: DateDayVector, x: Int) => b.setSafe(i, x)
              case (b: Float8Vector, x: Double) => b.setSafe(i, x)
              case (b: VarCharVector, x: String) => b.setSafe(i, x.getBytes("UTF-8"))
              case (vec, x) => throw new IllegalArgumentException(s"$x for ${vec.getClass}")
            }
          }
          v.setValueCount(batch)
          root.setRowCount(batch)
          w.write(root)
        } finally root.close()
      }
    finally w.close()
  }
}

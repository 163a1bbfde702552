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
  * written with only that encoding allowed for its values (uncompressed, so the encoding alone is
  * measured; zstd rows beside; strings' lengths as the writer would encode them), read stripe by
  * stripe on one thread from memory, next to a copy of the same number of bytes (`memcpy`:
  * `ArrowBuf.setBytes` between two direct buffers) in the same JVM.
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

  /** The cases; each one's data is generated when first used (from a generator of its own, so a
    * case's values do not depend on which others ran), as each case runs in a JVM of its own. */
  private def cases(): Seq[Case] = {
    def rnd(k: Int) = new Random(7 + k)
    lazy val randomLongs = { val r = rnd(1); Array.fill(Values)(r.nextLong()) }
    lazy val gauss = { val r = rnd(2); Array.fill(Values)(r.nextGaussian()) }
    lazy val small = { val r = rnd(3); Array.fill(Values)(r.nextInt(1 << 20)) }
    lazy val steps = { val r = rnd(4); Array.fill(Values)(r.nextInt(16)).scanLeft(1000000000000L)(_ + _) }
    lazy val words = { val r = rnd(5); Array.fill(40)(r.alphanumeric.take(12).mkString) }
    lazy val modes = { val r = rnd(6); Array.tabulate(7)(k => r.alphanumeric.take(3 + k).mkString) }
    lazy val strings = { val r = rnd(7); Array.fill(Values / 4)(r.alphanumeric.take(20).mkString) }
    // Comment-like text: 3 to 8 words of a 2,000-word vocabulary (words repeat across a page's blocks).
    lazy val text = {
      val r = rnd(8)
      val vocabulary = Array.fill(2000)(r.alphanumeric.filter(_.isLower).take(3 + r.nextInt(8)).mkString)
      Array.fill(Values / 4)(Seq.fill(3 + r.nextInt(6))(vocabulary(r.nextInt(2000))).mkString(" "))
    }
    // Dates of orders as TPC-H's lineitem has them in order-key order: 1 to 7 lines per order,
    // each shipped 1 to 121 days after the order's date, a uniform day of about 2,400.
    lazy val orderDates = {
      val r = rnd(9)
      val d = new Array[Int](Values)
      var i = 0
      while (i < Values) {
        val day = 8035 + r.nextInt(2406); val lines = 1 + r.nextInt(7)
        var l = 0
        while (l < lines && i < Values) { d(i) = day + 1 + r.nextInt(121); i += 1; l += 1 }
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

  /** With `--case k workDir`, measures case k alone and prints its row (tab-separated, after `Row`);
    * otherwise runs every chosen case that way, each in a JVM of its own started with this one's
    * options: a case measured after others inherits their JIT state (the same bit-packed case ran
    * at 1.7-2.1 GB/s first in a JVM and 3.4-4.8 after the PLAIN cases), as JMH's forks avoid. */
  def main(args: Array[String]): Unit = args match {
    case Array("--case", k, work) => println(Row + measure(k.toInt, Paths.get(work)).mkString("\t"))
    case _ => writeTable(args)
  }

  private val Row = "ROW\t"
  private val DecodeMsCell = 7
  // FERMION_DECODE_FORKS: JVMs per case (3 by default); the row is the one of median decode time.
  private val Forks = sys.env.get("FERMION_DECODE_FORKS").map(_.toInt).getOrElse(3)

  private def writeTable(args: Array[String]): Unit = {
    val out = Paths.get(args.headOption.getOrElse("benchmarks/results/decode.md"))
    val work = if (args.length > 1) args(1) else Files.createTempDirectory("fermion-decode").toString
    // FERMION_DECODE_CASES=<regex> runs only the cases whose encoding or data it finds (quick checks).
    val only = sys.env.get("FERMION_DECODE_CASES").map(_.r)
    val all = cases()
    val chosen = all.zipWithIndex.filter { case (c, _) =>
      only.forall(_.findFirstIn(s"${c.encoding} ${c.data}").isDefined)
    }
    val javaBin = Paths.get(System.getProperty("java.home"), "bin", "java").toString
    val jvmOptions = java.lang.management.ManagementFactory.getRuntimeMXBean.getInputArguments.asScala.toSeq
    val rows = chosen.map { case (c, k) =>
      val forks = (1 to Forks).map { f =>
        println(s"[decode] case ${k + 1}/${all.size}, fork $f/$Forks: ${c.encoding}, ${c.data}")
        val command = (javaBin +: jvmOptions) ++
          Seq(
            "-cp",
            System.getProperty("java.class.path"),
            getClass.getName.stripSuffix("$"),
            "--case",
            k.toString,
            work
          )
        val process = new ProcessBuilder(command.asJava).redirectError(ProcessBuilder.Redirect.INHERIT).start()
        val lines = scala.io.Source.fromInputStream(process.getInputStream, "UTF-8").getLines().toVector
        val status = process.waitFor()
        lines.filterNot(_.startsWith(Row)).foreach(println)
        val row = lines.find(_.startsWith(Row))
        if (status != 0 || row.isEmpty) sys.error(s"case ${c.encoding} (${c.data}) failed: exit $status")
        row.get.stripPrefix(Row).split("\t").toSeq
      }
      // The fork of median decode time (its memcpy beside it, measured in the same JVM).
      forks.sortBy(_(DecodeMsCell).toDouble).apply(Forks / 2)
    }
    val header = Seq(
      "encoding",
      "data",
      "DATA pages by encoding",
      "lengths pages by encoding",
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
         |(`encodings`; PLAIN where it does not apply) and no compression unless the row says zstd; the
         |strings' lengths (their OFFSETS stream) may also take every encoding of integers, as a writer
         |allowed every encoding would choose for them (the DATA column shows the strings' own pages); read
         |with `FermionFileReader.readStripe` on one thread (`decodeThreads = 1`) from the page cache, into
         |vectors of `FermionAllocators.newRoot()` (released buffers reused, as in the Spark reader). Each
         |case runs in $Forks JVMs of its own (as JMH forks; the row is the fork of median decode time); each
         |reads until steady (the median of $WarmRound reads within ${(Steady * 100).round} % of the previous $WarmRound's, at
         |least ${MinWarmRounds * WarmRound} reads), then after a full GC times $Timed reads: their median is quoted. GB/s
         |counts the Arrow bytes produced (values, string offsets and bytes). `memcpy` copies the same
         |number of bytes between two direct Arrow buffers in the same JVM, median of 11. Page checksums
         |are verified as in every read. On this 2-core virtual
         |machine both columns vary from one run to the next (memcpy too): compare rows within a run.
         |
         |""".stripMargin + table + "\n"
    )
    println(s"wrote $out")
  }

  private val WarmRound = 10
  private val MinWarmRounds = 3
  private val MaxWarmRounds = 40
  private val Steady = 0.03
  private val Timed = 21

  /** Writes case `k`'s file in `work`, reads it until steady, and returns the row's cells. */
  private def measure(k: Int, work: java.nio.file.Path): Seq[String] = {
    val c = cases()(k)
    val conf = new Configuration()
    val allocator = FermionAllocators.newRoot()
    val file = work.resolve(s"case-$k.fermion")
    write(file, c, conf, allocator)
    val streams = FileInspector.inspect(file.toString, conf).columns.head.streams
    val data = streams.filter(_.streamType == "DATA")
    val lengths = streams.filter(_.streamType == "OFFSETS")
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
      def median(n: Int) = (0 until n).map(_ => decodeOnce()._1).sorted.apply(n / 2)
      var previous = median(WarmRound)
      var round = 1
      var steady = false
      while (round < MaxWarmRounds && !(steady && round >= MinWarmRounds)) {
        val m = median(WarmRound)
        steady = math.abs(m - previous) <= Steady * previous
        previous = m; round += 1
      }
      // The write's garbage (and the warm-ups') collected before timing, not during it.
      System.gc()
      val timed = (0 until Timed).map(_ => decodeOnce())
      val bytes = timed.head._2
      val decode = timed.map(_._1).sorted.apply(Timed / 2)
      val copy = memcpyNanos(bytes, allocator)
      val gbs = bytes / (decode / 1e9) / 1e9
      val copyGbs = bytes / (copy / 1e9) / 1e9
      val sorted = timed.map(_._1 / 1e6).sorted
      println(
        f"${c.encoding}%-14s ${c.data}%-32s $gbs%6.2f GB/s, memcpy $copyGbs%6.2f GB/s (${round * WarmRound} warm-up reads; " +
          f"ms min ${sorted.head}%.1f, median ${sorted(Timed / 2)}%.1f, max ${sorted.last}%.1f)"
      )
      Seq(
        c.encoding,
        c.data,
        counts(data.flatMap(_.encodings)),
        if (lengths.isEmpty) "-" else counts(lengths.flatMap(_.encodings)),
        counts(data.flatMap(_.codecs)),
        f"${data.map(_.bytes).sum / 1e6}%.1f",
        f"${bytes / 1e6}%.1f",
        f"${decode / 1e6}%.1f",
        f"$gbs%.2f",
        f"$copyGbs%.2f",
        f"${copy.toDouble / decode}%.2f"
      )
    } finally { reader.close(); Files.deleteIfExists(file); allocator.close() }
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

  /** Allowed beside a string case's encoding, for the strings' lengths (their OFFSETS stream) to
    * be encoded as a writer allowed every encoding would (the 20-character strings' as CONSTANT, not
    * as 4 PLAIN bytes each): none of them applies to a variable-width page but CONSTANT, which no
    * string case's DATA page can take (its values differ; the table's DATA column shows it). */
  private val LengthEncodings = "constant,rle,bitpack,for,delta,delta_for,huffman,delta_huffman"

  private def write(file: java.nio.file.Path, c: Case, conf: Configuration, allocator: RootAllocator): Unit = {
    val schema =
      new Schema(Seq(new Field("v", new FieldType(false, c.t, null), java.util.Collections.emptyList())).asJava)
    val allowed = if (c.t == ArrowType.Utf8.INSTANCE) s"${c.allowed},$LengthEncodings" else c.allowed
    val options = WriterOptions.parse(Map("encodings" -> allowed, "compression" -> c.codec) ++ c.options)
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

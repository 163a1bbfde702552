package io.fermion.benchmarks

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import io.fermion.core.schema.ArrowSchemaMapping
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Opening a wide file and reading 10 of its columns in core (no Spark, warm JVM, page cache
  * warm): time to open, time to open and read, whole or through the column directory, and metadata
  * bytes read per file, at each stored column count; a markdown table to `out`.
  * Usage: WideOpen out.md dir 1000,10000,100000 [rows] */
object WideOpen {
  def main(args: Array[String]): Unit = {
    val out = Paths.get(args(0))
    val dir = Paths.get(args(1))
    val counts = args(2).split(",").map(_.toInt)
    val rows = if (args.length > 3) args(3).toInt else 1000
    Files.createDirectories(dir)
    val conf = new Configuration()
    val allocator = new RootAllocator(Long.MaxValue)
    val lines = counts.map { n =>
      // The format version in the name: files of an older writer have no column directory.
      val file = dir.resolve(s"wide-$n-$rows-v1.5.fermion")
      if (!Files.exists(file)) write(file, n, rows, conf, allocator)
      val wanted = (0 until 10).map(i => (i.toLong * n / 10 + 7).toInt % n)
      val options = ReaderOptions(decodeThreads = 1)
      val path = new Path(file.toUri)
      val length = Files.size(file)
      var meta = 0L
      var throughDirectory = false
      var stripes = 0
      def once(read: Boolean, columns: Boolean): Long = {
        val t = System.nanoTime()
        val r =
          if (columns) FermionFileReader.openColumns(path, conf, options, length, wanted)
          else FermionFileReader.open(path, conf, options, length)
        try if (read) (0 until r.numStripes).foreach(s => r.readStripe(s, wanted, allocator).foreach(_.close()))
        finally {
          meta = r.metadataBytesRead; throughDirectory = r.openedColumns.nonEmpty; stripes = r.numStripes; r.close()
        }
        System.nanoTime() - t
      }
      def median(read: Boolean, columns: Boolean): (Double, Long) = {
        // The garbage of the previous way (a whole open of 100,000 columns allocates megabytes) is
        // collected before this one is timed, not during it.
        System.gc()
        (0 until 200).foreach(_ => once(read, columns))
        val times = (0 until 101).map(_ => once(read, columns)).sorted
        (times(50) / 1e6, meta)
      }
      // Interleaved: whole open, whole open + read, open of the 10 columns, open of the 10 columns
      // + read; 3 rounds, best median of each.
      val rounds = (0 until 3).map(_ =>
        IndexedSeq(median(false, false), median(true, false), median(false, true), median(true, true))
      )
      def best(i: Int): (Double, Long) = rounds.map(_(i)).minBy(_._1)
      val (openMs, openMeta) = best(0)
      val (readMs, readMeta) = best(1)
      val (colOpenMs, colOpenMeta) = best(2)
      val (colMs, colMeta) = best(3)
      require(throughDirectory || n < 1000, s"$n columns: the 10 columns were not opened through the column directory")
      println(
        f"[wide-open] $n%,d columns: open $openMs%.3f ms, open + read $readMs%.3f ms ($readMeta%,d metadata bytes), " +
          f"open 10 columns $colOpenMs%.3f ms ($colOpenMeta%,d bytes), + read $colMs%.3f ms ($colMeta%,d metadata bytes)"
      )
      f"| $n%,d | ${length / 1e6}%.1f | $stripes | $openMs%.3f | $openMeta%,d | $readMs%.3f | $readMeta%,d | $colOpenMs%.3f | $colOpenMeta%,d | $colMs%.3f | $colMeta%,d |"
    }
    val text = Seq(
      "# Opening a wide file and reading 10 columns (core, no Spark)",
      "",
      s"${Runtime.getRuntime.availableProcessors} cores, JVM ${System.getProperty("java.version")}; one file of $rows rows " +
        "of double columns per column count (stripes: the writer's default size limit), format 1.5, page cache warm; the file's length known " +
        "(no status call); `readStripe` of 10 columns spread over the schema, one decode thread. Whole open: " +
        "`FermionFileReader.open` (footer, schema, stripe directory, CIT). 10 columns: `FermionFileReader.openColumns` " +
        "(footer, column directory trailer, stripe directory, the 10 columns' directory entries and schema nodes; " +
        "with the read, their CMBs). Reads cover every stripe. Median of 101 runs after 200 warm-ups and a garbage collection, the three ways interleaved, best of " +
        "3 rounds. Metadata " +
        "bytes: what the reader read before any page (`metadataBytesRead`, the tail read included).",
      "",
      "| stored columns | file MB | stripes | whole open ms | metadata bytes on open | whole open + read 10 columns ms | metadata bytes (whole) | open 10 columns ms | metadata bytes on open (10 columns) | open 10 columns + read ms | metadata bytes (10 columns) |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    ) ++ lines :+ ""
    Files.write(out, text.mkString("\n").getBytes("UTF-8"))
    println(text.mkString("\n"))
  }

  private def write(
      file: java.nio.file.Path,
      n: Int,
      rows: Int,
      conf: Configuration,
      allocator: RootAllocator
  ): Unit = {
    val fields = (0 until n).map(i =>
      new Field(
        f"feature_$i%06d",
        new FieldType(true, new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE), null),
        java.util.Collections.emptyList()
      )
    )
    val schema = new Schema(fields.asJava)
    val w = FermionFileWriter.create(new Path(file.toUri), conf, ArrowSchemaMapping.toFermion(schema), WriterOptions())
    val root = VectorSchemaRoot.create(schema, allocator)
    try {
      root.allocateNew()
      root.getFieldVectors.asScala.zipWithIndex.foreach { case (v, c) =>
        val d = v.asInstanceOf[Float8Vector]
        (0 until rows).foreach(i => d.setSafe(i, (i * 31 + c) % 1000 / 7.0))
        d.setValueCount(rows)
      }
      root.setRowCount(rows)
      w.write(root)
    } finally root.close()
    w.close()
  }
}

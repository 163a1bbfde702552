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
  * warm): time to open, time to open and read, and metadata bytes read per file (footer, schema,
  * stripe directory, CIT and CMBs), at each stored column count; a markdown table to `out`.
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
      val file = dir.resolve(s"wide-$n-$rows.fermion")
      if (!Files.exists(file)) write(file, n, rows, conf, allocator)
      val wanted = (0 until 10).map(i => (i.toLong * n / 10 + 7).toInt % n)
      val options = ReaderOptions(decodeThreads = 1)
      var meta = 0L
      def once(read: Boolean): Long = {
        val t = System.nanoTime()
        val r = FermionFileReader.open(new Path(file.toUri), conf, options, Files.size(file))
        try if (read) (0 until r.numStripes).foreach(s => r.readStripe(s, wanted, allocator).foreach(_.close()))
        finally { meta = r.metadataBytesRead; r.close() }
        System.nanoTime() - t
      }
      def median(read: Boolean): (Double, Long) = {
        (0 until 200).foreach(_ => once(read))
        val times = (0 until 101).map(_ => once(read)).sorted
        (times(50) / 1e6, meta)
      }
      val (openMs, openMeta) = median(read = false)
      val (readMs, readMeta) = median(read = true)
      println(
        f"[wide-open] $n%,d columns: open $openMs%.3f ms, open + read $readMs%.3f ms, $readMeta%,d metadata bytes"
      )
      f"| $n%,d | ${Files.size(file) / 1e6}%.1f | $openMs%.3f | $openMeta%,d | $readMs%.3f | $readMeta%,d |"
    }
    val text = Seq(
      "# Opening a wide file and reading 10 columns (core, no Spark)",
      "",
      s"${Runtime.getRuntime.availableProcessors} cores, JVM ${System.getProperty("java.version")}; one file of $rows rows " +
        "of double columns (one stripe) per column count, page cache warm; `FermionFileReader.open` with the file's " +
        "length known (no status call), then `readStripe` of 10 columns spread over the schema, one decode thread; " +
        "median of 101 runs after 200 warm-ups. Metadata bytes: footer, schema, stripe directory, CIT and CMBs " +
        "read (`metadataBytesRead`).",
      "",
      "| stored columns | file MB | open ms | metadata bytes on open | open + read 10 columns ms | metadata bytes with 10 columns read |",
      "|---|---:|---:|---:|---:|---:|"
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

package io.fermion.benchmarks

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._
import scala.util.Random

import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import io.fermion.core.schema.ArrowSchemaMapping
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** Core decode throughput, no Spark: reads every stripe of a 2M-row file (random and sorted
  * int64, low-cardinality int8 and strings, doubles, 20 % nulls) from the page cache, on one
  * thread, and prints the median time of 15 reads. For comparing the reader's per-page checks
  * between two builds (`benchmarks/run` of the same commit range), not a published figure.
  * Usage: benchmarks/runMain io.fermion.benchmarks.DecodeBenchmark [file] */
object DecodeBenchmark {
  def main(args: Array[String]): Unit = {
    val file = Paths.get(args.headOption.getOrElse("/tmp/fermion-decode-bench.fermion"))
    val conf = new Configuration()
    val allocator = new RootAllocator(Long.MaxValue)
    if (!Files.exists(file)) write(file, conf, allocator)
    val options = ReaderOptions(decodeThreads = 1)
    def once(): Long = {
      val t = System.nanoTime()
      val r = FermionFileReader.open(new Path(file.toUri), conf, options)
      try (0 until r.numStripes).foreach { s =>
          r.readStripe(s, r.schema.fields.indices, allocator).foreach(_.close())
        }
      finally r.close()
      System.nanoTime() - t
    }
    (0 until 5).foreach(_ => once())
    val times = (0 until 15).map(_ => once()).sorted
    println(
      f"decode of ${Files.size(file)}%,d bytes: median ${times(7) / 1e6}%.1f ms (min ${times.head / 1e6}%.1f, max ${times.last / 1e6}%.1f)"
    )
  }

  private def write(file: java.nio.file.Path, conf: Configuration, allocator: RootAllocator): Unit = {
    def f(n: String, t: ArrowType) = new Field(n, new FieldType(true, t, null), java.util.Collections.emptyList())
    val schema = new Schema(Seq(
      f("rnd", new ArrowType.Int(64, true)),
      f("sorted", new ArrowType.Int(64, true)),
      f("small", new ArrowType.Int(8, true)),
      f("x", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
      f("s", ArrowType.Utf8.INSTANCE)
    ).asJava)
    val w = FermionFileWriter.create(new Path(file.toUri), conf, ArrowSchemaMapping.toFermion(schema), WriterOptions())
    val rnd = new Random(1)
    val batch = 65536
    (0 until 2000000 by batch).foreach { start =>
      val root = VectorSchemaRoot.create(schema, allocator)
      try {
        root.allocateNew()
        (0 until batch).foreach { i =>
          val row = start + i
          def nul = rnd.nextInt(5) == 0
          if (nul) root.getVector(0).asInstanceOf[BigIntVector].setNull(i)
          else root.getVector(0).asInstanceOf[BigIntVector].setSafe(i, rnd.nextLong())
          root.getVector(1).asInstanceOf[BigIntVector].setSafe(i, row * 3L)
          if (nul) root.getVector(2).asInstanceOf[TinyIntVector].setNull(i)
          else root.getVector(2).asInstanceOf[TinyIntVector].setSafe(i, rnd.nextInt(7))
          if (nul) root.getVector(3).asInstanceOf[Float8Vector].setNull(i)
          else root.getVector(3).asInstanceOf[Float8Vector].setSafe(i, rnd.nextGaussian())
          if (nul) root.getVector(4).asInstanceOf[VarCharVector].setNull(i)
          else root.getVector(4).asInstanceOf[VarCharVector].setSafe(i, s"city-${rnd.nextInt(40)}".getBytes("UTF-8"))
        }
        root.getFieldVectors.asScala.foreach(_.setValueCount(batch))
        root.setRowCount(batch)
        w.write(root)
      } finally root.close()
    }
    w.close()
  }
}

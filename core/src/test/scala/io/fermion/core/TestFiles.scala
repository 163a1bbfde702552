package io.fermion.core

import java.nio.file.{Files, Path => JPath}

import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import io.fermion.core.schema.{ArrowSchemaMapping, FermionSchema}
import io.fermion.core.write.{FermionFileWriter, WriterOptions}
import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.{FieldVector, VectorSchemaRoot}
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import scala.jdk.CollectionConverters._

/** Temporary files and one-call write/read helpers shared by the core suites. */
object TestFiles {
  val conf = new Configuration()
  lazy val allocator: BufferAllocator = new RootAllocator(Long.MaxValue)

  def tempDir(prefix: String): JPath = Files.createTempDirectory(prefix)

  def write(file: JPath, root: VectorSchemaRoot, options: WriterOptions): FermionFileWriter = {
    val schema = ArrowSchemaMapping.toFermion(root.getSchema)
    val w = FermionFileWriter.create(new Path(file.toUri), conf, schema, options)
    w.write(root)
    w.close()
    w
  }

  def open(file: JPath, options: ReaderOptions = ReaderOptions()): FermionFileReader =
    FermionFileReader.open(new Path(file.toUri), conf, options)

  /** All rows of `columns`, stripe after stripe, as Java objects (Arrow's getObject). */
  def readAll(
      file: JPath,
      columns: IndexedSeq[Int] = null,
      options: ReaderOptions = ReaderOptions()
  ): IndexedSeq[IndexedSeq[AnyRef]] = {
    val r = open(file, options)
    try {
      val cols = Option(columns).getOrElse(r.schema.fields.indices)
      val values = cols.map(_ => IndexedSeq.newBuilder[AnyRef])
      for (s <- 0 until r.numStripes) {
        val vs = r.readStripe(s, cols, allocator)
        try vs.zip(values).foreach { case (v, b) =>
            (0 until v.getValueCount).foreach(i => b += normalize(v.getObject(i)))
          }
        finally vs.foreach(_.close())
      }
      values.map(_.result())
    } finally r.close()
  }

  def column(v: FieldVector): IndexedSeq[AnyRef] = (0 until v.getValueCount).map(i => normalize(v.getObject(i)))

  /** Arrow returns Text, byte[] and boxed floats; compare them by content. */
  def normalize(o: AnyRef): AnyRef = o match {
    case t: org.apache.arrow.vector.util.Text => t.toString
    case b: Array[Byte] => b.toSeq
    // Bit patterns, so NaN equals NaN and -0.0 differs from 0.0.
    case f: java.lang.Float => ("float", java.lang.Float.floatToRawIntBits(f))
    case d: java.lang.Double => ("double", java.lang.Double.doubleToRawLongBits(d))
    case m: java.util.Map[_, _] => m.asScala.map { case (k, v) =>
        normalize(k.asInstanceOf[AnyRef]) -> normalize(v.asInstanceOf[AnyRef])
      }.toMap
    case l: java.util.List[_] => l.asScala.map(v => normalize(v.asInstanceOf[AnyRef])).toIndexedSeq
    case other => other
  }
}

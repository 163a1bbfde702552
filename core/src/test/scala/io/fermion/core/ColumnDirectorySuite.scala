package io.fermion.core

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.{Files, Path => JPath}

import scala.util.Random

import io.fermion.core.errors.{FermionChecksumException, FermionFileException}
import io.fermion.core.layout.{ColumnDirectory, FileLayout, StripeDirectory}
import io.fermion.core.read.{FermionFileReader, ReaderOptions}
import io.fermion.core.schema.SchemaCodec
import io.fermion.core.write.WriterOptions
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

/** The column directory (format 1.5): a file opened for a few of its columns reads only their
  * schema nodes and CMB locations, returns what a whole open returns, and detects damage to every
  * byte it relies on. */
class ColumnDirectorySuite extends AnyFunSuite {
  import TestFiles._

  private val numColumns = 300
  private val rows = 700

  /** 300 columns: flat ones of every type, nested ones, one null in every row; 3 stripes. */
  private lazy val wide: JPath = {
    val rnd = new Random(15)
    val fields = (0 until numColumns).map { c =>
      if (c == 5) ArrowTestData.field(s"c$c", new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true))
      else NestedData.randomField(rnd, s"c$c", if (c % 4 == 0) 2 else 0)
    }
    val values =
      IndexedSeq.fill(rows)(fields.indices.map(c => if (c == 5) null else NestedData.randomValue(rnd, fields(c), 0.2)))
    val root = NestedData.root(fields, values)
    val file = tempDir("fermion-coldir").resolve("wide.fermion")
    try write(file, root, WriterOptions(stripeMaxRows = 250))
    finally root.close()
    file
  }

  private def openColumns(file: JPath, columns: Seq[Int], options: ReaderOptions = ReaderOptions()): FermionFileReader =
    FermionFileReader.openColumns(new Path(file.toUri), conf, options, -1L, columns)

  private def read(r: FermionFileReader, columns: IndexedSeq[Int]): IndexedSeq[IndexedSeq[AnyRef]] =
    (0 until r.numStripes).map { s =>
      val vs = r.readStripe(s, columns, allocator)
      try vs.flatMap(v => column(v) :+ v.getField.toString)
      finally vs.foreach(_.close())
    }

  private def whole(file: JPath, columns: IndexedSeq[Int]): IndexedSeq[IndexedSeq[AnyRef]] = {
    val r = open(file)
    try read(r, columns)
    finally r.close()
  }

  test("the writer's directory agrees with the CIT and the schema, column by column") {
    val r = open(wide)
    val bytes = Files.readAllBytes(wide)
    try {
      val cit = r.columnIndexTable
      val start = cit.cmbAreaStart - ColumnDirectory.byteSize(numColumns)
      val (schemaBytes, starts) = SchemaCodec.encodeWithNodeStarts(r.schema)
      assert(
        java.util.Arrays.equals(
          schemaBytes,
          java.util.Arrays.copyOfRange(bytes, r.footer.schemaOffset.toInt, r.footer.stripeDirOffset.toInt)
        )
      )
      (0 until numColumns).foreach { c =>
        val at = start + (c / 32) * (32 * 32 + 4) + (c % 32) * 32
        val g = ByteBuffer.wrap(bytes, at.toInt, 32).slice().order(ByteOrder.LITTLE_ENDIAN)
        assert(
          g.getLong(0) == cit.cmbOffset(c) && g.getInt(8) == cit.cmbLength(c) && g.getInt(12) == cit.cmbCrc32(c),
          c
        )
        assert(g.getInt(16) == starts(c) && g.getInt(20) == starts(c + 1) - starts(c), c)
        val node =
          SchemaCodec.decodeField(ByteBuffer.wrap(bytes, (r.footer.schemaOffset + g.getInt(16)).toInt, g.getInt(20)))
        assert(node == r.schema.fields(c), c)
      }
      assert(cit.cmbLength(5) == 0, "column 5 is null in every row: no CMB")
      assert(new String(bytes, (cit.cmbAreaStart - 4).toInt, 4, "US-ASCII") == "FCDR")
      assert((r.footer.settings & FileLayout.Settings.ColumnDirectory) != 0 && r.footer.minor >= 5)
    } finally r.close()
  }

  test("opened for a few columns: the same values as a whole open, a fraction of the metadata") {
    val rnd = new Random(3)
    val full = open(wide)
    val fullMeta =
      try { read(full, IndexedSeq(0)); full.metadataBytesRead }
      finally full.close()
    for (round <- 0 until 20) {
      val cols = IndexedSeq.fill(1 + rnd.nextInt(6))(rnd.nextInt(numColumns)).distinct :+ 5
      val r = openColumns(wide, cols)
      try {
        assert(r.openedColumns == cols.toSet, s"round $round opened through the directory")
        assert(read(r, cols) == whole(wide, cols), s"round $round, columns $cols")
        assert(r.metadataBytesRead < fullMeta / 3, s"${r.metadataBytesRead} of $fullMeta bytes")
        // A column not opened, and the schema, are still there: read on demand.
        val other = (cols.max + 1) % numColumns
        assert(read(r, IndexedSeq(other)) == whole(wide, IndexedSeq(other)))
        assert(r.schema.fields.size == numColumns)
      } finally r.close()
    }
  }

  test("opened for no column: footer and stripe directory alone, the rest on demand") {
    val whole = open(wide)
    val r = openColumns(wide, Nil)
    try {
      assert(r.openedColumns.isEmpty)
      // The 4 KiB tail, CIT.offset[0], the trailer and 3 stripe entries: not the schema or the CIT.
      assert(r.metadataBytesRead <= 4096 + 8 + 24 + 3 * 24, r.metadataBytesRead)
      assert(r.numRows == rows && r.numStripes == whole.numStripes)
      assert((0 until r.numStripes).map(r.stripeRowCount) == (0 until whole.numStripes).map(whole.stripeRowCount))
      assert(read(r, IndexedSeq(11)) == read(whole, IndexedSeq(11)))
    } finally { r.close(); whole.close() }
  }

  test("many columns, small metadata or an older file: the whole metadata is read") {
    val many = openColumns(wide, 0 until 100)
    try {
      assert(many.openedColumns.isEmpty)
      assert(read(many, IndexedSeq(3, 50)) == whole(wide, IndexedSeq(3, 50)))
    } finally many.close()
    val small = tempDir("fermion-coldir").resolve("small.fermion")
    val root = ArrowTestData.randomRoot(ArrowTestData.allTypes, 100, 1)
    try write(small, root, WriterOptions())
    finally root.close()
    val r = openColumns(small, Seq(1))
    try assert(r.openedColumns.isEmpty, "the tail read holds all the metadata")
    finally r.close()
  }

  /** Every byte the directory open relies on, flipped: an error, never other values. Every other
    * byte of the directory, flipped: the same values (it is not read). */
  test("a flipped byte anywhere in the directory, stripe directory or footer") {
    val bytes = Files.readAllBytes(wide)
    val base = open(wide)
    val (cmbAreaStart, footer) =
      try (base.columnIndexTable.cmbAreaStart, base.footer)
      finally base.close()
    val start = cmbAreaStart - ColumnDirectory.byteSize(numColumns)
    val cols = IndexedSeq(1, 37, 38, 299)
    val expected = whole(wide, cols)
    val groups = cols.map(_ / ColumnDirectory.GroupSize).toSet
    val trailerAt = cmbAreaStart - ColumnDirectory.TrailerSize
    // Groups (entries and their CRC): only those of the columns opened; the trailer: always.
    def relied(at: Long): Boolean = at >= trailerAt || groups.contains(((at - start) / (32 * 32 + 4)).toInt)
    val dir = (start until cmbAreaStart).toIndexedSeq
    val stripeDir =
      (footer.stripeDirOffset until footer.stripeDirOffset + footer.numStripes * StripeDirectory.EntrySize)
    val footerBytes = (bytes.length - 64L until bytes.length - 12L)
    val rnd = new Random(7)
    val positions = rnd.shuffle(dir).take(1500) ++ stripeDir ++ footerBytes
    val copy = tempDir("fermion-coldir").resolve("flipped.fermion")
    var detected = 0
    positions.foreach { at =>
      val b = bytes.clone()
      b(at.toInt) = (b(at.toInt) ^ (1 << rnd.nextInt(8))).toByte
      Files.write(copy, b)
      val outcome =
        try {
          val r = openColumns(copy, cols)
          try Right(read(r, cols))
          finally r.close()
        } catch { case e: FermionFileException => Left(e) }
      val mustFail = at >= footer.stripeDirOffset || relied(at)
      outcome match {
        case Left(e) =>
          assert(mustFail, s"byte $at is not read, yet: $e")
          assert(e.getMessage.contains("flipped.fermion"))
          detected += 1
        case Right(values) =>
          assert(!mustFail, s"byte $at was flipped and the open did not notice")
          assert(values == expected, s"byte $at")
      }
    }
    assert(detected > 100)
  }

  test("a flipped byte in an opened column's schema node: a checksum error naming it") {
    val bytes = Files.readAllBytes(wide)
    val r0 = open(wide)
    val at =
      try r0.footer.schemaOffset + SchemaCodec.encodeWithNodeStarts(r0.schema)._2(37) + 9
      finally r0.close()
    val b = bytes.clone(); b(at.toInt) = (b(at.toInt) ^ 0x20).toByte
    val copy = tempDir("fermion-coldir").resolve("node.fermion")
    Files.write(copy, b)
    val e = intercept[FermionChecksumException] { openColumns(copy, Seq(37)).close() }
    assert(e.getMessage.contains("schema node of column 37"))
  }
}

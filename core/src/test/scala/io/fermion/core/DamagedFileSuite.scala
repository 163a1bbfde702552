package io.fermion.core

import java.nio.file.{Files, Path => JPath}

import io.fermion.core.errors._
import io.fermion.core.layout.FileLayout
import io.fermion.core.write.WriterOptions
import org.scalatest.funsuite.AnyFunSuite

/** The format's four error classes, each raised by a real damaged file and naming it. */
class DamagedFileSuite extends AnyFunSuite {
  import TestFiles._

  private def goodFile(): JPath = {
    val file = tempDir("fermion-damage").resolve("good.fermion")
    val root = ArrowTestData.randomRoot(ArrowTestData.allTypes, 4000, 5, nullRate = 0.2)
    try write(file, root, WriterOptions(stripeMaxRows = 1000))
    finally root.close()
    file
  }

  private def damaged(name: String)(edit: Array[Byte] => Array[Byte]): JPath = {
    val src = goodFile()
    val dst = src.resolveSibling(name)
    Files.write(dst, edit(Files.readAllBytes(src)))
    dst
  }

  private def expectError[E <: FermionFileException](file: JPath)(implicit ct: scala.reflect.ClassTag[E]): E = {
    val e = intercept[FermionFileException](readAll(file))
    assert(ct.runtimeClass.isInstance(e), s"expected ${ct.runtimeClass.getSimpleName}, got $e")
    assert(e.getMessage.contains(file.getFileName.toString), s"message names the file: ${e.getMessage}")
    e.asInstanceOf[E]
  }

  test("truncated file: InvalidFermionFileException") {
    val f = damaged("truncated.fermion")(b => b.take(b.length - 100))
    val e = expectError[InvalidFermionFileException](f)
    assert(e.getMessage.contains("truncated or not a Fermion file"))
  }

  test("too short and not a Fermion file: InvalidFermionFileException") {
    expectError[InvalidFermionFileException](damaged("short.fermion")(_.take(20)))
    expectError[InvalidFermionFileException](damaged("garbage.fermion")(b => {
      val r = new scala.util.Random(1); val g = new Array[Byte](b.length); r.nextBytes(g); g
    }))
  }

  test("bytes lost from the middle: offsets beyond the end, FermionOffsetOutOfRangeException") {
    val f = damaged("shortened.fermion")(b => b.take(5000) ++ b.drop(25000))
    val e = expectError[FermionOffsetOutOfRangeException](f)
    assert(e.fileLength < e.offset + e.length)
  }

  test("a flipped bit in a data page: FermionChecksumException") {
    val f = damaged("bitflip.fermion")(b => {
      val c = b.clone(); c(FileLayout.HeaderSize + 200) = (c(FileLayout.HeaderSize + 200) ^ 0x10).toByte; c
    })
    val e = expectError[FermionChecksumException](f)
    assert(e.getMessage.contains("page"))
  }

  test("a flipped bit in the schema: FermionChecksumException on open") {
    val src = goodFile()
    val r = open(src)
    val schemaAt =
      try r.footer.schemaOffset.toInt
      finally r.close()
    val f = damaged("schemaflip.fermion")(b => { val c = b.clone(); c(schemaAt + 6) = (c(schemaAt + 6) ^ 1).toByte; c })
    expectError[FermionChecksumException](f)
  }

  test("a newer major version: UnsupportedFermionVersionException") {
    val f = damaged("v2.fermion")(b => { val c = b.clone(); c(c.length - 8) = 2; c(c.length - 7) = 0; c })
    val e = expectError[UnsupportedFermionVersionException](f)
    assert(e.major == 2)
  }

  test("a flipped footer setting: FermionChecksumException") {
    val f = damaged("settings.fermion")(b => {
      val c = b.clone(); c(c.length - 64 + 28) = (c(c.length - 64 + 28) ^ 1).toByte; c
    })
    expectError[FermionChecksumException](f)
  }

  test("a damaged CMB fails its own column only, even when all CMBs are loaded eagerly") {
    val src = goodFile()
    val r = open(src)
    val (cmbAt, good, bad) =
      try {
        val cit = r.footer.citOffset
        // column 3's CMB starts at CIT entry 3
        val b = java.nio.ByteBuffer.wrap(Files.readAllBytes(src)).order(java.nio.ByteOrder.LITTLE_ENDIAN)
        (b.getLong(cit.toInt + 3 * 8).toInt, 1, 3)
      } finally r.close()
    val f = damaged("cmbflip.fermion")(b => { val c = b.clone(); c(cmbAt + 9) = (c(cmbAt + 9) ^ 0x40).toByte; c })
    val eager = io.fermion.core.read.ReaderOptions(cmbEagerLoadThreshold = Long.MaxValue)
    assert(readAll(f, IndexedSeq(good), eager).head.size == 4000)
    val e = intercept[FermionChecksumException](readAll(f, IndexedSeq(bad), eager))
    assert(e.getMessage.contains("CMB of column"))
  }

  test("a page header claiming a huge raw size fails cleanly, without allocating it") {
    val src = goodFile()
    val bytes = Files.readAllBytes(src)
    // Pages lie back to back from byte 8: walk their headers to the first zstd page and make its
    // recorded raw length 1.9 GB.
    val b = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    var at = FileLayout.HeaderSize
    while (b.get(at + 16) != 1) at += 20 + b.getInt(at)
    val f = damaged("hugepage.fermion")(d => {
      val c = d.clone(); java.nio.ByteBuffer.wrap(c).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(at + 4, 1900000000);
      c
    })
    val e = expectError[InvalidFermionFileException](f)
    assert(e.getMessage.contains("records 1900000000 raw bytes"), e.getMessage)
  }

  test("a FULL chunk whose length is 0xFFFFFFFF lies outside its stripe (the all-null length is VALIDITY's only)") {
    val src = goodFile()
    val map = new io.fermion.core.fuzz.FileMap(Files.readAllBytes(src))
    val le = java.nio.ByteBuffer.wrap(map.bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    val full =
      map.fields.find(f => f.group == "full.length" && le.getInt(f.offset) > 0).getOrElse(fail("no FULL chunk"))
    val f = damaged("fulllength.fermion")(d => {
      val c = d.clone(); java.nio.ByteBuffer.wrap(c).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(full.offset, -1); c
    })
    // Checksums off: the CMB's own CRC would catch the edit first; the layout rule must hold alone.
    val e = intercept[InvalidFermionFileException](
      readAll(f, options = io.fermion.core.read.ReaderOptions(verifyChecksums = false))
    )
    assert(e.getMessage.contains("lies outside the stripe"), e.getMessage)
  }
}

package io.fermion.core

import java.nio.file.Files

import io.fermion.core.read.{ParallelDecode, ReaderOptions}
import io.fermion.core.write.WriterOptions
import org.scalatest.funsuite.AnyFunSuite

/** Decoding a stripe's columns on several threads gives exactly what one thread gives, and a
  * damaged column fails the same typed way. */
class ParallelDecodeSuite extends AnyFunSuite {
  import TestFiles._

  private def writeRandom(): java.nio.file.Path = {
    val root = ArrowTestData.randomRoot(ArrowTestData.allTypes, 30000, seed = 41)
    val file = tempDir("fermion-parallel").resolve("f.fermion")
    try write(
        file,
        root,
        WriterOptions(stripeMaxRows = 10000, pageRows = 1024, compression = io.fermion.core.codec.PageCodec.None)
      )
    finally root.close()
    file
  }

  test("every item runs once, on the caller too, and the first failure is rethrown") {
    val counts = new java.util.concurrent.atomic.AtomicIntegerArray(100)
    ParallelDecode.run(100, 4, Long.MaxValue)(i => counts.incrementAndGet(i))
    assert((0 until 100).forall(counts.get(_) == 1))
    val e = intercept[IllegalStateException](ParallelDecode.run(50, 4, Long.MaxValue)(i =>
      if (i == 17) throw new IllegalStateException("item 17")
    ))
    assert(e.getMessage == "item 17")
  }

  test("four decode threads read the same values as one") {
    val file = writeRandom()
    assert(Files.size(file) > ParallelDecode.MinParallelBytes * 3, "stripes large enough to decode in parallel")
    val one = readAll(file, options = ReaderOptions(decodeThreads = 1))
    val four = readAll(file, options = ReaderOptions(decodeThreads = 4))
    assert(one.map(_.size).forall(_ == 30000))
    assert(one == four)
  }

  test("a damaged page fails a parallel decode with the typed error") {
    val file = writeRandom()
    val r = open(file)
    val m = r.columnMetadata(r.schema.indexOf("i64").get).get
    val data = m.streamTypeIndexOf(io.fermion.core.layout.StreamType.Data)
    val at = m.fullOffset(data, 1) + 40
    r.close()
    val bytes = Files.readAllBytes(file)
    bytes(at.toInt) = (bytes(at.toInt) ^ 0x5a).toByte
    Files.write(file, bytes)
    intercept[io.fermion.core.errors.FermionChecksumException](readAll(
      file,
      options = ReaderOptions(decodeThreads = 4)
    ))
  }
}

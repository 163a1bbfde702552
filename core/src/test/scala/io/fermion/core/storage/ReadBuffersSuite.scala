package io.fermion.core.storage

import java.nio.ByteBuffer

import io.fermion.core.{ArrowTestData, TestFiles}
import io.fermion.core.read.ProjectedNode
import io.fermion.core.write.WriterOptions
import org.scalatest.funsuite.AnyFunSuite

class ReadBuffersSuite extends AnyFunSuite {
  private val KiB = 1 << 10

  test("a released array serves a later request of between half its length and its length") {
    val pool = new ReadBuffers(poolBytes = 1 << 20, minPooled = 64 * KiB)
    val a = pool.allocate(100 * KiB)
    assert(a.position() == 0 && a.limit() == 100 * KiB && a.capacity() == 100 * KiB)
    val array = a.array()
    pool.release(Seq(a))
    assert(pool.pooledBytes == 100 * KiB)
    assert(!(pool.allocate(40 * KiB).array() eq array), "too small a request for a 100 KiB array")
    assert(!(pool.allocate(120 * KiB).array() eq array), "too large a request")
    val b = pool.allocate(80 * KiB)
    assert(b.array() eq array, "the released array serves 80 KiB")
    assert(b.arrayOffset() == 0 && b.capacity() == 80 * KiB && b.limit() == 80 * KiB)
    assert(pool.pooledBytes == 0)
    assert(!(pool.allocate(80 * KiB).array() eq array), "an array serves one holder at a time")
  }

  test("small, offset, read-only and repeated buffers are not kept; the pool's size is bounded") {
    val pool = new ReadBuffers(poolBytes = 200 * KiB, minPooled = 64 * KiB)
    pool.release(Seq(ByteBuffer.allocate(32 * KiB)))
    assert(pool.pooledBytes == 0, "below the smallest pooled size")
    val shared = ByteBuffer.allocate(128 * KiB)
    pool.release(Seq(shared.position(8).slice(), shared.asReadOnlyBuffer(), ByteBuffer.allocateDirect(128 * KiB)))
    assert(pool.pooledBytes == 0, "views into an array, read-only and direct buffers are never reused")
    pool.release(Seq(shared, shared.duplicate()))
    assert(pool.pooledBytes == 128 * KiB, "one array given twice is kept once")
    pool.release(Seq(ByteBuffer.allocate(128 * KiB)))
    assert(pool.pooledBytes == 128 * KiB, "a second 128 KiB array exceeds the 200 KiB bound")
    pool.release(Seq(ByteBuffer.allocate(64 * KiB)))
    assert(pool.pooledBytes == 192 * KiB)
  }

  test("stripes read while the previous stripe's buffers return to the pool hold the file's values") {
    // Each stripe is fetched before the previous one is decoded (as a scan prefetches), so the
    // buffers of stripe s go back to the pool while stripe s + 1's reads are in flight and
    // serve stripe s + 2's.
    val file = TestFiles.tempDir("fermion-readbuf").resolve("t.fermion")
    val fields = ArrowTestData.allTypes
    val data = ArrowTestData.randomRoot(fields, 120000, 17, nullRate = 0.2)
    val expected =
      try {
        TestFiles.write(file, data, WriterOptions(stripeMaxRows = 20000))
        (0 until data.getFieldVectors.size).map(c => TestFiles.column(data.getVector(c)))
      } finally data.close()
    for (round <- 0 until 2) {
      val r = TestFiles.open(file)
      try {
        assert(r.numStripes == 6)
        val cols = expected.indices.map(c => c -> ProjectedNode.full(r.field(c)))
        val actual = expected.indices.map(_ => IndexedSeq.newBuilder[AnyRef])
        var next = r.fetch(0, cols)
        for (s <- 0 until r.numStripes) {
          val current = next
          if (s + 1 < r.numStripes) next = r.fetch(s + 1, cols)
          val vs = r.decode(current, TestFiles.allocator)
          try vs.zip(actual).foreach { case (v, b) => b ++= TestFiles.column(v) }
          finally vs.foreach(_.close())
          if (s == 0) intercept[IllegalStateException](r.decode(current, TestFiles.allocator))
        }
        expected.indices.foreach(c => assert(actual(c).result() == expected(c), s"round $round column $c"))
        assert(ReadBuffers.shared.pooledBytes > 0, "the stripes' buffers were handed back")
      } finally r.close()
    }
  }
}

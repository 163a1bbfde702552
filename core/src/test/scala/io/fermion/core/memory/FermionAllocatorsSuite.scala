package io.fermion.core.memory

import io.fermion.core.{ArrowTestData, TestFiles}
import io.fermion.core.write.WriterOptions
import org.apache.arrow.memory.util.MemoryUtil
import org.apache.arrow.vector.BigIntVector
import org.scalatest.funsuite.AnyFunSuite

import scala.jdk.CollectionConverters._

class FermionAllocatorsSuite extends AnyFunSuite {
  private val MiB = 1L << 20

  test("a released large buffer is reused by the next request of its size; small ones are not kept") {
    val pool = new ReusingAllocationManagerFactory(poolBytes = 16 * MiB, minPooled = MiB)
    val root = FermionAllocators.rootWith(pool, Long.MaxValue)
    try {
      val big = root.buffer(4 * MiB)
      val address = big.memoryAddress()
      big.close()
      assert(pool.pooledBytes == 4 * MiB, "the released 4 MiB buffer waits for reuse")
      val again = root.buffer(4 * MiB)
      assert(again.memoryAddress() == address, "the same block serves the same size again")
      assert(pool.pooledBytes == 0)
      again.close()
      root.buffer(MiB / 2).close()
      assert(pool.pooledBytes == 4 * MiB, "a small buffer is freed, not kept")
    } finally root.close()
  }

  test("at most poolBytes of released buffers are kept; vectors over reused memory hold what they are given") {
    val pool = new ReusingAllocationManagerFactory(poolBytes = 10 * MiB, minPooled = MiB)
    val root = FermionAllocators.rootWith(pool, 64 * MiB)
    try {
      val held = (0 until 4).map(_ => root.buffer(4 * MiB))
      held.foreach(_.close())
      assert(pool.pooledBytes == 8 * MiB, "two of the four 4 MiB buffers fit the 10 MiB pool")
      // A vector allocated over reused (dirty) memory starts zeroed and holds its values.
      for (round <- 0 until 3) {
        val v = new BigIntVector("v", root)
        try {
          v.allocateNew(400000)
          (0 until 400000).foreach(i => if (i % 3 != 0) v.set(i, i.toLong * round))
          v.setValueCount(400000)
          (0 until 400000).foreach { i =>
            if (i % 3 == 0) assert(v.isNull(i), s"round $round slot $i")
            else assert(v.get(i) == i.toLong * round)
          }
        } finally v.close()
      }
      assert(root.getAllocatedMemory == 0)
      // The root's limit still holds.
      intercept[org.apache.arrow.memory.OutOfMemoryException](root.buffer(65 * MiB))
    } finally root.close()
  }

  test("newRoot reuses buffers across roots (a partition reader's child allocators)") {
    val a = FermionAllocators.newRoot()
    val b = FermionAllocators.newRoot()
    try {
      val size = 3 * MiB + 4096 // a size no other test asks for
      val first = a.newChildAllocator("task", 0, Long.MaxValue)
      val buf = first.buffer(size)
      val address = buf.memoryAddress()
      buf.close()
      first.close()
      val again = b.buffer(size)
      assert(again.memoryAddress() == address)
      again.close()
    } finally { a.close(); b.close() }
  }

  test("columns decoded into reused memory that holds other bytes read back the file's values") {
    // The decoder does not zero value buffers it fills whole: memory reused from earlier vectors
    // (here overwritten with a pattern each round) must never show through.
    // Random values (PLAIN pages) and values from a small pool (encoded pages).
    for (valuePool <- Seq(0, 2)) {
      val file = TestFiles.tempDir("fermion-dirty").resolve("t.fermion")
      val data = ArrowTestData.randomRoot(ArrowTestData.allTypes, 3000, 5 + valuePool, nullRate = 0.3, valuePool)
      val expected =
        try {
          TestFiles.write(file, data, WriterOptions(stripeMaxRows = 1000, pageSize = 1024))
          (0 until data.getFieldVectors.size).map(c => TestFiles.column(data.getVector(c)))
        } finally data.close()
      val pool = new ReusingAllocationManagerFactory(poolBytes = 64 * MiB, minPooled = 1)
      val root = FermionAllocators.rootWith(pool, Long.MaxValue)
      val r = TestFiles.open(file)
      try {
        for (round <- 0 until 3) {
          val actual = expected.indices.map(_ => IndexedSeq.newBuilder[AnyRef])
          for (s <- 0 until r.numStripes) {
            val vs = r.readStripe(s, expected.indices, root)
            vs.zip(actual).foreach { case (v, b) => b ++= TestFiles.column(v) }
            vs.foreach { v =>
              v.getFieldBuffers.asScala.foreach(b =>
                MemoryUtil.setMemory(b.memoryAddress(), b.capacity(), (0xa5 ^ round).toByte)
              )
              v.close()
            }
          }
          expected.indices.foreach(c =>
            assert(actual(c).result() == expected(c), s"values from a pool of $valuePool, round $round, column $c")
          )
          assert(pool.pooledBytes > 0, "released buffers wait for reuse")
        }
      } finally { r.close(); root.close() }
    }
  }
}

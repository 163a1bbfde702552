package io.fermion.core.memory

import scala.util.Random

import io.fermion.core.{ArrowTestData, NestedData, TestFiles}
import io.fermion.core.write.WriterOptions
import org.apache.arrow.memory.util.MemoryUtil
import org.apache.arrow.vector.{BigIntVector, FieldVector}
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

  /** Reads every column of `file` three times through a pool that hands released buffers back,
    * overwriting every buffer of every vector (children too) with a pattern before it is released:
    * what the decoder leaves unwritten shows as wrong values. */
  private def assertReadsThroughDirtyMemory(
      file: java.nio.file.Path,
      expected: IndexedSeq[IndexedSeq[AnyRef]],
      clue: String
  ): Unit = {
    def dirty(v: FieldVector, round: Int): Unit = {
      v.getFieldBuffers.asScala.foreach(b =>
        MemoryUtil.setMemory(b.memoryAddress(), b.capacity(), (0xa5 ^ round).toByte)
      )
      v.getChildrenFromFields.asScala.foreach(dirty(_, round))
    }
    val pool = new ReusingAllocationManagerFactory(poolBytes = 64 * MiB, minPooled = 1)
    val root = FermionAllocators.rootWith(pool, Long.MaxValue)
    val r = TestFiles.open(file)
    try {
      for (round <- 0 until 3) {
        val actual = expected.indices.map(_ => IndexedSeq.newBuilder[AnyRef])
        for (s <- 0 until r.numStripes) {
          val vs = r.readStripe(s, expected.indices, root)
          vs.zip(actual).foreach { case (v, b) => b ++= TestFiles.column(v) }
          vs.foreach { v => dirty(v, round); v.close() }
        }
        expected.indices.foreach(c => assert(actual(c).result() == expected(c), s"$clue, round $round, column $c"))
        assert(pool.pooledBytes > 0, "released buffers wait for reuse")
      }
    } finally { r.close(); root.close() }
  }

  test("nested columns decoded into reused memory that holds other bytes read back the file's values") {
    // Lists, maps and structs get their own buffers unzeroed (their children allocate theirs).
    for (seed <- 1 to 4) {
      val rnd = new Random(seed)
      val fields = (0 until 3).map(i => NestedData.randomField(rnd, s"c$i", 1 + rnd.nextInt(3)))
      val rows = IndexedSeq.fill(600)(fields.map(f => NestedData.randomValue(rnd, f, 0.25)).toIndexedSeq)
      val file = TestFiles.tempDir("fermion-dirty-nested").resolve("n.fermion")
      val data = NestedData.root(fields, rows)
      val expected =
        try {
          TestFiles.write(file, data, WriterOptions(stripeMaxRows = 200, pageSize = 1024))
          fields.indices.map(c => TestFiles.column(data.getVector(c)))
        } finally data.close()
      assertReadsThroughDirtyMemory(file, expected, s"seed $seed")
    }
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
      assertReadsThroughDirtyMemory(file, expected, s"values from a pool of $valuePool")
    }
  }
}

package io.fermion.core.memory

import org.apache.arrow.vector.BigIntVector
import org.scalatest.funsuite.AnyFunSuite

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
}

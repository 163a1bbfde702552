package io.fermion.core.memory

import java.util.concurrent.{ConcurrentHashMap, ConcurrentLinkedDeque}
import java.util.concurrent.atomic.AtomicLong

import org.apache.arrow.memory.{AllocationManager, ArrowBuf, BufferAllocator, ReferenceManager}
import org.apache.arrow.memory.util.MemoryUtil

/** Arrow memory that is kept for reuse when released, for readers that allocate the same large
  * buffers stripe after stripe. Arrow's default manager hands buffers above its pool's chunk size
  * (a stripe's column: 8 MiB for a million `int64` values) to the C allocator and back on every
  * release; the C allocator then returns them to the operating system, and the next stripe pays a
  * page fault for every 4 KiB it touches (zeroing a new vector: about a fifth of a TPC-H Q6 scan's
  * time here). Here a released block of at least `minPooled` bytes waits, by exact size, for the
  * next request of that size, as long as the blocks waiting take at most `poolBytes` in all;
  * smaller blocks and the rest are freed at once. Memory comes from Arrow's `MemoryUtil`. */
final private[core] class ReusingAllocationManagerFactory(poolBytes: Long, minPooled: Long)
    extends AllocationManager.Factory {
  private val waiting = new ConcurrentHashMap[java.lang.Long, ConcurrentLinkedDeque[java.lang.Long]]
  private val waitingBytes = new AtomicLong

  /** Bytes of released blocks kept for reuse (tests, metrics). */
  def pooledBytes: Long = waitingBytes.get()

  override def create(accountingAllocator: BufferAllocator, size: Long): AllocationManager = {
    val reused = if (size >= minPooled) take(size) else 0L
    new ReusingAllocationManager(
      accountingAllocator,
      size,
      if (reused != 0L) reused else MemoryUtil.allocateMemory(size)
    )
  }

  override def empty(): ArrowBuf = ReusingAllocationManagerFactory.Empty

  private def take(size: Long): Long = {
    val q = waiting.get(size)
    val a = if (q == null) null else q.poll()
    if (a == null) 0L else { waitingBytes.addAndGet(-size); a.longValue }
  }

  private def release(size: Long, address: Long): Unit =
    if (size >= minPooled && waitingBytes.addAndGet(size) <= poolBytes)
      waiting.computeIfAbsent(size, _ => new ConcurrentLinkedDeque[java.lang.Long]).push(address)
    else {
      if (size >= minPooled) waitingBytes.addAndGet(-size)
      MemoryUtil.freeMemory(address)
    }

  final private class ReusingAllocationManager(accountingAllocator: BufferAllocator, size: Long, address: Long)
      extends AllocationManager(accountingAllocator) {
    override def getSize: Long = size
    override protected def memoryAddress(): Long = address
    override protected def release0(): Unit = release(size, address)
  }
}

private[core] object ReusingAllocationManagerFactory {
  private val Empty = new ArrowBuf(ReferenceManager.NO_OP, null, 0, MemoryUtil.allocateMemory(1))
}

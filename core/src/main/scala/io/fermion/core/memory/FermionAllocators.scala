package io.fermion.core.memory

import org.apache.arrow.memory.{AllocationManager, RootAllocator}

/** Arrow allocators for reading Fermion data.
  *
  * {{{
  * val allocator = FermionAllocators.newRoot()
  * try scan.batches(conf, allocator).foreach(batch => ...) finally allocator.close()
  * }}}
  */
object FermionAllocators {

  /** The most bytes of released buffers kept for reuse in a JVM, by all the roots made here. */
  val PoolBytes: Long = 256L << 20

  /** Buffers below this size are freed when released (the C allocator keeps small blocks itself). */
  val MinPooledBytes: Long = 1L << 20

  private[core] lazy val factory = new ReusingAllocationManagerFactory(PoolBytes, MinPooledBytes)

  /** A root allocator of at most `limit` bytes whose large buffers (1 MiB and more), once released,
    * are reused by the next request of the same size, in this root or another made here: a scan
    * allocates each stripe's vectors of the same sizes as the previous stripe's, and new memory
    * costs a page fault per 4 KiB touched. Up to [[PoolBytes]] of released buffers stay allocated
    * for the life of the JVM. */
  def newRoot(limit: Long = Long.MaxValue): RootAllocator =
    rootWith(factory, limit)

  /** A root allocator of `limit` bytes over `manager` (a plain one if this Arrow takes none). */
  private[memory] def rootWith(manager: AllocationManager.Factory, limit: Long): RootAllocator =
    withFactory.map(_(manager, limit)).getOrElse(new RootAllocator(limit))

  /** Arrow takes an allocation manager only through a configuration whose classes are package
    * private (`BaseAllocator.Config`), reached here by reflection; an Arrow without them gets
    * plain root allocators. */
  private lazy val withFactory: Option[(AllocationManager.Factory, Long) => RootAllocator] =
    try {
      val builderOf = classOf[RootAllocator].getMethod("configBuilder")
      builderOf.setAccessible(true)
      val builderClass = builderOf.getReturnType
      val setFactory = builderClass.getMethod("allocationManagerFactory", classOf[AllocationManager.Factory])
      val setLimit = builderClass.getMethod("maxAllocation", java.lang.Long.TYPE)
      val build = builderClass.getMethod("build")
      Seq(setFactory, setLimit, build).foreach(_.setAccessible(true))
      val create = classOf[RootAllocator].getConstructor(Class.forName("org.apache.arrow.memory.BaseAllocator$Config"))
      val make = (manager: AllocationManager.Factory, limit: Long) => {
        val b = builderOf.invoke(null)
        setFactory.invoke(b, manager)
        setLimit.invoke(b, java.lang.Long.valueOf(limit))
        create.newInstance(build.invoke(b)).asInstanceOf[RootAllocator]
      }
      make(factory, 1L).close() // fails here, not in a reader, if this Arrow differs
      Some(make)
    } catch { case _: ReflectiveOperationException | _: RuntimeException | _: LinkageError => None }
}

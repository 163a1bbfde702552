package io.fermion.benchmarks

import io.fermion.core.scan.{Scan, ScanBatch}
import org.apache.arrow.memory.BufferAllocator
import org.apache.hadoop.conf.Configuration

/** The core take timed inside the JVM, for `take_bench.py`: a clock read around the call from
  * Python would also count the two py4j round trips (about a millisecond on this machine), which
  * Lance's take, called in-process, does not pay. */
object TakeTimer {

  /** The batch a take returned and the nanoseconds the take took. */
  final case class Timed(nanos: Long, batch: ScanBatch)

  def takePositions(scan: Scan, positions: Array[Long], conf: Configuration, allocator: BufferAllocator): Timed = {
    val start = System.nanoTime()
    val batch = scan.takePositions(positions, conf, allocator)
    Timed(System.nanoTime() - start, batch)
  }
}

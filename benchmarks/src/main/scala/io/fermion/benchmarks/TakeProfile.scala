package io.fermion.benchmarks

import io.fermion.core.scan.{ReadAt, Snapshot}
import org.apache.arrow.memory.RootAllocator
import org.apache.hadoop.conf.Configuration

/** Times the core take in a plain JVM (no Spark, no Python): `TakeProfile <dataset> <rows per take>
  * <takes> [columns...]`. Prints the median and the mean time per take and the bytes read per row. */
object TakeProfile {
  def main(args: Array[String]): Unit = {
    val path = args(0)
    val k = args(1).toInt
    val takes = args(2).toInt
    val conf = new Configuration()
    val snapshot = Snapshot.open(path, conf, ReadAt.Latest)
    val b = snapshot.scanBuilder()
    if (args.length > 3) b.select(args.drop(3).toIndexedSeq: _*)
    val scan = b.build()
    val rows = snapshot.manifest.map(_.rowCount).get
    val rnd = new scala.util.Random(1)
    val allocator = new RootAllocator()
    val times = (0 until takes).map { i =>
      val positions = Array.fill(k)((rnd.nextDouble() * rows).toLong)
      val start = System.nanoTime()
      val batch = scan.takePositions(positions, conf, allocator)
      val ms = (System.nanoTime() - start) / 1e6
      val bytes = batch.metrics.bytesRead
      batch.close()
      if (i % math.max(1, takes / 5) == 0) println(f"take $i: $ms%.2f ms, ${bytes / k} bytes per row")
      ms
    }
    val sorted = times.drop(takes / 5).sorted
    println(
      f"median ${sorted(sorted.size / 2)}%.2f ms, mean ${sorted.sum / sorted.size}%.2f ms over ${sorted.size} takes of $k rows"
    )
    scan.close()
    allocator.close()
  }
}

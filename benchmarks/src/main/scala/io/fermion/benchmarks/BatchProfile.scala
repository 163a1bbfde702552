package io.fermion.benchmarks

import io.fermion.core.scan.{ReadAt, Snapshot}
import org.apache.arrow.memory.RootAllocator
import org.apache.hadoop.conf.Configuration

/** Times the core's batch lookup in a plain JVM (no Spark): `BatchProfile <dataset> <batch ids
  * below> <batches per lookup> <lookups> [columns...]`. Each lookup of random ids runs twice (the
  * first brings its pages into the OS page cache) and the second is timed; prints the median, the
  * rows and the pages decoded per lookup. */
object BatchProfile {
  def main(args: Array[String]): Unit = {
    val path = args(0)
    val idsBelow = args(1).toLong
    val k = args(2).toInt
    val lookups = args(3).toInt
    val conf = new Configuration()
    val snapshot = Snapshot.open(path, conf, ReadAt.Latest)
    val rnd = new scala.util.Random(1)
    val allocator = new RootAllocator()
    def once(ids: Set[Long]): (Long, Long, Long) = {
      val b = snapshot.scanBuilder().batches(ids)
      if (args.length > 4) b.select(args.drop(4).toIndexedSeq: _*)
      val scan = b.build()
      val start = System.nanoTime()
      val it = scan.batches(conf, allocator)
      var rows = 0L
      try while (it.hasNext) { val batch = it.next(); rows += batch.numRows; batch.close() }
      finally it.close()
      val nanos = System.nanoTime() - start
      scan.close()
      (nanos, rows, it.metrics.pagesDecoded)
    }
    val runs = (0 until lookups).map { i =>
      val ids = Set.fill(k)((rnd.nextDouble() * idsBelow).toLong)
      once(ids)
      val r = once(ids)
      if (i % math.max(1, lookups / 5) == 0) println(f"lookup $i: ${r._1 / 1e6}%.1f ms, ${r._2} rows, ${r._3} pages")
      r
    }
    val ms = runs.drop(lookups / 5).map(_._1 / 1e6).sorted
    println(f"median ${ms(ms.size / 2)}%.1f ms over ${ms.size} lookups of $k batches")
    allocator.close()
  }
}

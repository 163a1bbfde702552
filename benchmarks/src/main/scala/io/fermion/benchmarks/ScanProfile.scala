package io.fermion.benchmarks

import io.fermion.core.expr.{FilterExpr, FilterValue}
import io.fermion.core.scan.{ReadAt, ScanTaskReader, Snapshot}
import org.apache.arrow.memory.RootAllocator
import org.apache.hadoop.conf.Configuration

/** Times TPC-H Q6's scan of `lineitem` in the core, without Spark: `ScanProfile <lineitem dataset>
  * <runs> [threads]`. The filter and columns are those Spark pushes for Q6, its tasks read by
  * `threads` (2) threads at once as Spark's local[2] does; prints each run's time, the rows
  * returned and the median. */
object ScanProfile {
  def main(args: Array[String]): Unit = {
    import FilterExpr._
    val conf = new Configuration()
    val snapshot = Snapshot.open(args(0), conf, ReadAt.Latest)
    val runs = args(1).toInt
    val threads = if (args.length > 2) args(2).toInt else 2
    val allocator = new RootAllocator()
    def lit(x: Long) = FilterValue.Integral(x)
    val q6 = Seq[FilterExpr](
      IsNotNull("l_shipdate"),
      IsNotNull("l_discount"),
      IsNotNull("l_quantity"),
      Compare("l_shipdate", GtEq, lit(8766)),
      Compare("l_shipdate", Lt, lit(9131)),
      Compare("l_discount", GtEq, lit(5)),
      Compare("l_discount", LtEq, lit(7)),
      Compare("l_quantity", Lt, lit(2400))
    ).reduce(And(_, _))
    val times = (0 until runs).map { i =>
      val scan = snapshot.scanBuilder().select("l_extendedprice", "l_discount").filter(q6).build()
      val start = System.nanoTime()
      // Tasks as Spark runs them: `threads` at once, each taking the next task left.
      val tasks = new java.util.concurrent.ConcurrentLinkedQueue(java.util.Arrays.asList(scan.planTasks(): _*))
      val rows = new java.util.concurrent.atomic.AtomicLong
      val pages = new java.util.concurrent.atomic.AtomicLong
      val workers = (0 until threads).map { _ =>
        new Thread(() => {
          var task = tasks.poll()
          while (task != null) {
            val reader = new ScanTaskReader(scan.plan, task, conf, allocator)
            try while (reader.next()) rows.addAndGet(reader.batch.numRows)
            finally reader.close()
            pages.addAndGet(reader.metrics.pagesDecoded)
            task = tasks.poll()
          }
        })
      }
      workers.foreach(_.start())
      workers.foreach(_.join())
      val ms = (System.nanoTime() - start) / 1e6
      scan.close()
      println(f"run $i: $ms%.1f ms, $rows rows, $pages pages")
      ms
    }
    val sorted = times.drop(runs / 4).sorted
    println(f"median ${sorted(sorted.size / 2)}%.1f ms, fastest ${sorted.head}%.1f ms")
    allocator.close()
  }
}

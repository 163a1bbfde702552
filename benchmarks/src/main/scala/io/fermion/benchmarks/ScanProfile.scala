package io.fermion.benchmarks

import io.fermion.core.expr.{FilterExpr, FilterValue}
import io.fermion.core.scan.{ReadAt, ScanTaskReader, Snapshot}
import org.apache.arrow.memory.RootAllocator
import org.apache.hadoop.conf.Configuration

/** Times a TPC-H query's scan of `lineitem` in the core, without Spark: `ScanProfile <lineitem
  * dataset> <runs> [threads] [q6|q20|q3|q19]`. The filter and columns are those Spark pushes for the
  * query (Q6 by default), its tasks read by `threads` (2) threads at once as Spark's local[2] does;
  * prints each run's time, the rows returned and the median. */
object ScanProfile {
  def main(args: Array[String]): Unit = {
    import FilterExpr._
    val conf = new Configuration()
    val snapshot = Snapshot.open(args(0), conf, ReadAt.Latest)
    val runs = args(1).toInt
    val threads = if (args.length > 2) args(2).toInt else 2
    val shape = if (args.length > 3) args(3) else "q6"
    val allocator = new RootAllocator()
    def lit(x: Long) = FilterValue.Integral(x)
    val shipped1994 = Seq[FilterExpr](
      IsNotNull("l_shipdate"),
      Compare("l_shipdate", GtEq, lit(8766)),
      Compare("l_shipdate", Lt, lit(9131))
    )
    // TPC-H queries' scans of lineitem: the filter and columns Spark pushes.
    val (columns, filter) = shape match {
      case "q6" =>
        Seq("l_extendedprice", "l_discount") -> (shipped1994 ++ Seq(
          IsNotNull("l_discount"),
          IsNotNull("l_quantity"),
          Compare("l_discount", GtEq, lit(5)),
          Compare("l_discount", LtEq, lit(7)),
          Compare("l_quantity", Lt, lit(2400))
        ))
      case "q20" => Seq("l_partkey", "l_suppkey", "l_quantity") ->
          (shipped1994 ++ Seq(IsNotNull("l_partkey"), IsNotNull("l_suppkey")))
      case "q3" => Seq("l_orderkey", "l_extendedprice", "l_discount", "l_shipdate") ->
          Seq(IsNotNull("l_shipdate"), Compare("l_shipdate", Gt, lit(9204)), IsNotNull("l_orderkey"))
      case "q19" =>
        def bytes(s: String) = FilterValue.Bytes(s.getBytes(java.nio.charset.StandardCharsets.UTF_8))
        def between(lo: Long, hi: Long): FilterExpr =
          And(Compare("l_quantity", GtEq, lit(lo)), Compare("l_quantity", LtEq, lit(hi)))
        // The scan takes the filter over exactly (it keeps 2 % of the rows): Spark prunes the strings.
        Seq("l_partkey", "l_quantity", "l_extendedprice", "l_discount") -> Seq(
          IsNotNull("l_shipinstruct"),
          In("l_shipmode", IndexedSeq(bytes("AIR"), bytes("AIR REG"))),
          Compare("l_shipinstruct", Eq, bytes("DELIVER IN PERSON")),
          IsNotNull("l_partkey"),
          Or(Or(between(100, 1100), between(1000, 2000)), between(2000, 3000))
        )
      case other => throw new IllegalArgumentException(s"unknown shape $other (q6, q20, q3, q19)")
    }
    val times = (0 until runs).map { i =>
      val scan = snapshot.scanBuilder().select(columns: _*).filter(filter.reduce(And(_, _))).build()
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

package io.fermion.core.read

import java.util.concurrent.{CountDownLatch, Executors, ThreadFactory}
import java.util.concurrent.atomic.{AtomicInteger, AtomicReference}

/** Decodes the columns of one stripe (or reads the files of a take) on several threads. The calling
  * thread always works too, and helpers only take columns nobody has started: when the shared pool
  * is busy (every core already runs a task), the caller decodes everything itself and waits for no
  * one. So parallelism costs nothing when the cluster is saturated and cuts latency when a query
  * has fewer tasks than cores. */
private[core] object ParallelDecode {

  /** Stripes with less than this many bytes to decode stay on the calling thread. */
  val MinParallelBytes: Long = 256L << 10

  /** Items of [[runWaiting]] in flight at once at most (they mostly wait for reads). */
  val MaxWaitingThreads: Int = 16

  private def daemons(name: String): ThreadFactory = new ThreadFactory {
    private val n = new AtomicInteger
    def newThread(r: Runnable): Thread = {
      val t = new Thread(r, s"$name-${n.incrementAndGet()}")
      t.setDaemon(true)
      t
    }
  }

  private lazy val pool =
    Executors.newFixedThreadPool(math.max(1, Runtime.getRuntime.availableProcessors()), daemons("fermion-decode"))

  // Threads that mostly wait for storage: more of them than cores keeps several reads in flight.
  private lazy val waitingPool = Executors.newCachedThreadPool(daemons("fermion-read"))

  /** Runs `work(0 until items)`, each exactly once, on up to `threads` threads including the
    * caller; rethrows the first failure after every started item has finished. */
  def run(items: Int, threads: Int, bytes: Long)(work: Int => Unit): Unit =
    if (bytes < MinParallelBytes) runOn(pool, items, 1)(work) else runOn(pool, items, threads)(work)

  /** [[run]] for items that mostly wait for reads (one file each of a take): up to
    * [[MaxWaitingThreads]] at once, whatever the number of cores. */
  def runWaiting(items: Int)(work: Int => Unit): Unit = runOn(waitingPool, items, MaxWaitingThreads)(work)

  private def runOn(pool: java.util.concurrent.ExecutorService, items: Int, threads: Int)(work: Int => Unit): Unit = {
    if (threads <= 1 || items <= 1) {
      var i = 0; while (i < items) { work(i); i += 1 }; return
    }
    val next = new AtomicInteger
    val done = new CountDownLatch(items)
    val failure = new AtomicReference[Throwable]
    def drain(): Unit = {
      var i = next.getAndIncrement()
      while (i < items) {
        try { if (failure.get() == null) work(i) }
        catch { case t: Throwable => failure.compareAndSet(null, t) }
        finally done.countDown()
        i = next.getAndIncrement()
      }
    }
    (1 until math.min(threads, items)).foreach(_ => pool.execute(() => drain()))
    drain()
    done.await()
    val t = failure.get()
    if (t != null) throw t
  }
}

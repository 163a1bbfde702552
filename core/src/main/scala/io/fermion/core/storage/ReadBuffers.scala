package io.fermion.core.storage

import java.nio.ByteBuffer

/** Heap arrays that ranges of a file are read into, kept once a stripe's bytes are decoded for the
  * next read of a similar size. A new array is zeroed by the JVM before the read overwrites it: a
  * quarter of the time of decoding a PLAIN `int64` column from the page cache. An array of at
  * least `minPooled` bytes comes back through [[release]] only from a caller that keeps no view of
  * it; it then serves a later request of `n` bytes when `n <= length <= 2n` (the closest length
  * first), as long as the arrays waiting take at most `poolBytes` in all. */
final private[core] class ReadBuffers(poolBytes: Long, minPooled: Int) {
  private val waiting = new java.util.TreeMap[Integer, java.util.ArrayDeque[Array[Byte]]]
  private var waitingBytes = 0L

  /** Bytes of arrays kept for reuse (tests). */
  def pooledBytes: Long = synchronized(waitingBytes)

  /** A buffer of `n` bytes (position 0, limit and capacity `n`), its content undefined. */
  def allocate(n: Int): ByteBuffer = {
    val reused = if (n >= minPooled) take(n) else null
    if (reused == null) ByteBuffer.allocate(n) else ByteBuffer.wrap(reused, 0, n).slice()
  }

  private def take(n: Int): Array[Byte] = synchronized {
    val e = waiting.ceilingEntry(n)
    if (e == null || e.getKey.intValue / 2 > n) null
    else {
      val a = e.getValue.poll()
      if (e.getValue.isEmpty) waiting.remove(e.getKey)
      waitingBytes -= a.length
      a
    }
  }

  /** Takes back the arrays under `buffers` (heap buffers starting at their array's first byte; the
    * others, and an array given twice, are left to the garbage collector). */
  def release(buffers: Iterable[ByteBuffer]): Unit = {
    val seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap[Array[Byte], java.lang.Boolean])
    buffers.foreach { b =>
      if (b.hasArray && !b.isReadOnly && b.arrayOffset == 0 && b.array.length >= minPooled && seen.add(b.array))
        put(b.array)
    }
  }

  private def put(a: Array[Byte]): Unit = synchronized {
    if (waitingBytes + a.length <= poolBytes) {
      waiting.computeIfAbsent(a.length, _ => new java.util.ArrayDeque[Array[Byte]]).push(a)
      waitingBytes += a.length
    }
  }
}

private[core] object ReadBuffers {

  /** The JVM's pool: at most 64 MiB (and a 32nd of the heap) of arrays of 64 KiB and more. */
  lazy val shared: ReadBuffers =
    new ReadBuffers(math.min(64L << 20, Runtime.getRuntime.maxMemory / 32), 64 << 10)
}

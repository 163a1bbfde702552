package io.fermion.core.codec

import com.github.luben.zstd.{ZstdDecompressCtx, Zstd => ZstdJni}

/** General-purpose compression applied to a page after its encoding. The codec id is stored in
  * the page header, so every page can choose independently. */
private[core] object PageCodec {
  val None: Int = 0
  val Zstd: Int = 1

  /** zstd in independent blocks behind a block table ([[ZstdBlocks]]): chosen by the writer's
    * `compressionBlockSize`, never named by the `compression` option. */
  val ZstdBlocks: Int = 2

  def name(id: Int): String = id match {
    case None => "none"; case Zstd => "zstd"; case ZstdBlocks => "zstd-blocks"; case other => s"unknown($other)"
  }

  def parse(name: String): Int = name.toLowerCase(java.util.Locale.ROOT) match {
    case "none" | "uncompressed" => None
    case "zstd" => Zstd
    case other => throw new IllegalArgumentException(s"unknown compression codec '$other' (expected zstd or none)")
  }

  def compress(codec: Int, src: Array[Byte], off: Int, len: Int, level: Int): Array[Byte] = codec match {
    case Zstd =>
      val dst = new Array[Byte](ZstdJni.compressBound(len.toLong).toInt)
      val n = ZstdJni.compressByteArray(dst, 0, dst.length, src, off, len, level)
      if (ZstdJni.isError(n)) throw new IllegalStateException(s"zstd compression failed: ${ZstdJni.getErrorName(n)}")
      java.util.Arrays.copyOf(dst, n.toInt)
    case _ => throw new IllegalArgumentException(s"cannot compress with codec ${name(codec)}")
  }

  /** Whether the compressed frame announces `expected` bytes (checked before any buffer of that size
    * is allocated, since page headers carry no CRC). A frame that does not announce its size passes. */
  def announcesSize(codec: Int, src: Array[Byte], off: Int, len: Int, expected: Int): Boolean = codec match {
    case Zstd =>
      // zstd-jni throws on some malformed input: damage is an answer of "no", never an exception.
      try {
        val size = ZstdJni.getFrameContentSize(src, off, len)
        size == expected || size == -1L // -1: ZSTD_CONTENTSIZE_UNKNOWN
      } catch { case _: RuntimeException => false }
    case _ => true
  }

  // A zstd decompression context is a native allocation of about 100 KiB: creating one per page (as
  // Zstd.decompressByteArray does) cost a take more than decompressing its small pages. Contexts are
  // borrowed and returned; one that saw an error is closed.
  private val idleContexts = new java.util.concurrent.ArrayBlockingQueue[ZstdDecompressCtx](64)

  /** Decompresses into `dst(dstOff until dstOff + expected)`; false on corrupt input or any other length. */
  def decompress(
      codec: Int,
      src: Array[Byte],
      off: Int,
      len: Int,
      dst: Array[Byte],
      expected: Int,
      dstOff: Int = 0
  ): Boolean =
    codec match {
      case Zstd =>
        // zstd-jni raises ZstdException on a corrupt frame (e.g. "Destination buffer is too small").
        val ctx = Option(idleContexts.poll()).getOrElse(new ZstdDecompressCtx)
        var reusable = false
        try {
          val n = ctx.decompressByteArray(dst, dstOff, expected, src, off, len)
          reusable = true
          n == expected
        } catch { case _: RuntimeException => false }
        finally if (!(reusable && idleContexts.offer(ctx))) ctx.close()
      case _ => false
    }
}

package io.fermion.core.codec

import com.github.luben.zstd.{ZstdCompressCtx, ZstdDecompressCtx, ZstdDictCompress, ZstdDictDecompress, Zstd => ZstdJni}

/** General-purpose compression applied to a page after its encoding. The codec id is stored in
  * the page header, so every page can choose independently. */
private[core] object PageCodec {
  val None: Int = 0
  val Zstd: Int = 1

  /** zstd in independent blocks behind a block table ([[ZstdBlocks]]): chosen by the writer's
    * `compressionBlockSize`, never named by the `compression` option. */
  val ZstdBlocks: Int = 2

  /** zstd blocks primed with the first block (format 1.6): as [[ZstdBlocks]], but every block after
    * the first is compressed with the first block's raw bytes as a raw-content dictionary, so small
    * blocks compress about as well as the whole page while a take still decompresses two blocks. */
  val ZstdPrimedBlocks: Int = 3

  def name(id: Int): String = id match {
    case None => "none"; case Zstd => "zstd"; case ZstdBlocks => "zstd-blocks"
    case ZstdPrimedBlocks => "zstd-primed-blocks"; case other => s"unknown($other)"
  }

  /** Whether `len` bytes at `b(off)` begin with zstd's dictionary magic 0xEC30A437 (RFC 8878 5):
    * zstd-jni's dictionary loaders take such bytes for a structured dictionary, not raw content, so
    * a prime that starts with it is neither written nor accepted (docs/format.md 5.6). */
  def startsWithDictionaryMagic(b: Array[Byte], off: Int, len: Int): Boolean =
    len >= 4 && b(off) == 0x37.toByte && b(off + 1) == 0xa4.toByte && b(off + 2) == 0x30.toByte &&
      b(off + 3) == 0xec.toByte

  /** Compresses blocks with `prime` as a raw-content dictionary, at `level`; native state, closed
    * after the page. */
  final class PrimedCompressor(prime: Array[Byte], off: Int, len: Int, level: Int) extends AutoCloseable {
    require(!startsWithDictionaryMagic(prime, off, len), "a prime must not start with the zstd dictionary magic")
    private val dict = new ZstdDictCompress(prime, off, len, level)
    private val ctx = new ZstdCompressCtx().setLevel(level).setContentSize(true).setDictID(false).loadDict(dict)

    def compress(src: Array[Byte], srcOff: Int, srcLen: Int): Array[Byte] = {
      val dst = new Array[Byte](ZstdJni.compressBound(srcLen.toLong).toInt)
      val n = ctx.compressByteArray(dst, 0, dst.length, src, srcOff, srcLen)
      java.util.Arrays.copyOf(dst, n)
    }

    def close(): Unit = { ctx.close(); dict.close() }
  }

  /** Decompresses frames written by a [[PrimedCompressor]] with the same prime, for one page: it
    * borrows one context and loads the prime into it once, for all of the page's blocks. */
  final class PrimedDecompressor(prime: Array[Byte], off: Int, len: Int) extends AutoCloseable {
    private val dict = new ZstdDictDecompress(prime, off, len)
    private val ctx = Option(primedContexts.poll()).getOrElse(new ZstdDecompressCtx).loadDict(dict)
    private var reusable = true

    /** Into `dst(dstOff until dstOff + expected)`; false on corrupt input or any other length. */
    def decompress(src: Array[Byte], srcOff: Int, srcLen: Int, dst: Array[Byte], dstOff: Int, expected: Int): Boolean =
      try ctx.decompressByteArray(dst, dstOff, expected, src, srcOff, srcLen) == expected
      catch { case _: RuntimeException => reusable = false; false }

    /** Returns the context (each borrower loads its own prime before use) and frees the prime. */
    def close(): Unit = {
      if (!(reusable && primedContexts.offer(ctx))) ctx.close()
      dict.close()
    }
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
  // Contexts of primed frames hold a dictionary reference: a pool of their own, each borrower loads its own.
  private val primedContexts = new java.util.concurrent.ArrayBlockingQueue[ZstdDecompressCtx](64)

  /** Runs `f` with a borrowed context; false (and the context closed) if zstd-jni throws, as it does
    * on a corrupt frame (e.g. "Destination buffer is too small"). */
  private def withContext(f: ZstdDecompressCtx => Boolean): Boolean = {
    val ctx = Option(idleContexts.poll()).getOrElse(new ZstdDecompressCtx)
    var reusable = false
    try { val ok = f(ctx); reusable = true; ok }
    catch { case _: RuntimeException => false }
    finally if (!(reusable && idleContexts.offer(ctx))) ctx.close()
  }

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
      case Zstd => withContext(_.decompressByteArray(dst, dstOff, expected, src, off, len) == expected)
      case _ => false
    }
}

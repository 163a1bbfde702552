package io.fermion.core

import java.nio.ByteBuffer

import scala.util.Random

import io.fermion.core.bytes.GrowableBytes
import io.fermion.core.codec.{PageCodec, ZstdBlocks}
import org.scalatest.funsuite.AnyFunSuite

/** The two block codecs on their own: `zstd-primed-blocks` (1.6) needs the first block's bytes to
  * decompress later blocks and compresses text better than `zstd-blocks`; a first block that starts
  * with zstd's dictionary magic is never used as a prime (docs/format.md 5.6). */
class ZstdBlocksSuite extends AnyFunSuite {
  // A vocabulary larger than a block holds, as in TPC-H's comments.
  private val words = {
    val rnd = new Random(0)
    IndexedSeq.fill(600)(Seq.fill(3 + rnd.nextInt(8))(('a' + rnd.nextInt(26)).toChar).mkString)
  }

  /** Text like TPC-H comments: words drawn at random. */
  private def text(bytes: Int, seed: Int): Array[Byte] = {
    val rnd = new Random(seed)
    val sb = new StringBuilder
    while (sb.length < bytes) sb.append(words(rnd.nextInt(words.size))).append(if (rnd.nextInt(7) == 0) ". " else " ")
    sb.toString.take(bytes).getBytes("UTF-8")
  }

  private def compress(body: Array[Byte], blockSize: Int, primed: Boolean): (Int, ZstdBlocks.Table, Array[Byte]) = {
    val out = new GrowableBytes(1024)
    val codec = ZstdBlocks.compress(body, 0, body.length, blockSize, 3, primed, checksums = true, out)
    val payload = java.util.Arrays.copyOf(out.array, out.length)
    val table = ZstdBlocks.parseTable(
      ByteBuffer.wrap(payload),
      0,
      payload.length,
      payload.length,
      body.length,
      codec == PageCodec.ZstdPrimedBlocks
    ) match {
      case Right(Some(t)) => t
      case other => fail(s"no table: $other")
    }
    (codec, table, payload)
  }

  /** Decodes every block in order, priming with block 0 as a reader of the whole page does. */
  private def decodeAll(table: ZstdBlocks.Table, payload: Array[Byte]): Array[Byte] = {
    val raw = new Array[Byte](table.bodyLength)
    lazy val prime = ZstdBlocks.prime(table, raw, 0).fold(why => fail(why), identity)
    for (i <- 0 until table.blocks)
      assert(ZstdBlocks.decodeBlock(table, i, payload, table.starts(i), raw, i * table.blockSize, prime), s"block $i")
    raw
  }

  test("primed blocks round-trip, and are at least a tenth smaller than blocks alone on text") {
    for ((size, seed) <- Seq((100000, 1), (12001, 2), (65536, 3))) {
      val body = text(size, seed)
      val (pc, pt, pp) = compress(body, 4096, primed = true)
      val (ac, at, ap) = compress(body, 4096, primed = false)
      assert(pc == PageCodec.ZstdPrimedBlocks && ac == PageCodec.ZstdBlocks)
      assert(pt.primed && !at.primed && pt.blocks == at.blocks)
      assert(decodeAll(pt, pp).sameElements(body) && decodeAll(at, ap).sameElements(body))
      assert(pp.length * 10 < ap.length * 9, s"$size bytes: primed ${pp.length}, alone ${ap.length}")
    }
  }

  test("a later primed block decompresses only with the first block's bytes as its prime") {
    val body = text(40000, 4)
    val (_, t, payload) = compress(body, 4096, primed = true)
    val i = 5
    assert(t.needsPrime(i) && !t.needsPrime(0))
    val out = new Array[Byte](t.rawSize(i))
    // Without a prime (a plain zstd frame reader) the block does not decode to its bytes.
    val alone = PageCodec.decompress(PageCodec.Zstd, payload, t.starts(i), t.storedSize(i), out, out.length)
    assert(!alone || !out.sameElements(body.slice(i * 4096, (i + 1) * 4096)))
    // With another block's bytes as the prime, neither.
    val wrong = new PageCodec.PrimedDecompressor(body, 4096, 4096)
    try {
      val ok = wrong.decompress(payload, t.starts(i), t.storedSize(i), out, 0, out.length)
      assert(!ok || !out.sameElements(body.slice(i * 4096, (i + 1) * 4096)))
    } finally wrong.close()
    val first = new Array[Byte](t.rawSize(0))
    assert(ZstdBlocks.decodeBlock(t, 0, payload, t.starts(0), first, 0, fail("block 0 needs no prime")))
    val prime = ZstdBlocks.prime(t, first, 0).fold(why => fail(why), identity)
    try assert(ZstdBlocks.decodeBlock(t, i, payload, t.starts(i), out, 0, prime))
    finally prime.close()
    assert(out.sameElements(body.slice(i * 4096, (i + 1) * 4096)))
  }

  test("a first block starting with zstd's dictionary magic is not used as a prime, nor accepted as one") {
    val magic = Array(0x37, 0xa4, 0x30, 0xec).map(_.toByte)
    val body = magic ++ text(30000, 5)
    val (codec, t, payload) = compress(body, 4096, primed = true)
    assert(codec == PageCodec.ZstdBlocks && !t.primed)
    assert(decodeAll(t, payload).sameElements(body))
    // A reader meets the magic in a primed table's first block: rejected by name.
    val primedTable = t.copy(primed = true)
    val why = ZstdBlocks.prime(primedTable, body, 0).left.getOrElse(fail("accepted"))
    assert(why.contains("dictionary magic"), why)
  }

  test("pages a prime does not make smaller are stored as zstd-blocks") {
    // Every block repeats within itself and shares nothing with block 0.
    val rnd = new Random(7)
    val body =
      Array.tabulate(8)(_ => Array.fill(64)(rnd.nextInt(256).toByte)).flatMap(chunk => Array.fill(64)(chunk).flatten)
    val (codec, t, payload) = compress(body, 4096, primed = true)
    assert(codec == PageCodec.ZstdBlocks && t.blocks == 8)
    assert(decodeAll(t, payload).sameElements(body))
  }

  test("one block needs no prime: the writer then stores zstd-blocks") {
    val body = text(3000, 6)
    val (codec, t, payload) = compress(body, 4096, primed = true)
    assert(codec == PageCodec.ZstdBlocks && t.blocks == 1)
    assert(decodeAll(t, payload).sameElements(body))
  }
}

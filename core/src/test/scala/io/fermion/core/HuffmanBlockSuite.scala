package io.fermion.core

import java.nio.{ByteBuffer, ByteOrder}

import scala.util.Random

import io.fermion.core.bytes.GrowableBytes
import io.fermion.core.encoding._
import org.scalatest.funsuite.AnyFunSuite

/** The Huffman block (format 5.7.1): values of every magnitude round-trip at every mantissa width,
  * the writer's size is exact and near the entropy of the bins, a block written by hand from the
  * format's text decodes, and damaged blocks fail with MalformedPageException. */
class HuffmanBlockSuite extends AnyFunSuite {

  private def encode(u: Array[Long], m: Int): Array[Byte] = {
    val e = new HuffmanEncoder
    val size = e.measure(u, u.length, m)
    val out = new GrowableBytes()
    e.write(u, u.length, out)
    assert(out.length == size, s"measured $size bytes, wrote ${out.length}")
    java.util.Arrays.copyOf(out.array, out.length)
  }

  private def decode(body: Array[Byte], k: Int, add: Long = 0L): Array[Long] = {
    val out = new Array[Long](k)
    val r = new EncodedReader(body, 0, body.length)
    HuffmanBlock.decode(r, k, out, new HuffmanScratch, "block", add)
    assert(r.remaining == 0, "the block is consumed exactly")
    out
  }

  private def distributions(rnd: Random): Seq[(String, Array[Long])] = {
    val n = 1 + rnd.nextInt(9000)
    Seq(
      "uniform small" -> Array.fill(n)(rnd.nextInt(50).toLong),
      "geometric" -> Array.fill(n)((math.log(rnd.nextDouble()) / math.log(0.7)).toLong),
      "triangular differences" -> Array.fill(n) { val d = rnd.nextInt(121) - rnd.nextInt(121); (d << 1) ^ (d >> 31) },
      "wide uniform" -> Array.fill(n)(rnd.nextInt(1 << 20).toLong),
      "full 64-bit" -> Array.fill(n)(rnd.nextLong()),
      "top bit set" -> Array.fill(n)(Long.MinValue | rnd.nextInt(3)),
      "all equal" -> Array.fill(n)(12345L),
      "all zero" -> Array.fill(n)(0L),
      "one value" -> Array(rnd.nextLong()),
      "empty" -> Array.emptyLongArray,
      "skewed (Fibonacci counts)" -> {
        val fib = Iterator.iterate((1L, 1L)) { case (a, b) => (b, a + b) }.map(_._1).take(25).toArray
        fib.indices.flatMap(i => Array.fill(math.min(fib(i), 2000L).toInt)(i.toLong)).toArray
      }
    )
  }

  test("values of every magnitude round-trip at every writer mantissa width; sizes are exact") {
    val rnd = new Random(11)
    for (round <- 0 until 3; (shape, u) <- distributions(rnd); m <- 0 to HuffmanEncoder.MaxWriterMantissa) {
      val body = encode(u, m)
      assert(decode(body, u.length).sameElements(u), s"$shape at width $m (round $round)")
      // a reference added while decoding (HUFFMAN pages), wrapping like the format's arithmetic
      val add = Seq(-5L, 1L << 52, -(1L << 52) - 1, Long.MinValue, Long.MaxValue, 8035L)(round * 2 + (m & 1))
      assert(decode(body, u.length, add).sameElements(u.map(_ + add)), s"$shape at width $m plus $add")
      // code lengths are at most the writer's limit, whatever the distribution
      val symbols = ByteBuffer.wrap(body, 1, 4).order(ByteOrder.LITTLE_ENDIAN).getInt
      val lengths = (0 until symbols).map(s => (body(5 + s / 2) >> ((s & 1) * 4)) & 15)
      assert(lengths.max <= HuffmanEncoder.CodeLimit, s"$shape at width $m: code of ${lengths.max} bits")
    }
  }

  test("a page costs about the entropy of its bins, not the width of its largest value") {
    val rnd = new Random(12)
    def entropyBits(u: Array[Long]): Double = {
      val counts = u.groupBy(identity).values.map(_.length.toDouble)
      counts.map(c => -c * math.log(c / u.length) / math.log(2)).sum
    }
    // 50 equally likely values: 5.64 bits of entropy against 6 bits packed.
    val uniform = Array.fill(8192)(rnd.nextInt(50).toLong)
    val size = encode(uniform, 6).length
    // Huffman codes of 5 and 6 bits for 50 equal symbols: 1.3 % over the entropy, plus the header.
    assert(size * 8 < entropyBits(uniform) * 1.02 + 600, s"$size bytes for ${entropyBits(uniform) / 8} of entropy")
    assert(size < 8192 * 6 / 8 * 0.97, s"$size bytes against ${8192 * 6 / 8} packed")
    // Differences of dates of one order (TPC-H's l_shipdate within an order): zigzag of the
    // difference of two uniform draws from 1..121 is 8 bits packed, about 7.6 bits coded.
    val dates = Array.fill(8192) { val d = rnd.nextInt(121) - rnd.nextInt(121); ((d << 1) ^ (d >> 31)).toLong }
    val coded = encode(dates, 2).length
    assert(coded * 8 < entropyBits(dates) * 1.03 + 800, s"$coded bytes for ${entropyBits(dates) / 8} of entropy")
  }

  test("a block written from the format's text decodes") {
    // M = 1: values 0 and 1 are symbols 0 and 1; 2..3 are symbol 2 (mantissa 0) and 3 (mantissa 1)
    // with no offset bits; 4..5 symbol 4 and 6..7 symbol 5, each with 1 offset bit.
    // Code lengths: symbol 0: 1, symbol 1: 2, symbol 4: 3, symbol 5: 3 (symbols 2 and 3 unused).
    // Canonical codes by (length, symbol): 0 -> 0, 1 -> 10, 4 -> 110, 5 -> 111.
    // Values 0, 1, 5, 7, 0: bits in stream order: 0 | 10 | 110 1 | 111 1 | 0
    //   = 0 1 0 1 1 0 1 1 1 1 1 0 -> stream bits 0..11, LSB-first: byte 0 = 0b11011010 (bits 0..7
    //   read from bit 0 up: 0,1,0,1,1,0,1,1), byte 1 = 0b00000111 (1,1,1,0,...)
    val body = Array[Byte](
      1, // M
      6,
      0,
      0,
      0, // S = 6 symbols described
      0x21,
      0x00,
      0x33, // lengths: s0=1 s1=2 | s2=0 s3=0 | s4=3 s5=3
      1, // L = 1 lane
      1,
      0,
      0,
      0, // W_0 = 1 word
      0xda.toByte,
      0x07,
      0,
      0,
      0,
      0,
      0,
      0
    )
    assert(decode(body, 5).toSeq == Seq(0L, 1L, 5L, 7L, 0L))
  }

  /** A block written straight from the format's text (5.7.1), for code lengths the Scala writer
    * never uses: canonical codes from `lengths` (symbol -> length), each integer's code from its
    * most significant bit, then its offset bits from the least, dealt to `lanes` lanes. */
  private def blockFromText(m: Int, lengths: Map[Int, Int], u: Array[Long], lanes: Int): Array[Byte] = {
    val symbols = lengths.keys.max + 1
    val ordered = lengths.toSeq.sortBy { case (s, l) => (l, s) }
    var code = 0L
    var previous = ordered.head._2
    val codes = ordered.zipWithIndex.map { case ((s, l), i) =>
      if (i > 0) { code = (code + 1) << (l - previous); previous = l }
      s -> (code, l)
    }.toMap
    val streams = Array.fill(lanes)(scala.collection.mutable.ArrayBuffer[Boolean]())
    u.indices.foreach { i =>
      val bits = streams(i % lanes)
      val x = u(i)
      val (s, o) =
        if (java.lang.Long.compareUnsigned(x, 1L << m) < 0) (x.toInt, 0)
        else {
          val e = 64 - java.lang.Long.numberOfLeadingZeros(x)
          val o = e - 1 - m
          (((o + 1) << m) + ((x >>> o) & ((1L << m) - 1)).toInt, o)
        }
      val (c, l) = codes(s)
      (l - 1 to 0 by -1).foreach(j => bits += ((c >>> j) & 1) == 1)
      (0 until o).foreach(j => bits += ((x >>> j) & 1) == 1)
    }
    val words = streams.map(b => (b.size + 63) / 64)
    val out = ByteBuffer.allocate(1 + 4 + (symbols + 1) / 2 + 1 + 4 * lanes + 8 * words.sum)
      .order(ByteOrder.LITTLE_ENDIAN)
    out.put(m.toByte).putInt(symbols)
    (0 until symbols by 2).foreach { s =>
      out.put((lengths.getOrElse(s, 0) | (lengths.getOrElse(s + 1, 0) << 4)).toByte)
    }
    out.put(lanes.toByte)
    words.foreach(out.putInt)
    streams.zip(words).foreach { case (bits, w) =>
      (0 until w).foreach(k =>
        out.putLong((0 until 64).foldLeft(0L) { (acc, j) =>
          val at = k * 64 + j
          if (at < bits.size && bits(at)) acc | (1L << j) else acc
        })
      )
    }
    out.array()
  }

  test("codes of up to 15 bits (the format's limit, past the writer's) decode in every lane count") {
    // Width 4: values 0..13 are symbols 0..13 with codes of 1..14 bits; value 14 (symbol 14) and
    // symbol 53 (o = 2 offset bits: values 84..87) have the two 15-bit codes. Complete: the sum of
    // 2^-l is 1/2 + ... + 1/2^14 + 2/2^15 = 1.
    val lengths = (0 until 14).map(s => s -> (s + 1)).toMap ++ Map(14 -> 15, 53 -> 15)
    val rnd = new Random(14)
    val alphabet = (0L to 14L) ++ (84L to 87L)
    for (lanes <- Seq(1, 3, 4, 8); n <- Seq(1, 7, 4096 + 5)) {
      val u = Array.fill(n)(alphabet(rnd.nextInt(alphabet.size)))
      val body = blockFromText(4, lengths, u, lanes)
      assert(decode(body, n).sameElements(u), s"$lanes lanes, $n values")
      assert(decode(body, n, add = 1000L).sameElements(u.map(_ + 1000L)), s"$lanes lanes, $n values plus 1000")
    }
  }

  test("the largest block a page may hold: the widest alphabet, eight lanes; readers accept its size") {
    // M = 12, every symbol described, the last two coded (1 bit each): the last one's values are
    // (2^12 + 4095) << 51 plus 51 offset bits. One value, in lane 0 of 8.
    val m = 12
    val symbols = HuffmanBlock.alphabetSize(m)
    val b = ByteBuffer.allocate(1 + 4 + symbols / 2 + 1 + 4 * 8 + 8).order(ByteOrder.LITTLE_ENDIAN)
    b.put(m.toByte).putInt(symbols)
    (0 until symbols / 2 - 1).foreach(_ => b.put(0.toByte))
    b.put(0x11.toByte) // symbols S-2 and S-1: length 1 each (codes 0 and 1)
    b.put(8.toByte).putInt(1)
    (1 until 8).foreach(_ => b.putInt(0))
    b.putLong(1L | (5L << 1)) // code 1 (symbol S-1), then offset 5 in 51 bits
    val body = b.array()
    val expected = ((1L << 12) | 4095L) << 51 | 5L
    assert(decode(body, 1).toSeq == Seq(expected))
    assert(
      8 + body.length <= io.fermion.core.read.PageDecoder.maxBodyBytes(PageValues.Fixed(8), 1, Long.MaxValue),
      "a HUFFMAN page of one value with this block is within the raw size readers accept"
    )
  }

  test("damaged blocks fail with MalformedPageException") {
    def bad(body: Array[Byte], k: Int, clue: String): Unit =
      intercept[MalformedPageException](decode(body, k)).getMessage.ensuring(_ != null, clue)
    def lanes(m: Int, symbols: Int, lengths: Array[Int], words: Seq[Int], stream: Array[Byte]): Array[Byte] = {
      val b = ByteBuffer.allocate(1 + 4 + (lengths.length + 1) / 2 + 1 + 4 * words.size + stream.length)
        .order(ByteOrder.LITTLE_ENDIAN)
      b.put(m.toByte).putInt(symbols)
      lengths.grouped(2).foreach(p => b.put((p(0) | (if (p.length > 1) p(1) << 4 else 0)).toByte))
      b.put(words.size.toByte)
      words.foreach(b.putInt)
      b.put(stream).array()
    }
    def block(m: Int, symbols: Int, lengths: Array[Int], words: Int, stream: Array[Byte]): Array[Byte] =
      lanes(m, symbols, lengths, Seq(words), stream)
    val word = new Array[Byte](8)
    bad(block(13, 2, Array(1, 1), 1, word), 3, "mantissa width 13")
    bad(block(0, 1, Array(1), 1, word), 3, "one symbol")
    bad(block(0, 66, Array.fill(66)(7), 1, word), 3, "more symbols than width 0 has")
    bad(block(0, 2, Array(1, 2), 1, word), 3, "incomplete code")
    bad(block(0, 3, Array(1, 1, 1), 1, word), 3, "over-subscribed code")
    bad(block(0, 2, Array(1, 1), 1, word), 65, "65 one-bit codes in one word")
    bad(block(0, 2, Array(1, 1), 2, word ++ word), 3, "a word more than the values use")
    bad(block(0, 2, Array(1, 1), 0, Array.emptyByteArray), 3, "no words for 3 values")
    // symbol 63 at width 0 is 2^62 plus 62 offset bits: the offset runs past the one word
    bad(block(0, 64, Array.fill(62)(0) ++ Array(1, 1), 1, Array.fill[Byte](8)(-1)), 2, "offset past the words")
    assert(decode(block(0, 2, Array(1, 1), 1, word), 64).forall(_ == 0L), "64 codes fill one word")
    bad(lanes(0, 2, Array(1, 1), Seq.fill(9)(0), Array.emptyByteArray), 0, "9 lanes")
    bad(lanes(0, 2, Array(1, 1), Seq(), Array.emptyByteArray), 0, "no lanes")
    // two lanes of one word each: values 0 and 2 in lane 0, value 1 in lane 1
    val ones = Array.fill[Byte](8)(0) ++ Array[Byte](-1, 0, 0, 0, 0, 0, 0, 0)
    assert(decode(lanes(0, 2, Array(1, 1), Seq(1, 1), ones), 3).toSeq == Seq(0L, 1L, 0L), "lane i % L")
    bad(lanes(0, 2, Array(1, 1), Seq(1, 1), ones), 200, "a lane past its words")
    bad(lanes(0, 2, Array(1, 1), Seq(1, 1), ones), 1, "a lane with a word and no values")
    // random damage and truncation of real blocks: decoded or rejected, never another error
    val rnd = new Random(13)
    var rejected = 0
    for ((_, u) <- distributions(rnd) if u.nonEmpty; m <- Seq(0, 2, 6); trial <- 0 until 30) {
      val body = encode(u, m)
      val cut = if (trial % 3 == 0) rnd.nextInt(body.length) else body.length
      (0 until 1 + rnd.nextInt(3)).foreach { _ =>
        val i = rnd.nextInt(body.length); body(i) = (body(i) ^ (1 << rnd.nextInt(8))).toByte
      }
      try {
        val out = new Array[Long](u.length)
        HuffmanBlock.decode(new EncodedReader(body, 0, cut), u.length, out, new HuffmanScratch, "block")
      } catch { case _: MalformedPageException => rejected += 1 }
    }
    assert(rejected > 200, s"only $rejected damaged blocks rejected")
  }
}

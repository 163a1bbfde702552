package io.fermion.core

import java.nio.{ByteBuffer, ByteOrder}

import scala.util.Random

import io.fermion.core.encoding._
import io.fermion.core.layout.PageEncoding
import io.fermion.core.bytes.GrowableBytes
import org.scalatest.funsuite.AnyFunSuite

/** The shared round-trip harness of the page encodings: every encoding, forced alone or chosen
  * automatically, over every kind of page values and many shapes of data, must decode back to the
  * exact PLAIN bytes. Damaged bodies must fail with MalformedPageException and nothing else. */
class EncodingSuite extends AnyFunSuite {
  private val choices: Seq[(String, EncodingSet)] =
    ("auto", EncodingSet.All) +: PageEncoding.all.map(e => PageEncoding.name(e) -> EncodingSet(Set(e)))

  // ---- data shapes for fixed-width values, as longs truncated to the width ----
  private def shapes(width: Int, rnd: Random): Seq[(String, Array[Long])] = {
    val bits = width * 8
    def clip(v: Long): Long = if (bits == 64) v else (v << (64 - bits)) >> (64 - bits)
    val min = if (bits == 64) Long.MinValue else -(1L << (bits - 1))
    val max = if (bits == 64) Long.MaxValue else (1L << (bits - 1)) - 1
    val n = 1000 + rnd.nextInt(3000)
    Seq(
      "random" -> Array.fill(n)(clip(rnd.nextLong())),
      "sorted" -> Array.fill(n)(clip(rnd.nextLong())).sorted,
      "sorted timestamps" -> Array.tabulate(n)(i => clip(1700000000000000L + i * 1000L + rnd.nextInt(1000))),
      "all equal" -> Array.fill(n)(clip(42)),
      "small range" -> Array.fill(n)(clip(rnd.nextInt(16).toLong)),
      "small negative range" -> Array.fill(n)(clip(-100 + rnd.nextInt(7).toLong)),
      "min and max" -> Array.fill(n)(if (rnd.nextBoolean()) min else max),
      "min max and zero" -> Array.fill(n)(Seq(min, max, 0L)(rnd.nextInt(3))),
      "descending" -> Array.tabulate(n)(i => clip(max - i * 3L)),
      "runs" -> Array.fill(n / 50)(clip(rnd.nextLong())).flatMap(v => Array.fill(50)(v)),
      "few distinct" -> { val d = Array.fill(5)(clip(rnd.nextLong())); Array.fill(n)(d(rnd.nextInt(5))) },
      "one value" -> Array(clip(rnd.nextLong())),
      "two values" -> Array(min, max)
    )
  }

  private def floatShapes(rnd: Random): Seq[(String, Array[Long])] = {
    val specials = Seq(
      Double.NaN,
      -0.0,
      0.0,
      Double.PositiveInfinity,
      Double.NegativeInfinity,
      Double.MinPositiveValue,
      Double.MaxValue
    )
    Seq(
      "doubles with NaN and -0.0" -> Array.fill(2000)(java.lang.Double.doubleToRawLongBits(
        if (rnd.nextInt(4) == 0) specials(rnd.nextInt(specials.size)) else rnd.nextGaussian()
      )),
      "rounded prices" -> Array.fill(2000)(java.lang.Double.doubleToRawLongBits((rnd.nextInt(10000) / 100.0)))
    )
  }

  private def plainOf(values: Array[Long], width: Int): Array[Byte] = {
    val out = new Array[Byte](values.length * width)
    PlainValues.writeAll(values, values.length, width, out, 0)
    out
  }

  private def roundTripFixed(plain: Array[Byte], n: Int, width: Int, set: EncodingSet, clue: String): Int = {
    val encoded = new GrowableBytes()
    // encode from a non-zero offset to catch offset mistakes
    val shifted = new Array[Byte](plain.length + 3)
    System.arraycopy(plain, 0, shifted, 3, plain.length)
    val encoder = new PageEncoder()
    val id = encoder.encodeFixed(shifted, 3, n, width, set, encoded)
    assert(set.allows(id), s"$clue: chose ${PageEncoding.name(id)} outside $set")
    val d = new PageValueDecoder
    d.decode(id, encoded.array, 0, encoded.length, n, PageValues.Fixed(width), Long.MaxValue)
    val back = java.util.Arrays.copyOfRange(d.plainArray, d.plainOffset, d.plainOffset + d.plainLength)
    assert(back.sameElements(plain), s"$clue: ${PageEncoding.name(id)} does not round-trip")
    if (id != PageEncoding.Plain)
      assert(encoded.length <= plain.length + 32 || set != EncodingSet.All, s"$clue: auto choice larger than plain")
    val huffman = roundTripEntropy(encoder, encoded, set, PageValues.Fixed(width), n, Long.MaxValue, null, plain, clue)
    if (huffman >= 0) huffmanForms += huffman
    id
  }

  // The Huffman-coded forms the round trips produced (each encoding or DICTIONARY with Huffman codes).
  private val huffmanForms = scala.collection.mutable.Set[Int]()

  /** The encoder's Huffman-coded form of the page it just encoded (the writer's alternative):
    * its measured size must be exact and it must decode to `plain`. Returns its encoding or -1. */
  private def roundTripEntropy(
      encoder: PageEncoder,
      first: GrowableBytes,
      set: EncodingSet,
      kind: PageValues,
      n: Int,
      maxBytes: Long,
      valueLengths: () => Array[Int],
      plain: Array[Byte],
      clue: String
  ): Int = {
    val size = encoder.entropyAlternativeSize(set)
    if (size < 0) return -1
    val out = new GrowableBytes()
    val id = encoder.encodeEntropyAlternative(first, out)
    assert(set.allows(id) && out.length == size, s"$clue: Huffman form ${PageEncoding.name(id)} of ${out.length} bytes")
    val d = new PageValueDecoder
    d.decode(id, out.array, 0, out.length, n, kind, maxBytes, valueLengths)
    val back = java.util.Arrays.copyOfRange(d.plainArray, d.plainOffset, d.plainOffset + d.plainLength)
    assert(back.sameElements(plain), s"$clue: Huffman form ${PageEncoding.name(id)} does not round-trip")
    id
  }

  test("fixed-width values of every width round-trip under every encoding") {
    val rnd = new Random(1)
    for (
      width <- Seq(1, 2, 4, 8); (shape, values) <- shapes(width, rnd) ++ (if (width == 8) floatShapes(rnd) else Nil);
      (name, set) <- choices
    ) {
      roundTripFixed(plainOf(values, width), values.length, width, set, s"width $width, $shape, $name")
    }
    assert(
      Set(PageEncoding.Huffman, PageEncoding.DeltaHuffman, PageEncoding.Dictionary).subsetOf(huffmanForms),
      s"Huffman forms seen: ${huffmanForms.map(PageEncoding.name)}"
    )
  }

  test("forced encodings are used wherever they apply") {
    val rnd = new Random(2)
    val small = Array.fill(4000)(rnd.nextInt(100).toLong)
    val plain = plainOf(small, 4)
    for (
      e <- Seq(
        PageEncoding.BitPack,
        PageEncoding.For,
        PageEncoding.Delta,
        PageEncoding.DeltaFor,
        PageEncoding.Dictionary,
        PageEncoding.Rle
      )
    )
      assert(
        roundTripFixed(plain, small.length, 4, EncodingSet(Set(e)), PageEncoding.name(e)) == e,
        PageEncoding.name(e)
      )
    val same = plainOf(Array.fill(100)(7L), 8)
    assert(roundTripFixed(same, 100, 8, EncodingSet(Set(PageEncoding.Constant)), "constant") == PageEncoding.Constant)
    val negative = plainOf(Array.fill(100)(-5L - rnd.nextInt(3)), 2)
    assert(
      roundTripFixed(negative, 100, 2, EncodingSet(Set(PageEncoding.BitPack)), "bitpack of negatives") == PageEncoding.Plain,
      "bit-packing cannot hold negative values, so the page falls back to PLAIN"
    )
  }

  test("automatic choice picks the lightweight encoding low-entropy data calls for") {
    val rnd = new Random(3)
    def auto(values: Array[Long], width: Int): Int =
      roundTripFixed(plainOf(values, width), values.length, width, EncodingSet.All, "auto")
    assert(auto(Array.fill(5000)(9L), 8) == PageEncoding.Constant)
    assert(auto(Array.tabulate(5000)(i => 1700000000000000L + i * 1000000L), 8) == PageEncoding.DeltaFor)
    assert(auto(Array.fill(5000)(rnd.nextInt(1000).toLong), 4) == PageEncoding.BitPack)
    assert(auto(Array.fill(5000)(1000000L + rnd.nextInt(1000)), 8) == PageEncoding.For)
    val d = Array.fill(3)(rnd.nextLong());
    assert(auto(Array.fill(5000)(d(rnd.nextInt(3))), 8) == PageEncoding.Dictionary)
    assert(auto(Array.fill(5000)(rnd.nextLong()), 8) == PageEncoding.Plain)
  }

  test("16-byte values: PLAIN and CONSTANT") {
    val rnd = new Random(4)
    val random = Array.fill(16 * 300)(rnd.nextInt().toByte)
    val same = Array.tabulate(16 * 300)(i => (i % 16).toByte)
    for ((name, set) <- choices) {
      roundTripFixed(random, 300, 16, set, s"random decimal128, $name")
      roundTripFixed(same, 300, 16, set, s"equal decimal128, $name")
    }
    assert(roundTripFixed(same, 300, 16, EncodingSet.All, "auto") == PageEncoding.Constant)
  }

  // ---- bitmaps ----
  private def roundTripBitmap(bits: Array[Boolean], set: EncodingSet, clue: String): Int = {
    val n = bits.length
    val bytes = new Array[Byte]((n + 7) / 8 + 1)
    bits.indices.foreach(i => if (bits(i)) bytes(i >>> 3) = (bytes(i >>> 3) | (1 << (i & 7))).toByte)
    bytes(bytes.length - 1) = -1 // garbage past the page must not leak into it
    if ((n & 7) != 0) bytes((n - 1) >>> 3) = (bytes((n - 1) >>> 3) | (0xff << (n & 7))).toByte
    val encoded = new GrowableBytes()
    val id = new PageEncoder().encodeBitmap(bytes, 0, n, set, encoded)
    val d = new PageValueDecoder
    d.decode(id, encoded.array, 0, encoded.length, n, PageValues.Bitmap, Long.MaxValue)
    assert(d.plainLength == (n + 7) / 8, clue)
    bits.indices.foreach { i =>
      assert(
        ((d.plainArray(d.plainOffset + (i >>> 3)) >> (i & 7)) & 1) == (if (bits(i)) 1 else 0),
        s"$clue: bit $i under ${PageEncoding.name(id)}"
      )
    }
    if ((n & 7) != 0) assert(
      (d.plainArray(d.plainOffset + ((n - 1) >>> 3)) & (0xff << (n & 7)) & 0xff) == 0,
      s"$clue: bits past the end must be zero"
    )
    id
  }

  test("bitmaps round-trip under every encoding") {
    val rnd = new Random(5)
    val shapes = Seq(
      "random" -> Array.fill(3001)(rnd.nextBoolean()),
      "all true" -> Array.fill(4096)(true),
      "all false" -> Array.fill(777)(false),
      "mostly null" -> Array.fill(5000)(rnd.nextInt(100) == 0),
      "long runs" -> Array.fill(60)(rnd.nextBoolean()).flatMap(b => Array.fill(100)(b)),
      "one bit" -> Array(true)
    )
    for ((shape, bits) <- shapes; (name, set) <- choices) roundTripBitmap(bits, set, s"$shape, $name")
    assert(roundTripBitmap(Array.fill(4096)(true), EncodingSet.All, "auto") == PageEncoding.Constant)
    assert(roundTripBitmap(shapes(4)._2, EncodingSet.All, "auto") == PageEncoding.Rle)
  }

  // ---- variable-width values ----
  private def roundTripVariable(
      values: Array[Array[Byte]],
      valid: Array[Boolean],
      set: EncodingSet,
      clue: String
  ): Int = {
    val n = values.length
    val lens = Array.tabulate(n)(i => if (valid(i)) values(i).length else 0)
    val starts = lens.scanLeft(5)(_ + _).take(n) // start at 5 to catch offset mistakes
    val src = new Array[Byte](5 + lens.sum)
    (0 until n).foreach(i => if (valid(i)) System.arraycopy(values(i), 0, src, starts(i), lens(i)))
    val encoded = new GrowableBytes()
    val encoder = new PageEncoder()
    val id = encoder.encodeVariable(src, starts, lens, valid, n, set, encoded)
    val d = new PageValueDecoder
    val valueLengths = () => lens.indices.filter(valid).map(lens).toArray
    d.decode(id, encoded.array, 0, encoded.length, n, PageValues.Variable, lens.sum.toLong, valueLengths)
    val back = java.util.Arrays.copyOfRange(d.plainArray, d.plainOffset, d.plainOffset + d.plainLength)
    val plain = java.util.Arrays.copyOfRange(src, 5, src.length)
    assert(back.sameElements(plain), s"$clue: ${PageEncoding.name(id)} does not round-trip")
    val huffman =
      roundTripEntropy(encoder, encoded, set, PageValues.Variable, n, lens.sum.toLong, valueLengths, plain, clue)
    if (huffman >= 0) huffmanForms += huffman
    id
  }

  test("strings and binary round-trip under every encoding") {
    val rnd = new Random(6)
    def str(len: Int): Array[Byte] = Array.fill(len)((32 + rnd.nextInt(95)).toByte)
    val pool = Array.fill(7)(str(3 + rnd.nextInt(20)))
    val shapes: Seq[(String, Array[Array[Byte]], Double)] = Seq(
      ("random", Array.fill(2000)(str(rnd.nextInt(40))), 0.1),
      ("repeated", Array.fill(3000)(pool(rnd.nextInt(7))), 0.2),
      ("all equal", Array.fill(500)(pool(0)), 0.0),
      ("all equal with nulls", Array.fill(500)(pool(1)), 0.5),
      ("empty strings", Array.fill(800)(Array.emptyByteArray), 0.1),
      ("empty and one other", Array.fill(800)(if (rnd.nextBoolean()) Array.emptyByteArray else pool(2)), 0.0),
      ("very long", Array.fill(3)(str(200000)), 0.0),
      ("all null", Array.fill(100)(pool(3)), 1.0),
      ("single value", Array(str(10)), 0.0),
      ("binary bytes", Array.fill(1000)(Array.fill(rnd.nextInt(8))(rnd.nextInt().toByte)), 0.1)
    )
    for ((shape, values, nullRate) <- shapes; (name, set) <- choices) {
      val valid = Array.fill(values.length)(rnd.nextDouble() >= nullRate)
      roundTripVariable(values, valid, set, s"$shape, $name")
    }
    // Entries of one length: codes need the whole dictionary; of distinct lengths: no code bits.
    val sameLength = Array.fill(7)(str(12))
    val repeated = Array.fill(3000)(sameLength(rnd.nextInt(7)))
    assert(roundTripVariable(repeated, Array.fill(3000)(true), EncodingSet.All, "auto") == PageEncoding.Dictionary)
    val distinctLengths = Array.tabulate(7)(i => str(3 + 2 * i))
    val byLength = Array.fill(3000)(distinctLengths(rnd.nextInt(7)))
    assert(
      roundTripVariable(byLength, Array.fill(3000)(rnd.nextInt(5) > 0), EncodingSet.All, "auto") ==
        PageEncoding.DictionaryByLength
    )
    assert(
      roundTripVariable(Array.fill(50)(pool(0)), Array.fill(50)(true), EncodingSet.All, "auto") == PageEncoding.Constant
    )
  }

  test("damaged encoded bodies fail with MalformedPageException, never another error") {
    val rnd = new Random(7)
    val bodies = for {
      width <- Seq(1, 2, 4, 8)
      (_, values) <- shapes(width, rnd).take(7)
      e <- PageEncoding.all.filter(_ != PageEncoding.Plain)
    } yield {
      val out = new GrowableBytes()
      val id = new PageEncoder().encodeFixed(plainOf(values, width), 0, values.length, width, EncodingSet(Set(e)), out)
      (id, java.util.Arrays.copyOf(out.array, out.length), values.length, width)
    }
    var malformed = 0
    for ((id, body, n, width) <- bodies if id != PageEncoding.Plain; trial <- 0 until 20) {
      val damaged = body.clone()
      val cut = if (trial % 4 == 0) rnd.nextInt(damaged.length + 1) else damaged.length
      (0 until 1 + rnd.nextInt(3)).foreach { _ =>
        if (damaged.nonEmpty) {
          val i = rnd.nextInt(damaged.length); damaged(i) = (damaged(i) ^ (1 << rnd.nextInt(8))).toByte
        }
      }
      val d = new PageValueDecoder
      try {
        d.decode(id, damaged, 0, cut, n, PageValues.Fixed(width), Long.MaxValue)
        assert(d.plainLength == n * width, "a body that decodes still yields exactly n values")
      } catch { case _: MalformedPageException => malformed += 1 }
    }
    assert(malformed > 100, s"only $malformed of the damaged bodies were detected")
    // a constant string claiming a billion copies must not allocate them
    val huge = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putInt(1000).putInt(1 << 30).putInt(0).array()
    intercept[MalformedPageException](new PageValueDecoder().decode(
      PageEncoding.Constant,
      huge,
      0,
      12,
      1000,
      PageValues.Variable,
      10000L
    ))
    // no values but a value length: nothing to copy the value into
    val empty = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putInt(0).putInt(4).putInt(0x61616161).array()
    intercept[MalformedPageException](new PageValueDecoder().decode(
      PageEncoding.Constant,
      empty,
      0,
      12,
      5,
      PageValues.Variable,
      10000L
    ))
  }

  test("a dictionary code outside the dictionary fails, whether values stay i64 or become PLAIN bytes") {
    // Dictionary of two 4-byte entries (10, 20), codes bit-packed in `bits` bits into one word.
    def page(bits: Int, codes: Seq[Long]): Array[Byte] = {
      val word = codes.zipWithIndex.map { case (c, i) => c << (i * bits) }.foldLeft(0L)(_ | _)
      ByteBuffer.allocate(4 + 8 + 2 + 8).order(ByteOrder.LITTLE_ENDIAN).putInt(2).putInt(10).putInt(20)
        .put(PageEncoding.BitPack.toByte).put(bits.toByte).putLong(word).array()
    }
    for (keep <- Seq(false, true)) {
      val d = new PageValueDecoder
      val good = page(2, Seq(0, 1, 1, 0))
      d.decode(PageEncoding.Dictionary, good, 0, good.length, 4, PageValues.Fixed(4), Long.MaxValue, keepLongs = keep)
      val decoded =
        if (keep) d.longValues.take(4).toSeq
        else (0 until 4).map(i => ByteBuffer.wrap(d.plainArray).order(ByteOrder.LITTLE_ENDIAN).getInt(4 * i).toLong)
      assert(decoded == Seq(10L, 20L, 20L, 10L))
      for ((bits, codes) <- Seq(2 -> Seq(0L, 1L, 3L, 1L), 32 -> Seq(1L, 0xffffffffL))) {
        val bad = page(bits, codes)
        val e = intercept[MalformedPageException](
          d.decode(
            PageEncoding.Dictionary,
            bad,
            0,
            bad.length,
            codes.size,
            PageValues.Fixed(4),
            Long.MaxValue,
            keepLongs = keep
          )
        )
        assert(e.getMessage.contains("outside a dictionary of 2"), e.getMessage)
      }
    }
  }

  test("dictionary_by_length: smaller than the dictionary when lengths tell values apart; wrong lengths fail") {
    val rnd = new Random(9)
    // TPC-H's l_shipinstruct: four values of four lengths.
    val values = Array("DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN").map(_.getBytes("UTF-8"))
    val rows = Array.fill(8192)(values(rnd.nextInt(4)))
    val lens = rows.map(_.length)
    val starts = lens.scanLeft(0)(_ + _).take(rows.length)
    val src = rows.flatten
    val valid = Array.fill(rows.length)(true)
    def encode(e: Int): Array[Byte] = {
      val out = new GrowableBytes()
      assert(new PageEncoder().encodeVariable(src, starts, lens, valid, rows.length, EncodingSet(Set(e)), out) == e)
      java.util.Arrays.copyOf(out.array, out.length)
    }
    val (dict, byLength) = (encode(PageEncoding.Dictionary), encode(PageEncoding.DictionaryByLength))
    // 2-bit codes against none: the entries alone.
    assert(
      byLength.length < 100 && dict.length > 2000,
      s"dictionary ${dict.length} bytes, by length ${byLength.length}"
    )
    def decode(lengths: () => Array[Int]): Array[Byte] = {
      val d = new PageValueDecoder
      d.decode(
        PageEncoding.DictionaryByLength,
        byLength,
        0,
        byLength.length,
        rows.length,
        PageValues.Variable,
        src.length.toLong,
        lengths
      )
      java.util.Arrays.copyOfRange(d.plainArray, d.plainOffset, d.plainOffset + d.plainLength)
    }
    assert(decode(() => lens).sameElements(src))
    // Without lengths, with a length no entry has, with one value fewer: rejected.
    intercept[MalformedPageException](decode(null))
    intercept[MalformedPageException](decode(() => lens.updated(5, 7)))
    intercept[MalformedPageException](decode(() => lens.take(lens.length - 1)))
    // Two entries of one length: a code of 1 picks the second, a code of 2 is outside the group.
    val two = Array("AIR", "FOB", "RAIL").map(_.getBytes("UTF-8"))
    val picks = Array(1, 0, 2, 1, 0, 0, 2, 1, 1, 0, 2, 2)
    val s2 = picks.flatMap(two(_))
    val l2 = picks.map(two(_).length)
    val out = new GrowableBytes()
    val id = new PageEncoder().encodeVariable(
      s2,
      l2.scanLeft(0)(_ + _).take(12),
      l2,
      Array.fill(12)(true),
      12,
      EncodingSet(Set(PageEncoding.DictionaryByLength)),
      out
    )
    assert(id == PageEncoding.DictionaryByLength)
    val d = new PageValueDecoder
    d.decode(id, out.array, 0, out.length, 12, PageValues.Variable, s2.length.toLong, () => l2)
    assert(java.util.Arrays.copyOfRange(d.plainArray, d.plainOffset, d.plainOffset + d.plainLength).sameElements(s2))
  }

  test("bit packing round-trips every width") {
    val rnd = new Random(8)
    for (width <- 0 to 64; n <- Seq(0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000)) {
      val mask = if (width == 64) -1L else (1L << width) - 1
      val values = Array.fill(n)(rnd.nextLong() & mask)
      val out = new GrowableBytes()
      BitPacking.pack(values, n, 0L, width, out)
      assert(out.length == BitPacking.packedBytes(n, width))
      // At an offset, with the words ending exactly at the array's end: the unaligned 8-byte loads
      // of the fast path must stop before the end and hand over to the word-by-word tail. A
      // reference is added to every value.
      val at = 3 + rnd.nextInt(5)
      val src = new Array[Byte](at + out.length)
      System.arraycopy(out.array, 0, src, at, out.length)
      val back = new Array[Long](n)
      BitPacking.unpack(src, at, n, width, 1000L, back)
      assert(back.sameElements(values.map(_ + 1000L)), s"width $width, n $n")
      // A run from a later value (what a take of some rows reads): from the word holding its first
      // bit. Value 8 starts on a byte boundary (groups of eight from a byte-aligned start).
      for (first <- (if (n > 1) Seq(1 + rnd.nextInt(n - 1)) else Nil) ++ (if (n > 8) Seq(8) else Nil)) {
        val word = (first.toLong * width) >>> 6
        val run = new Array[Long](n - first)
        BitPacking.unpack(src, at + 8 * word.toInt, n - first, width, 0L, run, first.toLong * width - 64 * word)
        assert(run.sameElements(values.drop(first)), s"width $width, n $n, from value $first")
      }
    }
  }
}

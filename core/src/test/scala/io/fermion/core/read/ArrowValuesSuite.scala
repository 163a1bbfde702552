package io.fermion.core.read

import scala.util.Random

import io.fermion.core.bytes.GrowableBytes
import io.fermion.core.encoding.{
  BitPacking, DictionaryCodes, PackedDeltas, PackedValues, PageValueDecoder, PageValues, Runs
}
import io.fermion.core.layout.PageEncoding
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.memory.util.MemoryUtil
import org.scalatest.funsuite.AnyFunSuite

/** The fused unpack-and-write of BITPACK, FOR, DELTA, DELTA_FOR, DELTA_HUFFMAN and RLE pages must write exactly the bytes, and find
  * exactly the range, of unpacking to i64 values first and writing those (`putLongs`, the path
  * every other encoding takes): for every bit width it accepts, every output width, group tails,
  * references near the ends of the output's range (where codes stop mapping to values in order),
  * and words ending at their array's end. */
class ArrowValuesSuite extends AnyFunSuite {

  /** `fused` writes `n` values (stride `stride`) at an address and leaves their range; asserts it
    * writes the bytes and finds the range that putLongs of `values` does. */
  private def assertLikePutLongs(values: Array[Long], n: Int, width: Int, stride: Int, clue: String)(
      fused: (Long, ValueRange) => Unit
  ): Unit = {
    val allocator = new RootAllocator()
    val bytes = math.max(1L, n.toLong * stride)
    val got = allocator.buffer(bytes)
    val expected = allocator.buffer(bytes)
    try {
      got.setZero(0, bytes); expected.setZero(0, bytes)
      val gotRange = new ValueRange
      fused(got.memoryAddress(), gotRange)
      val range = new ValueRange
      ArrowValues.putLongs(values, n, width, stride, expected.memoryAddress(), range)
      var k = 0L
      while (k < bytes) {
        assert(got.getByte(k) == expected.getByte(k), s"$clue: byte $k differs")
        k += 1
      }
      assert((gotRange.lo, gotRange.hi) == (range.lo, range.hi), clue)
    } finally { got.close(); expected.close(); allocator.close() }
  }

  /** `codes(0 until n)` bit-packed in `bits` bits, at a random offset of 0 to 3 bytes into an array
    * that ends with the words (loads near the end reach it). */
  private def packedAt(codes: Array[Long], n: Int, bits: Int, rnd: Random): (Array[Byte], Int) = {
    val packed = new GrowableBytes()
    BitPacking.pack(codes, n, 0L, bits, packed)
    val at = rnd.nextInt(4)
    val src = new Array[Byte](at + packed.length)
    System.arraycopy(packed.array, 0, src, at, packed.length)
    (src, at)
  }

  test("putPacked writes what unpacking and putLongs write, with the same range") {
    val rnd = new Random(11)
    val allocator = new RootAllocator()
    try {
      val counts = Seq(1, 7, 8, 9, 16, 63, 64, 65, 200, 1000 + rnd.nextInt(100))
      for (
        bits <- 0 to 56; (width, stride) <- Seq((1, 1), (2, 2), (4, 4), (8, 8), (8, 16));
        n <- counts.filter(_ => rnd.nextInt(3) == 0) :+ counts.last
      ) {
        val top = (1L << bits) - 1
        val outMax = if (width == 8) Long.MaxValue else (1L << (8 * width - 1)) - 1
        val outMin = if (width == 8) Long.MinValue else -(1L << (8 * width - 1))
        val references = Seq(
          0L,
          -1L - rnd.nextInt(1000),
          outMax - top, // the largest code lands exactly on the largest value
          outMax - top + 1, // ... and one past it: wraps
          outMin,
          rnd.nextLong()
        )
        for (reference <- references) {
          val codes = Array.fill(n)(if (bits == 0) 0L else rnd.nextLong() & top)
          // The largest and smallest code appear, so that the range is the whole span.
          if (n > 2 && bits > 0) { codes(rnd.nextInt(n)) = top; codes(rnd.nextInt(n)) = 0L }
          val (src, at) = packedAt(codes, n, bits, rnd)
          val p = new PackedValues
          p.array = src; p.offset = at; p.bits = bits; p.reference = reference
          val clue = s"bits $bits, width $width, stride $stride, n $n, reference $reference"
          val values = new Array[Long](n)
          BitPacking.unpack(src, at, n, bits, reference, values)
          assertLikePutLongs(values, n, width, stride, clue) { (address, range) =>
            ArrowValues.putPacked(p, n, width, stride, address, range)
          }
        }
      }
    } finally allocator.close()
  }

  test("putDictionary writes what looking the codes up and putLongs write; a code past the dictionary fails") {
    val rnd = new Random(12)
    val allocator = new RootAllocator()
    try {
      for (
        bits <- 0 to 32; (width, stride) <- Seq((1, 1), (2, 2), (4, 4), (8, 8), (8, 16));
        n <- Seq(1, 7, 8, 9, 64, 65, 1000 + rnd.nextInt(100)).filter(_ => rnd.nextInt(2) == 0) :+ 4099
      ) {
        // Entries fill the output width's range; the dictionary is as large as the codes allow, at most 300.
        val size = math.min(1L << bits, 300L).toInt
        val entries = Array.fill(size)(if (width == 8) rnd.nextLong() else rnd.nextLong() >> (64 - 8 * width))
        val codes = Array.fill(n)(rnd.nextInt(size).toLong)
        val (src, at) = packedAt(codes, n, bits, rnd)
        val d = new DictionaryCodes
        d.entries = entries; d.codes.array = src; d.codes.offset = at; d.codes.bits = bits
        val clue = s"bits $bits, width $width, stride $stride, n $n"
        assertLikePutLongs(codes.map(c => entries(c.toInt)), n, width, stride, clue) { (address, range) =>
          assert(ArrowValues.putDictionary(d, n, width, stride, address, range), clue)
        }
        // One entry fewer: a code naming the last entry (in a group, or in the tail) is outside.
        if (size > 1) {
          val last = codes.indices.filter(i => codes(i) == size - 1)
          d.entries = entries.take(size - 1)
          val out = allocator.buffer(n.toLong * stride)
          try assert(
              !ArrowValues.putDictionary(d, n, width, stride, out.memoryAddress(), new ValueRange) == last.nonEmpty,
              s"$clue: codes of the last entry at ${last.take(3)}"
            )
          finally out.close()
        }
      }
    } finally allocator.close()
  }

  test("a dictionary page kept encoded: its codes stay packed, and a code past the dictionary fails the lookup") {
    // Dictionary of two 4-byte entries (10, 20), four codes bit-packed in 2 bits into one word.
    def page(codes: Seq[Long]): Array[Byte] = {
      val word = codes.zipWithIndex.map { case (c, i) => c << (i * 2) }.foldLeft(0L)(_ | _)
      java.nio.ByteBuffer.allocate(4 + 8 + 2 + 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(2).putInt(10)
        .putInt(20).put(PageEncoding.BitPack.toByte).put(2.toByte).putLong(word).array()
    }
    val d = new PageValueDecoder
    val allocator = new RootAllocator()
    val out = allocator.buffer(4 * 4)
    try {
      def lookUp(codes: Seq[Long]): Option[Seq[Long]] = {
        val body = page(codes)
        d.decode(
          PageEncoding.Dictionary,
          body,
          0,
          body.length,
          4,
          PageValues.Fixed(4),
          Long.MaxValue,
          keepLongs = true,
          keepEncoded = true
        )
        assert(d.longValues == null && d.plainArray == null && d.dictionaryCodes != null)
        val ok = ArrowValues.putDictionary(d.dictionaryCodes, 4, 4, 4, out.memoryAddress(), new ValueRange)
        if (ok) Some((0 until 4).map(i => out.getInt(4L * i).toLong)) else None
      }
      assert(lookUp(Seq(0, 1, 1, 0)).contains(Seq(10L, 20L, 20L, 10L)))
      assert(lookUp(Seq(0, 1, 3, 1)).isEmpty, "code 3 of a dictionary of 2")
    } finally { out.close(); allocator.close() }
  }

  test("putPackedRows and putDictionaryRows write the chosen slots as a whole decode does, and nothing else") {
    val rnd = new Random(13)
    val allocator = new RootAllocator()
    try {
      for (
        bits <- (0 to 56) ++ Seq(57, 63, 64); (width, stride) <- Seq((1, 1), (2, 2), (4, 4), (8, 8), (8, 16));
        n <- Seq(1, 9, 64, 65, 1000 + rnd.nextInt(100)).filter(_ => rnd.nextInt(2) == 0) :+ 4099;
        dictionary <- Seq(false, true) if !dictionary || bits <= 32
      ) {
        val top = if (bits == 64) -1L else (1L << bits) - 1
        val size = math.min(1L << math.min(bits, 30), 300L).toInt
        val entries = Array.fill(size)(rnd.nextLong())
        val codes = Array.fill(n)(if (dictionary) rnd.nextInt(size).toLong else rnd.nextLong() & top)
        val (src, at) = packedAt(codes, n, bits, rnd)
        val reference = rnd.nextLong()
        val values = if (dictionary) codes.map(c => entries(c.toInt)) else codes.map(_ + reference)
        // Rows spread over the page, its first and last slot included (their loads reach the words' end).
        val rows = ((0 until n).filter(_ => rnd.nextInt(5) == 0) ++ Seq(0, n - 1)).distinct.sorted.toArray
        val clue = s"bits $bits, width $width, stride $stride, n $n, dictionary $dictionary, ${rows.length} rows"
        val whole = allocator.buffer(n.toLong * stride)
        val some = allocator.buffer(n.toLong * stride)
        try {
          ArrowValues.putLongs(values, n, width, stride, whole.memoryAddress(), new ValueRange)
          some.setOne(0, n.toLong * stride)
          val range = new ValueRange
          if (dictionary) {
            val d = new DictionaryCodes
            d.entries = entries; d.codes.array = src; d.codes.offset = at; d.codes.bits = bits
            assert(ArrowValues.putDictionaryRows(d, n, rows, width, stride, some.memoryAddress(), range), clue)
          } else {
            val p = new PackedValues
            p.array = src; p.offset = at; p.bits = bits; p.reference = reference
            ArrowValues.putPackedRows(p, n, rows, width, stride, some.memoryAddress(), range)
          }
          val chosen = rows.toSet
          (0 until n).foreach { i =>
            (0 until stride).foreach { b =>
              val k = i.toLong * stride + b
              if (chosen(i)) assert(some.getByte(k) == whole.getByte(k), s"$clue: slot $i byte $b")
              else assert(some.getByte(k) == -1.toByte, s"$clue: slot $i, not chosen, was written")
            }
          }
          val expected = new ValueRange
          ArrowValues.putLongs(rows.map(values(_)), rows.length, width, stride, some.memoryAddress(), expected)
          assert((range.lo, range.hi) == (expected.lo, expected.hi), clue)
        } finally { whole.close(); some.close() }
      }
      // A code past the dictionary, at a chosen slot: refused.
      val d = new DictionaryCodes
      val packed = new GrowableBytes()
      BitPacking.pack(Array(0L, 1L, 2L, 0L), 4, 0L, 2, packed)
      d.entries = Array(10L, 20L); d.codes.array = packed.array.take(packed.length); d.codes.bits = 2
      val out = allocator.buffer(4 * 4)
      try {
        assert(ArrowValues.putDictionaryRows(d, 4, Array(0, 1, 3), 4, 4, out.memoryAddress(), new ValueRange))
        assert(!ArrowValues.putDictionaryRows(d, 4, Array(1, 2), 4, 4, out.memoryAddress(), new ValueRange))
      } finally out.close()
    } finally allocator.close()
  }

  test("putDeltas writes what summing the differences first and putLongs write, with the same range") {
    val rnd = new Random(14)
    val counts = Seq(1, 2, 8, 9, 17, 64, 65, 66, 200, 1000 + rnd.nextInt(100))
    for (
      bits <- (0 to 56).filter(b => b < 4 || b > 52 || rnd.nextInt(4) == 0);
      (width, stride) <- Seq((1, 1), (2, 2), (4, 4), (8, 8), (8, 16)); zigzag <- Seq(false, true);
      n <- counts.filter(_ => rnd.nextInt(3) == 0) :+ counts.last
    ) {
      val m = n - 1
      val top = (1L << bits) - 1
      val high = if (width == 8) Long.MaxValue else (1L << (8 * width - 1)) - 1
      // Rising pages (FOR references >= 0) whose sum ends exactly on the width's largest value, or
      // one past it (wraps), and pages of any sign.
      val references = if (zigzag) Seq(0L) else Seq(0L, 1L + rnd.nextInt(5), -1L - rnd.nextInt(5), rnd.nextLong() >> 8)
      for (reference <- references; shape <- Seq("random", "all top")) {
        val codes = Array.fill(m)(if (shape == "all top") top else rnd.nextLong() & top)
        if (m > 2 && bits > 0 && shape == "random") { codes(rnd.nextInt(m)) = top; codes(rnd.nextInt(m)) = 0L }
        val step = if (zigzag) 0L else reference + top
        val edge = if (m > 0 && step > 0 && step <= high / m) high - m * step else rnd.nextLong()
        for (first <- Seq(rnd.nextLong() >> rnd.nextInt(64), edge, edge + 1, Long.MinValue, 0L)) {
          val (src, at) = packedAt(codes, m, bits, rnd)
          val d = new PackedDeltas
          d.first = first; d.zigzag = zigzag
          d.deltas.array = src; d.deltas.offset = at; d.deltas.bits = bits; d.deltas.reference = reference
          val values = new Array[Long](n)
          values(0) = first
          (1 until n).foreach { i =>
            val z = codes(i - 1)
            values(i) = values(i - 1) + (if (zigzag) (z >>> 1) ^ -(z & 1) else z + reference)
          }
          val clue =
            s"bits $bits, width $width, stride $stride, n $n, zigzag $zigzag, reference $reference, $shape, first $first"
          assertLikePutLongs(values, n, width, stride, clue) { (address, range) =>
            ArrowValues.putDeltas(d, n, width, stride, address, range)
          }
        }
      }
    }
  }

  test("putDeltas of a DELTA_HUFFMAN page's decoded differences writes what summing them first and putLongs write") {
    val rnd = new Random(15)
    for (
      (width, stride) <- Seq((1, 1), (2, 2), (4, 4), (8, 8), (8, 16));
      n <- Seq(0, 1, 2, 9, 1000 + rnd.nextInt(2000), 8192);
      shape <- Seq("small", "any", "wraps")
    ) {
      // Zigzag words of small steps either way, of any 64-bit difference, and of steps that carry
      // the sum past the width's ends (and past 2^63).
      def word(): Long = shape match {
        case "small" => rnd.nextInt(64).toLong
        case "any" => rnd.nextLong()
        case _ => (Long.MaxValue / 3) << 1
      }
      // Longer than the page needs: the decoder's scratch array holds a larger page's differences.
      val z = Array.fill(math.max(0, n - 1) + rnd.nextInt(3))(word())
      for (first <- Seq(0L, rnd.nextLong(), Long.MaxValue - 5, Long.MinValue)) {
        val d = new PackedDeltas
        d.first = first; d.zigzag = true; d.unpacked = z
        val values = new Array[Long](n)
        (0 until n).foreach { i =>
          values(i) = if (i == 0) first else values(i - 1) + ((z(i - 1) >>> 1) ^ -(z(i - 1) & 1))
        }
        assertLikePutLongs(values, n, width, stride, s"width $width, stride $stride, n $n, $shape, first $first") {
          (address, range) => ArrowValues.putDeltas(d, n, width, stride, address, range)
        }
      }
    }
  }

  test("putRuns writes what expanding an RLE page's runs first and putLongs write, with the same range") {
    val rnd = new Random(16)
    for (
      (width, stride) <- Seq((1, 1), (2, 2), (4, 4), (8, 8), (8, 16));
      n <- Seq(0, 1, 7, 1000 + rnd.nextInt(2000), 8192);
      shape <- Seq("one run", "short runs", "long runs")
    ) {
      val lengths = scala.collection.mutable.ArrayBuffer[Long]()
      var left = n
      while (left > 0) {
        val l = shape match {
          case "one run" => left
          case "short runs" => 1 + rnd.nextInt(3)
          case _ => 1 + rnd.nextInt(2000)
        }
        lengths += math.min(l, left); left -= math.min(l, left)
      }
      // Values past the width's range too: written as their low bytes, their range as written.
      val values = Array.fill(lengths.size)(if (rnd.nextBoolean()) rnd.nextLong() else rnd.nextInt(100).toLong - 50)
      val r = new Runs
      r.values = values; r.lengths = lengths.toArray; r.count = lengths.size
      val expanded = lengths.indices.flatMap(k => Seq.fill(lengths(k).toInt)(values(k))).toArray
      assertLikePutLongs(expanded, n, width, stride, s"width $width, stride $stride, n $n, $shape") {
        (address, range) =>
          ArrowValues.putRuns(r, n, width, stride, address, range)
      }
    }
  }

  test("putPacked refuses words that pass the end of their array") {
    val p = new PackedValues
    p.array = new Array[Byte](15); p.offset = 0; p.bits = 8; p.reference = 0L
    val allocator = new RootAllocator()
    val out = allocator.buffer(16 * 4)
    try {
      // 16 values of 8 bits take two words, 16 bytes: one more than the array holds.
      intercept[IllegalArgumentException] {
        ArrowValues.putPacked(p, 16, 4, 4, out.memoryAddress(), new ValueRange)
      }
    } finally { out.close(); allocator.close() }
  }
}

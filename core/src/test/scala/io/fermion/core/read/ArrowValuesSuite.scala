package io.fermion.core.read

import scala.util.Random

import io.fermion.core.bytes.GrowableBytes
import io.fermion.core.encoding.{BitPacking, PackedValues}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.memory.util.MemoryUtil
import org.scalatest.funsuite.AnyFunSuite

/** The fused unpack-and-write of BITPACK and FOR pages must write exactly the bytes, and find
  * exactly the range, of unpacking to i64 values first and writing those (`putLongs`, the path
  * every other encoding takes): for every bit width it accepts, every output width, group tails,
  * references near the ends of the output's range (where codes stop mapping to values in order),
  * and words ending at their array's end. */
class ArrowValuesSuite extends AnyFunSuite {

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
          val packed = new GrowableBytes()
          BitPacking.pack(codes, n, 0L, bits, packed)
          val at = rnd.nextInt(4)
          val src = new Array[Byte](at + packed.length)
          System.arraycopy(packed.array, 0, src, at, packed.length)
          val p = new PackedValues
          p.array = src; p.offset = at; p.bits = bits; p.reference = reference
          val clue = s"bits $bits, width $width, stride $stride, n $n, reference $reference"

          val bytes = n.toLong * stride
          val fused = allocator.buffer(bytes)
          val expected = allocator.buffer(bytes)
          try {
            fused.setZero(0, bytes); expected.setZero(0, bytes)
            val fusedRange = new ValueRange
            ArrowValues.putPacked(p, n, width, stride, fused.memoryAddress(), fusedRange)
            val values = new Array[Long](n)
            BitPacking.unpack(src, at, n, bits, reference, values)
            val range = new ValueRange
            ArrowValues.putLongs(values, n, width, stride, expected.memoryAddress(), range)
            var k = 0L
            while (k < bytes) {
              val (a, b) =
                (MemoryUtil.getByte(fused.memoryAddress() + k), MemoryUtil.getByte(expected.memoryAddress() + k))
              assert(a == b, s"$clue: byte $k differs")
              k += 1
            }
            assert((fusedRange.lo, fusedRange.hi) == (range.lo, range.hi), clue)
          } finally { fused.close(); expected.close() }
        }
      }
    } finally allocator.close()
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

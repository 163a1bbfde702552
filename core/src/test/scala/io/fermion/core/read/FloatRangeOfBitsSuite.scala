package io.fermion.core.read

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/** The statistics check of float pages takes the values' range from the range of their bits (as the
  * decoders find it: signed longs of doubles, sign-extended ints of floats) when the bits settle
  * it, else from the values' order-preserving keys (`floatRangeByKeys`) unless one is a NaN.
  * Against the values themselves: whenever it answers, the answer is their smallest and largest (and
  * none is a NaN); it declines only where the bits cannot tell (mixed signs, or a NaN). */
class FloatRangeOfBitsSuite extends AnyFunSuite {

  private val specials = Seq(
    0.0,
    -0.0,
    Double.MinPositiveValue,
    -Double.MinPositiveValue,
    Double.MaxValue,
    -Double.MaxValue,
    Double.PositiveInfinity,
    Double.NegativeInfinity,
    1.5,
    -2.25,
    1e-300,
    -1e300
  )

  private def draw(rnd: Random, sign: Int): Double = {
    val x = rnd.nextInt(4) match {
      case 0 => specials(rnd.nextInt(specials.size))
      case 1 => rnd.nextGaussian() * math.pow(10, rnd.nextInt(20) - 10)
      case 2 => java.lang.Double.longBitsToDouble(rnd.nextLong()) // NaNs of every payload and sign too
      case _ => rnd.nextInt(100).toDouble
    }
    if (sign > 0 && !x.isNaN) math.abs(x) else if (sign < 0 && !x.isNaN) -math.abs(x) else x
  }

  test("the range of a page's float or double bits gives its values' range exactly when it answers") {
    val rnd = new Random(31)
    var answered = 0
    var declined = 0
    for (trial <- 0 until 20000) {
      val single = trial % 2 == 1
      val sign = Seq(1, -1, 0)(trial % 3)
      val n = 1 + rnd.nextInt(12)
      // Now and then the NaNs next to an infinity (the bits just past it), of either sign.
      val bits =
        if (single) Array.fill(n) {
          if (rnd.nextInt(8) == 0) Seq(0x7f800001, 0xff800001)(rnd.nextInt(2)).toLong
          else java.lang.Float.floatToRawIntBits(draw(rnd, sign).toFloat).toLong
        }
        else Array.fill(n) {
          if (rnd.nextInt(8) == 0) Seq(0x7ff0000000000001L, 0xfff0000000000001L)(rnd.nextInt(2))
          else java.lang.Double.doubleToRawLongBits(draw(rnd, sign))
        }
      val values =
        if (single) bits.map(b => java.lang.Float.intBitsToFloat(b.toInt).toDouble)
        else bits.map(java.lang.Double.longBitsToDouble)
      val range = new ValueRange
      range.lo = bits.min; range.hi = bits.max
      val got = ColumnDecoder.floatRangeOfBits(range, single)
      val numbers = values.filterNot(_.isNaN)
      val oneSign = bits.forall(_ >= 0) || bits.forall(_ < 0)
      if (got == null) {
        declined += 1
        assert(!oneSign || values.exists(_.isNaN), s"declined ${values.mkString(", ")}")
      } else {
        answered += 1
        assert(numbers.length == values.length, s"a NaN among ${values.mkString(", ")}")
        // == compares -0.0 equal to 0.0, as the statistics check does
        assert(got.lo == numbers.min && got.hi == numbers.max, s"${got.lo}..${got.hi} for ${values.mkString(", ")}")
      }
    }
    assert(answered > 5000 && declined > 5000, s"answered $answered, declined $declined")
  }

  test("the range of float or double values by their keys is their smallest and largest, null with a NaN") {
    val rnd = new Random(32)
    val allocator = new org.apache.arrow.memory.RootAllocator()
    val buf = allocator.buffer(8L * 64)
    var answered = 0
    var declined = 0
    try for (trial <- 0 until 20000) {
        val single = trial % 2 == 1
        val n = 1 + rnd.nextInt(64)
        // Mixed signs (the case the bits' range cannot settle), infinities, zeros of both signs,
        // subnormals, and now and then a NaN of either sign and any payload.
        val values = Array.fill(n) {
          val x = if (rnd.nextInt(40) == 0) Double.NaN else draw(rnd, 0)
          if (single) x.toFloat.toDouble else x
        }
        values.indices.foreach { i =>
          if (single) {
            // A NaN's payload kept as drawn: floatToRawIntBits of a random NaN float.
            val bits =
              if (values(i).isNaN) (0x7f800001 | rnd.nextInt(1 << 22) | (rnd.nextInt(2) << 31))
              else java.lang.Float.floatToRawIntBits(values(i).toFloat)
            buf.setInt(4L * i, bits)
          } else {
            val bits =
              if (values(i).isNaN) 0x7ff0000000000001L | (rnd.nextLong() & 0x800fffffffffffffL)
              else java.lang.Double.doubleToRawLongBits(values(i))
            buf.setLong(8L * i, bits)
          }
        }
        val got = ColumnDecoder.floatRangeByKeys(buf.memoryAddress(), n, single)
        val numbers = values.filterNot(_.isNaN)
        if (numbers.length < n) {
          declined += 1; assert(got == null, s"answered with a NaN among ${values.mkString(", ")}")
        } else {
          answered += 1
          assert(got != null, s"declined ${values.mkString(", ")}")
          // == compares -0.0 equal to 0.0, as the statistics check does
          assert(got.lo == numbers.min && got.hi == numbers.max, s"${got.lo}..${got.hi} for ${values.mkString(", ")}")
        }
      }
    finally { buf.close(); allocator.close() }
    assert(answered > 5000 && declined > 5000, s"answered $answered, declined $declined")
  }
}

package io.fermion.core.scan

import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector._
import org.scalatest.funsuite.AnyFunSuite

/** Rows cut out of fixed-width, string and binary vectors by address agree with Arrow's own
  * value-by-value copy. */
class RowSelectionSuite extends AnyFunSuite {
  test(
    "kept rows of fixed-width, string and binary vectors, with and without nulls, equal Arrow's transfer-pair copy"
  ) {
    val allocator = new RootAllocator()
    try {
      val rnd = new Random(5)
      val rows = 5000
      def filled(v: FieldVector, nulls: Boolean)(set: Int => Unit): FieldVector = {
        v.setInitialCapacity(rows)
        v.allocateNew()
        (0 until rows).foreach(i => if (!(nulls && rnd.nextInt(4) == 0)) set(i))
        v.setValueCount(rows)
        v
      }
      for (nulls <- Seq(false, true); density <- Seq(0.001, 0.3, 1.0)) {
        val ints = new IntVector("i", allocator)
        val longs = new BigIntVector("l", allocator)
        val shorts = new SmallIntVector("s", allocator)
        val doubles = new Float8Vector("d", allocator)
        val decimals = new DecimalVector("dec", allocator, 20, 2)
        val bits = new BitVector("b", allocator)
        val strings = new VarCharVector("str", allocator)
        val binary = new VarBinaryVector("bin", allocator)
        def bytes(): Array[Byte] = Array.fill(rnd.nextInt(3) * rnd.nextInt(40))(rnd.nextInt(256).toByte)
        val vectors = Seq[FieldVector](
          filled(ints, nulls)(i => ints.set(i, rnd.nextInt())),
          filled(longs, nulls)(i => longs.set(i, rnd.nextLong())),
          filled(shorts, nulls)(i => shorts.set(i, rnd.nextInt(65536) - 32768)),
          filled(doubles, nulls)(i => doubles.set(i, rnd.nextGaussian())),
          filled(decimals, nulls)(i => decimals.set(i, java.math.BigDecimal.valueOf(rnd.nextLong(), 2))),
          filled(bits, nulls)(i => bits.set(i, rnd.nextInt(2))),
          filled(strings, nulls)(i => strings.setSafe(i, ("x" * rnd.nextInt(30)).getBytes)),
          filled(binary, nulls)(i => binary.setSafe(i, bytes()))
        )
        try {
          val kept = (0 until rows).filter(_ => rnd.nextDouble() < density).toArray
          for (v <- vectors) {
            val fast = RowSelection.copy(v, kept, allocator)
            val slow = v.getField.createVector(allocator)
            try {
              slow.setInitialCapacity(kept.length)
              slow.allocateNew()
              val pair = v.makeTransferPair(slow)
              kept.indices.foreach(i => pair.copyValueSafe(kept(i), i))
              slow.setValueCount(kept.length)
              assert(fast.getValueCount == kept.length)
              assert(fast.getNullCount == slow.getNullCount, s"${v.getName} nulls $nulls density $density")
              kept.indices.foreach { i =>
                def value(x: FieldVector, r: Int): Any = x.getObject(r) match {
                  case b: Array[Byte] => b.toSeq
                  case other => other
                }
                assert(value(fast, i) == value(slow, i), s"${v.getName} row $i (nulls $nulls, density $density)")
                assert(value(fast, i) == value(v, kept(i)))
              }
            } finally { fast.close(); slow.close() }
          }
          assert(intercept[IllegalArgumentException](RowSelection.copy(vectors.head, Array(rows), allocator))
            .getMessage.contains("kept rows"))
        } finally vectors.foreach(_.close())
      }
    } finally allocator.close()
  }
}

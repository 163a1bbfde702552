package io.fermion.core.fuzz

import java.nio.{ByteBuffer, ByteOrder}

import scala.util.Random

/** A damaged copy of a file: its bytes, what was done, and which original bytes it touched
  * (`from` onwards when bytes were inserted, removed or cut off). */
final case class Mutated(bytes: Array[Byte], description: String, touched: IndexedSeq[(Int, Int)]) {

  /** Whether the damage touched any of `ranges`. */
  def touches(ranges: Iterable[Region]): Boolean =
    touched.exists { case (a, z) => ranges.exists(r => a < r.end && r.start < z) }
}

/** Damage of every kind, chosen at random (deterministically from the case's `Random`): raw damage
  * (bit flips, random bytes, truncations, zeroed, copied, removed or inserted ranges) and
  * structure-aware hostile values in every metadata field a [[FileMap]] lists (offsets, lengths,
  * counts set to 0, -1, huge, the file length, off by one, another field's value, a whole chunk
  * descriptor copied from another stripe or stream). */
object Mutations {

  /** Damage to a Fermion file. */
  def file(rnd: Random, map: FileMap): Mutated = {
    val steps = if (rnd.nextInt(6) == 0) 2 + rnd.nextInt(2) else 1
    var cur = Mutated(map.bytes.clone(), "", IndexedSeq.empty)
    (0 until steps).foreach { _ =>
      val m = one(rnd, map, cur.bytes)
      cur = Mutated(
        m.bytes,
        if (cur.description.isEmpty) m.description else cur.description + "; " + m.description,
        cur.touched ++ m.touched
      )
    }
    cur
  }

  private def one(rnd: Random, map: FileMap, in: Array[Byte]): Mutated =
    if (in.length < 16) Mutated(in, "too short for more damage", IndexedSeq.empty)
    else oneOf(rnd, map, in)

  private def oneOf(rnd: Random, map: FileMap, in: Array[Byte]): Mutated = rnd.nextInt(100) match {
    case k if k < 38 => hostileField(rnd, map, in)
    case k if k < 56 => bitFlips(rnd, map, in)
    case k if k < 62 => randomBytes(rnd, map, in)
    case k if k < 68 => truncate(rnd, map, in)
    case k if k < 74 => zeroRange(rnd, map, in)
    case k if k < 82 => copyRange(rnd, map, in)
    case k if k < 88 => copyDescriptor(rnd, map, in)
    case k if k < 94 => removeRange(rnd, map, in)
    case _ => insertRange(rnd, map, in)
  }

  /** A region picked by kind first (so the small metadata regions get damaged as often as the
    * large data area). */
  private def region(rnd: Random, map: FileMap, in: Array[Byte]): Region = {
    val r = region0(rnd, map, in)
    // Earlier damage may have shortened the file.
    val start = math.min(r.start, in.length - 1)
    Region(start, math.max(start + 1, math.min(r.end, in.length)), r.kind)
  }

  private def region0(rnd: Random, map: FileMap, in: Array[Byte]): Region = {
    val kinds = map.regions.map(_.kind).distinct ++ Seq("payload", "bloom", "any")
    kinds(rnd.nextInt(kinds.size)) match {
      case "payload" if map.payloads.nonEmpty => map.payloads(rnd.nextInt(map.payloads.size))
      case "bloom" if map.blooms.nonEmpty => map.blooms(rnd.nextInt(map.blooms.size))
      case k =>
        val rs = map.regions.filter(_.kind == k)
        if (rs.isEmpty) Region(0, in.length, "any") else rs(rnd.nextInt(rs.size))
    }
  }

  private def posIn(rnd: Random, r: Region, len: Int): Int =
    math.min(len - 1, r.start + (if (r.length <= 0) 0 else rnd.nextInt(r.length)))

  def bitFlips(rnd: Random, map: FileMap, in: Array[Byte]): Mutated = {
    val out = in.clone()
    val r = region(rnd, map, in)
    val k = 1 + rnd.nextInt(if (rnd.nextBoolean()) 1 else 8)
    val at = (0 until k).map { _ =>
      val p = posIn(rnd, r, out.length); out(p) = (out(p) ^ (1 << rnd.nextInt(8))).toByte; p
    }
    Mutated(out, s"flip $k bits in ${r.kind} at ${at.mkString(",")}", at.map(p => (p, p + 1)))
  }

  def randomBytes(rnd: Random, map: FileMap, in: Array[Byte]): Mutated = {
    val out = in.clone()
    val r = region(rnd, map, in)
    val p = posIn(rnd, r, out.length)
    val k = math.min(out.length - p, 1 + rnd.nextInt(8))
    (0 until k).foreach(i => out(p + i) = rnd.nextInt(256).toByte)
    Mutated(out, s"$k random bytes in ${r.kind} at $p", IndexedSeq((p, p + k)))
  }

  def truncate(rnd: Random, map: FileMap, in: Array[Byte]): Mutated = {
    val cut = rnd.nextInt(4) match {
      case 0 => rnd.nextInt(in.length)
      case 1 => in.length - 1 - rnd.nextInt(math.min(in.length, 80))
      case _ =>
        val r = map.regions(rnd.nextInt(map.regions.size))
        math.max(0, math.min(in.length - 1, r.start + rnd.nextInt(5) - 2))
    }
    Mutated(java.util.Arrays.copyOf(in, cut), s"truncated to $cut", IndexedSeq((cut, Int.MaxValue)))
  }

  def zeroRange(rnd: Random, map: FileMap, in: Array[Byte]): Mutated = {
    val out = in.clone()
    val r = region(rnd, map, in)
    val (p, k) =
      if (rnd.nextBoolean()) (r.start, math.min(r.length, out.length - r.start))
      else { val p = posIn(rnd, r, out.length); (p, math.min(out.length - p, 1 + rnd.nextInt(64))) }
    java.util.Arrays.fill(out, p, p + k, 0.toByte)
    Mutated(out, s"zeroed $k bytes of ${r.kind} at $p", IndexedSeq((p, p + k)))
  }

  def copyRange(rnd: Random, map: FileMap, in: Array[Byte]): Mutated = {
    val out = in.clone()
    val from = region(rnd, map, in)
    val to = region(rnd, map, in)
    val k = math.max(1, math.min(math.min(from.length, to.length), 1 + rnd.nextInt(256)))
    val src = math.min(from.start, in.length - k)
    val dst = math.min(to.start, in.length - k)
    System.arraycopy(in, src, out, dst, k)
    Mutated(out, s"copied $k bytes of ${from.kind} at $src over ${to.kind} at $dst", IndexedSeq((dst, dst + k)))
  }

  /** A whole chunk descriptor replaced by another of the same kind (another stripe's or stream's):
    * every field plausible, the bytes pointing elsewhere. */
  def copyDescriptor(rnd: Random, map: FileMap, in: Array[Byte]): Mutated = {
    val kinds = map.descriptors.filter(_.end <= in.length).groupBy(_.kind).values.filter(_.size > 1).toIndexedSeq
    if (kinds.isEmpty) return hostileField(rnd, map, in)
    val ds = kinds(rnd.nextInt(kinds.size))
    val a = ds(rnd.nextInt(ds.size))
    val z = ds(rnd.nextInt(ds.size))
    val out = in.clone()
    System.arraycopy(in, a.start, out, z.start, a.length)
    Mutated(out, s"${a.kind} descriptor at ${a.start} copied over the one at ${z.start}", IndexedSeq((z.start, z.end)))
  }

  def removeRange(rnd: Random, map: FileMap, in: Array[Byte]): Mutated = {
    val r = region(rnd, map, in)
    val p = posIn(rnd, r, in.length)
    val k = math.min(in.length - p, 1 + rnd.nextInt(if (rnd.nextBoolean()) 16 else 4096))
    Mutated(in.take(p) ++ in.drop(p + k), s"removed $k bytes of ${r.kind} at $p", IndexedSeq((p, Int.MaxValue)))
  }

  def insertRange(rnd: Random, map: FileMap, in: Array[Byte]): Mutated = {
    val r = region(rnd, map, in)
    val p = posIn(rnd, r, in.length)
    val k = 1 + rnd.nextInt(64)
    val extra = Array.fill[Byte](k)(if (rnd.nextBoolean()) 0 else rnd.nextInt(256).toByte)
    Mutated(in.take(p) ++ extra ++ in.drop(p), s"inserted $k bytes in ${r.kind} at $p", IndexedSeq((p, Int.MaxValue)))
  }

  /** A metadata field set to a value chosen to break a check: boundaries, huge, negative, the file
    * length, off by one, or another field's value of the same kind. */
  def hostileField(rnd: Random, map: FileMap, in: Array[Byte]): Mutated = {
    val groups = map.fields.filter(f => f.offset + f.width <= in.length).groupBy(_.group).toIndexedSeq.sortBy(_._1)
    if (groups.isEmpty) return bitFlips(rnd, map, in)
    val (group, members) = groups(rnd.nextInt(groups.size))
    val f = members(rnd.nextInt(members.size))
    val b = ByteBuffer.wrap(in).order(ByteOrder.LITTLE_ENDIAN)
    val orig = f.width match {
      case 1 => in(f.offset) & 0xffL
      case 2 => b.getShort(f.offset) & 0xffffL
      case 4 => b.getInt(f.offset) & 0xffffffffL
      case _ => b.getLong(f.offset)
    }
    val len = in.length.toLong
    val other = members(rnd.nextInt(members.size))
    val otherValue = other.width match {
      case 1 => in(other.offset) & 0xffL
      case 2 => b.getShort(other.offset) & 0xffffL
      case 4 => b.getInt(other.offset) & 0xffffffffL
      case _ => b.getLong(other.offset)
    }
    val candidates = IndexedSeq(
      0L,
      1L,
      -1L,
      orig + 1,
      orig - 1,
      orig * 2,
      orig / 2,
      orig + 8,
      orig - 20,
      orig + 20,
      len,
      len - 1,
      len + 1,
      len - 64,
      len - 72,
      Int.MaxValue.toLong,
      0x80000000L,
      0xffffffffL,
      0x7ffffff0L,
      Long.MaxValue,
      Long.MinValue,
      Long.MaxValue - 7,
      1L << 32,
      (1L << 31) - 20,
      otherValue,
      otherValue + 1,
      rnd.nextLong(),
      rnd.nextInt(1 << 20).toLong,
      20L,
      36L,
      8L,
      255L
    )
    val v = candidates(rnd.nextInt(candidates.size))
    val out = in.clone()
    val o = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN)
    f.width match {
      case 1 => out(f.offset) = v.toByte
      case 2 => o.putShort(f.offset, v.toShort)
      case 4 => o.putInt(f.offset, v.toInt)
      case _ => o.putLong(f.offset, v)
    }
    Mutated(out, s"$group at ${f.offset} set from $orig to $v", IndexedSeq((f.offset, f.offset + f.width)))
  }

  /** Damage to a dataset metadata file (manifest, transaction, deletion file): raw bytes only, the
    * format is sequential. */
  def metadata(rnd: Random, in: Array[Byte]): Mutated = {
    val whole = Region(0, in.length, "any")
    val map0 = Region(4, math.max(4, in.length - 8), "body")
    val out = in.clone()
    rnd.nextInt(7) match {
      case 0 =>
        val k = 1 + rnd.nextInt(4)
        val at = (0 until k).map { _ =>
          val p = posIn(rnd, whole, out.length); out(p) = (out(p) ^ (1 << rnd.nextInt(8))).toByte; p
        }
        Mutated(out, s"flip $k bits at ${at.mkString(",")}", at.map(p => (p, p + 1)))
      case 1 =>
        val cut = rnd.nextInt(in.length)
        Mutated(java.util.Arrays.copyOf(in, cut), s"truncated to $cut", IndexedSeq((cut, Int.MaxValue)))
      case 2 | 3 =>
        // A u32 count or length somewhere in the body set to something hostile.
        if (in.length < 12) return Mutated(out, "unchanged", IndexedSeq.empty)
        val p = posIn(rnd, map0, out.length - 3)
        val v =
          IndexedSeq(0, -1, Int.MaxValue, 0x40000000, in.length, in.length + 1, 1 << 16, 65535, 2, rnd.nextInt())(
            rnd.nextInt(10)
          )
        ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN).putInt(math.min(p, out.length - 4), v)
        Mutated(out, s"u32 at $p set to $v", IndexedSeq((p, p + 4)))
      case 4 =>
        val p = posIn(rnd, whole, out.length)
        val k = math.min(out.length - p, 1 + rnd.nextInt(32))
        java.util.Arrays.fill(out, p, p + k, 0.toByte)
        Mutated(out, s"zeroed $k bytes at $p", IndexedSeq((p, p + k)))
      case 5 =>
        val p = posIn(rnd, whole, in.length)
        val k = math.min(in.length - p, 1 + rnd.nextInt(16))
        Mutated(in.take(p) ++ in.drop(p + k), s"removed $k bytes at $p", IndexedSeq((p, Int.MaxValue)))
      case _ =>
        val k = 1 + rnd.nextInt(16)
        val src = rnd.nextInt(math.max(1, in.length - k))
        val dst = rnd.nextInt(math.max(1, in.length - k))
        System.arraycopy(in, src, out, dst, math.min(k, in.length - math.max(src, dst)))
        Mutated(out, s"copied $k bytes from $src to $dst", IndexedSeq((dst, dst + k)))
    }
  }
}

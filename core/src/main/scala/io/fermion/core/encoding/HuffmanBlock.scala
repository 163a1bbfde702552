package io.fermion.core.encoding

import java.nio.{ByteBuffer, ByteOrder}

import io.fermion.core.bytes.GrowableBytes
import org.apache.arrow.memory.util.MemoryUtil

/** The Huffman block of format 5.7.1 (1.7): `k` unsigned 64-bit integers, each split into a bin
  * (its symbol) and the low bits within the bin (its offset). Values below `2^M` are their own
  * symbol; a larger value whose highest set bit is bit `e - 1` has the symbol `(o + 1) * 2^M +` its
  * `M` bits below the highest, where `o = e - 1 - M` is the number of offset bits that follow. The
  * symbols are coded with a canonical prefix code whose lengths the block stores, so a page costs
  * about the entropy of its bins instead of the bit width of its largest value (pcodec's binning,
  * with Huffman codes instead of ANS). Value `i` is in lane `i % L`, each lane a bit stream of its
  * own, so that a reader decodes `L` values at once instead of waiting for each code's length
  * before it can look up the next (Huff0's interleaved streams). */
private[core] object HuffmanBlock {

  /** The most lanes a block may have. */
  val MaxLanes = 8

  /** The largest mantissa width `M` a block may have. */
  val MaxMantissaBits = 12

  /** The longest code a block may have (lengths are stored in 4 bits). */
  val MaxCodeLength = 15

  /** The most bytes a block takes besides 78 bits per value (a code of 15 bits and an offset of
    * 63): its header and code lengths at the widest alphabet, lane counts, and each lane's last,
    * partial word. Bounds the raw size of a page a reader accepts (format 15.4). Declared after
    * the constants it uses, which an object initialises in order. */
  val MaxHeaderBytes: Long = 1 + 4 + (alphabetSize(MaxMantissaBits) + 1) / 2 + 1 + 4 * MaxLanes + 8 * MaxLanes

  /** Symbols `0 until alphabetSize(m)` exist for mantissa width `m`. */
  def alphabetSize(m: Int): Int = (65 - m) << m

  def symbolOf(u: Long, m: Int): Int =
    if (java.lang.Long.compareUnsigned(u, 1L << m) < 0) u.toInt
    else {
      val offsetBits = 63 - java.lang.Long.numberOfLeadingZeros(u) - m
      ((offsetBits + 1) << m) | ((u >>> offsetBits).toInt & ((1 << m) - 1))
    }

  /** The number of offset bits after symbol `s`. */
  def offsetBits(s: Int, m: Int): Int = if (s < (1 << m)) 0 else (s >>> m) - 1

  /** Decodes a block of `k` values into `out(0 until k)`, each plus `add` (mod 2^64: a HUFFMAN
    * page's reference, added in the same pass). */
  def decode(
      r: EncodedReader,
      k: Int,
      out: Array[Long],
      scratch: HuffmanScratch,
      what: String,
      add: Long = 0L
  ): Unit = {
    val m = r.u8(s"$what mantissa width")
    if (m > MaxMantissaBits) throw new MalformedPageException(s"$what has mantissa width $m (at most $MaxMantissaBits)")
    val symbols = r.u32(s"$what symbol count")
    if (symbols < 2 || symbols > alphabetSize(m))
      throw new MalformedPageException(s"$what describes $symbols symbols (2 to ${alphabetSize(m)} for width $m)")
    val lengths = scratch.lengths(symbols)
    val lengthBytes = (symbols + 1) >>> 1
    val at = r.arrayPosition
    r.skip(lengthBytes, s"$what code lengths")
    val src = r.array
    var s = 0
    val perLength = new Array[Int](MaxCodeLength + 1)
    var maxLength = 0
    while (s < symbols) {
      val l = (src(at + (s >>> 1)) >>> ((s & 1) << 2)) & 15
      lengths(s) = l
      perLength(l) += 1
      if (l > maxLength) maxLength = l
      s += 1
    }
    var kraft = 0L
    var l = 1
    while (l <= MaxCodeLength) { kraft += perLength(l).toLong << (MaxCodeLength - l); l += 1 }
    if (kraft != (1L << MaxCodeLength))
      throw new MalformedPageException(s"$what code lengths do not form a complete prefix code")
    // Per symbol the first value of its bin; the table, indexed by the next maxLength bits of the
    // stream, holds (that value plus `add`, signed, or the symbol when that may not fit in 52
    // bits) << 12 | code length << 6 | (code length + offset bits) mod 64: a decoder shifts its bit
    // buffer by the entry itself (a long shift uses the count's low 6 bits), one step fewer on the
    // chain from one lookup to the next, and by the entry >>> 6 to reach the offset bits. Beside
    // it, per index, the mask of the offset's bits. Both arrays are exactly 2^maxLength long, so
    // the index masked with their length needs no bounds check.
    val base = scratch.bases(symbols)
    val small = 1 << m
    var maxBits = 0
    var maxBase = 0L
    s = 0
    while (s < symbols) {
      val len = lengths(s)
      if (len > 0) {
        val o = offsetBits(s, m)
        base(s) = if (s < small) s.toLong else (small | (s & (small - 1))).toLong << o
        maxBits = math.max(maxBits, len + o)
        if (java.lang.Long.compareUnsigned(base(s), maxBase) > 0) maxBase = base(s)
      }
      s += 1
    }
    val basesInTable = java.lang.Long.compareUnsigned(maxBase, 1L << 50) < 0 && add >= -(1L << 50) && add <= (1L << 50)
    val table = scratch.table(maxLength)
    val masks = scratch.masks(maxLength)
    val next = new Array[Int](MaxCodeLength + 2)
    canonicalFirstCodes(perLength, next)
    s = 0
    while (s < symbols) {
      val len = lengths(s)
      if (len > 0) {
        val c = next(len); next(len) += 1
        var i = Integer.reverse(c) >>> (32 - len)
        val o = offsetBits(s, m)
        val entry = ((if (basesInTable) base(s) + add else s.toLong) << 12) | (len << 6) | ((len + o) & 63)
        val offsetMask = (1L << o) - 1
        while (i < (1 << maxLength)) { table(i) = entry; masks(i) = offsetMask; i += 1 << len }
      }
      s += 1
    }
    val lanes = r.u8(s"$what lane count")
    if (lanes < 1 || lanes > MaxLanes) throw new MalformedPageException(s"$what has $lanes lanes (1 to $MaxLanes)")
    val words = new Array[Int](lanes)
    var lane = 0
    var streamBytes = 0L
    while (lane < lanes) { words(lane) = r.u32(s"$what word count"); streamBytes += words(lane) * 8L; lane += 1 }
    val streamAt = r.arrayPosition
    r.skip(if (streamBytes > Int.MaxValue) -1 else streamBytes.toInt, s"$what bit streams")
    // The streams plus 16 zero bytes: every 8-byte load below starts at most 8 bytes past its
    // lane's end (reading the next lane's bytes, or the zeros after the last lane).
    val stream = scratch.stream(streamBytes.toInt + 16)
    System.arraycopy(src, streamAt, stream, 0, streamBytes.toInt)
    java.util.Arrays.fill(stream, streamBytes.toInt, streamBytes.toInt + 16, 0.toByte)
    val readers = new Array[BitReader](lanes)
    var laneStart = 0
    lane = 0
    while (lane < lanes) {
      readers(lane) = new BitReader(stream, laneStart, words(lane), what)
      laneStart += words(lane) * 8
      lane += 1
    }
    val done =
      if (lanes == 4 && maxBits <= 56 && basesInTable) BitReader.decodeFourLanes(readers, k, out, table, masks, maxBits)
      else 0
    var i = done
    val bases = if (basesInTable) null else base
    while (i < k) { readers(i % lanes).decodeOne(out, i, table, bases, add); i += 1 }
    lane = 0
    while (lane < lanes) { readers(lane).checkEnd(); lane += 1 }
  }

  /** Deflate's canonical codes: `next(l)` is the first code of length `l`; codes of one length are
    * consecutive in symbol order, and each length's first code follows the previous length's last. */
  private[encoding] def canonicalFirstCodes(perLength: Array[Int], next: Array[Int]): Unit = {
    var code = 0
    var l = 1
    while (l <= MaxCodeLength) {
      code = (code + (if (l == 1) 0 else perLength(l - 1))) << 1
      next(l) = code
      l += 1
    }
  }
}

/** Reads one lane of a Huffman block: its `words` words from byte `start` of `stream` (the block's
  * streams plus 16 zero bytes), through a 64-bit buffer whose low `avail` bits are the lane's next
  * bits (its higher bits the following bytes of `stream`, or 0), refilled with one unaligned load to
  * at least 56 bits. */
final private class BitReader(val stream: Array[Byte], start: Int, words: Int, what: String) {
  private val b = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN)
  val lastLoad: Int = start + words * 8 + 8 // the last byte a load may start at
  var buf = 0L
  var avail = 0
  var nextByte: Int = start // the next byte not yet in the buffer

  def overrun(): Nothing = throw new MalformedPageException(s"$what needs more than a lane's $words words")

  def refill(): Unit = {
    if (nextByte > lastLoad) overrun()
    buf |= b.getLong(nextByte) << avail
    nextByte += (63 - avail) >>> 3
    avail |= 56
  }

  /** Decodes one value plus `add` into `out(i)` (any offset length, up to 63 bits); `base` is null
    * when the table holds the bins' first values (plus `add`). */
  def decodeOne(out: Array[Long], i: Int, table: Array[Long], base: Array[Long], add: Long): Unit = {
    refill()
    val e = table(buf.toInt & (table.length - 1))
    val len = BitReader.codeLength(e)
    val o = (e.toInt - len) & 63
    buf >>>= len; avail -= len
    val x =
      if (o <= avail) { val x = buf & ((1L << o) - 1); buf >>>= o; avail -= o; x }
      else {
        // An offset longer than the buffer holds: its low part, then a refill for the rest.
        val have = avail
        val low = buf & ((1L << have) - 1)
        buf = 0L; avail = 0
        refill()
        val rest = o - have
        val high = buf & ((1L << rest) - 1)
        buf >>>= rest; avail -= rest
        low | (high << have)
      }
    out(i) = (if (base == null) e >> 12 else base((e >>> 12).toInt) + add) + x
  }

  /** The lane used exactly its words: none short, none left over (format 5.7.5). */
  def checkEnd(): Unit = {
    val used = (nextByte - start).toLong * 8 - avail
    if (used > words * 64L || ((used + 63) >>> 6) != words)
      throw new MalformedPageException(s"$what: a lane uses $used bits of its $words words")
  }
}

private object BitReader {

  /** The code length in a table entry (1 to 15 bits). */
  @inline def codeLength(e: Long): Int = (e >>> 6).toInt & 63

  /** Four lanes decoded two at a time (lanes 0 and 1, then 2 and 3: two chains of table lookups
    * overlap in the CPU, and their state fits in registers), `56 / maxBits` values of each per
    * refill (a fixed count, so no branch depends on the data). Returns how many values it decoded
    * (whole groups; none on a big-endian machine); the caller decodes the rest value by value. */
  def decodeFourLanes(
      readers: Array[BitReader],
      k: Int,
      out: Array[Long],
      table: Array[Long],
      masks: Array[Long],
      maxBits: Int
  ): Int = {
    if (!MemoryUtil.LITTLE_ENDIAN) return 0
    val per = 56 / maxBits
    val whole = k - k % (4 * per)
    decodePair(readers(0), readers(1), 0, whole, out, table, masks, per)
    decodePair(readers(2), readers(3), 2, whole, out, table, masks, per)
    whole
  }

  /** Values `first + 4g` (lane `ra`) and `first + 1 + 4g` (lane `rb`) for `4g < whole`. Each step
    * shifts a lane's buffer by its entry's code and offset bits (`maxBits <= 56`, so their sum is
    * the entry's low 6 bits). The lanes' state stays in locals, and their refills load unchecked
    * after one check of both positions against their lanes' last loads (which lie within the
    * stream's array). */
  private def decodePair(
      ra: BitReader,
      rb: BitReader,
      first: Int,
      whole: Int,
      out: Array[Long],
      table: Array[Long],
      masks: Array[Long],
      per: Int
  ): Unit = {
    val stream = ra.stream
    val lastA = ra.lastLoad; val lastB = rb.lastLoad
    var pa = ra.nextByte; var pb = rb.nextByte
    var a = ra.buf; var b = rb.buf
    var na = ra.avail; var nb = rb.avail
    val index = table.length - 1
    var i = first
    val end = whole + first
    while (i < end) {
      if (((lastA - pa) | (lastB - pb)) < 0) ra.overrun()
      a |= MemoryUtil.getLong(stream, pa) << na; pa += (63 - na) >>> 3; na |= 56
      b |= MemoryUtil.getLong(stream, pb) << nb; pb += (63 - nb) >>> 3; nb |= 56
      var j = 0
      while (j < per) {
        val ia = a.toInt & index; val ib = b.toInt & index
        val ea = table(ia); val eb = table(ib)
        out(i) = (ea >> 12) + ((a >>> codeLength(ea)) & masks(ia))
        out(i + 1) = (eb >> 12) + ((b >>> codeLength(eb)) & masks(ib))
        a >>>= ea.toInt; b >>>= eb.toInt
        na -= ea.toInt & 63; nb -= eb.toInt & 63
        i += 4
        j += 1
      }
    }
    ra.buf = a; rb.buf = b
    ra.avail = na; rb.avail = nb
    ra.nextByte = pa; rb.nextByte = pb
  }
}

/** Reusable arrays for decoding Huffman blocks. */
final private[core] class HuffmanScratch {
  private var lengthArray = new Array[Int](0)
  private val tables = new Array[Array[Long]](HuffmanBlock.MaxCodeLength + 1)
  private val maskTables = new Array[Array[Long]](HuffmanBlock.MaxCodeLength + 1)
  private var streamArray = new Array[Byte](0)
  private var baseArray = new Array[Long](0)
  def bases(n: Int): Array[Long] = { if (baseArray.length < n) baseArray = new Array[Long](n); baseArray }
  def lengths(n: Int): Array[Int] = { if (lengthArray.length < n) lengthArray = new Array[Int](n); lengthArray }

  /** The decoding table for codes of at most `maxLength` bits: exactly `2^maxLength` entries. */
  def table(maxLength: Int): Array[Long] = {
    if (tables(maxLength) == null) tables(maxLength) = new Array[Long](1 << maxLength); tables(maxLength)
  }

  /** The offset masks beside [[table]], as long as it. */
  def masks(maxLength: Int): Array[Long] = {
    if (maskTables(maxLength) == null) maskTables(maxLength) = new Array[Long](1 << maxLength); maskTables(maxLength)
  }
  def stream(n: Int): Array[Byte] = {
    if (streamArray.length < n) streamArray = new Array[Byte](math.max(n, streamArray.length * 2)); streamArray
  }
}

/** Writes Huffman blocks: counts a page's symbols for a mantissa width, derives code lengths
  * limited to [[HuffmanEncoder.CodeLimit]] bits, gives the exact size of the block and writes it.
  * One instance per writer. */
final private[core] class HuffmanEncoder {
  import HuffmanBlock._
  private var counts = new Array[Long](0)
  private var used = new Array[Int](0) // the symbols with a count, in no order
  private var usedCount = 0
  private var maxSymbol = 0
  private var mantissa = -1
  private var lanes = 1
  private var symbolsOfValues = new Array[Int](0)
  private val laneBits = new Array[Long](MaxLanes)
  private val lengths = new Array[Int](alphabetSize(HuffmanEncoder.MaxWriterMantissa))

  /** Counts the symbols of `u(0 until k)` for mantissa width `m` and derives their code lengths;
    * returns the size in bytes of the block that [[write]] would then write. */
  def measure(u: Array[Long], k: Int, m: Int): Long = {
    require(m <= HuffmanEncoder.MaxWriterMantissa)
    var i = 0
    while (i < usedCount) { counts(used(i)) = 0; lengths(used(i)) = 0; i += 1 }
    usedCount = 0
    val size = alphabetSize(m)
    if (counts.length < size) { counts = new Array[Long](size); used = new Array[Int](size) }
    if (symbolsOfValues.length < k) symbolsOfValues = new Array[Int](math.max(k, symbolsOfValues.length * 2))
    maxSymbol = 0
    mantissa = m
    lanes = HuffmanEncoder.lanesFor(k)
    i = 0
    while (i < k) {
      val s = symbolOf(u(i), m)
      symbolsOfValues(i) = s
      if (counts(s) == 0) { used(usedCount) = s; usedCount += 1; if (s > maxSymbol) maxSymbol = s }
      counts(s) += 1
      i += 1
    }
    // A complete code needs two symbols: a lone one gets a partner that never occurs.
    while (usedCount < 2) {
      val s = if (usedCount == 1 && used(0) == 0) 1 else 0
      used(usedCount) = s; usedCount += 1; if (s > maxSymbol) maxSymbol = s
    }
    HuffmanEncoder.codeLengths(counts, used, usedCount, lengths)
    java.util.Arrays.fill(laneBits, 0L)
    i = 0
    while (i < k) {
      val s = symbolsOfValues(i)
      laneBits(i % lanes) += lengths(s) + offsetBits(s, m)
      i += 1
    }
    var words = 0L
    i = 0
    while (i < lanes) { words += (laneBits(i) + 63) >>> 6; i += 1 }
    1 + 4 + ((maxSymbol + 2) >>> 1) + 1 + 4L * lanes + words * 8
  }

  /** Writes `u(0 until k)` as measured by the last [[measure]] (same values, whose symbols it kept). */
  def write(u: Array[Long], k: Int, out: GrowableBytes): Unit = {
    val m = mantissa
    val symbols = maxSymbol + 1
    out.putByte(m)
    out.putInt(symbols)
    var s = 0
    while (s < symbols) {
      out.putByte(lengths(s) | (if (s + 1 < symbols) lengths(s + 1) << 4 else 0))
      s += 2
    }
    val perLength = new Array[Int](MaxCodeLength + 1)
    var i = 0
    while (i < usedCount) { perLength(lengths(used(i))) += 1; i += 1 }
    val next = new Array[Int](MaxCodeLength + 2)
    canonicalFirstCodes(perLength, next)
    val reversed = new Array[Int](symbols)
    s = 0
    while (s < symbols) {
      val len = lengths(s)
      if (len > 0) { reversed(s) = Integer.reverse(next(len)) >>> (32 - len); next(len) += 1 }
      s += 1
    }
    out.putByte(lanes)
    var lane = 0
    while (lane < lanes) { out.putInt(((laneBits(lane) + 63) >>> 6).toInt); lane += 1 }
    lane = 0
    while (lane < lanes) {
      val bits = new BitWriter(out)
      i = lane
      while (i < k) {
        val x = u(i)
        val sym = symbolsOfValues(i)
        bits.put(reversed(sym), lengths(sym))
        val o = offsetBits(sym, m)
        if (o > 0) bits.put(x & ((1L << o) - 1), o)
        i += lanes
      }
      bits.finish()
      lane += 1
    }
  }
}

private[core] object HuffmanEncoder {

  /** The writer's longest code: decode tables of 2^11 entries stay in the L1 cache. */
  val CodeLimit = 11

  /** The writer's widest mantissa (an alphabet of 14,592 symbols at most). */
  val MaxWriterMantissa = 8

  /** The writer's lanes: four, which readers decode in step, unless the values are too few for
    * the three more word counts and partial words to pay. */
  def lanesFor(k: Int): Int = if (k >= 64) 4 else 1

  /** Huffman code lengths of the symbols `used(0 until n)` (n >= 2) by their `counts`, at most
    * [[CodeLimit]] long: when the optimal code is longer, the counts are halved (rounding up) and the
    * code rebuilt, which flattens the distribution until it fits (n <= 2^CodeLimit symbols always
    * fit). */
  def codeLengths(counts: Array[Long], used: Array[Int], n: Int, lengths: Array[Int]): Unit = {
    val limit = if (n > (1 << CodeLimit)) HuffmanBlock.MaxCodeLength else CodeLimit
    val weights = new Array[Long](n)
    var i = 0
    while (i < n) { weights(i) = math.max(1L, counts(used(i))); i += 1 }
    while (!huffman(weights, used, n, lengths, limit)) {
      i = 0
      while (i < n) { weights(i) = (weights(i) + 1) >>> 1; i += 1 }
    }
  }

  /** Optimal code lengths by the two-queue method; false when one exceeds `limit`. */
  private def huffman(weights: Array[Long], used: Array[Int], n: Int, lengths: Array[Int], limit: Int): Boolean = {
    // Leaves sorted by weight (ties by position) as keys weight * 2^20 + position (weights below
    // 2^31, positions below 2^20); internal nodes are made in nondecreasing weight.
    val keys = new Array[Long](n)
    var i = 0
    while (i < n) { keys(i) = (weights(i) << 20) | i; i += 1 }
    java.util.Arrays.sort(keys)
    val order = new Array[Int](n)
    val nodeWeight = new Array[Long](2 * n - 1)
    val parent = new Array[Int](2 * n - 1)
    i = 0
    while (i < n) { order(i) = (keys(i) & 0xfffff).toInt; nodeWeight(i) = weights(order(i)); i += 1 }
    var leaf = 0
    var inner = n
    var made = n
    def take(): Int =
      if (leaf < n && (inner >= made || nodeWeight(leaf) <= nodeWeight(inner))) { leaf += 1; leaf - 1 }
      else { inner += 1; inner - 1 }
    while (made < 2 * n - 1) {
      val a = take(); val b = take()
      nodeWeight(made) = nodeWeight(a) + nodeWeight(b)
      parent(a) = made; parent(b) = made
      made += 1
    }
    val depth = new Array[Int](2 * n - 1)
    i = 2 * n - 3
    var ok = true
    while (i >= 0) {
      depth(i) = depth(parent(i)) + 1
      if (i < n && depth(i) > limit) ok = false
      i -= 1
    }
    if (ok) { i = 0; while (i < n) { lengths(used(order(i))) = depth(i); i += 1 } }
    ok
  }
}

/** Appends bits LSB-first into little-endian 64-bit words. */
final private class BitWriter(out: GrowableBytes) {
  private var acc = 0L
  private var used = 0
  private var words = 0

  /** Appends the low `n` bits of `v` (1 <= n <= 63; higher bits of `v` are 0). */
  def put(v: Long, n: Int): Unit = {
    acc |= v << used
    used += n
    if (used >= 64) {
      out.putLong(acc); words += 1
      used -= 64
      acc = if (used == 0) 0L else v >>> (n - used)
    }
  }

  /** Flushes the last partial word; returns the number of words written. */
  def finish(): Int = {
    if (used > 0) { out.putLong(acc); words += 1; used = 0; acc = 0 }
    words
  }
}

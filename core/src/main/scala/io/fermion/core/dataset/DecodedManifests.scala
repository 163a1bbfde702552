package io.fermion.core.dataset

/** The manifests last decoded in this JVM, by file. Every query reads the latest manifest again
  * (the version may have moved since the last one), and a wide dataset's schema takes milliseconds
  * to decode (10,000 columns: about 5 ms of a 0.16 s Spark query). A decoded manifest is reused
  * only when the bytes read now equal those it was decoded from, so a file rewritten in place (an
  * external store's recovery) is decoded afresh. Manifests above [[MaxBytes]] are not kept. */
private[dataset] object DecodedManifests {
  private val Entries = 16
  val MaxBytes: Int = 4 << 20

  private val byFile = new java.util.LinkedHashMap[String, (Array[Byte], Manifest)](Entries, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[String, (Array[Byte], Manifest)]): Boolean =
      size() > Entries
  }

  /** The manifest `bytes` of `file` decode to, by `decode` unless they were decoded last time. */
  def apply(file: String, bytes: Array[Byte])(decode: => Manifest): Manifest = {
    val known = byFile.synchronized(byFile.get(file))
    if (known != null && java.util.Arrays.equals(known._1, bytes)) known._2
    else {
      val m = decode
      if (bytes.length <= MaxBytes) byFile.synchronized(byFile.put(file, (bytes, m)))
      m
    }
  }
}

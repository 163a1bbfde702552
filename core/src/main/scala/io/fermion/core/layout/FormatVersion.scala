package io.fermion.core.layout

/** The format version written into every footer. A reader accepts any minor version of its own
  * major version and rejects other majors. A minor version only adds things an older reader either
  * ignores or rejects with a typed error where it meets them, never misreads: 1.1 added the page
  * encodings other than PLAIN, which a 1.0 reader reports as "unknown page encoding"; 1.2 added
  * bloom filters after DATA chunks (their length in the FullChunkDesc's last word), which 1.1
  * readers ignore; 1.3 added batch mode (settings bit 1, BATCH_META chunks inside the stripes'
  * ranges and a batch index before the first CMB), which 1.2 readers ignore; 1.4 added the page
  * codec zstd-blocks (2), which a 1.3 reader reports as "unknown page codec"; 1.5 added the column
  * directory before the first CMB (settings bit 2), which 1.4 readers ignore except that in a
  * batch-mode file they no longer find the batch index where they look for it (they reject batch
  * lookups as an invalid file, and read every column); 1.6 added the page codec zstd-primed-blocks
  * (3), which a 1.5 reader reports as "unknown page codec"; 1.7 added the page encodings HUFFMAN (9)
  * and DELTA_HUFFMAN (10) and Huffman-coded dictionary codes (code scheme 9), which a 1.6 reader
  * reports as an unknown page encoding or a malformed page. */
private[core] object FormatVersion {
  val Major: Int = 1
  val Minor: Int = 7
}

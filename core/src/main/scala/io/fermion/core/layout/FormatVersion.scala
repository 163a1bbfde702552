package io.fermion.core.layout

/** The format version written into every footer. A reader accepts any minor version of its own
  * major version (minor versions only add things old readers may ignore) and rejects other majors. */
object FormatVersion {
  val Major: Int = 1
  val Minor: Int = 0
}
